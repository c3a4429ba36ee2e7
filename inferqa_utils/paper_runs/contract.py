"""Where the imported paper runs meet the notebooks' stage contract — the one module of
:mod:`inferqa_utils.paper_runs` that imports :mod:`inferqa_utils.stages` and
:mod:`inferqa_utils.findings`.

It names the files an import writes, so that the findings and the check read them as a notebook
run's: tables ``results/<NN>_<dataset>_<split>_<name>.csv`` (:func:`inferqa_utils.stages.result_path`),
TREC runs ``build/runs/<dataset>/<corpus tag>/<system>.trec`` (:func:`inferqa_utils.stages.run_dir`),
qrels ``build/datasets/<dataset>/qrels/<name>.qrels`` — all under a root folder the caller chooses
(the repository root by default) — and it lends the paper-runs findings the verdict rule of
:func:`inferqa_utils.findings.decide`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import findings as _findings
from .. import stages as _stages
from ..config import PATHS, Paths

if TYPE_CHECKING:
    import pandas as pd

    from ..paper import Finding

#: the dataset name and split the imported runs are filed under (a ``paper-runs`` profile's)
DATASET = "quit-paper"
SPLIT = "test"
#: notebook numbers of the tables an import writes: the notebooks' own tables, and ours (08)
RETRIEVAL, RERANKING, READING, FINETUNING, PAPER_RUNS = "02", "03", "04", "05", "08"
#: corpus labels of the per-question tables (notebook 02) — the paper's cross-corpus comparison is
#: an LLM-judged one on both sides (paper 000 §5.1), the pair the cross-corpus finding prefers
SUPPORTING = _stages.SUPPORTING
JUDGED_CONTAINING, JUDGED_SUPPORTING = _findings.JUDGED
#: run folders (corpus tags) of the QUIT runs and the two baselines
CORPUS_TAGS = {"quit": "supporting", "msmarco": "msmarco", "wiki": "wiki"}

HOLDS, CONTRADICTED, INCONCLUSIVE = _findings.HOLDS, _findings.CONTRADICTED, _findings.INCONCLUSIVE
MIN_UNITS = _findings.MIN_UNITS


def table_path(root: str | Path | None, notebook: str, name: str, dataset: str = DATASET,
               split: str | None = SPLIT) -> Path:
    """``<root>/results/<notebook>_<dataset>_<split>_<name>.csv``."""
    return _paths(root).results / _stages.result_path(notebook, dataset, split, name).name


def run_path(root: str | Path | None, system: str, corpus: str = "quit", dataset: str = DATASET) -> Path:
    """``<root>/build/runs/<dataset>/<corpus tag>/<system>.trec``."""
    rel = _stages.run_dir(dataset, CORPUS_TAGS.get(corpus, corpus)).relative_to(PATHS.root)
    return _paths(root).root / rel / f"{system}.trec"


def qrels_path(root: str | Path | None, name: str = SPLIT, dataset: str = DATASET) -> Path:
    """``<root>/build/datasets/<dataset>/qrels/<name>.qrels`` (a built dataset's qrels folder)."""
    return _paths(root).datasets / dataset / "qrels" / f"{name}.qrels"


def _paths(root: str | Path | None) -> Paths:
    return PATHS if root is None else Paths(Path(root))


def decide(finding: Finding, lo: float, hi: float) -> tuple[str, str]:
    """The verdict of an interval ``[lo, hi]`` of a finding's statistic
    (:func:`inferqa_utils.findings.decide`)."""
    return _findings.decide(finding, lo, hi)


def standard_verdicts(
    root: str | Path | None, params: Mapping[str, Any], dataset: str = DATASET, split: str = SPLIT
) -> pd.DataFrame:
    """The findings table of ``paper_numbers.yaml`` scored on the imported tables exactly as on a
    notebook run (:func:`inferqa_utils.findings.verdict_table`); ``params`` are a profile's
    (``first_stage``, ``reader_model``, ``reading_k``, ``reading_union``)."""
    results = _findings.Results(dataset, split, dict(params), folder=_paths(root).results)
    return _findings.verdict_table(results)
