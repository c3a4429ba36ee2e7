"""Answer judging (SPEC §6.4): strict normalised EM and an LLM Yes/No judge, side by side."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .llm.base import LLM
from .prompts import NO_ANSWER, judge_messages
from .textnorm import exact_match


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
    #: the judge's raw verdict when it was asked (None when EM decided or the reply was invalid)
    verdict: bool | None = None


def judge_answers(llm: LLM | None, questions: Sequence[str], golds: Sequence[Sequence[str]],
                  predictions: Sequence[str], progress: bool = True) -> list[Judgement]:
    """EM for every prediction; the LLM judge only where EM fails and the reader did not abstain.

    Judged accuracy = EM or the judge's Yes. With ``llm=None`` the judged column equals EM.
    """
    ems = [em(p, g) for p, g in zip(predictions, golds, strict=True)]
    ask = [i for i, (e, p) in enumerate(zip(ems, predictions, strict=True)) if not e and p != NO_ANSWER]
    verdicts: dict[int, bool | None] = {}
    if llm is not None and ask:
        replies = llm.chat([judge_messages(questions[i], list(golds[i]), predictions[i]) for i in ask],
                           max_tokens=3, desc=f"judge ({llm.name})", progress=progress)
        verdicts = {i: parse_yes_no(r) for i, r in zip(ask, replies, strict=True)}
    return [Judgement(e, e or bool(verdicts.get(i)), verdicts.get(i)) for i, e in enumerate(ems)]
