"""Which run wrote each results table and figure: ``results/provenance.json``.

The notebooks write their tables (``results/``) and figures (``figures/``) under stable names, and
several runs write the same name (every profile writes ``results/00_quickstart_answers.csv``).
The runner (:func:`inferqa_utils.run.runner.run_notebooks`) takes a :func:`snapshot` of both folders
before each notebook and, after it, records every file the notebook added or changed with the
run's identity (:func:`run_identity`) and how the notebook ended (:func:`finish_window`)::

    {"schema": 1,
     "results": {"00_quickstart_answers.csv": {"run_id": "20261124-080321-default", "profile": "default",
                 "notebook": "00_quickstart.ipynb", "dataset": "…", "dataset_fingerprint": "…",
                 "git": {"commit": "…", "dirty": false}, "notebook_status": "ok",
                 "written": "2026-11-24T08:04:01+00:00", "sha256": "…"}, …},
     "figures": {"…png": {…}}}

A record is replaced when a later run writes the file again; records of files that no longer
exist are dropped; records of other files are kept. The file is rewritten atomically under a lock
(:func:`record`), so two runners finishing notebooks at once both land.

A run's files are the ones whose size, mtime or inode changed while its notebook ran, so a file
another process writes into the same folders meanwhile would look like this run's. The runner
therefore registers each notebook while it runs (:func:`open_window`, in the hidden
``results/.writers.json``): when the notebook ends, the other runs whose notebooks wrote at the
same time are known. Files such a run has already recorded with their present content stay its
own; the rest carry ``"concurrent": [<run ids>]``, and :func:`check_table` refuses them, because
which run wrote them cannot be told (run two profiles in separate clones, or one after the other).
A run is known by the process that runs it; runs on other machines sharing the folders are not seen.

:func:`check_table` says whether a table was written by a given run (``check`` and the results
page refuse numbers read from a table another run wrote, from a notebook that did not finish, or
written alongside another run).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..core.atomic import pid_alive, write_text_atomic
from ..core.config import PATHS, run_command
from ..core.errors import DataFormatError
from ..core.fingerprint import sha256_file

#: the provenance file's name, in the results folder
PROVENANCE_FILE = "provenance.json"
SCHEMA = 1
#: the environment variable naming the run to the notebooks' kernels (the run folder's name)
RUN_ID_ENV = "INFERQA_RUN_ID"
#: the register of notebooks writing into the folders (module docstring), hidden in the results folder
WINDOWS_FILE = ".writers.json"

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
    with _locked(provenance_path(results)):
        return _record_locked(files, run, folders, results)


def _record_locked(files: Sequence[tuple[str, str]], run: Mapping[str, Any],
                   folders: Mapping[str, Path] | None, results: Path | None) -> Path:
    """:func:`record`, the lock held by the caller."""
    folders = folders or recorded_folders()
    path = provenance_path(results)
    written = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    data = load(results)
    for key, name in files:
        data[key][name] = {**run, "written": written, "sha256": sha256_file(folders[key] / name)}
    for key, folder in folders.items():
        data[key] = {n: r for n, r in sorted(data[key].items()) if (folder / n).is_file()}
    write_text_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return path


# ----------------------------------------------------------------------------- notebooks writing at once

def windows_path(results: Path | None = None) -> Path:
    """``<results folder>/.writers.json`` (default ``results/``): the register of notebooks writing."""
    return (results or PATHS.results) / WINDOWS_FILE


def _alive(pid: Any) -> bool:
    """Whether a process ``pid`` (as read from the register: any value) runs on this machine."""
    return isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 and pid_alive(pid)


def _load_windows(path: Path) -> dict[str, Any]:
    """The register: ``{"next": <counter>, "windows": [{"run_id", "notebook", "pid", "seq", "end",
    "overlaps"}]}``, where ``seq`` and ``end`` are ticks of the counter (not clock times: a clock
    set back cannot reorder them). An unreadable register is started afresh: it only ever says
    which notebooks wrote at one time."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict):
        return {"next": 1, "windows": []}
    windows = data.get("windows")
    if not (isinstance(data.get("next"), int) and isinstance(windows, list)
            and all(isinstance(w, dict) and isinstance(w.get("seq"), int) for w in windows)):
        return {"next": 1, "windows": []}
    return data


def _open(w: Mapping[str, Any]) -> bool:
    return w.get("end") is None


