"""Reading a built dataset back (the input of notebooks 02–07)."""

from __future__ import annotations

import json
from pathlib import Path

from ..config import PATHS, require_input
from ..datamodel import Dataset
from ..errors import DataFormatError
from ..sources.quit import load_quit
from ..trec import read_qrels


def built_dir(name: str) -> Path:
    return PATHS.datasets / name


def load_built(name: str) -> Dataset:
    """The dataset exported by notebook 01 under ``build/datasets/<name>/``: splits, passages,
    generations, and the labels from its TREC qrels (not recomputed)."""

    folder = built_dir(name)
    manifest = require_input(folder / "manifest.json", "01_dataset_construction",
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
