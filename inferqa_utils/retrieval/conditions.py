"""Retrieval experiments of notebook 02 (paper 000 §4, §5.1–5.2, Table 2, Fig. 4).

* the main table: every retriever on a split of a built dataset, relevance = label ≥ threshold;
* the cross-corpus comparison: the same questions against (a) the answer-supporting corpus
  (relevant = label 2) and (b) an answer-containing control corpus — the questions' reference
  passages (our embedded references, TriviaHG ``Snippet``s), relevant = contains an answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from ..construction.stats import n_tokens
from ..ir.datamodel import Dataset
from ..ir.trec import Run
from ..measure.metrics import hit_curve, hit_per_query
from ..measure.uncertainty import interval_columns
from ..present.figures import INTERVAL_NOTE, error_bars
from ..stages import CONTAINING, SUPPORTING, SUPPORTING_LENIENT, reference_question

# re-exported: notebooks 02 and 05 call ``ex.run_all`` and ``ex.metrics_table``
from .evaluation import metrics_table as metrics_table
from .registry import run_all as run_all


def hit_curves(runs: dict[str, Run], qrels: dict[str, dict[str, int]], threshold: int, corpus: str,
               ks: Sequence[int] = (1, 2, 3, 5, 10, 20, 30, 50, 75, 100)) -> pd.DataFrame:
    """Hit@k curves (paper Fig. 4 shape): per retriever and k, ``hit`` = Hit@k in % over the
    questions with a relevant passage (label ≥ ``threshold``) and its seeded 95 % bootstrap interval
    over those questions ``[hit_lo, hit_hi]`` (:func:`inferqa_utils.measure.uncertainty.interval_columns`
    of the per-question 0/1 hits of :func:`inferqa_utils.measure.metrics.hit_per_query`)."""
    frames = []
    for name, run in runs.items():
        pq = hit_per_query(run, qrels, ks=ks, threshold=threshold)
        rows = [{"k": k, **interval_columns(pq[k].to_numpy(float), "hit")} for k in pq.columns]
        df = pd.DataFrame(rows, columns=["k", "hit", "hit_lo", "hit_hi"])
        df["n_questions"], df["threshold"] = len(pq), int(threshold)
        df["retriever"], df["corpus"] = name, corpus
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def relevant_retrieved(runs: dict[str, Run], qrels: dict[str, dict[str, int]], threshold: int, corpus: str,
                       k: int = 100) -> pd.DataFrame:
    """Paper Fig. 4 view: per retriever, Hit@k next to the number of relevant passages retrieved."""
    rows = []
    for name, run in runs.items():
        n_rel = sum(
            1 for q, lst in run.items() for pid, _ in lst[:k] if qrels.get(q, {}).get(pid, 0) >= threshold
        )
        hit = hit_curve(run, qrels, ks=[k], threshold=threshold)["hit"].iloc[0]
        rows.append(
            {"corpus": corpus, "retriever": name, f"Hit@{k}": round(hit, 2), "relevant retrieved": n_rel}
        )
    return pd.DataFrame(rows)


def mean_length(corpus: dict[str, str]) -> float:
    return round(sum(n_tokens(t) for t in corpus.values()) / max(1, len(corpus)), 2)


def passage_lengths(corpus: dict[str, str], label: str, owner: Callable[[str], str | None] | None = None
                    ) -> pd.DataFrame:
    """One row per passage: ``corpus`` (label), ``pid``, ``qid`` (the question it belongs to, by
    ``owner``; empty without one), ``tokens`` (as :func:`mean_length` counts them), the sample the
    passage-length finding compares (resampled by question: a question's passages share its hints)."""
    return pd.DataFrame(
        {"corpus": label, "pid": list(corpus), "qid": [(owner(p) if owner else None) for p in corpus],
         "tokens": [n_tokens(t) for t in corpus.values()]}
    )


def corpora_lengths(ds: Dataset, corpus: dict[str, str], control: dict[str, str]) -> pd.DataFrame:
    """:func:`passage_lengths` of the answer-supporting corpus and the answer-containing control, each
    passage with its question (its owner in the dataset; the question a control reference's
    ``ref:<qid>`` id names, built or not)."""
    return pd.concat([
        passage_lengths(corpus, SUPPORTING, lambda p: ds.passages[p].qid if p in ds.passages else None),
        passage_lengths(control, CONTAINING, reference_question),
    ], ignore_index=True)


def plot_hit_curves(curves: pd.DataFrame, title: str):
    """Hit@k against k (log scale), one panel per corpus and one line per retriever, each point with
    its 95 % bootstrap interval over questions as an error bar (columns ``hit_lo`` / ``hit_hi`` of
    :func:`hit_curves`; the lines pass through the true k, the bars of the retrievers are spread a
    little along k so that they do not overlap)."""
    import matplotlib.pyplot as plt

    corpora = list(dict.fromkeys(curves["corpus"]))
    fig, axes = plt.subplots(1, len(corpora), figsize=(5.5 * len(corpora), 3.8), sharey=True, squeeze=False)
    for ax, corpus in zip(axes[0], corpora, strict=True):
        sub = curves[curves["corpus"] == corpus]
        groups = list(sub.groupby("retriever", sort=False))
        for i, (name, g) in enumerate(groups):
            (line,) = ax.plot(g["k"], g["hit"], marker="o", ms=3, lw=1.2, label=name)
            if "hit_lo" in g:  # bars beside the point: multiplicative offsets are equal on the log axis
                dodge = 1.045 ** (i - (len(groups) - 1) / 2)
                ax.errorbar(
                    g["k"] * dodge,
                    g["hit"],
                    yerr=error_bars(g["hit"], g["hit_lo"], g["hit_hi"]),
                    fmt="none",
                    ecolor=line.get_color(),
                    elinewidth=0.7,
                    capsize=2,
                )
        ax.set_xscale("log")
        ax.set_xlabel("k")
        n = int(sub["n_questions"].max()) if len(sub) else 0
        ax.set_title(f"{corpus} (relevance ≥ {int(sub['threshold'].iloc[0])}, {n} questions)", fontsize=10)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("Hit@k (%)")
    axes[0][-1].legend(fontsize=8)
    fig.suptitle(f"{title}\n{INTERVAL_NOTE}")
    fig.tight_layout()
    return fig


#: Corpus tag of the lenient view: the answer-supporting corpus with relevance = label ≥ 1.


def cross_corpus_sentence(both: pd.DataFrame, retrievers: Sequence[str], passages_per_question: int,
                         metric: str = "Hit@10") -> str:
    """Sentences: for how many retrievers answer-containing ``metric`` beats answer-supporting
    (label 2, paper §5.1), and — when ``both`` has :data:`SUPPORTING_LENIENT` rows — beats the
    lenient view (any own passage of the question, label ≥ 1), which stays measurable when no
    labeler could answer from any passage (no label 2)."""

    def verdict(corpus: str) -> str:
        sup = both[both["corpus"] == corpus][metric]
        con = both[both["corpus"] == CONTAINING][metric]
        if sup.isna().all():
            return ("cannot be tested: no question of this split has a label-2 passage (no labeler answered "
                    "from any of its passages)")
        higher = [r for r in retrievers if con.get(r, 0) > sup.get(r, 0)]
        return (
            "holds for every retriever"
            if len(higher) == len(retrievers)
            else f"holds for {len(higher)} of {len(retrievers)} retrievers ({', '.join(higher) or 'none'})"
        )

    n_sup = int(both[both["corpus"] == SUPPORTING]["n_questions"].max())
    text = (f"Answer-containing {metric} > answer-supporting {metric} {verdict(SUPPORTING)}; the "
            f"supporting side rests on {n_sup} question(s) with a label-2 passage.")
    if (both["corpus"] == SUPPORTING_LENIENT).any():
        n_len = int(both[both["corpus"] == SUPPORTING_LENIENT]["n_questions"].max())
        text += (f" Counting any own passage as relevant (label ≥ 1, {n_len} questions), answer-containing "
                 f"{metric} > answer-supporting {metric} {verdict(SUPPORTING_LENIENT)}.")
    return text + (f" The control corpus has one reference per question, the supporting corpus "
                   f"{passages_per_question} passages per question, so chance levels differ.")
