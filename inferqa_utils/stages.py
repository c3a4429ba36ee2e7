"""The stage contract shared by the notebooks and the package: which notebook each stage is, which
stage writes every result table and run, where they live, how a later stage reads them, and which
corpus and questions a stage reads.

* :class:`Stage` and :data:`NOTEBOOKS`: the numbered notebooks (``Stage.RETRIEVAL`` is ``"02"``,
  notebook ``02_retrieval``), named here and nowhere else.
* :class:`Table` and :data:`TABLES`: one constant per result table a notebook writes
  (:data:`TABLE1`, :data:`RETRIEVAL_METRICS`, …). Every notebook writes its tables through them
  (:meth:`Table.write`) and every read-back (a later stage, :mod:`~inferqa_utils.verdicts.findings`,
  :mod:`~inferqa_utils.teach.inspector`, :mod:`~inferqa_utils.verdicts.check` and
  ``reproduction.yaml`` by the tables' keys) goes through them too, so renaming an output is one
  change here, not a silent break between stages. Names:
  ``results/<NN>_<dataset>_<split>_<name>.csv`` (``dataset`` or ``split`` left out when the table
  has none, e.g. ``01_<dataset>_table1.csv``), :func:`result_path`.
* :class:`Figure` and :data:`FIGURES`: one constant per figure a notebook draws
  (:data:`PASSAGE_TYPES_FIGURE`, …), saved with :meth:`Figure.save` as
  ``figures/<NN>_<dataset>_<name>.png``. A notebook names no result file and no figure file.
* Runs: ``build/runs/<dataset>/<corpus tag>/<name>.trec`` (:func:`run_path`); :func:`run_stage`
  says which stage writes a run, :func:`load_run` reads one and, when it is missing, names that
  stage's notebook.
* :class:`Corpus`: the corpus vocabulary, the folder tag of a corpus's runs and indexes and its
  label in the result tables' ``corpus`` column.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from .core.config import PATHS, require_input
from .core.errors import UnknownNameError
from .ir.datamodel import Dataset
from .ir.trec import Run, read_run
from .measure.metrics import DEFAULT_METRICS

if TYPE_CHECKING:
    import matplotlib.figure
    import pandas as pd

# ----------------------------------------------------------------------------- stages and notebooks


class Stage(StrEnum):
    """A numbered notebook's stage; the value is its number (``Stage.RETRIEVAL == "02"``)."""

    QUICKSTART = "00"
    CONSTRUCTION = "01"
    RETRIEVAL = "02"
    RERANKING = "03"
    READING = "04"
    FINETUNING = "05"
    DAMAGING = "06"
    BEYOND = "07"
    YOUR_METHOD = "08"
    PAPER_RUNS = "09"

    @property
    def notebook(self) -> str:
        """The stage's notebook (stem, ``02_retrieval``; :data:`NOTEBOOKS`)."""
        return NOTEBOOKS[self]


#: stage number → notebook stem (``notebooks/<stem>.ipynb``)
NOTEBOOKS: dict[str, str] = {
    Stage.QUICKSTART: "00_quickstart", Stage.CONSTRUCTION: "01_dataset_construction",
    Stage.RETRIEVAL: "02_retrieval", Stage.RERANKING: "03_reranking", Stage.READING: "04_reading",
    Stage.FINETUNING: "05_finetuning", Stage.DAMAGING: "06_damaging_passages", Stage.BEYOND: "07_beyond",
    Stage.YOUR_METHOD: "08_your_method",
    Stage.PAPER_RUNS: "09_paper_runs",
}


# ----------------------------------------------------------------------------- corpora


class Corpus(StrEnum):
    """A corpus the stages retrieve from. The value is the folder tag of its runs and indexes
    (``build/runs/<dataset>/<tag>/``); :attr:`label` is its name in the result tables."""

    SUPPORTING = "supporting"  # the built passages (hint subset-permutations)
    CONTAINING = "containing"  # the control: the source's reference texts

    @property
    def label(self) -> str:
        """The corpus's value in the ``corpus`` column of the result tables."""
        return _CORPUS_LABELS[self]


