"""The papers' findings scored from our data: *holds*, *contradicted* or *inconclusive*.

The paper numbers and the findings live in one file shipped with the package,
``inferqa_utils/measure/paper_numbers.yaml`` (:func:`load_paper_numbers`); everything that prints a paper
number reads it. For each finding a *measure* (:data:`MEASURES`) reads our two quantities ``a``
and ``b`` from the result files the notebooks wrote — one value per question (per passage for
passage lengths, per question × sample for SER) — and :func:`score` decides with
:func:`inferqa_utils.measure.verdict.judge`.

The verdict rule — regions, bootstrap intervals, p-values, the minimum of units — is
:mod:`inferqa_utils.measure.verdict`'s, shared with the paper-runs findings.

Only directions and size classes are compared, never the absolute numbers: our corpus, models
and question counts are orders of magnitude smaller than the paper's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import stages
from ..damaging.patterns import acem_at
from ..measure.paper import Finding
from ..measure.paper import load_paper_numbers as _load
from ..measure.uncertainty import as_outcome, holm
from ..measure.verdict import (
    CONTRADICTED,
    HOLDS,
    INCONCLUSIVE,
    Sample,
    Scored,
    judge,
)
from ..stages import CONTAINING, CONTAINING_JUDGED, SUPPORTING, SUPPORTING_JUDGED, Table

if TYPE_CHECKING:
    import pandas as pd

# ----------------------------------------------------------------------------- our data

class Missing(Exception):
    """A measure's input is absent: the finding is inconclusive, and this says why."""


class ByConstruction(Exception):
    """The comparison cannot come out otherwise on this run (e.g. a control corpus whose relevant
    passage ranks first for every question): the finding is inconclusive, and this says why. The
    measured sample rides along so the numbers are still shown."""

    def __init__(self, reason: str, sample: Sample) -> None:
        super().__init__(reason)
        self.sample = sample


@dataclass
class Results:
    """The result tables of one dataset and split (:class:`~inferqa_utils.stages.Table`, in
    ``folder``, default ``results/``) and the parameters the run used (a profile's values: reader,
    first stage, k…)."""

    dataset: str
    split: str
    params: Mapping[str, Any] = field(default_factory=dict)
    folder: Path | None = None

    def path(self, table: Table) -> Path:
        return table.path(self.dataset, self.split, self.folder)

    def table(self, table: Table, dtype: Mapping[str, Any] | None = None) -> pd.DataFrame:
        import pandas as pd

        p = self.path(table)
        if not p.exists():
            raise Missing(f"{p.name} not found (run notebook {table.stage})")
        return pd.read_csv(p, dtype=dict(dtype or {}))

    def param(self, name: str, default: Any = None) -> Any:
        return self.params.get(name, default)


def _per_question(results: Results, table: Table) -> pd.DataFrame:
    """A long per-question table of notebooks 02/03/05: ``corpus, system, measure, qid, value``."""
    return results.table(table)


def _pivot(pq: pd.DataFrame, measure: str, corpus: str | None = None) -> pd.DataFrame:
    """qid × system values of one measure (NaN rows = questions that do not count)."""
    sub = pq[pq["measure"] == measure]
    if corpus is not None:
        sub = sub[sub["corpus"] == corpus]
    if sub.empty:
        raise Missing(f"no per-question {measure!r}" + (f" on the {corpus} corpus" if corpus else ""))
    return sub.pivot_table(index="qid", columns="system", values="value", aggfunc="first", dropna=False)


def _best_column(table: pd.DataFrame, columns: Sequence[str], what: str) -> str:
    cols = [c for c in columns if c in table.columns and table[c].notna().any()]
    if not cols:
        raise Missing(f"no {what} in the results")
    return max(cols, key=lambda c: (table[c].mean(), -cols.index(c)))


