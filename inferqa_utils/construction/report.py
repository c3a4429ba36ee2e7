"""Tables that narrate a build in notebook 01."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ..qtype import classifier_accuracy
from .passages import n_subset_permutations

if TYPE_CHECKING:
    from .build import BuildResult


def dropped_table(res: BuildResult) -> pd.DataFrame:
    cols = ["qid", "question", "answer", "reason", "detail"]
    return res.dropped[cols].reset_index(drop=True)


def drop_reasons(res: BuildResult) -> pd.DataFrame:
    q = res.questions
    out = q["reason"].where(q["status"] == "dropped", "kept").value_counts().rename_axis("outcome")
    return out.rename("questions").to_frame()


def parametric_summary(res: BuildResult) -> pd.DataFrame:
    """Closed-book accuracy (%) per model and repeat, and the share of questions some model knew."""
    df = res.parametric
    if df.empty:
        return pd.DataFrame()
    tab = (df.groupby(["model", "repeat"])[["em", "correct"]].mean() * 100).round(1)
    tab.columns = ["EM (%)", "judged correct (%)"]
    return tab


def parametric_by_model(res: BuildResult) -> pd.DataFrame:
    """Per closed-book model: questions it answers (strict EM / judged, any repeat), answers the
    guards refused, and the questions only this model knows; last row: parametric by any model."""
    df = res.parametric
    if df.empty:
        return pd.DataFrame()
    per_q = df.groupby(["model", "qid"])[["em", "correct"]].any()
    knew = per_q["correct"].unstack("model", fill_value=False)
    rows = []
    for m, g in per_q.groupby(level="model"):
        only = int((knew[m] & ~knew.drop(columns=m).any(axis=1)).sum()) if knew.shape[1] > 1 else int(knew[m].sum())
        rows.append({"model": m, "questions": len(g), "EM": int(g["em"].sum()), "judged correct": int(g["correct"].sum()),
                     "judged correct (%)": round(100 * g["correct"].mean(), 1),
                     "refused by a guard": int(df.loc[df["model"] == m, "guard"].notna().sum()) if "guard" in df else 0,
                     "only this model": only})
    n = knew.shape[0]
    rows.append({"model": "any (parametric)", "questions": n, "EM": int(per_q["em"].groupby(level="qid").any().sum()),
                 "judged correct": int(knew.any(axis=1).sum()),
                 "judged correct (%)": round(100 * knew.any(axis=1).mean(), 1)})
    return pd.DataFrame(rows).set_index("model")


def pool_expansions(res: BuildResult) -> pd.DataFrame:
    """Answers the judge admitted to answer pools (not gold matches), with the labeler and fate."""
    return res.expansions


def guard_refusals(res: BuildResult) -> pd.DataFrame:
    """Counts of labeling answers refused by each guard before the judge, with examples."""
    r = res.refusals
    if r.empty:
        return pd.DataFrame(columns=["answers", "passages", "examples"])
    return r.groupby("rule").agg(answers=("answer", "size"), passages=("passages", "sum"),
                                 examples=("answer", lambda a: ", ".join(list(dict.fromkeys(a))[:6])))


def repeat_agreement(res: BuildResult) -> pd.DataFrame:
    """How often the answers of different repeats (prompt variants) differ, per model."""
    df = res.parametric
    if df.empty or df["repeat"].nunique() < 2:
        return pd.DataFrame({"note": ["one repeat: greedy decoding makes identical repeats redundant"]})
    g = df.groupby(["model", "qid"])["answer"].nunique()
    return (g.gt(1).groupby("model").mean() * 100).round(1).rename("questions whose answer changes (%)").to_frame()


def type_accuracy(res: BuildResult) -> dict:
    """Our rule-based TREC classifier against the source's labels (where the source has them)."""
    q = res.questions.dropna(subset=["source_type"])
    q = q[q["source_type"].astype(str).str.contains(":")]
    pairs = list(zip(q["question"], q["source_type"], strict=True))
    if not pairs:
        return {"n": 0}
    return classifier_accuracy(pairs)


def difficulty_agreement(res: BuildResult) -> pd.DataFrame | None:
    """Cross-table of the reference-based difficulty against the source's label."""
    d = res.difficulty
    if d is None or d["source_difficulty"].isna().all():
        return None
    return pd.crosstab(d["source_difficulty"], d["difficulty"], rownames=["source"], colnames=["reference-based"])


def leakage_agreement(res: BuildResult) -> pd.DataFrame:
    """Hints counted by the source's stored answer-leakage score (≥ the build's
    ``stored_leakage_threshold``) against our leakage filter (paper 000 §3.1.2), which alone
    drops questions: a 2×2 table, or a one-row note when the source stores no such score."""
    return leakage_crosstab(res.leakage_agreement, res.config.stored_leakage_threshold)


def leakage_crosstab(table: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """The 2×2 crosstab of :func:`leakage_agreement` for an agreement table (both levels always shown)."""
    if table.empty:
        return pd.DataFrame({"note": ["the source stores no per-hint answer-leakage score"]})
    levels = ["leaks", "does not leak"]

    def name(b: pd.Series) -> pd.Series:
        return b.astype(bool).map({True: levels[0], False: levels[1]})

    tab = pd.crosstab(name(table["stored_leaks"]), name(table["our_filter_leaks"]))
    tab = tab.reindex(index=levels, columns=levels, fill_value=0)
    tab.index.name, tab.columns.name = f"stored score ≥ {threshold:g}", "our filter"
    return tab


def passages_per_k() -> pd.DataFrame:
    """Σ_{j=1..k} C(k, j)·j! for k = 1..5 (paper 000 §3.2.1)."""
    return pd.DataFrame({"hints k": range(1, 6), "passages": [n_subset_permutations(k) for k in range(1, 6)]})


def labeling_throughput(res: BuildResult) -> pd.DataFrame:
    """Readings (passages × labelers) labeled in this run and their rate, judge calls included."""
    n_read = sum(len(r.generations) * len(res.config.labelers) for r in res.labels.values())
    secs = res.timings.get("labeling", 0.0)
    rows = [{"labelers": ", ".join(res.config.labelers), "judge": res.config.judge_model,
             "passages": sum(len(r.generations) for r in res.labels.values()), "readings": n_read,
             "seconds (this run)": round(secs, 1),
             "readings/s": round(n_read / secs, 2) if secs > 0.5 else None}]
    return pd.DataFrame(rows)
