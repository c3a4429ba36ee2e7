"""Measuring the answer judge (paper 000 §4) on candidate sets with known truth.

For a question whose pool holds only its canonical gold answer, a good judge must

* **accept** the gold's aliases (other surface forms of the same answer);
* **reject** the source's distractor candidates (plausible rivals of the same type, paper 000 §3.1.2),
  the entities the question or the hints name (related, not the answer: Cthulhu → "R'lyeh"),
  and generic phrases ("the character", "this player").

:func:`candidate_set` builds these labelled candidates from any source that carries candidates
(embedded, TriviaHG ``model_hints``, WikiHint); :func:`judge_candidates` runs a judge over them
with or without the answer guards (:mod:`inferqa_utils.answering.guards`), the context being the
question's hints (what a labeler reads); :func:`precision_recall` summarises. The numbers behind
"judged accuracy" in the notebooks come from ``benchmarks/judge_quality.py``, recorded in
``inferqa_utils/judge_quality.json``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..ir.datamodel import Question
from ..ir.textnorm import normalize_answer
from ..llm.base import LLM
from .guards import DEFAULT_GUARDS
from .judge import judge_answers

RECORD = Path(__file__).with_name("judge_quality.json")

#: generic phrases offered to the judge for every question (a reader's typical non-answers)
GENERIC_PHRASES = ("the character", "this player", "the band", "an actor", "the city", "the country",
                   "the individual", "this person", "the author", "the company")

KINDS = ("alias", "distractor", "named entity", "generic")

_CAP_SPAN = re.compile(r"\b[A-Z][\w'’\-]*(?:\s+(?:of|the|de|da|di|von|van)?\s*[A-Z][\w'’\-]*)*")
_DEMONYM = re.compile(r"^[A-Z][a-z]+(an|ian|ese|ish|i|ch)$")
_MONTHS = frozenset(
    [
        "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
        "november", "december",
    ]
)
_NOT_ENTITY = frozenset(
    [
        "it", "he", "she", "they", "this", "that", "these", "those", "his", "her", "its", "their", "there",
        "the", "a", "an", "in", "on", "at", "which", "what", "who", "whom", "whose", "where", "when", "why",
        "how", "one", "some", "many", "its", "during", "after", "before", "while",
    ]
)


def named_entities(texts: Sequence[str], exclude: Sequence[str], limit: int = 4) -> list[str]:
    """Capitalised spans of ``texts`` (a light, model-free stand-in for NER), skipping sentence-initial
    function words and any span that overlaps an answer in ``exclude`` (token containment either way)."""
    ex = [set(normalize_answer(a).split()) for a in exclude]
    out: list[str] = []
    for text in texts:
        for m in _CAP_SPAN.finditer(text):
            span = m.group(0).strip()
            words = span.split()
            while words and words[0].lower() in _NOT_ENTITY:
                words = words[1:]
            span = " ".join(words)
            toks = set(normalize_answer(span).split())
            if not toks or len(span) < 3:
                continue
            if any(toks & e for e in ex):
                continue
            if len(words) == 1 and (_DEMONYM.match(span) or span.lower() in _MONTHS):
                continue  # "English", "August": not entities a reader would give as the answer
            if normalize_answer(span) not in {normalize_answer(o) for o in out}:
                out.append(span)
    return sorted(out, key=lambda s: -min(len(s.split()), 2))[:limit]  # multi-word names first


@dataclass(frozen=True)
class Candidate:
    qid: str
    question: str
    gold: str
    context: str
    answer: str
    kind: str  # alias | distractor | named entity | generic

    @property
    def correct(self) -> bool:
        return self.kind == "alias"


def candidate_set(questions: Sequence[Question], max_distractors: int = 10, max_entities: int = 4,
                  generic: Sequence[str] = GENERIC_PHRASES, n_generic: int = 2) -> list[Candidate]:
    """Labelled candidates per question (see module docstring). The pool shown to the judge is the
    canonical gold only; the generic phrases rotate over questions (``n_generic`` each)."""
    out: list[Candidate] = []
    for i, q in enumerate(questions):
        gold, aliases = q.answers[0], q.answers[1:]
        ctx = " ".join(q.hint_texts)
        norm_answers = {normalize_answer(a) for a in q.answers}
        seen: set[str] = set()

        def add(answer: str, kind: str, q=q, gold=gold, ctx=ctx, seen=seen) -> None:
            key = normalize_answer(answer)
            if key and key not in seen:
                seen.add(key)
                out.append(Candidate(q.qid, q.question, gold, ctx, answer, kind))

        seen.add(normalize_answer(gold))
        for a in aliases:
            add(a, "alias")
        for c in [c for c in q.candidates if normalize_answer(c) not in norm_answers][:max_distractors]:
            add(c, "distractor")
        for e in named_entities([q.question, *q.hint_texts], q.answers, max_entities):
            add(e, "named entity")
        for j in range(n_generic):
            add(generic[(i * n_generic + j) % len(generic)], "generic")
    return out


def judge_candidates(judge: LLM, cands: Sequence[Candidate], guards: Sequence[str] = DEFAULT_GUARDS,
                     progress: bool = False) -> pd.DataFrame:
    """One row per candidate: ``accepted`` (the judge's Yes, unless a guard refused first), ``guard``."""
    js = judge_answers(
        judge,
        [c.question for c in cands],
        [[c.gold] for c in cands],
        [c.answer for c in cands],
        progress=progress,
        contexts=[c.context for c in cands],
        guards=guards,
    )
    return pd.DataFrame({"qid": [c.qid for c in cands], "answer": [c.answer for c in cands],
                         "kind": [c.kind for c in cands], "correct": [c.correct for c in cands],
                         "accepted": [j.judged for j in js], "guard": [j.guard for j in js],
                         "verdict": [j.verdict for j in js]})


def precision_recall(df: pd.DataFrame) -> dict[str, float | int]:
    """Precision (accepted answers that are correct), recall (aliases accepted), false-accept rate
    (wrong candidates accepted) and the false-accept rate per kind of wrong candidate."""
    acc = df[df["accepted"]]
    wrong = df[~df["correct"]]
    out: dict[str, float | int] = {
        "candidates": len(df),
        "aliases": int(df["correct"].sum()),
        "precision": round(float(acc["correct"].mean()), 4) if len(acc) else float("nan"),
        "recall": round(float(df.loc[df["correct"], "accepted"].mean()), 4)
        if df["correct"].any()
        else float("nan"),
        "false_accept_rate": round(float(wrong["accepted"].mean()), 4) if len(wrong) else float("nan"),
    }
    for kind in KINDS[1:]:
        sub = wrong[wrong["kind"] == kind]
        out[f"false_accept {kind}"] = round(float(sub["accepted"].mean()), 4) if len(sub) else float("nan")
    return out


def recorded(model: str, guarded: bool = True) -> dict | None:
    """The recorded measurement for a judge model (``benchmarks/judge_quality.py --record``), or None."""
    if not RECORD.exists():
        return None
    rec = json.loads(RECORD.read_text(encoding="utf-8"))
    return rec.get("models", {}).get(model, {}).get("guarded" if guarded else "unguarded")


def judge_note(model: str | None) -> str:
    """One line to print beside every judged-accuracy number: the judge and its measured precision."""
    if not model:
        return "judged accuracy = strict EM (no LLM judge)"
    m = recorded(model)
    if not m:
        return (f"judge {model} behind the answer guards; its precision is not measured yet "
                "(benchmarks/judge_quality.py --record)")
    if m.get("precision") is None:
        return (f"judge {model} behind the answer guards accepted no candidate when measured "
                f"(recall {100 * m['recall']:.1f} %, benchmarks/judge_quality.py): it says No to everything")
    return (f"judge {model} behind the answer guards: measured precision {100 * m['precision']:.1f} %, "
            f"recall {100 * m['recall']:.1f} %, false accepts {100 * m['false_accept_rate']:.1f} % of "
            f"{m['candidates'] - m['aliases']} wrong candidates (benchmarks/judge_quality.py)")