def _pair(table: pd.DataFrame, a: str, b: str, note: str) -> Sample:
    both = table[[a, b]].dropna()
    if both.empty:
        raise Missing(f"{a} and {b} share no measured question")
    return Sample(both[a].to_numpy(float), both[b].to_numpy(float), True, f"{note} ({len(both)} questions)")


def _answers(results: Results, table: Table) -> pd.DataFrame:
    """EM per question of one answers table as qid × system (strict EM, top-k and union of the run)."""
    ans = results.table(table)
    k, union = int(results.param("reading_k", 3)), results.param("reading_union", "norm")
    reader = results.param("reader_model")
    rows = ans[(ans["setting"] == "Optimal") | ((ans["k"] == k) & (ans["union"] == union))]
    if reader is not None and "reader" in rows.columns:
        rows = rows[rows["reader"].astype(str).str.startswith(str(reader))]
    if rows.empty:
        raise Missing(f"no answers at k = {k}, Union_{union}, reader {reader} in notebook {table.stage}")
    rows = rows.assign(key=np.where(rows["setting"] == "Optimal", "Optimal", rows["system"].astype(str)),
                       em=as_outcome(rows["em"]))
    return rows.pivot_table(index="qid", columns="key", values="em", aggfunc="first")


# ----------------------------------------------------------------------------- measures

#: corpus labels of notebook 02's fair comparison (inferqa_utils.retrieval.pooled), preferred when present
JUDGED = (CONTAINING_JUDGED, SUPPORTING_JUDGED)


def m_cross_corpus_hit(r: Results, containing: str | None = None, supporting: str | None = None) -> Sample:
    """Mean Hit@k (label 2) per question of the best retriever on each corpus. Without explicit
    corpus labels: the LLM-judged fair comparison when notebook 02 ran it, else the
    contains-the-answer control of section 2."""
    table = stages.RETRIEVAL_PER_QUESTION
    pq = _per_question(r, table)
    pq = pq[(pq["threshold"] == 2) & pq["measure"].astype(str).str.startswith("Hit@")]
    if pq.empty:
        raise Missing(f"no per-question Hit@k at label 2 in notebook {table.stage}")
    if containing is None or supporting is None:
        judged = set(JUDGED) <= set(pq["corpus"])
        containing, supporting = JUDGED if judged else (CONTAINING, SUPPORTING)
    best = {}
    for corpus in (containing, supporting):
        sub = pq[pq["corpus"] == corpus]
        if sub.empty:
            raise Missing(f"no per-question Hit@k for the {corpus!r} corpus (notebook {table.stage})")
        mean_hit = sub.pivot_table(index="qid", columns="system", values="value", aggfunc="mean")
        name = _best_column(mean_hit, list(mean_hit.columns), f"{corpus} retriever")
        best[corpus] = (name, mean_hit[name])
    (cn, ca), (sn, sa) = best[containing], best[supporting]
    import pandas as pd

    sample = _pair(pd.DataFrame({"a": ca, "b": sa}), "a", "b",
                   f"mean Hit@k, label 2: {containing} {cn} vs {supporting} {sn}")
    top1 = pq[(pq["corpus"] == containing) & (pq["system"] == cn) & (pq["measure"] == "Hit@1")]["value"]
    if len(top1) and bool((top1 == 1).all()):
        raise ByConstruction(
            f"on the answer-containing control every question's relevant passage ranks first "
            f"({cn} Hit@1 = 100 on all {len(top1)} questions): the control holds each "
            "question's own reference text, so the comparison favours it by construction; "
            "it needs a control where other questions' passages can be relevant",
            sample,
        )
    return sample


def m_passage_lengths(r: Results) -> Sample:
    t = r.table(stages.PASSAGE_LENGTHS)
    a = t.loc[t["corpus"] == SUPPORTING, "tokens"].to_numpy(float)
    b = t.loc[t["corpus"] == CONTAINING, "tokens"].to_numpy(float)
    if not len(a) or not len(b):
        raise Missing(f"passage lengths of both corpora are needed (notebook {stages.PASSAGE_LENGTHS.stage})")
    return Sample(
        a, b, False, f"tokens: {len(a)} supporting vs {len(b)} containing passages", "passages", 1.0
    )


