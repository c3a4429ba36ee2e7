"""One place for the fingerprints that decide whether a cached artifact is still valid.

Every cache of the compendium (retrieval runs, reranked runs, method runs, indexes, manifests)
keys its artifact by sha256 fingerprints of its inputs; they are all computed here:

* :func:`corpus_sha256` — the JSONL collection a corpus is written as (ids, texts, order);
* :func:`queries_sha256` — question ids and texts, in order;
* :func:`ranking_sha256` — a run's passage order only (scores lose digits in a TREC file);
* :func:`run_sha256` — a run's ids, order and scores rounded to 6 digits;
* :func:`sha256_json` — any JSON-able object (keys sorted);
* :func:`sha256_file` — a file's bytes;
* :func:`files_sha256` — the contents of several files in order (never their names or locations);
* :func:`dir_fingerprint` — a checkpoint folder's file names, sizes and mtimes (retraining changes it);
* :func:`dist_version` — the installed version of a library a result depends on (a retriever's identity).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any


def jsonl_lines(corpus: Mapping[str, str]) -> Iterable[str]:
    """The corpus as Pyserini JSONL lines ``{"id": …, "contents": …}``."""
    for pid, text in corpus.items():
        yield json.dumps({"id": str(pid), "contents": str(text)}, ensure_ascii=False) + "\n"


def corpus_sha256(corpus: Mapping[str, str]) -> str:
    """sha256 of the JSONL collection the corpus is written as (ids, texts and their order)."""
    h = hashlib.sha256()
    for line in jsonl_lines(corpus):
        h.update(line.encode("utf-8"))
    return h.hexdigest()


def queries_sha256(queries: Mapping[str, str]) -> str:
    h = hashlib.sha256()
    for qid, text in queries.items():
        h.update(json.dumps([str(qid), str(text)], ensure_ascii=False).encode("utf-8") + b"\n")
    return h.hexdigest()


def sha256_json(obj: Any) -> str:
    return hashlib.sha256(
        json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str).encode()
    ).hexdigest()


def run_sha256(run: Mapping[str, Sequence[tuple[str, float]]]) -> str:
    """Fingerprint of a run (ids and order; scores rounded to 6 digits as in TREC files)."""
    return sha256_json({q: [[p, round(float(s), 6)] for p, s in lst] for q, lst in run.items()})


def ranking_sha256(run: Mapping[str, Sequence[tuple[str, float]]]) -> str:
    """Fingerprint of a run's order only (what a reranker's output depends on)."""
    return hashlib.sha256(json.dumps([(q, [p for p, _ in v]) for q, v in run.items()]).encode()).hexdigest()


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


_DIGESTS: dict[tuple[str, int, int, int, int], str] = {}


def sha256_file_once(path: str | Path) -> str:
    """:func:`sha256_file`, read once per process while the file keeps its inode, size and
    modification and change times."""
    st = Path(path).stat()
    key = (str(Path(path).resolve()), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if key not in _DIGESTS:
        _DIGESTS[key] = sha256_file(path)
    return _DIGESTS[key]


def files_sha256(paths: Iterable[str | Path]) -> str:
    """sha256 of the contents of ``paths``, in order — not their names or folders, so the same
    files give the same value on every machine; ``""`` for no file (:func:`sha256_file_once`)."""
    digests = [sha256_file_once(p) for p in paths]
    return sha256_json(digests) if digests else ""


def dir_fingerprint(path: Path) -> str:
    """sha256 of (relative path, size, mtime) of every file of a checkpoint: retraining changes it."""
    h = hashlib.sha256(str(path).encode())
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for f in files:
        st = f.stat()
        h.update(f"\0{f.relative_to(path) if f != path else f.name}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    return h.hexdigest()


def dist_version(dist: str) -> str:
    """The installed version of distribution ``dist``; ``"missing"`` when it is not installed."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "missing"
