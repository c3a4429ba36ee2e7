"""Retrieval metrics (paper 000 §4, §5.1–5.2) against hand-computed examples, and against ir-measures
(pytrec_eval backend) as an independent oracle, value for value."""

from __future__ import annotations

import math
import random

import pytest

from inferqa_utils.measure.metrics import (
    AUTHORS_SKIP,
    DEFAULT_METRICS,
    SKIP_ALL,
    evaluate,
    graded_gain,
    hit_curve,
    hit_per_query,
    ideal_labels,
    ndcg_at,
    parse_metric,
    per_query,
    question_scores,
    relevant,
    score,
)

U = [f"u{i}" for i in range(1, 11)]  # passages unknown to the qrels: non-relevant

QRELS = {
    "q1": {"p1": 2, "p2": 1, "p3": 0},
    "q2": {"p4": 1, "p8": 2},
    "q3": {"p5": 0},  # no relevant passage at all: skipped by every metric
    "q4": {"p6": 1, "p7": 1},  # no label-2 passage: skipped at threshold 2 (but counts for nDCG)
}
RUN = {
    #            rank 1      2          3          4
    "q1": [("x", 9.0), ("p2", 8.0), ("p3", 7.0), ("p1", 6.0)],
    # p4 at rank 1, ten unknown passages (ranks 2-11), p8 at rank 12
    "q2": [("p4", 20.0), *[(u, 19.0 - i) for i, u in enumerate(U)], ("p8", 1.0)],
    "q3": [("p5", 1.0)],
    # five unknown passages, p6 at rank 6; p7 never retrieved
    "q4": [*[(u, 10.0 - i) for i, u in enumerate(U[:5])], ("p6", 1.0)],
    "q9": [("p1", 1.0)],  # not in the qrels: ignored
}

# Threshold 1 (relevant = label >= 1): questions q1, q2, q4 (n = 3)
#   first relevant rank: q1 2 (p2), q2 1 (p4), q4 6 (p6)
#   Hit@1   = (0 + 1 + 0) / 3 = 33.333 %     Hit@5 = (1 + 1 + 0) / 3 = 66.667 %   Hit@10.. = 100 %
#   Recall@5  = (2/2 + 1/2 + 0/2) / 3 = 50 %
#   Recall@10 = (2/2 + 1/2 + 1/2) / 3 = 66.667 %
#   Recall@50 = (2/2 + 2/2 + 1/2) / 3 = 83.333 %
#   MRR@100   = (1/2 + 1/1 + 1/6) / 3 = 55.556 %
EXPECTED_T1 = {"Hit@1": 100 / 3, "Hit@5": 200 / 3, "Hit@10": 100.0, "Hit@20": 100.0, "Hit@50": 100.0,
               "Hit@100": 100.0, "Recall@5": 50.0, "Recall@10": 200 / 3, "Recall@50": 250 / 3,
               "MRR@100": 100 * (0.5 + 1 + 1 / 6) / 3}
