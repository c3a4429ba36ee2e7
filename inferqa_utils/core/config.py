"""One place for paths, seeds and profiles.

Every path is anchored at the repository root, so notebooks (run from ``notebooks/`` by
papermill or JupyterLab), the CLI and pytest all agree. Override the root with
``INFERQA_ROOT`` and the shared data folder with ``INFERQA_SHARED_DATA``.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .errors import DataFormatError, MissingInputError, UnknownProfileError
from .textio import read_text

#: The global seed. ``set_seeds`` is the only place seeds are set.
SEED: int = 13


def _find_root() -> Path:
    env = os.environ.get("INFERQA_ROOT")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve().parents[2]
    if (here / "pyproject.toml").exists():
        return here
    # Installed non-editable: fall back to the working directory's repository.
    for cand in [Path.cwd(), *Path.cwd().parents]:
        if (cand / "inferqa_utils").is_dir() and (cand / "pyproject.toml").exists():
            return cand
    return here


ROOT: Path = _find_root()
#: the environment variable naming the folder of the notebook run under way: its tables and figures
#: go to ``<run folder>/results`` and ``<run folder>/figures`` (:class:`Paths`)
RUN_DIR_ENV = "INFERQA_RUN_DIR"


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

    def run_dir(self) -> Path | None:
        """The folder of the notebook run under way (``$INFERQA_RUN_DIR``, set by the runner for its
        kernels), for the paths of this process's repository (:data:`ROOT`) or of a root the folder
        lies under; else ``None``."""
        env = os.environ.get(RUN_DIR_ENV)
        if not env:
            return None
        run = Path(env)
        return run if self.root == ROOT or run.resolve().is_relative_to(self.root.resolve()) else None

    @property
    def figures(self) -> Path:
        """The run's ``figures/`` during a run (:meth:`run_dir`), else ``figures/`` (explorations)."""
        run = self.run_dir()
        return run / "figures" if run is not None else self.root / "figures"

    @property
    def results(self) -> Path:
        """The run's ``results/`` during a run (:meth:`run_dir`), else ``results/`` (explorations)."""
        run = self.run_dir()
        return run / "results" if run is not None else self.root / "results"

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


def root_relative(path: str | os.PathLike[str]) -> str:
    """``path`` relative to the repository root when it lies inside it, else as given (for messages
    and records that must not carry this machine's absolute paths)."""
    try:
        return str(Path(path).resolve().relative_to(PATHS.root))
    except ValueError:
        return str(path)


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
    return {"profiles": load_profiles(PROFILES_FILE)}


