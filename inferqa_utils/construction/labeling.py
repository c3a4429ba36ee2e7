"""Labeling (paper 000 §3.2.2) and the label update after verification (step 8).

Each labeler LLM reads (question, passage) with the few-shot reader prompt (paper 000 §5.4). A generated
answer is *accepted* when it is judged correct: strict EM against the answer pool, else — unless
a guard refuses it (:mod:`inferqa_utils.answering.guards`: found in the question or in the passage
being labelled, or a generic phrase) — the LLM judge's "Yes" (paper 000 §4). Label of a passage for its own
question:

    2  if some labeler's answer is accepted (the answer joins the question's answer pool)
    1  otherwise
    0  for every other question (implicit: qrels list only a question's own passages)

A question's passages go to each labeler as one batch; the engine runs them in token order, so
consecutive prompts share the longest context prefix (KV reuse), and caches every answer. Results
are checkpointed per question (one JSON line each), so an interrupted build resumes. Each line
carries the hash of that question's labeling inputs (:func:`labeling_inputs_sha256`): a line made
for other inputs is not reused.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..answering.guards import DEFAULT_GUARDS
from ..answering.judge import judge_answers
from ..answering.reader import read
from ..core.atomic import write_text_atomic
from ..core.errors import DataFormatError
from ..core.fingerprint import sha256_json
from ..ir.datamodel import LABEL_PARTIAL, LABEL_RELEVANT, Passage, Question
from ..ir.textnorm import normalize_answer
from ..llm.base import LLM


@dataclass
class QuestionLabels:
    """Labeling result of one question."""

    qid: str
    #: {pid: {labeler: answer}}
    generations: dict[str, dict[str, str]]
    #: {pid: [accepted answers]} (answers judged correct, any labeler)
    accepted: dict[str, list[str]]
    labels: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    #: {answer: {"by": "em" | "judge", "labelers": [...], "passages": n}} for every accepted answer
    admitted: dict[str, dict] = field(default_factory=dict)
    #: {answer: {"rule": guard name, "labelers": [...], "passages": n}} for answers a guard refused
    refused: dict[str, dict] = field(default_factory=dict)

    def pool(self, answers: Sequence[str]) -> list[str]:
        """Gold answers followed by every distinct accepted generated answer (answer-pool expansion)."""
        out = list(answers)
        seen = {normalize_answer(a) for a in out}
        for accepted in self.accepted.values():
            for a in accepted:
                if normalize_answer(a) not in seen:
                    seen.add(normalize_answer(a))
                    out.append(a)
        return out


def label_rule(accepted: Sequence[str], rejected: set[str] = frozenset()) -> int:
    """2 if any accepted answer survives verification (normalised comparison), else 1."""
    alive = [a for a in accepted if normalize_answer(a) not in rejected]
    return LABEL_RELEVANT if alive else LABEL_PARTIAL


def label_question(q: Question, passages: Sequence[Passage], labelers: Sequence[LLM], judge: LLM | None,
                   progress: bool = False, guards: Sequence[str] = DEFAULT_GUARDS) -> QuestionLabels:
    """Read every passage with every labeler, judge, and label (see module docstring)."""
    t0 = time.perf_counter()
    gens: dict[str, dict[str, str]] = {p.pid: {} for p in passages}
    accepted: dict[str, list[str]] = {p.pid: [] for p in passages}
    admitted: dict[str, dict] = {}
    refused: dict[str, dict] = {}
    texts = [q.question] * len(passages)
    for llm in labelers:
        outs = read(
            llm, texts, [p.text for p in passages], desc=f"label {q.qid} ({llm.name})", progress=progress
        )
        preds = [o.answer for o in outs]
        verdicts = judge_answers(judge, texts, [q.answers] * len(passages), preds, progress=progress,
                                 contexts=[p.text for p in passages], guards=guards)
        for p, pred, v in zip(passages, preds, verdicts, strict=True):
            gens[p.pid][llm.name] = pred
            if v.judged and pred not in accepted[p.pid]:
                accepted[p.pid].append(pred)
            if v.judged or v.guard:
                book = admitted if v.judged else refused
                rec = book.setdefault(
                    pred, {"by": "em" if v.em else "judge"} if v.judged else {"rule": v.guard}
                )
                rec.setdefault("labelers", [])
                if llm.name not in rec["labelers"]:
                    rec["labelers"].append(llm.name)
                rec["passages"] = rec.get("passages", 0) + 1
    labels = {pid: label_rule(acc) for pid, acc in accepted.items()}
    return QuestionLabels(
        q.qid, gens, accepted, labels, round(time.perf_counter() - t0, 3), admitted, refused
    )


#: the key of a checkpoint line holding :func:`labeling_inputs_sha256` of its question
INPUTS_KEY = "inputs_sha256"


def labeling_inputs_sha256(q: Question, passages: Sequence[Passage]) -> str:
    """sha256 of what one question's labels depend on beyond the models and settings (those name
    the checkpoint file): the question text, its gold answers, its kept hint texts and its
    passages (ids and texts, in order)."""
    return sha256_json({"question": q.question, "answers": list(q.answers), "hints": list(q.hint_texts),
                        "passages": [[p.pid, p.text] for p in passages]})


def read_record(rec: object, path: Path, line: int) -> tuple[QuestionLabels, str | None]:
    """One checkpoint line's :class:`QuestionLabels` and input hash (None: a line without one);
    a :class:`DataFormatError` naming file and line when it is not a labeling record."""
    try:
        fields = dict(rec)  # type: ignore[call-overload]
        digest = fields.pop(INPUTS_KEY, None)
        return QuestionLabels(**fields), digest
    except (KeyError, TypeError, ValueError) as e:
        raise DataFormatError(path, f"not a labeling record ({e})", record=line) from None


class LabelCheckpoint:
    """Append-only JSONL of :class:`QuestionLabels`, one line per finished question, each with the
    hash of its question's labeling inputs (:data:`INPUTS_KEY`)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def load(self, expected: Mapping[str, str] | None = None,
             log: Callable[[str], None] = print) -> dict[str, QuestionLabels]:
        """Finished questions (the last usable line of each).

        With ``expected`` (``{qid: labeling_inputs_sha256}`` of the questions about to be labelled)
        a line of one of those questions counts only when it carries that hash: a line made for
        other inputs, or an older line without a hash, is discarded (the question is labelled
        again) and how many were discarded is logged once. A last line cut short by an
        interruption is dropped and removed from the file (rewritten atomically: an interruption
        then leaves the file as it was); any other malformed line is an error naming file and line.
        """
        done: dict[str, QuestionLabels] = {}
        stale: dict[str, int] = {}  # qid → lines discarded
        for n, rec in self._records():
            labels, digest = read_record(rec, self.path, n)
            if expected is not None and labels.qid in expected and digest != expected[labels.qid]:
                stale[labels.qid] = stale.get(labels.qid, 0) + 1
                continue
            done[labels.qid] = labels
        relabel = {qid: n for qid, n in stale.items() if qid not in done}
        if relabel:
            log(
                f"labeling checkpoint {self.path}: {sum(relabel.values())} line(s) of {len(relabel)} "
                "question(s) "
                "were made for other inputs (question, gold answers, kept hints or passages changed, or an "
                "older "
                "line without an input hash): discarded, those questions are labelled again"
            )
        return done

    def _records(self) -> list[tuple[int, object]]:
        """``(line number, decoded JSON)`` of every non-blank line; a cut last line is removed."""
        if not self.path.exists():
            return []
        lines = self.path.read_text(encoding="utf-8").splitlines()
        out = []
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                out.append((n, json.loads(line)))
            except json.JSONDecodeError:
                if n != len(lines):
                    raise DataFormatError(self.path, "invalid JSON", record=n) from None
                write_text_atomic(self.path, "".join(x + "\n" for x in lines[:-1]))
        return out

    def append(self, result: QuestionLabels, inputs_sha256: str | None = None) -> None:
        """Add one finished question (with the hash of its labeling inputs, when given)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        rec = asdict(result) | ({INPUTS_KEY: inputs_sha256} if inputs_sha256 is not None else {})
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
            fh.flush()


def label_questions(questions: Sequence[Question], passages_of: Callable[[str], Sequence[Passage]],
                    labelers: Sequence[LLM], judge: LLM | None, checkpoint: LabelCheckpoint,
                    progress: bool = True, guards: Sequence[str] = DEFAULT_GUARDS,
                    log: Callable[[str], None] = print) -> dict[str, QuestionLabels]:
    """Label every question, skipping those whose labels are already in ``checkpoint`` for the
    same inputs (resume; :meth:`LabelCheckpoint.load` — a question whose text, gold answers, kept
    hints or passages changed is labelled again, and how many were is logged).

    One progress bar counts passage readings (passages × labelers) and shows the ETA.
    """
    expected = {q.qid: labeling_inputs_sha256(q, passages_of(q.qid)) for q in questions}
    done = checkpoint.load(expected, log=log)
    todo = [q for q in questions if q.qid not in done]
    total = sum(len(passages_of(q.qid)) for q in todo) * len(labelers)
    bar = None
    if progress and todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc=f"labeling {len(todo)} questions ({len(done)} from checkpoint)",
                   unit="reading")
    for q in todo:
        ps = passages_of(q.qid)
        res = label_question(q, ps, labelers, judge, guards=guards)
        checkpoint.append(res, expected[q.qid])
        done[q.qid] = res
        if bar is not None:
            bar.update(len(ps) * len(labelers))
    if bar is not None:
        bar.close()
    return {q.qid: done[q.qid] for q in questions if q.qid in done}
