"""Dense (bi-encoder) reranker: cosine similarity of query and passage embeddings.

The cheap stand-in for the cross-encoders of papers 001/002 (monoT5, Jina) when no LLM budget is
left (notebook 07's method reranker, ``dense:<embedder>``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..llm.embeddings import load_embedder
from .base import PairwiseScoreReranker

if TYPE_CHECKING:
    from ..llm.embeddings import Embedder


class DenseReranker(PairwiseScoreReranker):
    """Bi-encoder reranking: ``s(q, d) = cos(E(q), E(d))`` with a registry embedder (MiniLM, E5).

    The embedder's vectors are normalised, so the cosine is their inner product; vectors are
    cached on disk by the embedder. ``name`` is ``dense:<model>`` (part of a method run's stamp)."""

    def __init__(self, model: str = "e5-small", embedder: Embedder | None = None) -> None:
        if embedder is None:
            embedder = load_embedder(model)
        self.embedder = embedder
        self.name = f"dense:{model}"

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        import numpy as np

        if not pairs:
            return []
        qs = self.embedder.encode([q for q, _ in pairs], role="query", progress=False)
        ds = self.embedder.encode([d for _, d in pairs], role="passage", progress=False)
        return [float(x) for x in np.einsum("ij,ij->i", qs, ds)]
