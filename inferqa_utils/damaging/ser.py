"""Stability Error Ratio with simulated damaging passages (paper 004 §3.1, Table 1).

Population: questions the reader answers correctly (strict EM) from **one good passage** alone —
in the answer-supporting corpus the first of the question's label-2 passages (most hints first,
then by id) that the reader answers correctly, trying at most ``max_tries``; in the
answer-containing control corpus the question's own reference when it contains the answer.

Perturbation: the good passage followed by ``m = 1..max_extra`` extra passages, either

* **random** — drawn uniformly (seeded per question and sample) from the corpus, excluding the
  question's own passages and every passage that contains a gold answer;
* **BM25** — hard negatives: the question's BM25 ranking with the same exclusions, best first
  (deterministic, so one sample). A question whose ranking holds fewer than ``max_extra`` such
  passages (BM25 only ranks passages sharing a term with the question) is left out of this row,
  so every m of a row has the same population.

Extras are nested (the context for m + 1 extends the one for m) and put *after* the good passage;
a decoder reader is order-sensitive, so other placements may give other ratios (FiD, the paper's
reader, is not). ``SER(m) = 100 · |{(q, s) : norm(answer_m) ≠ norm(base answer)}| / |{(q, s)}|``
(:func:`stability_error_ratio`; :func:`ser_table` per setting and m, :func:`ser_long` with
intervals).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace

import pandas as pd

from ..answering.scoring import gold_of
from ..core.config import SEED
from ..ir.datamodel import Dataset
from ..ir.runs import ranked_ids
from ..ir.textnorm import any_occurs_folded, normalize_answer
from ..ir.trec import Run
from ..measure.uncertainty import mean_ci
from ..reading.contexts import union_norm
from ..reading.setup import ReadingSetup
from .incremental import read_unique

KINDS = ("random", "BM25")


def stability_error_ratio(base_answers: Sequence[str], perturbed_answers: Sequence[str]) -> float:
    """Stability Error Ratio in % (paper 004 §3.1, after Krishna et al. 2021).

    ``SER = 100 · |{q : norm(base_q) ≠ norm(perturbed_q)}| / |Q|`` with ``norm`` =
    :func:`inferqa_utils.ir.textnorm.normalize_answer`. Pass only the questions answered correctly with
    the gold passage alone (``base_answers``) and their answers after adding extra passages
    (``perturbed_answers``, aligned). For several perturbations per question, repeat the base answer
    once per perturbed sample. Returns NaN for no questions.
    """
    if len(base_answers) != len(perturbed_answers):
        raise ValueError(f"{len(base_answers)} base answers for {len(perturbed_answers)} perturbed answers")
    if not base_answers:
        return float("nan")
    changed = sum(
        normalize_answer(b) != normalize_answer(p)
        for b, p in zip(base_answers, perturbed_answers, strict=True)
    )
    return 100.0 * changed / len(base_answers)


def supporting_gold_candidates(ds: Dataset, qid: str) -> list[str]:
    """The question's label-2 passages, most hints first, then by id (answer-supporting corpus)."""
    labels = ds.qrels.get(qid, {})
    pids = [
        pid for pid, lab in labels.items() if lab >= 2 and pid in ds.passages and ds.passages[pid].qid == qid
    ]
    return sorted(pids, key=lambda pid: (-ds.passages[pid].n_hints, pid))


def containing_gold_candidates(control_qrels: Mapping[str, Mapping[str, int]], qid: str) -> list[str]:
    """The question's own reference ``ref:<qid>`` when it contains the answer (control corpus)."""
    own = f"ref:{qid}"
    return [own] if control_qrels.get(qid, {}).get(own, 0) >= 1 else []


