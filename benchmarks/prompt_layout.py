"""The reader prompt with the question before the context: cheaper — and as accurate?

Paper 000 A.4 puts the context before the question. A decoder reads prompts left to right, and
the engine reuses the KV cache of the longest shared prefix, so with the context first every
prompt re-evaluates the question and the closing lines after its context; with the question first
the prompts of one question share the question too. This script reads the same items under both
layouts (:data:`inferqa_utils.answering.prompts.LAYOUTS`) with fresh engines and no generation
cache, side by side, and compares strict EM against the gold answers and aliases (not the
LLM-expanded pool, which the context-first labelling produced):

* ``--built DIR``: every own passage of the test questions of a built dataset or release (the
  labelling workload; default ``build/datasets/embedded``);
* ``--wikihint FILE``: a WikiHint-shaped file, each question read with its first five hints;
  ``--write-wikihint FILE [--n 100]`` writes one from TriviaHG validation questions
  (``../shared/data``) that have five usable hints and no leaking hint.

Per workload: items, questions, EM of each layout, the paired difference per question (mean over
the question's items) with its 95 % bootstrap interval and randomization p, seconds and prompt
tokens evaluated.

    .venv/bin/python benchmarks/prompt_layout.py [--built DIR] [--wikihint FILE] \
        [--model qwen2.5-coder-1.5b] [--record PATH]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from inferqa_utils.record.benchmark_record import RECORD_HELP, record_measurement


def write_wikihint(out: str, n: int) -> None:
    from inferqa_utils.construction.leakage import LeakageFilter
    from inferqa_utils.sources import load_source

    leak = LeakageFilter()
    recs = []
    for q in load_source("triviahg-validation"):
        hints = [h for h in q.hint_texts if h.strip()][:5]
        if len(hints) < 5 or leak.find(q.answers, hints):
            continue
        recs.append({"id": q.qid, "question": {"question": q.question},
                     "answer": {"answer": q.answers[0], "aliases": q.answers[1:]},
                     "hints": [{"hint": h, "rank": str(i + 1)} for i, h in enumerate(hints)]})
        if len(recs) == n:
            break
    Path(out).write_text(json.dumps(recs, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"wrote {out}: {len(recs)} WikiHint-shaped questions from TriviaHG validation (5 hints each)")


def items_built(folder: str) -> list[tuple[str, str, str, list[str]]]:
    from inferqa_utils.construction.store import load_built

    ds = load_built(Path(folder).name, folder=folder)
    out = []
    for q in ds.split("test"):
        gold = list(q.meta.get("gold_answers") or q.answers[:1])
        out += [(q.qid, q.question, p.text, gold) for p in ds.passages_of(q.qid)]
    return out


def items_wikihint(path: str) -> list[tuple[str, str, str, list[str]]]:
    from inferqa_utils.sources.wikihint import load_wikihint

    ds = load_wikihint(path)
    return [(q.qid, q.question, " ".join(q.hint_texts[:5]), list(q.answers)) for q in ds]


def run(items, model: str, layout: str) -> dict:
    from inferqa_utils.answering.judge import em
    from inferqa_utils.answering.reader import read
    from inferqa_utils.llm import load_llm

    llm = load_llm(model, use_cache=False, shared=False)
    t0 = time.perf_counter()
    outs = read(llm, [i[1] for i in items], [i[2] for i in items], layout=layout, progress=False)
    secs = time.perf_counter() - t0
    ems = [em(o.answer, i[3]) for o, i in zip(outs, items, strict=True)]
    stats = llm.stats.as_dict()
    llm.close()
    return {"layout": layout, "seconds": round(secs, 1), "prompt_tokens": stats["prompt_tokens"],
            "generated": stats["generated_tokens"], "em": ems, "answers": [o.answer for o in outs]}


def compare(name: str, items, model: str) -> dict:
    from inferqa_utils.measure.uncertainty import paired_difference

    a, b = run(items, model, "context-first"), run(items, model, "question-first")
    qids = list(dict.fromkeys(i[0] for i in items))
    per_q = {lay["layout"]: np.array([np.mean([e for e, i in zip(lay["em"], items, strict=True) if i[0] == q])
                                      for q in qids]) for lay in (a, b)}
    d = paired_difference(100 * per_q["question-first"], 100 * per_q["context-first"])
    changed = sum(x != y for x, y in zip(a["answers"], b["answers"], strict=True))
    print(f"\n{name}: {len(items)} items of {len(qids)} questions, {model}")
    for lay in (a, b):
        print(
            f"  {lay['layout']:15} strict EM {100 * np.mean(lay['em']):6.2f} %  "
            f"({sum(lay['em'])}/{len(items)})  "
            f"{lay['seconds']:7.1f} s  {lay['prompt_tokens']:7} prompt tokens evaluated  {lay['generated']} "
            "generated"
        )
    print(
        f"  question-first − context-first, per question: {d.diff.value:+.2f} pp [{d.diff.lo:+.2f}, "
        f"{d.diff.hi:+.2f}], "
        f"randomization p = {d.p_value:.3f}; answers changed on {changed} items; time ratio "
        f"{a['seconds'] / b['seconds']:.2f}x"
    )
    return {
        "name": name,
        "items": len(items),
        "questions": len(qids),
        "context_first": a,
        "question_first": b,
        "diff": [d.diff.value, d.diff.lo, d.diff.hi],
        "p": d.p_value,
        "changed": changed,
    }


def record_row(workload: str, res: dict) -> dict:
    """One row of the record ``--record`` writes (the views of docs/records/benchmarks/prompt_layout.json)."""
    a, b = res["context_first"], res["question_first"]
    ratio = a["prompt_tokens"] / max(1, b["prompt_tokens"])
    return {
        "workload": workload, "items": res["items"], "questions": res["questions"],
        "em_context": round(100 * float(np.mean(a["em"])), 2),
        "em_question": round(100 * float(np.mean(b["em"])), 2),
        "diff": round(res["diff"][0], 2), "lo": round(res["diff"][1], 2), "hi": round(res["diff"][2], 2),
        "p": round(res["p"], 3), "tokens_context": a["prompt_tokens"], "tokens_question": b["prompt_tokens"],
        "tokens_note": f"{ratio:.2f}× fewer" if ratio >= 1.05 else "about as many", "changed": res["changed"],
        "seconds_context": round(a["seconds"]), "seconds_question": round(b["seconds"]),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--built", default=None, help="built dataset or release folder (its test questions' passages)"
    )
    ap.add_argument("--wikihint", default=None, help="WikiHint-shaped file (first five hints per question)")
    ap.add_argument(
        "--write-wikihint", default=None, help="write a WikiHint-shaped file from TriviaHG and stop"
    )
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--out", default=None, help="also write the answers and numbers as JSON")
    ap.add_argument("--record", metavar="PATH", help=RECORD_HELP)
    a = ap.parse_args()
    if a.write_wikihint:
        write_wikihint(a.write_wikihint, a.n)
        return 0
    results, rows = [], []
    if a.built:
        results.append(compare(f"built {a.built}", items_built(a.built), a.model))
        rows.append(record_row(f"{Path(a.built).name} test split, every passage (the labelling workload)",
                               results[-1]))
    if a.wikihint:
        results.append(compare(f"WikiHint-shaped {a.wikihint}", items_wikihint(a.wikihint), a.model))
        rows.append(record_row(f"WikiHint-shaped file {Path(a.wikihint).name}, first five hints",
                               results[-1]))
    if a.out:
        Path(a.out).write_text(json.dumps(results, indent=1), encoding="utf-8")
    if a.record:
        record_measurement(a.record, {"model": a.model, "rows": rows},
                           what="benchmarks/prompt_layout.py: context first vs question first",
                           script="benchmarks/prompt_layout.py", llm_models=[a.model])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