_CORPUS_LABELS = {Corpus.SUPPORTING: "answer-supporting", Corpus.CONTAINING: "answer-containing"}

#: corpus labels of the result tables
SUPPORTING, CONTAINING = Corpus.SUPPORTING.label, Corpus.CONTAINING.label
#: the answer-supporting corpus with label ≥ 1 counted relevant (notebook 02's lenient view)
SUPPORTING_LENIENT = f"{SUPPORTING}, label ≥ 1"
#: corpus labels of the LLM-judged fair comparison (:mod:`inferqa_utils.retrieval.pooled`)
SUPPORTING_JUDGED, CONTAINING_JUDGED = f"{SUPPORTING}, LLM-judged", f"{CONTAINING}, LLM-judged"


# ----------------------------------------------------------------------------- result tables


def result_path(
    notebook: str, dataset: str | None, split: str | None, name: str, suffix: str = ".csv"
) -> Path:
    """``results/<notebook>_<dataset>_<split>_<name><suffix>`` (parts that are None left out): the
    layout behind :meth:`Table.path`."""
    parts = [notebook, dataset, split, name]
    return PATHS.results / ("_".join(p for p in parts if p) + suffix)


@dataclass(frozen=True)
class Table:
    """A result table one stage's notebook writes: ``key`` its name in :data:`TABLES` (and in
    ``reproduction.yaml``), ``stage`` the stage that writes it, ``name`` the last part of its file
    name; ``per_dataset`` / ``per_split`` whether the file name holds the dataset / split;
    ``suffix`` the file's (``.csv``; a record is ``.json``).

    ``columns`` declares the table's schema — the CSV header every run writes, the index's name
    first when the table is written with its index (empty: not declared) — and
    ``column_patterns`` the regular expressions of the columns whose names depend on the run (SER's
    ``m`` values, the probes, the number of hints). ``reproduction.yaml`` may name only declared
    columns (tests/test_stages.py), and the smoke run's tables must have exactly the declared ones
    (tests/test_notebooks.py), so renaming a column fails in ``make test``, not after a full run."""

    key: str
    stage: Stage
    name: str
    per_dataset: bool = True
    per_split: bool = True
    suffix: str = ".csv"
    columns: tuple[str, ...] = ()
    column_patterns: tuple[str, ...] = ()

    @property
    def notebook(self) -> str:
        """The notebook that writes the table (stem)."""
        return self.stage.notebook

    def declares(self, column: str) -> bool:
        """Whether ``column`` is one of :attr:`columns` or matches one of :attr:`column_patterns`."""
        return column in self.columns or any(re.fullmatch(p, column) for p in self.column_patterns)

    def schema_problems(self, header: Iterable[str]) -> list[str]:
        """What a written header breaks of the declared schema: each declared column it lacks and
        each column it has that the schema does not declare (empty: none, or nothing declared)."""
        if not self.columns:
            return []
        header = [str(c) for c in header]
        return [f"{self.key}: no column {c!r}" for c in self.columns if c not in header] + [
            f"{self.key}: undeclared column {c!r}" for c in header if not self.declares(c)
        ]

    def file(self, dataset: str | None = None, split: str | None = None) -> str:
        """The file name, ``<NN>_<dataset>_<split>_<name>.csv``; ``dataset`` and ``split`` are
        needed when the table has them and ignored when it has not."""
        for needed, value, what in ((self.per_dataset, dataset, "dataset"), (self.per_split, split, "split")):
            if needed and not value:
                raise ValueError(f"the table {self.key!r} is written per {what}: give the {what}")
        return result_path(self.stage, dataset if self.per_dataset else None,
                           split if self.per_split else None, self.name, self.suffix).name

    def path(self, dataset: str | None = None, split: str | None = None, folder: Path | None = None) -> Path:
        """``<folder or results/>/<file>`` (:meth:`file`). Outside a run (a notebook opened in
        JupyterLab, ``inspect``), a table ``results/`` does not hold is read from the newest run that
        wrote it (:func:`inferqa_utils.record.run_outputs.readable`)."""
        path = (folder or PATHS.results) / self.file(dataset, split)
        if folder is None and PATHS.run_dir() is None and not path.exists():
            from .record.run_outputs import readable

            return readable(path)
        return path

    def write(self, df: pd.DataFrame, dataset: str | None = None, split: str | None = None, *,
              index: bool = True, folder: Path | None = None) -> Path:
        """Write ``df`` as the table's CSV file, :meth:`path` (the folder made when missing), with
        ``DataFrame.to_csv``'s defaults, atomically (a reader sees the old file or the new one, never
        a half-written one); ``index`` as in ``to_csv`` (``False``: the index is left out). Returns
        the path::

            stages.READING_EM.write(em, dataset_name, split, index=False)
        """
        if self.suffix != ".csv":
            raise ValueError(f"the table {self.key!r} is a {self.suffix} file, not a CSV table")
        from .core.atomic import write_text_atomic

        path = (folder or PATHS.results) / self.file(dataset, split)
        return write_text_atomic(path, df.to_csv(index=index))