def select_gold(setup: ReadingSetup, candidates: Mapping[str, Sequence[str]],
                max_tries: int = 3) -> dict[str, tuple[str, str]]:
    """Per question, the first candidate passage of ``setup.corpus`` (of at most ``max_tries``)
    that ``setup.reader`` answers correctly (strict EM; the judge is not asked) when it reads it
    alone: ``{qid: (pid, base answer)}``; questions without one are left out. Candidates are tried
    in rounds (all questions' first candidates in one batch, then the second…)."""
    if max_tries < 1:
        raise ValueError(f"max_tries must be >= 1, got {max_tries}")
    ds, corpus, strict = setup.dataset, setup.corpus, replace(setup, judge=None)
    chosen: dict[str, tuple[str, str]] = {}
    for t in range(max_tries):
        todo = [(q, c[t]) for q, c in candidates.items() if q not in chosen and len(c) > t]
        if not todo:
            break
        res = read_unique(strict, [(q, _context(ds, [pid], corpus)) for q, pid in todo],
                          desc=f"SER gold passages (try {t + 1})")
        for q, pid in todo:
            out = res[(q, _context(ds, [pid], corpus))]
            if out["em"]:
                chosen[q] = (pid, out["answer"])
    return chosen


def _context(ds: Dataset, pids: Sequence[str], corpus: Mapping[str, str] | None) -> str:
    return " ".join(union_norm([ds.passage_sentences(pid, corpus) for pid in pids]))


def excluded_for(ds: Dataset, qid: str, corpus: Mapping[str, str]) -> set[str]:
    """Passages that may not serve as negatives for ``qid``: its own passages (built passages of
    the question, its reference ``ref:<qid>``) and every corpus passage containing a gold answer."""
    gold = gold_of(ds.questions[qid])
    own = {
        pid
        for pid in corpus
        if _is_own_reference(pid, qid) or (pid in ds.passages and ds.passages[pid].qid == qid)
    }
    return own | {pid for pid, text in corpus.items() if any_occurs_folded(gold, text)}


def _is_own_reference(pid: str, qid: str) -> bool:
    """``ref:<qid>`` or ``ref:<qid>:<n>`` (the control-corpus ids of the question's references)."""
    return pid == f"ref:{qid}" or (pid.startswith(f"ref:{qid}:") and pid.rsplit(":", 1)[1].isdigit())


def random_negatives(pool: Sequence[str], exclude: Collection[str], m: int, rng: random.Random) -> list[str]:
    """``m`` distinct passages drawn uniformly from ``pool`` minus ``exclude`` (error if too few)."""
    allowed = [p for p in pool if p not in exclude]
    if len(allowed) < m:
        raise ValueError(f"only {len(allowed)} allowed negative passages, {m} requested")
    return rng.sample(allowed, m)


def bm25_negatives(ranked: Sequence[str], exclude: Collection[str], m: int) -> list[str]:
    """The first ``m`` passages of a BM25 ranking not in ``exclude`` (fewer if the ranking runs out)."""
    return [p for p in ranked if p not in exclude][:m]


def sample_negatives(
    ds: Dataset,
    gold: Mapping[str, tuple[str, str]],
    corpus: Mapping[str, str],
    bm25_run: Run,
    max_extra: int = 4,
    samples: int = 1,
    seed: int = SEED,
    exclude: Callable[[str], set[str]] | None = None,
) -> dict[str, dict[str, list[list[str]]]]:
    """``{kind: {qid: [extras of sample 0, …]}}`` with ``max_extra`` passages per sample:
    ``samples`` seeded random draws (``random.Random(f"{seed}:{qid}:{s}")``) and one BM25 list
    (questions with fewer than ``max_extra`` BM25 negatives get none)."""
    if max_extra < 1 or samples < 1:
        raise ValueError(f"max_extra and samples must be >= 1, got {max_extra}, {samples}")
    pool = sorted(corpus)
    out: dict[str, dict[str, list[list[str]]]] = {k: {} for k in KINDS}
    for qid in gold:
        ex = exclude(qid) if exclude is not None else excluded_for(ds, qid, corpus)
        out["random"][qid] = [random_negatives(pool, ex, max_extra, random.Random(f"{seed}:{qid}:{s}"))
                              for s in range(samples)]
        hard = bm25_negatives(ranked_ids(bm25_run, qid), ex, max_extra)
        if len(hard) == max_extra:
            out["BM25"][qid] = [hard]
    return out


