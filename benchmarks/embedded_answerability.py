"""Can each packaged LLM answer a hint source closed-book, and from its hints? (strict EM)

The measurement behind the model roles of the default profile: a model that answers *worse*
with hints than without cannot do inferential reading (paper 000 §5.4), and a question a model
answers closed-book is parametric (paper 000 §3.4). For every question of a source and every
model, the few-shot reader (paper 000 A.4, greedy, strict SQuAD-normalised EM against gold + aliases)
answers

* closed-book (the parametric-filter prompt, repeat 0),
* from the top-``k`` hints (by stored convergence when every hint has one, else the first ``k``),
  joined in their source order — the passage with every kept hint that the build labels,
* from all hints.

Prints counts and shares per model and setting, and for each model how many of the questions
it cannot answer closed-book it answers from the hints. ``--csv`` writes one row per
(question, model, setting). Every call goes through the generation cache, so a later build
reuses these answers (same prompts).

    .venv/bin/python benchmarks/embedded_answerability.py [--source embedded] [--k 3]
        [--models smollm2-135m qwen2.5-coder-0.5b qwen2.5-coder-1.5b] [--settings closed top all]
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from inferqa_utils.answering.judge import em
from inferqa_utils.answering.reader import read, read_closed_book
from inferqa_utils.llm import load_llm
from inferqa_utils.sources import load_source

MODELS = ["smollm2-135m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"]


def top_hints(q, k: int) -> list[str]:
    """The top-``k`` hints by stored convergence (source order kept), else the first ``k``."""
    if all(h.convergence is not None for h in q.hints):
        keep = sorted(sorted(range(len(q.hints)), key=lambda i: -q.hints[i].convergence)[:k])
        return [q.hints[i].text for i in keep]
    return [h.text for h in q.hints[:k]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", default="embedded")
    ap.add_argument("--models", nargs="+", default=MODELS)
    ap.add_argument(
        "--settings", nargs="+", default=["closed", "top", "all"], choices=["closed", "top", "all"]
    )
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--ids", nargs="*", help="only these question ids")
    ap.add_argument("--csv", help="per-question answers to this CSV")
    a = ap.parse_args()

    qs = list(load_source(a.source))
    if a.ids:
        qs = [q for q in qs if q.qid in set(a.ids)]
    texts = [q.question for q in qs]
    rows = []
    for name in a.models:
        llm = load_llm(name)
        for setting in a.settings:
            t0 = time.perf_counter()
            if setting == "closed":
                outs = read_closed_book(llm, texts, progress=False)
            else:
                ctx = [" ".join(top_hints(q, a.k) if setting == "top" else q.hint_texts) for q in qs]
                outs = read(llm, texts, ctx, progress=False)
            dt = time.perf_counter() - t0
            rows += [
                {
                    "qid": q.qid,
                    "model": name,
                    "setting": setting,
                    "answer": o.answer,
                    "em": em(o.answer, q.answers),
                }
                for q, o in zip(qs, outs, strict=True)
            ]
            print(
                f"[{name}] {setting}: {sum(r['em'] for r in rows[-len(qs) :])}/{len(qs)} in {dt:.1f} s",
                flush=True,
            )
    df = pd.DataFrame(rows)
    if a.csv:
        df.to_csv(a.csv, index=False)
    label = {"closed": "closed-book", "top": f"top {a.k} hints", "all": "all hints"}
    wide = df.pivot_table(index="model", columns="setting", values="em", aggfunc="sum").reindex(a.models)
    table = pd.DataFrame(
        {
            label[s]: [
                f"{int(wide.loc[m, s])}/{len(qs)} ({100 * wide.loc[m, s] / len(qs):.1f} %)" for m in a.models
            ]
            for s in a.settings
        },
        index=a.models,
    )
    print(f"\n{a.source}: {len(qs)} questions, strict EM")
    print(table.to_string())
    if "closed" in a.settings:
        closed = df[df.setting == "closed"].set_index(["model", "qid"])["em"]
        print("\namong the questions a model cannot answer closed-book, answered from the hints:")
        for m in a.models:
            miss = closed.loc[m][~closed.loc[m]].index
            for s in a.settings:
                if s != "closed":
                    got = df[(df.model == m) & (df.setting == s) & df.qid.isin(miss)]["em"].sum()
                    print(f"  {m}: {int(got)}/{len(miss)} from {label[s]}")
        union = closed.groupby(level="qid").any()
        print(f"questions no model answers closed-book (strict EM): {int((~union).sum())}/{len(union)}")


if __name__ == "__main__":
    main()
