"""Parametric-answerability filter (SPEC §3 step 4).

Each reader/labeler LLM answers every question with no context; the answer is judged (strict EM,
then the LLM judge, SPEC §6.4). The paper judges three times. With greedy decoding three runs of
one prompt are identical, so repeat r here uses a different prompt: the five few-shot examples
rotated to start at example r. A question is *parametric* if any model is correct in any repeat.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..datamodel import Question
from ..judge import judge_answers
from ..llm.base import LLM
from ..reader import read_closed_book


def parametric_answers(models: Sequence[LLM], judge: LLM | None, questions: Sequence[Question],
                       repeats: int = 3, progress: bool = True) -> pd.DataFrame:
    """One row per (question, model, repeat): the closed-book answer, EM and judged correctness."""
    rows = []
    texts = [q.question for q in questions]
    golds = [q.answers for q in questions]
    for llm in models:
        for r in range(repeats):
            outs = read_closed_book(llm, texts, progress=progress, rotation=r)
            preds = [o.answer for o in outs]
            js = judge_answers(judge, texts, golds, preds, progress=progress)
            for q, o, j in zip(questions, outs, js, strict=True):
                rows.append({"qid": q.qid, "model": llm.name, "repeat": r, "answer": o.answer,
                             "em": j.em, "correct": j.judged})
    return pd.DataFrame(rows, columns=["qid", "model", "repeat", "answer", "em", "correct"])


def parametric_qids(answers: pd.DataFrame) -> set[str]:
    """Questions some model answered correctly (judged) in some repeat."""
    if answers.empty:
        return set()
    return set(answers.loc[answers["correct"].astype(bool), "qid"])
