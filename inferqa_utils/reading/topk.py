"""Top-k reading (paper 000 §5.4): a ranked run's top-k passages → one context → reader → scored answers.

The context of a question is built from the hint sentences of its run's top-``k`` passages
(:meth:`inferqa_utils.ir.datamodel.Dataset.passage_sentences`) with Union_norm or Union_freq
(:func:`inferqa_utils.reading.contexts.build_context`); the reader answers from it and every
answer is scored by strict EM and judged accuracy
(:func:`inferqa_utils.answering.scoring.score_answers`). Notebook 04 reads retriever, reranker
and oracle runs this way, notebook 05 its fine-tuned systems and notebook 07 its methods.

Who reads, who judges and from which corpus is one :class:`~inferqa_utils.reading.setup.ReadingSetup`.
Every reader/judge call goes through the cached engine, so a re-run makes no model call. The
reader is the built-in few-shot reader unless a ``strategy`` (a named reader of
:mod:`inferqa_utils.reading.readers`, e.g. a researcher's prompting strategy) is given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from ..answering.reader import read
from ..answering.scoring import score_answers
from ..ir.datamodel import Dataset
from ..ir.runs import ranked_ids
from ..ir.trec import Run
from .contexts import ALPHA, BETA, build_context
from .readers import DEFAULT_READER, ReaderSpec
from .setup import ReadingSetup

UNIONS = ("norm", "freq")


def contexts_from_run(ds: Dataset, run: Run, qids: Iterable[str], k: int, union: str = "norm",
                      alpha: float = ALPHA, beta: float = BETA,
                      corpus: Mapping[str, str] | None = None) -> dict[str, str]:
    """paper 000 §5.4: per question, the context built from the run's top-``k`` passages."""
    out = {}
    for qid in qids:
        top = ranked_ids(run, qid, k)
        out[qid] = (
            build_context([ds.passage_sentences(pid, corpus) for pid in top], k, union, alpha, beta)
            if top
            else ""
        )
    return out


def read_contexts(setup: ReadingSetup, contexts: Mapping[str, str], desc: str | None = None) -> pd.DataFrame:
    """Read one context per question with ``setup.reader`` and score it with ``setup.judge``. An
    empty context is read as it is (the reader should say ``NO ANSWER``)."""
    ds, progress = setup.dataset, setup.progress
    qids = list(contexts)
    outs = read(setup.reader, [ds.questions[q].question for q in qids], [contexts[q] for q in qids],
                desc=desc, progress=progress)
    df = score_answers(ds, qids, [o.answer for o in outs], setup.judge, progress=progress,
                       contexts=[contexts[q] for q in qids])
    df["context_chars"] = [len(contexts[q]) for q in qids]
    return df


def read_run(setup: ReadingSetup, run: Run, qids: Sequence[str], ks: Sequence[int] | None = None,
             unions: Sequence[str] | None = None, system: str = "", setting: str = "pipeline",
             strategy: ReaderSpec | None = None) -> pd.DataFrame:
    """Per-question answers for every (k, union) over one run (:func:`read_runs` of one run)."""
    return read_runs(setup, {system: run}, qids, ks, unions, settings={system: setting}, strategy=strategy)


def read_runs(setup: ReadingSetup, runs: Mapping[str, Run], qids: Sequence[str],
              ks: Sequence[int] | None = None, unions: Sequence[str] | None = None,
              settings: Mapping[str, str] | None = None, strategy: ReaderSpec | None = None) -> pd.DataFrame:
    """Per-question answers for every (run, k, union) — ``ks`` default ``(setup.k,)``, ``unions``
    default ``(setup.union,)``, Union_freq with ``setup.alpha`` / ``setup.beta`` — read by
    ``setup.reader`` from the passages' hints in ``setup.corpus`` and scored with ``setup.judge``:
    one row per (system, k, union, question), in that order, with ``setting``
    (``settings[system]``, default ``pipeline``).

    Every context is read in **one** reader batch and every answer judged in **one** judge batch:
    the engine orders the prompts so that contexts extending one another (top-1 ⊂ top-3 ⊂ top-5)
    run one after another and share their prefix, and reads a context that several runs or both
    unions produce once (e.g. k = 1, where Union_norm = Union_freq). Answers in ``setup.known``
    (:func:`~inferqa_utils.reading.conditions.known_answers`: the build's own readings of the same
    prompts) are not read again. With a ``strategy`` other than the built-in reader, it answers the
    batch (:class:`~inferqa_utils.reading.readers.ReaderSpec`) and the ``reader`` column says
    ``<model> · <strategy>``."""
    ds, reader, progress, known = setup.dataset, setup.reader, setup.progress, setup.known
    ks = (setup.k,) if ks is None else ks
    unions = (setup.union,) if unions is None else unions
    jobs = []
    for system, run in runs.items():
        for k in ks:
            for union in unions:
                ctx = contexts_from_run(ds, run, qids, k, union, setup.alpha, setup.beta, setup.corpus)
                jobs += [(system, k, union, q, ctx[q]) for q in qids]
    if not jobs:
        return pd.DataFrame()
    contexts = [j[4] for j in jobs]
    questions = [ds.questions[j[3]].question for j in jobs]
    label = reader.name
    if strategy is None or strategy.name == DEFAULT_READER:
        desc = f"read {len(runs)} run(s) × k {list(ks)} × {list(unions)}"
        outs = read(reader, questions, contexts, desc=desc, progress=progress, known=known)
        answers = [o.answer for o in outs]
    else:
        answers = strategy(reader, questions, contexts, known=known)
        label = f"{reader.name} · {strategy.name}"
    df = score_answers(ds, [j[3] for j in jobs], answers, setup.judge, progress=progress, contexts=contexts)
    df["context_chars"] = [len(c) for c in contexts]
    return df.assign(
        setting=[(settings or {}).get(j[0], "pipeline") for j in jobs],
        system=[j[0] for j in jobs],
        k=[j[1] for j in jobs],
        union=[j[2] for j in jobs],
        reader=label,
    )