def load_profiles(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """The ``profiles`` mapping of a profiles file, checked.

    Refused with :class:`~inferqa_utils.core.errors.DataFormatError` naming the file, the profile
    (record) and the field: invalid YAML or UTF-8, no ``profiles`` mapping, a profile that is not
    a mapping, ``params`` that is not a mapping, ``description`` that is not a string,
    ``notebooks`` that is not a list of two-digit notebook numbers, an ``inherit`` that names no
    profile of the file, or a chain of ``inherit`` that comes back to where it started.
    """
    raw = _read_yaml(path)
    profiles = raw.get("profiles") if isinstance(raw, dict) else None
    if not isinstance(profiles, dict) or not profiles:
        raise DataFormatError(path, "expected a mapping 'profiles: {name: {description, inherit, params}}'",
                              field="profiles")
    for name, spec in profiles.items():
        _check_profile(path, profiles, name, spec)
    for name in profiles:
        _inherit_chain(path, profiles, name)
    return profiles


def _read_yaml(path: str | os.PathLike[str]) -> Any:
    import yaml

    try:
        return yaml.safe_load(read_text(path))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else None
        raise DataFormatError(
            path, f"invalid YAML: {getattr(e, 'problem', None) or e}", record=where
        ) from None


def _check_profile(path: str | os.PathLike[str], profiles: dict[str, Any], name: str, spec: Any) -> None:
    """One profile's fields (see :func:`load_profiles`)."""
    if not isinstance(spec, dict):
        raise DataFormatError(path, f"expected a mapping, got {type(spec).__name__}", record=name)
    params = spec.get("params")
    if params is not None and not isinstance(params, dict):
        raise DataFormatError(path, f"expected a mapping {{parameter: value}}, got {type(params).__name__}",
                              record=name, field="params")
    desc = spec.get("description")
    if desc is not None and not isinstance(desc, str):
        raise DataFormatError(
            path, f"expected a string, got {type(desc).__name__}", record=name, field="description"
        )
    notebooks = spec.get("notebooks")
    if notebooks is not None and not (
        isinstance(notebooks, list) and notebooks
        and all(isinstance(n, str) and re.fullmatch(r"\d\d", n) for n in notebooks)
    ):
        raise DataFormatError(path, f"expected a list of notebook numbers such as ['09'], got {notebooks!r}",
                              record=name, field="notebooks")
    parent = spec.get("inherit")
    if parent is not None and (not isinstance(parent, str) or parent not in profiles):
        raise DataFormatError(
            path,
            f"inherits from {parent!r}, which is not a profile of this file (profiles: "
            f"{', '.join(map(str, profiles))})",
            record=name,
            field="inherit",
        )


def _inherit_chain(path: str | os.PathLike[str], profiles: dict[str, Any], name: str) -> list[str]:
    """``[name, parent, grandparent, …]``; a cycle is refused."""
    chain = [name]
    while (parent := profiles[chain[-1]].get("inherit")) is not None:
        if parent in chain:
            raise DataFormatError(path, f"inherit cycle {' -> '.join([*chain, parent])}", record=name,
                                  field="inherit")
        chain.append(parent)
    return chain


def profile_names() -> list[str]:
    return list(_profiles_raw()["profiles"])


#: a profile's key in ``profiles.yaml``: a two-space indented ``name:`` line under ``profiles:``
_PROFILE_KEY = re.compile(r"""^  (?P<q>["']?)(?P<name>[A-Za-z0-9_.-]+)(?P=q):\s*(?:#.*)?$""")


@cache
def declared_profile_names(path: str | os.PathLike[str] = PROFILES_FILE) -> tuple[str, ...]:
    """The profile names of a profiles file read without a YAML parser (the command line's
    ``--profile`` choices, listed by ``--help`` in milliseconds): the two-space indented keys of
    its block ``profiles:`` mapping. A file written otherwise (a flow mapping, another indent) is
    read by :func:`load_profiles` instead; tests/test_cli.py checks both give the same names."""
    names: list[str] = []
    inside = False
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        lines = []
    for line in lines:
        if line and not line[0].isspace() and not line.startswith("#"):
            inside = line.split("#", 1)[0].strip() == "profiles:"
        elif inside and (m := _PROFILE_KEY.match(line)):
            names.append(m["name"])
    return tuple(names) if names else tuple(load_profiles(path))


def resolve_profile(profiles: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
    """Parameter values of profile ``name`` of checked ``profiles`` (:func:`load_profiles`): its
    ``params`` over those of the profile it inherits, recursively."""
    if name not in profiles:
        raise UnknownProfileError(f"unknown profile {name!r}; choose one of {', '.join(profiles)}")
    spec = profiles[name]
    params: dict[str, Any] = {}
    if spec.get("inherit"):
        params.update(resolve_profile(profiles, spec["inherit"]))
    params.update(spec.get("params") or {})
    return params


def profile(name: str) -> dict[str, Any]:
    """Parameter values of a profile (``smoke``, ``default``, ``paper``).

    A profile may ``inherit`` another; its ``params`` override the parent's.
    """
    return resolve_profile(_profiles_raw()["profiles"], name)


def profile_notebooks(name: str) -> list[str] | None:
    """The notebook numbers a profile is meant for (its ``notebooks`` list in ``profiles.yaml``, or
    the one it inherits; ``python -m inferqa_utils run`` runs only those); ``None``: every notebook."""
    profiles = _profiles_raw()["profiles"]
    if name not in profiles:
        raise UnknownProfileError(f"unknown profile {name!r}; choose one of {', '.join(profiles)}")
    for n in _inherit_chain(PROFILES_FILE, profiles, name):
        if profiles[n].get("notebooks") is not None:
            return [str(x) for x in profiles[n]["notebooks"]]
    return None


def profile_description(name: str) -> str:
    return str(_profiles_raw()["profiles"][name].get("description", "")).strip()


#: the profile a run executes its notebooks under; the runner sets it for their kernels
PROFILE_ENV = "INFERQA_PROFILE"


def active_profile() -> str | None:
    """The profile of the run this process belongs to (:data:`PROFILE_ENV`; ``None`` outside a run)."""
    return os.environ.get(PROFILE_ENV) or None


def run_command(notebooks: Sequence[str], profile_name: str | None = None) -> str:
    """The command that runs ``notebooks`` (numbers or names) under ``profile_name`` (``None``: the
    command names no profile, i.e. the default one): ``python -m inferqa_utils run --profile
    triviahg --only 01``."""
    chosen = f" --profile {profile_name}" if profile_name else ""
    return f"python -m inferqa_utils run{chosen} --only {' '.join(nb[:2] for nb in notebooks)}"


def require_input(path: str | os.PathLike[str], produced_by: str, what: str = "",
                  profile_name: str | None = None) -> Path:
    """Return ``path`` if it exists, else raise saying which notebook produces it and the command
    that runs it (:func:`run_command`) under ``profile_name``, by default the profile of the run
    this process belongs to (:func:`active_profile`: a notebook's kernel under ``python -m
    inferqa_utils run``)."""
    p = Path(path)
    if not p.exists():
        label = f"{what} " if what else ""
        raise MissingInputError(
            f"missing input {label}{p}: run notebook {produced_by} first "
            f"({run_command([produced_by], profile_name or active_profile())})"
        )
    return p
