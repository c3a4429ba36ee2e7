"""Official QUIT release loader (docs/data.md, *The QUIT release shape*), from local files or the hub.

Split files ``train.json``/``dev.json``/``test.json``: one record per question with ``id``,
``question``, ``answers`` (the expanded answer pool), ``hints`` ([{"hint": ...}] or strings)
and ``subsets`` ``{mask: {permutation: {model_key: generated answer}}}``. Passages are built
from ``subsets`` (or read from ``corpus/corpus.jsonl`` when present; its ``title`` holds the
question id and is never used as passage text). Labels follow paper 000 §3.2.2: 2 if any
labeler's generated answer exactly matches the pool (SQuAD-normalised), else 1.
"""

from __future__ import annotations

from collections.abc import Container
from pathlib import Path

from ..core.config import PATHS
from ..core.errors import DataFormatError
from ..core.hub import download
from ..ir.datamodel import Dataset, Hint, Passage, Question, join_hints, parse_passage_id
from ..ir.textnorm import exact_match
from .records import RecordReader, iter_jsonl, iter_records

HUB_REPO = "JamshidJDMY/InferentialQA"
LABELER_KEYS = ("gemma-3-1b", "qwen-3-4b", "llama-31-8b")
READER_KEYS = ("llama-32-1b", "gemma-3-4b", "qwen-3-8b")
SPLITS = ("train", "dev", "test")


def fetch_quit_from_hub(dest: Path | None = None) -> Path:
    """Download the split files of the official release (needs a network)."""
    dest = dest or PATHS.cache / "hub"
    paths = [download(HUB_REPO, f"{s}.json", repo_type="dataset", cache_dir=dest) for s in SPLITS]
    return paths[0].parent


def load_quit(source: str | Path = "hub", splits: tuple[str, ...] = SPLITS,
              labelers: tuple[str, ...] = LABELER_KEYS, name: str = "quit") -> Dataset:
    """Load QUIT from a local folder holding ``<split>.json`` files, or ``"hub"``.

    ``source`` must be the folder: a path to one split file is refused (a
    :class:`~inferqa_utils.core.errors.DataFormatError` saying to pass its folder), since the split
    files and the corpus are read together. Refused as well, naming file, record (or line) and
    field: an id holding whitespace; a generation that is not a string
    (``subsets.<mask>.<perm>.<model>``); a mask whose length is not the question's hint count or
    that holds characters other than 0/1, or a permutation whose hints are not the mask's; a
    duplicate corpus id; a corpus passage of a question that is in no split file and not in
    ``distractors.json`` (the corpus-only questions of a build); folders whose split files hold no
    question at all. An empty split file is an empty split.
    """
    folder = fetch_quit_from_hub() if str(source) == "hub" else Path(source)
    if folder.is_file():
        raise DataFormatError(
            folder,
            f"is a file: pass the folder that holds it (load_quit({str(folder.parent)!r}) "
            f"or quit:{folder.parent}); the split files and corpus/ are read together",
        )
    ds = Dataset(name=name, questions={}, meta={"source_files": [], "shape": "quit"})
    found = False
    for split in splits:
        f = folder / f"{split}.json"
        if not f.exists():
            continue
        found = True
        ds.splits.setdefault(split, [])  # an empty split stays a split
        ds.meta["source_files"].append(str(f))
        _load_split(f, split, ds, labelers)
    if not found:
        raise DataFormatError(
            folder, f"no split file found (expected one of {', '.join(s + '.json' for s in splits)})"
        )
    if not ds.questions:
        raise DataFormatError(folder, "the split files hold no question: nothing to load")
    corpus = folder / "corpus" / "corpus.jsonl"
    if corpus.exists():
        ds.meta["source_files"].append(str(corpus))
        _apply_corpus(corpus, ds, _corpus_only_questions(folder / "distractors.json"))
    return ds


def _load_split(path: Path, split: str, ds: Dataset, labelers: tuple[str, ...]) -> None:
    for r, qid in iter_records(path, "id", allow_empty=True):
        q = _question(r, qid, path, split)
        if qid in ds.questions:
            raise DataFormatError(
                path, f"question id {qid!r} also appears in another split", record=r.label, field="id"
            )
        ds.questions[qid] = q
        ds.splits.setdefault(split, []).append(qid)
        subsets = r.get("subsets", dict, required=False, default={})
        ds.qrels.setdefault(qid, {}).update(_subsets(r, q, subsets, ds, labelers))


def _hints(r: RecordReader) -> list[Hint]:
    """The record's hints (``[{"hint", "convergence"?}]`` or strings); a convergence must be a
    finite number in [0, 1]."""
    raw_hints = r.get("hints", list)
    if not raw_hints:
        r.fail("list is empty", "hints")
    hints = []
    for j, h in enumerate(raw_hints):
        conv = None
        if isinstance(h, dict):
            if h.get("convergence") is not None:
                conv = r.fraction(h["convergence"], f"hints[{j}].convergence")
            h = r.str_("hint", obj=h, path=f"hints[{j}].hint")
        elif not isinstance(h, str):
            r.fail(f"expected a string or {{'hint': str}}, got {type(h).__name__}", f"hints[{j}]")
        hints.append(Hint(h.strip(), convergence=conv))
    return hints


