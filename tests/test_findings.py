"""The verdict rule (inferqa_utils.measure.verdict) by hand: exact tests on discordant pairs, Tango's
score test at a margin, the guards, Holm over a profile's findings, by construction; and the paper
numbers file. Each finding's measure is driven to all three verdicts in tests/test_finding_rules.py."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from inferqa_utils.core.errors import DataFormatError
from inferqa_utils.measure import verdict as vr
from inferqa_utils.measure.decidability import sign_test_power, sign_test_units, units_needed
from inferqa_utils.measure.paper import Finding, paper_value
from inferqa_utils.verdicts import findings as fnd


def _finding(relation: str, **bounds: float) -> Finding:
    return Finding("x", "claim", "paper", "A", None, "B", None, relation, dict(bounds), "optimal_vs_pipeline")


def _pairs(n10: int, n01: int, n00: int = 0, n11: int = 0) -> tuple[np.ndarray, np.ndarray]:
    a = [1.0] * n10 + [0.0] * n01 + [0.0] * n00 + [1.0] * n11
    b = [0.0] * n10 + [1.0] * n01 + [0.0] * n00 + [1.0] * n11
    return np.array(a), np.array(b)


@pytest.mark.parametrize(
    ("relation", "bounds", "lo", "hi", "verdict"),
    [
        ("a > b", {}, 1.0, 3.0, vr.HOLDS),
        ("a > b", {}, -1.0, 2.0, vr.INCONCLUSIVE),
        ("a > b", {}, -3.0, -1.0, vr.CONTRADICTED),
        ("a > b", {}, 0.0, 0.0, vr.INCONCLUSIVE),  # identical outcomes: no evidence either way
        ("a > b", {}, 0.0, 2.0, vr.INCONCLUSIVE),  # touching the edge from inside …
        ("a > b", {}, -2.0, 0.0, vr.INCONCLUSIVE),  # … and from outside: both sides alike
        ("a < b", {}, -3.0, -1.0, vr.HOLDS),
        ("a < b", {}, -2.0, 0.0, vr.INCONCLUSIVE),
        ("a < b", {}, 1.0, 2.0, vr.CONTRADICTED),
        ("adds little", {"margin": 5.0}, -2.0, 3.0, vr.HOLDS),
        ("adds little", {"margin": 5.0}, -4.0, -1.0, vr.CONTRADICTED),  # inside the band, but it hurts
        ("adds little", {"margin": 5.0}, -2.0, 8.0, vr.INCONCLUSIVE),
        ("adds little", {"margin": 5.0}, -2.0, 5.0, vr.INCONCLUSIVE),  # touching the margin
        ("adds little", {"margin": 5.0}, 6.0, 9.0, vr.CONTRADICTED),
        ("a - b >= margin", {"margin": 10.0}, 12.0, 30.0, vr.HOLDS),
        ("a - b >= margin", {"margin": 10.0}, 10.0, 30.0, vr.INCONCLUSIVE),
        ("a - b >= margin", {"margin": 10.0}, 5.0, 30.0, vr.INCONCLUSIVE),
        ("a - b >= margin", {"margin": 10.0}, 1.0, 8.0, vr.CONTRADICTED),
        ("a - b >= margin", {"margin": 10.0}, 1.0, 10.0, vr.INCONCLUSIVE),
        ("a - b <= margin", {"margin": 0.0}, -6.0, -1.0, vr.HOLDS),
        ("a - b <= margin", {"margin": 0.0}, -6.0, 2.0, vr.INCONCLUSIVE),
        ("ratio a/b in [lo, hi]", {"lo": 0.25, "hi": 0.75}, 0.3, 0.6, vr.HOLDS),
        ("ratio a/b in [lo, hi]", {"lo": 0.25, "hi": 0.75}, 0.1, 0.2, vr.CONTRADICTED),
        ("ratio a/b in [lo, hi]", {"lo": 0.25, "hi": 0.75}, 0.2, 0.5, vr.INCONCLUSIVE),
        ("abs(a - b) / b <= margin", {"margin": 0.25}, 0.01, 0.2, vr.HOLDS),
        ("abs(a - b) / b <= margin", {"margin": 0.25}, 0.27, 0.29, vr.CONTRADICTED),
        ("ratio a/b in [lo, hi]", {"lo": 0.25, "hi": 0.75}, math.nan, math.nan, vr.INCONCLUSIVE),
    ],
)
def test_decide_hand_checked(relation, bounds, lo, hi, verdict):
    assert vr.decide(_finding(relation, **bounds), lo, hi)[0] == verdict


def test_paper_numbers_file_is_valid_and_the_papers_own_numbers_are_not_contradicted():
    """The papers' own point estimates lie in (or, for a range of the paper's readers, on the edge of)
    each finding's region, for every reference row; every margin names its source."""
    findings = fnd.load_paper_numbers()
    ids = [f.id for f in findings]
    assert len(ids) == len(set(ids)) >= 28
    for f in findings:
        if f.bounds:
            assert f.margin_source.startswith("paper "), f.id
        for row in (f, *(f.for_dataset(k) for k in f.references)):
            if row.a_value is None or row.b_value is None:
                continue
            stat = {
                "diff": row.a_value - row.b_value,
                "ratio": row.a_value / row.b_value,
                "relative": abs(row.a_value - row.b_value) / row.b_value,
            }[row.statistic]
            assert vr.decide(row, stat, stat)[0] != vr.CONTRADICTED, (f.id, stat)
    assert (
        paper_value("damaging_passages") == 100
        and paper_value("damaging_passages", "AcEM@100 (NQ, DPR)") == 62.3
    )
    assert paper_value("probe3_recovers") == 61.8
    tqa = next(f for f in findings if f.id == "damaging_passages").for_dataset("triviahg-val")
    assert tqa.b_value == 93.05 and "TriviaQA" in tqa.source and tqa.bounds == {"margin": 6.95}
    assert (
        next(f for f in findings if f.id == "rerankers_marginal").rule()
        == "|a − b| < 2.16 and not significantly < 0"
    )
    assert {n.id for n in fnd.not_scored()} >= {"best_reranker_differs"}