# Threshold 2 (relevant = label 2): questions q1 (p1 at rank 4) and q2 (p8 at rank 12) (n = 2)
#   Hit@1 = 0   Hit@5 = Hit@10 = (1 + 0) / 2 = 50 %   Hit@20.. = 100 %
#   Recall@5 = Recall@10 = 50 %   Recall@50 = 100 %
#   MRR@100 = (1/4 + 1/12) / 2 = 16.667 %
EXPECTED_T2 = {
    "Hit@1": 0.0,
    "Hit@5": 50.0,
    "Hit@10": 50.0,
    "Hit@20": 100.0,
    "Hit@50": 100.0,
    "Hit@100": 100.0,
    "Recall@5": 50.0,
    "Recall@10": 50.0,
    "Recall@50": 100.0,
    "MRR@100": 100 * (1 / 4 + 1 / 12) / 2,
}
# nDCG, gain 2^label - 1 (label 1 -> 1, label 2 -> 3), discount log2(rank + 1), any threshold;
# questions with a label > 0: q1, q2, q4 (n = 3).
#   q1: DCG  = 1/log2(3) + 3/log2(5) = 0.630930 + 1.292030 = 1.922960
#       IDCG = 3/log2(2) + 1/log2(3) = 3 + 0.630930       = 3.630930   -> 0.529605 (@10 and @100)
#       (linear gains would give (0.630930 + 2/log2(5)) / (2 + 0.630930) = 0.567 instead)
#   q2: @10:  DCG = 1/log2(2) = 1                          -> 1 / 3.630930        = 0.275412
#       @100: DCG = 1 + 3/log2(13) = 1 + 0.810714 = 1.810714 -> 1.810714 / 3.630930 = 0.498692
#   q4: DCG = 1/log2(7) = 0.356207; IDCG = 1 + 1/log2(3) = 1.630930  -> 0.218407
#   nDCG@10  = (0.529605 + 0.275412 + 0.218407) / 3 = 34.114 %
#   nDCG@100 = (0.529605 + 0.498692 + 0.218407) / 3 = 41.557 %
Q1_NDCG = (1 / math.log2(3) + 3 / math.log2(5)) / (3 + 1 / math.log2(3))
EXPECTED_NDCG = {"nDCG@10": 34.1141410, "nDCG@100": 41.5568120}


def test_graded_gain_and_parse():
    assert [graded_gain(x) for x in (-1, 0, 1, 2, 3)] == [0, 0, 1, 3, 7]
    assert parse_metric("nDCG@10") == ("nDCG", 10)
    with pytest.raises(ValueError, match="unknown metric"):
        parse_metric("P@10")


@pytest.mark.parametrize(("threshold", "expected", "n"), [(1, EXPECTED_T1, 3), (2, EXPECTED_T2, 2)])
def test_every_metric_by_hand(threshold, expected, n):
    row = evaluate(RUN, QRELS, threshold=threshold).iloc[0]
    for name, value in {**expected, **EXPECTED_NDCG}.items():
        assert row[name] == pytest.approx(value, abs=1e-4), name
    assert list(row.index[:len(DEFAULT_METRICS)]) == list(DEFAULT_METRICS)
    assert row["n_questions"] == n
    assert row["n_questions_ndcg"] == 3
    assert row["threshold"] == threshold


def test_per_query_skips_questions_without_relevant_passages():
    pq = per_query(RUN, QRELS, threshold=1)
    assert list(pq.index) == ["q1", "q2", "q3", "q4"]  # the qrels' questions; q9 (run only) ignored
    assert pq.loc["q3"].isna().all()
    assert pq.loc["q1", "MRR@100"] == pytest.approx(0.5)
    assert pq.loc["q1", "nDCG@10"] == pytest.approx(Q1_NDCG)
    pq2 = per_query(RUN, QRELS, threshold=2)
    assert pq2.loc["q4", ["Hit@1", "Recall@5", "MRR@100"]].isna().all()
    assert pq2.loc["q4", "nDCG@10"] == pytest.approx(0.218407, abs=1e-6)  # nDCG stays graded


def test_unknown_passages_and_missing_questions():
    qrels = {"a": {"p1": 1}, "b": {"p2": 1}}
    run = {"a": [("nope", 2.0), ("p1", 1.0)]}  # "b" is not in the run at all
    pq = per_query(run, qrels, metrics=("Hit@1", "Hit@5", "MRR@100", "nDCG@10"))
    assert pq.loc["a", "Hit@1"] == 0 and pq.loc["a", "Hit@5"] == 1 and pq.loc["a", "MRR@100"] == 0.5
    assert pq.loc["b"].tolist() == [0.0, 0.0, 0.0, 0.0]  # relevant passages but not retrieved: 0, not skipped
    row = evaluate({"a": [], "zzz": [("p1", 1.0)]}, qrels, metrics=("Hit@5",)).iloc[0]
    assert row["Hit@5"] == 0 and row["n_questions"] == 2


