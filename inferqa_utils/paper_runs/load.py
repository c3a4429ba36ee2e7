"""Parse and validate a local copy of the authors' released result files into small typed objects.

What is read (shapes from the authors' scripts, ``results/`` of ``DataScienceUIBK/InferentialQA``;
:mod:`inferqa_utils.paper_runs.files` lists the paths):

* ``index/test/retriever.jsonl`` — one line per test question, in the order of ``test.json``:
  ``question``, ``answers`` (the answer pool) and ``contexts``: the question's own passages, each
  ``{"id", "label" (0/1/2), "rag_answers": {reader: answer}}`` (``text`` is not needed). The
  question id is the passage ids' common prefix: a passage id is ``{qid}_{mask}_{permutation}``.
* a *ranking* file (``retriever.json``, ``reranker.json``): a JSON list aligned *by position* with
  the index (the authors' scripts pair record ``i`` with index line ``i``), each record a ranked
  list of ``{"id", ...}``: the reranker's order ``reranked_ctxs`` whenever a record has it, else
  ``ctxs``. Two of the authors' scripts read ``ctxs`` from files a reranker wrote
  (``results/retriever_ft_reranker/retriever_reranker.py``,
  ``results/ft_retriever_ft_reranker/retriever_reranker.py``): where such a file also holds
  ``reranked_ctxs``, their printed numbers are the first stage's; ours are the reranker's, and
  :attr:`Ranking.key` records which list was read. ``question``, when present, must equal the
  index question's text.
* a *rag* file (``rag.json``): a JSON list of ``{"id", "answers", "predicted_answer": {reader:
  {"<id>_un_<k>" | "<id>_uf_<k>": answer}}}`` — ``un`` is Union_norm and ``uf`` Union_freq of the
  top-k passages (paper 000 §5.4; k ∈ {1, 3, 5}).
* ``baselines/baseline.json``: a JSON list aligned by position with the index, each record's
  ``ctxs`` a mapping ``{passage id: {"label": 0/1/2}}`` over the passages retrieved from MS MARCO
  and Wikipedia, relabelled by the authors' LLM rule (paper 000 §5.1).

Everything is checked before anything is returned; each problem raises
:class:`~inferqa_utils.core.errors.DataFormatError` naming the file, the record (``"3 (qid)"``, the
0-based position and the question id) and the field. Rejected: a missing index; a label other
than the integers 0, 1, 2; a passage id of the index that is not ``{qid}_{mask}_{permutation}`` or
whose prefix differs from its question's other passages; a question id twice; a ranked passage
without a string id, or listed twice for one question; an oracle ranking (``reranker/``,
``ft_reranker/``: the question's own passages reordered) naming a passage that is not in the
question's pool; a baseline ranking naming a passage ``baseline.json`` has no label for (the
authors' script would fail on it); a ranking or baseline file with another number of records
than the index, or whose ``question`` differs; a rag record whose id is not an index question,
whose ``answers`` is not a non-empty list of strings, whose answer key names another question or is
not ``un_<k>``/``uf_<k>``, whose answer is not a string, or that lacks a (reader, union, k) other
records have; a rag file that misses an index question. Passages a *retriever* returns from
other questions are normal (the corpus holds every split) and count as not relevant.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from ..core.errors import DataFormatError
from . import files as F

RERANKED = "reranked_ctxs"
_SPACE = re.compile(r"\s")
#: the ranked lists kept per question (paper 000 §4: top-100; the released first stages keep up to 1,000)
DEPTH = 100
_ANSWER_KEY = re.compile(r"^(?P<qid>.+)_(?P<union>un|uf)_(?P<k>[1-9][0-9]*)$")
#: ``un``/``uf`` of the released keys → the union names of our tables (paper 000 §5.4)
UNIONS = {"un": "norm", "uf": "freq"}
LABELS = (0, 1, 2)


@dataclass(frozen=True)
class Question:
    """One test question of the index: its gold pool, its passages' labels and the readers'
    answers from each single passage (the Optimal setting, paper 000 §5.4)."""

    qid: str
    question: str
    answers: tuple[str, ...]
    labels: dict[str, int]
    rag_answers: dict[str, dict[str, str]]  # passage id -> {reader: answer}


@dataclass
class Ranking:
    """A released ranked list per question: ``system`` (our name), ``setting`` (pipeline, oracle,
    baseline), ``corpus`` (``quit``, ``msmarco``, ``wiki``), ``lists`` qid → passage ids best first
    (cut at the import depth), ``first_stage`` the file's ``ctxs`` when it ranked
    ``reranked_ctxs`` (the candidates the reranker reordered), else None, ``names`` the path's
    placeholders and ``key`` the list read (module docstring)."""

    system: str
    setting: str
    corpus: str
    family: str
    released: str
    lists: dict[str, list[str]]
    first_stage: dict[str, list[str]] | None = None
    #: the path's placeholders: retriever, reranker, n, corpus
    names: dict[str, str] = field(default_factory=dict)
    key: str = "ctxs"  # the list ranked: reranked_ctxs when the file has it, else ctxs


@dataclass
class Readings:
    """A released ``rag.json``: per (reader, union, k) the answer per question, and each
    question's answer pool as that file holds it (what the authors' EM compares with)."""

    system: str
    setting: str
    family: str
    released: str
    answers: dict[str, tuple[str, ...]]
    predictions: dict[tuple[str, str, int], dict[str, str]]  # (reader, "norm"|"freq", k) -> {qid: answer}
    names: dict[str, str] = field(default_factory=dict)  # the path's placeholders: retriever, reranker, n

    @property
    def readers(self) -> list[str]:
        return sorted({r for r, _, _ in self.predictions})


@dataclass
class Release:
    """A validated local copy of the release (:func:`load_release`)."""

    folder: Path
    questions: dict[str, Question]
    rankings: list[Ranking] = field(default_factory=list)
    readings: list[Readings] = field(default_factory=list)
    baseline_labels: dict[str, dict[str, int]] | None = None
    found: list[F.Found] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)

    @property
    def qids(self) -> list[str]:
        return list(self.questions)

    @property
    def readers(self) -> list[str]:
        out: set[str] = set()
        for q in self.questions.values():
            for answers in q.rag_answers.values():
                out.update(answers)
        for r in self.readings:
            out.update(r.readers)
        return sorted(out)

    def ranking(self, system: str, corpus: str = "quit") -> Ranking | None:
        return next((r for r in self.rankings if r.system == system and r.corpus == corpus), None)

    def reading(self, system: str) -> Readings | None:
        return next((r for r in self.readings if r.system == system), None)

    def qrels(self) -> dict[str, dict[str, int]]:
        """The index labels as qrels: qid → {passage id: label} (every passage of the pool)."""
        return {q.qid: dict(q.labels) for q in self.questions.values()}


class _Rec:
    """Field access inside one record, every failure naming file, record and field."""

    def __init__(self, path: Path, label: str | int, obj: Any) -> None:
        self.path, self.label = path, label
        if not isinstance(obj, dict):
            self.fail(f"expected a JSON object, got {type(obj).__name__}")
        self.obj: dict[str, Any] = obj

    def fail(self, problem: str, fld: str | None = None) -> NoReturn:
        raise DataFormatError(self.path, problem, record=self.label, field=fld)

    def get(
        self, key: str, types: type | tuple[type, ...], obj: dict[str, Any] | None = None,
        name: str | None = None,
    ) -> Any:
        src = self.obj if obj is None else obj
        name = name or key
        if key not in src or src[key] is None:
            self.fail("missing required field", name)
        v = src[key]
        allowed = types if isinstance(types, tuple) else (types,)
        if not isinstance(v, allowed) or (isinstance(v, bool) and bool not in allowed):
            want = " or ".join(t.__name__ for t in allowed)
            self.fail(f"expected {want}, got {type(v).__name__} ({_short(v)})", name)
        return v

    def strings(
        self, key: str, obj: dict[str, Any] | None = None, name: str | None = None
    ) -> tuple[str, ...]:
        name = name or key
        v = self.get(key, list, obj, name)
        if not v:
            self.fail("list is empty", name)
        for i, s in enumerate(v):
            if not isinstance(s, str):
                self.fail(f"expected a string, got {type(s).__name__} ({_short(s)})", f"{name}[{i}]")
        return tuple(v)

    def grade(self, v: Any, name: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or v not in LABELS:
            self.fail(f"label must be one of the integers 0, 1, 2, got {_short(v)}", name)
        return int(v)


def _short(v: Any, n: int = 40) -> str:
    s = repr(v)
    return s if len(s) <= n else s[: n - 3] + "..."


def _label(i: int, qid: str | None) -> str:
    return f"{i} ({qid})" if qid else str(i)


def _qid_of(pid: str) -> str | None:
    parts = pid.rsplit("_", 2)
    if len(parts) != 3 or not parts[0] or not re.fullmatch(r"[01]+", parts[1]) or not parts[2].isdigit():
        return None
    return parts[0]


# ----------------------------------------------------------------------------- index


def load_index(path: Path, released: str = F.INDEX_PATH) -> dict[str, Question]:
    """The questions of ``index/test/retriever.jsonl`` in file order (module docstring)."""
    out: dict[str, Question] = {}
    seen_at: dict[str, int] = {}
    for i, obj in F.iter_records(path, jsonl=True):
        r = _Rec(path, i, obj)
        question = r.get("question", str)
        answers = r.strings("answers")
        contexts = r.get("contexts", list)
        labels: dict[str, int] = {}
        rag: dict[str, dict[str, str]] = {}
        qid: str | None = r.obj.get("id") if isinstance(r.obj.get("id"), str) else None
        for j, ctx in enumerate(contexts):
            where = f"contexts[{j}]"
            if not isinstance(ctx, dict):
                r.fail(f"expected a passage object, got {type(ctx).__name__}", where)
            pid = r.get("id", str, ctx, f"{where}.id")
            pq = _qid_of(pid)
            if pq is None:
                r.fail(f"passage id {pid!r} is not of the form qid_mask_permutation", f"{where}.id")
            if qid is None:
                qid = pq
                r.label = _label(i, qid)
            elif pq != qid:
                r.fail(f"passage id {pid!r} belongs to question {pq!r}, not {qid!r}", f"{where}.id")
            if pid in labels:
                r.fail(f"passage {pid!r} is listed twice", f"{where}.id")
            labels[pid] = r.grade(ctx.get("label"), f"{where}.label")
            ans = r.get("rag_answers", dict, ctx, f"{where}.rag_answers")
            for reader, a in ans.items():
                if not isinstance(a, str):
                    r.fail(
                        f"expected a string answer, got {type(a).__name__} ({_short(a)})",
                        f"{where}.rag_answers.{reader}",
                    )
            rag[pid] = dict(ans)
        if qid is None:
            r.fail("the question has no passage (cannot tell its id)", "contexts")
        if qid in out:
            r.fail(f"question {qid!r} is also line {seen_at[qid] + 1}", "contexts")
        seen_at[qid] = i
        out[qid] = Question(qid, question, answers, labels, rag)
    if not out:
        raise DataFormatError(path, "the index holds no question")
    _same_readers(path, out)
    return out


def _same_readers(path: Path, questions: dict[str, Question]) -> None:
    """Every passage of the index carries the same readers' answers."""
    want: set[str] | None = None
    for i, q in enumerate(questions.values()):
        for j, (pid, ans) in enumerate(q.rag_answers.items()):
            if want is None:
                want = set(ans)
            elif set(ans) != want:
                missing = sorted(want - set(ans)) or sorted(set(ans) - want)
                raise DataFormatError(
                    path,
                    f"passage {pid!r} has readers {sorted(ans)}, the index's first passage "
                    f"{sorted(want)} (differs in {missing})",
                    record=_label(i, q.qid),
                    field=f"contexts[{j}].rag_answers",
                )