def test_paper_numbers_errors(tmp_path):
    bad = tmp_path / "p.yaml"
    head = (
        "findings:\n  - id: x\n    finding: f\n    source: s\n    paper: {a: {label: A, value: 1}, b: "
        "{label: B, value: 2}}\n"
    )
    bad.write_text(head + "    relation: 'a ~ b'\n    measure: damage_share\n")
    with pytest.raises(DataFormatError, match="unknown relation"):
        fnd.load_paper_numbers(bad)
    bad.write_text(head + "    relation: 'adds little'\n    measure: damage_share\n")
    with pytest.raises(DataFormatError, match="needs a number 'margin'"):
        fnd.load_paper_numbers(bad)
    bad.write_text(head + "    relation: 'adds little'\n    margin: 2\n    measure: damage_share\n")
    with pytest.raises(DataFormatError, match="needs 'margin_source'"):
        fnd.load_paper_numbers(bad)
    bad.write_text(head + "    relation: 'a > b'\n    measure: nothing\n")
    with pytest.raises(DataFormatError, match="unknown measure"):
        fnd.load_paper_numbers(bad)
    bad.write_text(
        head + "    relation: 'a > b'\n    measure: damage_share\n    references: {t: {a: {value: x}}}\n"
    )
    with pytest.raises(DataFormatError, match=r"references\.t\.a"):
        fnd.load_paper_numbers(bad)


# ------------------------------------------------------------------------- exact tests on discordant pairs


def test_exact_sign_test_and_interval_by_hand():
    """9 discordant questions for a and 1 for b of 20: two-sided p = 2·P(X ≥ 9 | 10, ½) = 2·11/1024
    = 0.0215; the Clopper–Pearson interval of 9/10 is [0.5550, 0.9975] (beta quantiles), mapped to
    a − b = (10/20)(2π − 1) · 100 = [5.50, 49.75]."""
    a, b = _pairs(9, 1, 10)
    s = vr.Sample(a, b, True, "n")
    t = vr.tails(s, _finding("a > b"))
    assert t.value == 40.0 and (t.lo, t.hi) == pytest.approx((5.4984, 49.7471), abs=1e-4)
    assert min(1.0, 2 * t.above(0)) == pytest.approx(22 / 1024)
    scored = vr.judge(_finding("a > b"), s)
    assert (scored.verdict, scored.discordant, scored.informative) == (vr.HOLDS, 10, 10)
    assert scored.p_value == pytest.approx(22 / 1024) and "McNemar" in scored.test


def test_one_contrary_question_no_longer_contradicts():
    """48 paired questions, 47 ties and one won by b: one discordant question is no evidence."""
    a, b = _pairs(0, 1, 47)
    s = vr.judge(_finding("a > b"), vr.Sample(a, b, True, "n"))
    assert s.verdict == vr.INCONCLUSIVE and s.why.startswith("1 discordant question of 48")
    assert vr.decide(_finding("a > b"), -2.08, 0.0)[0] == vr.INCONCLUSIVE


def test_the_guard_counts_discordant_questions_not_measured_ones():
    """8 discordant questions of 48, all for a (p = 2/256 = 0.0078): inconclusive; 10 of 48 (p = 2/1024):
    holds."""
    eight = vr.judge(_finding("a > b"), vr.Sample(*_pairs(8, 0, 40), True, "n"))
    assert eight.verdict == vr.INCONCLUSIVE and "8 discordant questions of 48 (a ≠ b) < 10" in eight.why
    ten = vr.judge(_finding("a > b"), vr.Sample(*_pairs(10, 0, 38), True, "n"))
    assert ten.verdict == vr.HOLDS and ten.p_value == pytest.approx(2 / 1024)


