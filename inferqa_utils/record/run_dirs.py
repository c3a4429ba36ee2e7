"""Run folders and what their manifests say about how far each run got.

A run of the notebooks (:func:`inferqa_utils.run.runner.run_notebooks`) writes its executed copies
and its ``manifest.json`` into ``build/executions/<YYYYmmdd-HHMMSS>-<profile>/``, or
``<YYYYmmdd-HHMMSS>.<n>-<profile>`` for the n-th run (n ≥ 2) begun in that second
(:data:`RUN_DIR_RE`, :func:`new_run_dir`; the folder's name is the run id). Runs sort by that
second, then by ``n`` (:func:`run_order`); :func:`run_manifests` reads every run of a profile,
newest first.

A manifest says how far its run got: ``status`` (``ok``, ``failed in <notebook>``, ``interrupted
in <notebook>``, ``running`` while it runs), ``outcome`` in one word (:data:`OUTCOMES`:
``complete`` only when every notebook the profile runs finished; ``partial`` when ``--only`` chose
some of them and those finished), ``notebooks_selected``, ``notebooks_finished`` and
``notebooks_not_started``. :func:`run_outcome` reads the outcome, also off manifests that do not
record one, and :func:`describe_outcome` puts it in words. ``caches_at_start``
(:func:`cache_sizes`) says how much the reusable caches held when the run began (all 0: a run from
empty caches, whose times measure the computation rather than cache reads), ``llama_cpp``
(:func:`llama_cpp_build`) which llama.cpp build served the in-process LLMs.

    >>> run_order("20261124-080321.2-smoke")
    ('20261124-080321', 2)
    >>> describe_outcome({"status": "ok", "notebooks_selected": ["04_reading.ipynb"], "outcome": "partial",
    ...                   "notebooks": {"04_reading.ipynb": {"status": "ok"}}})
    'partial: notebook 04 only'
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import itertools
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.config import PATHS, profile_notebooks
from ..core.errors import UnknownProfileError

#: a numbered notebook's file name: ``<NN>_<name>.ipynb``
NOTEBOOK_RE = re.compile(r"^(\d\d)_.+\.ipynb$")
#: a run's folder under ``build/executions``: ``<YYYYmmdd-HHMMSS>-<profile>``, or
#: ``<YYYYmmdd-HHMMSS>.<n>-<profile>`` for the n-th run (n ≥ 2) begun in that second (:func:`new_run_dir`)
RUN_DIR_RE = re.compile(r"^(?P<stamp>\d{8}-\d{6})(?:\.(?P<seq>[1-9]\d*))?-(?P<profile>.+)$")
#: a run manifest's ``outcome``: every notebook of the profile finished; those ``--only`` chose
#: finished; a notebook raised; the run was stopped (Ctrl-C, SIGTERM); the run has not ended
OUTCOMES = ("complete", "partial", "failed", "interrupted", "running")


def discover_notebooks(folder: Path | None = None) -> list[Path]:
    """The numbered notebooks (:data:`NOTEBOOK_RE`) of ``folder`` (default ``notebooks/``), in order."""
    folder = folder or PATHS.notebooks
    return sorted(p for p in folder.glob("*.ipynb") if NOTEBOOK_RE.match(p.name))


def run_order(name: str) -> tuple[str, int] | None:
    """The sort key of a run folder's name (:data:`RUN_DIR_RE`): its second, then its number within
    that second (1 for the first run); ``None`` for a name that is not a run folder's."""
    m = RUN_DIR_RE.match(name)
    return None if m is None else (m["stamp"], int(m["seq"] or 1))


def new_run_dir(profile_name: str, executions: Path | None = None, now: _dt.datetime | None = None) -> Path:
    """Create the folder of a new run of the profile and return it: ``<executions>/<stamp>-<profile>``
    (default ``build/executions``), or ``<stamp>.2-<profile>``, ``<stamp>.3-<profile>``, … when runs
    begun in the same second hold the names before it. ``mkdir`` without ``exist_ok`` is atomic, so
    two runs starting at once never share a folder, a manifest or a run id."""
    folder = executions or PATHS.executions
    folder.mkdir(parents=True, exist_ok=True)
    stamp = (now or _dt.datetime.now()).strftime("%Y%m%d-%H%M%S")
    for n in itertools.count(1):
        candidate = folder / (f"{stamp}-{profile_name}" if n == 1 else f"{stamp}.{n}-{profile_name}")
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        return candidate
    raise AssertionError("unreachable")  # pragma: no cover - itertools.count never ends


def _bytes_under(path: Path) -> int:
    """Bytes of a file, or of every file below a folder; 0 when absent."""
    if path.is_file():
        return path.stat().st_size
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):  # removed while walking
                total += (Path(folder) / name).stat().st_size
    return total


def cache_sizes() -> dict[str, int]:
    """Bytes held by each cache a run reuses: the LLM generation cache (``$INFERQA_LLM_CACHE``,
    default ``.cache/llm/cache.sqlite``) with its KV snapshots, the embedding vectors
    (``.cache/embeddings``), and the stamped indexes, runs and built datasets under ``build/``.
    Downloaded models are not counted: a run from empty caches still needs them."""
    llm = Path(os.environ.get("INFERQA_LLM_CACHE", PATHS.cache / "llm" / "cache.sqlite"))
    return {"llm": _bytes_under(llm) + _bytes_under(llm.parent / "kv"),
            "embeddings": _bytes_under(PATHS.cache / "embeddings"), "indexes": _bytes_under(PATHS.indexes),
            "runs": _bytes_under(PATHS.runs), "datasets": _bytes_under(PATHS.datasets)}


