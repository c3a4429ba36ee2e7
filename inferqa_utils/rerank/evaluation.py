"""Scoring reranked runs (paper 000 §5.3): the oracle-reranker table and first stage vs reranked.

* :func:`oracle_scores` — candidates = each question's own labelled passages (a perfect
  retriever, :func:`~inferqa_utils.rerank.base.oracle_run`), scored by graded nDCG@k (gain
  2^label − 1) with seeded 95 % bootstrap intervals over questions;
* :func:`rerank_table` — a first-stage run and its reranked runs side by side, with the
  reranking cost in seconds per query.

Notebook 03 (LLM rerankers) and notebook 05 (the fine-tuned cross-encoder) share both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from ..ir.trec import Run
from ..measure.metrics import evaluate
from ..measure.uncertainty import metric_intervals

ORACLE_METRICS = ("nDCG@5", "nDCG@10", "nDCG@50", "nDCG@100")
#: the no-reranker row of an oracle table
ORACLE_BASELINE = "no reranker (id order)"


def oracle_scores(first: Run, runs: Mapping[str, Run], own: Mapping[str, Mapping[str, int]]) -> pd.DataFrame:
    """The oracle-reranker table (paper 000 §5.3): one row for the id-order baseline ``first`` and one
    per reranked run; for each m in :data:`ORACLE_METRICS` the graded nDCG (gain 2^label − 1) in %,
    ``m = 100 · mean_q nDCG_q@k`` over the questions with a label > 0, with its seeded 95 %
    bootstrap interval over those questions ``m_lo`` / ``m_hi``
    (:func:`inferqa_utils.measure.uncertainty.metric_intervals`), then ``n_questions_ndcg``."""
    table = metric_intervals({ORACLE_BASELINE: first, **runs}, own, threshold=1, metrics=ORACLE_METRICS)
    cols = [c for m in ORACLE_METRICS for c in (m, f"{m}_lo", f"{m}_hi")]
    return table[[*cols, "n_questions_ndcg"]]


def rerank_table(
    first_name: str,
    first: Run,
    reranked: Mapping[str, Run],
    cost: Mapping[str, float],
    qrels: Mapping[str, Mapping[str, int]],
    threshold: int,
    metrics: Sequence[str] = ("Hit@1", "Hit@5", "Hit@10", "Hit@20", "MRR@100", "nDCG@10", "nDCG@100"),
) -> pd.DataFrame:
    """The first-stage run and each reranked run side by side (metrics in %), with seconds per query."""
    rows = [evaluate(first, qrels, threshold, metrics, name=first_name)]
    rows += [evaluate(r, qrels, threshold, metrics, name=f"{first_name} + {n}") for n, r in reranked.items()]
    table = pd.concat(rows).round(2)
    table["seconds/query"] = [None] + [cost[n] for n in reranked]
    return table
