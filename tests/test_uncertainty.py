"""Bootstrap intervals, paired randomization tests and Holm correction, on hand-checked cases."""

from __future__ import annotations

import pandas as pd
import pytest

from inferqa_utils.measure.uncertainty import holm, mean_ci, paired_difference


def test_mean_ci_degenerate_and_seeded():
    assert (mean_ci([1, 1, 1, 1]).lo, mean_ci([1, 1, 1, 1]).hi) == (1.0, 1.0)
    one = mean_ci([0.25])
    assert (one.value, one.lo, one.hi, one.n) == (0.25, 0.25, 0.25, 1)
    em = [1] * 6 + [0] * 42  # 6 of 48 questions right: 12.5 %
    ci = mean_ci(em)
    # A resample of 6 ones and 42 zeros has mean B/48 with B ~ Binomial(48, 1/8), so the percentile
    # interval is that law's 2.5 % and 97.5 % quantiles (P(B = b) = C(48, b) (1/8)^b (7/8)^(48-b)):
    # P(B ≤ 1) = 0.0129 < 0.025 ≤ P(B ≤ 2) = 0.0508 → lo = 2/48; P(B ≤ 10) = 0.9679 < 0.975 ≤
    # P(B ≤ 11) = 0.9867 → hi = 11/48. The empirical CDF of 10,000 resamples has sd ≤ 0.0018, so
    # every boundary is ≥ 4 sd away. (The normal approximation, 0.125 ± 1.96·0.048, says [0.031, 0.219].)
    assert (ci.value, ci.n, ci.confidence) == (0.125, 48, 0.95)
    assert ci.lo == pytest.approx(2 / 48) and ci.hi == pytest.approx(11 / 48)
    # a 90 % interval: P(B ≤ 9) = 0.9298 < 0.95 ≤ P(B ≤ 10) = 0.9679 → hi = 10/48
    assert mean_ci(em, confidence=0.90).hi == pytest.approx(10 / 48)
    assert mean_ci(em) == ci  # seeded: identical on a second call
    assert str(ci.scaled(100)) == "12.50 [4.17, 22.92]"  # 100·2/48 = 4.1667, 100·11/48 = 22.9167
    with pytest.raises(ValueError, match="no questions"):
        mean_ci([])
    with pytest.raises(ValueError, match="NaN"):
        mean_ci([1.0, float("nan")])


def test_paired_difference_exact_sign_flip():
    # identical systems: no difference, p = 1
    same = paired_difference([1, 0, 1], [1, 0, 1])
    assert same.diff.value == 0 and same.p_value == 1.0
    # A right on all 10 questions, B on none: of the 2^10 sign flips only the two uniform ones reach
    # |mean| = 1, so the exact two-sided p-value is 2 / 1024
    r = paired_difference([1] * 10, [0] * 10)
    assert r.diff.value == 1.0 and r.p_value == pytest.approx(2 / 1024)
    # one discordant question of 48: p = 1 (flipping it is as extreme as not)
    a, b = [1] + [0] * 47, [0] * 48
    assert paired_difference(a, b).p_value == pytest.approx(1.0)
    # 6 discordant questions all favouring A: p = 2 / 2^6
    a, b = [1] * 6 + [0] * 42, [0] * 48
    assert paired_difference(a, b).p_value == pytest.approx(2 / 64)
    with pytest.raises(ValueError, match="same questions"):
        paired_difference([1, 0], [1])


def test_holm_hand_checked():
    # sorted 0.01, 0.03, 0.04 → 3·0.01 = 0.03, max(0.03, 2·0.03) = 0.06, max(0.06, 1·0.04) = 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


# ----------------------------------------------------------------------------- run comparison

QRELS = {"q1": {"a": 2, "b": 1, "z": 0}, "q2": {"c": 1}, "q3": {"d": 2}, "q4": {"e": 0}}
R1 = {"q1": [("x", 3.0), ("a", 2.0), ("b", 1.0)], "q2": [("x", 2.0), ("c", 1.0)], "q3": [("y", 1.0)]}
R2 = {"q1": [("a", 1.0), ("x", 3.0)], "q2": [("c", 2.0), ("x", 1.0)], "q3": [("d", 1.0)], "q4": [("e", 1.0)]}


