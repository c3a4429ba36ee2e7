"""Shared plumbing of the notebook-07 methods: sentence splitting, the method's reranker from a
short spec (asked of :mod:`inferqa_utils.rerank.registry`), and method runs cached on disk with
their cost.

A *method run* is computed once and stored as ``<out_dir>/<name>.trec`` plus a stamp
``<name>.trec.stamp.json`` holding everything its result depends on (corpus and queries sha256,
parameters, model identities, a method version) and what it cost when it was computed (wall-clock
seconds, LLM counters), plus ``<name>.details.json`` with the method's intermediate outputs
(sub-questions, knowledge elements, candidates…). A re-run with a matching stamp reads the files
back and makes no model call; the cost columns then still report the original computation.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import artifacts
from ..fingerprint import corpus_sha256, queries_sha256
from ..rerank.base import Reranker
from ..rerank.registry import make_reranker, reranker_spec
from ..trec import Run, read_run, write_run

if TYPE_CHECKING:
    from ..llm.base import LLM

STAMP_SCHEMA = 1


# ----------------------------------------------------------------------------- text helpers

def split_sentences(text: str) -> list[str]:
    """Sentences of a free text (for corpus entries that are not built passages): split after
    ``.``, ``!`` or ``?`` followed by white space."""
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s.strip()]


# ----------------------------------------------------------------------------- method rerankers

def make_method_reranker(spec: str | None, llm: LLM | None = None) -> Reranker | None:
    """A reranker from a short spec (:func:`inferqa_utils.rerank.registry.reranker_spec`): ``None`` /
    ``"none"`` → no reranking; an LLM reranker (``"pointwise"``, ``"upr"``, ``"listwise"`` and their
    aliases; needs ``llm``; progress bars off); ``"dense:<model>"`` or a bare embedder name
    (``"minilm"``, ``"e5-small"``) → :class:`~inferqa_utils.rerank.DenseReranker`.

    Cross-encoders are refused: a method run's stamp names its reranker by :func:`reranker_identity`
    (an LLM's or embedder's identity), which cannot tell one cross-encoder checkpoint from another."""
    if spec is None or str(spec).lower() in ("", "none"):
        return None
    spec = str(spec)
    entry = reranker_spec(spec)
    if entry is None or entry.kind not in ("llm", "dense"):
        raise ValueError(f"unknown reranker spec {spec!r}: use 'none', 'pointwise', 'upr', 'listwise', "
                         "'dense:<embedder>', 'minilm' or 'e5-small'")
    if entry.needs_llm and llm is None:
        raise ValueError(f"reranker {spec!r} needs an LLM")
    return make_reranker(spec, llm=llm if entry.needs_llm else None, **entry.quiet)


def reranker_identity(rr: Reranker | None) -> str:
    """What makes a reranker's scores change (for stamps): its name and model identity."""
    if rr is None:
        return "none"
    llm = getattr(rr, "llm", None)
    emb = getattr(rr, "embedder", None)
    ident = getattr(llm, "identity", None) or getattr(emb, "identity", None) or ""
    return f"{rr.name}:{ident}"


# ----------------------------------------------------------------------------- cached method runs

@dataclass
class MethodResult:
    """A method's run, its intermediate outputs and what it cost to compute."""

    name: str
    run: Run
    details: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    n_queries: int = 0
    llm: dict[str, int] = field(default_factory=dict)
    cached: bool = False

    @property
    def seconds_per_query(self) -> float:
        return round(self.seconds / max(1, self.n_queries), 3)


def _llm_counts(llms: Sequence[LLM]) -> dict[str, int]:
    out = {"model_calls": 0, "cache_hits": 0, "prompt_tokens": 0, "generated_tokens": 0}
    seen: set[int] = set()
    for m in llms:
        if m is None or id(m) in seen:
            continue
        seen.add(id(m))
        for k in out:
            out[k] += int(getattr(m.stats, k, 0))
    return out


def cached_method(name: str, out_dir: str | Path | None, stamp: Mapping[str, Any],
                  compute: Callable[[], tuple[Run, dict[str, Any]]], n_queries: int,
                  llms: Sequence[LLM] = ()) -> MethodResult:
    """Run ``compute()`` → ``(run, details)`` unless ``out_dir`` holds a valid artifact of ``name``
    (:mod:`inferqa_utils.artifacts`: run + details, key = ``stamp``); store run, details and cost.
    ``llms``: the engines the method uses, whose counters (model calls, cache hits, tokens) are
    recorded as its LLM cost."""
    key = {"schema": STAMP_SCHEMA, "method": name, **{k: stamp[k] for k in sorted(stamp)}}
    if out_dir is not None:
        run_path = Path(out_dir) / f"{name}.trec"
        details_path = Path(out_dir) / f"{name}.details.json"
        found = artifacts.valid(run_path, key, details_path)
        if found is None and run_path.is_file() and details_path.is_file():
            old = artifacts.read_stamp(run_path) or {}  # written before the artifact store: {"key": …, "cost": …}
            if old.get("key") == artifacts.normalise(key):
                found = old
        if found is not None:
            try:
                details = json.loads(details_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                found = None
        if found is not None:
            cost = artifacts.cost(found)
            return MethodResult(name, read_run(run_path), details, float(cost.get("seconds", 0.0)), n_queries,
                                dict(cost.get("llm", {})), cached=True)
    before = _llm_counts(llms)
    t0 = time.perf_counter()
    run, details = compute()
    seconds = time.perf_counter() - t0
    after = _llm_counts(llms)
    llm = {k: after[k] - before[k] for k in after}
    res = MethodResult(name, run, details, seconds, n_queries, llm)
    if out_dir is not None:
        out = Path(out_dir)
        artifacts.write(
            out / f"{name}.trec", lambda tmp: write_run(res.run, tmp, tag=re.sub(r"\s+", "_", name) or "method"), key,
            cost={"seconds": round(res.seconds, 3), "n_queries": res.n_queries, "llm": res.llm},
            companions={out / f"{name}.details.json": lambda tmp: tmp.write_text(
                json.dumps(res.details, ensure_ascii=False, indent=1, default=str) + "\n", encoding="utf-8")})
    return res


def base_stamp(corpus: Mapping[str, str], queries: Mapping[str, str], version: int,
               **params: Any) -> dict[str, Any]:
    """The stamp fields every method shares: corpus and queries sha256, the method's code version
    (bump it when the logic changes) and its parameters/model identities."""
    return {"corpus_sha256": corpus_sha256(corpus), "queries_sha256": queries_sha256(queries),
            "version": int(version), **params}