def test_tango_score_statistic_by_hand():
    """x = n₁₀ = 10, y = n₀₁ = 10, n = 210, δ = 0.05: the constrained p₀₁ solves
    420q² + (0.05·420 − 20)q − 10·0.05·0.95 = 0, q = (−1 + √799)/840 = 0.032460; var = 210(2q + 0.0475)
    = 23.608; z = (0 − 10.5)/√23.608 = −2.1610."""
    assert vr._tango_z(10, 10, 210, 0.05) == pytest.approx(-2.16101, abs=1e-5)
    a, b = _pairs(10, 10, 190)
    t = vr.tails(vr.Sample(a, b, True, "n"), _finding("adds little", margin=5.0))
    assert t.below(5.0) == pytest.approx(0.015345, abs=1e-5)  # Φ(−2.1610)
    assert (t.lo, t.hi) == pytest.approx((-4.4753, 4.4753), abs=1e-3) and "Tango" in t.test


def test_equivalence_needs_the_intervention_to_move_ten_units():
    """|Δ| < 2.16 on 3,000 questions with 10 + 10 discordant holds only when the intervention moved at
    least 10 answers; 0 discordant of 48 has a Tango interval of ±7.41, not the point 0."""
    a, b = _pairs(10, 10, 2980)
    f = _finding("adds little", margin=2.16)
    few = vr.judge(f, vr.Sample(a, b, True, "n", moved=5))
    assert few.verdict == vr.INCONCLUSIVE and few.why.startswith("the intervention moved 5 of 3000 answers")
    assert vr.judge(f, vr.Sample(a, b, True, "n", moved=10)).verdict == vr.HOLDS
    t = vr.tails(vr.Sample(np.zeros(48), np.zeros(48), True, "n"), f)
    assert (t.lo, t.hi) == pytest.approx((-7.41, 7.41), abs=0.01)


def test_exact_share_when_a_is_at_least_b_by_definition():
    """AcEM@N ≥ EM@N: the share of the 11 questions ever right that are wrong at N, 8 of 11, has the
    Clopper–Pearson interval [39.03, 93.98]; 0 of 48 has [0, 7.40] (1 − 0.025^(1/48)): a − b > 10 is
    contradicted by it, and a > b on such a sample is by construction."""
    a, b = np.ones(11), np.array([0.0] * 8 + [1.0] * 3)
    s = vr.judge(_finding("a - b >= margin", margin=6.95), vr.Sample(a, b, True, "n", a_at_least_b=True))
    assert (s.stat.lo, s.stat.hi) == pytest.approx((39.0257, 93.9782), abs=1e-3) and s.verdict == vr.HOLDS
    none = vr.judge(
        _finding("a - b >= margin", margin=10.0),
        vr.Sample(np.ones(48), np.ones(48), True, "n", a_at_least_b=True),
    )
    assert none.verdict == vr.INCONCLUSIVE and none.why.startswith("no variation")
    zero = vr.tails(
        vr.Sample(np.r_[np.ones(47), 1.0], np.r_[np.ones(47), 1.0], True, "n", a_at_least_b=True),
        _finding("a - b >= margin", margin=10.0),
    )
    assert zero.hi == pytest.approx(7.3973, abs=1e-3)
    by_def = vr.judge(_finding("a > b"), vr.Sample(a, b, True, "n", a_at_least_b=True))
    assert by_def.verdict == vr.BY_CONSTRUCTION and not by_def.tested
    with pytest.raises(ValueError, match="unit 0 has a = 0 < b = 1"):
        vr.Sample(np.array([0.0]), np.array([1.0]), True, "n", a_at_least_b=True)


# ----------------------------------------------------------------------------- bootstrap, weights, clusters


def test_weighted_means_and_clustered_resampling():
    """Σa/Σw: [1, 0, 0, 1] over weights [1, 1, 0, 1] is 2/3. Passages of one question share a length:
    resampling questions (clustered) widens the interval over resampling passages."""
    assert vr.side_mean(np.array([1.0, 0, 0, 1]), np.array([1.0, 1, 0, 1])) == pytest.approx(2 / 3)
    rng = np.random.default_rng(0)
    per_q = rng.normal(50, 10, 40)
    a = np.repeat(per_q, 10)
    b = np.full(400, 50.0) + rng.normal(0, 1, 400)
    groups = np.repeat([f"q{i}" for i in range(40)], 10)
    flat = vr.tails(
        vr.Sample(a, b, False, "n", "passages", 1.0), _finding("abs(a - b) / b <= margin", margin=0.1)
    )
    clustered = vr.tails(
        vr.Sample(a, b, False, "n", "passages", 1.0, a_groups=groups, b_groups=groups),
        _finding("abs(a - b) / b <= margin", margin=0.1),
    )
    assert clustered.hi - clustered.lo > 2 * (flat.hi - flat.lo) and "clustered by question" in clustered.test


def test_bootstrap_is_seeded_and_its_tails_invert_the_interval():
    rng = np.random.default_rng(0)
    s = vr.Sample(rng.normal(size=40), rng.normal(size=40), True, "")
    first = vr.bootstrap_replicates(s, "diff", seed=1)
    assert np.array_equal(first, vr.bootstrap_replicates(s, "diff", seed=1))
    assert not np.array_equal(first, vr.bootstrap_replicates(s, "diff", seed=2))
    t = vr.tails(s, _finding("a > b"))
    assert 2 * t.above(t.lo - 1e-9) == pytest.approx(0.05, abs=0.005)  # the 2.5th percentile
    assert 2 * t.below(t.hi + 1e-9) == pytest.approx(0.05, abs=0.005)


