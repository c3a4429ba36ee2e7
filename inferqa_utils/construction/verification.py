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

from ..core.atomic import write_text_atomic
from ..core.errors import DataFormatError
from ..core.textio import read_text
from ..ir.datamodel import Question
from ..ir.textnorm import normalize_answer
from .labeling import QuestionLabels, label_rule
from .leakage import LeakageFilter

Decisions = dict[str, dict[str, bool]]


def load_decisions(path: str | Path) -> Decisions:
    """``{qid: {answer: accepted}}``; a missing file means no decisions yet.

    Refused with :class:`~inferqa_utils.core.errors.DataFormatError` naming the file, the question
    (record) and the answer (field): invalid JSON or UTF-8 (with the position), a top level that
    is not an object, a question whose decisions are not an object, a decision that is not
    ``true`` or ``false`` (``1``, ``"yes"`` and ``null`` included).
    """
    path = Path(path)
    if not path.exists():
        return {}
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise DataFormatError(
            path, f"invalid JSON at column {e.colno}: {e.msg}", record=f"line {e.lineno}"
        ) from None
    if not isinstance(data, dict):
        raise DataFormatError(
            path, f"expected an object {{qid: {{answer: true|false}}}}, got {type(data).__name__}"
        )
    for qid, ans in data.items():
        if not isinstance(ans, dict):
            raise DataFormatError(
                path, f"expected {{answer: true|false}}, got {type(ans).__name__}", record=qid
            )
        for answer, accepted in ans.items():
            if not isinstance(accepted, bool):
                raise DataFormatError(
                    path, f"expected true or false, got {accepted!r:.40}", record=qid, field=answer
                )
    return data


def save_decisions(path: str | Path, decisions: Decisions) -> Path:
    """Write ``decisions`` as the whole file, atomically (a unique temporary name, then
    ``os.replace``: a reader or an interruption sees the old file or the new one)."""
    return write_text_atomic(path, json.dumps(decisions, ensure_ascii=False, indent=1, sort_keys=True))


def save_decision(path: str | Path, qid: str, answer: str, accepted: bool) -> Decisions:
    """Record one decision: the file is read as it is on disk now, ``answer`` of ``qid`` set to
    ``accepted`` there, and the result written back atomically (:func:`save_decisions`), so
    decisions written by another kernel or by hand since a widget opened survive. Returns the
    decisions now in the file."""
    decisions = load_decisions(path)
    decisions.setdefault(qid, {})[answer] = bool(accepted)
    save_decisions(path, decisions)
    return decisions


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
            rows.append(
                {
                    "qid": qid,
                    "split": split_of.get(qid),
                    "question": q.question if q else "",
                    "gold": " | ".join(gold),
                    "answer": ans,
                    "labelers": ", ".join(rec.get("labelers", [])),
                    "passages": rec.get("passages", 0),
                    "admitted_by": "judge",
                    "status": fate,
                }
            )
    return pd.DataFrame(rows, columns=["qid", "split", "question", "gold", "answer", "labelers", "passages",
                                       "admitted_by", "status"])


def refusal_table(results: Mapping[str, QuestionLabels], split_of: Mapping[str, str]) -> pd.DataFrame:
    """One row per (question, answer) that an answer guard refused before the judge."""
    rows = [{"qid": qid, "split": split_of.get(qid), "answer": ans, "rule": rec.get("rule"),
             "labelers": ", ".join(rec.get("labelers", [])), "passages": rec.get("passages", 0)}
            for qid, res in results.items() for ans, rec in res.refused.items()]
    return pd.DataFrame(rows, columns=["qid", "split", "answer", "rule", "labelers", "passages"])


@dataclass
class AnswerEffect:
    """What one accepted answer's verification decision changes (:func:`answer_effects`)."""

    answer: str
    #: ``gold`` (a strict-EM gold match: fixed), ``leaks`` (the leakage filter removes it from the
    #: pool whatever the decision) or ``generated`` (a judge-admitted answer: the person decides)
    kind: str
    #: passages on which some labeler produced it and it was accepted
    passages: int
    #: the current decision (answers absent from the decisions file count as accepted)
    accepted: bool
    #: passages that are label 2 with the answer in the pool and label 1 without it (the others keep
    #: label 2 through another accepted answer); 0 for gold matches. For ``leaks`` the passages the
    #: filter's removal has already moved 2 → 1
    flips: int

    @property
    def decidable(self) -> bool:
        return self.kind == "generated"

    def preview(self) -> str:
        """One sentence: what ticking or unticking this answer does at the next build."""
        n = f"{self.flips} passage{'s' if self.flips != 1 else ''}"
        if self.kind == "gold":
            return (f"gold match on {self.passages} passage(s): fixed — verification decides the answers the "
                    "judge admitted, a gold answer stays in the pool (paper 000 §3.2.3)")
        if self.kind == "leaks":
            return (
                f"the leakage filter removes it from the pool whatever you decide (it matches the question's "
                f"own hints: copied, not inferred); {self.flips} of its {self.passages} passage(s) are label "
                "1 "
                "because of it"
            )
        if self.accepted:
            if self.flips:
                return f"unticking removes it from the pool and moves {n} 2 → 1"
            return (
                f"unticking removes it from the pool; its {self.passages} passage(s) keep label 2 through "
                "another accepted answer"
            )
        return (f"unticked: out of the pool at the next build ({n} 2 → 1); ticking it again keeps "
                f"{'them' if self.flips != 1 else 'it'} at 2")


