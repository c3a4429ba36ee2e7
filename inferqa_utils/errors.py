"""Error types with messages a researcher can act on."""

from __future__ import annotations

from pathlib import Path


class InferQAError(Exception):
    """Base class of the compendium's own errors."""


class DataFormatError(InferQAError, ValueError):
    """Malformed input data. Names the file, the record and the field."""

    def __init__(
        self,
        file: str | Path | None,
        problem: str,
        record: str | int | None = None,
        field: str | None = None,
    ) -> None:
        self.file = str(file) if file is not None else None
        self.record = record
        self.field = field
        self.problem = problem
        where = [f"file {self.file}" if self.file else "input"]
        if record is not None:
            where.append(f"record {record}")
        if field is not None:
            where.append(f"field {field!r}")
        super().__init__(f"{', '.join(where)}: {problem}")


class MissingInputError(InferQAError, FileNotFoundError):
    """An input produced by an earlier notebook is missing."""


class OfflineError(InferQAError, RuntimeError):
    """A hub resource was requested but no network is available."""
