"""The artifact store: one rule for "is this cached file still valid", one way to write it.

An artifact is a file (a TREC run, say) with a sidecar ``<file>.stamp.json`` holding its *key* —
the fingerprints (:mod:`inferqa_utils.fingerprint`) and parameters its content depends on — plus
the *cost* measured when it was computed and when it was written::

    {<key fields>..., "cost": {"seconds": …, …}, "file": {"size": …, "mtime_ns": …}, "written_at": "…"}

* :func:`valid` — the stamp, when the file (and any companion files) exist and every key field
  equals the stamp's (optionally: the file still has the size and mtime it was written with);
  ``None`` otherwise (then recompute).
* :func:`write` — atomic: the stamp is removed first, every file is written to a temporary name
  and renamed, and the stamp is written last, so an interrupted write leaves no valid-looking
  artifact and a re-run resumes by recomputing only what is missing.

Used by every cached run: retrieval runs (:func:`inferqa_utils.retrieval.registry.retrieve`), LLM
reranker runs (:func:`inferqa_utils.rerank.experiments.rerank_all`), fine-tuned reranker runs
(:func:`inferqa_utils.finetune.experiments.cached_rerank`) and the methods of notebook 07
(:func:`inferqa_utils.beyond.common.cached_method`) and the GGUF files joined from packaged
parts (:func:`inferqa_utils.models.fetch`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

STAMP_SUFFIX = ".stamp.json"
Writer = Callable[[Path], None]


def stamp_path(path: str | Path) -> Path:
    """The sidecar stamp of an artifact: ``<file>.stamp.json``."""
    path = Path(path)
    return path.with_name(path.name + STAMP_SUFFIX)


def normalise(key: Mapping[str, Any]) -> dict[str, Any]:
    """The key as it reads back from JSON (tuples → lists, paths → strings)."""
    return json.loads(json.dumps(dict(key), default=str, ensure_ascii=False))


def read_stamp(path: str | Path) -> dict[str, Any] | None:
    try:
        data = json.loads(stamp_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def valid(path: str | Path, key: Mapping[str, Any], *companions: str | Path, check_file: bool = False
          ) -> dict[str, Any] | None:
    """The stamp of ``path`` when it and every companion file exist and each key field matches;
    with ``check_file`` also when the file still has the size and mtime it was written with (for
    files that are rebuilt silently, e.g. joined model weights; a hand-edited run is instead
    reported by its reader, not overwritten)."""
    if not Path(path).is_file() or not all(Path(c).is_file() for c in companions):
        return None
    stamp = read_stamp(path)
    if stamp is None:
        return None
    want = normalise(key)
    if not all(stamp.get(k) == v for k, v in want.items()):
        return None
    seen = stamp.get("file")
    if check_file and isinstance(seen, dict) and seen != _stat(Path(path)):
        return None  # replaced, truncated or touched since it was written
    return stamp


def _stat(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def cost(stamp: Mapping[str, Any] | None) -> dict[str, Any]:
    """The cost recorded in a stamp (``{}`` when none)."""
    c = (stamp or {}).get("cost")
    return dict(c) if isinstance(c, dict) else {}


def write(path: str | Path, writer: Writer, key: Mapping[str, Any], cost: Mapping[str, Any] | None = None,
          companions: Mapping[str | Path, Writer] | None = None) -> None:
    """Write ``path`` (``writer(tmp_path)``) and its companions atomically, then the stamp."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sp = stamp_path(path)
    sp.unlink(missing_ok=True)  # no valid-looking stamp while the files are being replaced
    tag = f"tmp-{os.getpid()}"
    files = {path: writer, **{Path(p): w for p, w in (companions or {}).items()}}
    tmps = {p: p.with_name(f"{p.name}.{tag}") for p in files}
    tmp_stamp = sp.with_name(f"{sp.name}.{tag}")
    try:
        for p, w in files.items():
            w(tmps[p])
        for p in files:
            tmps[p].replace(p)
        stamp = {**normalise(key), "cost": normalise(cost or {}), "file": _stat(path),
                 "written_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        tmp_stamp.write_text(json.dumps(stamp, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        tmp_stamp.replace(sp)
    finally:
        for t in [*tmps.values(), tmp_stamp]:
            t.unlink(missing_ok=True)
