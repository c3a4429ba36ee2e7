"""Measures over the EM patterns and probe readings of incremental inference (paper 004 §4–7).

The readings come from :mod:`inferqa_utils.damaging.incremental` (one row per question and
prefix k, and one per probe reading); here they become the numbers notebook 06 writes, each mean
over questions with its seeded 95 % bootstrap interval
(:mod:`inferqa_utils.measure.uncertainty`). For a question with pattern ``p`` (``p[k] = EM@k``):

* :func:`em_curves` — ``EM@k = mean_q p_q[k]`` and ``AcEM@k = mean_q max_{j≤k} p_q[j]`` in %
  (paper 004 §4, Fig. 3);
* :func:`probe_curves` — those beside Probe 1–6 @k, the share of questions a probe's kept passages
  answer (paper 004 §6.1, Fig. 5/9, Table 6);
* :func:`type_table` — the passage types (IZ, DP, DN, SP, SN) counted over every retrieved passage
  (paper 004 §5.1);
* :func:`damaging_intervals` — the damaging effect ``AcEM@N − EM@N`` with its paired interval and
  sign-flip test (paper 004 §3).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ..measure.uncertainty import interval_columns, mean_ci, paired_difference
from .incremental import METRIC_LABELS, METRICS, patterns_of, real_types
from .patterns import TYPES, acem_at, aggregate_em_curves


def em_curves(inc: pd.DataFrame) -> pd.DataFrame:
    """Mean EM@k and AcEM@k (%) per system, metric and k (paper 004 Fig. 3 data), each with its
    seeded 95 % bootstrap interval over questions (``EM_lo`` / ``EM_hi``, ``AcEM_lo`` / ``AcEM_hi``:
    :func:`inferqa_utils.measure.uncertainty.interval_columns` of the per-question values
    ``EM_q@k = p_q[k]`` and ``AcEM_q@k = max_{j≤k} p_q[j]`` of the patterns ``p_q``).

    ``metric="em"``: EM / AcEM; ``"judged"``: SeEM / SeAcEM (same columns ``EM`` and ``AcEM``).
    """
    frames = []
    for system, g in inc.groupby("system", sort=False):
        for metric in METRICS:
            pats = list(patterns_of(g, metric).values())
            curve = aggregate_em_curves(pats)
            for name, per_q in (
                ("EM", lambda p, k: float(p[k - 1] == "1")),
                ("AcEM", lambda p, k: float(acem_at(p, k))),
            ):
                iv = [interval_columns([per_q(p, int(k)) for p in pats], name) for k in curve["k"]]
                curve[f"{name}_lo"] = [r[f"{name}_lo"] for r in iv]
                curve[f"{name}_hi"] = [r[f"{name}_hi"] for r in iv]
            frames.append(curve.assign(system=system, metric=metric, n_questions=len(pats)))
    return pd.concat(frames, ignore_index=True)[
        ["system", "metric", "k", "EM", "EM_lo", "EM_hi", "AcEM", "AcEM_lo", "AcEM_hi", "n_questions"]
    ]


def probe_curves(inc: pd.DataFrame, probes_df: pd.DataFrame) -> pd.DataFrame:
    """Paper 004 Fig. 5/9 and Table 6 data: per system, metric and probe k, EM@k, AcEM@k and
    Probe 1–6 @k (all % of questions), each with its seeded 95 % bootstrap interval over questions
    (``<column>_lo`` / ``<column>_hi``; a probe's from the per-question 0/1 ``correct`` of its
    readings). Table 2/6 is the row with k = N (:func:`~inferqa_utils.damaging.summary.probe_table`)."""
    curves = em_curves(inc)
    if probes_df.empty:
        return curves.iloc[0:0]
    rows = []
    for (system, metric, k), g in probes_df.groupby(["system", "metric", "k"], sort=False):
        row: dict = {"system": system, "metric": metric, "k": k}
        for probe, gp in g.groupby("probe", sort=True):
            row.update(interval_columns(gp["correct"].astype(float).to_numpy(), f"Probe {str(probe)[1:]}"))
        rows.append(row)
    out = curves.merge(pd.DataFrame(rows), on=["system", "metric", "k"], how="inner")
    return out.round(2)


def type_table(inc: pd.DataFrame, metric: str = "em") -> pd.DataFrame:
    """Passage-type counts (paper 004) per system over every retrieved passage of every pattern
    (padding of short lists excluded), the number of questions and the share (%) of questions
    whose pattern has at least one DN (a damaging passage)."""
    rows = []
    for system, g in inc.groupby("system", sort=False):
        counts = dict.fromkeys(TYPES, 0)
        with_dn = 0
        pats = patterns_of(g, metric)
        for qid, gq in g.groupby("qid", sort=False):
            types = real_types(pats[qid], int((gq["pid"] != "").sum()))
            for t in types:
                counts[t] += 1
            with_dn += "DN" in types
        rows.append({"system": system, "metric": metric, **counts, "questions": len(pats),
                     "questions with DN (%)": round(100.0 * with_dn / len(pats), 2)})
    return pd.DataFrame(rows)


def damaging_intervals(inc_by_corpus: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Per corpus, system and metric: EM@N and AcEM@N (paper 004 §3) with seeded 95 % bootstrap
    intervals over questions, and the damaging effect ``AcEM@N − EM@N`` — the share of questions
    answered correctly at some prefix k ≤ N but not at N — with its paired-bootstrap interval and
    the two-sided p-value of the paired sign-flip test (:mod:`inferqa_utils.measure.uncertainty`). In %.

    Per question with pattern ``p`` (one 0/1 per prefix): ``EM@N = p[N]``, ``AcEM@N = max_k p[k]``."""

    rows = []
    for corpus, inc in inc_by_corpus.items():
        if inc.empty:
            continue
        for system, g in inc.groupby("system", sort=False):
            for metric, (em_name, ac_name) in METRIC_LABELS.items():
                pats = list(patterns_of(g, metric).values())
                em = [float(p[-1] == "1") for p in pats]
                acem = [float(acem_at(p, len(p))) for p in pats]
                e, a, d = mean_ci(em).scaled(100), mean_ci(acem).scaled(100), paired_difference(acem, em)
                rows.append(
                    {
                        "corpus": corpus,
                        "system": system,
                        "metric": metric,
                        "N": max(map(len, pats)),
                        "EM@N": round(e.value, 2),
                        "EM_lo": round(e.lo, 2),
                        "EM_hi": round(e.hi, 2),
                        "AcEM@N": round(a.value, 2),
                        "AcEM_lo": round(a.lo, 2),
                        "AcEM_hi": round(a.hi, 2),
                        "AcEM − EM": round(100 * d.diff.value, 2),
                        "diff_lo": round(100 * d.diff.lo, 2),
                        "diff_hi": round(100 * d.diff.hi, 2),
                        "p (paired)": round(d.p_value, 4),
                        "damaged questions": int(sum(x > y for x, y in zip(acem, em, strict=True))),
                        "n_questions": len(pats),
                        "labels": f"{em_name} / {ac_name}",
                    }
                )
    return pd.DataFrame(rows)