# ----------------------------------------------------------------------------- rankings


def _ids(r: _Rec, items: Any, name: str, depth: int | None) -> list[str]:
    if not isinstance(items, list):
        r.fail(f"expected a list of passages, got {type(items).__name__}", name)
    out: list[str] = []
    seen: set[str] = set()
    for j, it in enumerate(items if depth is None else items[:depth]):
        if not isinstance(it, dict):
            r.fail(f"expected a passage object, got {type(it).__name__}", f"{name}[{j}]")
        pid = r.get("id", str, it, f"{name}[{j}].id")
        if not pid or _SPACE.search(pid):
            r.fail(
                f"passage id {pid!r} is empty or holds whitespace (TREC runs split on it)", f"{name}[{j}].id"
            )
        if pid in seen:
            r.fail(f"passage {pid!r} is ranked twice (first at position {out.index(pid)})", f"{name}[{j}].id")
        seen.add(pid)
        out.append(pid)
    return out


def load_ranking(
    found: F.Found, questions: dict[str, Question], depth: int = DEPTH,
    baseline: dict[str, dict[str, int]] | None = None,
) -> Ranking:
    """One ranking file, aligned by position with the index (module docstring)."""
    e = found.entry
    path = found.file
    corpus = found.names.get("corpus", "quit")
    qids = list(questions)
    lists: dict[str, list[str]] = {}
    first: dict[str, list[str]] = {}
    keys: set[str] = set()
    n = 0
    for i, obj in F.iter_records(path, jsonl=False):
        n = i + 1
        qid = qids[i] if i < len(qids) else None
        r = _Rec(path, _label(i, qid), obj)
        if qid is None:
            r.fail(f"the file has more records than the index ({len(qids)} questions)")
        q = questions[qid]
        if isinstance(r.obj.get("question"), str) and r.obj["question"].strip() != q.question.strip():
            r.fail(
                f"question text {_short(r.obj['question'])} differs from the index's {_short(q.question)} "
                "(records are paired with the index by position)",
                "question",
            )
        if isinstance(r.obj.get("id"), str) and r.obj["id"] != qid:
            r.fail(f"id {r.obj['id']!r} differs from the index question {qid!r} at this position", "id")
        key = RERANKED if RERANKED in r.obj else e.ranked
        keys.add(key)
        ids = _ids(r, r.get(key, list), key, depth)
        if e.setting == "oracle":
            for j, pid in enumerate(ids):
                if pid not in q.labels:
                    r.fail(
                        f"unknown passage id {pid!r}: an oracle ranking reorders the question's own "
                        f"{len(q.labels)} passages",
                        f"{key}[{j}].id",
                    )
        if e.setting == "baseline":
            if baseline is None:
                r.fail(
                    "a baseline ranking is scored with the labels of baselines/baseline.json, which the "
                    "release folder lacks",
                    e.ranked,
                )
            known = baseline[qid]
            for j, pid in enumerate(ids):
                if pid not in known:
                    r.fail(f"unknown passage id {pid!r}: baselines/baseline.json has no label for it",
                           f"{key}[{j}].id")
        lists[qid] = ids
        if key == RERANKED and "ctxs" in r.obj:
            first[qid] = _ids(r, r.obj["ctxs"], "ctxs", depth)
    if n != len(qids):
        raise DataFormatError(
            path,
            f"{n} records, the index has {len(qids)} questions (records are paired with the "
            "index by position)",
        )
    if len(keys) > 1:
        raise DataFormatError(
            path,
            "some records rank under 'reranked_ctxs', others under 'ctxs' only: one file "
            "holds one system's ranking",
        )
    return Ranking(
        found.system, e.setting, corpus, e.family, found.released, lists, first if first else None,
        dict(found.names), keys.pop() if keys else e.ranked,
    )


