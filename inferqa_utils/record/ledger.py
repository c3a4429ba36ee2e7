"""The run's ledger: what each analysis of a notebook spent, and the findings it decides.

A notebook marks where each of its analyses begins (:func:`begin`; a no-op outside a run of
``python -m inferqa_utils run``), the runner marks where each notebook begins and ends
(:func:`notebook_event`), and every LLM batch carries the analysis that was running
(:mod:`inferqa_utils.llm.costs`). :func:`ledger_rows` joins the two logs of a run folder with the
verdicts of the findings: per analysis its wall seconds (from its mark to the next mark or the end
of the notebook; the time before a notebook's first mark is its ``NN.setup``), the seconds inside
the models, the prompt tokens evaluated and reused (prefix reuse, KV snapshots), the tokens
generated, the findings it feeds (:data:`ANALYSES`) with the units each verdict rests on
(``informative``, :func:`inferqa_utils.measure.verdict.rests_on`), and

    seconds per unit = seconds / the most units any finding it feeds rests on

(``None`` when it feeds no finding or its findings rest on no unit: the analysis decides nothing).
The findings one analysis feeds read the same questions, so their units are not added up (a
question would count once per finding); a finding by construction rests on no unit.
An analysis *feeds* a finding when the finding's measure reads what it wrote, directly or through a
later notebook (notebook 03's pointwise reranking feeds notebook 04's reading of
``bm25+pointwise``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import UnknownNameError
from ..llm import costs

#: environment variable naming the run's JSONL of analysis and notebook marks (the runner sets it)
LEDGER_ENV = "INFERQA_LEDGER"
#: the file name of that log in a run folder
LEDGER_NAME = "analyses.jsonl"


@dataclass(frozen=True)
class Analysis:
    """One analysis of a notebook: its stage (notebook number), what it does, and the ids of the
    findings (``inferqa_utils/measure/paper_numbers.yaml``) whose measures read what it writes."""

    stage: str
    title: str
    feeds: tuple[str, ...] = ()


_SUP_06 = ("damaging_passages", "damage_remains_under_seem", "probe3_recovers", "probe3_at_5",
           "damaging_larger_when_supporting")
_CON_06 = ("damaging_passages_containing", "probe3_recovers_containing", "damaging_larger_when_supporting")

#: every analysis a notebook marks, by key ``<notebook>.<name>[.<corpus>]``
ANALYSES: dict[str, Analysis] = {
    "00.quickstart": Analysis("00", "one question: its hints, passages, BM25 and the reader"),
    "00.class": Analysis("00", "class in a box: hint subsets, orders and a distractor read"),
    "01.release": Analysis("01", "the release installed and a sample of its test questions rebuilt"),
    "01.report": Analysis("01", "construction tables, figures and the release's agreement with its sample"),
    "02.retrieval": Analysis("02", "six retrievers on the answer-supporting corpus", ("dense_beats_bm25",)),
    "02.cross_corpus": Analysis(
        "02", "retrieval from the answer-containing control corpus, passage lengths",
        ("containing_beats_supporting", "similar_passage_length"),
    ),
    "02.fair_control": Analysis(
        "02", "the fair control: pooled LLM judgments in both corpora, size-matched",
        ("containing_beats_supporting", "containing_beats_supporting_size_matched", "best_retriever_differs"),
    ),
    "03.rerank": Analysis(
        "03", "LLM rerankers over the first stage's top candidates",
        ("rerankers_marginal_ranking", "pointwise_best_reranker", "rerankers_marginal",
         "ft_reranker_oracle_only"),
    ),
    "03.oracle": Analysis(
        "03", "the oracle reranker over each question's own passages",
        ("oracle_half_of_optimal", "pipeline_below_oracle", "union_freq_beats_norm"),
    ),
    "04.reading": Analysis(
        "04", "every run, the oracle setting and Optimal read at every k and union",
        ("rerankers_marginal", "optimal_far_above_pipeline", "oracle_half_of_optimal",
         "pipeline_below_oracle", "ft_reranker_oracle_only", "union_freq_beats_norm",
         "full_passages_under_optimal"),
    ),
    "04.report": Analysis("04", "Table 8, EM across settings, hints of useful passages, paper numbers"),
    "05.training": Analysis(
        "05", "training data sampled, bi-encoders and cross-encoders trained, N chosen on dev",
        ("finetuning_small_gains", "more_positives_help", "ft_reranker_oracle_only", "ft_pipeline_best"),
    ),
    "05.retrieval": Analysis("05", "fine-tuned retrievers against MiniLM",
                             ("finetuning_small_gains", "more_positives_help")),
    "05.oracle": Analysis("05", "the cross-encoders as oracle rerankers"),
    "05.rerank": Analysis("05", "the cross-encoder reranking two first stages",
                          ("ft_reranker_oracle_only", "ft_pipeline_best")),
    "05.reading": Analysis(
        "05", "the fine-tuned systems read, figure and summary",
        ("ft_reranker_oracle_only", "ft_pipeline_best"),
    ),
    "06.incremental.supporting": Analysis(
        "06", "EM pattern and probes, answer-supporting corpus", _SUP_06
    ),
    "06.incremental.containing": Analysis(
        "06", "EM pattern and probes, answer-containing corpus", _CON_06
    ),
    "06.report": Analysis("06", "EM and AcEM curves, passage types, probe tables"),
    "06.ser.supporting": Analysis(
        "06", "Stability Error Ratio, answer-supporting corpus",
        ("ser_bm25_above_random", "ser_rises_with_negatives"),
    ),
    "06.ser.containing": Analysis(
        "06", "Stability Error Ratio, answer-containing corpus", ("ser_bm25_above_random_containing",)
    ),
    "06.comparison": Analysis("06", "the damaging effect on both corpora compared"),
    "07.decomposition": Analysis(
        "07", "Visconde decomposition: sub-questions, retrieval, reranking",
        ("general_reader_beats_reasoning",),
    ),
    "07.knowledge": Analysis("07", "knowledge-aware diverse reranking"),
    "07.disentangled": Analysis("07", "disentangled retrieval, with and without the topic stage"),
    "07.csr": Analysis("07", "candidate-support retrieval (ours)"),
    "07.report": Analysis(
        "07", "every system read, and the decomposition run read by the CoT reader",
        ("general_reader_beats_reasoning",),
    ),
    "07.findings": Analysis("07", "the papers' findings scored"),
    "08.yours": Analysis("08", "your component's run, its reading and the table against every baseline"),
    "09.paper_runs": Analysis("09", "the paper authors' released runs, re-scored"),
}


def analysis(key: str) -> Analysis:
    """The registered analysis ``key`` (:class:`~inferqa_utils.core.errors.UnknownNameError` naming the
    known keys of its notebook otherwise)."""
    try:
        return ANALYSES[key]
    except KeyError:
        stage = key.split(".", 1)[0]
        known = ", ".join(k for k in ANALYSES if k.startswith(f"{stage}.")) or ", ".join(ANALYSES)
        raise UnknownNameError(f"unknown analysis {key!r}; known: {known}") from None


def _append(record: dict[str, Any]) -> None:
    path = os.environ.get(LEDGER_ENV)
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
    except OSError:
        pass


def begin(key: str) -> None:
    """Mark that analysis ``key`` (:data:`ANALYSES`) begins now; the analysis running before it in
    this notebook ends. LLM batches from now on are logged under ``key``. Outside a run (no
    ``$INFERQA_LEDGER``) only the LLM batch attribution changes."""
    analysis(key)
    costs.set_analysis(key)
    _append({"event": "begin", "stage": os.environ.get(costs.COST_STAGE_ENV, ""), "analysis": key,
             "at": round(time.time(), 3)})


def notebook_event(path: str | Path, stage: str, event: str, at: float | None = None) -> None:
    """Append a notebook's ``start`` or ``end`` mark to the ledger log ``path`` (the runner)."""
    if event not in ("start", "end"):
        raise ValueError(f"event must be 'start' or 'end', not {event!r}")
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"event": event, "stage": stage,
                                 "at": round(time.time() if at is None else at, 3)}) + "\n")
    except OSError:
        pass


