"""Retrieval metrics per question (paper 000 §4, §5.1–5.2): the one definition of Hit@k, Recall@k, MRR@k
and nDCG@k behind every retrieval table (:func:`per_query`, :func:`evaluate`, :func:`hit_curve`,
:func:`inferqa_utils.measure.uncertainty.compare_runs`, the released runs' scores of
:mod:`inferqa_utils.paper_runs.scoring`, the pooled Hit@k of :mod:`inferqa_utils.retrieval.pooled`).

For a question with passage labels ``L`` (a passage the labels do not know has label 0), a ranked
list ``r`` (``r_i`` at rank i; the list order is the ranking, scores are never read) and a relevance
threshold ``t``, the relevant passages are ``R = {p : L(p) ≥ t}`` and

* ``Hit@k    = 1[R ∩ r[:k] ≠ ∅]``;
* ``Recall@k = |R ∩ r[:k]| / |R|``;
* ``MRR@k    = 1 / i`` for the first ``r_i ∈ R`` with ``i ≤ k``, else 0;
* ``nDCG@k   = DCG@k / IDCG@k`` with ``DCG@k = Σ_{i ≤ k} g(L(r_i)) / log2(i + 1)``, gain
  ``g(l) = 2^l − 1`` for ``l > 0`` (label 1 → 1, 2 → 3), else 0, and ``IDCG@k`` the DCG@k of the
  question's own labels sorted descending. nDCG is graded: it ignores ``t``.

A question *without a relevant passage* (``R = ∅``; for nDCG: no label > 0, ``IDCG = 0``) either is
skipped (``None``; NaN in frames) or scores 0, per metric kind: ``skip`` names the kinds that skip it.
:data:`SKIP_ALL` (every kind) is the convention of this compendium's tables, :data:`AUTHORS_SKIP`
(Hit and Recall) the paper authors' scripts', ``()`` counts every question.

The sums run left to right in double precision, the order trec_eval adds in, so every value equals
ir-measures' (pytrec_eval backend) bit for bit on duplicate-free lists (``tests/test_metrics.py``).

Frames (:func:`per_query`, :func:`evaluate`, :func:`hit_per_query`): the questions are those of
``qrels``; a question that has relevant passages but is missing from the run (or has an empty list)
scores 0; run questions absent from ``qrels`` are ignored; a passage listed twice for a question
that counts is an error.

>>> qrels = {"q1": {"a": 2, "b": 1}, "q2": {"c": 0}}
>>> per_query({"q1": [("x", 0.9), ("b", 0.5)]}, qrels, metrics=("Hit@1", "MRR@10")).to_dict("index")
{'q1': {'Hit@1': 0.0, 'MRR@10': 0.5}, 'q2': {'Hit@1': nan, 'MRR@10': nan}}
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

#: the retrieval metrics of every table by default: the main retrieval table (notebook 02), a
#: retriever's selection (notebook 05) and the columns those tables declare (:mod:`inferqa_utils.stages`)
DEFAULT_METRICS: tuple[str, ...] = (
    "Hit@1", "Hit@5", "Hit@10", "Hit@20", "Hit@50", "Hit@100",
    "Recall@5", "Recall@10", "Recall@50",
    "MRR@100",
    "nDCG@10", "nDCG@100",
)
KINDS = ("Hit", "Recall", "MRR", "nDCG")
#: the metric kinds that skip a question without a relevant passage: all (this compendium's tables) …
SKIP_ALL: tuple[str, ...] = KINDS
#: … or Hit and Recall only (the paper authors' scripts: MRR and nDCG score such a question 0)
AUTHORS_SKIP: tuple[str, ...] = ("Hit", "Recall")
_NAME = re.compile(r"^(Hit|Recall|MRR|nDCG)@([1-9][0-9]*)$")

RunLike = Mapping[str, Sequence[tuple[str, float]]]
QrelsLike = Mapping[str, Mapping[str, int]]


def parse_metric(name: str) -> tuple[str, int]:
    """``"Hit@10"`` → ``("Hit", 10)``."""
    m = _NAME.match(name)
    if not m:
        raise ValueError(f"unknown metric {name!r}: expected one of {KINDS} followed by @k, e.g. 'Hit@10'")
    return m.group(1), int(m.group(2))


# ----------------------------------------------------------------------------- one question


def graded_gain(label: int) -> int:
    """nDCG gain of a label: 2^label − 1 (0 for labels ≤ 0)."""
    label = int(label)
    return 2 ** label - 1 if label > 0 else 0


def relevant(labels: Mapping[str, int], threshold: int = 1) -> set[str]:
    """``R``: the passages labelled ≥ ``threshold``."""
    return {p for p, lab in labels.items() if lab >= threshold}


def ideal_labels(labels: Mapping[str, int]) -> list[int]:
    """The question's positive labels sorted descending: the ranking behind ``IDCG``."""
    return sorted((lab for lab in labels.values() if lab > 0), reverse=True)


