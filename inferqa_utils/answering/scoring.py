"""Scoring a batch of answers to a dataset's questions: strict EM, then judged accuracy.

``em`` is strict exact match (SQuAD normalisation, paper 000 §4) against the question's answer
pool ``q.answers``; ``judged`` is EM, or else the LLM judge's "Yes" unless an answer guard refuses
the answer first (GPT-Eval in paper 000 §3.1.4, :func:`inferqa_utils.answering.judge.judge_answers`).
Every stage that reads (04 reading, 06 damaging passages, 07 beyond) scores its answers here.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..ir.datamodel import Dataset, Question
from ..llm.base import LLM
from .judge import judge_answers
from .prompts import NO_ANSWER


def gold_of(q: Question) -> list[str]:
    """The gold answers/aliases (what the judge is shown): ``q.meta["gold_answers"]`` when the build
    stored them, else ``q.answers``; the EM pool is ``q.answers``."""
    return list(q.meta.get("gold_answers") or q.answers)


def score_answers(ds: Dataset, qids: Sequence[str], answers: Sequence[str], judge: LLM | None,
                  progress: bool = True, contexts: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per answer: ``qid``, ``answer``, ``em`` (strict EM against the question's answer pool),
    ``judged`` (EM, or else the judge's Yes unless an answer guard refuses the answer first),
    ``no_answer`` (the reader said ``NO ANSWER``) and ``guard`` (the refusing guard or None). The
    ``in_context`` guard needs ``contexts``, the text each answer was read from."""
    qs = [ds.questions[q] for q in qids]
    js = judge_answers(
        judge,
        [q.question for q in qs],
        [q.answers for q in qs],
        list(answers),
        progress=progress,
        contexts=list(contexts) if contexts is not None else None,
    )
    return pd.DataFrame({"qid": list(qids), "answer": list(answers), "em": [j.em for j in js],
                         "judged": [j.judged for j in js], "no_answer": [a == NO_ANSWER for a in answers],
                         "guard": [j.guard for j in js]})
