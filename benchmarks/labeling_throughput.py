"""Labeling throughput (paper 000 §3.2.2) per labeler: without vs with KV-prefix reuse, side by side.

Workload: the first ``--questions`` questions of a source, their ``--hints`` first hints as
subset-permutation passages (3 hints → 15 passages per question), labeled with the real
:func:`~inferqa_utils.construction.labeling.label_question` (reader prompt, greedy, post-processing,
strict EM; ``--judge`` adds the LLM judge). The generation cache is off in both modes.

(i)  naive — every prompt evaluated from an empty context, passages in source order;
(ii) reuse — KV cache kept and each question's batch run in token order (shared prefixes).

Prints passages/s, prompt tokens evaluated per passage and the speed-up, per labeler.

    .venv/bin/python benchmarks/labeling_throughput.py [--labelers qwen2.5-coder-0.5b smollm2-135m] \
        [--record PATH]
"""

from __future__ import annotations

import argparse
import time

from inferqa_utils.construction.labeling import label_question
from inferqa_utils.construction.passages import build_passages
from inferqa_utils.llm import load_llm
from inferqa_utils.record.benchmark_record import RECORD_HELP, record_measurement
from inferqa_utils.sources import load_source


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--labelers", nargs="+", default=["qwen2.5-coder-0.5b", "smollm2-135m"])
    ap.add_argument("--source", default="embedded")
    ap.add_argument("--questions", type=int, default=3)
    ap.add_argument("--hints", type=int, default=3)
    ap.add_argument("--judge", default=None, help="LLM judge model (default: strict EM only)")
    ap.add_argument("--record", metavar="PATH", help=RECORD_HELP)
    args = ap.parse_args()

    ds = load_source(args.source)
    qs = [q for q in ds if len(q.hints) >= args.hints][: args.questions]
    work = [(q, build_passages(q.qid, q.hint_texts[: args.hints])) for q in qs]
    n = sum(len(ps) for _, ps in work)
    print(f"workload: {args.source}, {len(qs)} questions × {len(work[0][1])} passages = {n} passages; "
          f"judge {args.judge or 'strict EM only'}")
    print(f"{'labeler':<22}{'mode':<7}{'passages/s':>11}{'prompt tok/passage':>20}{'seconds':>9}")
    rows = []
    for name in args.labelers:
        res = {}
        for mode, reuse in (("naive", False), ("reuse", True)):
            llm = load_llm(name, use_cache=False, shared=False, prefix_reuse=reuse, order_prompts=reuse)
            judge = load_llm(args.judge, use_cache=False, shared=False) if args.judge else None
            llm.chat([[{"role": "user", "content": "Hi"}]], max_tokens=1, progress=False)  # warm-up
            llm.reset_stats()
            t0 = time.perf_counter()
            answers = [label_question(q, ps, [llm], judge).generations for q, ps in work]
            dt = time.perf_counter() - t0
            res[mode] = (n / dt, llm.stats.prompt_tokens / n, dt, answers)
            print(f"{name:<22}{mode:<7}{res[mode][0]:>11.2f}{res[mode][1]:>20.1f}{dt:>9.1f}")
            llm.close()
        same = sum(a == b for qa, qb in zip(res["naive"][3], res["reuse"][3], strict=True)
                   for a, b in zip(qa.values(), qb.values(), strict=True))
        print(f"{name:<22}speed-up ×{res['reuse'][0] / res['naive'][0]:.2f}; prompt tokens "
              f"÷{res['naive'][1] / res['reuse'][1]:.2f}; identical answers {same}/{n}")
        rows.append({"labeler": name, "naive_ps": round(res["naive"][0], 2),
                     "naive_ptok": round(res["naive"][1], 1), "reuse_ps": round(res["reuse"][0], 2),
                     "reuse_ptok": round(res["reuse"][1], 1),
                     "speedup": round(res["reuse"][0] / res["naive"][0], 2), "identical": same})
    if args.record:
        record_measurement(args.record, {"questions": len(qs), "passages": n, "rows": rows},
                           what="benchmarks/labeling_throughput.py: naive vs KV-prefix reuse per labeler",
                           script="benchmarks/labeling_throughput.py", llm_models=args.labelers)


if __name__ == "__main__":
    main()
