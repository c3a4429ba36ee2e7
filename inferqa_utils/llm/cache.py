"""Persistent cache of generations and scores (SQLite, one row per call).

Key = sha256 of (model identity/checksum, full prompt, operation, decoding parameters). Every
result is committed as soon as it is produced, so an interrupted batch resumes where it
stopped and a re-run with unchanged inputs makes no model call.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def cache_key(model: str, prompt: Any, op: str, params: dict[str, Any]) -> str:
    blob = json.dumps({"model": model, "prompt": prompt, "op": op, "params": params}, sort_keys=True,
                      ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


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
            "CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, model TEXT, op TEXT, value TEXT)"
        )
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

    def put(self, key: str, value: Any, model: str = "", op: str = "") -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO cache (key, model, op, value) VALUES (?, ?, ?, ?)",
                             (key, model, op, json.dumps(value, ensure_ascii=False)))
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM cache").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
