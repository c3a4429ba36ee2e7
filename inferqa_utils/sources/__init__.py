"""Loaders for every supported source; :func:`load_source` picks one by name or by file shape."""

from __future__ import annotations

from pathlib import Path

from ..config import PATHS
from ..datamodel import Dataset
from ..errors import DataFormatError, MissingInputError
from .embedded import load_embedded
from .quit import load_quit
from .records import read_json_records
from .triviahg import load_triviahg
from .wikihint import load_wikihint, load_wikihint_dir, load_wikihint_hub

__all__ = ["SHARED_SOURCES", "load_embedded", "load_quit", "load_source", "load_triviahg", "load_wikihint",
           "load_wikihint_dir", "load_wikihint_hub"]

#: Named sources inside ``../shared/data`` (or ``$INFERQA_SHARED_DATA``)
SHARED_SOURCES = {
    "triviahg-validation": "triviahg/validation_2024.json",
    "triviahg-copilot": "triviahg/model_hints/Copilot.json",
}


def shared_file(name: str) -> Path:
    """Path of a named shared source; a clear error when ``../shared/data`` is absent."""
    root = PATHS.shared_data()
    if root is None:
        raise MissingInputError(
            f"source {name!r} needs the shared TriviaHG data: put it at {PATHS.root.parent / 'shared' / 'data'} "
            "or set INFERQA_SHARED_DATA"
        )
    return root / SHARED_SOURCES[name]


def load_source(spec: str | Path) -> Dataset:
    """Load a dataset by name or path.

    Names: ``embedded``; ``triviahg-validation``, ``triviahg-copilot`` (shared data);
    ``quit`` (hub) or ``quit:<folder>``; ``wikihint`` (hub) or ``wikihint:<file or folder>`` (a
    folder holding the hub's ``training.json``/``test.json``); ``triviahg:<file>``.
    A bare path is recognised by the shape of its first record; a QUIT split file is refused
    (pass its folder: the split files and the corpus are read together).
    """
    s = str(spec)
    if s == "embedded":
        return load_embedded()
    if s in SHARED_SOURCES:
        return load_triviahg(shared_file(s), name=s)
    if s == "quit":
        return load_quit("hub")
    if s == "wikihint":
        return load_wikihint_hub()
    kind, _, rest = s.partition(":")
    if kind == "wikihint" and rest and Path(rest).is_dir():
        return load_wikihint_dir(rest)
    if rest and kind in ("quit", "triviahg", "wikihint", "embedded"):
        return {"quit": load_quit, "triviahg": load_triviahg, "wikihint": load_wikihint,
                "embedded": load_embedded}[kind](rest)
    p = Path(s)
    if p.is_dir():
        return load_quit(p)
    recs = read_json_records(p)
    first = recs[0] if isinstance(recs, list) and recs else None
    if isinstance(first, dict) and "Q_ID" in first:
        return load_triviahg(p)
    if isinstance(first, dict) and "subsets" in first:
        return load_quit(p)  # refused: a QUIT split file is read with its folder, which must be named
    if isinstance(first, dict) and "id" in first and "question" in first:
        return load_wikihint(p)
    raise DataFormatError(p, "cannot tell the shape of this file (TriviaHG needs 'Q_ID'; WikiHint 'id' and "
                             "'question'; QUIT 'subsets')", record=0)
