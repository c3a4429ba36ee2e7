"""TREC qrels and run files (docs/data.md): ``qid 0 docid label`` and ``qid Q0 docid rank score tag``."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from ..core.errors import DataFormatError
from ..core.textio import iter_lines

Run = dict[str, list[tuple[str, float]]]  # qid -> [(docid, score)] best first
Qrels = dict[str, dict[str, int]]  # qid -> {docid: label}
#: the graded labels of a built dataset: 0 (another question's passage), 1 (partial), 2 (supporting)
QRELS_LABELS = (0, 1, 2)


def write_qrels(qrels: Mapping[str, Mapping[str, int]], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for qid, docs in qrels.items():
            for did, label in docs.items():
                fh.write(f"{qid} 0 {did} {int(label)}\n")
    return path


def read_qrels(path: str | Path, labels: Collection[int] = QRELS_LABELS) -> Qrels:
    """Read ``qid 0 docid label`` lines. Refused with :class:`DataFormatError` naming the file and
    line: not exactly 4 columns, a label that is not an integer or not in ``labels``, a
    (qid, docid) pair listed twice, a file that is not UTF-8."""
    path = Path(path)
    out: Qrels = {}
    for n, line in iter_lines(path):
        parts = line.split()
        if not parts:
            continue
        where = f"line {n}"
        if len(parts) != 4:
            raise DataFormatError(
                path, f"expected 4 columns 'qid 0 docid label', got {len(parts)}", record=where
            )
        qid, _, did, raw = parts
        try:
            label = int(raw)
        except ValueError:
            raise DataFormatError(
                path, f"label {raw!r} is not an integer", record=where, field="label"
            ) from None
        if label not in labels:
            allowed = ", ".join(map(str, sorted(labels)))
            raise DataFormatError(path, f"label {label} outside {{{allowed}}}", record=where, field="label")
        docs = out.setdefault(qid, {})
        if did in docs:
            raise DataFormatError(path, f"question {qid!r} and passage {did!r} are also on line "
                                        f"{_first_line(path, qid, did)}", record=where, field="docid")
        docs[did] = label
    return out


def _first_line(path: Path, qid: str, did: str) -> int | None:
    """Line of the first qrels/run line for ``(qid, did)`` (read again only to word an error)."""
    for n, line in iter_lines(path):
        parts = line.split()
        if len(parts) >= 3 and parts[0] == qid and parts[2] == did:
            return n
    return None


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
    """Read a TREC run, sorted by score (desc) then rank. Refused with :class:`DataFormatError`
    naming the file and line: not exactly 6 columns, a rank that is not an integer, a score that
    is not a number (or is NaN), a passage listed twice for one question, a file that is not
    UTF-8; with ``known_docids``, an unknown passage."""
    path = Path(path)
    rows: dict[str, list[tuple[float, int, str]]] = {}
    seen: dict[str, set[str]] = {}
    for n, line in iter_lines(path):
        parts = line.split()
        if not parts:
            continue
        where = f"line {n}"
        if len(parts) != 6:
            raise DataFormatError(path, f"expected 6 columns 'qid Q0 docid rank score tag', got {len(parts)}",
                                  record=where)
        qid, _, did, rank, score, _ = parts
        if known_docids is not None and did not in known_docids:
            raise DataFormatError(path, f"run names unknown passage {did!r}", record=where, field="docid")
        docs = seen.setdefault(qid, set())
        if did in docs:
            raise DataFormatError(path, f"passage {did!r} is listed for question {qid!r} on line "
                                        f"{_first_line(path, qid, did)} too", record=where, field="docid")
        docs.add(did)
        rows.setdefault(qid, []).append((_score(path, where, score), _rank(path, where, rank), did))
    return {q: [(d, s) for s, _, d in sorted(v, key=lambda t: (-t[0], t[1]))] for q, v in rows.items()}


def _rank(path: Path, where: str, raw: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise DataFormatError(path, f"rank {raw!r} is not an integer", record=where, field="rank") from None


def _score(path: Path, where: str, raw: str) -> float:
    try:
        score = float(raw)
    except ValueError:
        raise DataFormatError(path, f"score {raw!r} is not a number", record=where, field="score") from None
    if math.isnan(score):
        raise DataFormatError(path, "score is NaN", record=where, field="score")
    return score
