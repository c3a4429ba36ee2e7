"""Reranking experiments of notebook 03 (paper 000 §5.3).

Rerankers reorder the top-``depth`` of a first-stage run; every reranked run is written as a TREC
file next to the first-stage runs, as an artifact (:mod:`inferqa_utils.core.artifacts`) with the key
:func:`~inferqa_utils.rerank.stored.rerank_key` (shared with the fine-tuned cross-encoders of
notebook 05). The oracle-reranker
setting gives each question exactly its own labelled passages (a perfect retriever) and scores the
reranker's order with graded nDCG@5/10/50/100 (:mod:`inferqa_utils.rerank.evaluation`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .. import stages
from ..core import artifacts
from ..ir.trec import Run, write_run
from .base import oracle_run
from .evaluation import ORACLE_BASELINE, oracle_scores

# re-exported: notebook 03 imports ORACLE_METRICS and rerank_table from here
from .evaluation import ORACLE_METRICS as ORACLE_METRICS
from .evaluation import rerank_table as rerank_table
from .registry import RERANKERS, make_reranker, reranker_identity, reranker_spec
from .stored import per_query, rerank_key


def rerank_all(
    names: Sequence[str],
    llm: Any,
    queries: Mapping[str, str],
    run: Run,
    corpus: Mapping[str, str],
    depth: int | None,
    out_dir: Path | None = None,
    tag: str = "",
    **listwise: Any,
) -> tuple[dict[str, Run], dict]:
    """``({name: reranked run}, {name: seconds per query})``; the rerankers that need an LLM
    (:func:`inferqa_utils.rerank.registry.reranker_spec`) get ``llm``, others none, and the listwise
    reranker the ``listwise`` keywords.

    With ``out_dir`` each run is written as the artifact ``<tag>+<name>.trec`` (key
    :func:`~inferqa_utils.rerank.stored.rerank_key`; cost :class:`~inferqa_utils.core.artifacts.Cost`). The
    reranking itself always runs (an LLM reranker's replies come from the generation cache on a re-run): when
    it makes no model call, the cost recorded under the same key is reported instead of the cache's near-zero
    time; with no such record the cost is ``None`` (unknown) and none is invented
    (:func:`inferqa_utils.core.artifacts.cached` without ``load``)."""
    out, cost = {}, {}
    for name in names:
        spec = reranker_spec(name)
        kw = dict(listwise) if spec is RERANKERS["listwise"] else {}
        engine = llm if spec is not None and spec.needs_llm else None
        rr = make_reranker(name, llm=engine, **kw)
        run_name = stages.reranked_name(tag, name)
        path = None if out_dir is None else stages.run_dir_file(out_dir, run_name)
        key = rerank_key(name, reranker_identity(spec, engine), queries, run, corpus, depth, **kw)
        done = artifacts.cached(path, key, lambda rr=rr: rr.rerank(queries, run, corpus, depth=depth),
                                n_queries=len(queries), llms=[engine],
                                save=lambda r, tmp, t=run_name: write_run(r, tmp, tag=t))
        out[name], cost[name] = done.value, per_query(done.cost)
    return out, cost


def oracle_table(
    names: Sequence[str],
    llm: Any,
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    corpus: Mapping[str, str],
    out_dir: Path | None = None,
    **listwise: Any,
) -> pd.DataFrame:
    """Oracle retriever + reranker (paper 000 §5.3): candidates = the question's own passages,
    in passage-id order as the no-reranker baseline; graded nDCG (gain 2^label − 1) with 95 %
    bootstrap intervals over questions (:func:`oracle_scores`). With ``out_dir`` the reranked oracle
    runs are written as ``oracle+<name>.trec`` (read by notebook 04)."""
    own = {q: dict(qrels[q]) for q in queries}
    first = oracle_run(own)
    runs, _ = rerank_all(
        names, llm, queries, first, corpus, depth=None, out_dir=out_dir, tag="oracle", **listwise
    )
    return oracle_scores(first, runs, own)


def oracle_sentence(table: pd.DataFrame, metric: str = "nDCG@10", baseline: str = ORACLE_BASELINE) -> str:
    """The sentence of an oracle-reranker table (:func:`oracle_scores`, index = run): the baseline
    order and the best reranker on ``metric`` with their 95 % intervals, and the difference."""
    from ..present.sentences import ci_of

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
    return (
        f"With the perfect retriever, {metric}{over} is {base} for {baseline} and "
        f"{ci_of(table, best, metric)} "
        f"for the best reranker, **{best}** ({diff:+.1f} points); {len(others)} reranker"
        f"{'s' if len(others) > 1 else ''} scored."
    )
