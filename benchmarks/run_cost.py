"""What a notebook run spent, per notebook, beside the machine's floor.

Reads a run folder (``build/executions/<stamp>-<profile>``, default: the newest run of
``--profile``): its manifest's notebook seconds and its LLM cost log ``llm_costs.jsonl`` (one line
per batch of prompts, :mod:`inferqa_utils.costs`). Per notebook it prints the LLM calls (cache
misses), the prompt tokens evaluated and reused (prefix reuse, KV snapshots), the tokens
generated, the seconds inside the models, the notebook's seconds, and the **floor**: the evaluated
and generated tokens divided by the prefill and generation rates this machine reaches with each
model (measured here first, nothing else running: a 128-token chunk after a 768-token cached
prefix, and one-token decode steps after it). ``seconds / floor`` shows what is left: time outside
the models (retrieval, embedding, training, Python) and engine overhead; the tokens themselves
fall only with fewer or shorter prompts.

    .venv/bin/python benchmarks/run_cost.py [RUN_DIR] [--profile default] [--rates FILE] [--save-rates FILE]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from inferqa_utils.config import PATHS
from inferqa_utils.costs import per_stage, read_log
from inferqa_utils.runner import COST_LOG_NAME, latest_run_manifest


def measure_rates(model: str, prefix: int = 768, chunk: int = 128, steps: int = 32, repeats: int = 3) -> dict:
    """Prefill tokens/s of a ``chunk``-token chunk after a cached ``prefix``, and decode tokens/s of
    one-token steps after it, on this machine (best of ``repeats``)."""
    from inferqa_utils.llm import load_llm

    llm = load_llm(model, use_cache=False, shared=False, n_ctx=2048)
    rng = np.random.default_rng(13)
    vocab = min(llm.n_vocab, 30000)
    base = [int(t) for t in rng.integers(1000, vocab, prefix)]
    best_pre, best_gen = 0.0, 0.0
    for _ in range(repeats):
        llm.llm.n_tokens = 0
        llm._decode(base)
        extra = [int(t) for t in rng.integers(1000, vocab, chunk)]
        t0 = time.perf_counter()
        llm._decode(extra)
        best_pre = max(best_pre, chunk / (time.perf_counter() - t0))
        t0 = time.perf_counter()
        for t in rng.integers(1000, vocab, steps):
            llm._decode([int(t)])
        best_gen = max(best_gen, steps / (time.perf_counter() - t0))
    llm.close()
    return {
        "prefill_tok_s": round(best_pre, 1),
        "decode_tok_s": round(best_gen, 1),
        "prefix": prefix,
        "chunk": chunk,
    }


def table(run_dir: Path, rates: dict[str, dict]) -> list[dict]:
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    costs = per_stage(read_log(run_dir / COST_LOG_NAME))
    rows = []
    for stage, seconds in (manifest.get("timings_s") or {}).items():
        if stage == "total":
            continue
        per_model = costs.get(stage, {})
        row = {
            "notebook": stage[:2],
            "seconds": seconds,
            "llm_s": 0.0,
            "calls": 0,
            "cache_hits": 0,
            "evaluated": 0,
            "reused": 0,
            "generated": 0,
            "floor_s": 0.0,
        }
        for model, c in per_model.items():
            row["llm_s"] += c["seconds"]
            row["calls"] += int(c["model_calls"])
            row["cache_hits"] += int(c["cache_hits"])
            row["evaluated"] += int(c["prompt_tokens"])
            row["reused"] += int(c["prompt_tokens_total"] - c["prompt_tokens"])
            row["generated"] += int(c["generated_tokens"])
            r = rates.get(model)
            if r:
                row["floor_s"] += (
                    c["prompt_tokens"] / r["prefill_tok_s"] + c["generated_tokens"] / r["decode_tok_s"]
                )
        rows.append(row)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", nargs="?", default=None)
    ap.add_argument("--profile", default="default")
    ap.add_argument(
        "--rates", default=None, help="JSON of measured rates {model: {prefill_tok_s, decode_tok_s}}"
    )
    ap.add_argument("--save-rates", default=None, help="write the rates measured here to this JSON")
    a = ap.parse_args()
    if a.run_dir:
        run_dir = Path(a.run_dir)
    else:
        found = latest_run_manifest(a.profile, PATHS.executions)
        if found is None:
            print(f"no run of profile {a.profile!r} under {PATHS.executions}")
            return 1
        run_dir = found[0].parent
    models = sorted({m for per in per_stage(read_log(run_dir / COST_LOG_NAME)).values() for m in per})
    if not models:
        print(
            f"{run_dir}: no LLM cost log ({COST_LOG_NAME}); runs made by this version of the runner have one"
        )
        return 1
    if a.rates:
        rates = json.loads(Path(a.rates).read_text(encoding="utf-8"))
    else:
        rates = {}
        for m in models:
            rates[m] = measure_rates(m)
            print(f"rates {m}: prefill {rates[m]['prefill_tok_s']} tok/s ({rates[m]['chunk']} tokens after "
                  f"{rates[m]['prefix']}), decode {rates[m]['decode_tok_s']} tok/s")
        if a.save_rates:
            Path(a.save_rates).write_text(json.dumps(rates, indent=1), encoding="utf-8")
    rows = table(run_dir, rates)
    print(f"\nrun {run_dir}")
    head = (
        f"{'nb':>3} {'seconds':>8} {'LLM s':>8} {'calls':>7} {'cached':>7} {'evaluated':>10} {'reused':>10} "
        f"{'generated':>9} {'floor s':>8} {'s/floor':>8}"
    )
    print(head)
    tot = {
        k: 0.0
        for k in ("seconds", "llm_s", "calls", "cache_hits", "evaluated", "reused", "generated", "floor_s")
    }
    for r in rows:
        for k in tot:
            tot[k] += r[k]
        ratio = f"{r['seconds'] / r['floor_s']:.2f}" if r["floor_s"] else "—"
        print(
            f"{r['notebook']:>3} {r['seconds']:>8.1f} {r['llm_s']:>8.1f} {r['calls']:>7} "
            f"{r['cache_hits']:>7} "
            f"{r['evaluated']:>10} {r['reused']:>10} {r['generated']:>9} {r['floor_s']:>8.1f} {ratio:>8}"
        )
    ratio = f"{tot['seconds'] / tot['floor_s']:.2f}" if tot["floor_s"] else "—"
    print(
        f"{'all':>3} {tot['seconds']:>8.1f} {tot['llm_s']:>8.1f} {int(tot['calls']):>7} "
        f"{int(tot['cache_hits']):>7} "
        f"{int(tot['evaluated']):>10} {int(tot['reused']):>10} {int(tot['generated']):>9} "
        f"{tot['floor_s']:>8.1f} "
        f"{ratio:>8}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