def _question(r: RecordReader, qid: str, path: Path, split: str) -> Question:
    rec = r.record
    answers = r.str_list("answers", nonempty=True)
    hints = _hints(r)
    return Question(qid=qid, question=r.str_("question").strip(), answers=answers, hints=hints,
                    source=f"quit:{path.name}",
                    meta={"split": split, **({"gold_answers": rec["gold_answers"]}
                                             if isinstance(rec.get("gold_answers"), list) else {})},
                    qtype=rec.get("question_type") if isinstance(rec.get("question_type"), str) else None,
                    difficulty=rec.get("difficulty") if isinstance(rec.get("difficulty"), str) else None,
                    reference=rec.get("reference") if isinstance(rec.get("reference"), str) else None,
                    extra_references=[x for x in rec.get("extra_references") or [] if isinstance(x, str)]
                    if isinstance(rec.get("extra_references"), list) else [])


def _subsets(
    r: RecordReader, q: Question, subsets: dict, ds: Dataset, labelers: tuple[str, ...]
) -> dict[str, int]:
    """Add the passages and generations of ``subsets`` to ``ds``; returns their labels."""
    texts = q.hint_texts
    labels: dict[str, int] = {}
    # A question's 325 × (labelers + readers) answers repeat a few strings ("NO ANSWER", the
    # answer): keep one object per distinct string and match each against the pool once.
    shared: dict[str, str] = {}
    matches: dict[str, bool] = {}
    for mask, perms in subsets.items():
        if len(mask) != len(texts) or not set(mask) <= {"0", "1"}:
            r.fail(
                f"mask {mask!r} must be one 0/1 character per hint ({len(texts)} hints)", f"subsets.{mask}"
            )
        if not isinstance(perms, dict):
            r.fail("expected {permutation: {model: answer}}", f"subsets.{mask}")
        for perm, gens in perms.items():
            where = f"subsets.{mask}.{perm}"
            pid = f"{q.qid}_{mask}_{perm}"
            try:
                _, _, hint_ids = parse_passage_id(pid)
            except ValueError as e:
                r.fail(str(e), where)
            if not isinstance(gens, dict):
                r.fail("expected {model: answer}", where)
            for model, g in gens.items():
                if not isinstance(g, str):
                    r.fail(f"expected a generated answer (a string), got {type(g).__name__} ({g!r:.40})",
                           f"{where}.{model}")
            gens = {str(k): shared.setdefault(v, v) for k, v in gens.items()}
            ds.passages[pid] = Passage(pid, q.qid, hint_ids, join_hints(texts, hint_ids))
            ds.generations[pid] = gens
            ok = False
            for m in labelers:
                if m in gens:
                    g = gens[m]
                    if g not in matches:
                        matches[g] = exact_match(g, q.answers)
                    if matches[g]:
                        ok = True
                        break
            labels[pid] = 2 if ok else 1
    return labels


def _corpus_only_questions(path: Path) -> set[str]:
    """Ids of ``distractors.json`` (a build's questions whose passages are in the corpus only)."""
    if not path.exists():
        return set()
    return {qid for _, qid in iter_records(path, "id", allow_empty=True)}


def _apply_corpus(path: Path, ds: Dataset, corpus_only: Container[str] = frozenset()) -> None:
    """Take passage text from ``corpus.jsonl`` (``id``, ``contents``; ``title`` ignored).

    Streamed line by line. A passage the split files already built with the same text is kept as
    it is (no second object, id string or parse: at QUIT's 2.4 M passages that is ~0.2 GB and
    seconds saved). Refused, naming the line: a duplicate id, and a passage of a question that is
    neither in a split nor in ``corpus_only`` (it would join the corpus with no label)."""
    passages = ds.passages
    seen: set[str] = set()  # holds the split files' own id strings where it can: no second copy
    for lineno, obj in iter_jsonl(path):
        pid, text = obj.get("id"), obj.get("contents")
        if not isinstance(pid, str) or not isinstance(text, str):
            raise DataFormatError(path, "expected string fields 'id' and 'contents'", record=f"line {lineno}",
                                  field="id" if not isinstance(pid, str) else "contents")
        if pid in seen:
            raise DataFormatError(
                path,
                f"duplicate passage id {pid!r} (also on line {_first_line(path, pid)})",
                record=f"line {lineno}",
                field="id",
            )
        old = passages.get(pid)
        if old is not None:
            seen.add(old.pid)
            if old.text != text:
                passages[pid] = Passage(old.pid, old.qid, old.hint_ids, text)
            continue
        seen.add(pid)
        try:
            qid, _, hint_ids = parse_passage_id(pid)
        except ValueError as e:
            raise DataFormatError(path, str(e), record=f"line {lineno}", field="id") from None
        if qid not in ds.questions and qid not in corpus_only:
            raise DataFormatError(
                path,
                f"passage {pid!r} belongs to question {qid!r}, which is in no split file "
                "(nor in distractors.json)",
                record=f"line {lineno}",
                field="id",
            )
        ds.passages[pid] = Passage(pid, qid, hint_ids, text)
        if qid in ds.qrels and pid not in ds.qrels[qid]:
            ds.qrels[qid][pid] = 1


def _first_line(path: Path, pid: str) -> int | None:
    """Line of the first corpus record with id ``pid`` (read again only to word an error)."""
    for lineno, obj in iter_jsonl(path):
        if obj.get("id") == pid:
            return lineno
    return None
