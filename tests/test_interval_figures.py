"""95 % intervals on the figures of notebooks 02, 05, 06 and on notebook 03's oracle table, on
four-question cases checked by hand.

The percentile bootstrap of a mean over 4 questions is checked exactly: a resample is 4 draws
with replacement, so with values {0, 0, 0, 1} the number X of 1s drawn is Binomial(4, 1/4):
P(X=0) = 0.316, P(X≤2) = 0.949, P(X≤3) = 0.996. The 2.5th percentile of the resampled means is
therefore 0 and the 97.5th is 3/4 (10,000 seeded resamples sit far from those boundaries):
25 % [0, 75]. The same argument gives every interval below.
"""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pandas as pd
import pytest

from inferqa_utils.measure.metrics import evaluate, hit_per_query
from inferqa_utils.measure.uncertainty import interval_columns, mean_ci, metric_intervals, with_intervals
from inferqa_utils.present.figures import INTERVAL_NOTE, error_bars

matplotlib.use("Agg")

# four questions with one relevant passage each: q1–q3 find it at rank 2, q4 at rank 1; q5 has no
# relevant passage and counts for no metric
QRELS = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}, "q4": {"d": 1}, "q5": {"e": 0}}
RUN = {"q1": [("x", 2.0), ("a", 1.0)], "q2": [("x", 2.0), ("b", 1.0)], "q3": [("x", 2.0), ("c", 1.0)],
       "q4": [("d", 2.0), ("x", 1.0)], "q5": [("e", 1.0)]}
#: nDCG of one relevant passage (gain 1) at rank 2: 1 / log2(3)
AT2 = 1 / math.log2(3)


def _bars(ax) -> list[list[tuple[float, float, float]]]:
    """Per error-bar container of ``ax``: its vertical bars as (x, y_low, y_high)."""
    from matplotlib.container import ErrorbarContainer

    out = []
    for c in ax.containers:
        if isinstance(c, ErrorbarContainer) and c.lines[2]:
            segs = c.lines[2][0].get_segments()
            out.append(
                [(float(s[0][0]), float(min(s[0][1], s[1][1])), float(max(s[0][1], s[1][1]))) for s in segs]
            )
    return out


def test_error_bars_are_distances_to_the_interval_ends():
    err = error_bars([25.0, 50.0, float("nan"), 10.0], [0.0, 50.0, 1.0, 10.01], [75.0, 60.0, 2.0, 20.0])
    # below: 25 − 0, 50 − 50, unknown value → 0, 10 − 10.01 < 0 (rounding) → 0; above: 75 − 25, 60 − 50, 0, 20
    # − 10
    np.testing.assert_allclose(err, [[25.0, 0.0, 0.0, 0.0], [50.0, 10.0, 0.0, 10.0]])
    with pytest.raises(ValueError, match="one length"):
        error_bars([1.0, 2.0], [0.0], [3.0, 4.0])


def test_interval_columns_hand_checked_and_equal_to_mean_ci():
    assert interval_columns([0, 0, 0, 1], "Hit@1") == {"Hit@1": 25.0, "Hit@1_lo": 0.0, "Hit@1_hi": 75.0}
    # NaN = a question that does not count: dropped, not a zero
    assert interval_columns([0, float("nan"), 0, 0, 1], "Hit@1") == interval_columns([0, 0, 0, 1], "Hit@1")
    # {0.5, 1, 1, 1}: mean 0.875; the resampled mean is 1 − X/8 with X ~ Bin(4, 1/4) halves drawn,
    # P(X ≥ 3) = 0.051 > 0.025 ≥ P(X = 4) = 0.004 → 2.5th percentile 1 − 3/8; 97.5th: 1
    assert interval_columns([0.5, 1, 1, 1], "nDCG@10") == {
        "nDCG@10": 87.5,
        "nDCG@10_lo": 62.5,
        "nDCG@10_hi": 100.0,
    }
    ci = mean_ci([0.3, 0.9, 0.1, 0.4]).scaled(100)  # the package's interval, rounded to 2 digits
    assert interval_columns([0.3, 0.9, 0.1, 0.4], "m") == {"m": round(ci.value, 2), "m_lo": round(ci.lo, 2),
                                                            "m_hi": round(ci.hi, 2)}
    empty = interval_columns([float("nan")], "m")
    assert all(math.isnan(v) for v in empty.values())


