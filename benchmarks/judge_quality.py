"""Precision and recall of the answer judge, guarded vs unguarded, per packaged chat model.

Candidate sets with known truth (:mod:`inferqa_utils.answering.judge_quality`) from every source that
carries candidates: the embedded set, TriviaHG ``model_hints/Copilot.json`` (``../shared/data``;
skipped when absent) and the WikiHint-shaped test file ``tests/data/wikihint_sample.json``. Per
question the judge sees the canonical gold answer and must accept the aliases and reject the
distractor candidates, the entities named in the question or hints, and generic phrases.
Both variants run over the same candidates in one process: the judge alone (``guards=()``) and
the judge behind the answer guards (:mod:`inferqa_utils.answering.guards`).

    .venv/bin/python benchmarks/judge_quality.py [--models ...] [--max-questions 40] [--record]

``--record`` writes the measurement to ``inferqa_utils/judge_quality.json``, which the notebooks
print beside every judged-accuracy number.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
from pathlib import Path

import pandas as pd

from inferqa_utils.answering.guards import DEFAULT_GUARDS
from inferqa_utils.answering.judge_quality import RECORD, candidate_set, judge_candidates, precision_recall
from inferqa_utils.core.errors import InferQAError
from inferqa_utils.llm import load_llm
from inferqa_utils.sources import load_source

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ["embedded", "triviahg-copilot", f"wikihint:{ROOT / 'tests' / 'data' / 'wikihint_sample.json'}"]
MODELS = ["qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "smollm2-135m"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=MODELS)
    ap.add_argument("--sources", nargs="+", default=SOURCES)
    ap.add_argument(
        "--max-questions", type=int, default=40, help="first N questions with candidates per source"
    )
    ap.add_argument("--record", action="store_true", help=f"write the measurement to {RECORD.name}")
    ap.add_argument("--csv", help="per-candidate verdicts to this CSV")
    a = ap.parse_args()

    cands, used = [], {}
    for spec in a.sources:
        try:
            qs = [q for q in load_source(spec) if q.candidates][: a.max_questions]
        except InferQAError as e:
            print(f"[skip] {spec}: {e}")
            continue
        cs = candidate_set(qs)
        cands += cs
        name = spec.split(":", 1)[0] if ":" in spec else spec
        used[name] = {"questions": len(qs), "candidates": len(cs)}
        print(f"{name}: {len(qs)} questions, {len(cs)} candidates "
              f"({pd.Series([c.kind for c in cs]).value_counts().to_dict()})")
    rows, frames = [], []
    for m in a.models:
        judge = load_llm(m)
        for guarded in (False, True):
            t0 = time.perf_counter()
            df = judge_candidates(judge, cands, DEFAULT_GUARDS if guarded else ())
            secs = time.perf_counter() - t0
            frames.append(df.assign(model=m, guarded=guarded))
            rows.append({"model": m, "judge": "guarded" if guarded else "unguarded", **precision_recall(df),
                         "guard refusals": int(df["guard"].notna().sum()), "seconds": round(secs, 1)})
            print(f"[{m}] {'guarded' if guarded else 'unguarded'} done in {secs:.1f} s", flush=True)
    table = pd.DataFrame(rows).set_index(["model", "judge"])
    pd.set_option("display.width", 200)
    print(
        "\nprecision = correct among accepted; recall = aliases accepted; false accepts = wrong candidates "
        "accepted"
    )
    print(table.to_string())
    if a.csv:
        pd.concat(frames).to_csv(a.csv, index=False)
    if a.record:
        rec = {
            "measured": dt.date.today().isoformat(),
            "command": f"benchmarks/judge_quality.py --max-questions {a.max_questions}",
            "sources": used,
            "guards": list(DEFAULT_GUARDS),
            "models": {
                m: {
                    ("guarded" if r["judge"] == "guarded" else "unguarded"): {
                        k: (None if isinstance(v, float) and v != v else v)  # NaN (nothing accepted) → null
                        for k, v in r.items()
                        if k not in ("model", "judge")
                    }
                    for r in rows
                    if r["model"] == m
                }
                for m in a.models
            },
        }
        RECORD.write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
        print(f"recorded → {RECORD}")


if __name__ == "__main__":
    main()
