"""TriviaHG loader (docs/data.md, *Sources*), both shapes.

* ``validation_2024.json`` shape: ``Q_ID, Question, Hints, Snippet, ExactAnswer (str), MajorType,
  MinorType, Exact_Answer_Popularity{Category}, ...`` — no convergence scores.
* ``model_hints/<Model>.json`` shape: the above without ``Snippet`` plus ``Candidates_Answers``
  (gold last), ``Scores`` (per hint {candidate: 0/1}), ``Convergence`` (per hint) and
  ``Familiarity``; ``ExactAnswer`` is a list of aliases (once a plain string).

Copilot-generated hints carry web-citation marks such as ``[^1^]``; they are removed from the
hint text (the raw text is kept in ``Hint.meta['raw']``).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..ir.datamodel import Dataset, Hint, Question
from ..ir.qtype import source_label
from .records import iter_records

_CITATION = re.compile(r"\s*\[\^\d+\^\]")


def clean_hint(text: str) -> str:
    """Strip citation marks like ``[^1^]`` and surrounding whitespace."""
    return _CITATION.sub("", text).strip()


def _dedupe(xs: list[str]) -> list[str]:
    seen, out = set(), []
    for x in xs:
        k = x.strip()
        if k and k.lower() not in seen:
            seen.add(k.lower())
            out.append(k)
    return out


def trec_type(major: str | None, minor: str | None) -> str | None:
    """``("HUM:HUMAN", "ind:Individual")`` → ``"HUM:ind"``; ``"OTH:OTHER"`` majors (most
    ``model_hints`` files) get their coarse class back from the fine label."""

    return source_label(major, minor)


def load_triviahg(path: str | Path, name: str | None = None) -> Dataset:
    """Load a TriviaHG file of either shape into a :class:`Dataset` (no passages yet).

    Refused with :class:`~inferqa_utils.core.errors.DataFormatError` (file, record, field): a file
    without records, an id holding whitespace, a convergence that is not a finite number in
    [0, 1] (NaN would sort the hints at random), a ``Scores`` vote other than 0 or 1.
    """
    path = Path(path)
    questions: dict[str, Question] = {}
    for r, qid in iter_records(path, "Q_ID"):
        rec = r.record
        text = r.str_("Question")
        raw_hints = r.str_list("Hints")  # may be empty: construction drops it with a reason
        exact = r.get("ExactAnswer", (str, list))
        answers = [exact] if isinstance(exact, str) else r.str_list("ExactAnswer", nonempty=True)
        answers = _dedupe(answers)
        if not answers:
            r.fail("no non-empty answer", "ExactAnswer")
        candidates = r.str_list("Candidates_Answers", required=False)
        scores = r.get("Scores", list, required=False)
        conv = r.get("Convergence", list, required=False)
        fam = r.get("Familiarity", list, required=False)
        notes: list[str] = []
        # per-hint side lists that do not line up with the hints are ignored (and noted), so the
        # question stays usable: convergence is then computed instead of read
        if scores is not None and len(scores) != len(raw_hints):
            notes.append(f"Scores ignored: {len(scores)} entries for {len(raw_hints)} hints")
            scores = None
        if conv is not None and len(conv) != len(raw_hints):
            notes.append(f"Convergence ignored: {len(conv)} entries for {len(raw_hints)} hints")
            conv = None
        if fam is not None and len(fam) != len(raw_hints):
            notes.append(f"Familiarity ignored: {len(fam)} entries for {len(raw_hints)} hints")
            fam = None
        hints: list[Hint] = []
        for j, h in enumerate(raw_hints):
            meta: dict = {}
            cleaned = clean_hint(h)
            if cleaned != h.strip():
                meta["raw"] = h
            hs = r.votes(scores[j], f"Scores[{j}]") if scores is not None else None
            c = r.fraction(conv[j], f"Convergence[{j}]") if conv is not None else None
            if fam is not None:
                meta["familiarity"] = fam[j]
            hints.append(Hint(cleaned, convergence=c, scores=hs, meta=meta))
        pop = rec.get("Exact_Answer_Popularity")
        difficulty = pop.get("Category") if isinstance(pop, dict) else None
        questions[qid] = Question(
            qid=qid,
            question=text.strip(),
            answers=answers,
            hints=hints,
            candidates=_dedupe(candidates),
            qtype=trec_type(rec.get("MajorType"), rec.get("MinorType")),
            difficulty=difficulty,
            reference=rec.get("Snippet") if isinstance(rec.get("Snippet"), str) else None,
            source=f"triviahg:{path.name}",
            meta={"major_type": rec.get("MajorType"), "minor_type": rec.get("MinorType"),
                  **({"load_notes": notes} if notes else {})},
        )
    return Dataset(name=name or f"triviahg-{path.stem}", questions=questions,
                   meta={"source_files": [str(path)], "shape": "triviahg"})