def first_relevant_rank(ranked: Sequence[str], rel: Collection[str], depth: int | None = None) -> int | None:
    """Rank (1-based) of the first passage of ``ranked[:depth]`` in ``rel``; None if there is none."""
    for rank, p in enumerate(ranked if depth is None else ranked[:depth], 1):
        if p in rel:
            return rank
    return None


def hit_at(ranked: Sequence[str], rel: Collection[str], k: int) -> float:
    """``Hit@k``: 1.0 when a passage of ``rel`` is in the top k, else 0.0."""
    return float(any(p in rel for p in ranked[:k]))


def recall_at(ranked: Sequence[str], rel: set[str], k: int) -> float:
    """``Recall@k``: |rel ∩ top k| / |rel| (0.0 for an empty ``rel``)."""
    return len(rel.intersection(ranked[:k])) / len(rel) if rel else 0.0


def mrr_at(ranked: Sequence[str], rel: Collection[str], k: int) -> float:
    """``MRR@k``: 1 / rank of the first passage of ``rel`` in the top k, 0.0 if none."""
    rank = first_relevant_rank(ranked, rel, k)
    return 1.0 / rank if rank is not None else 0.0


def _dcg(labels: Iterable[int]) -> float:
    total = 0.0
    for rank, lab in enumerate(labels, 1):
        if lab > 0:
            total += (2 ** lab - 1) / math.log2(rank + 1)
    return total


def ndcg_at(ranked: Sequence[str], labels: Mapping[str, int], k: int,
            ideal: Sequence[int] | None = None) -> float:
    """``nDCG@k`` (graded, gain 2^label − 1), 0.0 when the question has no label > 0; ``ideal`` is
    :func:`ideal_labels` of ``labels`` when already computed."""
    if ideal is None:
        ideal = ideal_labels(labels)
    idcg = _dcg(ideal[:k])
    return _dcg(labels.get(p, 0) for p in ranked[:k]) / idcg if idcg > 0 else 0.0


def score(kind: str, k: int, ranked: Sequence[str], labels: Mapping[str, int], rel: set[str],
          ideal: Sequence[int], skip: Collection[str] = SKIP_ALL) -> float | None:
    """The value of metric ``kind@k`` for one question (module docstring), from its ``labels``,
    ``rel`` = :func:`relevant` and ``ideal`` = :func:`ideal_labels` of them; None when the question
    has no relevant passage and ``kind`` is in ``skip``."""
    if not (ideal if kind == "nDCG" else rel):
        return None if kind in skip else 0.0
    if kind == "Hit":
        return hit_at(ranked, rel, k)
    if kind == "Recall":
        return recall_at(ranked, rel, k)
    if kind == "MRR":
        return mrr_at(ranked, rel, k)
    return ndcg_at(ranked, labels, k, ideal)


def question_scores(ranked: Mapping[str, Sequence[str]], qrels: QrelsLike, metrics: Iterable[str],
                    threshold: int = 1, skip: Collection[str] = SKIP_ALL,
                    qids: Iterable[str] | None = None) -> dict[str, dict[str, float | None]]:
    """metric → {qid: value, or None when skipped} for each question of ``qids`` (default: those of
    ``qrels``), from ``ranked`` (qid → passage ids, best first; a missing question has an empty list)
    and ``qrels`` (qid → {passage id: label}; a missing question has no labels)."""
    parsed = [(m, *parse_metric(m)) for m in metrics]
    out: dict[str, dict[str, float | None]] = {m: {} for m, _, _ in parsed}
    for qid in qrels if qids is None else qids:
        labels = qrels.get(qid, {})
        ranks = ranked.get(qid, ())
        rel = relevant(labels, threshold)
        ideal = ideal_labels(labels)
        for m, kind, k in parsed:
            out[m][qid] = score(kind, k, ranks, labels, rel, ideal, skip)
    return out


# ----------------------------------------------------------------------------- runs and qrels


def binarize_qrels(qrels: QrelsLike, threshold: int = 1) -> dict[str, dict[str, int]]:
    """Questions with at least one label ≥ threshold, labels mapped to 1 (relevant) / 0."""
    out: dict[str, dict[str, int]] = {}
    for qid, docs in qrels.items():
        b = {str(d): int(int(lab) >= threshold) for d, lab in docs.items()}
        if any(b.values()):
            out[str(qid)] = b
    return out


def gain_qrels(qrels: QrelsLike) -> dict[str, dict[str, int]]:
    """Questions with at least one label > 0, labels mapped to 2^label − 1."""
    out: dict[str, dict[str, int]] = {}
    for qid, docs in qrels.items():
        g = {str(d): graded_gain(lab) for d, lab in docs.items()}
        if any(g.values()):
            out[str(qid)] = g
    return out


