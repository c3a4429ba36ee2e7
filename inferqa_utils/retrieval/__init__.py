"""Retrievers behind one interface: index a corpus, search queries → a TREC-style run."""

from .bm25 import BM25sRetriever, EmptyQueryError

__all__ = ["BM25sRetriever", "EmptyQueryError"]
