"""Reading JSON/JSONL files record by record, with errors that name file, record and field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import DataFormatError


def read_json_records(path: str | Path) -> list[Any]:
    """Records of a JSON list file or a JSONL file (one object per line).

    Truncated or otherwise invalid JSON raises :class:`DataFormatError` with the position.
    """
    path = Path(path)
    if not path.exists():
        raise DataFormatError(path, "file does not exist")
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    if not stripped:
        raise DataFormatError(path, "file is empty")
    if stripped[0] == "[":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise DataFormatError(
                path, f"invalid JSON (truncated or corrupted?) at line {e.lineno}, column {e.colno}: {e.msg}"
            ) from None
        return data
    if stripped[0] == "{":
        # JSONL, or a single JSON object holding a list under a key
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            return list(_read_jsonl(path, text))
        for key in ("data", "records", "questions"):
            if isinstance(obj, dict) and isinstance(obj.get(key), list):
                return obj[key]
        return [obj]
    raise DataFormatError(path, "expected a JSON list or JSON lines, found neither")


def _read_jsonl(path: Path, text: str) -> Iterator[Any]:
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError as e:
            raise DataFormatError(path, f"invalid JSON on line {lineno}: {e.msg}", record=f"line {lineno}") from None


def iter_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """Stream a JSONL file; each line must be a JSON object."""
    path = Path(path)
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise DataFormatError(path, f"invalid JSON: {e.msg}", record=f"line {lineno}") from None
            if not isinstance(obj, dict):
                raise DataFormatError(path, "expected a JSON object", record=f"line {lineno}")
            yield obj


class RecordReader:
    """Typed access to one record's fields; every failure names file, record and field."""

    def __init__(self, file: str | Path, record: Any, label: str | int) -> None:
        self.file = str(file)
        self.label = label
        if not isinstance(record, dict):
            self.fail(f"expected a JSON object, got {type(record).__name__}")
        self.record: dict[str, Any] = record

    def fail(self, problem: str, field: str | None = None) -> None:
        raise DataFormatError(self.file, problem, record=self.label, field=field)

    def get(self, key: str, types: type | tuple[type, ...], required: bool = True, default: Any = None,
            obj: dict[str, Any] | None = None, path: str | None = None) -> Any:
        src = self.record if obj is None else obj
        name = path or key
        if key not in src or src[key] is None:
            if required:
                self.fail("missing required field", name)
            return default
        val = src[key]
        if not isinstance(val, types) or (isinstance(val, bool) and bool not in _as_tuple(types)):
            want = " or ".join(t.__name__ for t in _as_tuple(types))
            self.fail(f"expected {want}, got {type(val).__name__} ({_short(val)})", name)
        return val

    def str_(self, key: str, required: bool = True, obj: dict[str, Any] | None = None, path: str | None = None,
             nonempty: bool = True) -> str | None:
        val = self.get(key, str, required, obj=obj, path=path)
        if val is not None and nonempty and not val.strip() and required:
            self.fail("must not be empty", path or key)
        return val

    def str_list(self, key: str, required: bool = True, nonempty: bool = False, obj: dict[str, Any] | None = None,
                 path: str | None = None) -> list[str]:
        val = self.get(key, list, required, default=[], obj=obj, path=path)
        name = path or key
        if nonempty and not val:
            self.fail("list is empty", name)
        for i, item in enumerate(val):
            if not isinstance(item, str):
                self.fail(f"expected a string, got {type(item).__name__} ({_short(item)})", f"{name}[{i}]")
        return list(val)


def _as_tuple(t: type | tuple[type, ...]) -> tuple[type, ...]:
    return t if isinstance(t, tuple) else (t,)


def _short(v: Any, n: int = 40) -> str:
    s = repr(v)
    return s if len(s) <= n else s[: n - 3] + "..."


def iter_records(path: str | Path, id_field: str) -> Iterator[tuple[RecordReader, str]]:
    """``(reader, id)`` per record of a JSON list/JSONL file; records are labelled ``"i (id)"`` in
    errors, and a duplicate id raises naming both records."""
    records = read_json_records(path)
    if not isinstance(records, list):
        raise DataFormatError(path, "expected a JSON list of records")
    seen: dict[str, int] = {}
    for i, rec in enumerate(records):
        label = f"{i} ({rec.get(id_field)})" if isinstance(rec, dict) and isinstance(rec.get(id_field), str) else i
        r = RecordReader(path, rec, label)
        rid = r.str_(id_field)
        if rid in seen:
            raise DataFormatError(path, f"duplicate id {rid!r} (also record {seen[rid]})", record=i, field="id")
        seen[rid] = i
        yield r, rid
