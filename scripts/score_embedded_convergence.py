"""Compute and store hint convergence for the embedded dataset (paper 000 §3.1.2, TriviaHG HICOS).

Usage: python scripts/score_embedded_convergence.py [--model qwen2.5-coder-1.5b] [--check]

Like WikiHint and TriviaHG's model-hint files, our embedded set ships each hint's convergence,
so the default build spends no LLM time on it. The values are *measured*, with the build's own
judge (:func:`inferqa_utils.construction.convergence.name_hint_scores`: calibrated likelihood of
each of the question's 11 candidate names as the reply, cached): each hint gets
``"metrics": {"convergence": c, "scores": {candidate: 0/1}, "convergence_judge": "<model> names",
"convergence_of": <key>}`` — ``c`` by the paper's HICOS rule from the judge's votes ``scores``
(kept so that a build can apply another rule, ``convergence_rule``, without an LLM call) — where
``<key>`` hashes the question, the hint and the candidates: a hint whose text or whose question's
candidates change, or that has no votes, is scored again; the others are kept. ``--check`` changes nothing
and exits 1 if a hint lacks an up-to-date value (tests/test_embedded_dataset.py checks the same).
A build recomputes convergence instead with ``-p convergence_stored=false``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FILE = ROOT / "data" / "embedded" / "questions.json"


METHOD = "names"


def key_of(question: str, hint: str, candidates: list[str]) -> str:
    return hashlib.sha256(json.dumps([question, hint, candidates, METHOD]).encode()).hexdigest()[:12]


def stale(rec: dict) -> list[int]:
    """Indices of the record's hints whose stored convergence is missing or out of date."""
    q, cands = rec["question"]["question"], rec["question"]["candidate_answers"]
    return [i for i, h in enumerate(rec["hints"])
            if (h.get("metrics") or {}).get("convergence_of") != key_of(q, h["hint"], cands)
            or not isinstance((h.get("metrics") or {}).get("scores"), dict)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--file", default=str(FILE))
    a = ap.parse_args()
    path = Path(a.file)
    recs = json.loads(path.read_text(encoding="utf-8"))
    todo = [(r, stale(r)) for r in recs]
    todo = [(r, s) for r, s in todo if s]
    print(
        f"{path}: {len(recs)} questions, {sum(len(s) for _, s in todo)} hints to score in {len(todo)} "
        "questions"
    )
    if a.check:
        return 1 if todo else 0
    if not todo:
        return 0
    from tqdm.auto import tqdm

    from inferqa_utils.construction.convergence import convergence_from_scores, hint_scores
    from inferqa_utils.core.atomic import write_text_atomic
    from inferqa_utils.llm import load_llm

    llm = load_llm(a.model)
    for n, (rec, _) in enumerate(tqdm(todo, desc="convergence", unit="question"), 1):
        q, cands = rec["question"]["question"], rec["question"]["candidate_answers"]
        hints = [h["hint"] for h in rec["hints"]]
        # every hint of the question in one call: the calibration clue and the prefix are shared
        scores = hint_scores(METHOD, llm, q, hints, cands, progress=False)
        for h, sc in zip(rec["hints"], scores, strict=True):
            h["metrics"] = {
                **(h.get("metrics") or {}),
                "convergence": convergence_from_scores(sc, cands[-1]),
                "scores": {c: int(sc[c]) for c in cands},
                "convergence_judge": f"{a.model} {METHOD}",
                "convergence_of": key_of(q, h["hint"], cands),
            }
        if n % 20 == 0 or n == len(todo):  # checkpoint: an interrupted run keeps what it scored
            write_text_atomic(path, json.dumps(recs, ensure_ascii=False, indent=1) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
