"""Atomic replacement of files and folders where a user's work lives.

A reader (or a run interrupted half-way, Ctrl-C included) sees the old version or the new one,
never a mix:

* :func:`write_text_atomic` — the text goes to a unique temporary file beside ``path`` (flushed
  to disk), which then replaces ``path`` in one ``os.replace``; concurrent writers never share a
  temporary name, and an interrupted write leaves ``path`` as it was.
* :func:`staged_dir` — a context manager yielding a fresh folder beside ``target``; when the block
  ends without an exception, :func:`replace_dir` swaps it in, else it is removed and ``target``
  is left untouched.
* :func:`replace_dir` — the swap: the old ``target`` is renamed away, the new folder renamed in,
  the ``keep`` entries of the old folder (e.g. a ``checkpoint/`` of work in progress) moved
  across, and the old folder removed. Files the new folder does not hold do not survive.
* :func:`recover_dir` — repairs what a *killed* process (no chance to clean up) can leave between
  those renames: no ``target`` but the old folder beside it (renamed back), or the new folder in
  place with the ``keep`` entries still in the old one (moved across). Leftover temporary folders
  of processes that are no longer running are removed. :func:`replace_dir` calls it first.

Temporary folders are named ``.<name>.new-<pid>-<random>`` and ``.<name>.old-<pid>-<random>``
beside ``target`` (same file system, so every rename is atomic).
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path


def write_text_atomic(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (:func:`write_bytes_atomic`); returns ``path``."""
    return write_bytes_atomic(path, text.encode(encoding))


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (see the module docstring); returns ``path``.

    The file keeps the mode of the file it replaces (a new file gets the umask's default, as
    ``open`` would give it); temporary files ``.<name>.<pid>-<random>.tmp`` left by a writer that
    was killed (its process gone) are removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for old in path.parent.glob(f".{glob_escape(path.name)}.*.tmp"):
        pid = old.name[len(path.name) + 2:].split("-", 1)[0]
        if pid.isdigit() and not pid_alive(int(pid)):
            old.unlink(missing_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}-", suffix=".tmp")
    try:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def glob_escape(name: str) -> str:
    """``name`` with glob metacharacters escaped, for a literal match in ``Path.glob``."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def _sibling(target: Path, kind: str, tag: str) -> Path:
    return target.parent / f".{target.name}.{kind}-{tag}"


def _new_tag() -> str:
    return f"{os.getpid()}-{secrets.token_hex(4)}"


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine (this process does; another user's counts)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _leftovers(target: Path, kind: str) -> list[Path]:
    """Temporary folders of ``kind`` ("new"/"old") beside ``target`` whose process is gone, newest first."""
    prefix = f".{target.name}.{kind}-"
    found = []
    for p in target.parent.iterdir():
        pid = p.name[len(prefix):].split("-")[0]
        if p.name.startswith(prefix) and p.is_dir() and pid.isdigit() and not pid_alive(int(pid)):
            found.append(p)
    return sorted(found, key=lambda p: p.stat().st_mtime_ns, reverse=True)


def _move_kept(old: Path, new: Path, keep: Sequence[str]) -> None:
    """Move each ``keep`` entry of ``old`` into ``new`` (where ``new`` has none of its own)."""
    for name in keep:
        if (old / name).exists() and not (new / name).exists():
            (old / name).rename(new / name)


def recover_dir(target: str | os.PathLike[str], keep: Sequence[str] = ()) -> bool:
    """Repair ``target`` after a swap killed half-way (module docstring); True when something was
    restored. Only folders of processes that are no longer running are touched."""
    target = Path(target)
    if not target.parent.is_dir():
        return False
    olds = _leftovers(target, "old")
    restored = False
    if not target.exists() and olds:
        olds.pop(0).rename(target)  # killed between the two renames: the old folder comes back
        restored = True
    elif target.is_dir() and olds:
        missing = [name for name in keep if not (target / name).exists()]
        _move_kept(olds[0], target, keep)  # killed before the kept entries moved across
        restored = any((target / name).exists() for name in missing)
    for p in [*olds, *_leftovers(target, "new")]:
        shutil.rmtree(p, ignore_errors=True)
    return restored


def replace_dir(
    new: str | os.PathLike[str], target: str | os.PathLike[str], keep: Sequence[str] = ()
) -> Path:
    """Put the complete folder ``new`` in place of ``target`` (module docstring).

    Guaranteed on return: ``target`` holds exactly ``new``'s files plus each ``keep`` entry of the
    old ``target`` (moved, unless ``new`` has its own), and nothing else of the old folder. If an
    exception interrupts the swap, ``target`` is the old folder again (or, once the new one was
    renamed in, the new one) — never a mix; ``new`` is the caller's to remove.
    """
    new, target = Path(new), Path(target)
    recover_dir(target, keep)
    old = _sibling(target, "old", _new_tag())
    had_old = target.exists()
    if had_old:
        target.rename(old)
    try:
        new.rename(target)
    except BaseException:
        if had_old and not target.exists():
            old.rename(target)
        raise
    if had_old:
        _move_kept(old, target, keep)
        shutil.rmtree(old, ignore_errors=True)
    return target


@contextmanager
def staged_dir(target: str | os.PathLike[str], keep: Sequence[str] = ()) -> Iterator[Path]:
    """A fresh empty folder beside ``target`` to write into; swapped in for ``target`` by
    :func:`replace_dir` when the block ends normally, removed (``target`` untouched) when it raises."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _sibling(target, "new", _new_tag())
    tmp.mkdir()
    try:
        yield tmp
        replace_dir(tmp, target, keep)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
