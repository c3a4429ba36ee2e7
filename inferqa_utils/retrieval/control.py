"""The answer-containing control corpus and its qrels (paper 000 §5.1).

Paper 000 compares retrieval from the answer-supporting corpus (the built hint passages) with
answer-containing corpora. The control here is made of the source's reference passages, one unit
each (ids :func:`~inferqa_utils.stages.reference_id`: ``ref:<qid>``, ``ref:<qid>:2``, …), and a
reference is relevant (label 2) to a question when it contains one of the question's gold answers:

    qrels[q][ref] = 2  if  any_occurs_folded(gold(q), text(ref))

with ``gold(q)`` the question's gold answers and aliases (``gold_answers``, else its answers; never
the LLM-expanded pool) and :func:`~inferqa_utils.ir.textnorm.any_occurs_folded` a folded token
n-gram match. Notebooks 02 and 06 retrieve from it and read it; the fair control of
:mod:`inferqa_utils.retrieval.pooled` judges it by the labels' LLM rule instead. A dataset
release stores the corpus (:data:`~inferqa_utils.stages.CONTROL_CORPUS`), so a dataset installed
from one finds it when its source is not on this machine.
"""

from __future__ import annotations

from ..core.errors import InferQAError
from ..ir.datamodel import Dataset
from ..ir.textnorm import any_occurs_folded
from ..sources import load_source
from ..stages import control_texts, reference_id


def control_corpus(ds: Dataset, split: str, source: Dataset | None = None
                   ) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """Answer-containing control corpus: the reference passages (ids ``ref:<qid>``, then
    ``ref:<qid>:2``, …, see :func:`~inferqa_utils.stages.reference_id`) of every
    question of ``source`` — by default the source the dataset was built from (all of its
    questions, not only the built ones, so the control corpus is not trivially small; the
    embedded set has 64 references, TriviaHG validation 1,000 ``Snippet``s). When that source is
    not on this machine (TriviaHG without the shared data), a dataset installed from a release
    reads the control corpus the release stores (:func:`~inferqa_utils.stages.control_texts`), the
    same passages. A reference is relevant (label 2) to a question when it contains one of the
    question's gold answers/aliases (not the LLM-expanded pool) as a folded token n-gram
    (:func:`~inferqa_utils.ir.textnorm.any_occurs_folded`).
    Empty when there are no references."""
    if source is None:
        source = built_source(ds)
    stored = control_texts(ds.meta.get("release") or ds.meta.get("folder")) if source is None else {}
    if stored:
        corpus = stored
    else:
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
