"""Human verification of the expanded answer pools (paper 000 §3.2.3–3.2.4, paper Fig. 7).

Per question the interface shows the gold answer(s) and every distinct generated answer the judge
accepted, exact gold matches highlighted; a person ticks (valid) or unticks (invalid). Decisions
are saved at once to a JSON file ``{qid: {answer: true|false}}`` under ``data/verification/``,
which every later build applies. Answers absent from the file count as accepted (the judge's
decision stands until a person overrides it).

The label update then (a) removes unticked answers from the pool, (b) re-runs the leakage filter
on the new pool — a generated answer that occurs in the question's own hints was copied, not
inferred, and leaves the pool — and (c) sets 2 → 1 where no accepted answer of a passage remains.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..datamodel import Question
from ..errors import DataFormatError
from ..textnorm import normalize_answer
from .labeling import QuestionLabels, label_rule
from .leakage import LeakageFilter

Decisions = dict[str, dict[str, bool]]


def load_decisions(path: str | Path) -> Decisions:
    """``{qid: {answer: accepted}}``; a missing file means no decisions yet."""
    path = Path(path)
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise DataFormatError(path, f"invalid JSON ({e})") from None
    if not isinstance(data, dict):
        raise DataFormatError(path, "expected an object {qid: {answer: true|false}}")
    for qid, ans in data.items():
        if not isinstance(ans, dict) or not all(isinstance(v, bool) for v in ans.values()):
            raise DataFormatError(path, "expected {answer: true|false}", record=qid)
    return data


def save_decisions(path: str | Path, decisions: Decisions) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(decisions, ensure_ascii=False, indent=1, sort_keys=True), encoding="utf-8")
    tmp.replace(path)
    return path


def distinct_accepted(result: QuestionLabels) -> list[str]:
    """Distinct accepted generated answers of a question, in first-seen order."""
    seen: dict[str, str] = {}
    for acc in result.accepted.values():
        for a in acc:
            seen.setdefault(normalize_answer(a), a)
    return list(seen.values())


@dataclass
class LabelUpdate:
    """Outcome of applying verification to one question."""

    qid: str
    pool: list[str]
    rejected_by_person: list[str] = field(default_factory=list)
    rejected_by_leakage: list[str] = field(default_factory=list)
    downgraded: int = 0  # passages 2 → 1


def update_labels(q: Question, hints: Sequence[str], result: QuestionLabels, decisions: Mapping[str, bool],
                  leakage: LeakageFilter) -> LabelUpdate:
    """Apply one question's decisions (paper 000 §3.2.3–3.2.4) to ``result.labels`` in place."""
    gold = {normalize_answer(a) for a in q.answers}
    generated = [a for a in distinct_accepted(result) if normalize_answer(a) not in gold]
    by_person = [a for a in generated if decisions.get(a) is False]
    kept = [a for a in generated if a not in by_person]
    leaking = {lk.answer for lk in leakage.find(kept, hints)}
    by_leak = [a for a in kept if a in leaking]
    rejected = {normalize_answer(a) for a in by_person + by_leak}
    down = 0
    for pid, acc in result.accepted.items():
        new = label_rule(acc, rejected)
        if result.labels.get(pid) == 2 and new == 1:
            down += 1
        result.labels[pid] = new
    pool = list(q.answers) + [a for a in kept if a not in by_leak]
    return LabelUpdate(q.qid, pool, by_person, by_leak, down)


def expansion_table(questions: Mapping[str, Question], results: Mapping[str, QuestionLabels],
                    updates: Mapping[str, LabelUpdate], split_of: Mapping[str, str]) -> pd.DataFrame:
    """One row per generated answer that a judge admitted to a question's answer pool (not a
    strict-EM gold match): who produced it, on how many passages, and its fate after verification
    (``in pool``, ``rejected by person`` or ``rejected by leakage``)."""
    rows = []
    for qid, res in results.items():
        q = questions.get(qid)
        gold = list(q.meta.get("gold_answers") or q.answers) if q is not None else []
        upd = updates.get(qid)
        for ans, rec in res.admitted.items():
            if rec.get("by") != "judge":
                continue
            fate = ("rejected by person" if upd and ans in upd.rejected_by_person else
                    "rejected by leakage" if upd and ans in upd.rejected_by_leakage else "in pool")
            rows.append({"qid": qid, "split": split_of.get(qid), "question": q.question if q else "",
                         "gold": " | ".join(gold), "answer": ans, "labelers": ", ".join(rec.get("labelers", [])),
                         "passages": rec.get("passages", 0), "admitted_by": "judge", "status": fate})
    return pd.DataFrame(rows, columns=["qid", "split", "question", "gold", "answer", "labelers", "passages",
                                       "admitted_by", "status"])


def refusal_table(results: Mapping[str, QuestionLabels], split_of: Mapping[str, str]) -> pd.DataFrame:
    """One row per (question, answer) that an answer guard refused before the judge."""
    rows = [{"qid": qid, "split": split_of.get(qid), "answer": ans, "rule": rec.get("rule"),
             "labelers": ", ".join(rec.get("labelers", [])), "passages": rec.get("passages", 0)}
            for qid, res in results.items() for ans, rec in res.refused.items()]
    return pd.DataFrame(rows, columns=["qid", "split", "answer", "rule", "labelers", "passages"])


def verification_widget(questions: Sequence[Question], results: Mapping[str, QuestionLabels], path: str | Path):
    """An ipywidgets form (paper Fig. 7): per question the gold answer(s) and every accepted
    generated answer as a checkbox (exact gold matches highlighted). Every tick saves ``path``."""
    import ipywidgets as w

    decisions = load_decisions(path)
    rows = []
    for q in questions:
        res = results.get(q.qid)
        if res is None:
            continue
        gold = {normalize_answer(a) for a in q.meta.get("gold_answers") or q.answers}
        answers = distinct_accepted(res)
        # answers the judge admitted (not gold matches) first: those are the decisions that matter
        answers = sorted(answers, key=lambda a: normalize_answer(a) in gold)
        if not answers:
            continue
        header = w.HTML(f"<b>{q.qid}</b>: {q.question}<br>gold: <b>{' | '.join(q.answers)}</b>")
        boxes = []
        for a in answers:
            exact = normalize_answer(a) in gold
            label = f"<span style='background:#c8f7c5'>{a}</span>" if exact else a
            cb = w.Checkbox(value=decisions.get(q.qid, {}).get(a, True), indent=False,
                            layout=w.Layout(width="30px"))

            def on_change(change, qid=q.qid, ans=a):
                decisions.setdefault(qid, {})[ans] = bool(change["new"])
                save_decisions(path, decisions)

            cb.observe(on_change, names="value")
            boxes.append(w.HBox([cb, w.HTML(label)]))
        rows.append(w.VBox([header, *boxes], layout=w.Layout(border="1px solid #ddd", padding="4px")))
    info = w.HTML(f"Decisions are saved to <code>{path}</code> as you click; re-run the build cells to apply.")
    return w.VBox([info, *rows])
