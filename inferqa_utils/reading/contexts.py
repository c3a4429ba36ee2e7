"""Context building for the top-k reading setting (paper 000 §5.4, Eq. 1).

A passage is a sequence of sentences (hints). Passages retrieved for one question overlap heavily
(they are subsets/permutations of the same five hints), so the top-k passages are merged into a
sentence *union* before reading:

* ``union_norm`` — sentences in rank order, first occurrences kept;
* ``union_freq`` — sentences ordered by
  ``score(s) = α·Σ_{i: s∈P_i} 1/rank(P_i) + β·Σ_{i: s∈P_i} 1/pos_i(s)`` (rank and position 1-based,
  α = 0.6, β = 0.4), descending, ties keeping first-seen order.

Conventions (both methods): sentences are compared after ``str.strip()``; sentences that are
empty after stripping are dropped before positions are counted; a sentence repeated inside one
passage counts once for that passage, at its first position.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

ALPHA = 0.6
BETA = 0.4
_TIE_DIGITS = 12  # scores are rounded to this many digits when sorting, so float noise is not a tie-breaker

Method = Literal["norm", "freq"]


def _clean(passage: Sequence[str]) -> list[str]:
    """Stripped, non-empty sentences of one passage, first occurrences only (order kept)."""
    if isinstance(passage, str):
        raise TypeError("a passage must be a sequence of sentences, not a str")
    seen: set[str] = set()
    out: list[str] = []
    for sent in passage:
        s = sent.strip()
        if s and s not in seen:
            seen.add(s)
            out.append(s)
    return out


def union_norm(passages: Sequence[Sequence[str]]) -> list[str]:
    """Union_norm (paper 000 §5.4): concatenate the passages' sentences in rank order, keep first occurrences.

    ``passages[0]`` is the rank-1 passage. Sentences compare after ``.strip()``; the stripped form is
    returned.
    """
    seen: set[str] = set()
    out: list[str] = []
    for passage in passages:
        for s in _clean(passage):
            if s not in seen:
                seen.add(s)
                out.append(s)
    return out


def union_freq_scores(
    passages: Sequence[Sequence[str]], alpha: float = ALPHA, beta: float = BETA
) -> dict[str, float]:
    """Union_freq scores (paper 000 §5.4, paper 000 Eq. 1), keyed by stripped sentence in first-seen order.

    ``score(s) = α·Σ_{i: s∈P_i} 1/rank(P_i) + β·Σ_{i: s∈P_i} 1/pos_i(s)``, where ``rank(P_i) = i``
    (1-based, ``passages[0]`` has rank 1) and ``pos_i(s)`` is the 1-based position of ``s`` among the
    stripped, non-empty, de-duplicated sentences of ``P_i``.
    """
    rank_part: dict[str, float] = {}
    pos_part: dict[str, float] = {}
    for rank, passage in enumerate(passages, start=1):
        for pos, s in enumerate(_clean(passage), start=1):
            rank_part[s] = rank_part.get(s, 0.0) + 1.0 / rank
            pos_part[s] = pos_part.get(s, 0.0) + 1.0 / pos
    return {s: alpha * rank_part[s] + beta * pos_part[s] for s in rank_part}


def union_freq(passages: Sequence[Sequence[str]], alpha: float = ALPHA, beta: float = BETA) -> list[str]:
    """Union_freq (paper 000 §5.4): sentences sorted by :func:`union_freq_scores` descending.

    The sort is stable over first-seen order (the :func:`union_norm` order), so ties keep the order
    in which sentences first appear; scores are compared after rounding to 12 decimals so that
    floating-point noise (e.g. ``0.6·(1/2+1/3)`` vs ``0.6·(5/6)``) does not break ties.
    """
    scores = union_freq_scores(passages, alpha=alpha, beta=beta)
    return sorted(scores, key=lambda s: -round(scores[s], _TIE_DIGITS))


def build_context(
    passages: Sequence[Sequence[str]],
    k: int,
    method: Method = "freq",
    alpha: float = ALPHA,
    beta: float = BETA,
) -> str:
    """Reader context from the top-k passages (paper 000 §5.4): their union joined with one space.

    ``method="norm"`` uses :func:`union_norm`, ``"freq"`` uses :func:`union_freq` (with ``alpha``,
    ``beta``). ``k`` must be ≥ 1; if fewer than ``k`` passages are given, all of them are used.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    top = list(passages)[:k]
    if method == "norm":
        sents = union_norm(top)
    elif method == "freq":
        sents = union_freq(top, alpha=alpha, beta=beta)
    else:
        raise ValueError(f"unknown method {method!r}; expected 'norm' or 'freq'")
    return " ".join(sents)
