"""Write an imported release as the files a notebook run writes, so the findings and the check read
the paper's runs as they read ours (names from :mod:`inferqa_utils.paper_runs.contract`).

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
* our own tables (notebook number 08): ``retrieval`` (every ranking as the authors score it),
  ``em`` (both scorings and their disagreements), ``findings`` and ``findings_summary``, and
  ``import.json`` (what was read, with sizes and sha256).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..atomic import write_text_atomic
from ..runs import ids_to_run_list
from ..trec import write_qrels, write_run
from . import contract
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
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        df.to_csv(tmp, index=False)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
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


def per_question_tables(release: Release, ft_base: str = FT_BASE) -> dict[str, pd.DataFrame]:
    """The per-question tables of notebooks 02, 03 and 05 (module docstring), by notebook."""
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
    return {contract.RETRIEVAL: t02, contract.RERANKING: t03, contract.FINETUNING: t05}


def answers_tables(release: Release, answers: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The answers tables of notebooks 04 and 05 (module docstring)."""
    family = {r.system: r.family for r in release.readings}
    fam = answers["system"].map(family).fillna("Optimal")
    t04 = answers[fam.isin(("Optimal", *READING_04))]
    t05 = answers[~fam.isin(("Optimal", *READING_04)) | (fam == "retriever")]
    return {contract.READING: t04, contract.FINETUNING: t05}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


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
                "compressed": f.compressed, "bytes": f.file.stat().st_size, "sha256": _sha256(f.file),
            }
            for f in release.found
        ],
        "unrecognised": release.unknown,
    }


def write_all(
    root: str | Path | None, release: Release, tables: Tables, record: dict[str, Any],
    dataset: str = contract.DATASET, ft_base: str = FT_BASE, log: Callable[[str], Any] | None = None,
) -> list[Path]:
    """Write every file of the module docstring; returns their paths."""
    say = log or (lambda s: None)
    written = write_runs(root, release, dataset)
    say(f"[paper-runs] {len(written)} qrels and run files")

    def table(nb: str, name: str, df: pd.DataFrame) -> None:
        written.append(_csv(df, contract.table_path(root, nb, name, dataset)))
        say(f"[paper-runs] {written[-1]} ({len(df)} rows)")

    for nb, df in per_question_tables(release, ft_base).items():
        table(nb, "per_question", df)
    for nb, df in answers_tables(release, tables.answers).items():
        table(nb, "answers", df)
    for name, df in (
        ("retrieval", tables.retrieval), ("em", tables.em), ("findings", tables.findings),
        ("findings_summary", tables.summary),
    ):
        table(contract.PAPER_RUNS, name, df)
    path = contract.table_path(root, contract.PAPER_RUNS, "import", dataset).with_suffix(".json")
    path.parent.mkdir(parents=True, exist_ok=True)
    written.append(write_text_atomic(path, json.dumps(record, indent=1, ensure_ascii=False) + "\n"))
    return written


def imported_tables(root: str | Path | None, dataset: str = contract.DATASET) -> dict[str, Path]:
    """The paths of our own tables of an import (they may not exist)."""
    names: Iterable[str] = ("retrieval", "em", "findings", "findings_summary")
    out = {n: contract.table_path(root, contract.PAPER_RUNS, n, dataset) for n in names}
    out["import"] = contract.table_path(root, contract.PAPER_RUNS, "import", dataset).with_suffix(".json")
    return out