def _pruned(windows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The windows a notebook still writing may need: the open ones of live processes, and those
    that began or ended after such a notebook began (a window open when it began is in its
    ``overlaps`` already)."""
    writing = {w["seq"] for w in windows if _open(w) and _alive(w.get("pid"))}
    keep = []
    for w in windows:
        last = w["seq"] if _open(w) else w.get("end")  # a dead process's open window: when it began
        if w["seq"] in writing or (isinstance(last, int) and any(seq <= last for seq in writing)):
            keep.append(w)
    return keep


def _save_windows(path: Path, data: dict[str, Any]) -> None:
    data["windows"] = _pruned(data["windows"])
    write_text_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def open_window(
    run_id: str, notebook: str, results: Path | None = None, pid: int | None = None
) -> dict[str, Any]:
    """Register that ``notebook`` of run ``run_id`` (run by process ``pid``, default this one) starts
    writing into the folders; returns its window for :func:`finish_window`. The window notes the
    other runs whose notebooks are writing at this moment (open windows of other live processes).
    A window the same process left open is ended here: a process runs one notebook at a time."""
    pid = pid or os.getpid()
    path = windows_path(results)
    with _locked(provenance_path(results)):
        data = _load_windows(path)
        for w in data["windows"]:
            if _open(w) and w.get("pid") == pid:  # left open by an earlier notebook of this process
                w["end"] = data["next"]
        data["next"] += 1
        window = {"run_id": run_id, "notebook": notebook, "pid": pid, "seq": data["next"], "end": None,
                  "overlaps": sorted({str(w["run_id"]) for w in data["windows"]
                                      if _open(w) and w.get("run_id") != run_id and _alive(w.get("pid"))})}
        data["next"] += 1
        data["windows"].append(window)
        _save_windows(path, data)
    return dict(window)


def _close_locked(window: Mapping[str, Any], results: Path | None) -> list[str]:
    """Mark ``window`` ended; the ids of the other runs that wrote while it was open: those writing
    when it began, and those that began since. The lock is held by the caller."""
    path = windows_path(results)
    data = _load_windows(path)
    mine = next((w for w in data["windows"]
                 if w.get("seq") == window["seq"] and w.get("run_id") == window["run_id"]), None)
    others = set((mine or window).get("overlaps") or [])
    others |= {str(w["run_id"]) for w in data["windows"]
               if w["seq"] > window["seq"] and w.get("run_id") != window["run_id"]}
    if mine is not None:
        mine["end"] = data["next"]
        data["next"] += 1
    _save_windows(path, data)
    return sorted(others)


def _claimed(files: Sequence[tuple[str, str]], others: Sequence[str], folders: Mapping[str, Path],
             results: Path | None) -> set[tuple[str, str]]:
    """The ``files`` one of the ``others`` runs recorded with the content they hold now: it wrote
    them, alongside, and filed them itself."""
    if not others:
        return set()
    data = load(results)
    out = set()
    for key, name in files:
        rec = data[key].get(name)
        if isinstance(rec, dict) and rec.get("run_id") in others and \
                rec.get("sha256") == sha256_file(folders[key] / name):
            out.add((key, name))
    return out


def finish_window(window: Mapping[str, Any] | None, before: Snapshot, run: Mapping[str, Any],
                  folders: Mapping[str, Path] | None = None,
                  results: Path | None = None) -> tuple[list[tuple[str, str]], list[str]]:
    """End a notebook's ``window`` (:func:`open_window`; ``None``: none was registered) and
    :func:`record` the files added or changed since the ``before`` snapshot as written by ``run``, in
    one step under the lock. When other runs wrote into the folders meanwhile, the files one of them
    recorded with their present content are left to it, and the others' records name those runs
    (``concurrent``; :func:`check_table` refuses them). Returns ``(the files recorded, the other
    runs' ids)``."""
    folders = folders or recorded_folders()
    with _locked(provenance_path(results)):
        others = _close_locked(window, results) if window is not None else []
        changed = changed_since(before, folders)
        claimed = _claimed(changed, others, folders, results)
        files = [f for f in changed if f not in claimed]
        _record_locked(files, {**run, "concurrent": others} if others else run, folders, results)
    return files, others


def describe_run(run: Mapping[str, Any] | None) -> str:
    """``run 20261124-080321-default (profile default)``."""
    if not run:
        return "no run"
    return f"run {run.get('run_id')} (profile {run.get('profile')})"


def check_table(name: str, run: Mapping[str, Any] | None, results: Path | None = None,
                allow_unrecorded: bool = False) -> tuple[dict[str, Any] | None, str]:
    """Whether the table ``results/<name>`` was written by ``run`` (``{"run_id", "profile"}``, or
    ``None`` when no run is being checked): ``(its record or None, "")`` when it was, else
    ``(record, reason)``. Refused: a table written by a notebook that did not finish (it raised or
    was stopped), a table written while another run wrote into the same folders (``concurrent``), a
    table another run wrote (the reason names the table and both runs), a table changed since its
    run wrote it, and a table with no record (unless ``allow_unrecorded``)."""
    rec = load(results)["results"].get(name)
    path = (results or PATHS.results) / name
    if rec is None:
        if allow_unrecorded:
            return None, ""
        return None, (f"table {name} has no run record in {PROVENANCE_FILE} (written by hand or by an older "
                      "runner): rerun its notebook, or pass --allow-unrecorded")
    notebook = str(rec.get("notebook") or "")
    command = f" ({run_command([notebook], rec.get('profile'))})" if notebook[:2].isdigit() else ""
    if rec.get("notebook_status") not in (None, "ok"):
        return rec, (f"table {name} was written by {describe_run(rec)} in {notebook}, which did not finish "
                     f"({rec['notebook_status']}): rerun it{command}")
    if rec.get("concurrent"):
        others = [str(r) for r in rec["concurrent"]]
        return rec, (f"table {name} was written by {describe_run(rec)} while run{'s' * (len(others) > 1)} "
                     f"{', '.join(others)} also wrote into results/ and figures/, so which run wrote it "
                     f"cannot be told: rerun it with no other run writing there{command}")
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
