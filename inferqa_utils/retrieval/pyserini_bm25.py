"""BM25 with Pyserini/Lucene (the paper's BM25, paper 000 §4, §5.1–5.2), same interface as
:class:`BM25sRetriever`.

The index is built in-process with Anserini's ``IndexCollection`` (what ``python -m
pyserini.index.lucene`` runs) from a JSONL collection (``id``, ``contents``), with Lucene's
default English analyzer (Porter stemming, Lucene stopwords). Layout of ``index_dir``::

    index_dir/lucene/      the Lucene index
    index_dir/stamp.json   sha256 of the corpus + indexer settings; a matching stamp means reuse

pyserini is imported lazily (importing it starts a Java 21 JVM, ~7–12 s; see
:mod:`inferqa_utils.retrieval.java`).
"""

from __future__ import annotations

import json
import os
import shutil
import time
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..core.fingerprint import corpus_sha256, dist_version, jsonl_lines
from ..ir.lexical import EmptyQueryError
from ..ir.trec import Run
from .java import JavaRuntimeError, ensure_java, start_jvm_error

STAMP_NAME = "stamp.json"
INDEX_SUBDIR = "lucene"
STAMP_SCHEMA = 1
INDEX_ARGS = ("-collection", "JsonCollection", "-generator", "DefaultLuceneDocumentGenerator")


def check_unique_ids(ids: Iterable[str]) -> None:
    """Raise ``ValueError`` naming the first passage id that occurs twice."""
    seen: set[str] = set()
    for n, pid in enumerate(ids):
        if pid in seen:
            raise ValueError(f"duplicate passage id {pid!r} (second occurrence at position {n})")
        seen.add(pid)


def _lucene() -> Any:
    """``pyserini.search.lucene`` after :func:`ensure_java`; JVM problems → JavaRuntimeError."""
    ensure_java()
    try:
        from pyserini.search import lucene
    except JavaRuntimeError:
        raise
    except Exception as exc:  # ImportError, JavaException, SystemError from a JVM that won't start
        raise start_jvm_error(exc) from exc
    return lucene


def _anserini_jar() -> str:
    import importlib.util

    spec = importlib.util.find_spec("pyserini")
    if spec is None or not spec.submodule_search_locations:
        return "unknown"
    jars = sorted(
        Path(next(iter(spec.submodule_search_locations)), "resources", "jars").glob("anserini-*.jar")
    )
    return jars[-1].name if jars else "unknown"


def pyserini_identity(k1: float = 0.9, b: float = 0.4) -> str:
    """What besides corpus, queries and ``k`` decides a :class:`PyseriniBM25Retriever`'s run: the
    pyserini version, the Anserini jar, k1, b and the indexer settings."""
    return f"pyserini {dist_version('pyserini')} {_anserini_jar()} k1={k1:g} b={b:g} {' '.join(INDEX_ARGS)}"