#: every result table the notebooks write, by key
TABLES: dict[str, Table] = {}


def _table(key: str, stage: Stage, name: str, per_dataset: bool = True, per_split: bool = True,
           suffix: str = ".csv", columns: tuple[str, ...] = (),
           column_patterns: tuple[str, ...] = ()) -> Table:
    if key in TABLES:
        raise ValueError(f"two result tables are named {key!r}")
    TABLES[key] = Table(key, stage, name, per_dataset, per_split, suffix, tuple(columns),
                        tuple(column_patterns))
    return TABLES[key]


# Declared schemas (Table.columns), read off the code that writes each table; declared for every
# table reproduction.yaml names.
#: the counts :func:`inferqa_utils.measure.metrics.evaluate` ends a row with
_COUNTS = ("n_questions", "n_questions_ndcg", "threshold")
#: a first stage beside its reranked runs (``inferqa_utils.rerank.evaluation.rerank_table``: 03 and 05)
_RERANK_COLUMNS = (
    "run", "Hit@1", "Hit@5", "Hit@10", "Hit@20", "MRR@100", "nDCG@10", "nDCG@100", *_COUNTS, "seconds/query",
)
#: EM per reader, setting, system, k and union (``inferqa_utils.reading.conditions.em_table``: 04 and 05)
_EM_COLUMNS = (
    "reader", "setting", "system", "k", "union", "EM", "EM_lo", "EM_hi", "judged", "judged_lo", "judged_hi",
    "no_answer", "n",
)

QUICKSTART_ANSWERS = _table("quickstart_answers", Stage.QUICKSTART, "quickstart_answers", per_dataset=False,
                            per_split=False, columns=("setting", "answer", "raw reply", "EM", "judged"))

TABLE1 = _table("table1", Stage.CONSTRUCTION, "table1", per_split=False, columns=(
    "split", "questions", "passages", "labelled", "label 2", "label 1", "label 2 share (%)",
    "questions with label 2", "mean passage tokens",
))
RELEASE_AGREEMENT = _table("release_agreement", Stage.CONSTRUCTION, "release_agreement", per_split=False,
                           columns=("measure", "value", "lo", "hi", "n", "questions"))
RELEASE_AGREEMENT_PASSAGES = _table(
    "release_agreement_passages", Stage.CONSTRUCTION, "release_agreement_passages", per_split=False
)

RETRIEVAL_METRICS = _table("retrieval_metrics", Stage.RETRIEVAL, "retrieval",
                           columns=("run", *DEFAULT_METRICS, *_COUNTS))
