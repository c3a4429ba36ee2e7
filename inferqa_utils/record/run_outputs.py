"""The tables and figures of a run: written into its own folder, inherited, published.

A run of the notebooks (:func:`inferqa_utils.run.runner.run_notebooks`) writes its tables and
figures into its own folder, ``build/executions/<run id>/results/`` and ``…/figures/``, beside its
executed notebooks and ``manifest.json`` (the kernels find the folder in ``$INFERQA_RUN_DIR``,
:data:`inferqa_utils.core.config.RUN_DIR_ENV`, and :data:`~inferqa_utils.core.config.PATHS`
points ``results`` and ``figures`` there). Two runs therefore never write into one folder, and a
table in a run's folder is that run's, with two exceptions the manifest names:

- a **partial** run (``--only``) starts from a copy of the tables and figures of the profile's
  newest run that holds some (:func:`inherit`), so that a notebook reading an earlier notebook's
  table finds it; the manifest's ``inherited`` maps each copied file to the run that wrote it;
- a notebook that raised or was stopped may have written some files before it ended: they are in
  its ``outputs`` with its ``status``, and ``check`` refuses them.

Each notebook's ``outputs`` are the files of the run's folders it added or changed
(:func:`snapshot`, :func:`changed_since`). After a run whose every notebook finished,
``results/<profile>`` and ``figures/<profile>`` are pointed at its folders (:func:`publish`), so
the stable names of the tables are found under ``results/<profile>/`` for the latest complete run
of each profile. :func:`origin` says which run and notebook wrote a file of a run.

    >>> origin({"notebooks": {"04_reading.ipynb": {"status": "ok", "outputs": ["results/em.csv"]}},
    ...         "inherited": {"results/runs.csv": "20261124-080321-smoke"}},
    ...        "20261124-090000-smoke", "results/runs.csv")
    {'run_id': '20261124-080321-smoke', 'notebook': None, 'status': 'ok'}
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.config import PATHS

#: the folders of a run that hold its outputs, by the prefix its manifest lists them under
FOLDERS = ("results", "figures")

#: (mtime_ns, size, inode) of each output file of a run, by ``<folder>/<name>``
Snapshot = dict[str, tuple[int, int, int]]


def output_files(run_dir: Path) -> dict[str, Path]:
    """``{"results/<name>": path, "figures/<name>": path}``: the files under the run's output
    folders (hidden files and temporary files of atomic writes left out)."""
    out: dict[str, Path] = {}
    for key in FOLDERS:
        folder = run_dir / key
        if folder.is_dir():
            for p in sorted(folder.rglob("*")):
                if p.is_file() and not p.name.startswith("."):
                    out[f"{key}/{p.relative_to(folder).as_posix()}"] = p
    return out


def snapshot(run_dir: Path) -> Snapshot:
    """The (mtime_ns, size, inode) of each output file of the run."""
    out: Snapshot = {}
    for name, p in output_files(run_dir).items():
        st = p.stat()
        out[name] = (st.st_mtime_ns, st.st_size, st.st_ino)
    return out


def changed_since(before: Snapshot, run_dir: Path) -> list[str]:
    """The output files of the run added or changed since ``before``."""
    return sorted(name for name, stamp in snapshot(run_dir).items() if before.get(name) != stamp)


def origin(manifest: Mapping[str, Any], run_id: str, name: str) -> dict[str, Any] | None:
    """Which run wrote the file ``name`` (``results/<table>``) of the run ``run_id`` with
    ``manifest``: ``{"run_id", "notebook", "status"}`` — the notebook of this run that wrote it last,
    with how that notebook ended, or the run it was inherited from (notebook ``None``); ``None``
    when neither the run's notebooks nor its inheritance account for the file."""
    found = None
    for nb, rec in (manifest.get("notebooks") or {}).items():
        if isinstance(rec, Mapping) and name in (rec.get("outputs") or []):
            found = {"run_id": run_id, "notebook": nb, "status": rec.get("status")}
    if found is None and name in (manifest.get("inherited") or {}):
        found = {"run_id": manifest["inherited"][name], "notebook": None, "status": "ok"}
    return found


def inherit(run_dir: Path, source: Path, source_manifest: Mapping[str, Any]) -> dict[str, str]:
    """Copy into ``run_dir`` the output files of the earlier run ``source`` that a finished notebook
    wrote or that run inherited itself (never those of a notebook that raised or was stopped);
    returns ``{"results/<name>": run id of the run that wrote it}`` for the new run's manifest.
    Files are hard-linked where the file system allows (the tables are never written in place:
    a rewrite replaces the file), else copied."""
    out: dict[str, str] = {}
    for name, path in output_files(source).items():
        found = origin(source_manifest, source.name, name)
        if found is None or found["status"] != "ok":
            continue
        target = run_dir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, target)
        except OSError:
            shutil.copy2(path, target)
        out[name] = found["run_id"]
    return out


def publish(run_dir: Path, profile_name: str, root: Path | None = None) -> list[Path]:
    """Point ``results/<profile>`` and ``figures/<profile>`` (under ``root``, default the
    repository's) at the run's output folders, each replaced atomically (a relative symlink written
    beside it, then renamed over it). A real folder of that name (a user's) is left alone and
    named in the returned list's absence. Returns the links made."""
    root = root or PATHS.root
    made = []
    for key in FOLDERS:
        target = run_dir / key
        if not target.is_dir():
            continue
        link = root / key / profile_name
        if link.exists() and not link.is_symlink():
            continue
        link.parent.mkdir(parents=True, exist_ok=True)
        tmp = link.with_name(f".{profile_name}.{os.getpid()}.tmp")
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        tmp.symlink_to(os.path.relpath(target, link.parent))
        os.replace(tmp, link)
        made.append(link)
    return made


def readable(path: Path, executions: Path | None = None) -> Path:
    """Where to read the output file ``path`` (``results/<name>`` or ``figures/<name>``) outside a
    run: ``path`` itself when it exists (a run under way, an exploration's file), else the same file
    in the newest run folder whose notebooks finished writing it or that inherited it (any
    profile: the file names carry the dataset and split), else ``path`` (missing)."""
    from .run_dirs import RUN_DIR_RE, run_order

    if path.exists() or path.parent.name not in FOLDERS:
        return path
    name = f"{path.parent.name}/{path.name}"
    folder = executions or PATHS.executions
    runs = [d for d in folder.iterdir() if RUN_DIR_RE.match(d.name) and not d.is_symlink()] \
        if folder.is_dir() else []
    for d in sorted(runs, key=lambda d: run_order(d.name) or ("", 0), reverse=True):
        candidate = d / name
        if not candidate.is_file():
            continue
        try:
            m = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        found = origin(m, d.name, name) if isinstance(m, dict) else None
        if found is not None and found["status"] == "ok":
            return candidate
    return path


def reading_from() -> str:
    """One sentence naming the run whose tables a notebook reads: the run under way (its folder, and
    the runs its inherited files came from), or, outside a run, ``results/`` and the newest runs
    that wrote each table (:func:`readable`)."""
    run = PATHS.run_dir()
    if run is None:
        return ("no run under way: tables are read from results/, else from the newest run that wrote "
                "each (build/executions/)")
    try:
        m = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        m = {}
    inherited = m.get("inherited") or {} if isinstance(m, dict) else {}
    text = f"tables read from run {run.name} (its own folder"
    if inherited:
        text += f"; {len(inherited)} file(s) inherited from {', '.join(sorted(set(inherited.values())))}"
    return text + ")"
