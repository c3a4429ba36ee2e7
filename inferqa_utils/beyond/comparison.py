"""The notebook-07 report: every retriever, reranker and method on one split, side by side.

One row per system: its kind (retriever / reranker / method / oracle), the paper 000 §4, §5.1–5.2 retrieval
metrics at relevance label ≥ ``threshold`` (through :func:`inferqa_utils.measure.metrics.evaluate`), the
reader's strict EM and judged accuracy at top-``k`` with Union_norm (paper 000 §5.4, through
:func:`inferqa_utils.reading.topk.read_runs`; :func:`read_report`) and the cost in seconds per query
(:func:`report_systems`):

* notebook-02 retrievers: the seconds per query of the cached run's cost record
  (:class:`inferqa_utils.core.artifacts.Cost`; query time only, corpus encoding/indexing excluded);
* notebook-03 reranked runs: the reranking seconds/query of ``results/03_<ds>_<split>_reranking.csv``
  plus the first stage's;
* notebook-07 methods: the wall-clock seconds of the method when it was computed (stored in
  its run stamp, so a cached re-run reports the original cost) / questions, plus its first
  stage's cost where it starts from a notebook-02 run.

Costs were measured on whatever else the machine was running at the time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import stages
from ..core import artifacts
from ..ir.trec import Run
from ..measure.metrics import evaluate
from ..reading.topk import read_runs
from .common import MethodResult
from .decomposition import read_cot

if TYPE_CHECKING:
    import pandas as pd

    from ..reading.setup import ReadingSetup

REPORT_METRICS = ("Hit@1", "Hit@5", "Hit@10", "Recall@10", "MRR@100", "nDCG@10", "nDCG@100")


def baseline_runs(dataset_name: str, names: Sequence[str], qids: Sequence[str],
                  corpus_tag: str = stages.Corpus.SUPPORTING) -> dict[str, Run]:
    """The stored runs ``names`` of earlier stages (retrievers, reranked runs) of a corpus,
    restricted to ``qids`` (:func:`inferqa_utils.stages.load_run`: a missing file names the
    notebook that writes it)."""
    return {name: stages.load_run(dataset_name, name, corpus_tag, qids=qids) for name in names}


def baseline_costs(dataset_name: str, split: str, names: Sequence[str],
                   corpus_tag: str = stages.Corpus.SUPPORTING) -> dict[str, float | None]:
    """Seconds per query of notebook-02/03 runs (module docstring); ``None`` when unknown."""
    import pandas as pd

    def retrieval_cost(name: str) -> float | None:
        stamp = artifacts.read_stamp(stages.run_path(dataset_name, corpus_tag, name))
        spq = artifacts.Cost.of(stamp).seconds_per_query
        return None if spq is None else round(spq, 4)

    rr_csv = stages.RERANKING.path(dataset_name, split)
    rr = pd.read_csv(rr_csv, index_col=0) if rr_csv.is_file() else None
    out: dict[str, float | None] = {}
    for name in names:
        if "+" not in name:
            out[name] = retrieval_cost(name)
            continue
        first, reranker = name.split("+", 1)
        row = f"{first} + {reranker}"
        rc = None
        if rr is not None and row in rr.index and "seconds/query" in rr.columns:
            v = rr.loc[row, "seconds/query"]
            rc = None if pd.isna(v) else float(v)
        fc = retrieval_cost(first)
        out[name] = None if rc is None else round(rc + (fc or 0.0), 4)
    return out


def baseline_kinds(retrievers: Sequence[str], first_stage: str, rerankers: Sequence[str],
                   oracle: str | None = None) -> dict[str, str]:
    """``{run name: kind}`` of the report's baselines, in report order: each notebook-02 retriever
    (``retriever``), ``first_stage`` reranked by each notebook-03 reranker (``reranker``,
    :func:`inferqa_utils.stages.reranked_name`) and the ``oracle`` run (``oracle``)."""
    kinds = {name: "retriever" for name in retrievers}
    kinds.update({stages.reranked_name(first_stage, r): "reranker" for r in rerankers})
    if oracle:
        kinds[oracle] = "oracle"
    return kinds


#: what the name of a method read by the CoT reader adds: ``<method> + CoT reader``
COT_READER = " + CoT reader"


@dataclass
class ReportSystems:
    """The systems of the report, by name: each one's run, kind and seconds per query (module
    docstring), and the systems that read another system's run with the CoT reader (name → that
    system; they share its run's retrieval metrics and its cost)."""

    runs: dict[str, Run]
    kinds: dict[str, str]
    costs: dict[str, float | None]
    cot_systems: dict[str, str] = field(default_factory=dict)