def ser_inference(setup: ReadingSetup, gold: Mapping[str, tuple[str, str]],
                  negatives: Mapping[str, Mapping[str, Sequence[Sequence[str]]]]) -> pd.DataFrame:
    """Read good passage + the first m extras (passages of ``setup.corpus``) for every question,
    kind, sample and m with ``setup.reader`` (one batch; strict EM, the judge is not asked).

    One row per reading: ``kind, qid, sample, m, gold_pid, extras, base_answer, answer, em, changed``.
    """
    rows, items = [], []
    for kind, per_q in negatives.items():
        for qid, samples in per_q.items():
            gpid, base = gold[qid]
            for s, extras in enumerate(samples):
                for m in range(1, len(extras) + 1):
                    ctx = _context(setup.dataset, [gpid, *extras[:m]], setup.corpus)
                    rows.append({"kind": kind, "qid": qid, "sample": s, "m": m, "gold_pid": gpid,
                                 "extras": " ".join(extras[:m]), "base_answer": base, "_ctx": ctx})
                    items.append((qid, ctx))
    res = read_unique(replace(setup, judge=None), items, desc="SER")
    for r in rows:
        out = res[(r["qid"], r.pop("_ctx"))]
        r["answer"], r["em"] = out["answer"], out["em"]
        r["changed"] = stability_error_ratio([r["base_answer"]], [r["answer"]]) > 0
    return pd.DataFrame(
        rows,
        columns=[
            "kind", "qid", "sample", "m", "gold_pid", "extras", "base_answer", "answer", "em", "changed",
        ],
    )


def ser_table(readings: pd.DataFrame) -> pd.DataFrame:
    """Paper 004 Table 1 shape: rows ``SER w/ <kind>``, columns ``m = 1..4`` (SER in %), plus the
    number of (question, sample) pairs per row and the strict EM (%) with all extras added."""
    rows = []
    for kind, g in readings.groupby("kind", sort=False):
        row: dict = {"setting": f"SER w/ {kind}"}
        for m, gm in g.groupby("m"):
            row[m] = round(stability_error_ratio(gm["base_answer"].tolist(), gm["answer"].tolist()), 2)
        last = g[g["m"] == g["m"].max()]
        row["pairs"] = len(last)
        row[f"EM at m = {int(g['m'].max())} (%)"] = round(100.0 * last["em"].mean(), 2)
        rows.append(row)
    return pd.DataFrame(rows).set_index("setting") if rows else pd.DataFrame()


def ser_long(readings: pd.DataFrame) -> pd.DataFrame:
    """SER(m) with seeded 95 % bootstrap intervals over (question, sample) pairs: long rows
    ``(setting, m, value, lo, hi, pairs)``, SER in % = mean of the per-pair 0/1 ``changed`` of
    :func:`ser_inference`'s readings, for :func:`inferqa_utils.present.figures.interval_lines`."""
    several = "corpus" in readings.columns and readings["corpus"].nunique() > 1
    keys = ["corpus", "kind", "m"] if several else ["kind", "m"]
    rows = []
    for key, g in readings.groupby(keys, sort=False):
        *corpus, kind, m = key
        iv = mean_ci(
            g["changed"].astype(str).str.lower().isin(["true", "1"]).astype(float).to_numpy()
        ).scaled(100)
        rows.append(
            {
                "setting": (f"{corpus[0]}: " if corpus else "") + f"SER w/ {kind}",
                "m": int(m),
                "value": round(iv.value, 2),
                "lo": round(iv.lo, 2),
                "hi": round(iv.hi, 2),
                "pairs": len(g),
            }
        )
    return pd.DataFrame(rows, columns=["setting", "m", "value", "lo", "hi", "pairs"])