def test_list_order_is_the_ranking_and_mrr_cutoff():
    qrels = {"q": {"b": 1}}
    # equal scores: trec_eval alone would put "b" first (ties broken by docid, descending)
    assert per_query({"q": [("a", 1.0), ("b", 1.0)]}, qrels, metrics=("MRR@100",)).iloc[0, 0] == 0.5
    run = {"q": [("x", 3.0), ("y", 2.0), ("b", 1.0)]}
    pq = per_query(run, qrels, metrics=("MRR@2", "MRR@3"))
    assert pq.loc["q", "MRR@2"] == 0.0  # relevant at rank 3 is outside the cutoff
    assert pq.loc["q", "MRR@3"] == pytest.approx(1 / 3)


def test_duplicate_passage_in_run_is_an_error():
    with pytest.raises(ValueError, match="appears twice"):
        per_query({"q": [("a", 2.0), ("a", 1.0)]}, {"q": {"a": 1}})


def test_hit_curve_matches_evaluate():
    ks = [1, 5, 10, 20, 50, 100]
    for threshold, expected in ((1, EXPECTED_T1), (2, EXPECTED_T2)):
        curve = hit_curve(RUN, QRELS, ks, threshold=threshold)
        assert curve["k"].tolist() == ks
        assert curve["hit"].tolist() == pytest.approx([expected[f"Hit@{k}"] for k in ks])
        assert (curve["threshold"] == threshold).all()
    full = hit_curve(RUN, QRELS, range(1, 13), threshold=2)
    # q1's label-2 passage at rank 4, q2's at rank 12
    assert full.set_index("k")["hit"].to_dict() == {
        k: (0 if k < 4 else 50 if k < 12 else 100) for k in range(1, 13)
    }


# ----------------------------------------------------------------------------- one question, each convention


def test_score_of_one_question_by_hand():
    labels = {"a": 2, "b": 1, "c": 0}
    ranked = ["x", "b", "c", "a"]
    rel, ideal = relevant(labels), ideal_labels(labels)
    assert rel == {"a", "b"} and ideal == [2, 1] and relevant(labels, 2) == {"a"}
    assert [score("Hit", k, ranked, labels, rel, ideal) for k in (1, 2)] == [0.0, 1.0]
    assert [score("Recall", k, ranked, labels, rel, ideal) for k in (2, 4)] == [0.5, 1.0]
    assert [score("MRR", k, ranked, labels, rel, ideal) for k in (1, 2)] == [0.0, 0.5]
    # DCG@4 = 1/log2 3 + 3/log2 5, IDCG@4 = 3/log2 2 + 1/log2 3 (the same sums, left to right)
    assert score("nDCG", 4, ranked, labels, rel, ideal) == (1 / math.log2(3) + 3 / math.log2(5)) / (
        3 / math.log2(2) + 1 / math.log2(3)
    )
    assert ndcg_at(ranked, labels, 1) == 0.0


@pytest.mark.parametrize(
    ("skip", "expected"),
    [
        (SKIP_ALL, [None, None, None, None]),
        (AUTHORS_SKIP, [None, None, 0.0, 0.0]),  # the authors': MRR and nDCG count the question as 0
        ((), [0.0, 0.0, 0.0, 0.0]),
    ],
)
def test_a_question_without_relevant_passage_is_skipped_per_kind(skip, expected):
    labels = {"a": 0, "b": -1}  # no label >= 1 and none > 0
    got = [score(kind, 10, ["a", "b"], labels, relevant(labels), ideal_labels(labels), skip)
           for kind in ("Hit", "Recall", "MRR", "nDCG")]
    assert got == expected


def test_threshold_two_skips_hit_but_not_graded_ndcg():
    labels = {"a": 1}  # relevant at threshold 1 only; nDCG is graded and still counts
    out = question_scores({"q": ["a"]}, {"q": labels}, ("Hit@1", "nDCG@1"), threshold=2)
    assert out == {"Hit@1": {"q": None}, "nDCG@1": {"q": 1.0}}
    # a question missing from the ranking has an empty list; one missing from the labels has none
    out = question_scores({}, {"q": labels}, ("Hit@1", "MRR@5"), qids=["q", "z"], skip=())
    assert out == {"Hit@1": {"q": 0.0, "z": 0.0}, "MRR@5": {"q": 0.0, "z": 0.0}}


