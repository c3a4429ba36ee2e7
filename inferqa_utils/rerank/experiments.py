"""Reranking experiments of notebook 03 (paper 000 §5.3).

Rerankers reorder the top-``depth`` of a first-stage run; every reranked run is written as a TREC
file next to the first-stage runs. The oracle-reranker setting gives each question exactly its own
labelled passages (a perfect retriever) and scores the reranker's order with graded nDCG@5/10/50/100.
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
from ..metrics import evaluate
from ..trec import Run, write_run
from ..uncertainty import metric_intervals
from . import make_reranker, oracle_run

ORACLE_METRICS = ("nDCG@5", "nDCG@10", "nDCG@50", "nDCG@100")
#: the no-reranker row of an oracle table
ORACLE_BASELINE = "no reranker (id order)"


def _calls(llm: Any) -> int | None:
    stats = getattr(llm, "stats", None)
    return None if stats is None else int(stats.model_calls)


def rerank_all(names: Sequence[str], llm: Any, queries: Mapping[str, str], run: Run, corpus: Mapping[str, str],
               depth: int | None, out_dir: Path | None = None, tag: str = "", **listwise: Any) -> tuple[dict[str, Run], dict]:
    """``({name: reranked run}, {name: seconds per query})``; LLM rerankers get ``llm``, others none.

    With ``out_dir`` each run is written as the artifact ``<tag>+<name>.trec``
    (:mod:`inferqa_utils.artifacts`: key = reranker, model, depth, questions and first-stage order;
    cost = seconds per query and model calls). The reranking itself always runs (an LLM reranker's
    replies come from the generation cache on a re-run). When a re-run makes no model call, the cost
    recorded with the same key is reported instead of the cache's near-zero time; with no such
    record the cost is ``None`` (unknown) and none is invented."""
    out, cost = {}, {}
    for name in names:
        kw = dict(listwise) if name in ("listwise", "rankgpt") else {}
        engine = llm if name in ("pointwise", "upr", "listwise", "rankgpt", "monot5-llm", "query-likelihood") else None
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


def oracle_scores(first: Run, runs: Mapping[str, Run], own: Mapping[str, Mapping[str, int]]) -> pd.DataFrame:
    """The oracle-reranker table (paper 000 §5.3): one row for the id-order baseline ``first`` and one
    per reranked run; for each m in :data:`ORACLE_METRICS` the graded nDCG (gain 2^label − 1) in %,
    ``m = 100 · mean_q nDCG_q@k`` over the questions with a label > 0, with its seeded 95 %
    bootstrap interval over those questions ``m_lo`` / ``m_hi``
    (:func:`inferqa_utils.uncertainty.metric_intervals`), then ``n_questions_ndcg``."""
    table = metric_intervals({ORACLE_BASELINE: first, **runs}, own, threshold=1, metrics=ORACLE_METRICS)
    cols = [c for m in ORACLE_METRICS for c in (m, f"{m}_lo", f"{m}_hi")]
    return table[[*cols, "n_questions_ndcg"]]


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


def rerank_table(first_name: str, first: Run, reranked: Mapping[str, Run], cost: Mapping[str, float],
                 qrels: Mapping[str, Mapping[str, int]], threshold: int,
                 metrics: Sequence[str] = ("Hit@1", "Hit@5", "Hit@10", "Hit@20", "MRR@100", "nDCG@10", "nDCG@100"),
                 ) -> pd.DataFrame:
    """The first-stage run and each reranked run side by side (metrics in %), with seconds per query."""
    rows = [evaluate(first, qrels, threshold, metrics, name=first_name)]
    rows += [evaluate(r, qrels, threshold, metrics, name=f"{first_name} + {n}") for n, r in reranked.items()]
    table = pd.concat(rows).round(2)
    table["seconds/query"] = [None] + [cost[n] for n in reranked]
    return table


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
