"""``paper-runs import``: read a local copy of the release, score it, write it as a notebook run.

:func:`import_release` checks its options and loads and validates every file first (nothing is
written when an option does not fit the release or a file is malformed), scores it
(:mod:`~inferqa_utils.paper_runs.scoring`, :mod:`~inferqa_utils.paper_runs.findings`) and then
writes the files of :mod:`~inferqa_utils.paper_runs.export`. Outside a notebook run it then files
itself as a run of stage 09 under the ``paper-runs`` profile
(:func:`~inferqa_utils.paper_runs.export.record_run`); in notebook 09, run by
``python -m inferqa_utils run``, the runner records the run.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import contract
from .export import FT_BASE, Tables, import_record, record_run, write_all
from .findings import UNION, VANILLA_MONOT5, K, findings_table, verdict_counts
from .load import DEPTH, Release, load_release
from .scoring import HIT_KS, answers_frame, em_table, retrieval_summary


@dataclass
class Imported:
    """An import: the release read, the tables computed, the files written and the seconds taken."""

    release: Release
    tables: Tables
    written: list[Path]
    seconds: float


def score_release(
    release: Release, k: int = K, union: str = UNION, vanilla_monot5: str = VANILLA_MONOT5
) -> Tables:
    """Every table of an import, computed in memory (nothing written)."""
    answers = answers_frame(release)
    findings = findings_table(release, k, union, vanilla_monot5=vanilla_monot5)
    return Tables(answers, em_table(answers), retrieval_summary(release), findings, verdict_counts(findings))


def check_options(k: int, depth: int) -> None:
    """Refuse ``--k`` or ``--depth`` values no release can be scored with (``ValueError``, one line
    naming the option and the value): ``k`` below 1; ``depth`` below 1, or below the largest
    Hit@k scored (:data:`~inferqa_utils.paper_runs.scoring.HIT_KS`), which a ranking cut shorter
    could not reach."""
    if k < 1:
        raise ValueError(f"--k {k}: the EM comparisons read the top k passages; k must be at least 1")
    if depth < 1:
        raise ValueError(f"--depth {depth}: the ranked passages kept per question must be at least 1")
    deepest = max(HIT_KS)
    if depth < deepest:
        raise ValueError(
            f"--depth {depth}: below {deepest}, the deepest cut-off scored (Hit@{deepest}); a ranking "
            f"cut at {depth} would score as if it ended there; give --depth {deepest} or more"
        )


def check_reading(release: Release, k: int, union: str) -> None:
    """Refuse a ``--k`` (or ``--union``) at which no reader file of ``release`` answers: every EM
    comparison would be empty (``ValueError``, one line naming the option and the value). A
    release without reader files compares no EM and passes."""
    released = {(u, kk) for r in release.readings for (_, u, kk) in r.predictions}
    if not released or (union, k) in released:
        return
    ks = sorted({kk for u, kk in released if u == union})
    if not ks:
        unions = ", ".join(f"Union_{u}" for u in sorted({u for u, _ in released}))
        raise ValueError(
            f"--union {union}: the release's reader files have no Union_{union} answers (only {unions})"
        )
    raise ValueError(
        f"--k {k}: the release's reader files answer at k = {', '.join(map(str, ks))} only "
        f"(Union_{union}); every EM comparison at k = {k} would be empty"
    )


def import_release(
    source: str | Path, root: str | Path | None = None, dataset: str = contract.DATASET, k: int = K,
    union: str = UNION, depth: int = DEPTH, ft_base: str = FT_BASE, vanilla_monot5: str = VANILLA_MONOT5,
    log: Callable[[str], Any] = print,
) -> Imported:
    """Load, validate and score the release under ``source``, then write it under ``root`` (the
    repository root by default) as dataset ``dataset``, split ``test``, and — unless a notebook run
    is under way (the runner files its notebooks' outputs) — file it as a run of stage 09: the
    tables go to a new run folder of the ``paper-runs`` profile
    (:func:`~inferqa_utils.paper_runs.export.record_run`). ``k``, ``union`` and ``depth`` that do
    not fit are refused before anything is written (:func:`check_options`,
    :func:`check_reading`)."""
    from ..core.config import RUN_DIR_ENV
    from ..record.run_dirs import new_run_dir

    if union not in ("norm", "freq"):
        raise ValueError(f"union must be 'norm' or 'freq', got {union!r}")
    check_options(k, depth)
    t0 = time.perf_counter()
    started = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    release = load_release(source, depth, log)
    check_reading(release, k, union)
    log(
        f"[paper-runs] {len(release.questions)} questions, {len(release.rankings)} rankings, "
        f"{len(release.readings)} reader files, readers {', '.join(release.readers) or 'none'}"
        + (f"; not recognised: {', '.join(release.unknown)}" if release.unknown else "")
    )
    tables = score_release(release, k, union, vanilla_monot5)
    params = {
        "dataset": dataset, "split": contract.SPLIT, "k": k, "union": union, "depth": depth,
        "ft_base": ft_base, "vanilla_monot5": vanilla_monot5,
    }
    record = import_record(release, source, params)
    executions = contract.paths(root).executions
    own_run = None if os.environ.get(RUN_DIR_ENV) else new_run_dir(contract.PROFILE, executions)
    if own_run is not None:
        os.environ[RUN_DIR_ENV] = str(own_run.resolve())
    try:
        written = write_all(root, release, tables, record, dataset, ft_base, log)
    except BaseException:
        if own_run is not None:  # nothing of a failed import stays in its run's folder
            shutil.rmtree(own_run, ignore_errors=True)
        raise
    finally:
        if own_run is not None:
            os.environ.pop(RUN_DIR_ENV, None)
    seconds = time.perf_counter() - t0
    log(f"[paper-runs] {len(written)} files written in {seconds:.1f} s")
    if own_run is not None:
        record_run(own_run, written, params, seconds, started, log)
    return Imported(release, tables, written, seconds)
