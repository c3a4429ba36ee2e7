"""Retrievers behind one interface: index a corpus, search queries → a TREC-style run."""

from .bm25 import BM25sRetriever, EmptyQueryError
from .java import JavaRuntimeError, ensure_java
from .pyserini_bm25 import PyseriniBM25Retriever, check_unique_ids

__all__ = ["BM25sRetriever", "EmptyQueryError", "JavaRuntimeError", "PyseriniBM25Retriever", "check_unique_ids",
           "ensure_java"]
