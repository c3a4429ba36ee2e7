"""TREC qrels and run files (README, Data): ``qid 0 docid label`` and ``qid Q0 docid rank score tag``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from .errors import DataFormatError

Run = dict[str, list[tuple[str, float]]]  # qid -> [(docid, score)] best first
Qrels = dict[str, dict[str, int]]  # qid -> {docid: label}


def write_qrels(qrels: Mapping[str, Mapping[str, int]], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for qid, docs in qrels.items():
            for did, label in docs.items():
                fh.write(f"{qid} 0 {did} {int(label)}\n")
    return path


def read_qrels(path: str | Path) -> Qrels:
    path = Path(path)
    out: Qrels = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 4:
                raise DataFormatError(path, f"expected 4 columns 'qid 0 docid label', got {len(parts)}", record=f"line {n}")
            try:
                label = int(parts[3])
            except ValueError:
                raise DataFormatError(path, f"label {parts[3]!r} is not an integer", record=f"line {n}",
                                      field="label") from None
            out.setdefault(parts[0], {})[parts[2]] = label
    return out


def write_run(run: Mapping[str, Sequence[tuple[str, float]]], path: str | Path, tag: str = "inferqa") -> Path:
    """Write a run; each question's list must already be sorted best first."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for qid, docs in run.items():
            seen: set[str] = set()
            for rank, (did, score) in enumerate(docs, 1):
                if did in seen:
                    raise ValueError(f"run {tag}: passage {did!r} appears twice for question {qid!r}")
                seen.add(did)
                fh.write(f"{qid} Q0 {did} {rank} {float(score):.6f} {tag}\n")
    return path


def read_run(path: str | Path, known_docids: set[str] | None = None) -> Run:
    """Read a TREC run, sorted by score (desc) then rank. With ``known_docids``, unknown
    passages are an error naming the line."""
    path = Path(path)
    rows: dict[str, list[tuple[float, int, str]]] = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 6:
                raise DataFormatError(path, f"expected 6 columns 'qid Q0 docid rank score tag', got {len(parts)}",
                                      record=f"line {n}")
            qid, _, did, rank, score, _ = parts
            if known_docids is not None and did not in known_docids:
                raise DataFormatError(path, f"run names unknown passage {did!r}", record=f"line {n}", field="docid")
            try:
                rows.setdefault(qid, []).append((float(score), int(rank), did))
            except ValueError:
                raise DataFormatError(path, "rank/score are not numbers", record=f"line {n}") from None
    return {q: [(d, s) for s, _, d in sorted(v, key=lambda t: (-t[0], t[1]))] for q, v in rows.items()}