def load_baseline_labels(path: Path, questions: dict[str, Question]) -> dict[str, dict[str, int]]:
    """``baselines/baseline.json``: per index question (by position) its retrieved passages' labels."""
    qids = list(questions)
    out: dict[str, dict[str, int]] = {}
    for i, obj in F.iter_records(path, jsonl=False):
        qid = qids[i] if i < len(qids) else None
        r = _Rec(path, _label(i, qid), obj)
        if qid is None:
            r.fail(f"the file has more records than the index ({len(qids)} questions)")
        ctxs = r.get("ctxs", dict)
        labels = {}
        for pid, v in ctxs.items():
            if not isinstance(v, dict):
                r.fail(f"expected {{'label': 0/1/2}}, got {type(v).__name__}", f"ctxs.{pid}")
            labels[pid] = r.grade(v.get("label"), f"ctxs.{pid}.label")
        out[qid] = labels
    if len(out) != len(qids):
        raise DataFormatError(
            path,
            f"{len(out)} records, the index has {len(qids)} questions (records are paired "
            "with the index by position)",
        )
    return out


# ----------------------------------------------------------------------------- readings


def load_readings(found: F.Found, questions: dict[str, Question]) -> Readings:
    """One ``rag.json`` (module docstring)."""
    path = found.file
    answers: dict[str, tuple[str, ...]] = {}
    preds: dict[tuple[str, str, int], dict[str, str]] = {}
    keys_of: dict[str, set[tuple[str, str, int]]] = {}
    where_of: dict[str, str] = {}
    for i, obj in F.iter_records(path, jsonl=False):
        qid0 = obj.get("id") if isinstance(obj, dict) and isinstance(obj.get("id"), str) else None
        r = _Rec(path, _label(i, qid0), obj)
        qid = r.get("id", str)
        if qid not in questions:
            r.fail(f"question id {qid!r} is not a question of the index", "id")
        if qid in answers:
            r.fail(f"question {qid!r} is also record {where_of[qid]}", "id")
        where_of[qid] = str(i)
        answers[qid] = r.strings("answers")
        pa = r.get("predicted_answer", dict)
        keys: set[tuple[str, str, int]] = set()
        for reader, per in pa.items():
            if not isinstance(per, dict):
                r.fail(
                    f"expected {{'<id>_un_<k>': answer}}, got {type(per).__name__}",
                    f"predicted_answer.{reader}",
                )
            for key, a in per.items():
                name = f"predicted_answer.{reader}.{key}"
                m = _ANSWER_KEY.match(key)
                if not m:
                    r.fail("answer key is not '<id>_un_<k>' or '<id>_uf_<k>'", name)
                if m.group("qid") != qid:
                    r.fail(f"answer key names question {m.group('qid')!r}, the record is {qid!r}", name)
                if not isinstance(a, str):
                    r.fail(f"expected a string answer, got {type(a).__name__} ({_short(a)})", name)
                t = (str(reader), UNIONS[m.group("union")], int(m.group("k")))
                keys.add(t)
                preds.setdefault(t, {})[qid] = a
        if not keys:
            r.fail("no answer", "predicted_answer")
        keys_of[qid] = keys
    if not answers:
        raise DataFormatError(path, "the file holds no record")
    every = set().union(*keys_of.values())
    for qid, keys in keys_of.items():
        if keys != every:
            reader, union, k = sorted(every - keys)[0]
            u = next(x for x, y in UNIONS.items() if y == union)
            raise DataFormatError(
                path, f"no answer of reader {reader!r} for {u}_{k}, which other questions have",
                record=_label(int(where_of[qid]), qid), field=f"predicted_answer.{reader}",
            )
    missing = [q for q in questions if q not in answers]
    if missing:
        raise DataFormatError(
            path,
            f"{len(missing)} index question(s) have no record, e.g. {missing[0]!r} (a "
            "comparison pairs every question)",
        )
    ordered = {q: answers[q] for q in questions}
    return Readings(
        found.system, found.entry.setting, found.entry.family, found.released, ordered,
        {t: {q: p[q] for q in questions} for t, p in sorted(preds.items())}, dict(found.names),
    )


