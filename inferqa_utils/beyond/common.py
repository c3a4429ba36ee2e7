"""Shared plumbing of the notebook-07 methods: ranking helpers, a dense (bi-encoder) reranker,
reranker specs by name, and method runs cached on disk with their cost.

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
from ..embeddings import load_embedder
from ..fingerprint import corpus_sha256, queries_sha256
from ..rerank import LLM_RERANKERS, make_reranker
from ..rerank.base import PairwiseScoreReranker, Reranker
from ..trec import Run, read_run, write_run

if TYPE_CHECKING:
    from ..embeddings import Embedder
    from ..llm.base import LLM

STAMP_SCHEMA = 1


# ----------------------------------------------------------------------------- text helpers

def split_sentences(text: str) -> list[str]:
    """Sentences of a free text (for corpus entries that are not built passages): split after
    ``.``, ``!`` or ``?`` followed by white space."""
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s.strip()]


# ----------------------------------------------------------------------------- dense reranker

class DenseReranker(PairwiseScoreReranker):
    """Bi-encoder reranking: ``s(q, d) = cos(E(q), E(d))`` with a registry embedder (MiniLM, E5).

    The cheap stand-in for the cross-encoders of papers 001/002 (monoT5, Jina) when no LLM budget
    is left; vectors are cached on disk by the embedder."""

    def __init__(self, model: str = "e5-small", embedder: Embedder | None = None) -> None:
        if embedder is None:

            embedder = load_embedder(model)
        self.embedder = embedder
        self.name = f"dense:{model}"

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        import numpy as np

        if not pairs:
            return []
        qs = self.embedder.encode([q for q, _ in pairs], role="query", progress=False)
        ds = self.embedder.encode([d for _, d in pairs], role="passage", progress=False)
        return [float(x) for x in np.einsum("ij,ij->i", qs, ds)]


def make_method_reranker(spec: str | None, llm: LLM | None = None) -> Reranker | None:
    """A reranker from a short spec: ``None``/``"none"`` → no reranking; ``"pointwise"``,
    ``"upr"``, ``"listwise"`` → the LLM rerankers of notebook 03 (need ``llm``); ``"dense:<model>"``
    or a bare embedder name (``"minilm"``, ``"e5-small"``) → :class:`DenseReranker`."""
    if spec is None or str(spec).lower() in ("", "none"):
        return None
    spec = str(spec)
    if spec.startswith("dense:"):
        return DenseReranker(spec.split(":", 1)[1])
    if spec in ("minilm", "e5-small"):
        return DenseReranker(spec)

    if spec.lower() in LLM_RERANKERS:
        if llm is None:
            raise ValueError(f"reranker {spec!r} needs an LLM")
        kw = {"progress": False} if spec.lower() in ("pointwise", "monot5-llm", "upr", "query-likelihood") else {}
        return make_reranker(spec, llm=llm, **kw)
    raise ValueError(f"unknown reranker spec {spec!r}: use 'none', 'pointwise', 'upr', 'listwise', "
                     "'dense:<embedder>', 'minilm' or 'e5-small'")


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
