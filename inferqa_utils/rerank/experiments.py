"""Reranking experiments of notebook 03 (paper 000 §5.3).

Rerankers reorder the top-``depth`` of a first-stage run; every reranked run is written as a TREC
file next to the first-stage runs. The oracle-reranker setting gives each question exactly its own
labelled passages (a perfect retriever) and scores the reranker's order with graded nDCG@5/10/50/100
(:mod:`inferqa_utils.rerank.evaluation`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .. import artifacts
from ..fingerprint import queries_sha256, ranking_sha256
from ..trec import Run, write_run
from .base import oracle_run
from .evaluation import ORACLE_BASELINE, oracle_scores

# re-exported: notebook 03 imports ORACLE_METRICS and rerank_table from here
from .evaluation import ORACLE_METRICS as ORACLE_METRICS
from .evaluation import rerank_table as rerank_table
from .registry import RERANKERS, make_reranker, reranker_spec


def _calls(llm: Any) -> int | None:
    stats = getattr(llm, "stats", None)
    return None if stats is None else int(stats.model_calls)


def rerank_all(names: Sequence[str], llm: Any, queries: Mapping[str, str], run: Run, corpus: Mapping[str, str],
               depth: int | None, out_dir: Path | None = None, tag: str = "", **listwise: Any) -> tuple[dict[str, Run], dict]:
    """``({name: reranked run}, {name: seconds per query})``; the rerankers that need an LLM
    (:func:`inferqa_utils.rerank.registry.reranker_spec`) get ``llm``, others none, and the listwise
    reranker the ``listwise`` keywords.

    With ``out_dir`` each run is written as the artifact ``<tag>+<name>.trec``
    (:mod:`inferqa_utils.artifacts`: key = reranker, model, depth, questions and first-stage order;
    cost = seconds per query and model calls). The reranking itself always runs (an LLM reranker's
    replies come from the generation cache on a re-run). When a re-run makes no model call, the cost
    recorded with the same key is reported instead of the cache's near-zero time; with no such
    record the cost is ``None`` (unknown) and none is invented."""
    out, cost = {}, {}
    for name in names:
        spec = reranker_spec(name)
        kw = dict(listwise) if spec is RERANKERS["listwise"] else {}
        engine = llm if spec is not None and spec.needs_llm else None
        rr = make_reranker(name, llm=engine, **kw)
        calls0 = _calls(engine)
        t0 = time.perf_counter()
        out[name] = rr.rerank(queries, run, corpus, depth=depth)
        cost[name] = round((time.perf_counter() - t0) / max(1, len(queries)), 3)
        if out_dir is None:
            continue
        path = Path(out_dir) / f"{tag}+{name}.trec"
        key = {"reranker": name, "model": getattr(engine, "name", None), "depth": depth, "n_queries": len(queries),
               "queries_sha256": queries_sha256(queries), "first_stage_sha256": ranking_sha256(run)}
        made = None if calls0 is None else _calls(engine) - calls0
        recorded = artifacts.cost(artifacts.valid(path, key)).get("seconds_per_query")
        if recorded is None and made == 0:
            recorded = _legacy_cost(path, key)
        if made == 0:  # served from the cache: the cost recorded when it was computed, or unknown
            cost[name] = recorded
            measured = {} if recorded is None else {"seconds_per_query": recorded}
        else:
            measured = {"seconds_per_query": cost[name], "model_calls": made}
        artifacts.write(path, lambda tmp, r=out[name], t=f"{tag}+{name}": write_run(r, tmp, tag=t), key, cost=measured)
    return out, cost


def _legacy_cost(path: Path, key: Mapping[str, Any]) -> float | None:
    """The cost record written before the artifact store (``<run>.cost.json``), when it describes
    the same workload (questions count, depth, model)."""
    try:
        data = json.loads(path.with_name(path.name + ".cost.json").read_text(encoding="utf-8"))
        if all(data.get(k) == key[k] for k in ("n_queries", "depth", "model")):
            return float(data["seconds_per_query"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def oracle_table(names: Sequence[str], llm: Any, queries: Mapping[str, str], qrels: Mapping[str, Mapping[str, int]],
                 corpus: Mapping[str, str], out_dir: Path | None = None, **listwise: Any) -> pd.DataFrame:
    """Oracle retriever + reranker (paper 000 §5.3): candidates = the question's own passages,
    in passage-id order as the no-reranker baseline; graded nDCG (gain 2^label − 1) with 95 %
    bootstrap intervals over questions (:func:`oracle_scores`). With ``out_dir`` the reranked oracle
    runs are written as ``oracle+<name>.trec`` (read by notebook 04)."""
    own = {q: dict(qrels[q]) for q in queries}
    first = oracle_run(own)
    runs, _ = rerank_all(names, llm, queries, first, corpus, depth=None, out_dir=out_dir, tag="oracle", **listwise)
    return oracle_scores(first, runs, own)


def oracle_finding(table: pd.DataFrame, metric: str = "nDCG@10", baseline: str = ORACLE_BASELINE) -> str:
    """The sentence of an oracle-reranker table (:func:`oracle_scores`, index = run): the baseline
    order and the best reranker on ``metric`` with their 95 % intervals, and the difference."""
    from ..sentences import ci_of

    if metric not in table.columns or baseline not in table.index:
        return f"No oracle-reranker table with {metric} and the row {baseline!r}."
    others = table.drop(index=baseline)
    base = ci_of(table, baseline, metric)
    n = int(table["n_questions_ndcg"].max()) if "n_questions_ndcg" in table else None
    over = f" over {n} questions" if n else ""
    if others.empty or others[metric].isna().all():
        return f"Only the {baseline} was scored: {metric} {base}{over}."
    best = others[metric].astype(float).idxmax()
    diff = float(table.at[best, metric]) - float(table.at[baseline, metric])
    return (f"With the perfect retriever, {metric}{over} is {base} for {baseline} and {ci_of(table, best, metric)} "
            f"for the best reranker, **{best}** ({diff:+.1f} points); {len(others)} reranker"
            f"{'s' if len(others) > 1 else ''} scored.")
