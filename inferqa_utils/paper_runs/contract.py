"""Where the imported paper runs meet the notebooks' stage contract — the one module of
:mod:`inferqa_utils.paper_runs` that imports :mod:`inferqa_utils.stages`.

Every file an import writes is named by the stage registry (:mod:`inferqa_utils.stages`), so that
the findings and the check read them as a notebook run's: the tables are registry constants —
the per-question tables of notebooks 02, 03 and 05 and the answers tables of 04 and 05
(:data:`NOTEBOOK_TABLES`), and stage 09's own (:data:`OWN_TABLES`) — placed by
:meth:`~inferqa_utils.stages.Table.path`; the TREC runs by :func:`inferqa_utils.stages.run_path`;
the qrels in a built dataset's ``qrels`` folder; all under a root folder the caller chooses (the
repository root by default). The notebook findings score an import's tables as a notebook run's
(:func:`inferqa_utils.verdicts.findings.verdict_table`).
"""

from __future__ import annotations

from pathlib import Path

from .. import stages
from ..core.config import PATHS, Paths
from ..measure.verdict import CONTRADICTED, HOLDS, INCONCLUSIVE, MIN_UNITS, decide

#: the dataset name and split the imported runs are filed under (the ``paper-runs`` profile's)
DATASET = "quit-paper"
SPLIT = "test"
#: the profile whose check scores an import, and the stage that writes it
PROFILE = "paper-runs"
STAGE = stages.Stage.PAPER_RUNS
Table = stages.Table
#: the notebooks' own tables an import writes for its dataset (read by the findings and the check)
RETRIEVAL_PER_QUESTION = stages.RETRIEVAL_PER_QUESTION  # 02: the retrievers; cross-corpus Hit@k at label 2
RERANKING_PER_QUESTION = stages.RERANKING_PER_QUESTION  # 03: first stages, + rerankers, oracle rerankers
FT_PER_QUESTION = stages.FT_PER_QUESTION  # 05: the fine-tuned retrievers of one base, and the base
READING_ANSWERS = stages.READING_ANSWERS  # 04: Optimal, retrievers, + rerankers, oracle rerankers
FT_ANSWERS = stages.FT_ANSWERS  # 05: the fine-tuned systems and the retrievers they are compared with
NOTEBOOK_TABLES = (
    RETRIEVAL_PER_QUESTION, RERANKING_PER_QUESTION, FT_PER_QUESTION, READING_ANSWERS, FT_ANSWERS,
)
#: stage 09's tables: every ranking as the authors score it, both EMs, the comparisons, their verdict
#: counts, and the import's record (what was read)
RETRIEVAL = stages.PAPER_RUNS_RETRIEVAL
EM = stages.PAPER_RUNS_EM
FINDINGS = stages.PAPER_RUNS_FINDINGS
SUMMARY = stages.PAPER_RUNS_FINDINGS_SUMMARY
RECORD = stages.PAPER_RUNS_IMPORT
OWN_TABLES = (RETRIEVAL, EM, FINDINGS, SUMMARY, RECORD)
#: corpus labels of the per-question tables (notebook 02) — the paper's cross-corpus comparison is
#: an LLM-judged one on both sides (paper 000 §5.1), the pair the cross-corpus finding prefers
SUPPORTING = stages.SUPPORTING
JUDGED_CONTAINING, JUDGED_SUPPORTING = stages.CONTAINING_JUDGED, stages.SUPPORTING_JUDGED
#: run folders (corpus tags) of the QUIT runs and the two baselines
CORPUS_TAGS = {"quit": stages.Corpus.SUPPORTING.value, "msmarco": "msmarco", "wiki": "wiki"}

__all__ = ["CONTRADICTED", "HOLDS", "INCONCLUSIVE", "MIN_UNITS", "decide"]


def table_path(root: str | Path | None, table: Table, dataset: str = DATASET, split: str = SPLIT
               ) -> Path:
    """``<root>/results/<file of table>`` (:meth:`inferqa_utils.stages.Table.path`; during a run,
    the run's results folder); outside a run, the latest import's when ``results/`` has no such
    file (``results/paper-runs/``, the link to the run folder of that import)."""
    where = paths(root)
    path = table.path(dataset, split, folder=where.results)
    published = where.root / "results" / PROFILE / path.name
    return published if where.run_dir() is None and not path.exists() and published.exists() else path


def run_path(root: str | Path | None, system: str, corpus: str = "quit", dataset: str = DATASET) -> Path:
    """Where the run ``system`` of a corpus (``quit``, ``msmarco``, ``wiki``) lives under ``root``
    (:func:`inferqa_utils.stages.run_path`)."""
    path = stages.run_path(dataset, CORPUS_TAGS.get(corpus, corpus), system)
    return paths(root).root / path.relative_to(PATHS.root)


def qrels_path(root: str | Path | None, name: str = SPLIT, dataset: str = DATASET) -> Path:
    """``<root>/build/datasets/<dataset>/qrels/<name>.qrels`` (a built dataset's qrels folder)."""
    return paths(root).datasets / dataset / "qrels" / f"{name}.qrels"


def notebook_file() -> str:
    """The file name of stage 09's notebook (``<stem>.ipynb``), as run manifests and
    their ``outputs`` name it."""
    return f"{STAGE.notebook}.ipynb"


def paths(root: str | Path | None) -> Paths:
    """The project paths under ``root`` (``None``: the repository root's)."""
    return PATHS if root is None else Paths(Path(root))
