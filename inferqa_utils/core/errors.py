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


class UnknownNameError(InferQAError, KeyError):
    """A name that is not defined (a question id of a built dataset, …). A :class:`KeyError`
    whose text is its message (a plain ``KeyError`` prints its message in quotes)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class UnknownProfileError(UnknownNameError):
    """A profile name that ``inferqa_utils/core/profiles.yaml`` does not define."""


class ParameterError(InferQAError, ValueError):
    """A ``-p NAME=VALUE`` override that no notebook of the run declares, or whose value is not of
    the type the notebooks' defaults and the profiles give the parameter."""


class PluginError(InferQAError, ValueError):
    """A component spec (retriever, reranker, reader or method) that does not resolve: an unknown
    name, a ``module:function`` whose module, attribute or signature is wrong, an entry point that
    fails to load. Its message is one line naming the spec, the kind and the form expected."""


class NotebookError(InferQAError):
    """A notebook of a run raised. Carries the exception's type name and message as the kernel
    reported them (``ename``, ``evalue``), the notebook and its executed copy (the full traceback);
    ``project_error`` says whether the exception is one of the compendium's own errors
    (:data:`PROJECT_ERRORS`)."""

    def __init__(self, notebook: str, executed: str | Path, ename: str, evalue: str) -> None:
        self.notebook = notebook
        self.executed = str(executed)
        self.ename = ename
        self.evalue = " ".join(line.strip() for line in str(evalue).strip().splitlines() if line.strip())
        self.project_error = ename in PROJECT_ERRORS
        super().__init__(f"{notebook}: {ename}: {self.evalue}; full traceback in {self.executed}")


#: class names of the compendium's own errors — :class:`InferQAError` and its subclasses across the
#: package — recognised by name when a kernel reports one (tests/test_cli.py keeps the set complete)
PROJECT_ERRORS = frozenset(
    {
        "InferQAError", "DataFormatError", "MissingInputError", "OfflineError", "UnknownNameError",
        "UnknownProfileError", "ParameterError", "NotebookError", "ServerError", "JavaRuntimeError",
        "ReleaseError", "BuildConflictError", "EmptyQueryError", "ModelError", "PluginError",
    }
)
