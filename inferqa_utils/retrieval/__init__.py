"""Retrievers behind one interface: index a corpus, search queries → a TREC-style run.

``make_retriever(name, corpus)`` builds any of :data:`RETRIEVERS` (BM25 via Pyserini/Lucene or
bm25s, MiniLM and E5 dense retrieval with faiss, hybrid interleaving, reciprocal-rank fusion) or
a locally registered fine-tuned bi-encoder; ``retrieve(...)`` also caches the TREC run on disk.
Heavy libraries load on first use.
"""

from ..lexical import BM25sRetriever, EmptyQueryError
from .dense import DenseRetriever
from .fusion import FusedRetriever, interleave, reciprocal_rank_fusion
from .java import JavaRuntimeError, ensure_java
from .pyserini_bm25 import PyseriniBM25Retriever, check_unique_ids
from .registry import RETRIEVERS, make_retriever, retrieve, retriever_names

__all__ = ["RETRIEVERS", "BM25sRetriever", "DenseRetriever", "EmptyQueryError", "FusedRetriever", "JavaRuntimeError",
           "PyseriniBM25Retriever", "check_unique_ids", "ensure_java", "interleave", "make_retriever",
           "reciprocal_rank_fusion", "retrieve", "retriever_names"]
