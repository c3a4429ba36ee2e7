"""Reading JSON/JSONL files record by record, with errors that name file, record and field."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

from ..core.errors import DataFormatError
from ..core.textio import iter_lines, read_text


def read_json_records(path: str | Path) -> list[Any]:
    """Records of a JSON list file or a JSONL file (one object per line).

    Truncated or otherwise invalid JSON raises :class:`DataFormatError` with the position; so does
    a file that is not UTF-8 (a leading byte-order mark is dropped).
    """
    path = Path(path)
    if not path.exists():
        raise DataFormatError(path, "file does not exist")
    text = read_text(path)
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
            raise DataFormatError(
                path, f"invalid JSON on line {lineno}: {e.msg}", record=f"line {lineno}"
            ) from None


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Stream a JSONL file as ``(line number, object)``; each non-blank line must be a JSON object."""
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataFormatError(path, f"invalid JSON: {e.msg}", record=f"line {lineno}") from None
        if not isinstance(obj, dict):
            raise DataFormatError(path, "expected a JSON object", record=f"line {lineno}")
        yield lineno, obj


class RecordReader:
    """Typed access to one record's fields; every failure names file, record and field."""

    def __init__(self, file: str | Path, record: Any, label: str | int) -> None:
        self.file = str(file)
        self.label = label
        if not isinstance(record, dict):
            self.fail(f"expected a JSON object, got {type(record).__name__}")
        self.record: dict[str, Any] = record

    def fail(self, problem: str, field: str | None = None) -> NoReturn:
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

    def str_(
        self,
        key: str,
        required: bool = True,
        obj: dict[str, Any] | None = None,
        path: str | None = None,
        nonempty: bool = True,
    ) -> str | None:
        val = self.get(key, str, required, obj=obj, path=path)
        if val is not None and nonempty and not val.strip() and required:
            self.fail("must not be empty", path or key)
        return val

    def str_list(
        self,
        key: str,
        required: bool = True,
        nonempty: bool = False,
        obj: dict[str, Any] | None = None,
        path: str | None = None,
    ) -> list[str]:
        val = self.get(key, list, required, default=[], obj=obj, path=path)
        name = path or key
        if nonempty and not val:
            self.fail("list is empty", name)
        for i, item in enumerate(val):
            if not isinstance(item, str):
                self.fail(f"expected a string, got {type(item).__name__} ({_short(item)})", f"{name}[{i}]")
        return list(val)

    def number(self, val: Any, field: str, lo: float | None = None, hi: float | None = None) -> float:
        """``val`` as a float: a JSON number (not a bool), not NaN or infinite, within ``[lo, hi]``."""
        if not isinstance(val, int | float) or isinstance(val, bool):
            self.fail(f"expected a number, got {type(val).__name__} ({_short(val)})", field)
        if not math.isfinite(val):
            self.fail(f"expected a finite number, got {val}", field)
        if (lo is not None and val < lo) or (hi is not None and val > hi):
            self.fail(f"{val} is outside [{lo}, {hi}]", field)
        return float(val)

    def fraction(self, val: Any, field: str) -> float:
        """A score in [0, 1] such as a convergence (:meth:`number`)."""
        return self.number(val, field, 0.0, 1.0)

    def votes(self, val: Any, field: str) -> dict[str, int]:
        """A judge's ``{candidate: 0 or 1}``; a vote of 0.7, 2, NaN, ``true`` or ``"1"`` is refused."""
        if not isinstance(val, dict):
            self.fail(f"expected {{candidate: 0 or 1}}, got {type(val).__name__} ({_short(val)})", field)
        out: dict[str, int] = {}
        for k, v in val.items():
            if isinstance(v, bool) or not isinstance(v, int | float) or v not in (0, 1):
                self.fail(f"vote for {k!r} must be 0 or 1, got {_short(v)}", f"{field}.{k}")
            out[str(k)] = int(v)
        return out

    def int_(self, val: Any, field: str) -> int:
        """An integer given as a JSON integer or a string of digits (``2``, ``"2"``); ``1.5``,
        ``"1.5"``, ``2.0`` and ``true`` are refused."""
        if isinstance(val, int) and not isinstance(val, bool):
            return val
        if isinstance(val, str) and _INTEGER.fullmatch(val):
            return int(val)
        self.fail(f"expected an integer, got {_short(val)}", field)


_INTEGER = re.compile(r"\s*[-+]?\d+\s*")


def _as_tuple(t: type | tuple[type, ...]) -> tuple[type, ...]:
    return t if isinstance(t, tuple) else (t,)


def _short(v: Any, n: int = 40) -> str:
    s = repr(v)
    return s if len(s) <= n else s[: n - 3] + "..."


def iter_records(
    path: str | Path, id_field: str, allow_empty: bool = False
) -> Iterator[tuple[RecordReader, str]]:
    """``(reader, id)`` per record of a JSON list/JSONL file; records are labelled ``"i (id)"`` in
    errors. Refused: a duplicate id (naming both records), an id holding whitespace (TREC files
    split on it) and, unless ``allow_empty``, a file without records."""
    records = read_json_records(path)
    if not isinstance(records, list):
        raise DataFormatError(path, "expected a JSON list of records")
    if not records and not allow_empty:
        raise DataFormatError(path, "the file holds no record (an empty list): nothing to load")
    seen: dict[str, int] = {}
    for i, rec in enumerate(records):
        label = (
            f"{i} ({rec.get(id_field)})"
            if isinstance(rec, dict) and isinstance(rec.get(id_field), str)
            else i
        )
        r = RecordReader(path, rec, label)
        rid = r.str_(id_field)
        if any(c.isspace() for c in rid):
            r.fail(f"id {rid!r} contains whitespace (TREC qrels and runs split on it)", id_field)
        if rid in seen:
            raise DataFormatError(
                path, f"duplicate id {rid!r} (also record {seen[rid]})", record=i, field="id"
            )
        seen[rid] = i
        yield r, rid
