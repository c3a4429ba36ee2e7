"""Helpers for notebook 00 (quickstart): one question from hints to an answer."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .answering.judge import judge_answers
from .answering.reader import read, read_closed_book
from .construction.passages import build_passages
from .datamodel import Dataset, Passage, Question
from .llm.base import LLM
from .retrieval import BM25sRetriever


def under_papermill() -> bool:
    """True when the notebook runs headless through our runner (no widgets then)."""
    return bool(os.environ.get("INFERQA_PROFILE"))


def pick_questions(ds: Dataset, must_include: str, max_questions: int | None) -> list[Question]:
    """The first ``max_questions`` questions, always including ``must_include``."""
    if must_include not in ds.questions:
        raise KeyError(f"question {must_include!r} is not in dataset {ds.name!r}; e.g. {list(ds.questions)[:5]}")
    qs = list(ds)
    if max_questions is not None:
        qs = qs[:max_questions]
        if all(q.qid != must_include for q in qs):
            qs = [ds.questions[must_include], *qs[: max_questions - 1]]
    return qs


_STRENGTH = {"strong": 0, "medium": 1, "weak": 2}


def demo_hints(q: Question, n_hints: int) -> list[str]:
    """The ``n_hints`` hints used for passages: highest convergence first when known, else the
    author-marked strength (strong → weak), else source order."""
    idx = list(range(len(q.hints)))
    if all(h.convergence is not None for h in q.hints):
        idx.sort(key=lambda i: -q.hints[i].convergence)
    else:
        idx.sort(key=lambda i: _STRENGTH.get(q.hints[i].meta.get("strength", ""), 3))
    return [q.hints[i].text for i in idx[:n_hints]]


def demo_corpus(questions: list[Question], n_hints: int) -> dict[str, Passage]:
    """Subset-permutation passages of the ``n_hints`` best hints (:func:`demo_hints`) of every question."""
    out: dict[str, Passage] = {}
    for q in questions:
        for p in build_passages(q.qid, demo_hints(q, n_hints)):
            out[p.pid] = p
    return out


@dataclass
class QuickstartResult:
    question: Question
    retrieved: list[dict[str, Any]]
    answers: list[dict[str, Any]]


def run_quickstart(q: Question, passages: dict[str, Passage], retriever: BM25sRetriever, llm: LLM,
                   judge: LLM | None, top_k: int = 5) -> QuickstartResult:
    """Retrieve with BM25, then read: closed book, the top-1 retrieved passage, the best own
    passage (all hints) and a passage of another question."""
    hits = retriever.search_one(q.question, k=top_k)
    retrieved = [{"rank": r, "passage": pid, "own question": passages[pid].qid == q.qid,
                  "hints": passages[pid].n_hints, "score": round(s, 3), "text": passages[pid].text}
                 for r, (pid, s) in enumerate(hits, 1)]
    own = [p for p in passages.values() if p.qid == q.qid]
    full = max(own, key=lambda p: (p.n_hints, [-i for i in p.hint_ids]))
    other = next((p for p in passages.values() if p.qid != q.qid and p.n_hints == full.n_hints), None)
    settings = [("top-1 retrieved (BM25)", passages[hits[0][0]].text if hits else ""),
                (f"right passage ({full.n_hints} own hints)", full.text)]
    if other is not None:
        settings.append(("wrong passage (another question)", other.text))
    outs = read(llm, [q.question] * len(settings), [c for _, c in settings], progress=False)
    closed = read_closed_book(llm, [q.question], progress=False)[0]
    names = ["closed book (no context)", *[s for s, _ in settings]]
    preds = [closed, *outs]
    js = judge_answers(judge, [q.question] * len(preds), [q.answers] * len(preds), [o.answer for o in preds],
                       progress=False)
    answers = [{"setting": n, "answer": o.answer, "raw reply": o.raw.strip()[:80], "EM": j.em, "judged": j.judged}
               for n, o, j in zip(names, preds, js, strict=True)]
    return QuickstartResult(q, retrieved, answers)