def report_systems(dataset_name: str, split: str, baselines: Mapping[str, Run], kinds: Mapping[str, str],
                   methods: Sequence[MethodResult], first_stages: Mapping[str, str] | None = None,
                   cot_of: str | None = None) -> ReportSystems:
    """The baselines (stored runs and their ``kinds``, :func:`baseline_kinds`) and the notebook-07
    ``methods`` (kind ``method``) with their costs: a baseline's from its stored cost record
    (:func:`baseline_costs`), a method's from its result plus the cost of the notebook-02 run it
    starts from (``first_stages``: method name → run name; :func:`method_costs`). With ``cot_of``
    (a method's name), the system ``<cot_of> + CoT reader`` reads that method's run with the CoT
    reader, at its cost."""
    by_name = {m.name: m for m in methods}
    first_stages = dict(first_stages or {})
    runs = {**baselines, **{name: m.run for name, m in by_name.items()}}
    all_kinds = {**kinds, **{name: "method" for name in by_name}}
    first_costs = baseline_costs(dataset_name, split, [*baselines, *first_stages.values()])
    costs = {**first_costs,
             **method_costs(by_name, {name: first_costs.get(run) for name, run in first_stages.items()})}
    cot_systems = {}
    if cot_of is not None:
        cot = f"{cot_of}{COT_READER}"
        cot_systems[cot] = cot_of
        costs[cot] = costs[cot_of]
        all_kinds[cot] = "method"
    return ReportSystems(runs, all_kinds, costs, cot_systems)


def read_report(setup: ReadingSetup, systems: ReportSystems, qids: Sequence[str]) -> pd.DataFrame:
    """Per-question answers of every system of the report: every run read at top-``setup.k`` with
    ``setup.union``, all systems in one reader batch and one judge batch
    (:func:`inferqa_utils.reading.topk.read_runs`; answers in ``setup.known`` reused), then each CoT
    system's run read by the CoT reader (:func:`~inferqa_utils.beyond.decomposition.read_cot`)."""
    import pandas as pd

    frames = [read_runs(setup, systems.runs, list(qids))]
    for name, of in systems.cot_systems.items():
        frames.append(read_cot(setup, systems.runs[of], qids, system=name))
    return pd.concat(frames, ignore_index=True)


