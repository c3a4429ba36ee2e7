"""Write a set of files under a root folder as one set: every file is first written into a staging
folder beside the folders it belongs in, and only when all of them are complete are they renamed
into place.

The files an import writes live in folders other runs share (``results/``, ``build/runs/``), so the
set cannot be one folder swapped in with one rename; instead :func:`write_as_one`:

1. writes every file into a staging folder ``<where>/.<name>.<pid>-<random>/new/`` (``where``:
   ``<root>`` or a folder under it), laid out as under ``<root>`` (``new/results/…``,
   ``new/build/…``) — a failure here leaves ``<root>`` untouched;
2. moves each file to its place with one ``os.replace`` (a reader opens the old file or the new
   one, never half of one; across file systems the file is copied beside its place first), in
   the order the writer returned them, after keeping the file it replaces as a hard link in
   ``old/`` (a copy where links are not supported), or an empty marker in ``none/`` when there
   was none;
3. if a rename fails, puts the files already moved back (the earlier versions restored, files
   that did not exist before removed) and raises; the staging folder is removed either way.

Files of the earlier set that the new one does not hold are left where they are.

A process killed while writing leaves its staging folder, one killed while renaming also a mix of
old and new files. :func:`recover` (which :func:`write_as_one` calls first) repairs both for the
staging folders of ``name`` whose process is no longer running: while ``new/`` still holds a file
the renames did not finish, and every file already moved is put back; then the folder is removed.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from ..core.atomic import glob_escape, pid_alive

NEW, OLD, NONE = "new", "old", "none"


def write_as_one(
    root: str | Path, name: str, write: Callable[[Path], Sequence[Path]], where: str | Path | None = None
) -> list[Path]:
    """Call ``write(folder)``, which writes files under ``folder`` laid out as under ``root`` and
    returns them; then rename them into place under ``root`` (module docstring), staging in
    ``where`` (default ``root``). Returns their paths under ``root``, in the order ``write``
    returned them."""
    root = Path(root)
    base = Path(where) if where is not None else root
    base.mkdir(parents=True, exist_ok=True)
    recover(root, name, base)
    stage = base / f".{name}.{os.getpid()}-{secrets.token_hex(4)}"
    (stage / NEW).mkdir(parents=True)
    try:
        return _commit(stage, root, list(write(stage / NEW)))
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def recover(root: str | Path, name: str, where: str | Path | None = None) -> list[Path]:
    """Repair what a killed :func:`write_as_one` of ``name`` under ``root``, staging in ``where``
    (default ``root``), left (module docstring); returns the files put back. Staging folders of
    running processes are not touched."""
    root = Path(root)
    base = Path(where) if where is not None else root
    prefix = f".{name}."
    restored: list[Path] = []
    if not base.is_dir():
        return restored
    for stage in sorted(base.glob(glob_escape(prefix) + "*")):
        pid = stage.name[len(prefix):].split("-", 1)[0]
        if not stage.is_dir() or not pid.isdigit() or pid_alive(int(pid)):
            continue
        if any(p.is_file() for p in (stage / NEW).rglob("*")):
            restored += _undo(stage, root)
        shutil.rmtree(stage, ignore_errors=True)
    return restored


def _commit(stage: Path, root: Path, staged: list[Path]) -> list[Path]:
    new = stage / NEW
    moved: list[Path] = []
    try:
        for path in staged:
            rel = path.relative_to(new)
            target = root / rel
            _keep(target, stage, rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            _move(path, target)
            moved.append(target)
    except BaseException:
        _undo(stage, root)
        raise
    return moved


def _keep(target: Path, stage: Path, rel: Path) -> None:
    """Before ``target`` is replaced: keep it in ``old/`` (a hard link, else a copy), or mark in
    ``none/`` that it does not exist."""
    if target.is_file():
        kept = stage / OLD / rel
        kept.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(target, kept)
        except OSError:
            shutil.copy2(target, kept)
    else:
        marker = stage / NONE / rel
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()


def _undo(stage: Path, root: Path) -> list[Path]:
    """Put back every file moved out of ``new/`` (those still in ``new/`` were not moved)."""
    undone: list[Path] = []
    for kind in (OLD, NONE):
        for kept in sorted((stage / kind).rglob("*")):
            rel = kept.relative_to(stage / kind)
            if not kept.is_file() or (stage / NEW / rel).exists():
                continue
            target = root / rel
            if kind == OLD:
                _move(kept, target)
            else:
                target.unlink(missing_ok=True)
            undone.append(target)
    return undone


def _move(src: Path, target: Path) -> None:
    """Rename ``src`` to ``target`` in one ``os.replace``; across file systems, copy it beside
    ``target`` first and rename the copy."""
    try:
        os.replace(src, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            shutil.copy2(src, tmp)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
        src.unlink()