def read_events(path: str | Path) -> list[dict[str, Any]]:
    """The marks of a ledger log (a line cut short by an interruption is skipped)."""
    return [r for r in costs.read_log(path)
            if isinstance(r.get("event"), str) and isinstance(r.get("at"), int | float)]


def segments(events: list[dict[str, Any]]) -> list[tuple[str, str, float]]:
    """``[(stage, analysis key, seconds)]``: each notebook split at its analysis marks. The span from
    a notebook's start to its first mark is ``<NN>.setup``; the last analysis runs to the
    notebook's end (a notebook without an end mark, e.g. interrupted, ends at its last mark)."""
    out: list[tuple[str, str, float]] = []
    by_stage: dict[str, list[dict[str, Any]]] = {}
    for e in events:
        by_stage.setdefault(str(e.get("stage", "")), []).append(e)
    for stage, evs in by_stage.items():
        evs = sorted(evs, key=lambda e: e["at"])
        starts = [e for e in evs if e["event"] == "start"]
        if not starts:
            continue
        start = starts[-1]["at"]  # a re-run of the notebook in the same folder: the last one counts
        evs = [e for e in evs if e["at"] >= start]
        current, since = f"{stage[:2]}.setup", start
        for e in evs:
            if e["event"] == "begin":
                out.append((stage, current, e["at"] - since))
                current, since = str(e["analysis"]), e["at"]
            elif e["event"] == "end":
                out.append((stage, current, e["at"] - since))
                current = None
                break
        if current is not None:
            out.append((stage, current, 0.0))
    return out