def test_metric_intervals_hand_checked_and_equal_to_evaluate():
    t = metric_intervals({"r": RUN}, QRELS, threshold=1, metrics=("Hit@1", "Hit@2", "nDCG@10"))
    r = t.loc["r"]
    assert (r["Hit@1"], r["Hit@1_lo"], r["Hit@1_hi"]) == (25.0, 0.0, 75.0)  # per question 0, 0, 0, 1
    assert (r["Hit@2"], r["Hit@2_lo"], r["Hit@2_hi"]) == (100.0, 100.0, 100.0)
    # nDCG per question AT2, AT2, AT2, 1: mean AT2 + (1 − AT2)/4; resampled AT2 + (1 − AT2)·X/4, X ~ Bin(4,
    # 1/4)
    assert r["nDCG@10"] == pytest.approx(round(100 * (AT2 + (1 - AT2) / 4), 2))
    assert r["nDCG@10_lo"] == pytest.approx(round(100 * AT2, 2))
    assert r["nDCG@10_hi"] == pytest.approx(round(100 * (AT2 + 0.75 * (1 - AT2)), 2))
    assert (r["n_questions"], r["n_questions_ndcg"], r["threshold"]) == (4, 4, 1)
    ev = evaluate(RUN, QRELS, 1, ("Hit@1", "Hit@2", "nDCG@10")).round(2).iloc[0]
    assert [r[m] for m in ("Hit@1", "Hit@2", "nDCG@10")] == [ev[m] for m in ("Hit@1", "Hit@2", "nDCG@10")]


def test_hit_curves_carry_hand_checked_intervals_and_the_plot_draws_them():
    from inferqa_utils.retrieval import conditions as ex

    pq = hit_per_query(RUN, QRELS, ks=(1, 2), threshold=1)
    assert (
        list(pq.index) == ["q1", "q2", "q3", "q4"]
        and pq[1].tolist() == [0, 0, 0, 1]
        and pq[2].tolist() == [1] * 4
    )
    curves = ex.hit_curves({"r": RUN}, QRELS, 1, "answer-supporting", ks=(1, 2))
    assert curves[["k", "hit", "hit_lo", "hit_hi", "n_questions"]].values.tolist() == [
        [1, 25.0, 0.0, 75.0, 4],
        [2, 100.0, 100.0, 100.0, 4],
    ]
    fig = ex.plot_hit_curves(curves, "t")
    (bars,) = _bars(fig.axes[0])
    assert [(lo, hi) for _x, lo, hi in bars] == [(0.0, 75.0), (100.0, 100.0)]
    assert INTERVAL_NOTE in fig._suptitle.get_text()


# ----------------------------------------------------------------------------- 03 / 05 oracle table

# own passages a (label 1) and b (label 2), id order a, b: DCG = 1 + 3/log2(3), IDCG = 3 + 1/log2(3);
# q4 has the labels the other way round, so the id order is ideal there
OWN = {"q1": {"a": 1, "b": 2}, "q2": {"a": 1, "b": 2}, "q3": {"a": 1, "b": 2}, "q4": {"a": 2, "b": 1}}
D = (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))  # 0.7967


def test_oracle_table_has_hand_checked_intervals_in_the_package_format():
    from inferqa_utils.rerank.conditions import oracle_table
    from inferqa_utils.rerank.evaluation import ORACLE_BASELINE, ORACLE_METRICS, oracle_scores

    queries = {q: "?" for q in OWN}
    t = oracle_table([], None, queries, OWN, {})
    assert list(t.columns) == [c for m in ORACLE_METRICS for c in (m, f"{m}_lo", f"{m}_hi")] + [
        "n_questions_ndcg"
    ]
    row = t.loc[ORACLE_BASELINE]
    # per question D, D, D, 1 (two passages: every cutoff sees both)
    for m in ORACLE_METRICS:
        assert row[m] == pytest.approx(round(100 * (D + (1 - D) / 4), 2))
        assert (row[f"{m}_lo"], row[f"{m}_hi"]) == pytest.approx(
            (round(100 * D, 2), round(100 * (D + 0.75 * (1 - D)), 2))
        )
    assert row["n_questions_ndcg"] == 4
    shown = with_intervals(t, ORACLE_METRICS).loc[ORACLE_BASELINE, "nDCG@10"]
    assert (
        shown == f"{100 * (D + (1 - D) / 4):.1f} [{100 * D:.1f}, {100 * (D + 0.75 * (1 - D)):.1f}]"
    )  # 84.8 [79.7, 94.9]
    # a reranker that reverses the id order: ideal on q1–q3, D on q4 → 1, 1, 1, D; 2.5th percentile at 3 draws
    # of D
    first = {q: [("a", 2.0), ("b", 1.0)] for q in OWN}
    rev = oracle_scores(first, {"rev": {q: [("b", 2.0), ("a", 1.0)] for q in OWN}}, OWN).loc["rev"]
    assert (rev["nDCG@10"], rev["nDCG@10_lo"], rev["nDCG@10_hi"]) == pytest.approx(
        (round(100 * (1 - (1 - D) / 4), 2), round(100 * (1 - 0.75 * (1 - D)), 2), 100.0))


