"""Reference outputs: what a run's model calls returned, as one file another clone can check and reuse.

:func:`export` writes the rows of an LLM cache (:class:`~inferqa_utils.llm.cache.GenerationCache`)
that carry their request — the call's canonical JSON: model identity with its checksum, prompt,
operation, decoding parameters (:func:`~inferqa_utils.llm.cache.request_blob`) — as gzip-compressed
JSON lines sorted by key, one ``{"key", "model", "op", "request", "value"}`` per call, and beside
it ``<file>.manifest.json``: the file's sha256, its entry count per model and operation, and what
the caller adds (commit, date, machine, the host's LLM rates). Rows without a request (a cache
written before requests were stored) cannot be checked and are left out (counted in the manifest).

:func:`load` refuses, before anything is written, a file whose sha256 is not the manifest's
(corrupted, or another file than the manifest describes) and an entry whose key is not the sha256
of its request or whose model is not its request's, naming the file and the entry (its line).
:func:`install` adds the entries a cache does not hold yet; a later run then replays them: greedy
decoding with one llama.cpp build gives the same tokens on every host of a kind, and a prompt the
code changed has another key, so it misses and is computed.

    >>> from inferqa_utils.llm.cache import key_of, request_blob
    >>> r = request_blob("m@sha256:ab", [{"role": "user", "content": "hi"}], "chat", {"max_tokens": 4})
    >>> entry_problem({"key": key_of(r), "model": "m@sha256:ab", "op": "chat", "request": r, "value": "x"})
    ''
    >>> entry_problem({"key": "0" * 64, "model": "m@sha256:ab", "op": "chat", "request": r, "value": "x"})
    'its key is not the sha256 of its request'
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.atomic import write_bytes_atomic, write_text_atomic
from ..core.errors import DataFormatError
from .cache import GenerationCache, key_of

KIND = "inferqa-reference-outputs"
SCHEMA = 1
FIELDS = ("key", "model", "op", "request", "value")


def manifest_path(path: str | Path) -> Path:
    """``<file>.manifest.json`` beside the outputs file."""
    path = Path(path)
    return path.with_name(path.name + ".manifest.json")


def export(cache: GenerationCache, out: str | Path, about: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Write the cache's rows that carry a request to ``out`` (gzip JSON lines, sorted by key,
    byte-identical for identical rows) and its manifest; returns the manifest."""
    rows = cache.rows()
    kept = [r for r in rows if r[4]]
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz:
        for key, model, op, value, request in kept:
            line = json.dumps({"key": key, "model": model, "op": op, "request": request,
                               "value": json.loads(value)}, ensure_ascii=False, separators=(",", ":"))
            gz.write(line.encode("utf-8") + b"\n")
    data = buf.getvalue()
    out = write_bytes_atomic(out, data)
    manifest = {
        "kind": KIND, "schema": SCHEMA, "file": out.name, "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data), "entries": len(kept), "left_out_without_request": len(rows) - len(kept),
        "models": dict(sorted(Counter(r[1] for r in kept).items())),
        "ops": dict(sorted(Counter(r[2] for r in kept).items())),
        **dict(about or {}),
    }
    write_text_atomic(manifest_path(out), json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    return manifest


def entry_problem(entry: Mapping[str, Any]) -> str:
    """Why an entry cannot be trusted (``""`` when it can): a missing field, a key that is not the
    sha256 of the request, a model or operation that is not the request's."""
    missing = [f for f in FIELDS if f not in entry]
    if missing:
        return f"no field {missing[0]!r}"
    if not isinstance(entry["request"], str) or key_of(entry["request"]) != entry["key"]:
        return "its key is not the sha256 of its request"
    try:
        request = json.loads(entry["request"])
    except ValueError:
        return "its request is not JSON"
    if request.get("model") != entry["model"] or request.get("op") != entry["op"]:
        return "its model or operation is not its request's"
    return ""


def load(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The manifest and the entries of an outputs file, every check of the module docstring passed
    (:class:`~inferqa_utils.core.errors.DataFormatError` naming the file, the entry and the field
    otherwise)."""
    path = Path(path)
    mpath = manifest_path(path)
    try:
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataFormatError(mpath, f"cannot read the manifest of {path.name} ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("kind") != KIND or manifest.get("schema") != SCHEMA:
        raise DataFormatError(mpath, f"not a manifest of reference outputs (kind {KIND!r}, schema {SCHEMA})")
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != manifest.get("sha256"):
        raise DataFormatError(path, f"sha256 {digest} is not the manifest's {manifest.get('sha256')}: "
                                    "the file is corrupted or is not the one the manifest describes",
                              field="sha256")
    try:
        lines = gzip.decompress(data).decode("utf-8").splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise DataFormatError(path, f"not gzip-compressed JSON lines ({exc})") from None
    entries = []
    for n, line in enumerate(lines, 1):
        try:
            entry = json.loads(line)
        except ValueError as exc:
            raise DataFormatError(path, f"not JSON ({exc})", record=f"line {n}") from None
        problem = entry_problem(entry) if isinstance(entry, dict) else "not an object"
        if problem:
            raise DataFormatError(path, problem, record=f"line {n}", field="key")
        entries.append(entry)
    if len(entries) != manifest.get("entries"):
        raise DataFormatError(path, f"{len(entries)} entries, the manifest says {manifest.get('entries')}",
                              field="entries")
    return manifest, entries


def install(path: str | Path, cache: GenerationCache) -> dict[str, int]:
    """Add the outputs file's entries the cache does not hold (all checked first, :func:`load`);
    returns ``{"entries", "added", "present"}``."""
    _manifest, entries = load(path)
    added = cache.put_many((e["key"], e["model"], e["op"], json.dumps(e["value"], ensure_ascii=False),
                            e["request"]) for e in entries)
    return {"entries": len(entries), "added": added, "present": len(entries) - added}
