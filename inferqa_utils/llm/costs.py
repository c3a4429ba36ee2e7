"""What a run spends on LLMs, per notebook and analysis: a JSONL log with one line per batch of prompts.

The runner points ``$INFERQA_COST_LOG`` at ``build/executions/<run>/llm_costs.jsonl`` and
``$INFERQA_STAGE`` at the notebook it executes; every :class:`~inferqa_utils.llm.base.LLM` batch
then appends its counters (:func:`log_batch`): the analysis running (:func:`set_analysis`, which
:func:`inferqa_utils.record.ledger.begin` calls), prompts asked, model calls (cache misses), cache hits,
prompt tokens evaluated and before prefix reuse, tokens generated, seconds in the model and wall
seconds. :func:`per_stage` sums them per notebook and model; :mod:`inferqa_utils.record.ledger` per
analysis; ``benchmarks/run_cost.py`` prints both.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: environment variable naming the JSONL file that receives one line per batch (the runner sets it)
COST_LOG_ENV = "INFERQA_COST_LOG"
#: environment variable naming the stage that runs (the runner sets it to the notebook's stem)
COST_STAGE_ENV = "INFERQA_STAGE"
#: the run folder's JSONL of LLM batch counters (one line per batch)
COST_LOG_NAME = "llm_costs.jsonl"
#: counters summed per stage and model
COUNTERS = (
    "prompts", "model_calls", "cache_hits", "prompt_tokens", "prompt_tokens_total", "generated_tokens",
    "seconds", "kv_snapshots", "kv_restores", "wall",
)


_analysis = ""


def set_analysis(key: str) -> None:
    """Log the following batches of this process under analysis ``key`` (``""``: none)."""
    global _analysis
    _analysis = key


def log_batch(model: str, backend: str, op: str, desc: str | None, before: Mapping[str, Any],
              after: Mapping[str, Any], prompts: int, wall: float) -> None:
    """Append one batch's counters (``after − before`` of the engine's
    :class:`~inferqa_utils.llm.base.LLMStats`) to ``$INFERQA_COST_LOG``; a no-op when unset."""
    path = os.environ.get(COST_LOG_ENV)
    if not path:
        return
    rec: dict[str, Any] = {"stage": os.environ.get(COST_STAGE_ENV, ""), "model": model, "backend": backend,
                           "op": op, "desc": desc or "", "analysis": _analysis, "prompts": prompts}
    for k in COUNTERS[1:-1]:
        d = after.get(k, 0) - before.get(k, 0)
        rec[k] = round(d, 3) if isinstance(d, float) else d
    rec["wall"] = round(wall, 3)
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec) + "\n")
    except OSError:
        pass


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """The batch records of a cost log (a line cut short by an interruption is skipped)."""
    out = []
    p = Path(path)
    if not p.is_file():
        return out
    for line in p.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


def per_stage(records: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """``{stage: {model: {counter: sum}}}`` over the batch records."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for r in records:
        m = out.setdefault(str(r.get("stage", "")), {}).setdefault(
            str(r.get("model", "")), dict.fromkeys(COUNTERS, 0)
        )
        for k in COUNTERS:
            m[k] = round(m[k] + (r.get(k) or 0), 3)
    return out
