"""Two llama.cpp builds (or thread counts) side by side: the same tokens? how fast?

llama-cpp-python compiles llama.cpp for the CPU it is installed on unless told otherwise
(``scripts/setup_env.sh`` pins a portable x86-64 instruction set: AVX, AVX2, FMA, F16C, BMI2, no
AVX-512). Greedy decoding follows the argmax of the logits, and different kernels round
differently, so two builds can produce different tokens — different labels, different EM. This
script records, for one build, a fixed workload with the generation cache off:

* reader prompts (the few-shot reader of paper 000 A.4) over the subset-permutation passages of the
  first ``--questions`` embedded questions (k = 3: 15 passages each), greedy, in prefix order;
* the SHA-256 of every prompt's last-position logits (bit-for-bit equality of the model output);
* the convergence judge's candidate scores for the first two questions (multi-token continuations);
* prefill and decode rates (``benchmarks/run_cost.measure_rates``).

    .venv/bin/python benchmarks/llama_builds.py record OUT.json [--threads N] [--model qwen2.5-coder-1.5b]
    .venv/bin/python benchmarks/llama_builds.py compare A.json B.json

``compare`` prints the share of identical answers and logits, the largest score difference and
the speed ratio B / A.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def record(out: str, model: str, questions: int, threads: int | None) -> None:
    import llama_cpp
    from run_cost import measure_rates

    from inferqa_utils.answering.prompts import reader_messages
    from inferqa_utils.construction.convergence import NULL_CLUE, names_messages
    from inferqa_utils.construction.passages import build_passages
    from inferqa_utils.llm import load_llm
    from inferqa_utils.sources import load_source

    ds = load_source("embedded")
    qs = list(ds)[:questions]
    kw = {"n_threads": threads} if threads else {}
    llm = load_llm(model, use_cache=False, shared=False, n_ctx=4096, **kw)
    prompts = [
        (q.qid, p.pid, reader_messages(q.question, p.text))
        for q in qs
        for p in build_passages(q.qid, q.hint_texts[:3])
    ]
    order = llm._order([m for _, _, m in prompts])
    answers, digests = {}, {}
    t0 = time.perf_counter()
    for i in order:
        _, pid, msgs = prompts[i]
        toks = llm.tokenize(llm.render(msgs))
        logits = llm._prefill(toks)
        digests[pid] = hashlib.sha256(logits.tobytes()).hexdigest()[:16]
        answers[pid] = llm.generate_tokens(toks, 32)
    read_s = time.perf_counter() - t0
    scores = {}
    for q in qs[:2]:
        clues = [*q.hint_texts, NULL_CLUE]
        lps = llm.score([names_messages(q.candidates, h) for h in clues], [list(q.candidates)] * len(clues),
                        progress=False)
        scores.update((f"{q.qid}|{h[:40]}", lp) for h, lp in zip(clues, lps, strict=True))
    llm.close()
    rates = measure_rates(model)
    rec = {"model": model, "threads": threads, "llama_cpp": llama_cpp.__version__,
           "system_info": llama_cpp.llama_print_system_info().decode().strip(), "prompts": len(prompts),
           "read_seconds": round(read_s, 2), "rates": rates, "answers": answers, "logits_sha256": digests,
           "scores": scores}
    Path(out).write_text(json.dumps(rec, indent=1), encoding="utf-8")
    print(f"{out}: {len(prompts)} reader prompts in {read_s:.1f} s; rates {rates}; {rec['system_info']}")


def compare(a_path: str, b_path: str) -> None:
    a, b = (json.loads(Path(p).read_text(encoding="utf-8")) for p in (a_path, b_path))
    keys = sorted(set(a["answers"]) & set(b["answers"]))
    same_ans = sum(a["answers"][k] == b["answers"][k] for k in keys)
    same_log = sum(a["logits_sha256"][k] == b["logits_sha256"][k] for k in keys)
    sk = sorted(set(a["scores"]) & set(b["scores"]))
    diffs = [abs(x - y) for k in sk for x, y in zip(a["scores"][k], b["scores"][k], strict=True)]
    print(f"A: {a_path} ({a['system_info']}, threads {a['threads']})")
    print(f"B: {b_path} ({b['system_info']}, threads {b['threads']})")
    print(
        f"identical answers: {same_ans}/{len(keys)}; identical last logits (bit for bit): "
        f"{same_log}/{len(keys)}"
    )
    if diffs:
        print(f"candidate scores: {len(diffs)} compared, max |difference| {max(diffs):.3g}, "
              f"identical {sum(d == 0 for d in diffs)}")
    ra, rb = a["rates"], b["rates"]
    print(f"reader workload: A {a['read_seconds']} s, B {b['read_seconds']} s → B/A speed "
          f"{a['read_seconds'] / b['read_seconds']:.3f}x")
    print(
        f"prefill tok/s: A {ra['prefill_tok_s']}, B {rb['prefill_tok_s']} (B/A "
        f"{rb['prefill_tok_s'] / ra['prefill_tok_s']:.3f}x); "
        f"decode tok/s: A {ra['decode_tok_s']}, B {rb['decode_tok_s']} (B/A "
        f"{rb['decode_tok_s'] / ra['decode_tok_s']:.3f}x)"
    )
    for k in keys:
        if a["answers"][k] != b["answers"][k]:
            print(f"  differs: {k}: {a['answers'][k]!r} vs {b['answers'][k]!r}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("out")
    r.add_argument("--model", default="qwen2.5-coder-1.5b")
    r.add_argument("--questions", type=int, default=4)
    r.add_argument("--threads", type=int, default=None)
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    args = ap.parse_args()
    if args.cmd == "record":
        record(args.out, args.model, args.questions, args.threads)
    else:
        compare(args.a, args.b)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
