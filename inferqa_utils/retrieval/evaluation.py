"""Retrieval metrics of several runs side by side (paper 000 §4, §5.1–5.2, Table 2).

Every metric is computed per question by :func:`inferqa_utils.measure.metrics.evaluate`:
``Hit@k`` = 1 when a passage with label ≥ ``threshold`` is in the top k, ``Recall@k``, ``MRR@100``
and graded ``nDCG@k`` (gain 2^label − 1), each averaged over the questions with a relevant
passage and reported in %.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..ir.trec import Run
from ..measure.metrics import DEFAULT_METRICS, evaluate


def metrics_table(runs: dict[str, Run], qrels: dict[str, dict[str, int]], threshold: int,
                  metrics: Sequence[str] = DEFAULT_METRICS) -> pd.DataFrame:
    """One row per retriever (metrics in %), with the number of questions and the threshold."""
    return pd.concat([evaluate(run, qrels, threshold=threshold, metrics=metrics, name=name)
                      for name, run in runs.items()]).round(2)
