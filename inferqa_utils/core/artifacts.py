"""The artifact store: one rule for "is this cached file still valid", one way to write it, one
cost record.

An artifact is a file (a TREC run, say) with a sidecar ``<file>.stamp.json`` holding its *key* and
the *cost* measured when it was computed::

    {"kind": "retrieval-run", "schema": 2, "inputs": {"corpus": <sha256>, "queries": <sha256>},
     "params": {"retriever": "bm25s", "identity": "bm25s 0.3.16 lucene k1=0.9 b=0.4", "k": 100},
     "cost": {"seconds": 1.234, "n_queries": 100, "seconds_per_query": 0.01234, "llm": {}},
     "file": {"size": …, "mtime_ns": …}, "written_at": "…"}

* :func:`key` — the one key recipe: what kind of artifact, its schema version (bump it when the
  file's content or meaning changes: every older stamp then misses and the artifact is
  recomputed), the fingerprints of its inputs (:mod:`inferqa_utils.core.fingerprint`) and its
  parameters (model identities included).
* :class:`Cost` — the one cost record: wall-clock seconds of the computation, the number of
  queries it served, seconds per query, and the LLM counters it moved (model calls, cache hits,
  prompt and generated tokens; ``{}`` when no LLM took part). Unknown seconds are ``null``.
* :func:`cached` — the value of an artifact: read back when its stamp matches, otherwise computed,
  timed and written (:class:`Cached`: value, cost, whether it was reused).
* :func:`valid` — the stamp, when the file (and any companion files) exist and every key field
  equals the stamp's (optionally: the file still has the size and mtime it was written with);
  ``None`` otherwise (then recompute).
* :func:`write` — atomic: the stamp is removed first, every file is written to a temporary name
  and renamed, and the stamp is written last, so an interrupted write leaves no valid-looking
  artifact and a re-run resumes by recomputing only what is missing.

:func:`cached` serves every cached run: retrieval runs
(:func:`inferqa_utils.retrieval.registry.retrieve`), LLM reranker runs
(:func:`inferqa_utils.rerank.conditions.rerank_all`), fine-tuned reranker runs
(:func:`inferqa_utils.finetune.conditions.cached_rerank`) and the methods of notebook 07
(:func:`inferqa_utils.beyond.common.cached_method`); :func:`valid` and :func:`write` also keep the
GGUF files joined from packaged parts (:func:`inferqa_utils.core.models.fetch`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

STAMP_SUFFIX = ".stamp.json"
#: the LLM counters a cost record keeps (:class:`inferqa_utils.llm.base.LLMStats` fields)
LLM_COUNTERS = ("model_calls", "cache_hits", "prompt_tokens", "generated_tokens")
Writer = Callable[[Path], None]
T = TypeVar("T")


# ----------------------------------------------------------------------------- key and cost

def key(kind: str, schema: int, inputs: Mapping[str, str], params: Mapping[str, Any]) -> dict[str, Any]:
    """The key of an artifact: ``{"kind", "schema", "inputs", "params"}`` as it reads back from JSON.

    ``inputs``: input name → fingerprint (sha256 of a corpus, the questions, a first-stage
    ranking…); ``params``: everything else the content depends on (model identities, depths, ``k``).
    """
    return normalise({"kind": str(kind), "schema": int(schema), "inputs": dict(sorted(inputs.items())),
                      "params": dict(sorted(params.items()))})


@dataclass(frozen=True)
class Cost:
    """What computing an artifact cost: wall-clock ``seconds`` (``None``: unknown) for ``n_queries``
    queries, and the LLM counters it moved (``{}`` when no LLM took part)."""

    seconds: float | None = None
    n_queries: int = 0
    llm: Mapping[str, int] = field(default_factory=dict)

    @property
    def seconds_per_query(self) -> float | None:
        """``seconds / n_queries`` (one query when none were counted); ``None`` when unknown."""
        return None if self.seconds is None else self.seconds / max(1, self.n_queries)

    @property
    def model_calls(self) -> int | None:
        """Model calls made (not served from the generation cache); ``None`` when no LLM took part."""
        return int(self.llm["model_calls"]) if "model_calls" in self.llm else None

    def record(self) -> dict[str, Any]:
        """The JSON record of a stamp's ``"cost"``."""
        spq = self.seconds_per_query
        return {
            "seconds": None if self.seconds is None else round(self.seconds, 3),
            "n_queries": int(self.n_queries),
            "seconds_per_query": None if spq is None else round(spq, 6),
            "llm": dict(self.llm),
        }

    @classmethod
    def of(cls, stamp: Mapping[str, Any] | None) -> Cost:
        """The cost recorded in a stamp (unknown seconds when it records none)."""
        c = (stamp or {}).get("cost")
        c = c if isinstance(c, dict) else {}
        seconds = c.get("seconds")
        llm = c.get("llm")
        return cls(None if seconds is None else float(seconds), int(c.get("n_queries") or 0),
                   dict(llm) if isinstance(llm, dict) else {})


