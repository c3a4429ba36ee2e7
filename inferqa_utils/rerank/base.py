"""The reranker interface and the oracle-reranker helpers (paper 000 §5.3).

Every reranker reorders the top-``depth`` passages of each question's run and leaves the rest
below them in their original order (paper 000 §5.3 reranks the BGE top-100). Scores of the
returned run are strictly meaningful only inside the reranked head; the tail gets scores below
the head's minimum so that the run stays sorted by score, descending (``trec.Run`` contract;
:func:`inferqa_utils.ir.runs.merge_head_tail`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ..ir.runs import merge_head_tail, sort_scored
from ..ir.trec import Run


class Reranker:
    """Base class: ``rerank(queries, run, corpus, depth)`` → a new run.

    Subclasses implement :meth:`_rerank_heads`, which receives every question's head (the
    top-``depth`` pids, best first by the first-stage retriever) at once, so that pointwise
    rerankers can send one batch to the LLM engine (which orders prompts for KV prefix reuse).
    """

    name = "reranker"

    def rerank(self, queries: Mapping[str, str], run: Mapping[str, Sequence[tuple[str, float]]],
               corpus: Mapping[str, str], depth: int | None = 100) -> Run:
        """Rerank the top-``depth`` of each question's list (``None``: the whole list).

        Passages beyond ``depth`` keep their order below the reranked ones. Returns a new run
        (qid → [(pid, score)] sorted by score, descending).
        """
        if depth is not None and depth < 0:
            raise ValueError(f"depth must be ≥ 0 or None, got {depth}")
        heads: dict[str, list[str]] = {}
        for qid, ranked in run.items():
            if qid not in queries:
                raise KeyError(f"run has question {qid!r} but no query text was given for it")
            head = [pid for pid, _ in (ranked if depth is None else ranked[:depth])]
            missing = [pid for pid in head if pid not in corpus]
            if missing:
                raise KeyError(f"question {qid!r}: {len(missing)} candidate passage(s) not in the corpus, "
                               f"e.g. {missing[0]!r}")
            if len(set(head)) != len(head):
                raise ValueError(f"question {qid!r}: the run lists a passage twice")
            heads[qid] = head
        todo = {q: h for q, h in heads.items() if h}
        scored = self._rerank_heads({q: queries[q] for q in todo}, todo, corpus) if todo else {}
        out: Run = {}
        for qid, ranked in run.items():
            tail = [pid for pid, _ in (() if depth is None else ranked[depth:])]
            out[qid] = merge_head_tail(scored.get(qid, []), tail)
        return out

    def _rerank_heads(self, queries: Mapping[str, str], heads: Mapping[str, list[str]],
                      corpus: Mapping[str, str]) -> dict[str, list[tuple[str, float]]]:  # pragma: no cover
        """qid → the head's pids with new scores, best first."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class PairwiseScoreReranker(Reranker):
    """A reranker that scores each (query, passage) pair independently (pointwise)."""

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:  # pragma: no cover
        """One relevance score per (query text, passage text); higher is more relevant."""
        raise NotImplementedError

    def _rerank_heads(self, queries: Mapping[str, str], heads: Mapping[str, list[str]],
                      corpus: Mapping[str, str]) -> dict[str, list[tuple[str, float]]]:
        flat = [(qid, pid) for qid, head in heads.items() for pid in head]
        scores = self.score_pairs([(queries[qid], corpus[pid]) for qid, pid in flat])
        if len(scores) != len(flat):
            raise RuntimeError(f"{self!r} returned {len(scores)} scores for {len(flat)} pairs")
        per_q: dict[str, list[tuple[str, float]]] = {qid: [] for qid in heads}
        for (qid, pid), s in zip(flat, scores, strict=True):
            per_q[qid].append((pid, _finite(s)))
        return {qid: sort_scored(v) for qid, v in per_q.items()}


def _finite(s: float, floor: float = -1e9) -> float:
    s = float(s)
    if math.isnan(s):
        return floor
    return min(max(s, floor), -floor)


def oracle_candidates(qrels_of_question: Mapping[str, int], min_label: int = 0) -> list[str]:
    """Candidates of the oracle-reranker setting (paper 000 §5.3): the question's own labelled passages.

    All passages the question's qrels list with a label ≥ ``min_label`` (default: every one of
    its own passages, whatever its label), sorted by pid — a label-independent order, so the
    reranker (in particular a listwise one, which sees positions) gets no hint from the input
    order.
    """
    return sorted(pid for pid, label in qrels_of_question.items() if int(label) >= min_label)


def oracle_run(qrels: Mapping[str, Mapping[str, int]], min_label: int = 0) -> Run:
    """A first-stage run for the oracle setting: each question's :func:`oracle_candidates`,
    scores n, n−1, …, 1 (pid order), to be passed to ``rerank(..., depth=None)``."""
    out: Run = {}
    for qid, labels in qrels.items():
        cands = oracle_candidates(labels, min_label)
        out[qid] = [(pid, float(len(cands) - i)) for i, pid in enumerate(cands)]
    return out
