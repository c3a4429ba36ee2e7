"""Tables that narrate a build in notebook 01."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ..passages import n_subset_permutations
from .qtype import classifier_accuracy

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


def passages_per_k() -> pd.DataFrame:
    """Σ_{j=1..k} C(k, j)·j! for k = 1..5 (SPEC §3 step 6)."""
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
