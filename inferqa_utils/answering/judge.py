"""Answer judging (paper 000 §4): strict normalised EM and an LLM Yes/No judge, side by side.

Judged accuracy = strict EM, or else the LLM judge's "Yes" — unless a named guard refuses the
answer first (:mod:`inferqa_utils.answering.guards`: an answer found in the question or in the
context read, or a generic category phrase, is never accepted and the judge is not asked).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..ir.textnorm import exact_match
from ..llm.base import LLM
from .guards import DEFAULT_GUARDS, guard_answer
from .prompts import NO_ANSWER, judge_messages


def em(prediction: str, answers: Sequence[str]) -> bool:
    """Strict EM against the answer pool; ``NO ANSWER`` is never correct."""
    return prediction != NO_ANSWER and exact_match(prediction, answers)


def parse_yes_no(reply: str) -> bool | None:
    """Only replies that start with Yes/No count; anything else is ``None`` (invalid)."""
    r = reply.strip().lstrip("\"'*").lower()
    if r.startswith("yes"):
        return True
    if r.startswith("no"):
        return False
    return None


@dataclass
class Judgement:
    em: bool
    judged: bool
    #: the judge's raw verdict when it was asked (None when EM or a guard decided, or the reply was invalid)
    verdict: bool | None = None
    #: the guard that refused the answer before the judge (None when no guard fired)
    guard: str | None = None


def judge_answers(
    llm: LLM | None,
    questions: Sequence[str],
    golds: Sequence[Sequence[str]],
    predictions: Sequence[str],
    progress: bool = True,
    contexts: Sequence[str | None] | None = None,
    guards: Sequence[str] = DEFAULT_GUARDS,
) -> list[Judgement]:
    """EM for every prediction; then the guards, then the LLM judge, only where EM fails and the
    reader did not abstain.

    ``contexts`` (one per prediction, or None) feeds the ``in_context`` guard. ``guards=()``
    switches the guards off. With ``llm=None`` the judged column equals EM.
    """
    n = len(predictions)
    if contexts is None:
        contexts = [None] * n
    if not (len(questions) == len(golds) == n == len(contexts)):
        raise ValueError(f"judge_answers: {len(questions)} questions, {len(golds)} golds, {n} predictions, "
                         f"{len(contexts)} contexts")
    ems = [em(p, g) for p, g in zip(predictions, golds, strict=True)]
    refused: dict[int, str] = {}
    ask = []
    for i, (e, p) in enumerate(zip(ems, predictions, strict=True)):
        if e or p == NO_ANSWER:
            continue
        rule = guard_answer(p, questions[i], contexts[i], guards, golds[i]) if guards else None
        if rule is not None:
            refused[i] = rule
        else:
            ask.append(i)
    verdicts: dict[int, bool | None] = {}
    if llm is not None and ask:
        replies = llm.chat([judge_messages(questions[i], list(golds[i]), predictions[i]) for i in ask],
                           max_tokens=3, until=("yes", "no"), desc=f"judge ({llm.name})", progress=progress)
        verdicts = {i: parse_yes_no(r) for i, r in zip(ask, replies, strict=True)}
    return [
        Judgement(e, e or bool(verdicts.get(i)), verdicts.get(i), refused.get(i)) for i, e in enumerate(ems)
    ]
