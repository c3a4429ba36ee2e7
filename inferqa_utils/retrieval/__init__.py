"""Retrievers behind one interface: index a corpus, search queries → a TREC-style run.

``make_retriever(name, corpus)`` builds any of :data:`RETRIEVERS` (BM25 via Pyserini/Lucene or
bm25s, MiniLM and E5 dense retrieval with faiss, hybrid interleaving, reciprocal-rank fusion) or
a locally registered fine-tuned bi-encoder; ``register_retriever(...)`` adds a name;
``retrieve(...)`` also caches the TREC run on disk, keyed by the retriever's identity. Heavy
libraries load on first use.
"""

from ..ir.lexical import BM25sRetriever, EmptyQueryError
from .dense import DenseRetriever
from .fusion import FusedRetriever, identity_of, interleave, reciprocal_rank_fusion
from .java import JavaRuntimeError, ensure_java
from .pyserini_bm25 import PyseriniBM25Retriever, check_unique_ids
from .registry import (
    RETRIEVERS,
    RetrieverSpec,
    make_retriever,
    register_retriever,
    retrieve,
    retriever_identity,
    retriever_names,
    retriever_spec,
)

__all__ = [
    "RETRIEVERS", "BM25sRetriever", "DenseRetriever", "EmptyQueryError", "FusedRetriever", "JavaRuntimeError",
    "PyseriniBM25Retriever", "RetrieverSpec", "check_unique_ids", "ensure_java", "identity_of", "interleave",
    "make_retriever", "reciprocal_rank_fusion", "register_retriever", "retrieve", "retriever_identity",
    "retriever_names", "retriever_spec",
]