def test_undecided_reasons_by_hand():
    f = _finding("a > b")
    zeros = vr.Sample(np.zeros(12), np.zeros(12), True, "EM: x vs y")
    bare = "no variation: every one of the 12 questions scores 0 on both sides"
    assert (vr.undecided(f, zeros), vr.undecided(f, zeros, explain=False)) == (f"{bare} (EM: x vs y)", bare)
    few = vr.Sample(np.ones(9), np.zeros(9), True, "n")
    assert vr.undecided(f, few, explain=False) == "too few questions: 9 < 10"
    tied = vr.Sample(*_pairs(2, 0, 0, 10), True, "n", unit="pairs")
    assert vr.undecided(f, tied, explain=False) == "2 discordant pairs of 12 (a ≠ b) < 10"
    assert vr.undecided(f, vr.Sample(np.ones(12), np.zeros(12), True, "n")) is None
    unpaired = vr.Sample(np.ones(12), np.zeros(12), False, "n")
    assert vr.undecided(f, unpaired) is None  # no discordant guard without pairs


# ----------------------------------------------------------------------------- Holm over a profile's findings


def test_holm_decides_the_verdicts_and_keeps_the_unadjusted_beside():
    """Three findings holding at p = 0.01, 0.03, 0.04 (and one untested): Holm gives 3·0.01 = 0.03,
    max(0.03, 2·0.03) = 0.06, max(0.06, 0.04) = 0.06: only the first keeps its verdict."""
    f = _finding("a > b")
    scored = [
        vr.Scored(f, vr.HOLDS, "w", p_value=p, unadjusted=vr.HOLDS, tested=True) for p in (0.01, 0.03, 0.04)
    ]
    scored.append(vr.Scored(f, vr.INCONCLUSIVE, "guard", unadjusted=vr.INCONCLUSIVE))
    out = vr.adjust(scored)
    assert [s.p_holm for s in out[:3]] == pytest.approx([0.03, 0.06, 0.06]) and out[3].p_holm is None
    assert [s.verdict for s in out] == [vr.HOLDS, vr.INCONCLUSIVE, vr.INCONCLUSIVE, vr.INCONCLUSIVE]
    assert out[1].unadjusted == vr.HOLDS and "not after it over the 3 findings tested" in out[1].why


def _two_tested(tmp_path) -> fnd.Results:
    """Answers where two findings are tested: the oracle (Union_norm: right on q00–q09) beats bm25 (right
    on none) on 10 discordant questions (exact p = 2/1024), and Union_freq (right on q00–q08 and
    q10–q20) beats Union_norm on 12 discordant questions, 11 against 1 (p = 2·13/4096 = 0.00635)."""
    a, b = _pairs(10, 0, 30)
    freq = np.array([1.0] * 9 + [0.0] + [1.0] * 11 + [0.0] * 19)
    rows = []
    for i in range(40):
        q = f"q{i:02d}"
        for system, setting, union, v in (
            ("oracle+pointwise", "oracle", "norm", a[i]),
            ("bm25", "pipeline", "norm", b[i]),
        ):
            rows.append(
                {
                    "qid": q,
                    "answer": "x",
                    "em": bool(v),
                    "judged": bool(v),
                    "setting": setting,
                    "system": system,
                    "k": 3,
                    "union": union,
                    "reader": "r",
                }
            )
        rows.append(
            {
                "qid": q,
                "answer": "x",
                "em": bool(freq[i]),
                "judged": bool(freq[i]),
                "setting": "oracle",
                "system": "oracle+pointwise",
                "k": 3,
                "union": "freq",
                "reader": "r",
            }
        )
    pd.DataFrame(rows).to_csv(tmp_path / "04_toy_test_answers.csv", index=False)
    return fnd.Results("toy", "test", {"reader_model": "r", "reading_k": 3}, tmp_path)


def test_verdict_table_reports_the_adjusted_p_and_verdict(tmp_path):
    """Two findings tested: Holm multiplies the smaller p by 2 and keeps the larger one's if bigger;
    the table's verdicts are the adjusted ones, the raw p beside."""
    res = _two_tested(tmp_path)
    by_id = {f.id: f for f in fnd.load_paper_numbers()}
    table = fnd.verdict_table(res, [by_id["pipeline_below_oracle"], by_id["union_freq_beats_norm"]])
    below, union = table.loc["pipeline_below_oracle"], table.loc["union_freq_beats_norm"]
    assert below["p"] == pytest.approx(2 / 1024, abs=1e-4) and below["p (Holm)"] == pytest.approx(
        4 / 1024, abs=1e-4
    )
    assert union["discordant"] == 12 and union["p"] == pytest.approx(26 / 4096, abs=1e-4)
    assert union["p (Holm)"] == pytest.approx(max(2 * below["p"], union["p"]), abs=1e-4)
    assert below["verdict"] == vr.HOLDS and below["unadjusted"] == vr.HOLDS
    assert below["discordant"] == 10 and below["units needed"] is not None


