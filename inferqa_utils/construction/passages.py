"""Passages as subset-permutations of a question's hints (paper 000 §3.2.1).

Every non-empty subset of the k hints in every order: Σ_{j=1..k} C(k, j)·j! passages
(k = 5 → 5 + 20 + 60 + 120 + 120 = 325). Ids are ``{qid}_{mask}_{perm}`` (docs/data.md, *The QUIT release
shape*).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import combinations, permutations
from math import comb, factorial

from ..ir.datamodel import Passage, join_hints, passage_id


def n_subset_permutations(k: int) -> int:
    """Σ_{j=1..k} C(k, j)·j!  (1, 4, 15, 64, 325 for k = 1..5)."""
    return sum(comb(k, j) * factorial(j) for j in range(1, k + 1))


def subset_permutations(k: int, max_size: int | None = None) -> Iterator[tuple[int, ...]]:
    """All orderings of all non-empty subsets of ``range(k)``, by size then lexicographically."""
    top = k if max_size is None else min(k, max_size)
    for size in range(1, top + 1):
        for subset in combinations(range(k), size):
            yield from permutations(subset)


def build_passages(qid: str, hints: Sequence[str], max_size: int | None = None) -> list[Passage]:
    """The subset-permutation passages of one question's (kept) hints."""
    k = len(hints)
    return [Passage(passage_id(qid, ids, k), qid, ids, join_hints(hints, ids))
            for ids in subset_permutations(k, max_size)]
