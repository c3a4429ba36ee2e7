"""Write an imported release as the files a notebook run writes, so the findings and the check read
the paper's runs as they read ours (every name from the stage registry, through
:mod:`inferqa_utils.paper_runs.contract`).

Under a root folder (the repository root by default; tests pass a temporary folder):

* qrels ``build/datasets/<dataset>/qrels/test.qrels`` — every passage of each question's pool with
  its label — and ``baseline.qrels`` (baseline.json's labels) when the release has baselines;
* one TREC run per released ranking, ``build/runs/<dataset>/<supporting|msmarco|wiki>/<system>.trec``,
  scores ``n − rank`` (the released order is the ranking; the authors' scripts read the order,
  never the scores), cut at the import depth;
* the per-question tables of notebooks 02 (the retrievers at label ≥ 1 and, for the cross-corpus
  comparison, Hit@k at label 2 on QUIT and on the relabelled MS MARCO / Wikipedia baselines),
  03 (first stages, first stage + reranker, oracle rerankers) and 05 (the fine-tuned retrievers of
  one base model and that model, as notebook 05 fine-tunes one retriever);
* the answers tables of notebooks 04 (Optimal, retrievers, retriever + reranker, oracle rerankers)
  and 05 (the fine-tuned systems and the retrievers they are compared with), one row per question,
  system, reader, k and union, ``em`` our normalised EM and ``em_raw`` the authors';
* stage 09's tables (:data:`~inferqa_utils.paper_runs.contract.OWN_TABLES`): ``retrieval`` (every
  ranking as the authors score it), ``em`` (both scorings and their disagreements), ``findings``
  and ``findings_summary``, and the record ``import.json`` (what was read, with sizes and sha256).

:func:`write_all` writes them as one set (:mod:`inferqa_utils.paper_runs.staging`): all of them
into a staging folder ``<root>/build/.paper-runs-<dataset>.<pid>-<random>/``, then renamed into place,
the record last; a failure on the way leaves the files of the earlier import as they were, and
what a killed import left is undone by the next one (:func:`recover_import`).

:func:`record_run` then files the import as a run of stage 09 under the ``paper-runs`` profile, as
the notebook runner files a notebook's run: a run manifest ``build/executions/<stamp>-paper-runs/``
and the run's folder and manifest (:mod:`inferqa_utils.record.run_outputs`), so that
``python -m inferqa_utils check --profile paper-runs`` finds the run whose tables it reads.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.fingerprint import sha256_file
from ..ir.runs import ids_to_run_list
from ..ir.trec import write_qrels, write_run
from . import contract, staging
from .load import Ranking, Release
from .scoring import MEASURES, per_question_rows

if TYPE_CHECKING:
    import pandas as pd

#: the base retriever whose fine-tuned variants go to notebook 05's per-question table (the paper's
#: FT-DPR, paper 000 §5.2)
FT_BASE = "dpr"
#: reading families of notebook 04's answers table; the rest (fine-tuned) go to notebook 05's
READING_04 = ("retriever", "retriever_reranker", "oracle")
#: families of rankings in notebook 03's per-question table
RANKING_03 = ("retriever", "retriever_reranker", "oracle")
HIT_ONLY = tuple(m for m in MEASURES if m.startswith("Hit@"))


@dataclass
class Tables:
    """What an import computed (:func:`inferqa_utils.paper_runs.importer.import_release`)."""

    answers: pd.DataFrame
    em: pd.DataFrame
    retrieval: pd.DataFrame
    findings: pd.DataFrame
    summary: pd.DataFrame


def _csv(df: pd.DataFrame, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, index=False)
    return path


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(rows, columns=["system", "measure", "threshold", "qid", "value", "corpus"])


def write_runs(root: str | Path | None, release: Release, dataset: str = contract.DATASET) -> list[Path]:
    """One TREC run per ranking, and the qrels (module docstring)."""
    out = [write_qrels(release.qrels(), contract.qrels_path(root, contract.SPLIT, dataset))]
    if release.baseline_labels:
        out.append(write_qrels(release.baseline_labels, contract.qrels_path(root, "baseline", dataset)))
    for rk in release.rankings:
        run = {q: ids_to_run_list(ids) for q, ids in rk.lists.items()}
        out.append(write_run(run, contract.run_path(root, rk.system, rk.corpus, dataset), tag=rk.system))
    return out


def per_question_tables(release: Release, ft_base: str = FT_BASE) -> dict[contract.Table, pd.DataFrame]:
    """The per-question tables of notebooks 02, 03 and 05 (module docstring), by registry table."""
    quit_ = [r for r in release.rankings if r.corpus == "quit"]
    first: list[Ranking] = [r for r in quit_ if r.family == "retriever"]
    base = [r for r in release.rankings if r.corpus != "quit" and r.family == "baselines_retriever"]
    rows = per_question_rows(release, first, MEASURES, 1, contract.SUPPORTING)
    rows += per_question_rows(release, first, HIT_ONLY, 2, contract.SUPPORTING)
    rows += per_question_rows(release, first, HIT_ONLY, 2, contract.JUDGED_SUPPORTING)
    for rk in base:
        corpus = (
            contract.JUDGED_CONTAINING
            if rk.corpus == "msmarco"
            else f"{contract.JUDGED_CONTAINING}, {rk.corpus}"
        )
        rows += per_question_rows(release, [rk], HIT_ONLY, 2, corpus)
    t02 = _frame(rows)
    t03 = _frame(
        per_question_rows(
            release, [r for r in quit_ if r.family in RANKING_03], ("Hit@1", "Hit@10", "nDCG@10"), 1,
            contract.SUPPORTING,
        )
    )
    ft = [r for r in quit_ if r.family == "ft_retriever" and r.names.get("retriever") == ft_base]
    t05 = _frame(
        per_question_rows(
            release, [*ft, *(r for r in first if r.system == ft_base)] if ft else [], ("Hit@10", "nDCG@10"),
            1, contract.SUPPORTING,
        )
    )
    return {
        contract.RETRIEVAL_PER_QUESTION: t02, contract.RERANKING_PER_QUESTION: t03,
        contract.FT_PER_QUESTION: t05,
    }


def answers_tables(release: Release, answers: pd.DataFrame) -> dict[contract.Table, pd.DataFrame]:
    """The answers tables of notebooks 04 and 05 (module docstring), by registry table."""
    family = {r.system: r.family for r in release.readings}
    fam = answers["system"].map(family).fillna("Optimal")
    t04 = answers[fam.isin(("Optimal", *READING_04))]
    t05 = answers[~fam.isin(("Optimal", *READING_04)) | (fam == "retriever")]
    return {contract.READING_ANSWERS: t04, contract.FT_ANSWERS: t05}


def import_record(release: Release, source: str | Path, params: dict[str, Any]) -> dict[str, Any]:
    """What was read: the source folder, every released file (path, file read, compressed or not,
    size, sha256), the list each ranking file was read from, the files that match no layout entry,
    the counts and the parameters."""
    return {
        "source": str(source), "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "questions": len(release.questions), "readers": release.readers, "rankings": len(release.rankings),
        "readings": len(release.readings), "baselines": release.baseline_labels is not None,
        "parameters": params, "ranked_lists": {rk.released: rk.key for rk in release.rankings},
        "files": [
            {
                "released": f.released, "file": f.file.relative_to(release.folder).as_posix(),
                "compressed": f.compressed, "bytes": f.file.stat().st_size, "sha256": sha256_file(f.file),
            }
            for f in release.found
        ],
        "unrecognised": release.unknown,
    }


def write_all(
    root: str | Path | None, release: Release, tables: Tables, record: dict[str, Any],
    dataset: str = contract.DATASET, ft_base: str = FT_BASE, log: Callable[[str], Any] | None = None,
) -> list[Path]:
    """Write every file of the module docstring as one set (staged, then renamed into place);
    returns their paths under ``root``. The tables go to the results folder of the run under way
    (:attr:`inferqa_utils.core.config.Paths.results`)."""
    say = log or (lambda s: None)
    where = contract.paths(root)
    results = where.results.resolve().relative_to(where.root.resolve())

    def write(folder: Path) -> list[Path]:
        return _write_files(folder, results, release, tables, record, dataset, ft_base, say)

    written = staging.write_as_one(where.root, _staging_name(dataset), write, where.build)
    say(f"[paper-runs] {len(written)} files renamed into place under {where.root}")
    return written


def recover_import(root: str | Path | None, dataset: str = contract.DATASET) -> list[Path]:
    """Undo what an import of ``dataset`` killed half-way left under ``root``: the files it had
    already renamed into place are put back to the earlier import's, its staging folder removed
    (:func:`inferqa_utils.paper_runs.staging.recover`; :func:`write_all` does this first).
    Returns the files put back."""
    where = contract.paths(root)
    return staging.recover(where.root, _staging_name(dataset), where.build)


def _staging_name(dataset: str) -> str:
    return f"paper-runs-{dataset}"


def _write_files(
    folder: Path, results: Path, release: Release, tables: Tables, record: dict[str, Any], dataset: str,
    ft_base: str, say: Callable[[str], Any],
) -> list[Path]:
    """Every file of the module docstring under ``folder`` (laid out as under a root, the tables in
    its ``results`` folder): the runs and qrels, the tables, the record last."""
    written = write_runs(folder, release, dataset)
    say(f"[paper-runs] {len(written)} qrels and run files")
    frames = {
        **per_question_tables(release, ft_base), **answers_tables(release, tables.answers),
        contract.RETRIEVAL: tables.retrieval, contract.EM: tables.em, contract.FINDINGS: tables.findings,
        contract.SUMMARY: tables.summary,
    }
    for table, df in frames.items():
        written.append(_csv(df, folder / results / table.file(dataset, contract.SPLIT)))
        say(f"[paper-runs] {written[-1].name} ({len(df)} rows)")
    path = folder / results / contract.RECORD.file(dataset, contract.SPLIT)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    written.append(path)
    return written


def written_tables() -> tuple[contract.Table, ...]:
    """Every registry table an import writes (:func:`write_all`): the notebooks' and stage 09's."""
    return (*contract.NOTEBOOK_TABLES, *contract.OWN_TABLES)


#: how the run manifest of an import says the run was made
VIA = "python -m inferqa_utils paper-runs import"


def record_run(
    folder: Path, written: Iterable[Path], params: dict[str, Any], seconds: float,
    started: str | None = None, log: Callable[[str], Any] | None = None,
) -> Path:
    """File an import as a finished run of stage 09 under the ``paper-runs`` profile, as the notebook
    runner files a notebook's run (:func:`inferqa_utils.run.runner.run_notebooks`): ``folder``
    (``build/executions/<YYYYmmdd-HHMMSS>-paper-runs``) holds the tables under its ``results/``,
    and its ``manifest.json`` says the run finished stage 09's notebook (``via`` names the command)
    with those tables as its ``outputs``; ``results/paper-runs`` then points at them
    (:func:`inferqa_utils.record.run_outputs.publish`). ``check --profile paper-runs`` finds the run.
    Returns the manifest's path."""
    from ..record.manifest import Manifest
    from ..record.run_outputs import output_files, publish

    notebook = contract.notebook_file()
    own = {p.resolve() for p in written}
    files = [name for name, p in output_files(folder).items() if p.resolve() in own]
    manifest = Manifest(kind="paper-runs-import", parameters={"profile": contract.PROFILE, **params})
    if started:
        manifest.started = started
    manifest.timings = {contract.STAGE.notebook: round(seconds, 1), "total": round(seconds, 1)}
    manifest.extra.update(
        run_id=folder.name, status="ok", outcome="complete",
        notebooks={notebook: {"status": "ok", "via": VIA, "parameters": params, "outputs": files}},
    )
    path = manifest.write(folder / "manifest.json")
    publish(folder, contract.PROFILE, folder.parent.parent.parent)
    if log:
        log(f"[paper-runs] recorded as run {folder.name} of profile {contract.PROFILE} ({path})")
    return path