def _int_labels(qrels: QrelsLike) -> dict[str, dict[str, int]]:
    return {str(q): {str(d): int(lab) for d, lab in docs.items()} for q, docs in qrels.items()}


def _ranked_ids(run: RunLike, qids: Iterable[str], depth: int) -> dict[str, list[str]]:
    """The passage ids of ``run`` cut at ``depth`` for ``qids`` (str keys); a passage twice is an error."""
    out: dict[str, list[str]] = {}
    for qid in qids:
        ids = [str(did) for did, _score in list(run.get(qid, ()))[:depth]]
        seen: set[str] = set()
        for did in ids:
            if did in seen:
                raise ValueError(f"run: passage {did!r} appears twice for question {qid!r}")
            seen.add(did)
        out[qid] = ids
    return out


def per_query(run: RunLike, qrels: QrelsLike, threshold: int = 1,
              metrics: Sequence[str] = DEFAULT_METRICS) -> pd.DataFrame:
    """One row per question of ``qrels`` (index ``qid``), one column per metric, values in [0, 1];
    NaN where the question is skipped (:data:`SKIP_ALL`)."""
    import pandas as pd

    parsed = {name: parse_metric(name) for name in metrics}
    run = {str(q): v for q, v in run.items()}
    labels = _int_labels(qrels)
    counted = dict.fromkeys([*binarize_qrels(labels, threshold), *gain_qrels(labels)])
    ranked = _ranked_ids(run, counted, max((k for _, k in parsed.values()), default=0))
    values = question_scores(ranked, labels, parsed, threshold, SKIP_ALL)
    qids = list(labels)
    rows = [[float("nan") if (v := values[name][q]) is None else v for name in parsed] for q in qids]
    return pd.DataFrame(rows, index=pd.Index(qids, name="qid"), columns=list(parsed), dtype=float)


def evaluate(run: RunLike, qrels: QrelsLike, threshold: int = 1, metrics: Sequence[str] = DEFAULT_METRICS,
             name: str = "run") -> pd.DataFrame:
    """One row (index ``name``): the mean of each metric in %, then ``n_questions`` (questions with a
    passage labelled ≥ threshold: those Hit/Recall/MRR average over), ``n_questions_ndcg`` (questions with
    any label > 0) and ``threshold``."""
    import pandas as pd

    pq = per_query(run, qrels, threshold, metrics)
    row: dict[str, float | int] = {m: float(pq[m].mean() * 100) if pq[m].notna().any() else float("nan")
                                   for m in pq.columns}
    row["n_questions"] = len(binarize_qrels(qrels, threshold))
    row["n_questions_ndcg"] = len(gain_qrels(qrels))
    row["threshold"] = int(threshold)
    return pd.DataFrame([row], index=pd.Index([name], name="run"))


def hit_per_query(run: RunLike, qrels: QrelsLike, ks: Iterable[int] = range(1, 101),
                  threshold: int = 1) -> pd.DataFrame:
    """Per-question Hit@k for every k in ``ks``: one row per question with a relevant passage
    (index ``qid``, in ``qrels`` order), one column per k, 1.0 if the first relevant passage
    (label ≥ threshold) is at rank ≤ k, else 0.0 (also when the run lacks the question). The rank
    of the first relevant passage is found once, so a long curve costs one pass."""
    import pandas as pd

    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] < 1:
        raise ValueError("ks must be positive integers")
    labels = _int_labels(qrels)
    qids = list(binarize_qrels(labels, threshold))
    ranked = _ranked_ids({str(q): v for q, v in run.items()}, qids, ks[-1])
    first = [first_relevant_rank(ranked[q], relevant(labels[q], threshold)) for q in qids]
    rows = [[1.0 if r is not None and r <= k else 0.0 for k in ks] for r in first]
    return pd.DataFrame(rows, index=pd.Index(qids, name="qid"), columns=ks, dtype=float)


def hit_curve(
    run: RunLike, qrels: QrelsLike, ks: Iterable[int] = range(1, 101), threshold: int = 1
) -> pd.DataFrame:
    """Hit@k (%) for every k in ``ks`` (columns ``k``, ``hit``, ``n_questions``, ``threshold``):
    ``100 · mean`` of the columns of :func:`hit_per_query` (NaN without a relevant question)."""
    import pandas as pd

    pq = hit_per_query(run, qrels, ks, threshold)
    n = len(pq)
    hits = [100 * float(pq[k].sum()) / n if n else float("nan") for k in pq.columns]
    return pd.DataFrame({"k": list(pq.columns), "hit": hits, "n_questions": n, "threshold": int(threshold)})