def llm_counters(engines: Iterable[Any]) -> dict[str, int]:
    """The summed :data:`LLM_COUNTERS` of the distinct engines that keep ``stats``; ``{}`` when none does."""
    out: dict[str, int] = {}
    seen: set[int] = set()
    for m in engines:
        stats = getattr(m, "stats", None)
        if stats is None or id(m) in seen:
            continue
        seen.add(id(m))
        for k in LLM_COUNTERS:
            out[k] = out.get(k, 0) + int(getattr(stats, k, 0))
    return out


# ----------------------------------------------------------------------------- stamps and files

def stamp_path(path: str | Path) -> Path:
    """The sidecar stamp of an artifact: ``<file>.stamp.json``."""
    path = Path(path)
    return path.with_name(path.name + STAMP_SUFFIX)


def normalise(key: Mapping[str, Any]) -> dict[str, Any]:
    """The key as it reads back from JSON (tuples → lists, paths → strings)."""
    return json.loads(json.dumps(dict(key), default=str, ensure_ascii=False))


def read_stamp(path: str | Path) -> dict[str, Any] | None:
    """The stamp of ``path`` as written, or ``None`` when there is none or it is not a JSON object."""
    try:
        data = json.loads(stamp_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def valid(path: str | Path, key: Mapping[str, Any], *companions: str | Path, check_file: bool = False
          ) -> dict[str, Any] | None:
    """The stamp of ``path`` when it and every companion file exist and each key field matches;
    with ``check_file`` also when the file still has the size and mtime it was written with (for
    files that are rebuilt silently, e.g. joined model weights; a hand-edited run is instead
    reported by its reader, not overwritten)."""
    if not Path(path).is_file() or not all(Path(c).is_file() for c in companions):
        return None
    stamp = read_stamp(path)
    if stamp is None:
        return None
    want = normalise(key)
    if not all(stamp.get(k) == v for k, v in want.items()):
        return None
    seen = stamp.get("file")
    if check_file and isinstance(seen, dict) and seen != _stat(Path(path)):
        return None  # replaced, truncated or touched since it was written
    return stamp


def _stat(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def write(path: str | Path, writer: Writer, key: Mapping[str, Any], cost: Cost | None = None,
          companions: Mapping[str | Path, Writer] | None = None) -> None:
    """Write ``path`` (``writer(tmp_path)``) and its companions atomically, then the stamp
    (``cost``: none recorded when ``None``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sp = stamp_path(path)
    sp.unlink(missing_ok=True)  # no valid-looking stamp while the files are being replaced
    tag = f"tmp-{os.getpid()}"
    files = {path: writer, **{Path(p): w for p, w in (companions or {}).items()}}
    tmps = {p: p.with_name(f"{p.name}.{tag}") for p in files}
    tmp_stamp = sp.with_name(f"{sp.name}.{tag}")
    try:
        for p, w in files.items():
            w(tmps[p])
        for p in files:
            tmps[p].replace(p)
        stamp = {**normalise(key), "cost": {} if cost is None else cost.record(), "file": _stat(path),
                 "written_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        tmp_stamp.write_text(json.dumps(stamp, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        tmp_stamp.replace(sp)
    finally:
        for t in [*tmps.values(), tmp_stamp]:
            t.unlink(missing_ok=True)


# ----------------------------------------------------------------------------- cached values

@dataclass(frozen=True)
class Cached(Generic[T]):
    """The value of an artifact, what computing it cost, and whether it was read back (``reused``)."""

    value: T
    cost: Cost
    reused: bool


def cached(path: str | Path | None, key: Mapping[str, Any], compute: Callable[[], T], *, n_queries: int,
           save: Callable[[T, Path], None], load: Callable[[Path], T | None] | None = None,
           companions: Mapping[str | Path, Callable[[T, Path], None]] | None = None,
           llms: Iterable[Any] = (), setup: Callable[[], object] | None = None) -> Cached[T]:
    """The value of the artifact ``path`` with ``key`` (:func:`key`), computed by ``compute()``.

    * With ``load``: when ``path`` and its ``companions`` exist and the stamp matches (:func:`valid`),
      ``load(path)`` is returned with the recorded cost and ``compute`` is not called (``load``
      returning ``None`` means "unreadable": recompute).
    * Otherwise ``compute()`` runs, timed, with the counters of ``llms`` (the engines it uses) read
      before and after, and is stored atomically (:func:`write`: ``save(value, tmp)``, each
      companion's saver likewise, then the stamp with the cost). Without ``load`` it always runs
      (the file is only written; an LLM's replies come from the generation cache on a re-run): a
      run that used an LLM but made no model call timed the cache, not the work, so the cost
      recorded under the same key is kept, or is unknown (``seconds`` ``None``) when none is.

    ``setup`` runs before ``compute`` on a miss, outside the timing (building an index, encoding a
    corpus: work the cost leaves out). ``path`` ``None``: computed, and nothing is stored.
    """
    companion_paths = [Path(p) for p in (companions or {})]
    if path is not None and load is not None:
        stamp = valid(path, key, *companion_paths)
        value = load(Path(path)) if stamp is not None else None
        if value is not None:
            return Cached(value, Cost.of(stamp), reused=True)
    value, cost = _timed(compute, n_queries, list(llms), setup)
    if path is None:
        return Cached(value, cost, reused=False)
    if load is None and cost.model_calls == 0:
        cost = _recorded_cost(path, key, cost)
    write(path, lambda tmp: save(value, tmp), key, cost,
          {p: (lambda tmp, s=s: s(value, tmp)) for p, s in (companions or {}).items()})
    return Cached(value, cost, reused=False)


def _timed(compute: Callable[[], T], n_queries: int, engines: list[Any], setup: Callable[[], object] | None
           ) -> tuple[T, Cost]:
    """``compute()`` and its cost: wall-clock seconds (``setup()`` runs first, untimed) and the
    change of the ``engines``' counters."""
    if setup is not None:
        setup()
    before = llm_counters(engines)
    t0 = time.perf_counter()
    value = compute()
    seconds = time.perf_counter() - t0
    after = llm_counters(engines)
    return value, Cost(seconds, n_queries, {k: after[k] - before[k] for k in after})


def _recorded_cost(path: str | Path, key: Mapping[str, Any], measured: Cost) -> Cost:
    """The cost of a computation served by the generation cache: the one recorded under ``key``,
    else unknown seconds with the counters ``measured``."""
    recorded = Cost.of(valid(path, key))
    return recorded if recorded.seconds is not None else Cost(None, measured.n_queries, measured.llm)
