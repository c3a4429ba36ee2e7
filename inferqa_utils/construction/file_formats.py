"""Writers for docs/data.md: QUIT-shaped split files, corpus JSONL, TREC qrels and BEIR layout."""

from __future__ import annotations

import json
from pathlib import Path

from ..ir.datamodel import Dataset
from ..ir.trec import write_qrels
from ..sources.quit import parse_passage_id


def quit_records(ds: Dataset, split: str) -> list[dict]:
    """Records in the official QUIT shape (docs/data.md, *The QUIT release shape*) for one split."""
    out = []
    wanted = set(ds.splits.get(split, ()))
    by_question: dict[str, list] = {}
    for p in ds.passages.values():  # one pass: passages_of per question is quadratic (7,401 × 2.4 M in QUIT)
        if p.qid in wanted:
            by_question.setdefault(p.qid, []).append(p)
    for q in ds.split(split):
        subsets: dict[str, dict[str, dict[str, str]]] = {}
        for p in by_question.get(q.qid, ()):
            _, mask, _ = parse_passage_id(p.pid)
            perm = "".join(str(i) for i in p.hint_ids)
            subsets.setdefault(mask, {})[perm] = dict(ds.generations.get(p.pid, {}))
        out.append(
            {
                "id": q.qid,
                "question": q.question,
                "answers": list(q.answers),
                "hints": [
                    {"hint": h.text, **({"convergence": h.convergence} if h.convergence is not None else {})}
                    for h in q.hints
                ],
                "subsets": subsets,
                "question_type": q.qtype,
                "difficulty": q.difficulty,
                **({"reference": q.reference} if q.reference else {}),
                **({"extra_references": q.extra_references} if q.extra_references else {}),
                **({"gold_answers": q.meta["gold_answers"]} if q.meta.get("gold_answers") else {}),
            }
        )
    return out


def write_quit(ds: Dataset, folder: str | Path) -> dict[str, Path]:
    """Write ``<split>.json`` for every split, ``corpus/corpus.jsonl`` and ``qrels/<split>.qrels``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for split in ds.splits:
        p = folder / f"{split}.json"
        p.write_text(json.dumps(quit_records(ds, split), ensure_ascii=False, indent=1), encoding="utf-8")
        written[split] = p
        written[f"qrels:{split}"] = write_qrels({q: ds.qrels.get(q, {}) for q in ds.splits[split]},
                                                folder / "qrels" / f"{split}.qrels")
    written["corpus"] = write_corpus_jsonl(ds, folder / "corpus" / "corpus.jsonl")
    return written


def write_corpus_jsonl(ds: Dataset, path: str | Path) -> Path:
    """``{"id", "contents"}`` per passage (no title: the authors' title leaks the question id)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for p in ds.passages.values():
            fh.write(json.dumps({"id": p.pid, "contents": p.text}, ensure_ascii=False) + "\n")
    return path


def write_beir(ds: Dataset, folder: str | Path) -> Path:
    """BEIR layout: ``corpus.jsonl`` (_id/title/text), ``queries.jsonl``, ``qrels/<split>.tsv``."""
    folder = Path(folder)
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as fh:
        for p in ds.passages.values():
            fh.write(json.dumps({"_id": p.pid, "title": "", "text": p.text}, ensure_ascii=False) + "\n")
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as fh:
        for q in ds:
            fh.write(json.dumps({"_id": q.qid, "text": q.question}, ensure_ascii=False) + "\n")
    for split, qids in ds.splits.items():
        with open(folder / "qrels" / f"{split}.tsv", "w", encoding="utf-8") as fh:
            fh.write("query-id\tcorpus-id\tscore\n")
            for qid in qids:
                for pid, label in ds.qrels.get(qid, {}).items():
                    fh.write(f"{qid}\t{pid}\t{label}\n")
    return folder