def answer_effects(q: Question, hints: Sequence[str], result: QuestionLabels, decisions: Mapping[str, bool],
                   leakage: LeakageFilter | None = None) -> list[AnswerEffect]:
    """Per distinct accepted answer of ``q`` (judge-admitted ones first, then gold matches): its kind,
    current decision and how many passages its rejection moves 2 → 1, given the question's other
    ``decisions`` — the same rule as :func:`update_labels`, which the next build applies."""
    leakage = leakage or LeakageFilter()
    gold = {normalize_answer(a) for a in q.meta.get("gold_answers") or q.answers}
    answers = distinct_accepted(result)
    generated = [a for a in answers if normalize_answer(a) not in gold]
    leaking = {lk.answer for lk in leakage.find(generated, hints)} if generated else set()
    rejected = {normalize_answer(a) for a in generated if decisions.get(a) is False or a in leaking}
    count = {
        a: sum(normalize_answer(a) in {normalize_answer(x) for x in acc} for acc in result.accepted.values())
        for a in answers
    }
    out = []
    for a in sorted(answers, key=lambda a: normalize_answer(a) in gold):
        norm = normalize_answer(a)
        kind = "gold" if norm in gold else "leaks" if a in leaking else "generated"
        flips = 0
        if kind != "gold":
            without, with_ = rejected | {norm}, rejected - {norm}
            flips = sum(label_rule(acc, with_) == 2 and label_rule(acc, without) == 1
                        for acc in result.accepted.values())
        out.append(AnswerEffect(a, kind, count[a], decisions.get(a, True) and kind != "leaks", flips))
    return out


def verification_widget(
    questions: Sequence[Question],
    results: Mapping[str, QuestionLabels],
    path: str | Path,
    leakage: LeakageFilter | None = None,
):
    """An ipywidgets form (paper Fig. 7). Per question with a judge-admitted answer: the gold
    answer(s), a checkbox per admitted answer with what unticking it changes ("unticking removes
    this answer from the pool and moves 3 passages 2 → 1"), updated as you click; gold matches
    and answers the leakage filter removes are shown as fixed (disabled). Questions whose accepted
    answers are all gold matches are listed in one line: nothing to decide there. Every tick
    saves ``path`` at once, merged into the file as it is then (:func:`save_decision`: decisions
    written elsewhere meanwhile are kept); the next build applies it (:func:`update_labels`)."""
    import html

    import ipywidgets as w

    leakage = leakage or LeakageFilter()
    decisions = load_decisions(path)
    rows, gold_only = [], []
    n_decide = 0
    for q in questions:
        res = results.get(q.qid)
        if res is None:
            continue
        effects = answer_effects(q, q.hint_texts, res, decisions.get(q.qid, {}), leakage)
        if not effects:
            continue
        if not any(e.decidable or e.kind == "leaks" for e in effects):
            gold_only.append(q.qid)
            continue
        gold = q.meta.get("gold_answers") or q.answers
        header = w.HTML(f"<b>{html.escape(q.qid)}</b>: {html.escape(q.question)}<br>gold: "
                        f"<b>{html.escape(' | '.join(gold))}</b>")
        lines = []
        previews: dict[str, w.HTML] = {}

        def refresh(
            q: Question = q, res: QuestionLabels = res, previews: dict[str, w.HTML] = previews
        ) -> None:
            for e in answer_effects(q, q.hint_texts, res, decisions.get(q.qid, {}), leakage):
                if e.answer in previews:
                    previews[e.answer].value = _effect_html(e)

        for e in effects:
            n_decide += e.decidable
            cb = w.Checkbox(
                value=e.accepted, indent=False, disabled=not e.decidable, layout=w.Layout(width="30px")
            )
            label = w.HTML(_effect_html(e))
            previews[e.answer] = label
            if e.decidable:
                def on_change(change, qid=q.qid, ans=e.answer, refresh=refresh):
                    now = save_decision(
                        path, qid, ans, bool(change["new"])
                    )  # merged into the file as it is now
                    decisions.clear()
                    decisions.update(now)
                    refresh()

                cb.observe(on_change, names="value")
            row = w.HBox([cb, label])
            row.add_class(f"inferqa-verify-{e.kind}")
            lines.append(row)
        box = w.VBox([header, *lines], layout=w.Layout(border="1px solid #ddd", padding="4px"))
        box.add_class("inferqa-verify-question")
        rows.append(box)
    if n_decide:
        head = (f"<b>{n_decide} judge-admitted answer(s) to verify</b> in {len(rows)} question(s): tick the "
                "correct ones, untick the wrong ones; each line says what its decision changes.")
    else:
        head = (
            "<b>Nothing to verify</b>: no generated answer beyond the gold answers was admitted by the judge "
            "(or the leakage filter removes it anyway), so no decision would change a label."
        )
    gold_line = (f"{len(gold_only)} labelled question(s) have only gold matches among their accepted answers "
                 f"(fixed, nothing to decide): {html.escape(', '.join(gold_only))}" if gold_only else "")
    info = w.HTML(f"{head}<br>Decisions are saved to <code>{html.escape(str(path))}</code> as you click; "
                  "re-run the <b>Build</b> cell to apply them.")
    out = w.VBox([info, *rows, w.HTML(f"<small>{gold_line}</small>")])
    out.add_class("inferqa-verification")
    return out


def _effect_html(e: AnswerEffect) -> str:
    import html

    name = html.escape(e.answer)
    style = {"gold": "background:#c8f7c5", "leaks": "color:#888;text-decoration:line-through"}.get(e.kind, "")
    tag = {"gold": "gold (fixed)", "leaks": "removed by the leakage filter", "generated": "judge-admitted"}[
        e.kind
    ]
    return (f"<span style='{style}'><b>{name}</b></span> <small>[{tag}]</small> — "
            f"<span class='inferqa-preview'>{html.escape(e.preview())}</span>")