def test_finetune_oracle_rows_have_hand_checked_intervals(monkeypatch):
    """Notebook 05's oracle rows: the id-order baseline and a cross-encoder (here one that reverses
    the id order) over the asked questions' own passages only (q9 is in the qrels, not asked):
    the baseline D, D, D, 1 and the reversed 1, 1, 1, D, with the intervals of the table above."""
    from inferqa_utils.finetune import conditions as fx
    from inferqa_utils.rerank.evaluation import ORACLE_BASELINE, ORACLE_METRICS

    def reverse(name, queries, first, corpus, depth, path):
        return {q: [(p, float(len(ranked) - i)) for i, (p, _) in enumerate(reversed(ranked))]
                for q, ranked in first.items()}, 0.0

    monkeypatch.setattr(fx, "cached_rerank", reverse)
    queries = {q: "?" for q in OWN}
    table, runs = fx.oracle_rows(["FT-rev"], queries, OWN | {"q9": {"z": 2, "y": 0}}, {})
    assert set(runs) == {"FT-rev"} and set(runs["FT-rev"]) == set(OWN)
    assert list(table.index) == [ORACLE_BASELINE, "FT-rev"]
    assert list(table.columns) == [c for m in ORACLE_METRICS for c in (m, f"{m}_lo", f"{m}_hi")] + [
        "n_questions_ndcg"
    ]
    base, rev = table.loc[ORACLE_BASELINE], table.loc["FT-rev"]
    for m in ORACLE_METRICS:
        assert (base[m], base[f"{m}_lo"], base[f"{m}_hi"]) == pytest.approx(
            (round(100 * (D + (1 - D) / 4), 2), round(100 * D, 2), round(100 * (D + 0.75 * (1 - D)), 2)))
        assert (rev[m], rev[f"{m}_lo"], rev[f"{m}_hi"]) == pytest.approx(
            (round(100 * (1 - (1 - D) / 4), 2), round(100 * (1 - 0.75 * (1 - D)), 2), 100.0))
    assert table["n_questions_ndcg"].tolist() == [4, 4]


# ----------------------------------------------------------------------------- 06 EM@k / AcEM@k / probes

def _inc(patterns: dict[str, str]) -> pd.DataFrame:
    rows = [
        {
            "system": "bm25",
            "qid": q,
            "k": k,
            "pid": f"{q}-{k}",
            "answer": "x",
            "em": e == "1",
            "judged": e == "1",
            "no_answer": False,
            "adds": True,
            "context_chars": 1,
        }
        for q, pat in patterns.items()
        for k, e in enumerate(pat, start=1)
    ]
    return pd.DataFrame(rows)


PATTERNS = {"q1": "10", "q2": "00", "q3": "00", "q4": "01"}


def test_em_curves_and_probe_curves_carry_hand_checked_intervals():
    from inferqa_utils.damaging import measures

    c = measures.em_curves(_inc(PATTERNS))
    s = c[c["metric"] == "em"].set_index("k")
    # EM@1 per question 1, 0, 0, 0 and EM@2 0, 0, 0, 1: 25 [0, 75]
    assert s.loc[1, ["EM", "EM_lo", "EM_hi"]].tolist() == [25.0, 0.0, 75.0]
    assert s.loc[2, ["EM", "EM_lo", "EM_hi"]].tolist() == [25.0, 0.0, 75.0]
    # AcEM@2 per question 1, 0, 0, 1: resampled mean X/4, X ~ Bin(4, 1/2), P(X=0) = P(X=4) = 1/16 > 0.025
    assert s.loc[2, ["AcEM", "AcEM_lo", "AcEM_hi"]].tolist() == [50.0, 0.0, 100.0]
    assert s.loc[1, ["AcEM", "AcEM_lo", "AcEM_hi"]].tolist() == [25.0, 0.0, 75.0]
    probes = pd.DataFrame(
        [
            {
                "system": "bm25",
                "qid": q,
                "metric": m,
                "k": 2,
                "probe": "P3",
                "n_kept": 1,
                "kept": "1",
                "answer": "x",
                "correct": q == "q2",
            }
            for m in ("em", "judged")
            for q in PATTERNS
        ]
    )
    pc = measures.probe_curves(_inc(PATTERNS), probes)
    p = pc[pc["metric"] == "em"].iloc[0]
    assert (p["k"], p["Probe 3"], p["Probe 3_lo"], p["Probe 3_hi"]) == (2, 25.0, 0.0, 75.0)
    assert (p["EM_lo"], p["EM_hi"], p["AcEM_lo"], p["AcEM_hi"]) == (0.0, 75.0, 0.0, 100.0)