RETRIEVAL_COMPARED = _table("retrieval_compared", Stage.RETRIEVAL, "compared")
CROSS_CORPUS = _table("cross_corpus", Stage.RETRIEVAL, "cross_corpus", columns=(
    "run", "Hit@1", "Hit@5", "Hit@10", "Hit@20", "Hit@100", *_COUNTS, "corpus",
))
PASSAGE_LENGTHS = _table("passage_lengths", Stage.RETRIEVAL, "passage_lengths")
POOLED_JUDGMENTS = _table("pooled_judgments", Stage.RETRIEVAL, "pooled_judgments")
FAIR_CORPORA = _table("fair_corpora", Stage.RETRIEVAL, "fair_corpora", columns=(
    "corpus", "passages", "mean tokens", "size-matched to", "judged pairs", "relevant pairs",
    "relevant pairs, other questions' items", "questions with a relevant passage",
))
FAIR_COMPARISON = _table("fair_comparison", Stage.RETRIEVAL, "fair_comparison",
                         columns=("measure", "system", "corpus", "n", "mean", "lo", "hi", "p"))
RETRIEVAL_PER_QUESTION = _table("retrieval_per_question", Stage.RETRIEVAL, "per_question")

RERANKING = _table("reranking", Stage.RERANKING, "reranking", columns=_RERANK_COLUMNS)
RERANKING_COMPARED = _table("reranking_compared", Stage.RERANKING, "compared")
RERANKING_PER_QUESTION = _table("reranking_per_question", Stage.RERANKING, "per_question")
ORACLE_RERANKER = _table("oracle_reranker", Stage.RERANKING, "oracle_reranker")

READING_ANSWERS = _table("reading_answers", Stage.READING, "answers")
READING_EM = _table("reading_em", Stage.READING, "em", columns=_EM_COLUMNS)
TABLE8 = _table("table8", Stage.READING, "table8")
HINTS_DISTRIBUTION = _table("hints_distribution", Stage.READING, "hints_distribution",
                            columns=("source", "n"),
                            column_patterns=(r"[0-9]+ hints",))
HINT_PASSAGES = _table("hint_passages", Stage.READING, "hint_passages",
                       columns=("source", "reader", "qid", "n_hints"))

FT_TRAINING_TIMES = _table("ft_training_times", Stage.FINETUNING, "training_times", per_split=False)
FT_RETRIEVAL = _table("ft_retrieval", Stage.FINETUNING, "retrieval",
                      columns=("run", "N", "negative kind", *DEFAULT_METRICS, *_COUNTS))
FT_COMPARED = _table("ft_compared", Stage.FINETUNING, "compared")
FT_PER_QUESTION = _table("ft_per_question", Stage.FINETUNING, "per_question")
FT_ORACLE_RERANKER = _table("ft_oracle_reranker", Stage.FINETUNING, "oracle_reranker")
FT_RERANKING = _table("ft_reranking", Stage.FINETUNING, "reranking", columns=_RERANK_COLUMNS)
FT_ANSWERS = _table("ft_answers", Stage.FINETUNING, "answers")
FT_READING = _table("ft_reading", Stage.FINETUNING, "reading", columns=_EM_COLUMNS)

PATTERNS = _table("patterns", Stage.DAMAGING, "patterns")
EM_CURVES = _table("em_curves", Stage.DAMAGING, "em_curves")
PASSAGE_TYPES = _table("passage_types", Stage.DAMAGING, "types")
PROBE_CURVES = _table("probe_curves", Stage.DAMAGING, "probe_curves")
PROBE_READINGS = _table("probe_readings", Stage.DAMAGING, "probe_readings")
PROBES = _table("probes", Stage.DAMAGING, "probes", columns=(
    "system", "metric", "N", "EM@N", "EM_lo", "EM_hi", "AcEM@N", "AcEM_lo", "AcEM_hi", "n_questions",
    "corpus",
), column_patterns=(r"Probe [0-9]+(_lo|_hi)?",))
SER = _table("ser", Stage.DAMAGING, "ser", columns=("setting", "pairs", "corpus"),
             column_patterns=(r"[0-9]+", r"EM at m = [0-9]+ \(%\)"))
SER_READINGS = _table("ser_readings", Stage.DAMAGING, "ser_readings")
DAMAGING_COMPARISON = _table("damaging_comparison", Stage.DAMAGING, "comparison")
DAMAGING_INTERVALS = _table("damaging_intervals", Stage.DAMAGING, "intervals", columns=(
    "corpus", "system", "metric", "N", "EM@N", "EM_lo", "EM_hi", "AcEM@N", "AcEM_lo", "AcEM_hi", "AcEM − EM",
    "diff_lo", "diff_hi", "p (paired)", "damaged questions", "n_questions", "labels",
))

