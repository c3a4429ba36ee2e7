"""The embedded default dataset we wrote (``data/embedded/questions.json``, WikiHint-like shape)."""

from __future__ import annotations

from pathlib import Path

from ..core.config import PATHS
from ..ir.datamodel import Dataset
from .wikihint import load_wikihint


def load_embedded(path: str | Path | None = None) -> Dataset:
    """Load the embedded dataset: ≥ 60 questions with ≥ 6 hints, 11 candidates (gold last),
    aliases, TREC type, difficulty and an answer-containing reference passage each."""

    p = Path(path) if path else PATHS.embedded_dataset
    ds = load_wikihint(p, name="embedded", source="embedded")
    ds.meta["shape"] = "embedded"
    return ds