def m_dense_vs_bm25(r: Results, metric: str = "nDCG@10") -> Sample:
    t = _pivot(_per_question(r, stages.RETRIEVAL_PER_QUESTION), metric, SUPPORTING)
    sparse = {"bm25", "bm25s", "hybrid", "rrf"}
    name = _best_column(t, [c for c in t.columns if c not in sparse], "dense retriever")
    if "bm25" not in t.columns:
        raise Missing(f"bm25 was not run in notebook {stages.RETRIEVAL_PER_QUESTION.stage}")
    return _pair(t, name, "bm25", f"{metric}: {name} vs bm25")


def _rerankers_of(columns: Sequence[str], first: str) -> list[str]:
    return [c for c in columns if str(c).startswith(f"{first}+") or str(c).startswith(f"{first} + ")]


def m_reranker_gain_em(r: Results) -> Sample:
    first = r.param("first_stage", "bm25")
    t = _answers(r, stages.READING_ANSWERS)
    name = _best_column(t, _rerankers_of(list(t.columns), first), f"{first} + reranker reading")
    if first not in t.columns:
        raise Missing(f"the first stage {first} was not read in notebook {stages.READING_ANSWERS.stage}")
    return _pair(t, name, first, f"strict EM: {name} vs {first}")


def m_reranker_gain_ndcg(r: Results, metric: str = "nDCG@10") -> Sample:
    first = r.param("first_stage", "bm25")
    t = _pivot(_per_question(r, stages.RERANKING_PER_QUESTION), metric)
    name = _best_column(t, _rerankers_of(list(t.columns), first), f"{first} + reranker")
    return _pair(t, name, first, f"{metric}: {name} vs {first}")


def m_pointwise_vs_other_rerankers(r: Results, metric: str = "nDCG@10") -> Sample:
    first = r.param("first_stage", "bm25")
    t = _pivot(_per_question(r, stages.RERANKING_PER_QUESTION), metric)
    rr = _rerankers_of(list(t.columns), first)
    pw = [c for c in rr if str(c).endswith("pointwise")]
    others = [c for c in rr if c not in pw]
    if not pw or not others:
        raise Missing(
            f"needs pointwise and another reranker in notebook {stages.RERANKING_PER_QUESTION.stage} "
            f"(ran: {', '.join(rr) or 'none'}; "
            "-p rerankers=[pointwise,upr,listwise])"
        )
    return _pair(t, pw[0], _best_column(t, others, "other reranker"), f"{metric}: pointwise vs best other")


def _pipelines(t: pd.DataFrame, retriever_only: bool) -> list[str]:
    cols = [c for c in t.columns if c != "Optimal" and not str(c).startswith("oracle")]
    return [c for c in cols if "+" not in str(c)] if retriever_only else cols


def m_optimal_vs_pipeline(r: Results) -> Sample:
    t = _answers(r, stages.READING_ANSWERS)
    if "Optimal" not in t.columns:
        raise Missing(f"no Optimal reading of the main reader in notebook {stages.READING_ANSWERS.stage}")
    best = _best_column(t, _pipelines(t, False), "pipeline reading")
    return _pair(t, "Optimal", best, f"strict EM: Optimal vs {best}")


def _oracle(t: pd.DataFrame) -> str:
    return _best_column(t, [c for c in t.columns if str(c).startswith("oracle")], "oracle reading")


def m_oracle_vs_optimal(r: Results) -> Sample:
    t = _answers(r, stages.READING_ANSWERS)
    if "Optimal" not in t.columns:
        raise Missing(f"no Optimal reading of the main reader in notebook {stages.READING_ANSWERS.stage}")
    o = _oracle(t)
    return _pair(t, o, "Optimal", f"strict EM: {o} vs Optimal")