BEYOND_ANSWERS = _table("beyond_answers", Stage.BEYOND, "answers")
BEYOND_REPORT = _table("beyond_report", Stage.BEYOND, "report", columns=(
    "system", "kind", "Hit@1", "Hit@5", "Hit@10", "Recall@10", "MRR@100", "nDCG@10", "nDCG@100", *_COUNTS,
    "EM",
    "judged", "no_answer", "n_read", "seconds/query",
))
BEYOND_EM_COMPARED = _table("beyond_em_compared", Stage.BEYOND, "em_compared")
FINDINGS = _table("findings", Stage.BEYOND, "findings")

YOURS_COMPARED = _table("yours_compared", Stage.YOUR_METHOD, "compared", columns=(
    "metric", "system", "kind", "value", "value_lo", "value_hi", "n", "Δ", "Δ_lo", "Δ_hi", "p", "p_holm",
    "sig",
))
YOURS_ANSWERS = _table("yours_answers", Stage.YOUR_METHOD, "answers")
# the paper authors' released runs, written by ``paper-runs import`` (which also writes the
# per-question tables of 02, 03 and 05 and the answers tables of 04 and 05 for its dataset)
PAPER_RUNS_RETRIEVAL = _table("paper_runs_retrieval", Stage.PAPER_RUNS, "retrieval")
PAPER_RUNS_EM = _table("paper_runs_em", Stage.PAPER_RUNS, "em")
PAPER_RUNS_FINDINGS = _table("paper_runs_findings", Stage.PAPER_RUNS, "findings")
PAPER_RUNS_FINDINGS_SUMMARY = _table("paper_runs_findings_summary", Stage.PAPER_RUNS, "findings_summary")
PAPER_RUNS_IMPORT = _table("paper_runs_import", Stage.PAPER_RUNS, "import", suffix=".json")


def table(key: str) -> Table:
    """The result table of a key (:data:`TABLES`); an unknown key raises
    :class:`~inferqa_utils.core.errors.UnknownNameError` naming the closest keys."""
    try:
        return TABLES[key]
    except KeyError:
        close = difflib.get_close_matches(key, TABLES, n=3)
        raise UnknownNameError(f"no result table {key!r}" + (f" (did you mean {', '.join(close)}?)" if close
                                                             else f"; tables: {', '.join(TABLES)}")) from None


def tables_of(stage: str) -> list[Table]:
    """The tables a stage's notebook writes, in registry order."""
    return [t for t in TABLES.values() if t.stage == stage]


# ----------------------------------------------------------------------------- figures


@dataclass(frozen=True)
class Figure:
    """A figure one stage's notebook draws: ``key`` its name in :data:`FIGURES`, ``stage`` the stage
    that draws it, ``name`` the last part of its file name, ``per_dataset`` whether the file name
    holds the dataset. Files: ``figures/<NN>_<dataset>_<name>.png``::

        stages.PASSAGE_TYPES_FIGURE.save(fig, dataset_name)  # figures/06_<dataset>_passage_types.png
    """

    key: str
    stage: Stage
    name: str
    per_dataset: bool = True

    @property
    def notebook(self) -> str:
        """The notebook that draws the figure (stem)."""
        return self.stage.notebook

    def file(self, dataset: str | None = None) -> str:
        """The file name, ``<NN>_<dataset>_<name>.png``; ``dataset`` is needed when the figure has
        one and ignored when it has not."""
        if self.per_dataset and not dataset:
            raise ValueError(f"the figure {self.key!r} is drawn per dataset: give the dataset")
        parts = [self.stage, dataset if self.per_dataset else None, self.name]
        return "_".join(p for p in parts if p) + FIGURE_SUFFIX

    def path(self, dataset: str | None = None, folder: Path | None = None) -> Path:
        """``<folder or figures/>/<file>`` (:meth:`file`)."""
        return (folder or PATHS.figures) / self.file(dataset)

    def save(self, fig: matplotlib.figure.Figure, dataset: str | None = None, folder: Path | None = None
             ) -> Path:
        """Write the matplotlib figure ``fig`` to :meth:`path`
        (:func:`~inferqa_utils.present.figures.save_figure`) and return the path."""
        from .present.figures import save_figure

        return save_figure(fig, self.file(dataset).removesuffix(FIGURE_SUFFIX), folder)


