"""The fair answer-containing control (inferqa_utils.retrieval.pooled): pooling, size matching,
pooled Hit@k and the paired comparison, on hand-made runs with hand-checked values."""

from __future__ import annotations

import pandas as pd
import pytest

from inferqa_utils.retrieval import pooled


def _owner(pid: str) -> str | None:
    return pid.split("_")[0] if "_" in pid else None


SUP = {f"q{i}_{j}": f"hint text {i} {j}" for i in (1, 2, 3) for j in range(3)}
RUNS = {"bm25": {"q1": [("q2_0", 9.0), ("q1_1", 8.0), ("q3_0", 7.0), ("q1_0", 6.0)],
                 "q2": [("q2_2", 5.0), ("q1_0", 4.0)]},
        "dense": {"q1": [("q1_1", 0.9), ("q1_2", 0.8)], "q2": [("q3_1", 0.7)]}}


def test_pool_is_the_union_of_tops_in_first_seen_order() -> None:
    c = pooled.JudgedCorpus("s", SUP, RUNS, _owner)
    p = pooled.pool([c], ["q1", "q2"], depth=2, extra={"s": {"q2": ["q2_1"]}})
    assert p == {"s": {"q1": ["q2_0", "q1_1", "q1_2"], "q2": ["q2_2", "q1_0", "q3_1", "q2_1"]}}


def test_pooled_hits_count_only_judged_relevant_within_k() -> None:
    c = pooled.JudgedCorpus("s", SUP, RUNS, _owner)
    qrels = {"s": {"q1": {"q2_0": 1, "q1_1": 2}, "q2": {"q1_0": 2}}}
    h = pooled.pooled_hits([c], qrels, ["q1", "q2"], ks=(1, 2))
    got = {(r.system, r.qid, r.measure): r.value for r in h.itertuples()}
    # bm25 q1: rank 1 judged 1 (not relevant), rank 2 judged 2 → Hit@1 0, Hit@2 100
    assert got[("bm25", "q1", "Hit@1")] == 0 and got[("bm25", "q1", "Hit@2")] == 1
    assert got[("bm25", "q2", "Hit@1")] == 0 and got[("bm25", "q2", "Hit@2")] == 1
    assert got[("dense", "q1", "Hit@1")] == 1
    # dense q2: its only passage q3_1 was never judged → counts as not relevant
    assert got[("dense", "q2", "Hit@2")] == 0
    assert set(h["threshold"]) == {2}


def test_size_matched_runs_keep_own_items_and_a_seeded_sample() -> None:
    runs = {"bm25": {"q1": [(p, 1.0) for p in sorted(SUP)]}}
    a = pooled.size_matched_runs(runs, SUP, _owner, size=5, qids=["q1"], seed=1)
    b = pooled.size_matched_runs(runs, SUP, _owner, size=5, qids=["q1"], seed=1)
    kept = [p for p, _ in a["bm25"]["q1"]]
    assert a == b and len(kept) == 5
    assert {"q1_0", "q1_1", "q1_2"} <= set(kept)  # own passages always kept
    assert kept == [p for p in sorted(SUP) if p in kept]  # full-corpus order preserved
    c = pooled.size_matched_runs(runs, SUP, _owner, size=5, qids=["q1"], seed=2)
    assert len(c["bm25"]["q1"]) == 5


def test_reference_owner() -> None:
    qids = {"q1", "tc_12", "a:b"}
    assert pooled.reference_owner("ref:q1", qids) == "q1"
    assert pooled.reference_owner("ref:q1:2", qids) == "q1"
    assert pooled.reference_owner("ref:a:b", qids) == "a:b"
    assert pooled.reference_owner("ref:zz", qids) is None


def test_comparison_table_pairs_containing_minus_supporting() -> None:
    rows = []
    for qid, s, c in (("q1", 0, 100), ("q2", 0, 100), ("q3", 100, 100), ("q4", 0, 0)):
        rows += [{"corpus": pooled.SUPPORTING_JUDGED, "system": "bm25", "measure": "Hit@1", "threshold": 2,
                  "qid": qid, "value": s / 100},
                 {"corpus": pooled.CONTAINING_JUDGED, "system": "bm25", "measure": "Hit@1", "threshold": 2,
                  "qid": qid, "value": c / 100}]
    corpora = [pooled.JudgedCorpus(pooled.SUPPORTING_JUDGED, {}, {}, _owner),
               pooled.JudgedCorpus(pooled.CONTAINING_JUDGED, {}, {}, _owner)]
    t = pooled.comparison_table(pd.DataFrame(rows), corpora)
    mean = dict(zip(t["corpus"], t["mean"], strict=True))
    assert mean[pooled.SUPPORTING_JUDGED] == 25.0 and mean[pooled.CONTAINING_JUDGED] == 75.0
    assert mean["containing − supporting"] == 50.0
    d = t[t["corpus"] == "containing − supporting"].iloc[0]
    # two discordant questions: of the 4 equally likely sign flips, 2 give |mean| ≥ 50 → p = 0.5
    assert d["p"] == pytest.approx(0.5, abs=0.01)
    assert d["n"] == 4
    assert "containing − supporting" in pooled.comparison_display(t).columns