class PyseriniBM25Retriever:
    """Lucene BM25 over ``corpus`` (passage id → text); k1 = 0.9, b = 0.4 are Pyserini's defaults."""

    name = "pyserini-bm25"

    def __init__(self, corpus: Mapping[str, str], index_dir: str | Path, k1: float = 0.9, b: float = 0.4,
                 threads: int = 2) -> None:
        if not corpus:
            raise ValueError("cannot index an empty corpus")
        check_unique_ids(corpus)
        self.index_dir = Path(index_dir)
        self.k1, self.b, self.threads = float(k1), float(b), int(threads)
        self.doc_ids = list(corpus)
        self.stamp = {
            "schema": STAMP_SCHEMA,
            "corpus_sha256": corpus_sha256(corpus),
            "n_passages": len(corpus),
            "anserini": _anserini_jar(),
            "index_args": list(INDEX_ARGS),
        }
        lucene = _lucene()
        self.rebuilt = not self._stamp_matches()
        self.build_seconds = 0.0
        if self.rebuilt:
            self.build_seconds = self._build(corpus)
        self.searcher = lucene.LuceneSearcher(str(self.lucene_dir))
        self.searcher.set_bm25(self.k1, self.b)
        self._analyzer = None

    @property
    def identity(self) -> str:
        """:func:`pyserini_identity` of this retriever's parameters."""
        return pyserini_identity(self.k1, self.b)

    @property
    def lucene_dir(self) -> Path:
        return self.index_dir / INDEX_SUBDIR

    @property
    def stamp_path(self) -> Path:
        return self.index_dir / STAMP_NAME

    # -- index -----------------------------------------------------------------------------
    def _stamp_matches(self) -> bool:
        if not self.stamp_path.is_file() or not any(self.lucene_dir.glob("segments_*")):
            return False
        try:
            old = json.loads(self.stamp_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return all(old.get(key) == value for key, value in self.stamp.items())

    def _build(self, corpus: Mapping[str, str]) -> float:
        from jnius import autoclass

        t0 = time.perf_counter()
        self.index_dir.mkdir(parents=True, exist_ok=True)
        self.stamp_path.unlink(missing_ok=True)
        tag = f"tmp-{os.getpid()}"
        coll_dir = self.index_dir / f"collection.{tag}"
        tmp_index = self.index_dir / f"{INDEX_SUBDIR}.{tag}"
        for d in (coll_dir, tmp_index):
            shutil.rmtree(d, ignore_errors=True)
        coll_dir.mkdir()
        try:
            with open(coll_dir / "docs.jsonl", "w", encoding="utf-8") as fh:
                fh.writelines(jsonl_lines(corpus))
            args = [*INDEX_ARGS, "-input", str(coll_dir), "-index", str(tmp_index),
                    "-threads", str(self.threads), "-quiet"]
            try:
                # returns None both on success and on a rejected option: the document count checks it
                autoclass("io.anserini.index.IndexCollection").main(args)
            except Exception as exc:
                raise RuntimeError(
                    f"Lucene indexing of {len(corpus)} passages into {tmp_index} failed: {exc}"
                ) from exc
            n_docs = _count_docs(tmp_index)
            expected = sum(1 for t in corpus.values() if str(t).strip())
            if n_docs == 0 or n_docs > len(corpus):
                raise RuntimeError(f"Lucene indexing into {tmp_index} produced {n_docs} documents for "
                                   f"{len(corpus)} passages")
            if n_docs != expected:
                warnings.warn(f"Lucene indexed {n_docs} of {len(corpus)} passages ({expected} non-blank); "
                              "the others are unsearchable", stacklevel=3)
            shutil.rmtree(self.lucene_dir, ignore_errors=True)
            tmp_index.rename(self.lucene_dir)
        finally:
            shutil.rmtree(coll_dir, ignore_errors=True)
            shutil.rmtree(tmp_index, ignore_errors=True)
        seconds = time.perf_counter() - t0
        stamp = {**self.stamp, "n_indexed": n_docs, "build_seconds": round(seconds, 3),
                 "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        tmp_stamp = self.stamp_path.with_suffix(".json.tmp")
        tmp_stamp.write_text(json.dumps(stamp, indent=1) + "\n", encoding="utf-8")
        tmp_stamp.replace(self.stamp_path)
        return seconds

    # -- search ----------------------------------------------------------------------------
    def _check_query(self, qid: str, text: str) -> None:
        if self._analyzer is None:
            from pyserini.analysis import Analyzer, get_lucene_analyzer

            self._analyzer = Analyzer(get_lucene_analyzer())  # = LuceneSearcher's default analyzer
        if not text or not text.strip() or not self._analyzer.analyze(text):
            raise EmptyQueryError(
                f"query {qid!r} ({text!r}) has no searchable term (empty or stopwords only)"
            )

    def search(self, queries: Mapping[str, str], k: int = 100) -> Run:
        qids = [str(q) for q in queries]
        texts = [str(queries[q]) for q in queries]
        for qid, text in zip(qids, texts, strict=True):
            self._check_query(qid, text)
        if not qids:
            return {}
        hits = self.searcher.batch_search(texts, qids, k=int(k), threads=self.threads)
        return {qid: [(str(h.docid), float(h.score)) for h in hits.get(qid, [])] for qid in qids}

    def search_one(self, query: str, k: int = 10) -> list[tuple[str, float]]:
        return self.search({"q": query}, k)["q"]

    def close(self) -> None:
        self.searcher.close()


def _count_docs(index: Path) -> int:
    from jnius import autoclass

    reader = autoclass("io.anserini.index.IndexReaderUtils").getReader(str(index))
    try:
        return int(reader.numDocs())
    finally:
        reader.close()