def test_ten_units_all_discordant_are_enough():
    """The guards count below 10: 10 questions, all won by a (p = 2/1024), hold."""
    s = vr.judge(_finding("a > b"), vr.Sample(*_pairs(10, 0), True, "n"))
    assert (s.verdict, s.n, s.discordant) == (vr.HOLDS, 10, 10)


@pytest.mark.parametrize("fid", [f.id for f in fnd.load_paper_numbers()])
def test_every_measure_says_which_input_is_missing(tmp_path, fid):
    """On an empty results folder every finding is inconclusive and names the file and notebook (or,
    for SeEM, the profile setting) it lacks."""
    f = next(x for x in fnd.load_paper_numbers() if x.id == fid)
    s = fnd.score(f, fnd.Results("toy", "test", {}, tmp_path, runs=tmp_path))
    assert s.verdict == vr.INCONCLUSIVE and s.why.startswith("missing input: ")
    assert "not found (run notebook" in s.why or "judge_readings false" in s.why


@pytest.mark.parametrize(
    ("table", "rows", "fid", "message"),
    [
        (
            "03_toy_test_per_question.csv",
            [{"system": "bm25+pointwise", "measure": "nDCG@10", "qid": "q", "value": 1.0}],
            "pointwise_best_reranker",
            "needs pointwise and another reranker",
        ),
        (
            "07_toy_test_answers.csv",
            [{"system": "decomposition", "qid": "q", "em": True}],
            "general_reader_beats_reasoning",
            "no CoT reading",
        ),
        (
            "05_toy_test_per_question.csv",
            [{"system": "minilm", "measure": "nDCG@10", "qid": "q", "value": 1.0}],
            "finetuning_small_gains",
            "needs a fine-tuned retriever and its base model",
        ),
        (
            "05_toy_test_per_question.csv",
            [{"system": "FT-MiniLM-N5", "measure": "nDCG@10", "qid": "q", "value": 1.0}],
            "more_positives_help",
            "needs fine-tuned retrievers with 1 and more positives",
        ),
        (
            "06_toy_test_ser_readings.csv",
            [
                {
                    "kind": "BM25",
                    "qid": "q",
                    "sample": 0,
                    "m": 4,
                    "changed": True,
                    "corpus": "answer-supporting",
                }
            ],
            "ser_bm25_above_random",
            "SER needs both random and BM25 negatives",
        ),
        (
            "06_toy_test_ser_readings.csv",
            [
                {
                    "kind": "BM25",
                    "qid": "q",
                    "sample": 0,
                    "m": 4,
                    "changed": True,
                    "corpus": "answer-supporting",
                }
            ],
            "ser_rises_with_negatives",
            "at more than one m",
        ),
        (
            "04_toy_test_answers.csv",
            [
                {
                    "qid": "q",
                    "answer": "x",
                    "em": True,
                    "judged": True,
                    "setting": "pipeline",
                    "system": "bm25",
                    "k": 3,
                    "union": "norm",
                    "reader": "r",
                }
            ],
            "optimal_far_above_pipeline",
            "no Optimal reading of the main reader",
        ),
        (
            "04_toy_test_answers.csv",
            [
                {
                    "qid": "q",
                    "answer": "x",
                    "em": True,
                    "judged": True,
                    "setting": "pipeline",
                    "system": "bm25",
                    "k": 5,
                    "union": "norm",
                    "reader": "r",
                }
            ],
            "rerankers_marginal",
            "no answers at k = 3, Union_norm, reader r",
        ),
    ],
)
def test_measures_name_what_is_missing(tmp_path, table, rows, fid, message):
    pd.DataFrame(rows).to_csv(tmp_path / table, index=False)
    f = next(x for x in fnd.load_paper_numbers() if x.id == fid)
    s = fnd.score(
        f, fnd.Results("toy", "test", {"reader_model": "r", "reading_k": 3}, tmp_path, runs=tmp_path)
    )
    assert s.verdict == vr.INCONCLUSIVE and message in s.why, s.why


# ----------------------------------------------------------------------------- decidability


def test_sign_test_power_and_units_by_hand():
    """π = 1: m discordant all for a reject at α = 0.05 once 2·0.5^m < 0.05, m ≥ 6 (power 1); at
    π = 0.8 the exact power at m = 10 is P(X ≥ 9) = 0.376 (X ~ Binomial(10, 0.8))."""
    assert sign_test_power(5, 1.0, 0.05) == 0.0 and sign_test_power(6, 1.0, 0.05) == 1.0
    assert sign_test_power(10, 0.8, 0.05) == pytest.approx(0.3758, abs=1e-4)
    assert sign_test_units(1.0, 0.05) == 6  # units_needed then raises it to the guard's 10
    assert sign_test_units(0.5, 0.05) is None
    m = sign_test_units(0.8, 0.05)
    assert sign_test_power(m, 0.8, 0.05) >= 0.8 > sign_test_power(m - 1, 0.8, 0.05)


def test_units_needed_scale_with_the_family():
    f = _finding("a > b")
    s = vr.Sample(*_pairs(8, 2, 38), True, "n")
    scored = vr.judge(f, s)
    one, twenty = units_needed(scored, s, 1), units_needed(scored, s, 20)
    assert one.units < twenty.units and one.questions == math.ceil(one.units * 48 / 10)
    assert "exact sign test, π = 8/10" in one.how
    flat = vr.Sample(np.zeros(48), np.zeros(48), True, "n")
    assert units_needed(vr.judge(f, flat), flat).units is None