def test_compare_runs_per_question_equals_per_query_and_hand_values():
    from inferqa_utils.measure.metrics import per_query
    from inferqa_utils.measure.uncertainty import compare_runs

    table, long = compare_runs({"r1": R1, "r2": R2}, QRELS, metrics=("Hit@1", "nDCG@10", "MRR@10"))
    for name, run in (("r1", R1), ("r2", R2)):
        ref = per_query(run, QRELS, 1, ["Hit@1", "nDCG@10", "MRR@10"])
        for m in ref.columns:  # the questions that count, in sorted order, with per_query's values
            got = long[(long["system"] == name) & (long["measure"] == m)]
            assert got["qid"].tolist() == sorted(ref[m].dropna().index)
            assert got["value"].tolist() == ref[m].dropna().sort_index().tolist()
    # q4 (no label > 0) counts nowhere; r1 q1: a (label 2) at rank 2, b (label 1) at rank 3:
    # DCG = 3/log2(3) + 1/log2(4) = 2.3928, IDCG = 3 + 1/log2(3) = 3.6309 → 0.6590 (the list order is the
    # ranking)
    r1 = long[(long["system"] == "r1") & (long["measure"] == "nDCG@10")].set_index("qid")["value"]
    assert set(r1.index) == {"q1", "q2", "q3"} and r1["q1"] == pytest.approx(0.6590, abs=1e-4)
    assert (
        table.loc["r1", "Hit@1"] == 0.0
        and table.loc["r2", "Hit@1"] == 100.0
        and table.loc["r2", "ΔHit@1"] == 100.0
    )
    # nDCG@10 per question, r1: q1 0.6590 (above), q2 c at rank 2: 1/log2 3 = 0.6309, q3 0
    # → mean 42.998 → 43.0; r2: q1 a first: 3 / 3.6309 = 0.8262, q2 and q3 first → 1 → mean 94.208
    # → 94.21, Δ = 94.21 − 43.0 = 51.21. MRR@10, r1: [1/2, 1/2, 0] → 33.33; r2: [1, 1, 1] → 100, Δ = 66.67
    means = [table.loc[r, m] for r in ("r1", "r2") for m in ("nDCG@10", "MRR@10")]
    assert means == [43.0, 33.33, 94.21, 100.0]
    assert (table.loc["r2", "ΔnDCG@10"], table.loc["r2", "ΔMRR@10"]) == (51.21, 66.67)
    # every measure: 3 discordant questions, all in r2's favour: of the 2^3 sign flips only the data
    # itself is as extreme, exact two-sided p = 2 · 1/8 = 0.25; Holm over the
    # table's 3 comparisons: 3 · 0.25 = 0.75, then max(0.75, 2 · 0.25), max(0.75, 0.25) → 0.75 each
    for m in ("Hit@1", "nDCG@10", "MRR@10"):
        assert (table.loc["r2", f"p {m}"], table.loc["r2", f"p_holm {m}"]) == (0.25, 0.75), m
    assert table.loc["r2", "sig Hit@1"] == "" and pd.isna(
        table.loc["r1", "p Hit@1"]
    )  # the baseline has no test


def test_compare_runs_significant_difference_is_marked():
    from inferqa_utils.measure.uncertainty import compare_runs

    qrels = {f"q{i}": {"good": 1} for i in range(30)}
    good = {q: [("good", 2.0), ("bad", 1.0)] for q in qrels}
    bad = {q: [("bad", 2.0), ("good", 1.0)] for q in qrels}
    table, _ = compare_runs({"bad": bad, "good": good}, qrels, metrics=("Hit@1",))
    assert table.loc["good", "Hit@1"] == 100.0 and table.loc["good", "p Hit@1"] < 0.01
    assert table.loc["good", "sig Hit@1"] == "*"
    shown = with_intervals_of(table)
    assert (
        shown.loc["good", "Hit@1"] == "100.0 [100.0, 100.0]*"
        and shown.loc["bad", "Hit@1"] == "0.0 [0.0, 0.0]"
    )


def test_compare_runs_missing_questions_and_metrics_nobody_counts():
    from inferqa_utils.measure.uncertainty import compare_runs

    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 0}}
    # "empty" lacks every question: each question that counts scores 0 there
    table, long = compare_runs({"full": {"q1": [("a", 1.0)], "q2": [("b", 1.0)]}, "empty": {}}, qrels,
                               metrics=("Hit@1", "Recall@1"), threshold=2)
    # threshold 2: no question has a label-2 passage, so no metric counts any question
    assert table.loc["full", "n Hit@1"] == 0 and pd.isna(table.loc["empty", "Hit@1"]) and long.empty
    assert "p Hit@1" not in table.columns
    table, long = compare_runs({"full": {"q1": [("a", 1.0)], "q2": [("b", 1.0)]}, "empty": {}}, qrels,
                               metrics=("Hit@1",))
    assert (table.loc["full", "Hit@1"], table.loc["empty", "Hit@1"], table.loc["empty", "n Hit@1"]) == (
        100.0, 0.0, 2
    )
    assert long[long["system"] == "empty"][["qid", "value"]].values.tolist() == [["q1", 0.0], ["q2", 0.0]]
    # two discordant questions: of the 4 sign flips, 2 are as extreme → p = 0.5
    assert table.loc["empty", "p Hit@1"] == 0.5


def with_intervals_of(table):
    from inferqa_utils.measure.uncertainty import with_intervals

    return with_intervals(table, ["Hit@1"])


def test_answers_comparison_hand_checked():
    from inferqa_utils.measure.uncertainty import answers_comparison

    rows = [{"qid": f"q{i}", "system": s, "em": ok}
            for i in range(10) for s, ok in (("bm25", i < 2), ("ours", i < 6))]
    t = answers_comparison(pd.DataFrame(rows), baseline="bm25")
    assert t.loc["bm25", "em"] == 20.0 and t.loc["ours", "em"] == 60.0 and t.loc["ours", "Δem"] == 40.0
    # 4 discordant questions all for "ours": exact sign-flip p = 2 / 16 = 0.125; one comparison → Holm = raw
    assert (
        t.loc["ours", "p em"] == 0.125
        and t.loc["ours", "p_holm em"] == 0.125
        and t.loc["ours", "sig em"] == ""
    )
    assert t.loc["bm25", "n"] == 10 and pd.isna(t.loc["bm25", "p em"])
    from inferqa_utils.measure.uncertainty import comparison_display

    shown = comparison_display(t)
    assert shown.loc["ours", "em"].startswith("60.0 [") and shown.loc["ours", "Δ"].startswith("40.0 [")
    assert shown.loc["bm25", "Δ"] == "—"
    # a significant difference: the mark belongs to Δ, never to the system's own EM
    rows = [
        {"qid": f"q{i}", "system": s, "em": ok}
        for i in range(30)
        for s, ok in (("bm25", False), ("ours", i < 20))
    ]
    sig = comparison_display(answers_comparison(pd.DataFrame(rows), baseline="bm25"))
    assert sig.loc["ours", "Δ"].endswith("*") and not sig.loc["ours", "em"].endswith("*")