def test_em_curve_plot_draws_the_intervals():
    from inferqa_utils.damaging import measures
    from inferqa_utils.damaging import summary as dr

    df = _inc(PATTERNS)
    probes = pd.DataFrame(
        [
            {
                "system": "bm25",
                "qid": q,
                "metric": m,
                "k": 2,
                "probe": "P3",
                "n_kept": 1,
                "kept": "1",
                "answer": "x",
                "correct": q == "q2",
            }
            for m in ("em", "judged")
            for q in PATTERNS
        ]
    )
    fig = dr.plot_em_curves({"answer-supporting": measures.em_curves(df)},
                            {"answer-supporting": measures.probe_curves(df, probes)}, "t")
    em_bars, acem_bars, probe_bars = _bars(
        fig.axes[0]
    )  # strict row: EM (left of k), AcEM (right), Probe 3 (on k)
    np.testing.assert_allclose(em_bars, [(0.88, 0.0, 75.0), (1.88, 0.0, 75.0)])
    np.testing.assert_allclose(acem_bars, [(1.12, 0.0, 75.0), (2.12, 0.0, 100.0)])
    np.testing.assert_allclose(probe_bars, [(2.0, 0.0, 75.0)])
    assert INTERVAL_NOTE in fig._suptitle.get_text()


# ----------------------------------------------------------------------------- 05 figure

def test_finetuning_plot_draws_retrieval_oracle_and_reading_intervals():
    from inferqa_utils.finetune.conditions import plot_finetuning

    losses = pd.DataFrame(
        {"model": ["FT-MiniLM-N1"], "kind": ["sentence-transformers"], "N": [1], "step": [1], "loss": [0.5]}
    )
    retrieval = pd.DataFrame({"N": [None, 1.0], "negative kind": ["", "random"], "Hit@10": [40.0, 25.0]},
                             index=pd.Index(["minilm", "FT-MiniLM-N1"], name="run"))
    intervals = pd.DataFrame({"Hit@10_lo": [30.0, 0.0], "Hit@10_hi": [50.0, 75.0]}, index=retrieval.index)
    oracle = pd.DataFrame({"N": [None, 1.0], "negative kind": ["", "random"], "nDCG@10": [80.0, 87.5],
                           "nDCG@10_lo": [70.0, 62.5], "nDCG@10_hi": [90.0, 100.0]},
                          index=["no reranker (id order)", "FT-CrossEncoder-N1"])
    reading = pd.DataFrame({"system": ["minilm", "bm25"], "EM": [25.0, 50.0], "EM_lo": [0.0, 0.0],
                            "EM_hi": [75.0, 100.0], "judged": [25.0, 87.5], "judged_lo": [0.0, 62.5],
                            "judged_hi": [75.0, 100.0], "n": [4, 4]})
    fig = plot_finetuning(
        losses, retrieval, "minilm", ["Hit@10"], oracle, reading, title="t", intervals=intervals
    )
    ax_b, ax_c = fig.axes[1], fig.axes[2]
    assert [[(lo, hi) for _x, lo, hi in b] for b in _bars(ax_b)] == [[(0.0, 75.0)], [(62.5, 100.0)]]
    # shaded bands (axhspan rectangles, y in data units): vanilla Hit@10 [30, 50], id-order oracle [70, 90]
    assert sorted((p.get_bbox().y0, p.get_bbox().y1) for p in ax_b.patches) == [(30.0, 50.0), (70.0, 90.0)]
    assert [[(lo, hi) for _x, lo, hi in b] for b in _bars(ax_c)] == [[(0.0, 75.0), (0.0, 100.0)],
                                                                    [(0.0, 75.0), (62.5, 100.0)]]
    assert INTERVAL_NOTE in fig._suptitle.get_text()
    assert np.isclose(ax_c.get_ylim()[1], 115.0)  # room for the highest interval end
