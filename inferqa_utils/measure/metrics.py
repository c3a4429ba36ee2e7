"""Retrieval metrics (paper 000 §4, §5.1–5.2) through ir-measures with its pytrec_eval backend.

Definitions (per question, then averaged over the questions that count, reported in %):

* ``Hit@k``    1 if a relevant passage (label ≥ ``threshold``) is in the top k (ir-measures ``Success@k``);
* ``Recall@k`` |relevant ∩ top-k| / |relevant| (``R@k``);
* ``MRR@k``    1 / rank of the first relevant passage within the top k, else 0 (``RR`` on the run cut at k);
* ``nDCG@k``   graded: gain 2^label − 1 (label 1 → 1, 2 → 3; ≤ 0 → 0), discount log2(rank + 1), ideal DCG
  from the question's own labels (``nDCG@k`` on qrels whose labels were replaced by those gains).

Choices worth knowing:

* Relevance is thresholded by binarising the qrels (label ≥ threshold → 1, else 0) before calling
  pytrec_eval: its ``R`` does not accept ``rel`` in ir-measures, so every thresholded metric is computed
  the same way. nDCG ignores ``threshold`` (it is always graded).
* pytrec_eval's nDCG uses the label itself as the gain (linear); the 2^label − 1 gain is obtained by
  transforming the qrels, which is what ``nDCG(gains=...)`` would also do.
* ir-measures' pytrec_eval provider silently ignores the cutoff of ``RR@k`` (measured: RR@2 = 1/3 for a
  relevant passage at rank 3), so MRR@k is ``RR`` on the run truncated to k.
* The order of each run list is the ranking. trec_eval re-sorts by score and breaks ties by passage id, so
  scores are replaced by ``n − rank`` before evaluation; the original scores are never used.
* Questions are those of ``qrels``. A question without relevant passages (label ≥ threshold) is skipped
  (NaN) for Hit/Recall/MRR; one without any label > 0 is skipped for nDCG. A question that has relevant
  passages but is missing from the run (or has an empty list) scores 0. Run questions absent from
  ``qrels`` are ignored. Passages the qrels do not know count as non-relevant.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_METRICS: tuple[str, ...] = (
    "Hit@1", "Hit@5", "Hit@10", "Hit@20", "Hit@50", "Hit@100",
    "Recall@5", "Recall@10", "Recall@50",
    "MRR@100",
    "nDCG@10", "nDCG@100",
)
DEFAULT = DEFAULT_METRICS
KINDS = ("Hit", "Recall", "MRR", "nDCG")
_NAME = re.compile(r"^(Hit|Recall|MRR|nDCG)@([1-9][0-9]*)$")

RunLike = Mapping[str, Sequence[tuple[str, float]]]
QrelsLike = Mapping[str, Mapping[str, int]]


def parse_metric(name: str) -> tuple[str, int]:
    """``"Hit@10"`` → ``("Hit", 10)``."""
    m = _NAME.match(name)
    if not m:
        raise ValueError(f"unknown metric {name!r}: expected one of {KINDS} followed by @k, e.g. 'Hit@10'")
    return m.group(1), int(m.group(2))


def graded_gain(label: int) -> int:
    """nDCG gain of a label: 2^label − 1 (0 for labels ≤ 0)."""
    label = int(label)
    return 2 ** label - 1 if label > 0 else 0


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


def _ranked(run: RunLike, qids: Iterable[str], depth: int | None = None) -> dict[str, dict[str, float]]:
    """Run as pytrec_eval input, keeping the list order: score = n − rank (cut at ``depth``)."""
    out: dict[str, dict[str, float]] = {}
    for qid in qids:
        docs = list(run.get(qid, ()))
        if depth is not None:
            docs = docs[:depth]
        if not docs:
            continue
        ranked: dict[str, float] = {}
        for i, (did, _score) in enumerate(docs):
            did = str(did)
            if did in ranked:
                raise ValueError(f"run: passage {did!r} appears twice for question {qid!r}")
            ranked[did] = float(len(docs) - i)
        out[qid] = ranked
    return out


def _calc(measures: Mapping[object, str], qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]],
          into: dict[str, dict[str, float]]) -> None:
    import ir_measures

    if not qrels or not measures:
        return
    for m in ir_measures.pytrec_eval.iter_calc(list(measures), qrels, run):
        into.setdefault(m.query_id, {})[measures[m.measure]] = float(m.value)


def per_query(run: RunLike, qrels: QrelsLike, threshold: int = 1,
              metrics: Sequence[str] = DEFAULT_METRICS) -> pd.DataFrame:
    """One row per question of ``qrels`` (index ``qid``), one column per metric, values in [0, 1];
    NaN where the question is skipped (see the module docstring)."""
    import pandas as pd
    from ir_measures import RR, R, Success, nDCG

    parsed = {name: parse_metric(name) for name in metrics}
    run = {str(q): v for q, v in run.items()}
    qids = [str(q) for q in qrels]
    binary = binarize_qrels(qrels, threshold)
    gains = gain_qrels(qrels)
    max_k = max(k for _, k in parsed.values()) if parsed else 0

    values: dict[str, dict[str, float]] = {}
    bin_measures = {(Success @ k if kind == "Hit" else R @ k): name
                    for name, (kind, k) in parsed.items() if kind in ("Hit", "Recall")}
    _calc(bin_measures, binary, _ranked(run, binary, max_k), values)
    for name, (kind, k) in parsed.items():
        if kind == "MRR":
            _calc({RR: name}, binary, _ranked(run, binary, k), values)
    ndcg_measures = {nDCG @ k: name for name, (kind, k) in parsed.items() if kind == "nDCG"}
    _calc(ndcg_measures, gains, _ranked(run, gains, max_k), values)

    rows = []
    for qid in qids:
        row = {}
        for name, (kind, _k) in parsed.items():
            counted = qid in (gains if kind == "nDCG" else binary)
            row[name] = values.get(qid, {}).get(name, 0.0) if counted else float("nan")
        rows.append(row)
    df = pd.DataFrame(rows, index=pd.Index(qids, name="qid"), columns=list(parsed), dtype=float)
    return df


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
    (label ≥ threshold) is at rank ≤ k, else 0.0 (also when the run lacks the question).

    Computed from the rank of the first relevant passage (1 / RR on the run cut at max(ks)), so a
    long curve costs one evaluation.
    """
    import pandas as pd
    from ir_measures import RR

    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] < 1:
        raise ValueError("ks must be positive integers")
    binary = binarize_qrels(qrels, threshold)
    run = {str(q): v for q, v in run.items()}
    values: dict[str, dict[str, float]] = {}
    _calc({RR: "rr"}, binary, _ranked(run, binary, ks[-1]), values)
    first = [round(1 / rr) if (rr := values.get(q, {}).get("rr", 0.0)) > 0 else None for q in binary]
    rows = [[1.0 if r is not None and r <= k else 0.0 for k in ks] for r in first]
    return pd.DataFrame(rows, index=pd.Index(list(binary), name="qid"), columns=ks, dtype=float)


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
