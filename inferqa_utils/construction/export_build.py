"""Export of a build (docs/data.md): QUIT-shaped splits, corpus, qrels, tables and the manifest.

The export replaces the output folder as a whole (:mod:`inferqa_utils.core.atomic`): everything is
written to a new folder beside it that is swapped in once complete, so an interrupted export
leaves the old build, and files the new build does not write do not survive. What is not the
export's own — the labeling ``checkpoint/`` and a verification file kept inside the folder — is
moved across from the old folder (:func:`kept_entries`).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..answering.prompts import READER_LAYOUT
from ..core.atomic import staged_dir
from ..core.errors import InferQAError
from ..core.fingerprint import sha256_file, sha256_file_once
from ..record.manifest import git_commit, package_versions
from ..sources import source_files
from .build_config import CHECKPOINT_DIR
from .file_formats import write_quit
from .leakage import leakage_disagreements
from .stats import check_invariants, label_counts, table1

if TYPE_CHECKING:
    from .build_config import BuildConfig, BuildResult


class BuildConflictError(InferQAError):
    """The output folder holds a build made with other parameters or source files (or files that
    are not a build)."""


def kept_entries(cfg: BuildConfig) -> tuple[str, ...]:
    """Top-level entries of the output folder an export carries over from the old build: the
    checkpoint folder, and the verification file's first path part when it lies inside the folder."""
    keep = [CHECKPOINT_DIR]
    try:
        rel = cfg.decisions_path.resolve().relative_to(cfg.out_dir.resolve())
    except ValueError:
        rel = None
    if rel is not None and rel.parts and rel.parts[0] not in keep:
        keep.append(rel.parts[0])
    return tuple(keep)


def refuse_foreign_files(out: Path, cfg: BuildConfig) -> None:
    """A :class:`BuildConflictError` when ``out`` holds files but no build (no ``manifest.json``)
    beyond what an export keeps: the export replaces the whole folder and would delete them."""
    if not out.is_dir() or (out / "manifest.json").exists():
        return
    foreign = sorted(p.name for p in out.iterdir() if p.name not in kept_entries(cfg))
    if foreign:
        raise BuildConflictError(
            f"{out} holds files that are not a build "
            f"({', '.join(foreign[:5])}{', …' if len(foreign) > 5 else ''}): "
            "a build's export replaces the whole folder. Choose another output_dir (or dataset_name), or "
            "move "
            "those files away"
        )


