"""Parametric-answerability filter (paper 000 §3.1.4).

Each closed-book model answers every question with no context; the answer is judged (strict EM,
then the guards and the LLM judge, paper 000 §4). The paper judges three times. With greedy decoding
three runs of one prompt are identical, so repeat r here uses a different prompt: the five
few-shot examples rotated to start at example r. A question is *parametric* if any model is
correct in any repeat.

All answers are judged in one batch, so the judgements of one question (one per model and
repeat) run one after another and share the judge's prompt prefix (KV reuse). A question that
some answer already matches by strict EM is parametric whatever the judge says, so its other
answers are not judged (``correct`` = EM there): the judge is asked only where it decides.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..answering.guards import DEFAULT_GUARDS
from ..answering.judge import Judgement, em, judge_answers
from ..answering.reader import read_closed_book
from ..ir.datamodel import Question
from ..llm.base import LLM

COLUMNS = ["qid", "model", "repeat", "answer", "em", "correct", "guard"]


def parametric_answers(models: Sequence[LLM], judge: LLM | None, questions: Sequence[Question],
                       repeats: int = 3, progress: bool = True,
                       guards: Sequence[str] = DEFAULT_GUARDS) -> pd.DataFrame:
    """One row per (question, model, repeat): the closed-book answer, EM, judged correctness and
    the guard that refused it (if any)."""
    texts = [q.question for q in questions]
    rows = []
    for llm in models:
        for r in range(repeats):
            outs = read_closed_book(llm, texts, progress=progress, rotation=r)
            rows += [(q, llm.name, r, o.answer) for q, o in zip(questions, outs, strict=True)]
    ems = [em(a, q.answers) for q, _, _, a in rows]
    decided = {q.qid for (q, *_), e in zip(rows, ems, strict=True) if e}
    open_rows = [i for i, (q, *_) in enumerate(rows) if q.qid not in decided]
    judged = judge_answers(
        judge,
        [rows[i][0].question for i in open_rows],
        [rows[i][0].answers for i in open_rows],
        [rows[i][3] for i in open_rows],
        progress=progress,
        guards=guards,
    )
    js = [Judgement(em=e, judged=e) for e in ems]
    for i, j in zip(open_rows, judged, strict=True):
        js[i] = j
    return pd.DataFrame(
        [
            {
                "qid": q.qid,
                "model": m,
                "repeat": r,
                "answer": a,
                "em": j.em,
                "correct": j.judged,
                "guard": j.guard,
            }
            for (q, m, r, a), j in zip(rows, js, strict=True)
        ],
        columns=COLUMNS,
    )


def parametric_qids(answers: pd.DataFrame) -> set[str]:
    """Questions some model answered correctly (judged) in some repeat."""
    if answers.empty:
        return set()
    return set(answers.loc[answers["correct"].astype(bool), "qid"])