def test_units_needed_never_fewer_questions_than_the_guard_needs():
    """3 discordant of 210, all for a: the sign test rejects at 6, the guard needs 10 discordant,
    so 10 · 210 / 3 = 700 questions. A weighted share with 2 of 30 questions counting and a large
    effect: the normal approximation asks for 10 questions, the guard for 10 · 30 / 2 = 150."""
    f = _finding("a > b")
    s = vr.Sample(*_pairs(3, 0, 207), True, "n")
    need = units_needed(vr.judge(f, s), s)
    assert (need.units, need.questions) == (10, 700)
    a, b = np.zeros(30), np.zeros(30)
    a[:2] = 1.0
    wa = np.zeros(30)
    wa[:2] = 1.0
    b[10:12] = 1.0
    ws = vr.Sample(a, b, True, "share", a_weight=wa, b_weight=np.ones(30))
    scored = vr.judge(f, ws)
    assert scored.verdict == vr.INCONCLUSIVE and scored.informative == 2
    need = units_needed(scored, ws)
    assert need.units == 10 and need.questions == 150


# ----------------------------------------------------------------------------- measures on result files


def test_patterns_keep_leading_zeros(tmp_path):
    """ "0001" must not be read back as the integer 1 (a pattern of length 1)."""
    patterns = pd.DataFrame(
        {
            "system": "bm25",
            "qid": ["a", "b", "c"],
            "em_pattern": ["0001", "0010", "0000"],
            "judged_pattern": ["0001", "0010", "0000"],
            "corpus": "answer-supporting",
        }
    )
    patterns.to_csv(tmp_path / "06_toy_test_patterns.csv", index=False)
    s = fnd.m_damage_share(fnd.Results("toy", "test", {}, tmp_path))
    assert list(s.a) == [1.0, 1.0] and list(s.b) == [1.0, 0.0] and "N = 4" in s.note and s.read == 3


def _cross(tmp_path, containing_top1: list[float]) -> fnd.Results:
    rows = []
    for i, hit1 in enumerate(containing_top1):
        for m, v in (("Hit@1", hit1), ("Hit@10", 1.0)):
            rows.append(
                {
                    "system": "bm25",
                    "measure": m,
                    "threshold": 2,
                    "qid": f"q{i:02d}",
                    "value": v,
                    "corpus": "answer-containing",
                }
            )
        for m, v in (("Hit@1", 0.0), ("Hit@10", float(i % 2))):
            rows.append(
                {
                    "system": "bm25",
                    "measure": m,
                    "threshold": 2,
                    "qid": f"q{i:02d}",
                    "value": v,
                    "corpus": "answer-supporting",
                }
            )
    pd.DataFrame(rows).to_csv(tmp_path / "02_toy_test_per_question.csv", index=False)
    return fnd.Results("toy", "test", {}, tmp_path)


def test_cross_corpus_control_that_ranks_first_by_construction(tmp_path):
    f = next(f for f in fnd.load_paper_numbers() if f.id == "containing_beats_supporting")
    s = fnd.score(f, _cross(tmp_path, [1.0] * 20))
    assert s.verdict == vr.BY_CONSTRUCTION and s.why.startswith("by construction")
    (tmp_path / "fair").mkdir()
    fair = fnd.score(f, _cross(tmp_path / "fair", [1.0] * 15 + [0.0] * 5))
    assert fair.verdict == vr.HOLDS and (fair.a.value, fair.b.value) == (87.5, 25.0)  # mean of Hit@1, Hit@10


def test_size_matched_comparison_reads_its_own_rows(tmp_path):
    """Judged containing 60 vs supporting 20 (of 20 questions, 8 discordant… then 60 of 60) → the
    size-matched rows read at equal outcomes give no discordant question: inconclusive, not holds."""
    rows = []
    for i in range(20):
        q = f"q{i:02d}"
        for corpus, v in (
            ("answer-containing, LLM-judged", float(i % 5 < 3)),
            ("answer-supporting, LLM-judged", float(i % 5 == 0)),
            ("answer-containing, LLM-judged, size-matched", float(i % 5 < 3)),
            ("answer-supporting, LLM-judged, size-matched", float(i % 5 < 3)),
        ):
            rows.append(
                {"system": "bm25", "measure": "Hit@1", "threshold": 2, "qid": q, "value": v, "corpus": corpus}
            )
    pd.DataFrame(rows).to_csv(tmp_path / "02_toy_test_per_question.csv", index=False)
    pd.DataFrame(
        {
            "corpus": "answer-supporting, LLM-judged",
            "qid": [f"q{i:02d}" for i in range(20)],
            "pid": "p",
            "answer": "x",
            "label": 2,
            "source": "r",
        }
    ).to_csv(tmp_path / "02_toy_test_pooled_judgments.csv", index=False)
    res = fnd.Results("toy", "test", {}, tmp_path)
    by_id = {f.id: f for f in fnd.load_paper_numbers()}
    s = fnd.score(by_id["containing_beats_supporting"], res)
    assert (s.a.value, s.b.value, s.discordant) == (60.0, 20.0, 8) and s.verdict == vr.INCONCLUSIVE
    m = fnd.score(by_id["containing_beats_supporting_size_matched"], res)
    assert (m.a.value, m.b.value, m.discordant, m.verdict) == (60.0, 60.0, 0, vr.INCONCLUSIVE)


