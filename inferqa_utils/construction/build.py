"""The dataset-construction pipeline (paper 000 §3 steps 1–9) on any loaded source.

:func:`build_dataset` runs, in order, the steps of :mod:`.steps`: hint cleaning, the leakage
filter, the hint-count check, question type and difficulty, the parametric filter, splits,
candidates and convergence (top-k hints), subset-permutation passages, labeling (checkpointed per
question), the verification update, and the export (QUIT-shaped splits, ``corpus.jsonl``, TREC
qrels, tables, manifest) to ``build/datasets/<name>/`` (replacing that folder atomically). Its
parameters are a :class:`~.build_config.BuildConfig`. The fingerprint of a build and the name of
its label checkpoint hash the parameters and the content of the source files; each checkpoint
line, the labeling inputs of its question. Every dropped question is recorded with its reason;
nothing crashes on a bad record. LLM replies are cached, so a re-run with unchanged inputs makes
no model call.

Where the source stores a per-hint answer-leakage score (WikiHint), the build reports it beside
the decision of our own filter (paper 000 §3.1.2), which alone decides what is dropped:
:attr:`~.build_config.BuildResult.leakage_agreement`, ``leakage_agreement.csv`` and the manifest's
``leakage_disagreements`` counts.

As in QUIT, the corpus holds the passages of *every* usable source question: the first
``max_questions`` are built (filtered, split, possibly labelled), the rest are distractors whose
passages are label 0 for every built question. LLM time goes only where an analysis reads the
result: labels for the ``label_splits`` (the others' own passages are label 1, "own hints,
answerability not labelled"), LLM-judged convergence for those questions (the others use stored
scores or the source's hint order).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from .. import sources
from ..core.atomic import recover_dir
from ..ir.datamodel import Question
from ..llm import load_llm
from ..llm.base import LLM
from .build_config import BuildConfig, BuildResult, matching_profiles, parameter_differences
from .export_build import BuildConflictError, export_build, kept_entries, refuse_foreign_files
from .steps import (
    BuildModels,
    BuildRun,
    apply_verification,
    assemble_result,
    assign_splits,
    label_passages,
    make_passages,
    parametric_filter,
    screen_questions,
    select_hints,
    select_questions,
    type_and_difficulty,
)


def build_dataset(
    cfg: BuildConfig,
    progress: bool = True,
    overwrite: bool = False,
    llm_loader: Callable[[str], LLM] | None = None,
    log: Callable[[str], None] = print,
) -> BuildResult:
    """Run paper 000 §3 end to end for ``cfg`` and export to ``cfg.out_dir`` (see module docstring).

    An existing export made with other parameters or other source file contents is never
    overwritten silently: it raises :class:`BuildConflictError` unless ``overwrite=True`` (a folder
    holding other files than a build is never replaced). The export replaces ``cfg.out_dir`` as a
    whole and atomically, its labeling ``checkpoint/`` kept (:mod:`.export_build`).
    """
    prepare_output(cfg)
    start = time.perf_counter()  # the first step's time includes loading the source
    every, source_sha = load_source_checked(cfg, overwrite, log)
    run = BuildRun(cfg, BuildModels(llm_loader or load_llm), source_sha, progress, log)
    chosen = select_questions(cfg, every)
    with run.timed("leakage", start):
        alive, distractors = screen_questions(run, every if cfg.corpus_all_source else chosen,
                                              {q.qid for q in chosen})
    with run.timed("type_difficulty"):
        difficulty, embed_backends = type_and_difficulty(run, chosen, alive, every)
    with run.timed("parametric"):
        par, parametric = parametric_filter(run, alive)
    plan = assign_splits(run, alive, parametric)
    with run.timed("convergence"):
        select_hints(run, plan, distractors)
    passages, by_q = make_passages([*plan.questions, *distractors])
    with run.timed("labeling"):
        labels = label_passages(run, plan, by_q)
    updates = apply_verification(run, plan.questions, distractors, labels)
    res = assemble_result(run, plan, distractors, passages, by_q, labels, updates, par, difficulty)
    res.manifest = export_build(res, run.models.identities(), run.models.backends(), embed_backends)
    log(f"built {cfg.name!r}: {len(plan.questions)} questions ({len(plan.to_label)} labelled: "
        f"{', '.join(plan.label_splits) or 'none'}), {len(passages)} passages ({len(distractors)} distractor "
        f"questions) → {res.out_dir}")
    return res


def prepare_output(cfg: BuildConfig) -> None:
    """Before a build: an export swap killed half-way is undone (the old build and its checkpoint
    back), and a folder holding files that are not a build is refused (:class:`BuildConflictError`)."""
    out = cfg.out_dir
    recover_dir(out, kept_entries(cfg))
    refuse_foreign_files(out, cfg)


def load_source_checked(cfg: BuildConfig, overwrite: bool,
                        log: Callable[[str], None] = print) -> tuple[list[Question], str]:
    """Every question of the source and the content hash of its files (computed once per build,
    after loading: a hub source's files are local by then), once :func:`_check_conflict` has
    found no other build in the output folder (or ``overwrite`` allows replacing it)."""
    src = sources.load_source(cfg.source)
    source_sha = cfg.source_sha256()
    _check_conflict(cfg.out_dir, cfg, overwrite, log, source_sha)
    return list(src), source_sha


def _check_conflict(out: Path, cfg: BuildConfig, overwrite: bool, log: Callable[[str], None] = print,
                    source_sha256: str | None = None) -> None:
    """Refuse to overwrite a build made with other parameters or other source file contents
    (unless ``overwrite``): the error names each difference and the profile that made the existing
    build. A build with the same fingerprint is reused (said in one line: the checkpoint and LLM
    cache make it cheap). ``source_sha256``: the source files' content hash (computed when None)."""
    m = out / "manifest.json"
    if not m.exists():
        return
    try:
        old = json.loads(m.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        old = {}
    fp = old.get("fingerprint")
    here_sha = cfg.source_sha256() if source_sha256 is None else source_sha256
    made = ", ".join(f"`make run PROFILE={p}`" for p in matching_profiles(fp, old.get("source_sha256", ""))) \
        or "another parameter set"
    if fp == cfg.fingerprint(here_sha):
        log(f"{out} holds a build with these parameters ({made}): reusing it — labelled questions come from "
            "the checkpoint, LLM replies from the cache")
        return
    if overwrite:
        log(f"replacing the build in {out} (made by {made}): overwrite=True")
        return
    diffs = parameter_differences(old.get("parameters") or {}, cfg)
    there_sha = old.get("source_sha256")
    if there_sha != here_sha:
        diffs.append(
            f"content of the source files of {cfg.source!r}: sha256 {str(there_sha or 'not recorded')[:12]} "
            f"there → {here_sha[:12] or 'no file found'} here"
        )
    listed = "; ".join(diffs[:8]) + (f"; and {len(diffs) - 8} more" if len(diffs) > 8 else "")
    raise BuildConflictError(
        f"{out} holds a build with other parameters or source files (fingerprint {fp} ≠ "
        f"{cfg.fingerprint(here_sha)}; made by {made}). "
        f"Differences: {listed or 'none recorded (an older manifest)'}. To show that build, set these "
        "parameters "
        "back (a notebook's defaults are the default profile's: scripts/sync_notebook_parameters.py); to "
        "keep "
        "both, choose another dataset_name; to replace it, pass overwrite=True"
    )
