"""Reading a built dataset back (the input of notebooks 02–07)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.config import PATHS, require_input
from ..core.errors import DataFormatError
from ..ir.datamodel import Dataset
from ..ir.trec import read_qrels
from ..sources.quit import load_quit
from ..stages import Stage

if TYPE_CHECKING:
    from .labeling import QuestionLabels


def built_dir(name: str) -> Path:
    return PATHS.datasets / name


def load_built(name: str, folder: str | Path | None = None) -> Dataset:
    """The dataset exported by notebook 01 under ``build/datasets/<name>/`` (or ``folder``):
    splits, passages, generations, and the labels from its TREC qrels (not recomputed)."""

    folder = Path(folder) if folder is not None else built_dir(name)
    manifest = require_input(folder / "manifest.json", Stage.CONSTRUCTION.notebook,
                             f"the built dataset {name!r}")
    meta = json.loads(manifest.read_text(encoding="utf-8"))
    ds = load_quit(folder, name=name)
    for split in ds.splits:
        ds.qrels.update(read_qrels(folder / "qrels" / f"{split}.qrels"))
    ds.meta.update({"built": meta, "folder": str(folder), "labelled_splits": meta.get("labelled_splits"),
                    "distractor_hints": _distractor_hints(folder / "distractors.json")})
    return ds


def _distractor_hints(path: Path) -> dict[str, list[str]]:
    """``{qid: [hint, ...]}`` of the distractor questions (passages in the corpus, not built)."""
    if not path.exists():
        return {}
    try:
        recs = json.loads(path.read_text(encoding="utf-8"))
        return {r["id"]: [h["hint"] for h in r["hints"]] for r in recs}
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise DataFormatError(path, f"not a list of {{id, hints: [{{hint}}]}} records ({e})") from None


def built_labels(folder: str | Path) -> dict[str, QuestionLabels]:
    """The labeling records of the build in ``folder`` (``build/datasets/<name>``): its checkpoint
    file for the manifest's parameters, read only (a cut last line is skipped, not repaired).
    Empty when the build labelled nothing or has no checkpoint."""
    from .build_config import BuildConfig
    from .labeling import read_record

    folder = Path(folder)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    cfg = BuildConfig.from_manifest(manifest.get("parameters") or {}, output_dir=str(folder))
    path = cfg.checkpoint_file(manifest.get("source_sha256"))
    out: dict[str, QuestionLabels] = {}
    if not path.exists():
        return out
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict) and "qid" in rec:
            out[rec["qid"]] = read_record(rec, path, n)[0]
    return out


def construction_table(folder: str | Path, name: str) -> Path:
    """The path of a construction table (``hints.csv``, ``questions.csv``, …) of a built dataset:
    at the top of a build folder, or under ``construction/`` in an installed release (the path
    that exists; the build's when neither does)."""
    folder = Path(folder)
    top, nested = folder / name, folder / "construction" / name
    return nested if not top.exists() and nested.exists() else top