def m_oracle_vs_pipeline(r: Results) -> Sample:
    t = _answers(r, stages.READING_ANSWERS)
    o = _oracle(t)
    best = _best_column(t, _pipelines(t, True), "retriever-only reading")
    return _pair(t, o, best, f"strict EM: {o} vs {best}")


def m_short_vs_cot_reader(r: Results) -> Sample:
    ans = r.table(stages.BEYOND_ANSWERS)
    cot = ans[ans["system"].astype(str).str.contains("CoT")]
    if cot.empty:
        raise Missing(f"no CoT reading in notebook {stages.BEYOND_ANSWERS.stage}")
    base = str(cot["system"].iloc[0]).split(" + CoT")[0]
    rows = ans[ans["system"].isin([base, cot["system"].iloc[0]])]
    rows = rows.assign(em=as_outcome(rows["em"]))
    t = rows.pivot_table(index="qid", columns="system", values="em", aggfunc="first")
    return _pair(t, base, str(cot["system"].iloc[0]), f"strict EM: {base}, short answer vs CoT reader")


def m_finetuned_retriever_gain(r: Results, metric: str = "nDCG@10") -> Sample:
    t = _pivot(_per_question(r, stages.FT_PER_QUESTION), metric)
    ft = [c for c in t.columns if str(c).startswith("FT-")]
    base = [c for c in t.columns if not str(c).startswith("FT-")]
    if not ft or not base:
        raise Missing(
            f"needs a fine-tuned retriever and its base model in notebook {stages.FT_PER_QUESTION.stage}"
        )
    name = _best_column(t, ft, "fine-tuned retriever")
    return _pair(t, name, base[0], f"{metric}: {name} vs {base[0]}")


def m_finetuned_reranker_pipeline(r: Results) -> Sample:
    import pandas as pd

    first = r.param("first_stage", "bm25")
    tuned, untuned = stages.FT_ANSWERS, stages.READING_ANSWERS
    ft = _answers(r, tuned)
    base = _answers(r, untuned)
    fcols = [c for c in _rerankers_of(list(ft.columns), first) if "FT-" in str(c)]
    bcols = _rerankers_of(list(base.columns), first)
    if not fcols or not bcols:
        raise Missing(f"needs {first} + a fine-tuned reranker (notebook {tuned.stage}) and {first} + an LLM "
                      f"reranker ({untuned.stage})")
    a, b = fcols[0], _best_column(base, bcols, "untuned reranker reading")
    return _pair(pd.DataFrame({"a": ft[a], "b": base[b]}), "a", "b",
                 f"strict EM: {a} ({tuned.stage}) vs {b} ({untuned.stage})")


def _patterns(r: Results, corpus: str = SUPPORTING) -> pd.DataFrame:
    """Notebook 06's EM patterns of one corpus, for the first damaging retriever."""
    p = r.table(stages.PATTERNS, dtype={"em_pattern": str, "judged_pattern": str, "qid": str})
    p = p[p["corpus"] == corpus] if "corpus" in p.columns else p
    if p.empty:
        raise Missing(f"no EM patterns on the {corpus} corpus in notebook {stages.PATTERNS.stage}")
    system = str(p["system"].iloc[0])
    return p[p["system"] == system]


