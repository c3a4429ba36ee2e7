"""The generated sentences that close notebook 05's sections (paper 000 §5.2–5.3, A.2–A.3): the
training data, the training runs, the choice of N, a reranker against its first stage, and the
reader's EM of fine-tuned against vanilla systems — every number computed from the tables of
:mod:`inferqa_utils.finetune.conditions`."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..measure.uncertainty import as_outcome, paired_difference
from ..present.sentences import ci
from .training import BIENCODER_KIND


def sampling_sentence(sampling: pd.DataFrame) -> str:
    """Per N (:func:`~inferqa_utils.finetune.conditions.sampling_table`): questions, positives and
    negatives, and how many questions had fewer own passages than N (capped, never repeated)."""
    parts = []
    for _, r in sampling.iterrows():
        parts.append(f"N = {int(r['N'])} ({r['negative kind']} negatives): {int(r['questions'])} questions, "
                     f"{int(r['positives'])} positives and {int(r['negatives'])} negatives, "
                     f"{int(r['capped questions'])} questions capped")
    return "; ".join(parts) + "."


def training_sentence(times: pd.DataFrame) -> str:
    """How many models were trained now and how many reused, the training time, and each final loss
    (:func:`~inferqa_utils.finetune.conditions.times_table`)."""
    reused = times["reused (no training)"].astype(bool)
    secs = float(times.loc[~reused, "train seconds"].sum())
    losses = ", ".join(f"{r['model']} {r['final loss']:.3f}" for _, r in times.iterrows())
    now = (f"{int((~reused).sum())} trained now in {secs:.0f} s" if (~reused).any() else "none trained now")
    return (
        f"{len(times)} models: {now}, {int(reused.sum())} reused from `build/models` (same training "
        "fingerprint). "
        f"Final training loss: {losses}."
    )


def selection_sentence(selection: pd.DataFrame, metric: str) -> str:
    """Which N the dev split chose for each kind
    (:func:`~inferqa_utils.finetune.conditions.select_variants`),
    with every variant's dev score and whether the choice was a tie."""
    parts = []
    for kind, g in selection.groupby("kind", sort=False):
        scores = ", ".join(
            f"N = {int(r['N'])} {r['score']:.1f}"
            if r["score"] == r["score"] and r["score"] is not None
            else f"N = {int(r['N'])} —"
            for _, r in g.iterrows()
        )
        chosen = g[g["chosen"].astype(bool)]
        name = chosen["model"].iloc[0] if len(chosen) else "none"
        scored = pd.to_numeric(g["score"], errors="coerce")
        tie = scored.notna().any() and int((scored == scored.max()).sum()) > 1
        what = f"bi-encoder by {metric}" if kind == BIENCODER_KIND else "cross-encoder by oracle nDCG@10"
        parts.append(f"{what}: {scores} → **{name}**" + (" (a tie: the smallest N wins)" if tie else ""))
    note = str(selection.attrs.get("note", "")).split(";")[0]
    return (f"On {note}: " if note else "") + "; ".join(parts) + "."


def rerank_change_sentence(table: pd.DataFrame, metric: str = "nDCG@10") -> str:
    """Each reranked run (index ``"<first> + <reranker>"``) against its first stage on ``metric``."""
    parts = []
    for name in table.index:
        if " + " not in str(name):
            continue
        first = str(name).split(" + ", 1)[0]
        if first in table.index:
            a, b = float(table.at[name, metric]), float(table.at[first, metric])
            parts.append(f"{name} {a:.1f} vs {first} {b:.1f} ({a - b:+.1f})")
    if not parts:
        return f"No reranked run to compare on {metric}."
    return f"{metric}: " + "; ".join(parts) + "."


def reading_pairs_sentence(answers: pd.DataFrame, em: pd.DataFrame, pairs: Sequence[tuple[str, str]]) -> str:
    """Strict EM of each (system, baseline) pair on the same questions: both with their intervals,
    the paired difference and its randomization-test p
    (:func:`inferqa_utils.measure.uncertainty.paired_difference`)."""
    t = em.set_index("system")
    parts = []
    for a, b in pairs:
        if a not in t.index or b not in t.index:
            continue
        wide = answers[answers["system"].isin([a, b])].pivot_table(index="qid", columns="system", values="em",
                                                                    aggfunc="first")
        d = paired_difference(as_outcome(wide[a]), as_outcome(wide[b]))
        parts.append(
            f"{a} {ci(t.at[a, 'EM'], t.at[a, 'EM_lo'], t.at[a, 'EM_hi'])} vs {b} "
            f"{ci(t.at[b, 'EM'], t.at[b, 'EM_lo'], t.at[b, 'EM_hi'])} ({100 * d.diff.value:+.1f} points, "
            f"paired randomization p = {d.p_value:.3g})"
        )
    n = int(t["n"].max()) if "n" in t and len(t) else 0
    one = f" One question is {100 / n:.1f} points." if n else ""
    return ("Strict EM: " + "; ".join(parts) + "." + one) if parts else "No pair of systems to compare."
