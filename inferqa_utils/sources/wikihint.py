"""WikiHint loader (docs/data.md, *Sources*); also reads our embedded dataset, which uses the same shape.

Record: ``{"id", "question": {"question", "question_type": {"major", "minor"}, "difficulty",
"candidate_answers" (gold last), ...}, "answer": {"answer", "aliases"?}, "hints": [{"hint",
"rank"?, "metrics"?: {"convergence", "scores"?, "answer_leakage", ...}, ...}], "reference"?: {"text"},
"references"?: [{"text"}, ...]}``. Optional keys may be absent. ``aliases`` and the reference
passages are our extensions (WikiHint has neither); hints are ordered by ``rank`` when every hint
has one.

WikiHint scores every hint with its own metrics (relevance, readability, convergence,
familiarity, answer leakage). ``convergence`` becomes :attr:`Hint.convergence` (the hint order of
paper 000 §3.1.2 when stored scores are used); the per-candidate judge votes ``scores``
(``{candidate: 0/1}``, our embedded set) become :attr:`Hint.scores`; ``answer_leakage`` is parsed leniently
into ``Hint.meta["answer_leakage"]`` (see :func:`parse_answer_leakage`) so that the build can report it
beside the paper's own leakage filter. The release lives on the hub (:data:`HUB_REPO`,
:data:`HUB_FILES`): :func:`load_wikihint_hub` downloads it, :func:`load_wikihint_dir` reads the
same files from a local folder.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..core.config import PATHS
from ..core.errors import DataFormatError
from ..core.hub import download, require_hub
from ..ir.datamodel import Dataset, Hint, Question
from .records import RecordReader, iter_records
from .triviahg import _dedupe, trec_type

#: hub dataset of the WikiHint release
HUB_REPO = "JamshidJDMY/WikiHint"
#: its data files (900 + 100 questions, five hints each), loaded in this order
HUB_FILES = ("training.json", "test.json")


def parse_answer_leakage(value: object) -> tuple[float | None, str | None]:
    """``(score, note)`` for a stored ``metrics.answer_leakage`` value, never raising.

    A number (not a bool, not NaN) is the score; a dict of numbers (e.g. per-method or
    avg/max variants) gives its largest number, non-numeric entries ignored. Anything else — a
    string, a list, a dict without a number — gives no score and a note saying why. ``None``
    (the metric absent) gives neither.
    """
    if value is None:
        return None, None
    if _is_number(value):
        return float(value), None  # type: ignore[arg-type]
    if isinstance(value, dict):
        nums = [float(v) for v in value.values() if _is_number(v)]
        if not nums:
            return None, f"answer_leakage ignored: a dict without a numeric value ({value!r:.80})"
        note = (
            None
            if len(nums) == len(value)
            else "answer_leakage: non-numeric entries ignored, max of the rest"
        )
        return max(nums), note
    return (
        None,
        f"answer_leakage ignored: expected a number or a dict of numbers, got {type(value).__name__} "
        f"({value!r:.80})",
    )


def _is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and not math.isnan(v)


def load_wikihint(path: str | Path, name: str | None = None, source: str = "wikihint") -> Dataset:
    """Load a WikiHint-shaped JSON list or JSONL file.

    Refused with :class:`~inferqa_utils.core.errors.DataFormatError` (file, record, field): a file
    without records, an id holding whitespace, and the per-hint problems of :func:`_hints`.
    """
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
        hints, ranks, notes = _hints(r, raw_hints)
        if all(x is not None for x in ranks):
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
            meta={"major_type": qt.get("major"), "minor_type": qt.get("minor"),
                  **({"load_notes": notes} if notes else {})},
        )
    return Dataset(name=name or f"{source}-{path.stem}", questions=questions,
                   meta={"source_files": [str(path)], "shape": "wikihint"})


def load_wikihint_dir(
    folder: str | Path, files: tuple[str, ...] = HUB_FILES, name: str = "wikihint"
) -> Dataset:
    """The WikiHint release files (:data:`HUB_FILES`) found in ``folder``, as one dataset."""
    folder = Path(folder)
    paths = [folder / f for f in files if (folder / f).is_file()]
    if not paths:
        raise DataFormatError(
            folder,
            f"no WikiHint file found (expected {' and/or '.join(files)}, as on the hub dataset {HUB_REPO})",
        )
    return _merge(paths, name)


def fetch_wikihint_from_hub(files: tuple[str, ...] = HUB_FILES, dest: Path | None = None) -> list[Path]:
    """Download the WikiHint files from the hub; fails within seconds with a clear
    :class:`~inferqa_utils.core.errors.OfflineError` when the hub is unreachable."""
    require_hub(f"The WikiHint dataset ({HUB_REPO}: {', '.join(files)})",
                "Download those files elsewhere and pass their folder or one file: "
                "`-p build_source=wikihint:PATH` (or load_source('wikihint:PATH')).")
    dest = dest or PATHS.cache / "hub"
    return [download(HUB_REPO, f, repo_type="dataset", cache_dir=dest) for f in files]


def load_wikihint_hub(files: tuple[str, ...] = HUB_FILES, name: str = "wikihint") -> Dataset:
    """WikiHint from the hub (``load_source("wikihint")``): training then test questions."""
    return _merge(fetch_wikihint_from_hub(files), name)


def _merge(paths: list[Path], name: str) -> Dataset:
    ds = Dataset(name=name, questions={}, meta={"source_files": [], "shape": "wikihint"})
    where: dict[str, Path] = {}
    for p in paths:
        part = load_wikihint(p)
        for qid, q in part.questions.items():
            if qid in where:
                raise DataFormatError(p, f"question id {qid!r} also appears in {where[qid].name}", field="id")
            where[qid] = p
            ds.questions[qid] = q
        ds.meta["source_files"] += part.meta["source_files"]
    return ds


def _hints(r: RecordReader, raw_hints: list) -> tuple[list[Hint], list[int | None], list[str]]:
    """``(hints in file order, their ranks or None, load notes)`` of one record.

    Refused: a hint neither an object nor a string, a ``metrics`` that is not an object, a
    convergence that is not a finite number in [0, 1], a vote other than 0 or 1, a rank that is
    not an integer (``1.5``, ``"1.5"``) and two hints of one question with the same rank."""
    hints: list[Hint] = []
    ranks: list[int | None] = []
    notes: list[str] = []
    for j, h in enumerate(raw_hints):
        if isinstance(h, str):
            h = {"hint": h}
        if not isinstance(h, dict):
            r.fail(f"expected an object or a string, got {type(h).__name__}", f"hints[{j}]")
        text = r.str_("hint", obj=h, path=f"hints[{j}].hint", nonempty=False)
        metrics = r.get("metrics", dict, required=False, default={}, obj=h, path=f"hints[{j}].metrics")
        conv = metrics.get("convergence")
        if conv is not None:
            conv = r.fraction(conv, f"hints[{j}].metrics.convergence")
        votes = metrics.get("scores")
        if votes is not None:
            votes = r.votes(votes, f"hints[{j}].metrics.scores")
        rank = h.get("rank")
        if rank is not None:
            rank = r.int_(rank, f"hints[{j}].rank")
            if rank in ranks:
                r.fail(f"rank {rank} is also the rank of hints[{ranks.index(rank)}]", f"hints[{j}].rank")
        ranks.append(rank)
        meta = {k: v for k, v in h.items() if k not in ("hint", "metrics")}
        if metrics:
            meta["metrics"] = metrics
        leakage, note = parse_answer_leakage(metrics.get("answer_leakage"))
        if leakage is not None:
            meta["answer_leakage"] = leakage
        if note:
            notes.append(f"hints[{j}]: {note}")
        hints.append(Hint(text.strip(), convergence=conv, scores=votes or None, meta=meta))
    return hints, ranks, notes


def _references(r: RecordReader, rec: dict) -> list[str]:
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
