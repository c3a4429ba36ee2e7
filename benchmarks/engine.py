"""The LLM engine against the hardware: llama.cpp settings side by side on a run's real workload.

One run on one host, nothing else running. For the packaged Qwen2.5-Coder 1.5B and 0.5B, each
setting below replays real prompts of a default run (from the embedded release, built with the
package's own prompt and context code) and reports

* **prefill tok/s**: prompt tokens evaluated (after prefix reuse) over the seconds they took;
* **decode tok/s**: tokens generated over the seconds of the one-token steps;
* **% of peak**: the prefill rate × the model's operations per prefill token (2 × the weights'
  multiply-adds for one token, from the GGUF's shapes; the LM head is left out, as a prompt's logits
  are computed for its last token only) over the two cores' int8 peak, measured here by a probe of
  llama.cpp's AVX2 dot-product sequence (``vpmaddubsw`` + ``vpmaddwd`` + ``vpaddd``; 64 int8
  operations per ``vpmaddubsw``) on every core;
* **agreement** with today's settings: the share of prompts whose greedy reply is identical
  (reader, labeler) or whose Yes/No decision is the same, with the largest |Δ log-odds| (pointwise).

Workloads: **reader** (1.5B) — notebook 06's incremental reading, the reader prompt over the top
1 … K BM25 passages (Union_norm) of the first Q test questions; **labeler** (1.5B) — notebook 01's
labeling read, each of the first L test questions with each of its own passages alone; **pointwise**
(0.5B) — notebook 03's pointwise reranker, Yes/No over the BM25 top R of the first Q questions.

Settings: **today** (llama-cpp-python defaults as the compendium runs them: n_batch 512, weights
repacked for the CPU, f16 KV cache, no flash attention); **batched suffixes** — prompts that share a
prefix evaluated as separate sequences of one decode call and generated in parallel (up to 15 per
call); **no repacking** (``use_extra_bufts`` off); **n_batch = n_ubatch = 2048** and **128**;
**flash attention**; **flash attention + q8_0 KV cache**; the weights **requantized** from the shipped
Q4_K_M to **Q4_0** and **IQ4_NL** (``llama_model_quantize`` with ``allow_requantize``; both are
repacked for AVX2 by llama.cpp). Requantizing an already quantized model costs quality: the
agreement column is the first check, a paired non-inferiority test of EM the next.

    .venv/bin/python benchmarks/engine.py [--questions 8] [--depth 5] [--label-questions 4]
        [--rerank-depth 20] [--settings today flash ...] [--out build/engine-bench/engine.json]
        [--record PATH]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from inferqa_utils.core import models
from inferqa_utils.core.config import PATHS
from inferqa_utils.llm.llamacpp import LlamaCppLLM, LlamaCppSettings
from inferqa_utils.record.benchmark_record import RECORD_HELP, record_measurement

READER, SCORER = "qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"
OUT = PATHS.build / "engine-bench"
#: seconds spent requantizing weights in this run (none when the requantized files were cached)
QUANTIZE_SECONDS: list[float] = []

PEAK_C = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static long iters;
/* 12 vpmaddubsw per iteration, each followed by vpmaddwd with ones and vpaddd into one of six
   accumulators (ymm6-ymm11): llama.cpp's AVX2 int8 dot-product sequence, written in assembly so that
   no compiler can hoist or spill it. Temporaries ymm0-ymm5, inputs ymm12/ymm13, ones ymm15. */
#define STEP(t, acc) \
    "vpmaddubsw %%ymm13, %%ymm12, %%ymm" #t "\n" \
    "vpmaddwd %%ymm15, %%ymm" #t ", %%ymm" #t "\n" \
    "vpaddd %%ymm" #t ", %%ymm" #acc ", %%ymm" #acc "\n"
static void *work(void *arg) {
    __asm__ volatile(
        "vpcmpeqw %%ymm15, %%ymm15, %%ymm15\n" "vpsrlw $15, %%ymm15, %%ymm15\n"
        "vpcmpeqb %%ymm12, %%ymm12, %%ymm12\n" "vpabsb %%ymm12, %%ymm13\n"
        "vpxor %%ymm6, %%ymm6, %%ymm6\n" "vpxor %%ymm7, %%ymm7, %%ymm7\n" "vpxor %%ymm8, %%ymm8, %%ymm8\n"
        "vpxor %%ymm9, %%ymm9, %%ymm9\n" "vpxor %%ymm10, %%ymm10, %%ymm10\n"
        "vpxor %%ymm11, %%ymm11, %%ymm11\n"
        ::: "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm15");
    for (long i = 0; i < iters; i++) {
        __asm__ volatile(
            STEP(0, 6) STEP(1, 7) STEP(2, 8) STEP(3, 9) STEP(4, 10) STEP(5, 11)
            STEP(0, 6) STEP(1, 7) STEP(2, 8) STEP(3, 9) STEP(4, 10) STEP(5, 11)
            ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
                "xmm11");
    }
    return arg;
}
int main(int argc, char **argv) {
    int threads = atoi(argv[1]);
    iters = atol(argv[2]);
    pthread_t t[64];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, work, NULL);
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    /* 32 int8 multiply-adds = 64 operations per vpmaddubsw */
    printf("%.6f %.1f\n", s, threads * (double)iters * 12 * 64 / s / 1e9);
    return 0;
}
"""