def _ans(system: str, setting: str = "pipeline", union: str = "norm", qid: str = "q") -> dict:
    return {
        "qid": qid,
        "answer": "x",
        "em": True,
        "judged": True,
        "setting": setting,
        "system": system,
        "k": 3,
        "union": union,
        "reader": "r",
    }


def _pq(system: str, measure: str, corpus: str, threshold: int = 2, qid: str = "q") -> dict:
    return {
        "system": system,
        "measure": measure,
        "threshold": threshold,
        "qid": qid,
        "value": 1.0,
        "corpus": corpus,
    }


SUP, CON = "answer-supporting", "answer-containing"
_PATTERN = {"system": "bm25", "qid": "q", "em_pattern": "10", "judged_pattern": "10"}


@pytest.mark.parametrize(
    ("tables", "fid", "message"),
    [
        (
            {"02_toy_test_per_question.csv": [_pq("e5-small", "Hit@10", SUP, 1)]},
            "dense_beats_bm25",
            "no per-question 'nDCG@10' on the answer-supporting corpus",
        ),
        (
            {"02_toy_test_per_question.csv": [{**_pq("e5-small", "nDCG@10", SUP, 1)}]},
            "dense_beats_bm25",
            "bm25 was not run in notebook 02",
        ),
        (
            {"02_toy_test_per_question.csv": [_pq("bm25", "nDCG@10", SUP, 1)]},
            "containing_beats_supporting",
            "no per-question Hit@k at label 2 in notebook 02",
        ),
        (
            {
                "02_toy_test_per_question.csv": [
                    _pq("bm25", "Hit@1", "answer-containing, LLM-judged"),
                    _pq("bm25", "Hit@1", "answer-supporting, LLM-judged"),
                ]
            },
            "containing_beats_supporting_size_matched",
            "no per-question Hit@k for the 'answer-containing, LLM-judged, ",
        ),
        (
            {"02_toy_test_passage_lengths.csv": [{"corpus": SUP, "pid": "p", "qid": "q", "tokens": 3}]},
            "similar_passage_length",
            "passage lengths of both corpora are needed",
        ),
        (
            {"04_toy_test_answers.csv": [_ans("bm25+pointwise")]},
            "rerankers_marginal",
            "the first stage bm25 was not read in notebook 04",
        ),
        (
            {"04_toy_test_answers.csv": [_ans("oracle+pointwise", "oracle"), _ans("bm25", union="freq")]},
            "union_freq_beats_norm",
            "oracle+pointwise was not read with Union_freq",
        ),
        (
            {
                "04_toy_test_answers.csv": [
                    _ans("oracle+pointwise", "oracle", qid="q1"),
                    _ans("bm25", qid="q2"),
                ]
            },
            "pipeline_below_oracle",
            "oracle+pointwise and bm25 share no measured question",
        ),
        (
            {"04_toy_test_hint_passages.csv": [{"source": "bm25", "reader": "", "qid": "q", "n_hints": 3}]},
            "full_passages_under_optimal",
            "no Optimal passages or first-ranked passages",
        ),
        (
            {"07_toy_test_answers.csv": [{"system": "decomposition + CoT reader", "qid": "q", "em": True}]},
            "general_reader_beats_reasoning",
            "no short-answer reading of decomposition",
        ),
        (
            {
                "05_toy_test_answers.csv": [_ans("bm25+FT-CrossEncoder")],
                "04_toy_test_answers.csv": [_ans("bm25")],
            },
            "ft_reranker_oracle_only",
            "needs bm25 + a fine-tuned reranker (notebook 05) and bm25 + an LLM reranker",
        ),
        (
            {"05_toy_test_answers.csv": [_ans("minilm")]},
            "ft_pipeline_best",
            "no fine-tuned retriever + fine-tuned reranker reading",
        ),
        (
            {"06_toy_test_patterns.csv": [{**_PATTERN, "corpus": SUP}]},
            "damaging_passages_containing",
            "no EM patterns on the answer-containing corpus",
        ),
        (
            {
                "06_toy_test_patterns.csv": [
                    {**_PATTERN, "corpus": SUP, "qid": "q1"},
                    {**_PATTERN, "corpus": CON, "qid": "q2"},
                ]
            },
            "damaging_larger_when_supporting",
            "no question read on both the answer-supporting and the answer-containing",
        ),
        (
            {
                "06_toy_test_patterns.csv": [{**_PATTERN, "corpus": SUP}],
                "06_toy_test_probe_readings.csv": [
                    {
                        "system": "bm25",
                        "qid": "q",
                        "metric": "em",
                        "k": 2,
                        "probe": "P3",
                        "kept": "1",
                        "correct": True,
                        "corpus": CON,
                    }
                ],
            },
            "probe3_recovers",
            "no Probe-3 readings on the answer-supporting corpus",
        ),
        (
            {
                "06_toy_test_patterns.csv": [{**_PATTERN, "corpus": SUP}],
                "06_toy_test_probe_readings.csv": [
                    {
                        "system": "bm25",
                        "qid": "q",
                        "metric": "em",
                        "k": 2,
                        "probe": "P3",
                        "kept": "1",
                        "correct": True,
                        "corpus": SUP,
                    }
                ],
            },
            "probe3_at_5",
            "no Probe-3 readings at k = 5",
        ),
        (
            {
                "06_toy_test_ser_readings.csv": [
                    {"kind": "BM25", "qid": "q", "sample": 0, "m": 1, "changed": True, "corpus": SUP}
                ]
            },
            "ser_bm25_above_random_containing",
            "no SER readings on the answer-containing corpus",
        ),
    ],
)
def test_the_measures_other_missing_inputs(tmp_path, tables, fid, message):
    """Every Missing branch of the measures names what is absent (with the first lines of
    test_measures_name_what_is_missing and test_every_measure_says_which_input_is_missing)."""
    for name, rows in tables.items():
        pd.DataFrame(rows).to_csv(tmp_path / name, index=False)
    f = next(x for x in fnd.load_paper_numbers() if x.id == fid)
    s = fnd.score(
        f, fnd.Results("toy", "test", {"reader_model": "r", "reading_k": 3}, tmp_path, runs=tmp_path)
    )
    assert s.verdict == vr.INCONCLUSIVE and message in s.why, s.why


