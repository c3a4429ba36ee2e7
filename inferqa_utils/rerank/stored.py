"""Reranked runs stored as artifacts (:mod:`inferqa_utils.core.artifacts`): the one key of a reranked
run, whichever notebook writes it (LLM rerankers in notebook 03, fine-tuned cross-encoders in
notebook 05), and its cost in seconds per query as the reranking tables show it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core import artifacts
from ..core.fingerprint import corpus_sha256, queries_sha256, ranking_sha256
from ..ir.trec import Run

#: schema of a reranked run's key (:func:`rerank_key`); bump it when a run's content or meaning changes
RERANK_SCHEMA = 2


def rerank_key(reranker: str, identity: str | None, queries: Mapping[str, str], first: Run,
               corpus: Mapping[str, str], depth: int | None, **params: Any) -> dict[str, Any]:
    """The key of a reranked run (:func:`inferqa_utils.core.artifacts.key`): kind ``reranked-run``,
    :data:`RERANK_SCHEMA`, sha256 of the corpus, the questions and the first stage's order (not its
    scores, which lose digits in a TREC file), and the reranker's name, model identity, ``depth``
    and other ``params`` (the listwise window)."""
    return artifacts.key("reranked-run", RERANK_SCHEMA,
                         inputs={"corpus": corpus_sha256(corpus), "queries": queries_sha256(queries),
                                 "first_stage": ranking_sha256(first)},
                         params={"reranker": reranker, "identity": identity, "depth": depth, **params})


def per_query(cost: artifacts.Cost) -> float | None:
    """Seconds per query of a cost record as the reranking tables show it (3 decimals; ``None``: unknown)."""
    spq = cost.seconds_per_query
    return None if spq is None else round(spq, 3)
