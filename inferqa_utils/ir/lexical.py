"""BM25 with bm25s (Lucene variant, k1 = 0.9, b = 0.4 — Pyserini's defaults)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.errors import InferQAError
from ..core.fingerprint import dist_version
from .trec import Run


class EmptyQueryError(InferQAError, ValueError):
    """A query has no searchable term (empty, or stopwords only)."""


def bm25s_identity(k1: float = 0.9, b: float = 0.4, stopwords: str = "en") -> str:
    """What besides corpus, queries and ``k`` decides a :class:`BM25sRetriever`'s run: the bm25s
    version, its Lucene variant, k1, b, ties broken by corpus order (:func:`top_k_stable`) and the
    stopword list when it is not English."""
    words = "" if stopwords == "en" else f" stopwords={stopwords}"
    return f"bm25s {dist_version('bm25s')} lucene k1={k1:g} b={b:g} ties=corpus-order{words}"


def top_k_stable(scores: Any, k: int) -> list[int]:
    """Indices of the ``k`` highest ``scores``, by score descending and, among equal scores, by index
    ascending (corpus order, as Lucene breaks ties by internal document id). bm25s's own top-k
    leaves the order of tied passages to its selection algorithm, and permuted-hint passages tie
    often (passages made of the same hints in another order), and their order moves nDCG@10."""
    import numpy as np

    scores = np.asarray(scores)
    n = len(scores)
    k = min(int(k), n)
    if k <= 0:
        return []
    cand = np.arange(n) if k == n else np.flatnonzero(scores >= np.partition(scores, n - k)[n - k])
    order = cand[np.lexsort((cand, -scores[cand]))]
    return [int(i) for i in order[:k]]


class BM25sRetriever:
    """BM25 (bm25s, Lucene variant) over ``corpus`` (passage id → text), in memory."""

    name = "bm25s"

    def __init__(
        self, corpus: Mapping[str, str], k1: float = 0.9, b: float = 0.4, stopwords: str = "en"
    ) -> None:
        import bm25s

        if not corpus:
            raise ValueError("cannot index an empty corpus")
        self._bm25s = bm25s
        self.doc_ids = list(corpus)
        self.k1, self.b = float(k1), float(b)
        self.stopwords = stopwords
        tokens = bm25s.tokenize([corpus[d] for d in self.doc_ids], stopwords=stopwords, show_progress=False)
        self.model = bm25s.BM25(method="lucene", k1=k1, b=b)
        self.model.index(tokens, show_progress=False)

    @property
    def identity(self) -> str:
        """:func:`bm25s_identity` of this retriever's parameters."""
        return bm25s_identity(self.k1, self.b, self.stopwords)

    def search(self, queries: Mapping[str, str], k: int = 100) -> Run:
        qids = list(queries)
        toks = self._bm25s.tokenize([queries[q] for q in qids], stopwords=self.stopwords, return_ids=False,
                                    show_progress=False)
        vocab = self.model.vocab_dict
        run: Run = {}
        for qid, t in zip(qids, toks, strict=True):
            terms = [w for w in t if w in vocab]
            if not t:
                raise EmptyQueryError(f"query {qid!r} ({queries[qid]!r}) has no searchable term "
                                      "(empty or stopwords only)")
            if not terms:
                run[qid] = []
                continue
            scores = self.model.get_scores(terms)
            run[qid] = [(self.doc_ids[i], float(scores[i])) for i in top_k_stable(scores, k) if scores[i] > 0]
        return run

    def search_one(self, query: str, k: int = 10) -> list[tuple[str, float]]:
        return self.search({"q": query}, k)["q"]