def _acem_em(p: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per question AcEM@N = max(EM@1 … EM@N) and EM@N of strict EM patterns (paper 004 §4)."""
    pats = [str(x) for x in p["em_pattern"]]
    acem = np.array([float(acem_at(x, len(x))) for x in pats])
    return acem, np.array([float(x[-1] == "1") for x in pats])


def m_acem_vs_em(r: Results, corpus: str = SUPPORTING) -> Sample:
    p = _patterns(r, corpus)
    ac, em = _acem_em(p)
    n_max = max(len(str(x)) for x in p["em_pattern"])
    return Sample(ac, em, True, f"strict AcEM@N vs EM@N, {p['system'].iloc[0]}, {corpus}, N = {n_max} "
                                f"({len(p)} questions, {int(np.sum(ac != em))} damaged)")


def m_damaging_by_corpus(r: Results, a: str = SUPPORTING, b: str = CONTAINING) -> Sample:
    """Per question, the damaging effect AcEM@N − EM@N (0 or 1) on corpus ``a`` vs on corpus ``b``,
    paired over the questions both corpora read (paper 004 §4's measure, compared across corpora:
    ours)."""
    import pandas as pd

    effect = {}
    for corpus in (a, b):
        p = _patterns(r, corpus)
        ac, em = _acem_em(p)
        effect[corpus] = pd.Series(ac - em, index=[str(q) for q in p["qid"]])
    t = pd.DataFrame({"a": effect[a], "b": effect[b]}).dropna()
    informative = int(np.sum(t["a"] != t["b"]))
    return _pair(t, "a", "b", f"damaging effect AcEM@N − EM@N per question, {a} vs {b} "
                              f"({informative} of {len(t)} questions differ)")


def m_probe3_vs_em(r: Results, corpus: str = SUPPORTING) -> Sample:
    import pandas as pd

    p = _patterns(r, corpus)
    probes = r.table(stages.PROBE_READINGS)
    probes = probes[(probes["probe"] == "P3") & (probes["metric"] == "em")
                    & (probes["system"] == p["system"].iloc[0])]
    if "corpus" in probes.columns:
        probes = probes[probes["corpus"] == corpus]
    if probes.empty:
        raise Missing(f"no Probe-3 readings on the {corpus} corpus in notebook {stages.PROBE_READINGS.stage}")
    n = int(probes["k"].max())
    at_n = probes[probes["k"] == n].set_index("qid")["correct"].pipe(as_outcome)
    em = pd.Series(
        {
            q: float(str(x)[min(n, len(str(x))) - 1] == "1")
            for q, x in zip(p["qid"], p["em_pattern"], strict=True)
        }
    )
    t = pd.DataFrame({"a": at_n.astype(float), "b": em})
    return _pair(t, "a", "b", f"strict EM: Probe 3@{n} vs EM@{n}, {corpus}")


def m_ser_bm25_vs_random(r: Results, corpus: str = SUPPORTING) -> Sample:
    s = r.table(stages.SER_READINGS)
    if "corpus" in s.columns:
        s = s[s["corpus"] == corpus]
    if s.empty:
        raise Missing(f"no SER readings on the {corpus} corpus in notebook {stages.SER_READINGS.stage}")
    m = int(s["m"].max())
    s = s[s["m"] == m].assign(changed=lambda d: as_outcome(d["changed"]))
    t = s.pivot_table(index=["qid", "sample"], columns="kind", values="changed", aggfunc="first").astype(
        float
    )
    kinds = {c.lower(): c for c in t.columns}
    if "bm25" not in kinds or "random" not in kinds:
        raise Missing("SER needs both random and BM25 negatives")
    both = t[[kinds["bm25"], kinds["random"]]].dropna()
    return Sample(both[kinds["bm25"]].to_numpy(), both[kinds["random"]].to_numpy(), True,
                  f"answer changed after {m} extra passages: BM25 vs random, {corpus} ({len(both)} pairs)",
                  "pairs")


MEASURES: dict[str, Callable[..., Sample]] = {
    "cross_corpus_hit": m_cross_corpus_hit,
    "passage_lengths": m_passage_lengths,
    "dense_vs_bm25": m_dense_vs_bm25,
    "reranker_gain_em": m_reranker_gain_em,
    "reranker_gain_ndcg": m_reranker_gain_ndcg,
    "pointwise_vs_other_rerankers": m_pointwise_vs_other_rerankers,
    "optimal_vs_pipeline": m_optimal_vs_pipeline,
    "oracle_vs_optimal": m_oracle_vs_optimal,
    "oracle_vs_pipeline": m_oracle_vs_pipeline,
    "short_vs_cot_reader": m_short_vs_cot_reader,
    "finetuned_retriever_gain": m_finetuned_retriever_gain,
    "finetuned_reranker_pipeline": m_finetuned_reranker_pipeline,
    "acem_vs_em": m_acem_vs_em,
    "damaging_by_corpus": m_damaging_by_corpus,
    "probe3_vs_em": m_probe3_vs_em,
    "ser_bm25_vs_random": m_ser_bm25_vs_random,
}


def load_paper_numbers(path: str | Path | None = None) -> list[Finding]:
    """:func:`inferqa_utils.measure.paper.load_paper_numbers`, each entry's measure checked against
    :data:`MEASURES`."""
    return _load(path, MEASURES)


# ----------------------------------------------------------------------------- scoring

def score(finding: Finding, results: Results) -> Scored:
    """Score one finding on one run's results: its measure's sample judged by
    :func:`inferqa_utils.measure.verdict.judge` (an input that is missing: inconclusive)."""
    try:
        s = MEASURES[finding.measure](results, **finding.params)
    except Missing as exc:
        return Scored(finding, INCONCLUSIVE, f"missing input: {exc}")
    except ByConstruction as exc:
        return judge(finding, exc.sample, forced=f"by construction: {exc} ({exc.sample.note})")
    return judge(finding, s)


def verdict_table(results: Results, findings: Sequence[Finding] | None = None) -> pd.DataFrame:
    """One row per finding: paper a and b, ours with 95 % intervals, the statistic and its interval,
    the p-value (raw and Holm-adjusted over the table), the units measured (``n``) and those the
    verdict rests on (``informative``, :func:`informative_units`), the rule, the verdict and why."""
    import pandas as pd

    scored = [score(f, results) for f in (findings if findings is not None else load_paper_numbers())]
    ps = [s.p_value for s in scored if s.p_value is not None]
    adjusted = iter(holm(ps)) if ps else iter(())
    rows = []
    for s in scored:
        f = s.finding
        p_holm = next(adjusted) if s.p_value is not None else None
        rows.append({
            "id": f.id, "finding": f.finding, "source": f.source,
            "paper a": f"{f.a_label}: {_fmt(f.a_value)}", "paper b": f"{f.b_label}: {_fmt(f.b_value)}",
            "ours a": str(s.a) if s.a is not None else "—", "ours b": str(s.b) if s.b is not None else "—",
            "statistic": f"{f.statistic} {s.stat}" if s.stat is not None else "—",
            "p": None if s.p_value is None else round(s.p_value, 4),
            "p (Holm)": None if p_holm is None else round(p_holm, 4),
            "n": s.n, "informative": s.informative, "rule": f.rule(), "verdict": s.verdict, "why": s.why,
            "ours is": f.ours})
    return pd.DataFrame(rows).set_index("id")


def verdict_counts(table: pd.DataFrame) -> str:
    counts = table["verdict"].value_counts()
    return ", ".join(f"{counts.get(v, 0)} {v}" for v in (HOLDS, CONTRADICTED, INCONCLUSIVE))


def _fmt(v: float | None) -> str:
    return "—" if v is None else f"{v:g}"


def verdict_sentence(table: pd.DataFrame, n_questions: int, split: str, dataset: str) -> str:
    """The sentence that closes the findings table (:func:`verdict_table`): the verdict counts and,
    for the findings that hold or are contradicted, their ids."""
    counts = table["verdict"].value_counts()
    text = (
        f"Of {len(table)} findings, on {n_questions} `{split}` questions of `{dataset}`: "
        f"{counts.get(HOLDS, 0)} "
        f"hold, {counts.get(CONTRADICTED, 0)} are contradicted, {counts.get(INCONCLUSIVE, 0)} are "
        "inconclusive"
    )
    for verdict, said in ((HOLDS, "holding"), (CONTRADICTED, "contradicted")):
        ids = [str(i) for i in table.index[table["verdict"] == verdict]]
        if ids:
            text += f"; {said}: {', '.join(f'`{i}`' for i in ids)}"
    return text + "."
