"""Findings scored from data (inferqa_utils.verdicts.findings): verdict rule, measures on result files, paper
numbers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from inferqa_utils.core.errors import DataFormatError
from inferqa_utils.measure import verdict as vr
from inferqa_utils.measure.paper import Finding, paper_value
from inferqa_utils.verdicts import findings as fnd


def _finding(relation: str, **bounds: float) -> Finding:
    return Finding(
        "x", "claim", "paper", "A", None, "B", None, relation, dict(bounds), "optimal_vs_pipeline"
    )


@pytest.mark.parametrize(("relation", "bounds", "lo", "hi", "verdict"), [
    ("a > b", {}, 1.0, 3.0, vr.HOLDS),
    ("a > b", {}, -1.0, 2.0, vr.INCONCLUSIVE),
    ("a > b", {}, -3.0, -1.0, vr.CONTRADICTED),
    ("a > b", {}, 0.0, 0.0, vr.CONTRADICTED),  # identical outcomes: a is not above b
    ("a > b", {}, 0.0, 2.0, vr.INCONCLUSIVE),
    ("adds little", {"margin": 5.0}, -2.0, 3.0, vr.HOLDS),
    ("adds little", {"margin": 5.0}, -4.0, -1.0, vr.CONTRADICTED),  # inside the band, but it hurts
    ("adds little", {"margin": 5.0}, -2.0, 8.0, vr.INCONCLUSIVE),
    ("adds little", {"margin": 5.0}, 6.0, 9.0, vr.CONTRADICTED),
    ("a - b >= margin", {"margin": 10.0}, 12.0, 30.0, vr.HOLDS),
    ("a - b >= margin", {"margin": 10.0}, 5.0, 30.0, vr.INCONCLUSIVE),
    ("a - b >= margin", {"margin": 10.0}, 1.0, 8.0, vr.CONTRADICTED),
    ("a - b <= margin", {"margin": 0.0}, -6.0, -1.0, vr.HOLDS),
    ("a - b <= margin", {"margin": 0.0}, -6.0, 2.0, vr.INCONCLUSIVE),
    ("ratio a/b in [lo, hi]", {"lo": 0.25, "hi": 0.75}, 0.3, 0.6, vr.HOLDS),
    ("ratio a/b in [lo, hi]", {"lo": 0.25, "hi": 0.75}, 0.1, 0.2, vr.CONTRADICTED),
    ("ratio a/b in [lo, hi]", {"lo": 0.25, "hi": 0.75}, 0.2, 0.5, vr.INCONCLUSIVE),
    ("abs(a - b) / b <= margin", {"margin": 0.25}, 0.01, 0.2, vr.HOLDS),
    ("ratio a/b in [lo, hi]", {"lo": 0.25, "hi": 0.75}, math.nan, math.nan, vr.INCONCLUSIVE),
])
def test_decide_hand_checked(relation, bounds, lo, hi, verdict):
    assert vr.decide(_finding(relation, **bounds), lo, hi)[0] == verdict


def test_paper_numbers_file_is_valid_and_the_papers_own_numbers_hold():
    findings = fnd.load_paper_numbers()
    ids = [f.id for f in findings]
    assert len(ids) == len(set(ids)) >= 14
    for key in ("containing_beats_supporting", "rerankers_marginal", "optimal_far_above_pipeline",
                "damaging_passages", "finetuning_small_gains", "ser_bm25_above_random", "probe3_recovers"):
        assert key in ids
    for f in findings:
        if f.a_value is None or f.b_value is None:
            continue
        stat = {"diff": f.a_value - f.b_value, "ratio": f.a_value / f.b_value,
                "relative": abs(f.a_value - f.b_value) / f.b_value}[f.statistic]
        assert vr.decide(f, stat, stat)[0] == vr.HOLDS, (
            f.id
        )  # the paper's point estimates satisfy its claim
    assert paper_value("damaging_passages") == 62.3 and paper_value("damaging_passages", "b") == 52.5
    assert paper_value("probe3_recovers") == 61.8
    assert (
        next(f for f in findings if f.id == "rerankers_marginal").rule()
        == "|a − b| ≤ 5 and not significantly < 0"
    )


def test_paper_numbers_errors(tmp_path):
    bad = tmp_path / "p.yaml"
    head = (
        "findings:\n  - id: x\n    finding: f\n    source: s\n    paper: {a: {label: A, value: 1}, b: "
        "{label: B, value: 2}}\n"
    )
    bad.write_text(head + "    relation: 'a ~ b'\n    measure: acem_vs_em\n")
    with pytest.raises(DataFormatError, match="unknown relation"):
        fnd.load_paper_numbers(bad)
    bad.write_text(head + "    relation: 'adds little'\n    measure: acem_vs_em\n")
    with pytest.raises(DataFormatError, match="needs a number 'margin'"):
        fnd.load_paper_numbers(bad)
    bad.write_text(head + "    relation: 'a > b'\n    measure: nothing\n")
    with pytest.raises(DataFormatError, match="unknown measure"):
        fnd.load_paper_numbers(bad)


def _answers(n: int, correct: dict[str, int]) -> pd.DataFrame:
    """04-shaped answers: system → number of the n questions answered correctly (the first ones)."""
    rows = []
    for system, c in correct.items():
        setting = (
            "Optimal" if system == "Optimal" else ("oracle" if system.startswith("oracle") else "pipeline")
        )
        for i in range(n):
            rows.append(
                {
                    "qid": f"q{i:02d}",
                    "answer": "x",
                    "em": i < c,
                    "judged": i < c,
                    "setting": setting,
                    "system": "every label ≥ 1 passage" if system == "Optimal" else system,
                    "k": None if system == "Optimal" else 3,
                    "union": None if system == "Optimal" else "norm",
                    "reader": "reader-1",
                }
            )
    return pd.DataFrame(rows)


def _results(tmp_path, **tables: pd.DataFrame) -> fnd.Results:
    for name, t in tables.items():
        t.to_csv(tmp_path / f"{name[:2]}_toy_test_{name[3:]}.csv", index=False)
    return fnd.Results("toy", "test", {"first_stage": "bm25", "reader_model": "reader-1"}, tmp_path)


def test_reading_findings_scored_from_answers(tmp_path):
    r = _results(tmp_path, **{"04_answers": _answers(40, {"Optimal": 30, "bm25": 4, "bm25+pointwise": 5,
                                                          "oracle+pointwise": 14})})
    by_id = {f.id: f for f in fnd.load_paper_numbers()}
    s = fnd.score(by_id["optimal_far_above_pipeline"], r)
    assert s.verdict == vr.HOLDS and s.a.value == 75.0 and s.b.value == 12.5  # 30/40 vs best pipeline 5/40
    assert s.stat.value == pytest.approx(62.5) and s.stat.lo >= 10 and s.p_value < 0.001
    gain = fnd.score(
        by_id["rerankers_marginal"], r
    )  # +1 question of 40: interval [0, 7.5] straddles the 5-point band
    assert gain.stat.value == pytest.approx(2.5) and gain.verdict == vr.INCONCLUSIVE
    assert (gain.stat.lo, gain.stat.hi) == pytest.approx((0.0, 7.5)) and "straddles 5" in gain.why
    (tmp_path / "many").mkdir()
    many = _results(tmp_path / "many", **{"04_answers": _answers(200, {"bm25": 20, "bm25+pointwise": 22})})
    small = fnd.score(by_id["rerankers_marginal"], many)  # +2 of 200: interval [0, 2.5] inside ±5
    assert small.verdict == vr.HOLDS and small.stat.hi <= 5
    ratio = fnd.score(by_id["oracle_half_of_optimal"], r)
    assert ratio.stat.value == pytest.approx(14 / 30) and ratio.verdict == vr.HOLDS
    below = fnd.score(by_id["pipeline_below_oracle"], r)
    assert below.verdict == vr.HOLDS and below.b.value == 10.0  # retriever-only: bm25 (no "+")


def test_reranker_that_hurts_contradicts_adds_little(tmp_path):
    r = _results(tmp_path, **{"04_answers": _answers(40, {"bm25": 12, "bm25+pointwise": 2})})
    s = fnd.score(next(f for f in fnd.load_paper_numbers() if f.id == "rerankers_marginal"), r)
    assert s.stat.value == pytest.approx(-25.0) and s.verdict == vr.CONTRADICTED


def test_degenerate_and_missing_inputs_are_inconclusive(tmp_path):
    r = _results(tmp_path, **{"04_answers": _answers(20, {"Optimal": 0, "bm25": 0, "bm25+pointwise": 0})})
    by_id = {f.id: f for f in fnd.load_paper_numbers()}
    s = fnd.score(by_id["optimal_far_above_pipeline"], r)
    assert s.verdict == vr.INCONCLUSIVE and s.why.startswith("no variation")
    m = fnd.score(by_id["damaging_passages"], r)
    assert m.verdict == vr.INCONCLUSIVE and "06_toy_test_patterns.csv not found" in m.why
    table = fnd.verdict_table(r)
    assert set(table["verdict"]) <= {vr.HOLDS, vr.CONTRADICTED, vr.INCONCLUSIVE} and len(table) >= 14


def test_damaging_probe_and_ser_measures(tmp_path):
    pats = ["0110", "0100", "1000", "0000", "1111", "0010", "0100", "1100"] * 2  # 16 questions
    qids = [f"q{i:02d}" for i in range(len(pats))]
    patterns = pd.DataFrame({"system": "bm25", "qid": qids, "em_pattern": pats, "judged_pattern": pats,
                             "corpus": "answer-supporting"})
    probes = pd.DataFrame({"system": "bm25", "qid": qids, "metric": "em", "k": 4, "probe": "P3",
                           "correct": [p != "0000" for p in pats], "corpus": "answer-supporting"})
    ser = pd.DataFrame(
        [
            {
                "kind": kind,
                "qid": q,
                "sample": 0,
                "m": 2,
                "changed": kind == "bm25" and i < 10,
                "corpus": "answer-supporting",
            }
            for kind in ("random", "bm25")
            for i, q in enumerate(qids)
        ]
    )
    r = _results(tmp_path, **{"06_patterns": patterns, "06_probe_readings": probes, "06_ser_readings": ser})
    by_id = {f.id: f for f in fnd.load_paper_numbers()}
    d = fnd.score(by_id["damaging_passages"], r)
    assert (d.a.value, d.b.value) == (87.5, 12.5)  # AcEM@4: all but 0000 (7/8); EM@4: only 1111 (1/8)
    assert d.verdict == vr.HOLDS and d.n == 16
    p = fnd.score(by_id["probe3_recovers"], r)
    assert (p.a.value, p.b.value) == (87.5, 12.5) and p.verdict == vr.HOLDS
    s = fnd.score(by_id["ser_bm25_above_random"], r)
    assert (s.a.value, s.b.value) == (62.5, 0.0) and s.n == 16 and s.verdict == vr.HOLDS


def test_damaging_effect_per_corpus_and_across_corpora(tmp_path):
    """AcEM@N vs EM@N on the answer-containing control, and the per-question damaging effect
    AcEM@N − EM@N compared across the two corpora on the same questions (hand-counted)."""
    sup = ["0110", "0100", "1000", "0000", "1111", "0010", "0100", "1100"] * 2  # effect 1,1,1,0,0,1,1,1
    con = ["1111", "1110", "1000", "0000"] * 4  # effect 0,1,1,0; AcEM 1,1,1,0; EM 1,0,0,0
    qids = [f"q{i:02d}" for i in range(16)]
    patterns = pd.concat([
        pd.DataFrame({"system": "bm25", "qid": qids, "em_pattern": pats, "judged_pattern": pats,
                      "corpus": corpus})
        for pats, corpus in ((sup, "answer-supporting"), (con, "answer-containing"))])
    r = _results(tmp_path, **{"06_patterns": patterns})
    by_id = {f.id: f for f in fnd.load_paper_numbers()}
    c = fnd.score(by_id["damaging_passages_containing"], r)
    assert (c.a.value, c.b.value, c.n) == (75.0, 25.0, 16)  # AcEM: 12 of 16; EM@4: only 1111, 4 of 16
    d = fnd.score(by_id["damaging_larger_when_supporting"], r)
    # effects: supporting 12 of 16, containing 8 of 16; they differ on q00, q07, q08, q15 (1 vs 0)
    assert (d.a.value, d.b.value, d.stat.value, d.n) == (75.0, 50.0, 25.0, 16)
    assert "4 of 16 questions differ" in d.why and d.informative == 4
    assert c.informative == 8  # AcEM@4 ≠ EM@4 on 0 1 1 0 of each block of four
    table = fnd.verdict_table(r)
    assert table.loc["damaging_larger_when_supporting", "informative"] == 4
    assert "answer-containing" in fnd.m_acem_vs_em(r, "answer-containing").note


def test_patterns_keep_leading_zeros(tmp_path):
    """"0001" must not be read back as the integer 1 (a pattern of length 1)."""
    patterns = pd.DataFrame({"system": "bm25", "qid": ["a", "b"], "em_pattern": ["0001", "0010"],
                             "judged_pattern": ["0001", "0010"], "corpus": "answer-supporting"})
    r = _results(tmp_path, **{"06_patterns": patterns})
    s = fnd.m_acem_vs_em(r)
    assert list(s.a) == [1.0, 1.0] and list(s.b) == [1.0, 0.0] and "N = 4" in s.note


def test_unpaired_passage_lengths(tmp_path):
    lengths = pd.DataFrame(
        {
            "corpus": ["answer-supporting"] * 12 + ["answer-containing"] * 12,
            "pid": [f"p{i}" for i in range(24)],
            "tokens": [10, 12, 11, 13] * 3 + [40, 42, 44] * 4,
        }
    )
    r = _results(tmp_path, **{"02_passage_lengths": lengths})
    s = fnd.score(next(f for f in fnd.load_paper_numbers() if f.id == "similar_passage_length"), r)
    assert s.a.value == 11.5 and s.b.value == 42.0 and s.stat.value == pytest.approx(30.5 / 42)
    assert s.verdict == vr.CONTRADICTED  # 73 % apart, margin 25 %


def test_too_few_questions_is_inconclusive(tmp_path):
    """Two questions can give a bootstrap interval that excludes 0; a finding is never decided on them."""
    r = _results(tmp_path, **{"04_answers": _answers(vr.MIN_UNITS - 1, {"Optimal": 8, "bm25": 0})})
    s = fnd.score(next(f for f in fnd.load_paper_numbers() if f.id == "optimal_far_above_pipeline"), r)
    assert s.stat.lo > 10 and s.verdict == vr.INCONCLUSIVE and s.why.startswith("too few")


def test_no_difference_on_too_few_informative_questions_is_inconclusive(tmp_path):
    """One question of 30 answered by both systems: the paired interval is the point 0, yet only one
    question could have shown a difference — not evidence for "adds little" (nor against damage)."""
    marginal = next(f for f in fnd.load_paper_numbers() if f.id == "rerankers_marginal")
    r = _results(tmp_path, **{"04_answers": _answers(30, {"bm25": 1, "bm25+pointwise": 1})})
    s = fnd.score(marginal, r)
    assert (s.stat.lo, s.stat.hi) == (0.0, 0.0) and s.verdict == vr.INCONCLUSIVE
    assert s.why.startswith("no question differs and only 1 of 30")
    (tmp_path / "many").mkdir()  # the same null difference on 12 answered questions is evidence
    many = fnd.score(
        marginal,
        _results(tmp_path / "many", **{"04_answers": _answers(40, {"bm25": 12, "bm25+pointwise": 12})}),
    )
    assert many.verdict == vr.HOLDS


def test_statistic_interval_is_the_paired_percentile_bootstrap():
    """Paired, the question's differences a − b = 1, 0, 0, 1, 0, 1 are resampled together, so a
    resampled mean is X/6 with X ~ Binomial(6, 1/2): P(X = 0) = P(X = 6) = 1.6 %, P(X ≤ 1) =
    P(X ≥ 5) = 10.9 %. The 2.5th and 97.5th percentiles of 10,000 resamples are 1/6 and 5/6
    (far from the boundaries); the value is the mean difference 3/6."""
    s = vr.Sample(np.array([1, 0, 1, 1, 0, 1.0]), np.array([0, 0, 1, 0, 0, 0.0]), True, "")
    assert vr.statistic_interval(s, "diff") == pytest.approx((0.5, 1 / 6, 5 / 6))


def test_statistic_interval_is_seeded():
    """The same seed gives the same interval, another seed another one (on a sample with many
    distinct values, whose percentiles move with every draw)."""
    rng = np.random.default_rng(0)
    s = vr.Sample(rng.normal(size=40), rng.normal(size=40), True, "")
    first = vr.statistic_interval(s, "diff", seed=1)
    assert first[0] == pytest.approx(np.mean(s.a - s.b)) and first[1] < first[0] < first[2]
    assert vr.statistic_interval(s, "diff", seed=1) == first
    other = vr.statistic_interval(s, "diff", seed=2)
    assert other[0] == first[0] and other[1:] != first[1:]


def test_undecided_reasons_by_hand():
    """The guards of the verdict rule, with and without the sample's note: 0 everywhere (no
    variation, 12 questions); 9 < MIN_UNITS = 10 questions; paired, a = b on 12 questions of which
    2 score 1 (no question differs, 2 informative < 10); 12 questions differing: decidable."""
    zeros = vr.Sample(np.zeros(12), np.zeros(12), True, "EM: x vs y")
    bare = "no variation: every one of the 12 questions scores 0 on both sides"
    assert (vr.undecided(zeros), vr.undecided(zeros, explain=False)) == (f"{bare} (EM: x vs y)", bare)
    few = vr.Sample(np.ones(9), np.zeros(9), True, "n")
    assert (vr.undecided(few), vr.undecided(few, explain=False)) == ("too few questions: 9 < 10 (n)",
                                                                     "too few questions: 9 < 10")
    same = np.array([1.0, 1.0] + [0.0] * 10)
    tied = vr.Sample(same, same.copy(), True, "n", unit="pairs")
    bare = "no pair differs and only 2 of 12 score above 0 on either side (< 10)"
    assert vr.undecided(tied) == f"{bare}: too few could show a difference (n)"
    assert vr.undecided(tied, explain=False) == bare
    assert vr.undecided(vr.Sample(np.ones(12), np.zeros(12), True, "n")) is None
    unpaired = vr.Sample(same, same.copy(), False, "n", unit="pairs")
    assert vr.undecided(unpaired) is None  # no such guard without pairs


def test_judge_decides_on_the_estimates_it_is_given():
    """``judge`` with a caller's estimates (the paper runs' fast routines) draws the verdict from
    their interval, not its own bootstrap: on a = 1, b = 0 over 12 questions (its own interval
    [100, 100]: holds for a > b) an interval [−3, −1] given contradicts; ``explain=False`` leaves out
    the note; the numbers reported are the ones given."""
    f = _finding("a > b")
    s = vr.Sample(np.ones(12), np.zeros(12), True, "EM: x vs y")
    own = vr.judge(f, s)
    assert (own.verdict, own.why) == (vr.HOLDS, "the interval lies inside the region; EM: x vs y")
    given = vr.Estimates(own.a, own.b, vr.Interval(-2.0, -3.0, -1.0, 12), 0.5)
    scored = vr.judge(f, s, estimates=given, explain=False)
    assert (scored.verdict, scored.why) == (vr.CONTRADICTED, "the interval lies outside the region")
    assert (scored.stat, scored.p_value, scored.n, scored.informative) == (given.stat, 0.5, 12, 12)
    assert vr.estimate(f, s) == vr.Estimates(own.a, own.b, own.stat, own.p_value)


def _cross(tmp_path, containing_top1: list[float]) -> fnd.Results:
    rows = []
    for i, hit1 in enumerate(containing_top1):
        for m, v in (("Hit@1", hit1), ("Hit@10", 1.0)):
            rows.append({"system": "bm25", "measure": m, "threshold": 2, "qid": f"q{i:02d}", "value": v,
                         "corpus": "answer-containing"})
        for m, v in (("Hit@1", 0.0), ("Hit@10", float(i % 2))):
            rows.append({"system": "bm25", "measure": m, "threshold": 2, "qid": f"q{i:02d}", "value": v,
                         "corpus": "answer-supporting"})
    return _results(tmp_path, **{"02_per_question": pd.DataFrame(rows)})


def test_cross_corpus_control_that_ranks_first_by_construction_is_inconclusive(tmp_path):
    f = next(f for f in fnd.load_paper_numbers() if f.id == "containing_beats_supporting")
    s = fnd.score(f, _cross(tmp_path, [1.0] * 20))
    assert s.verdict == vr.INCONCLUSIVE and s.why.startswith("by construction")
    (tmp_path / "fair").mkdir()
    fair = fnd.score(f, _cross(tmp_path / "fair", [1.0] * 15 + [0.0] * 5))
    assert (
        fair.verdict == vr.HOLDS and fair.a.value == 87.5 and fair.b.value == 25.0
    )  # mean over Hit@1, Hit@10


def test_cross_corpus_prefers_the_llm_judged_comparison_and_scores_it_size_matched(tmp_path):
    """With notebook 02's fair comparison present, F1 reads the LLM-judged rows (not the
    contains-the-answer control, here ranking first by construction), and the size-matched
    finding reads its own rows: judged containing 60 vs supporting 20 → holds; size-matched
    containing 60 vs supporting 60 → contradicted (no gap at equal size)."""
    rows = []
    for i in range(20):
        q = f"q{i:02d}"
        for corpus, v in (("answer-containing", 1.0), ("answer-supporting", 0.0),
                          ("answer-containing, LLM-judged", float(i % 5 < 3)),
                          ("answer-supporting, LLM-judged", float(i % 5 == 0)),
                          ("answer-containing, LLM-judged, size-matched", float(i % 5 < 3)),
                          ("answer-supporting, LLM-judged, size-matched", float(i % 5 < 3))):
            rows.append({"system": "bm25", "measure": "Hit@1", "threshold": 2, "qid": q, "value": v,
                         "corpus": corpus})
    res = _results(tmp_path, **{"02_per_question": pd.DataFrame(rows)})
    f1 = next(f for f in fnd.load_paper_numbers() if f.id == "containing_beats_supporting")
    s = fnd.score(f1, res)
    assert (s.a.value, s.b.value, s.verdict) == (60.0, 20.0, vr.HOLDS)
    matched = next(f for f in fnd.load_paper_numbers() if f.id == "containing_beats_supporting_size_matched")
    m = fnd.score(matched, res)
    assert (m.a.value, m.b.value, m.verdict) == (60.0, 60.0, vr.CONTRADICTED)
