"""Cost of the LLM rerankers (paper 000 §5.3): seconds and prompt tokens per query, per model and reranker.

Workload: the embedded dataset; a corpus of subset-permutation passages built from the first 3
hints of every question (15 passages per question); BM25 (bm25s) top-``depth`` candidates for
the first ``--queries`` questions; each reranker (pointwise yes/no, UPR query likelihood,
listwise RankGPT windows 20/10) reorders them. LLMs are loaded with the generation cache off
(``use_cache=False``) and unshared, so every prompt is really run. Model loading is not timed.

Columns: seconds/query (wall clock of ``rerank``), prompt tokens/query actually evaluated (after
KV prefix reuse) and before reuse, generated tokens/query (listwise only) and model calls/query.
For listwise, the first window's raw reply is printed so the output format can be checked.

    .venv/bin/python benchmarks/rerank_cost.py                       # depth 100, 2 queries, 0.5B + 1.5B
    (slow) .venv/bin/python benchmarks/rerank_cost.py --depth 10 --queries 1 --models qwen2.5-coder-0.5b   #
    smoke run
"""

from __future__ import annotations

import argparse
import time

from inferqa_utils.construction.passages import build_passages
from inferqa_utils.llm import load_llm
from inferqa_utils.record.benchmark_record import RECORD_HELP, record_measurement
from inferqa_utils.rerank import RERANKERS as REGISTRY
from inferqa_utils.rerank import make_reranker
from inferqa_utils.retrieval import BM25sRetriever
from inferqa_utils.sources import load_source

#: the LLM rerankers of the registry (pointwise, upr, listwise)
RERANKERS = tuple(name for name, spec in REGISTRY.items() if spec.needs_llm)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"])
    ap.add_argument("--rerankers", nargs="+", default=list(RERANKERS), choices=RERANKERS)
    ap.add_argument("--depth", type=int, default=100, help="candidates reranked per query")
    ap.add_argument("--queries", type=int, default=2, help="questions of the embedded dataset")
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--record", metavar="PATH", help=RECORD_HELP)
    args = ap.parse_args()

    ds = load_source("embedded")
    corpus = {p.pid: p.text for q in ds for p in build_passages(q.qid, q.hint_texts[:3])}
    questions = list(ds)[: args.queries]
    queries = {q.qid: q.question for q in questions}
    run = BM25sRetriever(corpus).search(queries, k=args.depth)
    n_cand = sum(len(v) for v in run.values()) / max(1, len(run))
    print(f"workload: embedded, {len(corpus)} passages, {len(queries)} queries, "
          f"BM25 top-{args.depth} ({n_cand:.0f} candidates/query)")

    rows = []
    for model in args.models:
        t0 = time.perf_counter()
        llm = load_llm(model, use_cache=False, shared=False, n_ctx=args.n_ctx)
        print(f"loaded {model} in {time.perf_counter() - t0:.1f} s")
        for name in args.rerankers:
            rr = make_reranker(name, llm=llm, **REGISTRY[name].quiet)
            llm.reset_stats()
            t0 = time.perf_counter()
            rr.rerank(queries, run, corpus, depth=args.depth)
            secs = time.perf_counter() - t0
            st, nq = llm.stats, len(queries)
            rows.append(
                (
                    model, name, args.depth,
                    secs / nq,
                    st.prompt_tokens / nq,
                    st.prompt_tokens_total / nq,
                    st.generated_tokens / nq,
                    st.model_calls / nq,
                )
            )
            print(f"  {name}: {secs / nq:.1f} s/query", flush=True)
            if name == "listwise" and rr.replies:
                print(f"  listwise reply (first window): {rr.replies[0][3][:200]!r}")
        llm.close()

    head = ("model", "reranker", "depth", "s/query", "prompt tok/query", "before reuse", "gen tok/query",
            "calls/query")
    fmt = "{:<20} {:<10} {:>5} {:>8} {:>16} {:>12} {:>13} {:>11}"
    print()
    print(fmt.format(*head))
    for m, r, d, s, pt, ptt, g, c in rows:
        print(fmt.format(m, r, d, f"{s:.1f}", f"{pt:.0f}", f"{ptt:.0f}", f"{g:.0f}", f"{c:.1f}"))
    if args.record:  # seconds per query, one row per model, one column per reranker
        per_model = {m: {"model": m} for m in args.models}
        for m, r, _d, s, *_rest in rows:
            per_model[m][r] = round(s, 1)
        record_measurement(args.record, {"depth": args.depth, "questions": len(queries),
                                         "candidates": round(n_cand), "rows": list(per_model.values())},
                           what="benchmarks/rerank_cost.py: seconds per query per reranker",
                           script="benchmarks/rerank_cost.py", llm_models=args.models)


if __name__ == "__main__":
    main()