def em_comparison(answers: pd.DataFrame, table: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Strict EM (%) of every system of ``table`` with its 95 % bootstrap interval and, against
    ``baseline``, the paired difference, its interval, p and Holm
    (:func:`inferqa_utils.measure.uncertainty.answers_comparison` of ``answers``)."""
    from ..measure.uncertainty import answers_comparison

    return answers_comparison(answers[answers["system"].isin(table.index)], baseline=baseline)


def report_table(
    runs: Mapping[str, Run],
    kinds: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    answers: pd.DataFrame,
    costs: Mapping[str, float | None],
    threshold: int = 1,
    metrics: Sequence[str] = REPORT_METRICS,
    retrieval_of: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """One row per system (index ``system``): ``kind``, the retrieval ``metrics`` in % at label ≥
    ``threshold``, ``EM`` / ``judged`` / ``no_answer`` in % (from ``answers``, the per-question frame
    of :func:`read_report`), ``seconds/query``.

    ``retrieval_of`` maps a system that only differs in the reader (e.g. ``"decomposition + CoT
    reader"``) to the run whose retrieval metrics it shares."""
    import pandas as pd

    retrieval_of = dict(retrieval_of or {})
    systems = list(dict.fromkeys([*runs, *retrieval_of]))
    rows = []
    for name in systems:
        run = runs[retrieval_of.get(name, name)]
        row = evaluate(run, qrels, threshold=threshold, metrics=metrics, name=name)
        sub = answers[answers["system"] == name] if len(answers) else answers
        row["EM"] = 100 * sub["em"].mean() if len(sub) else float("nan")
        row["judged"] = 100 * sub["judged"].mean() if len(sub) else float("nan")
        row["no_answer"] = 100 * sub["no_answer"].mean() if len(sub) else float("nan")
        row["n_read"] = sub["qid"].nunique() if len(sub) else 0
        row["seconds/query"] = costs.get(name)
        row.insert(0, "kind", kinds.get(name, "method"))
        rows.append(row)
    table = pd.concat(rows)
    table.index.name = "system"
    num = [
        c
        for c in table.columns
        if c not in ("kind", "n_questions", "n_questions_ndcg", "threshold", "n_read")
    ]
    table[num] = table[num].astype(float).round(2)
    return table


def best_of(
    table: pd.DataFrame, kind: str, column: str, names: Sequence[str] | None = None
) -> tuple[str, float] | None:
    """``(system, value)`` of the best row of ``kind`` (optionally among ``names``) by ``column``;
    ties go to the earlier row. ``None`` when no row qualifies or all values are NaN."""
    sub = table[table["kind"] == kind] if kind else table
    if names is not None:
        sub = sub[sub.index.isin(list(names))]
    sub = sub[sub[column].notna()]
    if not len(sub):
        return None
    name = sub[column].idxmax()
    return str(name), float(sub.loc[name, column])


def best_method_summary(table: pd.DataFrame, dataset_name: str, bm25: str = "bm25",
                        dense: Sequence[str] = ("minilm", "e5-small"),
                        columns: Sequence[str] = ("nDCG@10", "judged", "EM")) -> str:
    """Markdown: per column, the best notebook-07 method and its margin over ``bm25`` and over the
    best of the ``dense`` retrievers (points of %)."""
    lines = [f"**Best method on `{dataset_name}`** (points of %, relevance label ≥ "
             f"{int(table['threshold'].iloc[0]) if 'threshold' in table else 1}):"]
    for col in columns:
        best = best_of(table, "method", col)
        if best is None:
            lines.append(f"- {col}: no method row has a value")
            continue
        name, val = best
        methods = table[(table["kind"] == "method") & table[col].notna()][col]
        if len(methods) > 1 and methods.nunique() == 1:
            lines.append(f"- {col}: every method ties at {val:.2f} (no method is best)")
            continue
        parts = [f"- {col}: **{name}** {val:.2f}"]
        if bm25 in table.index and table.loc[bm25, col] == table.loc[bm25, col]:
            parts.append(
                f"{val - float(table.loc[bm25, col]):+.2f} over {bm25} ({float(table.loc[bm25, col]):.2f})"
            )
        bd = best_of(table, "", col, [d for d in dense if d in table.index])
        if bd is not None:
            parts.append(f"{val - bd[1]:+.2f} over the best dense retriever {bd[0]} ({bd[1]:.2f})")
        lines.append(", ".join(parts))
    return "\n".join(lines)


def plot_report(table: pd.DataFrame, title: str, columns: Sequence[str] = ("nDCG@10", "judged"),
                intervals: pd.DataFrame | None = None) -> Any:
    """Horizontal bars, one panel per column, systems coloured by kind; error bars where
    ``intervals`` (index system) has ``<column>_lo`` and ``<column>_hi`` (95 % intervals, in %)."""
    import matplotlib.pyplot as plt

    colours = {"retriever": "#4C72B0", "reranker": "#DD8452", "method": "#55A868", "oracle": "#8C8C8C"}
    names = list(table.index)
    fig, axes = plt.subplots(
        1, len(columns), figsize=(5.2 * len(columns), 0.38 * len(names) + 1.4), sharey=True, squeeze=False
    )
    for ax, col in zip(axes[0], columns, strict=True):
        vals = table[col].astype(float).fillna(0.0)
        err = None
        if intervals is not None and f"{col}_lo" in intervals.columns and f"{col}_hi" in intervals.columns:
            iv = intervals.reindex(names)
            err = [(vals - iv[f"{col}_lo"].astype(float)).fillna(0.0).clip(lower=0).to_numpy(),
                   (iv[f"{col}_hi"].astype(float) - vals).fillna(0.0).clip(lower=0).to_numpy()]
        ax.barh(range(len(names)), vals, color=[colours.get(k, "#999999") for k in table["kind"]], xerr=err,
                capsize=2, error_kw={"elinewidth": 0.8})
        for i, v in enumerate(vals):
            ax.text(v + 0.5, i, f"{v:.1f}", va="center", fontsize=7)
        ax.set_xlabel(f"{col} (%)")
        ax.set_xlim(0, max(100.0, float(vals.max()) + 8))
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(range(len(names)))
    axes[0][0].set_yticklabels(names, fontsize=8)
    axes[0][0].invert_yaxis()
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for k, c in colours.items() if k in set(table["kind"])]
    axes[0][-1].legend(
        handles, [k for k in colours if k in set(table["kind"])], fontsize=8, loc="lower right"
    )
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def method_costs(
    results: Mapping[str, Any], first_stage_cost: Mapping[str, float | None] | None = None
) -> dict[str, float]:
    """Seconds per query of method results (:class:`~inferqa_utils.beyond.common.MethodResult`),
    plus the cost of their first stage (``first_stage_cost``: method name → seconds/query)."""
    first_stage_cost = first_stage_cost or {}
    return {
        name: round(r.seconds_per_query + float(first_stage_cost.get(name) or 0.0), 4)
        for name, r in results.items()
    }


# ----------------------------------------------------------------------------- generated sentences

def details_note(
    details: Mapping[str, Mapping[str, Any]], gold: Mapping[str, Sequence[str]] | None = None
) -> str:
    """What a method did per question, from its ``details`` (decomposition: sub-questions;
    knowledge-aware: declared and selected elements; disentangled: masked questions; candidate
    support: candidate answers, and with ``gold`` how often the gold answer is among them)."""
    from ..ir.textnorm import exact_match

    n = len(details)
    if not n:
        return ""
    first = next(iter(details.values()))
    if "subquestions" in first:
        k = sum(bool(d["subquestions"]) for d in details.values())
        subs = sum(len(d["subquestions"]) for d in details.values())
        return f"{k} of {n} questions were decomposed ({subs / max(1, k):.1f} sub-questions each)"
    if "selected" in first:
        declared = sum(len(x["elements"]) for d in details.values() for x in d.get("documents", []))
        selected = sum(bool(d["selected"]) for d in details.values())
        return (
            f"the LLM declared {declared / n:.1f} knowledge elements per question and elements were selected "
            "for "
            f"{selected} of {n}"
        )
    if "masked_question" in first:
        masked = sum("[M]" in str(d["masked_question"]) for d in details.values())
        return f"topic words were masked in {masked} of {n} questions"
    if "candidates" in first:
        some = [q for q, d in details.items() if d["candidates"]]
        text = f"{len(some)} of {n} questions got candidate answers from their passages"
        if gold:
            top = sum(bool(details[q]["candidates"]) and exact_match(details[q]["candidates"][0][0], gold[q])
                      for q in details if q in gold)
            anyc = sum(
                any(exact_match(c, gold[q]) for c, _w in details[q]["candidates"])
                for q in details
                if q in gold
            )
            text += f"; the gold answer is the consensus for {top} and among the candidates for {anyc}"
        return text
    return ""


def method_sentence(
    methods: Sequence[Any],
    baselines: Mapping[str, Run],
    qrels: Mapping[str, Mapping[str, int]],
    threshold: int = 1,
    metric: str = "nDCG@10",
    note: str = "",
) -> str:
    """One section's sentence for notebook-07 methods (:class:`~inferqa_utils.beyond.common.MethodResult`):
    each method's ``metric`` at label ≥ ``threshold`` with its 95 % bootstrap interval beside the
    ``baselines`` (same questions), its cost per query, and ``note`` (e.g. :func:`details_note`)."""
    from ..measure.uncertainty import metric_intervals
    from ..present.sentences import ci_of

    runs = {**baselines, **{m.name: m.run for m in methods}}
    t = metric_intervals(runs, qrels, threshold, [metric])
    base = "; ".join(f"{b} {ci_of(t, b, metric)}" for b in baselines if b in t.index)
    parts = []
    for m in methods:
        cached = " (cached: computed in an earlier run)" if m.cached else ""
        parts.append(f"**{m.name}** {ci_of(t, m.name, metric)}, {m.seconds_per_query} s/query{cached}")
    text = (
        f"{metric} (label ≥ {threshold}): " + "; ".join(parts) + (f" — against {base}" if base else "") + "."
    )
    return (f"{note[0].upper()}{note[1:]}. " if note else "") + text