def llama_cpp_build() -> dict[str, Any] | None:
    """The llama.cpp build that serves in-process LLMs: llama-cpp-python's version and the CPU
    features it was compiled for (``llama_print_system_info``; ``AVX512 = 0`` in a portable x86-64
    build made by ``scripts/setup_env.sh``) — greedy tokens can differ between builds."""
    try:
        import llama_cpp
    except ImportError:
        return None
    return {
        "version": llama_cpp.__version__,
        "system_info": llama_cpp.llama_print_system_info().decode().strip(),
    }


def run_manifests(profile_name: str, executions: Path | None = None) -> list[tuple[Path, dict[str, Any]]]:
    """Every readable run manifest of the profile, newest first (:func:`run_order`),
    ``[(path, content)]``: the ``manifest.json`` of each ``build/executions/<run id>/`` folder
    (:data:`RUN_DIR_RE`; the ``latest-<profile>`` link is not followed: a test may have pointed it
    elsewhere)."""
    folder = executions or PATHS.executions
    if not folder.is_dir():
        return []
    runs = []
    for d in folder.iterdir():
        m = RUN_DIR_RE.match(d.name)
        if m and m["profile"] == profile_name and not d.is_symlink() and (d / "manifest.json").is_file():
            runs.append((run_order(d.name), d / "manifest.json"))
    out = []
    for _order, path in sorted(runs, reverse=True):
        try:
            content = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(content, dict):
            out.append((path, content))
    return out


def latest_run_manifest(
    profile_name: str, executions: Path | None = None
) -> tuple[Path, dict[str, Any]] | None:
    """The newest readable run manifest of the profile, ``(path, content)``, or ``None``."""
    found = run_manifests(profile_name, executions)
    return found[0] if found else None


def finished_notebooks(m: Mapping[str, Any]) -> list[str]:
    """The notebooks (file names) a run manifest records as finished (their ``status`` ``ok``)."""
    per_nb = m.get("notebooks") if isinstance(m.get("notebooks"), dict) else {}
    return [name for name, info in per_nb.items() if isinstance(info, dict) and info.get("status") == "ok"]


def unfinished_notebooks(m: Mapping[str, Any]) -> list[str]:
    """The numbers of the notebooks a run selected but did not finish (the one that raised and those
    that never started); a manifest without ``notebooks_selected`` gives those it recorded unfinished."""
    selected = m.get("notebooks_selected")
    if not isinstance(selected, list):
        per_nb = m.get("notebooks") if isinstance(m.get("notebooks"), dict) else {}
        selected = list(per_nb)
    done = set(finished_notebooks(m))
    return [str(name)[:2] for name in selected if name not in done]


def run_outcome(m: Mapping[str, Any], profile_name: str | None = None) -> str:
    """A run manifest's ``outcome`` (:data:`OUTCOMES`), or ``unknown``. A manifest that does not
    record one (an older runner's, or the run ``paper-runs import`` files) is read off its status
    and the notebooks it finished: ``complete`` when they cover every notebook the profile runs
    (its ``notebooks`` list in ``profiles.yaml``, else every numbered notebook), else ``partial``."""
    recorded = m.get("outcome")
    if recorded in OUTCOMES:
        return str(recorded)
    status = m.get("status")
    if not isinstance(status, str):
        return "unknown"
    if status != "ok":
        word = status.split(" ", 1)[0]
        return word if word in OUTCOMES else "unknown"
    params = m.get("parameters") if isinstance(m.get("parameters"), dict) else {}
    name = profile_name or params.get("profile")
    try:
        meant = profile_notebooks(name) if isinstance(name, str) else None
    except UnknownProfileError:
        return "unknown"
    wanted = set(meant) if meant is not None else {nb.name[:2] for nb in discover_notebooks()}
    done = {nb[:2] for nb in finished_notebooks(m)}
    return "complete" if wanted and wanted <= done else "partial"


def describe_outcome(m: Mapping[str, Any], profile_name: str | None = None) -> str:
    """A run manifest's outcome in words (:func:`run_outcome`): ``complete``, ``partial: notebooks
    02, 03 only``, the status of a run that stopped (``failed in 03_reranking.ipynb``,
    ``interrupted in …``), ``not ended (status running)`` or ``outcome not recorded``."""
    outcome = run_outcome(m, profile_name)
    if outcome == "complete":
        return outcome
    if outcome == "partial":
        done = sorted({nb[:2] for nb in finished_notebooks(m)})
        return f"partial: notebook{'s' * (len(done) != 1)} {', '.join(done)} only" if done else outcome
    if outcome in ("failed", "interrupted"):
        status = m.get("status")
        return status if isinstance(status, str) and status.startswith(outcome) else outcome
    if outcome == "running":
        return "not ended (status running)"
    return "outcome not recorded"


def llm_rates(manifest: Mapping[str, Any]) -> dict[str, dict[str, float]] | None:
    """The LLM rates the run measured on its host before its first notebook (the manifest's
    ``projection.rates``: ``{model: {prefill_tok_s, decode_tok_s}}``), so a time is read beside the
    speed of the host that took it; ``None`` when the run did not measure them."""
    projection = manifest.get("projection")
    rates = projection.get("rates") if isinstance(projection, Mapping) else None
    if not isinstance(rates, Mapping):
        return None
    keys = ("prefill_tok_s", "decode_tok_s")
    out = {str(model): {k: float(r[k]) for k in keys} for model, r in rates.items()
           if isinstance(r, Mapping) and all(isinstance(r.get(k), int | float) for k in keys)}
    return out or None
