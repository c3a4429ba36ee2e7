"""Rerankers (paper 000 §5.3): one interface, ``rerank(queries, run, corpus, depth) -> Run``.

* :mod:`.registry` — every reranker by name (:data:`RERANKERS`, :func:`make_reranker`,
  :func:`reranker_spec`: which class, whether it needs an LLM; :func:`register_reranker`; a
  researcher's own by entry point or ``module:function``, :mod:`inferqa_utils.core.plugins`);
* ``pointwise`` — :class:`PointwiseLLMReranker`, monoT5-style yes/no log-odds with an LLM;
* ``upr`` — :class:`QueryLikelihoodReranker`, mean log P(question | passage);
* ``listwise`` — :class:`ListwiseLLMReranker`, RankGPT sliding windows;
* ``cross-encoder`` / a registered cross-encoder name such as ``FT-CrossEncoder`` —
  :class:`CrossEncoderReranker` (the fine-tuned reranker of paper 000 §5.2–5.3, A.2–A.3, trained elsewhere);
* ``dense:<embedder>`` — :class:`DenseReranker`, bi-encoder cosine (notebook 07's cheap reranker).

The oracle-reranker setting (paper 000 §5.3) uses :func:`oracle_candidates` / :func:`oracle_run` as the
first stage and ``rerank(..., depth=None)``.
"""

from __future__ import annotations

from .base import PairwiseScoreReranker, Reranker, oracle_candidates, oracle_run
from .cross_encoder import CrossEncoderReranker, resolve_cross_encoder
from .dense import DenseReranker
from .llm_rerankers import (
    ListwiseLLMReranker,
    PointwiseLLMReranker,
    QueryLikelihoodReranker,
    listwise_messages,
    parse_permutation,
    pointwise_messages,
    sliding_windows,
    upr_messages,
)
from .registry import (
    RERANKERS,
    RerankerSpec,
    make_reranker,
    needs_llm,
    register_reranker,
    reranker_identity,
    reranker_names,
    reranker_spec,
)

__all__ = [
    "RERANKERS", "CrossEncoderReranker", "DenseReranker", "ListwiseLLMReranker", "PairwiseScoreReranker",
    "PointwiseLLMReranker", "QueryLikelihoodReranker", "Reranker", "RerankerSpec", "listwise_messages",
    "make_reranker", "needs_llm", "oracle_candidates", "oracle_run", "parse_permutation",
    "pointwise_messages", "register_reranker", "reranker_identity", "reranker_names", "reranker_spec",
    "resolve_cross_encoder", "sliding_windows", "upr_messages",
]
