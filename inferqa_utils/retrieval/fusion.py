"""Fusing ranked lists: the hybrid interleave of paper 002 and reciprocal rank fusion (papers 001–003).

* :func:`interleave` — paper 002's sparse+dense hybrid: "alternately selecting documents from
  their respective ranked lists, preserving intrinsic orderings, and discarding duplicates until a
  final list of N unique documents is obtained". Each turn takes the *next not-yet-selected*
  passage of the current list, so with lists A = [a, x, b] and B = [x, c] the result is
  [a, x, b, c]: A gives a, B gives x, A skips x (taken) and gives b, B gives c. A list that runs
  out drops out of the rotation. Scores are rank-based: n, n − 1, …, 1 for a fused list of n.
* :func:`reciprocal_rank_fusion` — score(d) = Σ over lists containing d of 1 / (c + rank_d), with
  1-based ranks and c = 60 (Cormack et al., 2009); ties go to the better best rank, then to the
  earlier list.

Only the order of each input list matters (scores are ignored). A question missing from some
runs is fused from the runs that have it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

from ..ir.trec import Run

RunLike = Mapping[str, Sequence[tuple[str, float]]]


class Retriever(Protocol):
    """What the registry hands out: a name, an identity (what besides corpus, queries and ``k``
    decides its runs: library versions, model checksums, parameters) and ``search(queries, k) -> Run``."""

    name: str

    @property
    def identity(self) -> str: ...

    def search(self, queries: Mapping[str, str], k: int = 100) -> Run: ...


def identity_of(retriever: Any) -> str:
    """``retriever.identity``, or for a retriever without one its class path ``custom:<module>.<class>``."""
    ident = getattr(retriever, "identity", None)
    if isinstance(ident, str) and ident:
        return ident
    cls = type(retriever)
    return f"custom:{cls.__module__}.{cls.__qualname__}"


def fusion_identity(method: str, parts: Sequence[tuple[str, str]], depth: int | None = None,
                    c: float = 60) -> str:
    """The identity of a fusion of ``parts`` (``(name, identity)`` pairs):
    ``<method>(<name>=<identity>, …)``, with the component depth and RRF's ``c`` first when they are
    not the defaults (``rrf(c=10, depth=200; …)``)."""
    options = ([f"c={c:g}"] if method == "rrf" and c != 60 else []) + ([f"depth={depth}"] if depth else [])
    head = ", ".join(options) + "; " if options else ""
    return f"{method}({head}" + ", ".join(f"{name}={ident}" for name, ident in parts) + ")"


def _qids(runs: Sequence[RunLike]) -> list[str]:
    seen: dict[str, None] = {}
    for run in runs:
        for qid in run:
            seen.setdefault(qid, None)
    return list(seen)


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be ≥ 1, got {k}")


def interleave_lists(lists: Sequence[Sequence[str]], k: int = 100) -> list[str]:
    """Round-robin over ``lists`` taking each list's next unseen id, until ``k`` ids or all are used."""
    _check_k(k)
    out: list[str] = []
    seen: set[str] = set()
    pos = [0] * len(lists)
    active = [i for i, lst in enumerate(lists) if lst]
    while active and len(out) < k:
        still: list[int] = []
        for i in active:
            lst = lists[i]
            while pos[i] < len(lst) and lst[pos[i]] in seen:
                pos[i] += 1
            if pos[i] < len(lst):
                pid = lst[pos[i]]
                pos[i] += 1
                seen.add(pid)
                out.append(pid)
                if len(out) == k:
                    return out
            if pos[i] < len(lst):
                still.append(i)
        active = still
    return out


def interleave(runs: Sequence[RunLike], k: int = 100) -> Run:
    """Paper 002's hybrid merge of ``runs`` (papers 001–003); scores n, n − 1, …, 1 (rank-based)."""
    out: Run = {}
    for qid in _qids(runs):
        ids = interleave_lists([[pid for pid, _ in run.get(qid, ())] for run in runs], k)
        n = len(ids)
        out[qid] = [(pid, float(n - i)) for i, pid in enumerate(ids)]
    return out


def reciprocal_rank_fusion(runs: Sequence[RunLike], k: int = 100, c: float = 60) -> Run:
    """RRF: score(d) = Σ 1 / (c + rank_d) over the runs that retrieve d (ranks start at 1); top ``k``."""
    _check_k(k)
    if c < 0:
        raise ValueError(f"c must be ≥ 0, got {c}")
    out: Run = {}
    for qid in _qids(runs):
        score: dict[str, float] = {}
        best: dict[str, tuple[int, int]] = {}  # pid -> (best rank, index of the first run giving it)
        for r, run in enumerate(runs):
            seen: set[str] = set()
            for rank, (pid, _) in enumerate(run.get(qid, ()), 1):
                if pid in seen:  # a malformed list repeating a passage counts once
                    continue
                seen.add(pid)
                score[pid] = score.get(pid, 0.0) + 1.0 / (c + rank)
                if pid not in best or rank < best[pid][0]:
                    best[pid] = (rank, r)
        ranked = sorted(score, key=lambda p: (-score[p], best[p]))
        out[qid] = [(pid, score[pid]) for pid in ranked[:k]]
    return out


class FusedRetriever:
    """Several retrievers searched with the same queries, their runs fused.

    ``method`` is ``"interleave"`` (paper 002 hybrid) or ``"rrf"``; each component returns its top
    ``max(k, depth)`` before fusion (``depth=None``: top ``k``, as in paper 002).
    """

    def __init__(
        self,
        name: str,
        retrievers: Sequence[Retriever],
        method: Literal["interleave", "rrf"] = "interleave",
        depth: int | None = None,
        c: float = 60,
    ) -> None:
        if method not in ("interleave", "rrf"):
            raise ValueError(f"method must be 'interleave' or 'rrf', got {method!r}")
        if not retrievers:
            raise ValueError("FusedRetriever needs at least one retriever")
        self.name = name
        self.retrievers = list(retrievers)
        self.method = method
        self.depth = depth
        self.c = c

    @property
    def identity(self) -> str:
        """:func:`fusion_identity` of the method and the parts' names and identities."""
        return fusion_identity(
            self.method, [(r.name, identity_of(r)) for r in self.retrievers], self.depth, self.c
        )

    def search(self, queries: Mapping[str, str], k: int = 100) -> Run:
        _check_k(k)
        depth = max(k, self.depth or 0)
        runs = [r.search(queries, depth) for r in self.retrievers]
        fused = (
            interleave(runs, k) if self.method == "interleave" else reciprocal_rank_fusion(runs, k, self.c)
        )
        return {str(q): fused.get(str(q), []) for q in queries}

    def search_one(self, query: str, k: int = 10) -> list[tuple[str, float]]:
        return self.search({"q": query}, k)["q"]