def int8_peak(threads: int, iters: int = 200_000_000) -> dict[str, float]:
    """GOPS of llama.cpp's AVX2 int8 dot-product sequence on ``threads`` cores (best of 3)."""
    with tempfile.TemporaryDirectory() as d:
        src, exe = Path(d) / "peak.c", Path(d) / "peak"
        src.write_text(PEAK_C)
        subprocess.run(["gcc", "-O2", "-mavx2", "-mfma", "-pthread", str(src), "-o", str(exe)], check=True)
        best = 0.0
        for _ in range(3):
            out = subprocess.run([str(exe), str(threads), str(iters)], capture_output=True, text=True,
                                 check=True)
            best = max(best, float(out.stdout.split()[1]))
    return {"threads": threads, "gops": round(best, 1)}


def ops_per_token(llm: LlamaCppLLM) -> float:
    """2 × the weight multiply-adds of one prefill token (attention projections and the MLP of
    every layer; no LM head), from the GGUF's metadata."""
    md = llm.llm.metadata
    arch = md["general.architecture"]
    n_layer, n_embd = int(md[f"{arch}.block_count"]), int(md[f"{arch}.embedding_length"])
    n_ff, n_head = int(md[f"{arch}.feed_forward_length"]), int(md[f"{arch}.attention.head_count"])
    n_kv = int(md.get(f"{arch}.attention.head_count_kv", n_head))
    kv_dim = n_kv * (n_embd // n_head)
    macs = n_layer * (2 * n_embd * n_embd + 2 * n_embd * kv_dim + 3 * n_embd * n_ff)
    return 2.0 * macs


# ----------------------------------------------------------------------------- workloads

def workloads(n_questions: int, depth: int, n_label: int, rerank_depth: int) -> dict[str, list[Any]]:
    """Real prompts of a default run, from the embedded release (module docstring)."""
    from inferqa_utils.answering.prompts import reader_messages
    from inferqa_utils.construction.release import load_release
    from inferqa_utils.reading.topk import contexts_from_run
    from inferqa_utils.rerank.llm_rerankers import pointwise_messages
    from inferqa_utils.retrieval.registry import retrieve

    ds = load_release("embedded")
    qids = [q.qid for q in ds.split("test")][:n_questions]
    corpus = {pid: p.text for pid, p in ds.passages.items()}
    run = retrieve("bm25s", corpus, {q: ds.questions[q].question for q in qids}, k=max(depth, rerank_depth))
    reader = []
    for k in range(1, depth + 1):
        ctx = contexts_from_run(ds, run, qids, k, "norm")
        reader += [reader_messages(ds.questions[q].question, ctx[q]) for q in qids]
    label_q = [q.qid for q in ds.split("test")][:n_label]
    labeler = [reader_messages(ds.questions[q].question, p.text) for q in label_q for p in ds.passages_of(q)]
    pointwise = []
    for q in qids:
        pointwise += [(q, pointwise_messages(ds.questions[q].question, corpus[pid]))
                      for pid, _ in run[q][:rerank_depth]]
    return {"reader": reader, "labeler": labeler, "pointwise": pointwise}


# ----------------------------------------------------------------------------- settings

SETTINGS: dict[str, dict[str, Any]] = {
    "today": {},
    "batched suffixes": {"batched": True, "n_batch": 4096},
    "no repacking": {"extra_bufts": False},
    "n_batch = n_ubatch = 2048": {"n_batch": 2048, "engine": {"n_ubatch": 2048}},
    "n_batch = n_ubatch = 128": {"n_batch": 128, "engine": {"n_ubatch": 128}},
    "flash attention": {"engine": {"flash_attn": True}},
    "flash attention + q8_0 KV": {"engine": {"flash_attn": True, "type_k": 8, "type_v": 8}},
    "Q4_0 (requantized)": {"quant": "Q4_0"},
    "IQ4_NL (requantized)": {"quant": "IQ4_NL"},
}
FTYPES = {"Q4_0": 2, "IQ4_NL": 25}


def requantized(model: str, quant: str) -> Path:
    """The shipped GGUF requantized to ``quant`` (cached under build/engine-bench/)."""
    import llama_cpp.llama_cpp as lib

    out = OUT / f"{model}-{quant}.gguf"
    if out.exists():
        return out
    OUT.mkdir(parents=True, exist_ok=True)
    p = lib.llama_model_quantize_default_params()
    p.ftype, p.allow_requantize, p.nthread = FTYPES[quant], True, 2
    tmp = out.with_suffix(".tmp")
    t0 = time.perf_counter()
    rc = lib.llama_model_quantize(str(models.fetch(model)).encode(), str(tmp).encode(), ctypes.byref(p))
    if rc != 0:
        raise RuntimeError(f"llama_model_quantize {model} → {quant} failed ({rc})")
    tmp.rename(out)
    QUANTIZE_SECONDS.append(time.perf_counter() - t0)
    print(f"  requantized {model} to {quant} in {QUANTIZE_SECONDS[-1]:.0f} s: {out}")
    return out


def load(model: str, setting: dict[str, Any]) -> LlamaCppLLM:
    path = requantized(model, setting["quant"]) if "quant" in setting else models.fetch(model)
    settings = LlamaCppSettings(n_ctx=4096, n_batch=setting.get("n_batch", 512),
                                extra_bufts=setting.get("extra_bufts", True), engine=setting.get("engine"))
    return LlamaCppLLM(model, path, f"bench-{model}", cache=None, settings=settings)


class Timer:
    """Seconds spent evaluating prompts (``_prefill``) of an engine, the rest being decode steps."""

    def __init__(self, llm: LlamaCppLLM) -> None:
        self.prefill = 0.0
        inner = llm._prefill

        def timed(tokens):
            t0 = time.perf_counter()
            try:
                return inner(tokens)
            finally:
                self.prefill += time.perf_counter() - t0

        llm._prefill = timed  # instrumentation of the production path, not a replacement


def sequential_chat(llm: LlamaCppLLM, batch: list, max_tokens: int) -> tuple[list[str], dict[str, float]]:
    """The production path: prompts in the engine's order, ``generate_tokens`` one at a time."""
    timer = Timer(llm)
    toks = [llm.tokenize(llm.render(m)) for m in batch]
    out: list[str] = [""] * len(batch)
    ev0, gen0, t0 = llm.stats.prompt_tokens, llm.stats.generated_tokens, time.perf_counter()
    for i in llm._order(batch):
        out[i] = llm.generate_tokens(toks[i], max_tokens)
    total = time.perf_counter() - t0
    return out, {"evaluated": llm.stats.prompt_tokens - ev0, "prefill_s": timer.prefill,
                 "generated": llm.stats.generated_tokens - gen0, "decode_s": total - timer.prefill}


def _groups(toks: list[list[int]], order: list[int], size: int, min_shared: int = 32,
            budget: int = 2048) -> list[list[int]]:
    """Consecutive prompts (in the engine's order) sharing at least ``min_shared`` tokens, at most
    ``size`` per group and ``budget`` suffix tokens in all (one KV cache holds the group)."""
    groups: list[list[int]] = []
    for i in order:
        g = groups[-1] if groups else None
        if g and len(g) < size:
            shared = min(LlamaCppLLM._common(np.asarray(toks[g[0]]), toks[j]) for j in [*g, i])
            if shared >= min_shared and sum(len(toks[j]) - shared for j in [*g, i]) <= budget:
                g.append(i)
                continue
        groups.append([i])
    return groups


def _batched_suffixes(llm: LlamaCppLLM, toks: list[list[int]],
                      group: list[int]) -> tuple[int, dict[int, int], int]:
    """Evaluate the group's shared prefix in sequence 0, then every suffix as its own sequence in one
    decode; returns (prefix length, {prompt: batch index of its last token}, tokens evaluated)."""
    lc = llm._lc
    shared = min(LlamaCppLLM._common(np.asarray(toks[group[0]]), toks[i]) for i in group)
    shared = min(shared, min(len(toks[i]) for i in group) - 1)
    before = llm.stats.prompt_tokens
    llm._prefill(toks[group[0]][:shared + 1])  # the engine's own prefix reuse for the shared part
    llm._lc.llama_memory_seq_rm(llm._mem, 0, shared, -1)
    llm.llm.n_tokens = shared
    evaluated = llm.stats.prompt_tokens - before
    n = sum(len(toks[i]) - shared for i in group)
    b = lc.llama_batch_init(n, 0, len(group) + 1)
    last: dict[int, int] = {}
    j = 0
    for s, i in enumerate(group, 1):
        lc.llama_memory_seq_rm(llm._mem, s, -1, -1)
        lc.llama_memory_seq_cp(llm._mem, 0, s, 0, shared)
        suffix = toks[i][shared:]
        for p, t in enumerate(suffix):
            b.token[j], b.pos[j], b.n_seq_id[j], b.logits[j] = t, shared + p, 1, p == len(suffix) - 1
            b.seq_id[j][0] = s
            j += 1
        last[i] = j - 1
    b.n_tokens = j
    if lc.llama_decode(llm._ctx, b) != 0:
        raise RuntimeError("batched decode failed")
    lc.llama_batch_free(b)
    return shared, last, evaluated + n


def batched_chat(llm: LlamaCppLLM, batch: list, max_tokens: int, size: int = 15) -> tuple[list[str], dict]:
    """Prompts sharing a prefix run as separate sequences of one decode call, then generate in
    parallel, one token per live sequence per decode call."""
    lc = llm._lc
    toks = [llm.tokenize(llm.render(m)) for m in batch]
    out: list[str] = [""] * len(batch)
    stats = {"evaluated": 0, "prefill_s": 0.0, "generated": 0, "decode_s": 0.0}
    for group in _groups(toks, llm._order(batch), size):
        t0 = time.perf_counter()
        _shared, last, evaluated = _batched_suffixes(llm, toks, group)
        stats["evaluated"] += evaluated
        stats["prefill_s"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        seq = {i: s for s, i in enumerate(group, 1)}
        pos = {i: len(toks[i]) for i in group}
        logits = {i: llm._logits_ith(last[i]) for i in group}
        gen: dict[int, list[int]] = {i: [] for i in group}
        live = list(group)
        b = lc.llama_batch_init(len(group), 0, len(group) + 1)
        for _ in range(max_tokens):
            nxt = []
            for i in live:
                tok = int(np.argmax(logits[i]))
                if llm._is_eog(tok):
                    continue
                gen[i].append(tok)
                stats["generated"] += 1
                if len(gen[i]) < max_tokens:
                    nxt.append((i, tok))
            if not nxt:
                break
            for j, (i, tok) in enumerate(nxt):
                b.token[j], b.pos[j], b.n_seq_id[j], b.logits[j] = tok, pos[i], 1, True
                b.seq_id[j][0] = seq[i]
                pos[i] += 1
            b.n_tokens = len(nxt)
            if lc.llama_decode(llm._ctx, b) != 0:
                raise RuntimeError("parallel decode failed")
            logits = {i: llm._logits_ith(j) for j, (i, _) in enumerate(nxt)}
            live = [i for i, _ in nxt]
        lc.llama_batch_free(b)
        for s in range(1, len(group) + 1):
            lc.llama_memory_seq_rm(llm._mem, s, -1, -1)
        stats["decode_s"] += time.perf_counter() - t0
        for i in group:
            out[i] = llm.llm.detokenize(gen[i]).decode("utf-8", errors="ignore")
    return out, stats


def sequential_score(llm: LlamaCppLLM, batch: list) -> tuple[list[float], dict]:
    yes, no = (llm.tokenize(w, prompt=False)[0] for w in ("Yes", "No"))
    out = [0.0] * len(batch)
    ev0, t0 = llm.stats.prompt_tokens, time.perf_counter()
    for i in llm._order(batch):
        row = llm._prefill(llm.tokenize(llm.render(batch[i])))
        out[i] = float(row[yes] - row[no])
    return out, {"evaluated": llm.stats.prompt_tokens - ev0, "prefill_s": time.perf_counter() - t0,
                 "generated": 0, "decode_s": 0.0}


def batched_score(llm: LlamaCppLLM, batch: list, size: int = 15) -> tuple[list[float], dict]:
    yes, no = (llm.tokenize(w, prompt=False)[0] for w in ("Yes", "No"))
    toks = [llm.tokenize(llm.render(m)) for m in batch]
    out = [0.0] * len(batch)
    stats = {"evaluated": 0, "prefill_s": 0.0, "generated": 0, "decode_s": 0.0}
    for group in _groups(toks, llm._order(batch), size, min_shared=8):
        t0 = time.perf_counter()
        _shared, last, evaluated = _batched_suffixes(llm, toks, group)
        for i in group:
            row = llm._logits_ith(last[i])
            out[i] = float(row[yes] - row[no])  # log-odds: the log-softmax normaliser cancels
        for s in range(1, len(group) + 1):
            llm._lc.llama_memory_seq_rm(llm._mem, s, -1, -1)
        stats["evaluated"] += evaluated
        stats["prefill_s"] += time.perf_counter() - t0
    return out, stats


# ----------------------------------------------------------------------------- run

def run_setting(name: str, model: str, work: dict[str, list], max_tokens: int) -> dict[str, Any]:
    setting = SETTINGS[name]
    llm = load(model, setting)
    ops = ops_per_token(llm)
    res: dict[str, Any] = {"ops_per_token": ops}
    try:
        if model == READER:
            for wl in ("reader", "labeler"):
                fn = batched_chat if setting.get("batched") else sequential_chat
                llm.llm.n_tokens = 0
                llm._lc.llama_memory_seq_rm(llm._mem, -1, -1, -1)
                outs, st = fn(llm, work[wl], max_tokens)
                res[wl] = {**st, "outputs": outs}
        else:
            prompts = [m for _, m in work["pointwise"]]
            fn = batched_score if setting.get("batched") else sequential_score
            outs, st = fn(llm, prompts)
            res["pointwise"] = {**st, "outputs": outs}
    finally:
        llm.close()
    return res


def agreement(wl: str, outs: list, base: list) -> str:
    if wl == "pointwise":
        a, b = np.asarray(outs), np.asarray(base)
        same = float(np.mean(np.sign(a) == np.sign(b)))
        return f"{same:.1%} same decision, max |Δ| {float(np.max(np.abs(a - b))):.3f}"
    same = sum(x == y for x, y in zip(outs, base, strict=True))
    return f"{same}/{len(base)} identical"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=8,
                    help="test questions of the reader and pointwise workloads")
    ap.add_argument("--depth", type=int, default=5, help="K: the reader reads the top 1 … K passages")
    ap.add_argument("--label-questions", type=int, default=4, help="test questions of the labeler workload")
    ap.add_argument("--rerank-depth", type=int, default=20, help="R: candidates per question, pointwise")
    ap.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS), metavar="NAME")
    ap.add_argument("--out", default=str(OUT / "engine.json"))
    ap.add_argument("--record", metavar="PATH", help=RECORD_HELP)
    a = ap.parse_args()
    started = time.perf_counter()
    from inferqa_utils.answering.reader import MAX_NEW_TOKENS
    from inferqa_utils.record.manifest import git_commit, machine_info

    settings = ["today", *[s for s in a.settings if s != "today"]]
    peak = int8_peak(2)
    one = int8_peak(1)
    print(f"int8 peak (vpmaddubsw + vpmaddwd + vpaddd): {peak['gops']} GOPS on 2 cores, {one['gops']} on 1")
    work = workloads(a.questions, a.depth, a.label_questions, a.rerank_depth)
    print(f"workloads: reader {len(work['reader'])} prompts, labeler {len(work['labeler'])}, "
          f"pointwise {len(work['pointwise'])}")
    results: dict[str, dict[str, Any]] = {}
    for model in (READER, SCORER):
        for name in settings:
            t0 = time.perf_counter()
            results[f"{model}|{name}"] = run_setting(name, model, work, MAX_NEW_TOKENS)
            print(f"  {model} {name}: {time.perf_counter() - t0:.0f} s")
    rows = []
    for key, res in results.items():
        model, name = key.split("|")
        for wl in ("reader", "labeler", "pointwise"):
            if wl not in res:
                continue
            r, base = res[wl], results[f"{model}|today"][wl]
            pre = r["evaluated"] / r["prefill_s"] if r["prefill_s"] else None
            dec = r["generated"] / r["decode_s"] if r["decode_s"] and r["generated"] else None
            base_pre = base["evaluated"] / base["prefill_s"]
            rows.append({
                "model": model, "setting": name, "workload": wl, "evaluated": r["evaluated"],
                "prefill_tok_s": round(pre, 1) if pre else None,
                "prefill_vs_today": round(pre / base_pre, 2) if pre else None,
                "pct_of_peak": (round(100 * pre * res["ops_per_token"] / (peak["gops"] * 1e9), 1)
                                if pre else None),
                "generated": r["generated"], "decode_tok_s": round(dec, 1) if dec else None,
                "agreement": agreement(wl, r["outputs"], base["outputs"]),
            })
    print(f"\n{'model':19} {'setting':27} {'workload':9} {'prefill':>8} {'×today':>6} {'% peak':>6} "
          f"{'decode':>7}  agreement with today")
    for r in rows:
        print(f"{r['model']:19} {r['setting']:27} {r['workload']:9} {r['prefill_tok_s'] or '—':>8} "
              f"{r['prefill_vs_today'] or '—':>6} {r['pct_of_peak'] or '—':>6} "
              f"{r['decode_tok_s'] or '—':>7}  "
              f"{r['agreement']}")
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps({
        "git": git_commit(), "machine": machine_info(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "int8_peak": {"two_cores": peak, "one_core": one}, "rows": rows,
        "args": vars(a)}, indent=1) + "\n", encoding="utf-8")
    print(f"\nwritten to {a.out}")
    if a.record:
        record_measurement(a.record, {
            "peak_gops": peak["gops"], "peak_gops_1": one["gops"], "reader_prompts": len(work["reader"]),
            "labeler_prompts": len(work["labeler"]), "pointwise_prompts": len(work["pointwise"]),
            "minutes": round((time.perf_counter() - started) / 60),
            "requantize_minutes": round(sum(QUANTIZE_SECONDS) / 60, 1), "rows": rows,
        }, what="benchmarks/engine.py: llama.cpp settings on a run's prompts", script="benchmarks/engine.py",
            llm_models=[READER, SCORER])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
