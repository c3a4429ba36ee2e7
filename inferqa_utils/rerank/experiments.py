"""Reranking experiments of notebook 03 (paper 000 §5.3; §5.3).

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

from ..metrics import evaluate
from ..trec import Run, write_run
from . import make_reranker, oracle_run

ORACLE_METRICS = ("nDCG@5", "nDCG@10", "nDCG@50", "nDCG@100")


def _calls(llm: Any) -> int | None:
    stats = getattr(llm, "stats", None)
    return None if stats is None else int(stats.model_calls)


def rerank_all(names: Sequence[str], llm: Any, queries: Mapping[str, str], run: Run, corpus: Mapping[str, str],
               depth: int | None, out_dir: Path | None = None, tag: str = "", **listwise: Any) -> tuple[dict[str, Run], dict]:
    """``({name: reranked run}, {name: seconds per query})``; LLM rerankers get ``llm``, others none.
    With ``out_dir`` each run is written as ``<tag>+<name>.trec`` and its cost as
    ``<tag>+<name>.trec.cost.json``. When a re-run is served entirely from the generation cache (no
    model call), the cost measured when the run was computed is reported instead of the cache's; with
    no such record the cost is ``None`` (unknown), never the cache's near-zero time."""
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
        write_run(out[name], path, tag=f"{tag}+{name}")
        key = {"n_queries": len(queries), "depth": depth, "model": getattr(engine, "name", None)}
        stamp = path.with_name(path.name + ".cost.json")
        made = None if calls0 is None else _calls(engine) - calls0
        old = _read_cost(stamp)
        if made == 0 and old is not None and all(old.get(k) == v for k, v in key.items()):
            cost[name] = old["seconds_per_query"]
        elif made == 0:  # served from a cache filled elsewhere: no cost was measured for this run
            cost[name] = None
        else:
            stamp.write_text(json.dumps({**key, "seconds_per_query": cost[name], "model_calls": made}, indent=1),
                             encoding="utf-8")
    return out, cost


def _read_cost(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        float(data["seconds_per_query"])
        return data
    except (OSError, ValueError, KeyError, TypeError):
        return None


def oracle_table(names: Sequence[str], llm: Any, queries: Mapping[str, str], qrels: Mapping[str, Mapping[str, int]],
                 corpus: Mapping[str, str], out_dir: Path | None = None, **listwise: Any) -> pd.DataFrame:
    """Oracle retriever + reranker (paper 000 §5.3): candidates = the question's own passages (labels 1/2),
    in passage-id order as the no-reranker baseline; graded nDCG (gain 2^label − 1). With
    ``out_dir`` the reranked oracle runs are written as ``oracle+<name>.trec`` (read by notebook 04)."""
    own = {q: dict(qrels[q]) for q in queries}
    first = oracle_run(own)
    runs, _ = rerank_all(names, llm, queries, first, corpus, depth=None, out_dir=out_dir, tag="oracle", **listwise)
    rows = [evaluate(first, own, threshold=1, metrics=ORACLE_METRICS, name="no reranker (id order)")]
    rows += [evaluate(r, own, threshold=1, metrics=ORACLE_METRICS, name=n) for n, r in runs.items()]
    return pd.concat(rows)[[*ORACLE_METRICS, "n_questions_ndcg"]].round(2)


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