def ledger_rows(run_dir: str | Path, informative: Mapping[str, int | None],
                verdicts: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The ledger of a run folder (``build/executions/<run>``): one row per analysis (module
    docstring), in notebook order. ``informative`` maps finding ids to the units
    their verdicts on this run rest on (``None``/absent: the finding was not measured), ``verdicts`` to
    the verdicts."""
    run_dir = Path(run_dir)
    llm: dict[tuple[str, str], dict[str, float]] = {}
    for r in costs.read_log(run_dir / costs.COST_LOG_NAME):
        if "event" in r:
            continue
        stage = str(r.get("stage", ""))
        key = str(r.get("analysis") or f"{stage[:2]}.setup")
        acc = llm.setdefault((stage, key),
                             dict.fromkeys(("seconds", "evaluated", "total", "generated", "calls"), 0.0))
        acc["seconds"] += float(r.get("seconds") or 0)
        acc["evaluated"] += float(r.get("prompt_tokens") or 0)
        acc["total"] += float(r.get("prompt_tokens_total") or 0)
        acc["generated"] += float(r.get("generated_tokens") or 0)
        acc["calls"] += float(r.get("model_calls") or 0)
    wall: dict[tuple[str, str], float] = {}
    for stage, key, secs in segments(read_events(run_dir / LEDGER_NAME)):
        wall[(stage, key)] = wall.get((stage, key), 0.0) + secs
    rows = []
    for stage, key in sorted(set(wall) | set(llm), key=lambda sk: (sk[0], _order(sk[1]))):
        spent = llm.get((stage, key), {})
        feeds = ANALYSES[key].feeds if key in ANALYSES else ()
        built = {f for f in feeds if (verdicts or {}).get(f) == "by construction"}
        units = {f: (0 if f in built else informative.get(f)) for f in feeds}
        decided = max((int(u) for u in units.values() if u), default=0)
        secs = round(max(wall.get((stage, key), 0.0), spent.get("seconds", 0.0)), 1)
        rows.append({
            "notebook": stage[:2], "analysis": key,
            "title": ANALYSES[key].title if key in ANALYSES else "set-up: imports, data and models loaded",
            "seconds": secs, "llm_s": round(spent.get("seconds", 0.0), 1),
            "model_calls": int(spent.get("calls", 0)),
            "evaluated": int(spent.get("evaluated", 0)),
            "reused": int(spent.get("total", 0) - spent.get("evaluated", 0)),
            "generated": int(spent.get("generated", 0)),
            "feeds": [{"finding": f, "informative": units[f],
                       **({"verdict": verdicts.get(f)} if verdicts is not None else {})} for f in feeds],
            "informative": decided,
            "s_per_unit": round(secs / decided, 1) if decided else None,
        })
    return rows


def _order(key: str) -> int:
    """Registry order (set-up first, unknown keys last)."""
    if key.endswith(".setup"):
        return -1
    keys = list(ANALYSES)
    return keys.index(key) if key in keys else len(keys)


def ledger_text(rows: list[dict[str, Any]]) -> list[str]:
    """The ledger as fixed-width text lines (``check``, ``benchmarks/run_cost.py``)."""
    head = (f"{'analysis':34} {'seconds':>8} {'LLM s':>7} {'evaluated':>9} {'reused':>9} {'generated':>9} "
            f"{'units':>5} {'s/unit':>7}  findings fed (units each rests on)")
    lines = [head]
    for r in rows:
        spu = f"{r['s_per_unit']:.1f}" if r["s_per_unit"] is not None else "—"
        fed = ", ".join(f"{f['finding']} {f['informative'] if f['informative'] is not None else '–'}"
                        for f in r["feeds"]) or "none"
        lines.append(f"{r['analysis']:34} {r['seconds']:>8.1f} {r['llm_s']:>7.1f} {r['evaluated']:>9} "
                     f"{r['reused']:>9} {r['generated']:>9} {r['informative']:>5} {spu:>7}  {fed}")
    tot = sum(r["seconds"] for r in rows)
    lines.append(f"{'all':34} {tot:>8.1f} {sum(r['llm_s'] for r in rows):>7.1f} "
                 f"{sum(r['evaluated'] for r in rows):>9} {sum(r['reused'] for r in rows):>9} "
                 f"{sum(r['generated'] for r in rows):>9}")
    return lines


def ledger_markdown(rows: list[dict[str, Any]]) -> list[str]:
    """The ledger as a Markdown table (the check report)."""
    lines = ["| analysis | what | seconds | LLM s | prompt tokens evaluated | reused | generated | "
             "findings fed (units each rests on) | s per unit |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        fed = ", ".join(f"`{f['finding']}` {f['informative'] if f['informative'] is not None else '–'}"
                        for f in r["feeds"]) or "—"
        spu = f"{r['s_per_unit']:,.1f}" if r["s_per_unit"] is not None else "— (decides nothing)"
        lines.append(f"| `{r['analysis']}` | {r['title']} | {r['seconds']:,.1f} | {r['llm_s']:,.1f} | "
                     f"{r['evaluated']:,} | {r['reused']:,} | {r['generated']:,} | {fed} | {spu} |")
    return lines
