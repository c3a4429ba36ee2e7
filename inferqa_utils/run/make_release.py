"""``python -m inferqa_utils release --profile NAME``: the complete construction of a profile's
dataset, written as a dataset release (:mod:`inferqa_utils.construction.release`).

Steps: the full build of notebook 01 under the profile's parameters (paper 000 §3: leakage,
convergence, parametric filter, splits, subset-permutation passages, labelling, pool expansion,
verification), into ``build/release/<name>/`` (resumable: finished questions come from its label
checkpoint, LLM replies from the generation cache); then notebook 02's answer-containing control
corpus and its pooled LLM relevance judgments (:func:`inferqa_utils.retrieval.pooled.fair_control`,
the same rule as the labels); then the release, written atomically to ``data/<name>/release``
(or ``--out``). The manifest records the parameters, each model's sha256, the code commit, and per
step the seconds and LLM calls and tokens.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .. import stages
from ..construction.build import build_dataset
from ..construction.build_config import profile_build_config
from ..construction.release import write_release
from ..construction.steps import step_costs
from ..construction.store import load_built
from ..construction.verification import load_decisions
from ..core import models
from ..core.config import PATHS, profile, set_seeds
from ..record.manifest import git_commit, machine_info, package_versions
from ..record.run_dirs import llama_cpp_build
from ..sources import SourceLicence, source_licence

#: the profile parameters of notebook 02's fair control that the release's judgments follow
CONTROL_PARAMETERS = (
    "split", "control_relevance", "pool_depth", "pool_retrievers", "pool_questions", "size_matched",
    "reader_model", "judge_model", "run_depth",
)


def default_out(name: str) -> Path:
    """Where a release of dataset ``name`` is written by default: ``data/<name>/release``."""
    return PATHS.data / name / "release"


def make_release(profile_name: str, out: str | Path | None = None, log: Callable[[str], None] = print,
                 progress: bool = True) -> Path:
    """Build the profile's dataset completely and write it as a release (module docstring)."""
    set_seeds()
    params = profile(profile_name)
    cfg = profile_build_config(profile_name)
    cfg.output_dir = str(PATHS.build / "release" / cfg.name)
    licence = source_licence(cfg.source)  # before building: a missing licence stops the release here
    out = Path(out) if out is not None else default_out(cfg.name)
    t0 = time.perf_counter()
    code = git_commit()  # the code that builds, whatever is committed while it runs
    log(f"[release] {profile_name}: building {cfg.name!r} from {cfg.source!r} in {cfg.output_dir}")
    res = build_dataset(cfg, overwrite=True, progress=progress, log=log)
    steps = dict(res.step_costs)

    judgments, control, control_params = None, None, {k: params.get(k) for k in CONTROL_PARAMETERS}
    if params.get("control_relevance") == "llm":
        judgments, control, steps["control judgments"] = _control_judgments(
            cfg.name, Path(cfg.output_dir), params, progress, log
        )
    used = sorted({*(cfg.parametric_models or cfg.labelers), *cfg.labelers, cfg.convergence_model,
                   *([cfg.judge_model] if cfg.judge_model else []),
                   *([params["reader_model"]] if judgments is not None else [])})
    manifest: dict[str, Any] = {
        "name": cfg.name,
        "profile": profile_name,
        "command": f"python -m inferqa_utils release --profile {profile_name}",
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "code": code,
        "versions": package_versions(),
        "llama_cpp": llama_cpp_build(),
        "machine": machine_info(),
        "models": {m: {"sha256": _checksum(m)} for m in used},
        "parameters": {"build": {k: v for k, v in asdict(cfg).items() if k not in ("output_dir",)},
                       "control": control_params},
        "fingerprint": cfg.fingerprint(),
        "steps": steps,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    decisions = load_decisions(cfg.decisions_path)
    folder = write_release(
        cfg.output_dir, out, manifest, control_corpus=control, judgments=judgments, decisions=decisions,
        readme=_readme(cfg.name, profile_name, res.manifest, judgments, licence),
        licence=licence.file if licence is not None else None,
    )
    log(f"[release] wrote {folder} in {time.perf_counter() - t0:.1f} s")
    return folder


def _control_judgments(name: str, folder: Path, params: dict[str, Any], progress: bool,
                       log: Callable[[str], None]) -> tuple[Any, dict[str, str], dict[str, Any]]:
    """Notebook 02's pooled judgments of both corpora, on the build in ``folder``."""
    from ..llm import load_llm
    from ..retrieval import pooled
    from ..retrieval.control import control_corpus
    from ..retrieval.registry import run_all

    t = time.perf_counter()
    ds = load_built(name, folder=folder)
    split = params.get("split", "test")
    corpus, queries = stages.corpus_of(ds), stages.queries_of(ds, split)
    control, _ = control_corpus(ds, split)
    if not control:
        log("[release] no answer-containing references: no control judgments")
        return None, {}, {"seconds": 0.0, "llm": {}}
    retrievers = list(params.get("pool_retrievers") or [])
    depth = int(params.get("run_depth", 100))
    runs = run_all(retrievers, corpus, queries, name, stages.Corpus.SUPPORTING, k=depth)
    control_runs = run_all(retrievers, control, queries, name, stages.Corpus.CONTAINING, k=depth)
    reader, judge = load_llm(params["reader_model"]), load_llm(params["judge_model"])
    before = {m.name: m.stats.as_dict() for m in (reader, judge)}
    settings = pooled.PoolSettings(
        depth=int(params.get("pool_depth", 5)),
        max_questions=params.get("pool_questions"),
        size_matched=bool(params.get("size_matched", True)),
    )
    fair = pooled.fair_control(ds, split, pooled.RankedCorpus(corpus, runs),
                               pooled.RankedCorpus(control, control_runs), reader, judge, settings,
                               progress=progress)
    after = {m.name: m.stats.as_dict() for m in (reader, judge)}
    cost = step_costs({"control judgments": time.perf_counter() - t},
                      {"start": before, "control judgments": after})["control judgments"]
    log(f"[release] control: {len(control)} reference passages, {len(fair.judgments)} pooled judgments")
    return fair.judgments, control, cost


def _checksum(name: str) -> str | None:
    try:
        return models.checksum(name)
    except models.ModelError:
        return None


def _readme(name: str, profile_name: str, build: dict[str, Any], judgments: Any,
            licence: SourceLicence | None = None) -> str:
    counts = build.get("counts") or {}
    per_split = counts.get("per_split") or {}
    lines = [
        f"# Dataset release `{name}`",
        "",
        f"Written by `python -m inferqa_utils release --profile {profile_name}` (the compendium's "
        "construction",
        "code, paper 000 §3); `manifest.json` records the parameters, each model's sha256, the code commit, "
        "the",
        "time and LLM tokens of every step, and the sha256 of every file here. Do not edit these files: the",
        "default run verifies them and rebuilds a seeded sample of questions to compare (notebook 01).", "",
        "| file | what |", "|---|---|",
        "| `train.json`, `dev.json`, `test.json` | QUIT-shaped splits: `answers` = the expanded answer pool, "
        "`gold_answers`, `hints` (the kept hints, with convergence), `subsets` = {mask: {permutation: "
        "{labeler: generated answer}}} |",
        "| `corpus/corpus.jsonl` | every passage, `{id, contents}` (id `<qid>_<mask>_<permutation>`) |",
        "| `qrels/<split>.qrels` | TREC qrels: 2 = a labeler's answer was accepted, 1 = own passage, not "
        "answered |",
        "| `distractors.json` | questions whose passages are in the corpus only |",
        "| `construction/*.csv` | every question's fate, every hint's convergence, closed-book answers, pool "
        "expansions, guard refusals, difficulty, Table 1 |",
        "| `verification.json` | the human decisions applied to the answer pools |",
    ]
    if judgments is not None:
        lines.append(
            "| `control/corpus.jsonl`, `control/judgments.tsv` | the answer-containing control corpus and "
            "the "
            "pooled LLM relevance judgments of both corpora (notebook 02) |"
        )
    lines += [
        "",
        f"Questions per split: {per_split}; passages: {counts.get('passages')}; labels over own passages "
        f"per split: {counts.get('labels_per_split')}.",
        "",
    ]
    if licence is not None:
        lines += ["## Source and licence", "", licence.attribution, ""]
    return "\n".join(lines)
