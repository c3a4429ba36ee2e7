"""Incremental inference (paper 004, notebook 06): naive vs KV-prefix reuse, side by side in one run.

Workload: the EM-pattern pass of notebook 06 — the first ``--questions`` questions of a split of a
built dataset, each read with its top-1 … top-N passages of a notebook-02 run (``--run``, default
``e5-small``: dense runs always have N passages) through
:func:`inferqa_utils.damaging.incremental.incremental_inference` (union_norm contexts at hint level, the
few-shot reader prompt, greedy decoding, strict EM; identical contexts read once in both modes).
The generation cache is off in both modes.

(i)  naive — every prefix evaluated from an empty context, prompts in question/k order
     (``prefix_reuse=False, order_prompts=False``);
(ii) reuse — the KV cache is kept and the batch runs in token order, so prompt k only evaluates
     what follows context k − 1 (its new sentences and the question).

Prints prompt tokens evaluated, wall time, the ratios and whether answers/patterns agree.

    .venv/bin/python benchmarks/incremental_inference.py [--model qwen2.5-coder-0.5b] [--n 20] [--questions 4]
"""

from __future__ import annotations

import argparse
import time

from inferqa_utils import stages
from inferqa_utils.construction.store import load_built
from inferqa_utils.damaging.incremental import incremental_inference, patterns_of
from inferqa_utils.llm import load_llm
from inferqa_utils.reading.setup import ReadingSetup
from inferqa_utils.record.benchmark_record import RECORD_HELP, record_measurement
from inferqa_utils.retrieval.control import control_corpus


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="qwen2.5-coder-0.5b")
    ap.add_argument("--dataset", default="embedded", help="built dataset (notebook 01)")
    ap.add_argument("--split", default="test")
    ap.add_argument("--run", default="e5-small", help="notebook-02 run on the answer-supporting corpus")
    ap.add_argument(
        "--corpus", default=stages.Corpus.SUPPORTING, choices=list(stages.Corpus), type=stages.Corpus
    )
    ap.add_argument("--n", type=int, default=20, help="N: passages read incrementally")
    ap.add_argument("--questions", type=int, default=4)
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--record", metavar="PATH", help=RECORD_HELP)
    args = ap.parse_args()

    ds = load_built(args.dataset)
    qids = [q.qid for q in ds.split(args.split)][: args.questions]
    corpus = control_corpus(ds, args.split)[0] if args.corpus == stages.Corpus.CONTAINING else None
    run = stages.load_run(args.dataset, args.run, args.corpus)
    print(f"workload: {args.dataset}/{args.split}, {len(qids)} questions × N = {args.n} prefixes of "
          f"{args.run} ({args.corpus} corpus); reader {args.model}; strict EM; generation cache off")
    res = {}
    print(f"{'mode':<7}{'prompts':>8}{'prompt tok evaluated':>22}{'prompt tok total':>18}{'seconds':>9}")
    for mode, reuse in (("naive", False), ("reuse", True)):
        llm = load_llm(args.model, use_cache=False, shared=False, n_ctx=args.n_ctx, prefix_reuse=reuse,
                       order_prompts=reuse)
        llm.chat([[{"role": "user", "content": "Hi"}]], max_tokens=1, progress=False)  # warm-up
        llm.reset_stats()
        t0 = time.perf_counter()
        df = incremental_inference(ReadingSetup(llm, None, ds, corpus, progress=False), run, qids, args.n,
                                   system=args.run)
        dt = time.perf_counter() - t0
        s = llm.stats
        res[mode] = (s.prompt_tokens, dt, df)
        print(f"{mode:<7}{s.model_calls:>8}{s.prompt_tokens:>22}{s.prompt_tokens_total:>18}{dt:>9.1f}")
        llm.close()
    (tn, dn, a), (tr, dr, b) = res["naive"], res["reuse"]
    same = int((a["answer"] == b["answer"]).sum())
    pats_same = sum(patterns_of(a)[q] == patterns_of(b)[q] for q in qids)
    print(
        f"prompt tokens evaluated ÷{tn / max(1, tr):.2f}; wall time ×{dn / dr:.2f} faster; identical answers "
        f"{same}/{len(a)} (question, k); identical EM patterns {pats_same}/{len(qids)}"
    )
    if args.record:
        contexts = int(a["adds"].sum())  # distinct contexts: the prefixes whose passage added a sentence
        record_measurement(args.record, {
            "model": args.model, "n": args.n, "questions": len(qids), "contexts": contexts,
            "tokens_naive": tn, "tokens_reuse": tr, "token_ratio": round(tn / max(1, tr), 2),
            "seconds_naive": round(dn, 1), "seconds_reuse": round(dr, 1), "speedup": round(dn / dr, 2),
            "identical": same, "answers": len(a), "patterns_identical": pats_same,
        }, what=f"benchmarks/incremental_inference.py, {args.corpus} corpus",
            script="benchmarks/incremental_inference.py", llm_models=[args.model])


if __name__ == "__main__":
    main()
