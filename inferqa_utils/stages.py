"""Stage I/O shared by the notebooks and the package: which corpus and questions a stage reads,
where runs and result tables live, and how they are named.

Every notebook writes its tables through :func:`result_path` and every package read-back (a
later stage reading an earlier stage's table) goes through it too, so renaming an output is one
change here, not a silent break between stages. Names: ``results/<NN>_<dataset>_<split>_<name>.csv``
(``dataset`` or ``split`` left out when the table has none, e.g. ``01_<dataset>_table1.csv``).
"""

from __future__ import annotations

from pathlib import Path

from .config import PATHS
from .datamodel import Dataset
from .errors import InferQAError
from .sources import load_source
from .textnorm import any_occurs_folded

#: corpus labels of the result tables
SUPPORTING, CONTAINING = "answer-supporting", "answer-containing"
SUPPORTING_LENIENT = "answer-supporting, label ≥ 1"


def result_path(notebook: str, dataset: str | None, split: str | None, name: str, suffix: str = ".csv") -> Path:
    """``results/<notebook>_<dataset>_<split>_<name><suffix>`` (parts that are None left out)."""
    parts = [notebook, dataset, split, name]
    return PATHS.results / ("_".join(p for p in parts if p) + suffix)


def corpus_of(ds: Dataset) -> dict[str, str]:
    """The answer-supporting corpus: every passage of the built dataset (all splits)."""
    return {pid: p.text for pid, p in ds.passages.items()}


def queries_of(ds: Dataset, split: str) -> dict[str, str]:
    return {q.qid: q.question for q in ds.split(split)}


def control_corpus(ds: Dataset, split: str, source: Dataset | None = None
                   ) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """Answer-containing control corpus: the reference passages (ids ``ref:<qid>``, then
    ``ref:<qid>:2``, …, see :func:`reference_id`) of every
    question of ``source`` — by default the source the dataset was built from (all of its
    questions, not only the built ones, so the control corpus is not trivially small; the
    embedded set has 64 references, TriviaHG validation 1,000 ``Snippet``s). A reference is
    relevant (label 2) to a question when it contains one of the question's gold answers/aliases
    (not the LLM-expanded pool) as a folded token n-gram (:func:`~inferqa_utils.textnorm.any_occurs_folded`). Empty when there are no references."""
    if source is None:
        source = built_source(ds)
    pool = list(source) if source is not None else []
    seen = {q.qid for q in pool}
    pool += [q for q in ds if q.qid not in seen]
    corpus = {reference_id(q.qid, i): text for q in pool for i, text in enumerate(q.references)}
    qrels: dict[str, dict[str, int]] = {}
    for q in ds.split(split):
        gold = q.meta.get("gold_answers") or q.answers
        rel = {pid: 2 for pid, text in corpus.items() if any_occurs_folded(gold, text)}
        if rel:
            qrels[q.qid] = rel
    return corpus, qrels


def reference_id(qid: str, i: int) -> str:
    """Control-corpus id of reference ``i`` (0-based) of a question: ``ref:<qid>``, ``ref:<qid>:2``, …"""
    return f"ref:{qid}" if i == 0 else f"ref:{qid}:{i + 1}"


def built_source(ds: Dataset) -> Dataset | None:
    """The source a built dataset came from (its manifest's ``source`` parameter), or None when
    it cannot be loaded here (e.g. the shared TriviaHG data is absent)."""

    spec = ((ds.meta.get("built") or {}).get("parameters") or {}).get("source")
    if not spec:
        return None
    try:
        return load_source(spec)
    except InferQAError:
        return None


def run_dir(dataset_name: str, corpus_tag: str) -> Path:
    return PATHS.runs / dataset_name / corpus_tag