def export_build(res: BuildResult, model_identities: dict[str, str],
                 model_backends: dict[str, dict[str, Any]] | None = None,
                 embed_backends: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Write everything to ``res.out_dir``, replacing it atomically (module docstring), and return
    the manifest (also ``manifest.json``). ``model_backends``: which backend served each LLM
    (:meth:`~inferqa_utils.llm.LLM.describe`); ``embed_backends``: which encoded each embedding
    model (``Embedder.describe``)."""
    refuse_foreign_files(res.out_dir, res.config)
    with staged_dir(res.out_dir, keep=kept_entries(res.config)) as tmp:
        manifest = _write_export(res, tmp, model_identities, model_backends, embed_backends)
    return manifest


def _write_export(res: BuildResult, out: Path, model_identities: dict[str, str],
                  model_backends: dict[str, dict[str, Any]] | None,
                  embed_backends: dict[str, dict[str, Any]] | None) -> dict[str, Any]:
    """Every file of the export, written into the (new, empty) folder ``out``; the manifest."""
    ds, cfg = res.dataset, res.config
    source_sha = ds.meta.get("source_sha256")
    if source_sha is None:
        source_sha = cfg.source_sha256()
    written = write_quit(ds, out)
    written["distractors"] = out / "distractors.json"
    written["distractors"].write_text(
        json.dumps(
            [
                {
                    "id": q.qid,
                    "question": q.question,
                    "answers": list(q.meta.get("gold_answers") or q.answers),
                    "hints": [{"hint": h} for h in q.hint_texts],
                }
                for q in res.distractors
            ],
            ensure_ascii=False,
            indent=1,
        ),
        encoding="utf-8",
    )
    res.questions.to_csv(out / "questions.csv", index=False)
    res.hints.to_csv(out / "hints.csv", index=False)
    res.parametric.to_csv(out / "parametric.csv", index=False)
    res.expansions.to_csv(out / "pool_expansions.csv", index=False)
    res.refusals.to_csv(out / "guard_refusals.csv", index=False)
    if res.difficulty is not None:
        res.difficulty.to_csv(out / "difficulty.csv", index=False)
    if len(res.leakage_agreement):  # the source's stored leakage score beside our filter, per hint
        written["leakage_agreement"] = out / "leakage_agreement.csv"
        res.leakage_agreement.to_csv(written["leakage_agreement"], index=False)
    t1 = table1(ds)
    t1.to_csv(out / "table1.csv")
    inv = check_invariants(ds, cfg.k_hints)
    inputs = {}
    for f in source_files(cfg.source):
        inputs[str(f)] = sha256_file_once(f)  # read once: the fingerprint hashed them already
    if cfg.decisions_path.exists():
        inputs[str(cfg.decisions_path)] = sha256_file(cfg.decisions_path)
    dropped = res.dropped
    manifest = {
        "name": cfg.name,
        "fingerprint": cfg.fingerprint(source_sha),
        "source_sha256": source_sha,
        "parameters": {k: v for k, v in cfg.__dict__.items()},
        "reader_layout": READER_LAYOUT,  # the reader prompt the labelers' answers were generated with
        "counts": {
            "source_questions": len(res.questions),
            "questions": len(ds.questions),
            "per_split": {s: len(v) for s, v in ds.splits.items()},
            "passages": len(ds.passages),
            "passages_per_question": inv["passages_per_question"],
            "labels": {str(k): v for k, v in label_counts(ds).items()},
            "labels_per_split": {
                s: {str(k): v for k, v in label_counts(ds, q).items()} for s, q in ds.splits.items()
            },
            "dropped_by_reason": dict(Counter(dropped["reason"])),
            "leakage_disagreements": leakage_disagreements(res.leakage_agreement),
            "distractor_questions": ds.meta.get("distractor_questions", 0),
            "questions_with_label2_per_split": {
                s: sum(any(v == 2 for v in ds.qrels.get(q, {}).values()) for q in ids)
                for s, ids in ds.splits.items()
            },
        },
        "labelled_splits": ds.meta.get("labelled_splits"),
        "parametric": _parametric_summary(res),
        "answer_pool": {
            "expansions": res.expansions.to_dict(orient="records"),
            "expansions_by_status": dict(Counter(res.expansions["status"])) if len(res.expansions) else {},
            "guard_refusals_by_rule": dict(Counter(res.refusals["rule"])) if len(res.refusals) else {},
            "parametric_guard_refusals_by_rule": (
                dict(Counter(res.parametric["guard"].dropna())) if "guard" in res.parametric else {}
            ),
        },
        "invariants": inv,
        "table1": json.loads(t1.to_json(orient="index")),
        "models": model_identities,
        "llm_backends": model_backends or {},
        "embed_backends": embed_backends or {},
        "llm_stats": res.llm_stats,
        "timings_s": {k: round(v, 2) for k, v in res.timings.items()},
        "step_costs": res.step_costs,
        "inputs_sha256": inputs,
        "outputs": {k: str(v.relative_to(out)) for k, v in written.items()},
        "versions": package_versions(),
        "git": git_commit(),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, default=str), encoding="utf-8")
    return manifest


def _parametric_summary(res: BuildResult) -> dict[str, Any]:
    """Closed-book accuracy per model (strict EM and judged) and the parametric count."""
    par = res.parametric
    if par.empty:
        return {}
    per_model = {m: {"questions": int(g["qid"].nunique()), "em": int(g.groupby("qid")["em"].any().sum()),
                     "judged": int(g.groupby("qid")["correct"].any().sum())} for m, g in par.groupby("model")}
    return {"per_model": per_model, "parametric_questions": int(par.groupby("qid")["correct"].any().sum())}

