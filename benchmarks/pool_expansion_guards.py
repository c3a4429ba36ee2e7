"""Answer-pool expansion with and without the answer guards, on a build's labelled questions.

Paper 000 §3.6 adds every generated answer the LLM judge accepts to the question's answer pool;
our build puts answer guards (:mod:`inferqa_utils.answering.guards`) before the judge. This script
labels the labelled questions of a finished build a second time with the guards switched off
(``guards=()``), with the build's own labelers and judge, and prints side by side:

* the judge-admitted answers (pool expansions, before verification) with the guards — read from
  the build's labeling checkpoint — and without them;
* every expansion that only the unguarded run admits, with the rule that refuses it in the build.

The readers' answers are the build's (same prompts: served by the generation cache when the build
ran on this machine); only the judge calls on answers a guard refused are new. Nothing of the
build is modified: the unguarded labels are kept in memory only.

    .venv/bin/python benchmarks/pool_expansion_guards.py [--dataset embedded]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import pandas as pd

from inferqa_utils.construction.build_config import BuildConfig
from inferqa_utils.construction.labeling import LabelCheckpoint, label_question
from inferqa_utils.construction.store import load_built
from inferqa_utils.llm import load_llm


def admitted_by_judge(results) -> set[tuple[str, str]]:
    return {
        (qid, a) for qid, r in results.items() for a, rec in r.admitted.items() if rec.get("by") == "judge"
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default="embedded")
    ap.add_argument("--max-questions", type=int, default=None)
    args = ap.parse_args()

    ds = load_built(args.dataset)
    meta = ds.meta["built"]
    params = meta["parameters"]
    cfg = BuildConfig.from_manifest(params)
    ckpt = cfg.checkpoint_file(meta.get("source_sha256"))  # the build's source files, as it recorded them
    if not ckpt.is_file():
        raise SystemExit(
            f"{ckpt}: no labeling checkpoint of this build; build {args.dataset!r} first (notebook 01)"
        )
    guarded = LabelCheckpoint(ckpt).load()
    qids = sorted(guarded)[: args.max_questions]
    guarded = {q: guarded[q] for q in qids}
    labelers = [load_llm(m) for m in params["labelers"]]
    judge = load_llm(params["judge_model"]) if params.get("judge_model") else None
    t = time.perf_counter()
    unguarded = {}
    for qid in qids:
        q = ds.questions[qid]
        gold = list(q.meta.get("gold_answers") or q.answers)
        q0 = replace(q, answers=gold)
        unguarded[qid] = label_question(q0, ds.passages_of(qid), labelers, judge, guards=())
    seconds = time.perf_counter() - t

    with_g, without_g = admitted_by_judge(guarded), admitted_by_judge(unguarded)
    refusals = {(qid, a): rec.get("rule") for qid, r in guarded.items() for a, rec in r.refused.items()}
    label2 = {name: sum(v == 2 for r in res.values() for v in r.labels.values())
              for name, res in (("guarded", guarded), ("unguarded", unguarded))}
    print(
        f"{args.dataset}: {len(qids)} labelled questions, labelers {params['labelers']}, judge "
        f"{params.get('judge_model')}, build guards {params.get('guards')}; unguarded relabel {seconds:.1f} s"
    )
    print(
        pd.DataFrame(
            {
                "judge-admitted expansions": [len(with_g), len(without_g)],
                "questions with an expansion": [len({q for q, _ in with_g}), len({q for q, _ in without_g})],
                "label-2 passages": [label2["guarded"], label2["unguarded"]],
            },
            index=["with guards (build)", "guards off"],
        ).to_string()
    )
    extra = sorted(without_g - with_g)
    if extra:
        print("\nadmitted only without the guards (answer → the rule that refuses it in the build):")
        for qid, a in extra:
            q = ds.questions[qid]
            gold = " | ".join(q.meta.get("gold_answers") or q.answers)
            print(f"  {qid}: {a!r} → {refusals.get((qid, a), '?')}   (gold: {gold}; Q: {q.question[:90]})")
    kept = sorted(with_g)
    print(f"\nadmitted with the guards ({len(kept)}):")
    for qid, a in kept:
        print(f"  {qid}: {a!r}")


if __name__ == "__main__":
    main()
