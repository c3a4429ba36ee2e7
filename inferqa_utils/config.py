"""One place for paths, seeds and profiles.

Every path is anchored at the repository root, so notebooks (run from ``notebooks/`` by
papermill or JupyterLab), the CLI and pytest all agree. Override the root with
``INFERQA_ROOT`` and the shared data folder with ``INFERQA_SHARED_DATA``.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from .errors import MissingInputError

#: The global seed. ``set_seeds`` is the only place seeds are set.
SEED: int = 13


def _find_root() -> Path:
    env = os.environ.get("INFERQA_ROOT")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve().parent.parent
    if (here / "pyproject.toml").exists():
        return here
    # Installed non-editable: fall back to the working directory's repository.
    for cand in [Path.cwd(), *Path.cwd().parents]:
        if (cand / "inferqa_utils").is_dir() and (cand / "pyproject.toml").exists():
            return cand
    return here


ROOT: Path = _find_root()


@dataclass(frozen=True)
class Paths:
    """Project paths. Folders that hold generated artefacts are git-ignored."""

    root: Path

    @property
    def notebooks(self) -> Path:
        return self.root / "notebooks"

    @property
    def data(self) -> Path:
        """Data we wrote and ship (the embedded dataset, verification files)."""
        return self.root / "data"

    @property
    def embedded_dataset(self) -> Path:
        return self.data / "embedded" / "questions.json"

    @property
    def figures(self) -> Path:
        return self.root / "figures"

    @property
    def results(self) -> Path:
        return self.root / "results"

    @property
    def cache(self) -> Path:
        """LLM generations, embeddings (ignored)."""
        return self.root / ".cache"

    @property
    def models(self) -> Path:
        """Joined/verified model files (ignored)."""
        return self.cache / "models"

    @property
    def build(self) -> Path:
        """Built datasets, indexes, runs, executed notebooks, manifests (ignored)."""
        return self.root / "build"

    @property
    def datasets(self) -> Path:
        return self.build / "datasets"

    @property
    def indexes(self) -> Path:
        return self.build / "indexes"

    @property
    def runs(self) -> Path:
        """TREC run files produced by retrievers/rerankers."""
        return self.build / "runs"

    @property
    def executions(self) -> Path:
        """One folder per ``inferqa run``: executed notebooks and the run manifest."""
        return self.build / "executions"

    def shared_data(self) -> Path | None:
        """The real TriviaHG data (``../shared/data``), or None when absent."""
        env = os.environ.get("INFERQA_SHARED_DATA")
        cand = Path(env) if env else self.root.parent / "shared" / "data"
        return cand if cand.is_dir() else None


PATHS = Paths(ROOT)


def set_seeds(seed: int = SEED) -> int:
    """Seed python, numpy and (if already imported) torch. Returns the seed."""
    import sys

    random.seed(seed)
    os.environ.setdefault("PYTHONHASHSEED", str(seed))
    try:
        import numpy as np

        np.random.seed(seed)
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)
    return seed


# --------------------------------------------------------------------------- profiles

PROFILES_FILE = Path(__file__).with_name("profiles.yaml")


@cache
def _profiles_raw() -> dict[str, Any]:
    with open(PROFILES_FILE, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def profile_names() -> list[str]:
    return list(_profiles_raw()["profiles"])


def profile(name: str) -> dict[str, Any]:
    """Parameter values of a profile (``smoke``, ``default``, ``paper``).

    A profile may ``inherit`` another; its ``params`` override the parent's.
    """
    raw = _profiles_raw()["profiles"]
    if name not in raw:
        raise KeyError(f"unknown profile {name!r}; choose one of {', '.join(raw)}")
    spec = raw[name]
    params: dict[str, Any] = {}
    if spec.get("inherit"):
        params.update(profile(spec["inherit"]))
    params.update(spec.get("params") or {})
    return params


def profile_description(name: str) -> str:
    return str(_profiles_raw()["profiles"][name].get("description", "")).strip()


def require_input(path: str | os.PathLike[str], produced_by: str, what: str = "") -> Path:
    """Return ``path`` if it exists, else raise saying which notebook produces it."""
    p = Path(path)
    if not p.exists():
        label = f"{what} " if what else ""
        raise MissingInputError(
            f"missing input {label}{p}: run notebook {produced_by} first "
            f"(python -m inferqa_utils run --only {produced_by[:2]})"
        )
    return p
