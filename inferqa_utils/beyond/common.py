"""Shared plumbing of the notebook-07 methods: what every method run is given (:class:`MethodSetup`),
sentence splitting, the method's reranker from a short spec (asked of
:mod:`inferqa_utils.rerank.registry`), and method runs cached on disk with their cost.

A *method run* is computed once and stored as an artifact (:func:`inferqa_utils.core.artifacts.cached`):
``<out_dir>/<name>.trec`` plus a stamp ``<name>.trec.stamp.json`` holding its key
(:func:`method_key`: corpus, queries and first-stage sha256, parameters, model identities, a method
version) and what it cost when it was computed (:class:`~inferqa_utils.core.artifacts.Cost`: wall-clock
seconds, LLM counters), plus ``<name>.details.json`` with the method's intermediate outputs
(sub-questions, knowledge elements, candidates…). A re-run with a matching stamp reads the files
back and makes no model call; the cost columns then still report the original computation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import artifacts
from ..core.fingerprint import corpus_sha256, queries_sha256, run_sha256
from ..ir.trec import Run, read_run, write_run
from ..rerank.base import Reranker
from ..rerank.registry import make_reranker, reranker_spec

if TYPE_CHECKING:
    from ..llm.base import LLM

#: schema of a method run's key (:func:`method_key`); a method's own logic changes bump its ``version``
METHOD_SCHEMA = 2


# ----------------------------------------------------------------------------- what a method is given

@dataclass(frozen=True)
class MethodSetup:
    """What every notebook-07 method run is given: the questions it ranks passages for (qid → text;
    their sha256 is part of the run's key, :func:`method_key`), the corpus it ranks (pid → text),
    the folder its run is cached in (``None``: computed, not stored) and whether its LLM batches
    show progress bars. The method's models and parameters are its own arguments."""

    questions: Mapping[str, str]
    corpus: Mapping[str, str]
    out_dir: str | Path | None = None
    progress: bool = True


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


def method_key(name: str, corpus: Mapping[str, str], queries: Mapping[str, str], version: int, *,
               first: Run | None = None, **params: Any) -> dict[str, Any]:
    """The key of method run ``name`` (:func:`inferqa_utils.core.artifacts.key`): kind ``method-run``,
    :data:`METHOD_SCHEMA`, sha256 of the corpus, the questions and (when it starts from one) the
    first-stage run, and the method's name, code ``version`` (bump it when the logic changes) and
    parameters/model identities."""
    inputs = {"corpus": corpus_sha256(corpus), "queries": queries_sha256(queries)}
    if first is not None:
        inputs["first_stage"] = run_sha256(first)
    return artifacts.key(
        "method-run", METHOD_SCHEMA, inputs, {"method": name, "version": int(version), **params}
    )


def cached_method(name: str, out_dir: str | Path | None, key: Mapping[str, Any],
                  compute: Callable[[], tuple[Run, dict[str, Any]]], n_queries: int,
                  llms: Sequence[LLM | None] = ()) -> MethodResult:
    """Run ``compute()`` → ``(run, details)`` unless ``out_dir`` holds a valid artifact of ``name``
    (:func:`inferqa_utils.core.artifacts.cached`: run + details, key :func:`method_key`); store run,
    details and cost. ``llms``: the engines the method uses, whose counters (model calls, cache
    hits, tokens) are recorded as its LLM cost."""
    run_path = None if out_dir is None else Path(out_dir) / f"{name}.trec"
    details_path = None if out_dir is None else Path(out_dir) / f"{name}.details.json"

    def load(path: Path) -> tuple[Run, dict[str, Any]] | None:
        try:
            details = json.loads(path.with_name(f"{name}.details.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return read_run(path), details

    def save_details(value: tuple[Run, dict[str, Any]], tmp: Path) -> None:
        tmp.write_text(
            json.dumps(value[1], ensure_ascii=False, indent=1, default=str) + "\n", encoding="utf-8"
        )

    tag = re.sub(r"\s+", "_", name) or "method"
    done = artifacts.cached(run_path, key, compute, n_queries=n_queries, load=load, llms=llms,
                            save=lambda value, tmp: write_run(value[0], tmp, tag=tag),
                            companions=None if details_path is None else {details_path: save_details})
    run, details = done.value
    return MethodResult(name, run, details, float(done.cost.seconds or 0.0), n_queries, dict(done.cost.llm),
                        cached=done.reused)
