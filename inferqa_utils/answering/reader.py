"""The reader (paper 000 A.4–6.2): prompt, greedy generation, post-processing."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..llm.base import LLM
from .prompts import NO_ANSWER, READER_LAYOUT, closed_book_messages, reader_messages

MAX_NEW_TOKENS = 32

_LEADING = re.compile(r"^[\s\"'`“”‘’\[\(\{<*#:\-]+")
_TRAILING = re.compile(r"[\s\"'`“”‘’*.,;:!]+$")
_PREFIX = re.compile(r"^(final answer|answer|a)\s*[:\-]\s*", re.I)
_SUBJECT = r"(it|he|she|they|this|that|these|those|there|i|we|you|the answer|the \w+)"
_FINITE = (
    r"(is|are|was|were|am|has|have|had|does|do|did|can|could|will|would|should|may|might|must|"
    r"think|believe|seems?)"
)
_SENTENCE = re.compile(rf"\b{_SUBJECT}\s+(\w+\s+){{0,3}}?{_FINITE}\b", re.I)


def postprocess(raw: str) -> str:
    """paper 000 §4: last non-empty line; strip stray brackets/quotes; empty, a full sentence
    (subject + finite verb) or anything mentioning "no answer" → ``NO ANSWER``."""
    lines = [ln.strip() for ln in raw.strip().splitlines() if ln.strip()]
    if not lines:
        return NO_ANSWER
    s = lines[-1]
    if "no answer" in s.lower():
        return NO_ANSWER
    s = _PREFIX.sub("", _LEADING.sub("", s))
    s = _TRAILING.sub("", s).strip()
    for op, cl in ("()", "[]", "{}"):  # drop unmatched closing brackets only
        while s.endswith(cl) and s.count(cl) > s.count(op):
            s = _TRAILING.sub("", s[:-1]).strip()
    if not s:
        return NO_ANSWER
    words = s.split()
    if len(words) >= 3 and _SENTENCE.search(s):
        return NO_ANSWER
    return s


@dataclass
class ReaderOutput:
    raw: str
    answer: str


@dataclass(frozen=True)
class KnownAnswers:
    """Answers ``model`` already gave to ``(question, context)`` with the reader prompt in
    ``layout`` — e.g. the labelling and pooled judgments a dataset release ships — which
    :func:`read` returns without a model call (greedy decoding: the same prompt, the same answer)."""

    model: str
    layout: str
    answers: Mapping[tuple[str, str], str]

    def get(self, llm: LLM, layout: str, question: str, context: str) -> str | None:
        if self.model != llm.name or self.layout != layout:
            return None
        return self.answers.get((question, context))


def read(
    llm: LLM,
    questions: Sequence[str],
    contexts: Sequence[str],
    desc: str | None = None,
    progress: bool = True,
    layout: str = READER_LAYOUT,
    known: KnownAnswers | None = None,
) -> list[ReaderOutput]:
    """Answer each question from its context (one batch, cached, prefix-ordered); answers in
    ``known`` (same model and layout) are taken as they are."""
    if len(questions) != len(contexts):
        raise ValueError(f"{len(questions)} questions for {len(contexts)} contexts")
    outs: list[ReaderOutput | None] = [None] * len(questions)
    todo = []
    for i, (q, c) in enumerate(zip(questions, contexts, strict=True)):
        a = known.get(llm, layout, q, c) if known is not None else None
        if a is None:
            todo.append(i)
        else:
            outs[i] = ReaderOutput(a, a)
    msgs = [reader_messages(questions[i], contexts[i], layout=layout) for i in todo]
    raws = (
        llm.chat(msgs, max_tokens=MAX_NEW_TOKENS, desc=desc or f"read ({llm.name})", progress=progress)
        if msgs
        else []
    )
    for i, r in zip(todo, raws, strict=True):
        outs[i] = ReaderOutput(r, postprocess(r))
    return outs  # type: ignore[return-value]


def read_closed_book(llm: LLM, questions: Sequence[str], progress: bool = True,
                     rotation: int = 0) -> list[ReaderOutput]:
    """Answer without context (parametric knowledge); ``rotation`` picks the few-shot order."""
    raws = llm.chat([closed_book_messages(q, rotation) for q in questions], max_tokens=MAX_NEW_TOKENS,
                    desc=f"closed-book ({llm.name})", progress=progress)
    return [ReaderOutput(r, postprocess(r)) for r in raws]
