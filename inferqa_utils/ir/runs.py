"""Ranked runs in memory (the :data:`~inferqa_utils.ir.trec.Run` shape, ``qid → [(pid, score)]`` best
first): reading a question's ranking, turning id lists and score maps into run entries, and the
head/tail merge every reranker uses (paper 000 §5.3). File I/O is :mod:`inferqa_utils.ir.trec`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def ranked_ids(run: Mapping[str, Sequence[tuple[str, float]]], qid: str, k: int | None = None) -> list[str]:
    """The first ``k`` passage ids of ``run[qid]`` (all with ``k=None``), in run (rank) order; empty
    when the run has no list for ``qid``."""
    ids = [pid for pid, _ in run.get(qid, ())]
    return ids if k is None else ids[:k]


def ids_to_run_list(ids: Sequence[str]) -> list[tuple[str, float]]:
    """A ranked id list as run entries with rank-based scores ``n, n − 1, …, 1`` (``n = len(ids)``)."""
    n = len(ids)
    return [(pid, float(n - i)) for i, pid in enumerate(ids)]


def sort_scored(items: Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
    """``(pid, score)`` pairs sorted by score, descending; ties keep the input (first-stage) order."""
    order = sorted(range(len(items)), key=lambda i: (-items[i][1], i))
    return [(items[i][0], float(items[i][1])) for i in order]


def merge_head_tail(head: Sequence[tuple[str, float]], tail: Sequence[str]) -> list[tuple[str, float]]:
    """A reranked head, then the tail in its original order with scores ``m − 1, m − 2, …`` where
    ``m`` is the head's smallest finite score (0 without one), so the run stays sorted by score."""
    finite = [s for _, s in head if math.isfinite(s)]
    floor = min(finite) if finite else 0.0
    return [*((p, float(s)) for p, s in head), *((p, floor - (i + 1.0)) for i, p in enumerate(tail))]
