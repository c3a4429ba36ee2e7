"""WikiHint loader (README, Data (WikiHint)); also reads our embedded dataset, which uses the same shape.

Record: ``{"id", "question": {"question", "question_type": {"major", "minor"}, "difficulty",
"candidate_answers" (gold last), ...}, "answer": {"answer", "aliases"?}, "hints": [{"hint",
"rank"?, "metrics"?: {"convergence", "answer_leakage", ...}, ...}], "reference"?: {"text"},
"references"?: [{"text"}, ...]}``. Optional keys may be absent. ``aliases`` and the reference
passages are our extensions (WikiHint has neither); hints are ordered by ``rank`` when every hint
has one.
"""

from __future__ import annotations

from pathlib import Path

from ..datamodel import Dataset, Hint, Question
from .records import iter_records
from .triviahg import _dedupe, trec_type


def load_wikihint(path: str | Path, name: str | None = None, source: str = "wikihint") -> Dataset:
    """Load a WikiHint-shaped JSON list or JSONL file."""
    path = Path(path)
    questions: dict[str, Question] = {}
    for r, qid in iter_records(path, "id"):
        rec = r.record
        qobj = r.get("question", (dict, str))
        if isinstance(qobj, str):  # tolerate a flat question string
            qobj = {"question": qobj}
        qtext = r.str_("question", obj=qobj, path="question.question")
        qt = r.get("question_type", dict, required=False, default={}, obj=qobj, path="question.question_type")
        cands = r.str_list("candidate_answers", required=False, obj=qobj, path="question.candidate_answers")
        aobj = r.get("answer", (dict, str))
        if isinstance(aobj, str):
            aobj = {"answer": aobj}
        gold = r.str_("answer", obj=aobj, path="answer.answer")
        aliases = r.str_list("aliases", required=False, obj=aobj, path="answer.aliases")
        raw_hints = r.get("hints", list)
        if not raw_hints:
            r.fail("list is empty", "hints")
        hints: list[Hint] = []
        ranks: list[int | None] = []
        for j, h in enumerate(raw_hints):
            if isinstance(h, str):
                h = {"hint": h}
            if not isinstance(h, dict):
                r.fail(f"expected an object or a string, got {type(h).__name__}", f"hints[{j}]")
            text = r.str_("hint", obj=h, path=f"hints[{j}].hint", nonempty=False)
            metrics = h.get("metrics") if isinstance(h.get("metrics"), dict) else {}
            conv = metrics.get("convergence")
            if conv is not None and (not isinstance(conv, int | float) or isinstance(conv, bool)):
                r.fail(f"expected a number, got {type(conv).__name__}", f"hints[{j}].metrics.convergence")
            rank = h.get("rank")
            try:
                ranks.append(int(rank) if rank is not None else None)
            except (TypeError, ValueError):
                r.fail(f"expected an integer rank, got {rank!r}", f"hints[{j}].rank")
            meta = {k: v for k, v in h.items() if k not in ("hint", "metrics")}
            if metrics:
                meta["metrics"] = metrics
            hints.append(Hint(text.strip(), convergence=float(conv) if conv is not None else None, meta=meta))
        if all(x is not None for x in ranks) and len(set(ranks)) == len(ranks):
            hints = [h for _, h in sorted(zip(ranks, hints, strict=True), key=lambda t: t[0])]
        refs = _references(r, rec)
        questions[qid] = Question(
            qid=qid,
            question=qtext.strip(),
            answers=_dedupe([gold, *aliases]),
            hints=hints,
            candidates=_dedupe(cands),
            qtype=trec_type(qt.get("major"), qt.get("minor")),
            difficulty=qobj.get("difficulty"),
            reference=refs[0] if refs else None,
            extra_references=refs[1:],
            source=f"{source}:{path.name}",
            meta={"major_type": qt.get("major"), "minor_type": qt.get("minor")},
        )
    return Dataset(name=name or f"{source}-{path.stem}", questions=questions,
                   meta={"source_files": [str(path)], "shape": "wikihint"})


def _references(r, rec: dict) -> list[str]:
    """Reference texts from ``reference`` ({"text"} or a string) and ``references`` (a list of either)."""
    raw = []
    if rec.get("reference") is not None:
        raw.append(("reference", rec["reference"]))
    refs = rec.get("references")
    if refs is not None:
        if not isinstance(refs, list):
            r.fail(f"expected a list, got {type(refs).__name__}", "references")
        raw += [(f"references[{i}]", x) for i, x in enumerate(refs)]
    out = []
    for path, x in raw:
        text = x.get("text") if isinstance(x, dict) else x
        if not isinstance(text, str):
            r.fail(f"expected a string or {{'text': str}}, got {type(x).__name__}", path)
        if text.strip() and text.strip() not in out:
            out.append(text.strip())
    return out
