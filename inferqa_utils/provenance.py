"""Which run wrote each results table and figure: ``results/provenance.json``.

The notebooks write their tables (``results/``) and figures (``figures/``) under stable names, and
several runs write the same name (every profile writes ``results/00_quickstart_answers.csv``).
The runner (:func:`inferqa_utils.runner.run_notebooks`) takes a :func:`snapshot` of both folders
before each notebook and, after it, :func:`record` s every file the notebook added or changed with
the run's identity (:func:`run_identity`)::

    {"schema": 1,
     "results": {"00_quickstart_answers.csv": {"run_id": "20261124-080321-default", "profile": "default",
                 "notebook": "00_quickstart.ipynb", "dataset": "…", "dataset_fingerprint": "…",
                 "git": {"commit": "…", "dirty": false}, "written": "2026-11-24T08:04:01+00:00",
                 "sha256": "…"}, …},
     "figures": {"…png": {…}}}

A record is replaced when a later run writes the file again; records of files that no longer
exist are dropped; records of other files are kept. The file is rewritten atomically under a lock
(:func:`record`), so two runners finishing notebooks at once both land. A run's files are the ones
whose size, mtime or inode changed while its notebook ran: a file another process writes into the
same folders meanwhile is recorded as this run's (run two profiles in separate clones, or one
after the other).

:func:`check_table` says whether a table was written by a given run (``check`` and the results
page refuse numbers read from a table another run wrote).
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .atomic import write_text_atomic
from .config import PATHS
from .errors import DataFormatError
from .fingerprint import sha256_file

#: the provenance file's name, in the results folder
PROVENANCE_FILE = "provenance.json"
SCHEMA = 1
#: the environment variable naming the run to the notebooks' kernels (the run folder's name)
RUN_ID_ENV = "INFERQA_RUN_ID"

#: (mtime_ns, size, inode) of each file, by folder key and name
Snapshot = dict[tuple[str, str], tuple[int, int, int]]


def recorded_folders() -> dict[str, Path]:
    """The folders whose files are recorded, by their key in the provenance file."""
    return {"results": PATHS.results, "figures": PATHS.figures}


def provenance_path(results: Path | None = None) -> Path:
    """``<results folder>/provenance.json`` (default ``results/``)."""
    return (results or PATHS.results) / PROVENANCE_FILE


def _recordable(path: Path) -> bool:
    return path.is_file() and not path.name.startswith(".") and path.name != PROVENANCE_FILE


def _files(folder: Path) -> Iterator[tuple[str, Path]]:
    if folder.is_dir():
        for p in sorted(folder.rglob("*")):
            if _recordable(p):
                yield p.relative_to(folder).as_posix(), p


def snapshot(folders: Mapping[str, Path] | None = None) -> Snapshot:
    """The signature (mtime, size, inode) of every recordable file of ``folders`` (default
    :func:`recorded_folders`; hidden files and the provenance file left out)."""
    out: Snapshot = {}
    for key, folder in (folders or recorded_folders()).items():
        for name, p in _files(folder):
            st = p.stat()
            out[(key, name)] = (st.st_mtime_ns, st.st_size, st.st_ino)
    return out


def changed_since(before: Snapshot, folders: Mapping[str, Path] | None = None) -> list[tuple[str, str]]:
    """``(folder key, name)`` of the files added or changed since the ``before`` snapshot, sorted."""
    now = snapshot(folders)
    return sorted(k for k, sig in now.items() if before.get(k) != sig)


def run_identity(run_id: str, profile: str, notebook: str, dataset: str | None,
                 dataset_fingerprint: str | None, git: Mapping[str, Any]) -> dict[str, Any]:
    """What a record says about the run that wrote a file (module docstring)."""
    return {"run_id": run_id, "profile": profile, "notebook": notebook, "dataset": dataset,
            "dataset_fingerprint": dataset_fingerprint, "git": dict(git)}


def load(results: Path | None = None) -> dict[str, Any]:
    """The provenance file of a results folder (``{"schema", "results", "figures"}``; empty maps
    when there is none). A file that is not this layout is a :class:`DataFormatError` naming it."""
    path = provenance_path(results)
    if not path.exists():
        return {"schema": SCHEMA, "results": {}, "figures": {}}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataFormatError(
            path, f"cannot read the run records ({exc}); delete the file and rerun the notebooks"
        ) from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not all(
            isinstance(data.get(k), dict) for k in ("results", "figures")):
        raise DataFormatError(
            path,
            f"not a schema-{SCHEMA} run record {{schema, results, figures}}; delete the "
            "file and rerun the notebooks",
            field="schema",
        )
    return data


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``<path>.lock`` (none where ``fcntl`` is missing)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not Linux/macOS
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f".{path.name}.lock"), "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def record(files: Sequence[tuple[str, str]], run: Mapping[str, Any],
           folders: Mapping[str, Path] | None = None, results: Path | None = None) -> Path:
    """Record ``files`` (``(folder key, name)``, e.g. from :func:`changed_since`) as written by
    ``run`` (:func:`run_identity`), each with its sha256 and the time; drop records of files that
    no longer exist; keep the others. Atomic, under a lock; returns the provenance file."""
    folders = folders or recorded_folders()
    path = provenance_path(results)
    written = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    with _locked(path):
        data = load(results)
        for key, name in files:
            data[key][name] = {**run, "written": written, "sha256": sha256_file(folders[key] / name)}
        for key, folder in folders.items():
            data[key] = {n: r for n, r in sorted(data[key].items()) if (folder / n).is_file()}
        write_text_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return path


def describe_run(run: Mapping[str, Any] | None) -> str:
    """``run 20261124-080321-default (profile default)``."""
    if not run:
        return "no run"
    return f"run {run.get('run_id')} (profile {run.get('profile')})"


def check_table(name: str, run: Mapping[str, Any] | None, results: Path | None = None,
                allow_unrecorded: bool = False) -> tuple[dict[str, Any] | None, str]:
    """Whether the table ``results/<name>`` was written by ``run`` (``{"run_id", "profile"}``, or
    ``None`` when no run is being checked): ``(its record or None, "")`` when it was, else
    ``(record, reason)``. Refused: a table another run wrote (the reason names the table and both
    runs), a table changed since its run wrote it, and a table with no record (unless
    ``allow_unrecorded``)."""
    rec = load(results)["results"].get(name)
    path = (results or PATHS.results) / name
    if rec is None:
        if allow_unrecorded:
            return None, ""
        return None, (f"table {name} has no run record in {PROVENANCE_FILE} (written by hand or by an older "
                      "runner): rerun its notebook, or pass --allow-unrecorded")
    if run is None:
        return (
            rec,
            f"table {name} was written by {describe_run(rec)}, but no run checked finished its notebook",
        )
    if rec.get("run_id") != run.get("run_id"):
        return (
            rec,
            f"table {name} was written by {describe_run(rec)}, not by the run checked, {describe_run(run)}",
        )
    if path.is_file() and rec.get("sha256") != sha256_file(path):
        return (
            rec,
            f"table {name} was changed after {describe_run(rec)} wrote it (its sha256 differs from the "
            "record)",
        )
    return rec, ""


def written_by(rec: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``{"run_id", "profile"}`` of a record, for reports."""
    return None if rec is None else {"run_id": rec.get("run_id"), "profile": rec.get("profile")}
