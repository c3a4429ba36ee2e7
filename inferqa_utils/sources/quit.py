"""Official QUIT release loader (README, Data (QUIT release)), from local files or the hub.

Split files ``train.json``/``dev.json``/``test.json``: one record per question with ``id``,
``question``, ``answers`` (the expanded answer pool), ``hints`` ([{"hint": ...}] or strings)
and ``subsets`` ``{mask: {permutation: {model_key: generated answer}}}``. Passages are built
from ``subsets`` (or read from ``corpus/corpus.jsonl`` when present; its ``title`` holds the
question id and is never used as passage text). Labels follow paper 000 §3.2.2: 2 if any
labeler's generated answer exactly matches the pool (SQuAD-normalised), else 1.
"""

from __future__ import annotations

from pathlib import Path

from ..config import PATHS
from ..datamodel import Dataset, Hint, Passage, Question, join_hints, parse_passage_id
from ..errors import DataFormatError
from ..hub import download
from ..textnorm import exact_match
from .records import iter_jsonl, iter_records

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
    """Load QUIT from a local folder holding ``<split>.json`` files, or ``"hub"``."""
    folder = fetch_quit_from_hub() if str(source) == "hub" else Path(source)
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
        raise DataFormatError(folder, f"no split file found (expected one of {', '.join(s + '.json' for s in splits)})")
    corpus = folder / "corpus" / "corpus.jsonl"
    if corpus.exists():
        ds.meta["source_files"].append(str(corpus))
        _apply_corpus(corpus, ds)
    return ds


def _load_split(path: Path, split: str, ds: Dataset, labelers: tuple[str, ...]) -> None:
    for r, qid in iter_records(path, "id"):
        label = r.label
        answers = r.str_list("answers", nonempty=True)
        raw_hints = r.get("hints", list)
        if not raw_hints:
            r.fail("list is empty", "hints")
        hints = []
        for j, h in enumerate(raw_hints):
            if isinstance(h, dict):
                h = r.str_("hint", obj=h, path=f"hints[{j}].hint")
            elif not isinstance(h, str):
                r.fail(f"expected a string or {{'hint': str}}, got {type(h).__name__}", f"hints[{j}]")
            conv = raw_hints[j].get("convergence") if isinstance(raw_hints[j], dict) else None
            hints.append(Hint(h.strip(), convergence=float(conv) if isinstance(conv, int | float) else None))
        rec = r.record
        q = Question(qid=qid, question=r.str_("question").strip(), answers=answers, hints=hints,
                     source=f"quit:{path.name}",
                     meta={"split": split, **({"gold_answers": rec["gold_answers"]}
                                              if isinstance(rec.get("gold_answers"), list) else {})},
                     qtype=rec.get("question_type") if isinstance(rec.get("question_type"), str) else None,
                     difficulty=rec.get("difficulty") if isinstance(rec.get("difficulty"), str) else None,
                     reference=rec.get("reference") if isinstance(rec.get("reference"), str) else None,
                     extra_references=[x for x in rec.get("extra_references") or [] if isinstance(x, str)]
                     if isinstance(rec.get("extra_references"), list) else [])
        if qid in ds.questions:
            raise DataFormatError(path, f"question id {qid!r} also appears in another split", record=label, field="id")
        ds.questions[qid] = q
        ds.splits.setdefault(split, []).append(qid)
        subsets = r.get("subsets", dict, required=False, default={})
        qrels = ds.qrels.setdefault(qid, {})
        texts = q.hint_texts
        # A question's 325 × (labelers + readers) answers repeat a few strings ("NO ANSWER", the
        # answer): keep one object per distinct string and match each against the pool once.
        shared: dict[str, str] = {}
        matches: dict[str, bool] = {}
        for mask, perms in subsets.items():
            if not isinstance(perms, dict):
                r.fail("expected {permutation: {model: answer}}", f"subsets.{mask}")
            for perm, gens in perms.items():
                pid = f"{qid}_{mask}_{perm}"
                try:
                    _, _, hint_ids = parse_passage_id(pid)
                except ValueError as e:
                    r.fail(str(e), f"subsets.{mask}.{perm}")
                if max(hint_ids) >= len(texts):
                    r.fail(f"permutation uses hint {max(hint_ids)} but the question has {len(texts)} hints",
                           f"subsets.{mask}.{perm}")
                if not isinstance(gens, dict):
                    r.fail("expected {model: answer}", f"subsets.{mask}.{perm}")
                gens = {str(k): shared.setdefault(v, v) if isinstance(v, str) else "" for k, v in gens.items()}
                ds.passages[pid] = Passage(pid, qid, hint_ids, join_hints(texts, hint_ids))
                ds.generations[pid] = gens
                ok = False
                for m in labelers:
                    if m in gens:
                        g = gens[m]
                        if g not in matches:
                            matches[g] = exact_match(g, answers)
                        if matches[g]:
                            ok = True
                            break
                qrels[pid] = 2 if ok else 1


def _apply_corpus(path: Path, ds: Dataset) -> None:
    """Take passage text from ``corpus.jsonl`` (``id``, ``contents``; ``title`` ignored).

    Streamed line by line. A passage the split files already built with the same text is kept as
    it is (no second object, id string or parse: at QUIT's 2.4 M passages that is ~0.2 GB and
    seconds saved)."""
    passages = ds.passages
    for lineno, obj in enumerate(iter_jsonl(path), 1):
        pid, text = obj.get("id"), obj.get("contents")
        if not isinstance(pid, str) or not isinstance(text, str):
            raise DataFormatError(path, "expected string fields 'id' and 'contents'", record=f"line {lineno}")
        old = passages.get(pid)
        if old is not None:
            if old.text != text:
                passages[pid] = Passage(old.pid, old.qid, old.hint_ids, text)
            continue
        try:
            qid, _, hint_ids = parse_passage_id(pid)
        except ValueError as e:
            raise DataFormatError(path, str(e), record=f"line {lineno}", field="id") from None
        ds.passages[pid] = Passage(pid, qid, hint_ids, text)
        if qid in ds.qrels and pid not in ds.qrels[qid]:
            ds.qrels[qid][pid] = 1