def test_best_retriever_on_the_contains_the_answer_control(tmp_path):
    """Without the fair comparison, the best retriever is compared on the contains-the-answer control's
    Hit@10: bm25 is best on the answer-supporting corpus (1 vs 0), e5-small beats it on 12 of 12 control
    questions: holds."""
    rows = []
    for i in range(12):
        q = f"q{i:02d}"
        rows += [
            {**_pq("bm25", "Hit@10", SUP, qid=q), "value": 1.0},
            {**_pq("e5-small", "Hit@10", SUP, qid=q), "value": 0.0},
            {**_pq("bm25", "Hit@10", CON, qid=q), "value": 0.0},
            {**_pq("e5-small", "Hit@10", CON, qid=q), "value": 1.0},
        ]
    pd.DataFrame(rows).to_csv(tmp_path / "02_toy_test_per_question.csv", index=False)
    f = next(x for x in fnd.load_paper_numbers() if x.id == "best_retriever_differs")
    s = fnd.score(f, fnd.Results("toy", "test", {}, tmp_path))
    assert s.verdict == vr.HOLDS and "Hit@10 (label 2) on the answer-containing corpus: e5-small" in s.why


def test_verdict_sentence_counts_and_names_the_findings():
    table = pd.DataFrame(
        {"verdict": [vr.HOLDS, vr.CONTRADICTED, vr.INCONCLUSIVE, vr.BY_CONSTRUCTION]},
        index=["a", "b", "c", "d"],
    )
    text = fnd.verdict_sentence(table, 48, "test", "embedded")
    assert text.startswith(
        "Of 3 findings, on 48 `test` questions of `embedded`: 1 hold, 1 are contradicted, 1 are inconclusive"
    )
    assert "holding: `a`; contradicted: `b`; 1 by construction, not counted: `d`." in text


def test_a_share_among_few_units_that_count_decides_nothing():
    """Damage compared as shares of the questions ever answered right: 30 questions read on both
    corpora, but only 2 ever answered right on one side (2 of 2 lost vs 2 of 27): the smaller side's 2
    units that count are too few, whatever the interval."""
    a = np.array([1.0, 1.0] + [0.0] * 28)
    wa = np.array([1.0, 1.0] + [0.0] * 28)
    b = np.array([1.0, 1.0] + [0.0] * 28)
    wb = np.array([1.0] * 27 + [0.0] * 3)
    s = vr.Sample(a, b, True, "n", a_weight=wa, b_weight=wb)
    assert vr.measured_units(s) == 2
    scored = vr.judge(_finding("a > b"), s)
    assert scored.verdict == vr.INCONCLUSIVE and scored.why.startswith(
        "too few questions that count (weight): 2 < 10"
    )
    assert scored.informative == 2 and scored.p_value is None


def test_every_named_break_still_applies_to_its_line():
    """scripts/break_rules.py replaces each break's line, which must occur exactly once: a
    reformatted line would otherwise leave the break unapplied."""
    import importlib.util
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("break_rules", root / "scripts" / "break_rules.py")
    br = importlib.util.module_from_spec(spec)
    sys.modules["break_rules"] = br  # its dataclasses look their module up
    try:
        spec.loader.exec_module(br)
    finally:
        sys.modules.pop("break_rules", None)
    counts = {b.name: (root / b.file).read_text(encoding="utf-8").count(b.old) for b in br.BREAKS}
    assert counts and all(n == 1 for n in counts.values()), {k: n for k, n in counts.items() if n != 1}