# ----------------------------------------------------------------------------- the release


def release_folder(folder: str | Path) -> Path:
    """The folder that holds ``index/``: ``folder`` itself or its ``results/`` (what ``fetch`` writes)."""
    folder = Path(folder)
    if not folder.exists():
        raise DataFormatError(folder, "folder does not exist")
    if not folder.is_dir():
        raise DataFormatError(
            folder, "is a file: pass the folder that holds index/ (or its parent holding results/)"
        )
    if not (folder / "index").is_dir() and (folder / "results").is_dir():
        return folder / "results"
    return folder


def load_release(
    folder: str | Path, depth: int = DEPTH, log: Callable[[str], Any] | None = None,
    only: Iterable[str] | None = None,
) -> Release:
    """Read and validate every released file under ``folder`` (:func:`release_folder`); ``only``
    keeps the files whose released path starts with one of these prefixes (the index is always
    read). Nothing is written."""
    root = release_folder(folder)
    found, unknown = F.scan(root)
    prefixes = tuple(only) if only is not None else None
    if prefixes is not None:
        found = [f for f in found if f.entry.kind == F.INDEX or f.released.startswith(prefixes)]
    index = next((f for f in found if f.entry.kind == F.INDEX), None)
    if index is None:
        raise DataFormatError(
            root,
            f"missing required file {F.INDEX_PATH} (or its hub copy "
            f"{F.compressed_name(F.INDEX_PATH)}): every number is scored against its labels "
            "and answer pools",
        )
    say = log or (lambda s: None)
    say(f"[paper-runs] {index.released}")
    questions = load_index(index.file)
    rel = Release(root, questions, found=found, unknown=unknown)
    base = next((f for f in found if f.entry.kind == F.BASELINE_LABELS), None)
    if base is not None:
        say(f"[paper-runs] {base.released}")
        rel.baseline_labels = load_baseline_labels(base.file, questions)
    for f in found:
        if f.entry.kind == F.RANKING:
            say(f"[paper-runs] {f.released}")
            rel.rankings.append(load_ranking(f, questions, depth, rel.baseline_labels))
        elif f.entry.kind == F.RAG:
            say(f"[paper-runs] {f.released}")
            rel.readings.append(load_readings(f, questions))
    return rel
