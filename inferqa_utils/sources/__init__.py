"""Loaders for every supported source; :func:`load_source` picks one by name or by file shape."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core.config import PATHS
from ..core.errors import DataFormatError, MissingInputError
from ..ir.datamodel import Dataset
from .embedded import load_embedded
from .quit import load_quit
from .records import read_json_records
from .triviahg import load_triviahg
from .wikihint import load_wikihint, load_wikihint_dir, load_wikihint_hub

__all__ = ["SHARED_SOURCES", "SourceLicence", "load_embedded", "load_quit", "load_source", "load_triviahg",
           "load_wikihint", "load_wikihint_dir", "load_wikihint_hub", "source_absent", "source_files",
           "source_licence"]

#: Named sources inside ``../shared/data`` (or ``$INFERQA_SHARED_DATA``)
SHARED_SOURCES = {
    "triviahg-validation": "triviahg/validation_2024.json",
    "triviahg-copilot": "triviahg/model_hints/Copilot.json",
}


#: TriviaHG is MIT-licensed: a release derived from it carries this attribution and its licence
TRIVIAHG_ATTRIBUTION = (
    "Questions, answers and hints come from TriviaHG (Mozafari et al., 2024: \"TriviaHG: A Dataset for "
    "Automatic Hint Generation from Factoid Questions\"; "
    "https://github.com/DataScienceUIBK/TriviaHG), released under the MIT licence reproduced in "
    "`LICENSE`. The passages are concatenations of its hints; the labels, splits and construction "
    "tables are ours."
)


@dataclass(frozen=True)
class SourceLicence:
    """The licence a dataset derived from a source must carry: its text's file and an attribution."""

    file: Path
    attribution: str


def source_licence(spec: str | Path) -> SourceLicence | None:
    """The licence of a named shared source (TriviaHG's ``LICENSE`` beside its data files), for a
    release derived from it; ``None`` for a source without one to carry (the embedded dataset is
    ours). A named TriviaHG source whose ``LICENSE`` is missing is refused: a derived release may
    only ship with the licence beside it."""
    s = str(spec)
    if s not in SHARED_SOURCES:
        return None
    data = shared_file(s)
    licence = next((d / "LICENSE" for d in data.parents if d.name == "triviahg"), data.parent / "LICENSE")
    if not licence.is_file():
        raise MissingInputError(
            f"source {s!r}: its licence {licence} is missing; a release derived from TriviaHG ships "
            "with TriviaHG's MIT licence beside it"
        )
    return SourceLicence(licence, TRIVIAHG_ATTRIBUTION)


def shared_file(name: str) -> Path:
    """Path of a named shared source; a clear error when ``../shared/data`` is absent."""
    root = PATHS.shared_data()
    if root is None:
        raise MissingInputError(
            f"source {name!r} needs the shared TriviaHG data: put it at "
            f"{PATHS.root.parent / 'shared' / 'data'} "
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


def source_absent(spec: str | Path | None) -> bool:
    """A named shared source (TriviaHG) whose file is not on this machine (no ``../shared/data``
    and no ``INFERQA_SHARED_DATA``, or the file missing there): a dataset built from it is read
    from its release instead."""
    return str(spec) in SHARED_SOURCES and not source_files(spec)


def source_files(spec: str | Path) -> list[Path]:
    """The files :func:`load_source` reads for ``spec``, found on this machine without loading
    them or using the network (a hub source: its files in the local hub cache), in the order the
    loader reads them; files that are not there are left out (``[]`` when none is: e.g. a hub
    source not downloaded yet, or shared data that is absent)."""
    s = str(spec)
    if s == "embedded":
        found = [PATHS.embedded_dataset]
    elif s in SHARED_SOURCES:
        root = PATHS.shared_data()
        found = [root / SHARED_SOURCES[s]] if root is not None else []
    elif s in ("quit", "wikihint"):
        found = _hub_cached(s)
    else:
        kind, _, rest = s.partition(":")
        path = Path(rest) if rest and kind in ("quit", "triviahg", "wikihint", "embedded") else Path(s)
        found = _folder_files(kind, path) if path.is_dir() else [path]
    return [f for f in found if f.is_file()]


def _folder_files(kind: str, folder: Path) -> list[Path]:
    """What :func:`load_source` reads from a folder: WikiHint's data files, else QUIT's split files and
    corpus."""
    from .quit import SPLITS
    from .wikihint import HUB_FILES

    if kind == "wikihint":
        return [folder / f for f in HUB_FILES]
    return [*(folder / f"{split}.json" for split in SPLITS), folder / "corpus" / "corpus.jsonl"]


def _hub_cached(name: str) -> list[Path]:
    """The hub source ``name``'s files already in the local hub cache (no network)."""
    from . import quit, wikihint

    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - depends on the environment
        return []
    repo, files = ((quit.HUB_REPO, [f"{s}.json" for s in quit.SPLITS]) if name == "quit"
                   else (wikihint.HUB_REPO, list(wikihint.HUB_FILES)))
    found = [try_to_load_from_cache(repo, f, cache_dir=str(PATHS.cache / "hub"), repo_type="dataset")
             for f in files]
    paths = [Path(p) for p in found if isinstance(p, str)]
    if name == "quit" and paths:
        paths.append(paths[0].parent / "corpus" / "corpus.jsonl")
    return paths