# ----------------------------------------------------------------------------- ir-measures as the oracle


def _oracle(run, qrels, threshold, metrics):
    """Per-question values from ir-measures' pytrec_eval provider, made to follow our definitions:

    * relevance thresholded by binarising the qrels (label >= threshold -> 1, else 0): pytrec_eval's
      ``R`` does not accept ``rel`` in ir-measures;
    * pytrec_eval's nDCG uses the label as the gain, so the qrels' labels are replaced by 2^label - 1;
    * the provider ignores the cutoff of ``RR@k`` (it gives RR@2 = 1/3 for a relevant passage at
      rank 3), so MRR@k is ``RR`` on the run cut at k;
    * trec_eval re-sorts by score and breaks ties by passage id, so the scores are replaced by n - rank.
    """
    import ir_measures
    from ir_measures import RR, R, Success, nDCG

    binary = {q: {d: int(lab >= threshold) for d, lab in docs.items()} for q, docs in qrels.items()}
    binary = {q: docs for q, docs in binary.items() if any(docs.values())}
    gains = {q: {d: graded_gain(lab) for d, lab in docs.items()} for q, docs in qrels.items()}
    gains = {q: docs for q, docs in gains.items() if any(docs.values())}

    def ranked(depth):
        return {q: {d: float(len(docs[:depth]) - i) for i, (d, _s) in enumerate(docs[:depth])}
                for q, docs in run.items() if docs}

    out = {}
    for name in metrics:
        kind, k = parse_metric(name)
        measure = {"Hit": Success @ k, "Recall": R @ k, "MRR": RR, "nDCG": nDCG @ k}[kind]
        q = gains if kind == "nDCG" else binary
        vals = {m.query_id: m.value for m in ir_measures.pytrec_eval.iter_calc([measure], q, ranked(k))}
        out[name] = {qid: (vals.get(qid, 0.0) if qid in q else None) for qid in qrels}
    return out


def _random_case(rng):
    vocab = [f"p{i}" for i in range(rng.choice([8, 40, 150]))]
    qrels = {
        f"q{i}": {p: rng.choice((0, 1, 2)) for p in rng.sample(vocab, rng.randint(1, min(30, len(vocab))))}
        for i in range(rng.randint(1, 12))
    }
    run = {}
    for q in [*qrels, "elsewhere"]:
        if rng.random() < 0.15:
            continue  # the run lacks the question
        pool = vocab + [f"u{i}" for i in range(50)]
        ids = rng.sample(pool, rng.randint(0, min(120, len(pool))))
        run[q] = [(d, 1.0) for d in ids]  # tied scores: the list order is the ranking
    return qrels, run


def test_every_value_equals_ir_measures_exactly():
    rng = random.Random(7)
    ks = (1, 2, 3, 5, 10, 20, 50, 100)
    metrics = [f"{kind}@{k}" for kind in ("Hit", "Recall", "MRR", "nDCG") for k in ks]
    compared = 0
    for _ in range(40):
        qrels, run = _random_case(rng)
        for threshold in (1, 2):
            ours = per_query(run, qrels, threshold, metrics)
            oracle = _oracle(run, qrels, threshold, metrics)
            for m in metrics:
                for qid, want in oracle[m].items():
                    got = ours.loc[qid, m]
                    assert (math.isnan(got) if want is None else got == want), (m, qid, got, want)
                    compared += want is not None
    assert compared > 10_000


def test_hit_per_query_equals_per_query():
    rng = random.Random(3)
    for _ in range(10):
        qrels, run = _random_case(rng)
        ks = (1, 4, 17, 100)
        hits = hit_per_query(run, qrels, ks, threshold=2)
        pq = per_query(run, qrels, 2, [f"Hit@{k}" for k in ks]).dropna()
        assert list(hits.index) == list(pq.index)
        assert (hits.to_numpy() == pq.to_numpy()).all()