#: the file suffix of every figure (:func:`~inferqa_utils.present.figures.save_figure` writes PNG)
FIGURE_SUFFIX = ".png"

#: every figure the notebooks draw, by key
FIGURES: dict[str, Figure] = {}


def _figure(key: str, stage: Stage, name: str, per_dataset: bool = True) -> Figure:
    if key in FIGURES:
        raise ValueError(f"two figures are named {key!r}")
    FIGURES[key] = Figure(key, stage, name, per_dataset)
    return FIGURES[key]


# one constant per figure, ``<KEY>_FIGURE``
CONVERGENCE_FIGURE = _figure("convergence", Stage.CONSTRUCTION, "convergence_kept_vs_dropped")
LABELS_BY_HINTS_FIGURE = _figure("labels_by_hints", Stage.CONSTRUCTION, "labels_by_hints")
HIT_CURVES_FIGURE = _figure("hit_curves", Stage.RETRIEVAL, "hit_curves")
RERANKING_FIGURE = _figure("reranking", Stage.RERANKING, "reranking")
EM_SETTINGS_FIGURE = _figure("em_settings", Stage.READING, "em_settings")
HINTS_DISTRIBUTION_FIGURE = _figure("hints_distribution", Stage.READING, "hints_distribution")
FINETUNING_FIGURE = _figure("finetuning", Stage.FINETUNING, "finetuning")
EM_ACEM_CURVES_FIGURE = _figure("em_acem_curves", Stage.DAMAGING, "em_acem_curves")
PASSAGE_TYPES_FIGURE = _figure("passage_types", Stage.DAMAGING, "passage_types")
PROBES_FIGURE = _figure("probes", Stage.DAMAGING, "probes")
SER_FIGURE = _figure("ser", Stage.DAMAGING, "ser")
BEYOND_REPORT_FIGURE = _figure("beyond_report", Stage.BEYOND, "report")
YOURS_COMPARED_FIGURE = _figure("yours_compared", Stage.YOUR_METHOD, "compared")


def figures_of(stage: str) -> list[Figure]:
    """The figures a stage's notebook draws, in registry order."""
    return [f for f in FIGURES.values() if f.stage == stage]


# ----------------------------------------------------------------------------- runs

#: the folder, under the answer-supporting runs, of notebook 07's method runs
METHODS_FOLDER = "beyond"


def run_dir(dataset_name: str, corpus: str) -> Path:
    """``build/runs/<dataset>/<tag>/``: the runs of a :class:`Corpus` (or of another run folder,
    e.g. :func:`finetune_tag`)."""
    return PATHS.runs / dataset_name / corpus


def run_dir_file(folder: str | Path, name: str) -> Path:
    """``<folder>/<name>.trec``: the file of run ``name`` in a run folder."""
    return Path(folder) / f"{name}.trec"


def run_path(dataset_name: str, corpus: str, name: str) -> Path:
    """``build/runs/<dataset>/<tag>/<name>.trec``: where the run ``name`` of a corpus lives."""
    return run_dir(dataset_name, corpus) / f"{name}.trec"


def methods_dir(dataset_name: str) -> Path:
    """``build/runs/<dataset>/supporting/beyond/``: notebook 07's method runs."""
    return run_dir(dataset_name, Corpus.SUPPORTING) / METHODS_FOLDER


def yours_dir(dataset_name: str) -> Path:
    """``build/runs/<dataset>/supporting/yours/``: notebook 08's runs of a researcher's components."""
    return run_dir(dataset_name, Corpus.SUPPORTING) / "yours"


def index_dir(dataset_name: str, corpus: str, name: str) -> Path:
    """``build/indexes/<dataset>/<tag>/<name>``: the index of retriever ``name`` over a corpus."""
    return PATHS.indexes / dataset_name / corpus / name


