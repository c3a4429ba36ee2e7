"""Does a second CPU core speed up LLM inference here? Threads and processes, side by side.

The default profile's time is dominated by Qwen2.5-Coder 1.5B prompt evaluation (labeling,
reading, judging: tens of thousands of prompt tokens). This script measures, in one run and on
one model (greedy, no generation cache, llama-cpp-python):

(i)   prefill tokens/s of one prompt of ``--tokens`` tokens with ``n_threads`` = 1 and 2;
(ii)  generation tokens/s (one token at a time after that prompt) with 1 and 2 threads;
(iii) the summed prefill tokens/s of two processes with 1 thread each, started together;
(iv)  a control without vector code: a pure-Python loop, one process vs two at once.

and prints each ratio to the 1-thread figure. If (i)-(iii) stay near 1.0 while (iv) is near 2.0,
the two vCPUs share the vector units (SMT siblings): llama.cpp cannot use the second core, and
neither threads nor parallel workers shorten the notebooks — only fewer prompt tokens do.

    .venv/bin/python benchmarks/cpu_scaling.py [--model qwen2.5-coder-1.5b] [--tokens 400] [--record PATH]

Run it on a quiet machine: any other job on the two cores invalidates every number.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from inferqa_utils.core import models
from inferqa_utils.record.benchmark_record import RECORD_HELP, record_measurement

TEXT = "The sea and the mountains meet where the old road ends, and the river runs to the harbour. "


def _engine(path: str, threads: int):
    import llama_cpp

    return llama_cpp.Llama(model_path=path, n_ctx=2048, n_threads=threads, n_threads_batch=threads,
                           n_batch=512, verbose=False, seed=13)


def measure(path: str, threads: int, n_tokens: int, n_gen: int) -> dict[str, float]:
    """Prefill and generation tokens/s of one engine with ``threads`` threads."""
    llm = _engine(path, threads)
    toks = llm.tokenize((TEXT * (n_tokens // 10 + 5)).encode())[:n_tokens]
    llm.eval(toks[:16])  # warm-up (weights paged in)
    llm.reset()
    t = time.perf_counter()
    llm.eval(toks)
    prefill = n_tokens / (time.perf_counter() - t)
    t = time.perf_counter()
    for _ in range(n_gen):
        llm.eval([int(llm.scores[llm.n_tokens - 1].argmax())])
    gen = n_gen / (time.perf_counter() - t)
    llm.close()
    return {"prefill": prefill, "generation": gen}


def _child(path: str, n_tokens: int, start_at: float) -> None:
    llm = _engine(path, 1)
    toks = llm.tokenize((TEXT * (n_tokens // 10 + 5)).encode())[:n_tokens]
    llm.eval(toks[:16])
    llm.reset()
    time.sleep(max(0.0, start_at - time.time()))
    t = time.perf_counter()
    llm.eval(toks)
    print(json.dumps({"prefill": n_tokens / (time.perf_counter() - t)}), flush=True)


def python_loop(n: int = 15_000_000) -> float:
    t = time.perf_counter()
    s = 0
    for i in range(n):
        s += i
    return time.perf_counter() - t


def _spawn(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, __file__, *args], stdout=subprocess.PIPE, text=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--tokens", type=int, default=400)
    ap.add_argument("--gen", type=int, default=32)
    ap.add_argument("--record", metavar="PATH", help=RECORD_HELP)
    ap.add_argument("--_child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--_loop", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._loop:
        print(json.dumps({"seconds": python_loop()}), flush=True)
        return
    path = str(models.fetch(args.model, log=lambda s: None))
    if args._child:
        _child(path, args.tokens, float(args._child[1]))
        return
    one = measure(path, 1, args.tokens, args.gen)
    two = measure(path, 2, args.tokens, args.gen)
    start = time.time() + 20.0  # both children load the model first, then start together
    procs = [_spawn(["--model", args.model, "--tokens", str(args.tokens), "--_child", "x", str(start)])
             for _ in range(2)]
    pair = sum(json.loads(p.communicate()[0].strip().splitlines()[-1])["prefill"] for p in procs)
    solo = json.loads(_spawn(["--_loop"]).communicate()[0])["seconds"]
    procs = [_spawn(["--_loop"]) for _ in range(2)]
    both = max(json.loads(p.communicate()[0])["seconds"] for p in procs)

    print(f"{args.model}, prompt of {args.tokens} tokens, {args.gen} generated tokens")
    print(f"{'measure':44s} {'1 thread':>10s} {'compared':>10s} {'ratio':>7s}")
    rows = [("prefill tok/s, 2 threads vs 1", one["prefill"], two["prefill"]),
            ("generation tok/s, 2 threads vs 1", one["generation"], two["generation"]),
            ("prefill tok/s, two 1-thread processes (sum)", one["prefill"], pair),
            ("python loop throughput, 2 processes vs 1", 1.0, 2 * solo / both)]
    for name, a, b in rows:
        print(f"{name:44s} {a:10.1f} {b:10.1f} {b / a:7.2f}")
    if args.record:
        record_measurement(args.record, {
            "model": args.model, "tokens": args.tokens,
            "prefill_1": round(one["prefill"], 1), "prefill_2": round(two["prefill"], 1),
            "prefill_ratio": round(two["prefill"] / one["prefill"], 2),
            "gen_1": round(one["generation"], 1), "gen_2": round(two["generation"], 1),
            "gen_ratio": round(two["generation"] / one["generation"], 2),
            "pair": round(pair, 1), "pair_ratio": round(pair / one["prefill"], 2),
            "loop_ratio": round(2 * solo / both, 2),
        }, what="benchmarks/cpu_scaling.py: 1 vs 2 threads and processes", script="benchmarks/cpu_scaling.py")


if __name__ == "__main__":
    main()
