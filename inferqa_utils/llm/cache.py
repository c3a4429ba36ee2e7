"""Persistent cache of generations and scores (SQLite, one row per call).

Key = sha256 of (model identity/checksum, full prompt, operation, decoding parameters), the
call's canonical JSON (:func:`request_blob`), which is stored beside the result so that a
result can be recomputed and its key checked (:mod:`inferqa_utils.llm.reference_outputs`). Every
result is committed as soon as it is produced, so an interrupted batch resumes where it
stopped and a re-run with unchanged inputs makes no model call.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


def request_blob(model: str, prompt: Any, op: str, params: dict[str, Any]) -> str:
    """The call as canonical JSON: the model's identity (with its checksum), the full prompt, the
    operation and the decoding parameters — what :func:`cache_key` hashes and the cache stores
    beside the result, so a stored result can be recomputed and its key checked."""
    return json.dumps({"model": model, "prompt": prompt, "op": op, "params": params}, sort_keys=True,
                      ensure_ascii=False, separators=(",", ":"))


def key_of(request: str) -> str:
    """sha256 of a call's :func:`request_blob` (hex): the key of its result."""
    return hashlib.sha256(request.encode("utf-8")).hexdigest()


def cache_key(model: str, prompt: Any, op: str, params: dict[str, Any]) -> str:
    return key_of(request_blob(model, prompt, op, params))


class GenerationCache:
    """A small key → JSON value store on disk."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS cache "
            "(key TEXT PRIMARY KEY, model TEXT, op TEXT, value TEXT, request TEXT)"
        )
        if "request" not in {row[1] for row in self._db.execute("PRAGMA table_info(cache)")}:
            self._db.execute("ALTER TABLE cache ADD COLUMN request TEXT")  # a cache written before requests
        self._db.commit()

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        keys = list(keys)
        out: dict[str, Any] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                chunk = keys[i: i + 500]
                q = f"SELECT key, value FROM cache WHERE key IN ({','.join('?' * len(chunk))})"
                for k, v in self._db.execute(q, chunk):
                    out[k] = json.loads(v)
        return out

    def get(self, key: str) -> Any | None:
        return self.get_many([key]).get(key)

    def put(self, key: str, value: Any, model: str = "", op: str = "", request: str | None = None) -> None:
        """Store ``value`` under ``key``, with the call's :func:`request_blob` when given."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO cache (key, model, op, value, request) VALUES (?, ?, ?, ?, ?)",
                (key, model, op, json.dumps(value, ensure_ascii=False), request),
            )
            self._db.commit()

    def put_many(self, rows: Iterable[tuple[str, str, str, str, str | None]]) -> int:
        """Insert ``(key, model, op, value as JSON, request)`` rows whose key the cache does not hold
        yet, in one transaction; returns how many were added."""
        with self._lock:
            before = self._db.total_changes
            self._db.executemany(
                "INSERT OR IGNORE INTO cache (key, model, op, value, request) VALUES (?, ?, ?, ?, ?)", rows
            )
            self._db.commit()
            return self._db.total_changes - before

    def fill_requests(self, requests: Mapping[str, str]) -> None:
        """Store the request of each ``key → request`` whose row holds none yet (a result cached
        before requests were stored gains it when it is next read)."""
        with self._lock:
            self._db.executemany("UPDATE cache SET request = ? WHERE key = ? AND request IS NULL",
                                 [(r, k) for k, r in requests.items()])
            self._db.commit()

    def rows(self) -> Iterable[tuple[str, str, str, str, str | None]]:
        """Every stored ``(key, model, op, value as JSON, request)``, by key."""
        with self._lock:
            return list(self._db.execute("SELECT key, model, op, value, request FROM cache ORDER BY key"))

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM cache").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