def finetune_tag(split: str) -> str:
    """The run folder of the fine-tuning runs over a split's questions (``finetune-<split>``):
    hard-negative mining and choosing N."""
    return f"finetune-{split}"


#: joins a first stage and the reranker that reorders it in a reranked run's name (``bm25+pointwise``)
RERANKED = "+"


def reranked_name(first: str, reranker: str) -> str:
    """The name of run ``first`` reranked by ``reranker``: ``<first>+<reranker>`` (its file
    ``<first>+<reranker>.trec``; the first stage ``oracle`` is the question's own passages)."""
    return f"{first}{RERANKED}{reranker}"


def run_stage(name: str, in_beyond: bool = False) -> Stage:
    """The stage whose notebook writes the run ``<name>.trec``: notebook 07's methods (``in_beyond``:
    under :data:`METHODS_FOLDER`), fine-tuned models (``FT-…``, also ``first+FT-…``) 05,
    ``first+reranker`` and ``oracle+reranker`` 03, the rest (retrievers, hybrid, RRF) 02."""
    if in_beyond:
        return Stage.BEYOND
    if "FT-" in name:
        return Stage.FINETUNING
    if RERANKED in name:
        return Stage.RERANKING
    return Stage.RETRIEVAL


def load_run(dataset_name: str, name: str, corpus: str = Corpus.SUPPORTING, qids: Iterable[str] | None = None,
             known_passages: Collection[str] | None = None, profile_name: str | None = None) -> Run:
    """The stored run ``name`` of a corpus (:func:`run_path`), restricted to ``qids`` when given
    (a question the run lacks gets an empty ranking); with ``known_passages`` an unknown passage is
    refused (:func:`~inferqa_utils.ir.trec.read_run`). A missing run raises
    :class:`~inferqa_utils.core.errors.MissingInputError` naming the notebook that writes it
    (:func:`run_stage`) and the command that runs it (:func:`~inferqa_utils.core.config.require_input`)."""
    path = require_input(run_path(dataset_name, corpus, name), run_stage(name).notebook,
                         f"the {corpus} run {name!r}", profile_name)
    run = read_run(path, set(known_passages) if known_passages is not None else None)
    return run if qids is None else {q: run.get(q, []) for q in qids}


# ----------------------------------------------------------------------------- corpus and questions


def corpus_of(ds: Dataset) -> dict[str, str]:
    """The answer-supporting corpus: every passage of the built dataset (all splits)."""
    return {pid: p.text for pid, p in ds.passages.items()}


def queries_of(ds: Dataset, split: str) -> dict[str, str]:
    return {q.qid: q.question for q in ds.split(split)}


#: where a dataset release, and its installed copy, keeps its answer-containing control corpus
#: (JSONL ``{"id", "contents"}``, the corpus
#: :func:`~inferqa_utils.retrieval.control.control_corpus` made when the release was written)
CONTROL_CORPUS = "control/corpus.jsonl"


def control_texts(folder: str | Path | None) -> dict[str, str]:
    """``{id: text}`` of the control corpus stored in a release folder (:data:`CONTROL_CORPUS`);
    empty when there is none."""
    path = Path(folder) / CONTROL_CORPUS if folder else None
    if path is None or not path.is_file():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            out[rec["id"]] = rec["contents"]
    return out


def reference_id(qid: str, i: int) -> str:
    """Control-corpus id of reference ``i`` (0-based) of a question: ``ref:<qid>``, ``ref:<qid>:2``, …"""
    return f"ref:{qid}" if i == 0 else f"ref:{qid}:{i + 1}"


def reference_question(pid: str) -> str | None:
    """The question a control-corpus id names (:func:`reference_id` read back), whether or not it was
    built: ``ref:Q_1:2`` → ``Q_1``; ``None`` for an id that is not a reference."""
    if not pid.startswith("ref:"):
        return None
    head, _, tail = pid[4:].rpartition(":")
    return head if head and tail.isdigit() else pid[4:]
