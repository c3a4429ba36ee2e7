"""Compare the convergence rules on the stored judge votes of the embedded dataset (paper 000 §3.1.2).

Usage: python scripts/convergence_rules.py [--file data/embedded/questions.json] [--k 3]

Each embedded hint stores the 1.5B judge's vote per candidate answer (``metrics.scores``, written by
``scripts/score_embedded_convergence.py``). Every embedded hint is true of its answer by
construction, so a gold vote of 0 is a judge false negative. Printed, per hint strength: the gold
false-negative rate, the mean convergence under HICOS (gold 0 → 0) and under ``true-hints`` (gold
vote taken as 1), and what the rule does to the top-``k`` hints a build keeps (the build's own
order: convergence descending, ties in source order): questions whose kept hints change, and the
kept hints by strength under each rule. No LLM call.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def top_k(conv: list[float], k: int) -> set[int]:
    """The build's selection: the first ``k`` hints by convergence, descending, stable."""
    return set(sorted(range(len(conv)), key=lambda i: -conv[i])[:k])


def main() -> int:
    from inferqa_utils.construction.convergence import convergence_from_scores

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", default=str(ROOT / "data" / "embedded" / "questions.json"))
    ap.add_argument("--k", type=int, default=3)
    a = ap.parse_args()
    recs = json.loads(Path(a.file).read_text(encoding="utf-8"))
    n, fn, conv = Counter(), Counter(), {r: Counter() for r in ("hicos", "true-hints")}
    kept = {r: Counter() for r in ("hicos", "true-hints")}
    changed = swapped = 0
    for rec in recs:
        gold = rec["question"]["candidate_answers"][-1]
        hints = rec["hints"]
        if not all(isinstance((h.get("metrics") or {}).get("scores"), dict) for h in hints):
            print(
                f"{rec['question'].get('id', '?')}: hints without stored votes (run "
                "score_embedded_convergence.py)"
            )
            return 1
        per_rule = {}
        for rule in conv:
            values = [convergence_from_scores(h["metrics"]["scores"], gold, rule) for h in hints]
            per_rule[rule] = top_k(values, a.k)
            for h, v in zip(hints, values, strict=True):
                conv[rule][h["strength"]] += v
            for i in per_rule[rule]:
                kept[rule][hints[i]["strength"]] += 1
        for h in hints:
            n[h["strength"]] += 1
            fn[h["strength"]] += int(not h["metrics"]["scores"][gold])
        if per_rule["hicos"] != per_rule["true-hints"]:
            changed += 1
            swapped += len(per_rule["true-hints"] - per_rule["hicos"])
    strengths = [s for s in ("strong", "medium", "weak") if n[s]]
    total = sum(n.values())
    print(f"{len(recs)} questions, {total} hints; gold false negatives {sum(fn.values())}/{total} "
          f"({100 * sum(fn.values()) / total:.1f} %)")
    print(f"{'strength':<8} {'hints':>6} {'gold FN':>12} {'mean HICOS':>11} {'mean true-hints':>16} "
          f"{'kept HICOS':>11} {'kept true-hints':>16}")
    for s in strengths:
        print(f"{s:<8} {n[s]:>6} {fn[s]:>5} ({100 * fn[s] / n[s]:4.1f} %) {conv['hicos'][s] / n[s]:>11.2f} "
              f"{conv['true-hints'][s] / n[s]:>16.2f} {kept['hicos'][s]:>11} {kept['true-hints'][s]:>16}")
    print(f"top-{a.k} hints differ in {changed} of {len(recs)} questions ({swapped} hints swapped in)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
