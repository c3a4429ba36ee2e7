"""Incremental inference, probe tables and SER (paper 004): pure logic with hand-checked
values, and the real tiny model (SmolLM2-135M) for KV-prefix reuse."""

from __future__ import annotations

import itertools
import random

import pandas as pd
import pytest

from inferqa_utils.damaging import incremental as inc
from inferqa_utils.damaging import measures
from inferqa_utils.damaging import ser as ser
from inferqa_utils.damaging import summary as dr
from inferqa_utils.damaging.patterns import PROBES, TYPES
from inferqa_utils.ir.datamodel import Dataset, Hint, Passage, Question
from inferqa_utils.reading.contexts import build_context
from inferqa_utils.reading.setup import ReadingSetup

# ---------------------------------------------------------------- contexts

P = [["A.", "B."], ["B.", "C."], ["A."], ["D.", "A.", " "], ["C."]]


def test_prefix_contexts_equal_union_norm_and_extend_each_other():
    ctxs = inc.prefix_contexts(P)
    assert ctxs == ["A. B.", "A. B. C.", "A. B. C.", "A. B. C. D.", "A. B. C. D."]
    assert ctxs == [build_context(P, k, "norm") for k in range(1, len(P) + 1)]
    for a, b in itertools.pairwise(ctxs):
        assert b.startswith(a)
    assert inc.prefix_contexts([]) == []


def test_subset_context_keeps_rank_order():
    assert inc.subset_context(P, [3, 0]) == "A. B. D."
    assert inc.subset_context(P, [1, 4]) == "B. C."
    assert inc.subset_context(P, []) == ""


# ---------------------------------------------------------------- tables from hand-made readings


def _inc(system: str, patterns: dict[str, str], judged: dict[str, str] | None = None,
         passages: dict[str, int] | None = None) -> pd.DataFrame:
    rows = []
    for qid, pat in patterns.items():
        jp = (judged or {}).get(qid, pat)
        m = (passages or {}).get(qid, len(pat))
        for k, (e, j) in enumerate(zip(pat, jp, strict=True), start=1):
            rows.append({"system": system, "qid": qid, "k": k, "pid": f"{qid}-p{k}" if k <= m else "",
                         "answer": "x", "em": e == "1", "judged": j == "1", "no_answer": False,
                         "adds": k <= m, "context_chars": 10 * k})
    return pd.DataFrame(rows)


def test_patterns_curves_and_types():
    # q1 "0110" (IZ DP SP DN), q2 "1000" (DP DN SN SN), q3 "0000" (IZ ×4); q3 judged "0011"
    df = _inc("bm25", {"q1": "0110", "q2": "1000", "q3": "0000"}, judged={"q3": "0011"})
    assert inc.patterns_of(df) == {"q1": "0110", "q2": "1000", "q3": "0000"}
    assert inc.patterns_of(df, "judged")["q3"] == "0011"
    with pytest.raises(ValueError):
        inc.patterns_of(df, "f1")
    c = measures.em_curves(df)
    strict = c[c["metric"] == "em"]
    # EM@k: 1/3, 1/3, 1/3, 0 ; AcEM@k: 1/3, 2/3, 2/3, 2/3
    assert strict["EM"].tolist() == pytest.approx([100 / 3, 100 / 3, 100 / 3, 0.0])
    assert strict["AcEM"].tolist() == pytest.approx([100 / 3, 200 / 3, 200 / 3, 200 / 3])
    judged = c[c["metric"] == "judged"]
    assert judged["EM"].tolist() == pytest.approx([100 / 3, 100 / 3, 200 / 3, 100 / 3])
    assert judged["AcEM"].tolist()[-1] == pytest.approx(100.0)
    t = measures.type_table(df).iloc[0]
    assert (t["IZ"], t["DP"], t["DN"], t["SP"], t["SN"]) == (5, 2, 2, 1, 2)
    assert t["questions with DN (%)"] == pytest.approx(66.67)


def test_damaging_intervals_hand_checked():
    # strict: q1 "0110" and q2 "1000" are damaged (correct at some k, wrong at N = 4), q3 never correct
    # EM@4 = 0, AcEM@4 = 2/3; the two discordant questions both favour AcEM: exact p = 2 / 2² = 0.5
    df = _inc("bm25", {"q1": "0110", "q2": "1000", "q3": "0000"}, judged={"q3": "0011"})
    t = measures.damaging_intervals({"answer-supporting": df}).set_index("metric")
    s = t.loc["em"]
    assert (s["N"], s["EM@N"], s["AcEM@N"], s["damaged questions"], s["n_questions"]) == (4, 0.0, 66.67, 2, 3)
    assert s["AcEM − EM"] == 66.67 and s["p (paired)"] == pytest.approx(0.5)
    assert s["EM_lo"] == s["EM_hi"] == 0.0 and 0.0 <= s["AcEM_lo"] < 66.67 < s["AcEM_hi"] <= 100.0
    j = t.loc["judged"]  # q3 judged "0011": correct at N, not damaged
    assert (j["EM@N"], j["AcEM@N"], j["damaged questions"]) == (33.33, 100.0, 2)
    assert measures.damaging_intervals({"x": df.iloc[0:0]}).empty


def test_padding_of_short_lists_is_not_counted_as_passages():
    # q1 has 2 passages; "11" padded to N = 4 → "1111": only DP SP are real passages
    df = _inc("bm25", {"q1": "1111"}, passages={"q1": 2})
    t = measures.type_table(df).iloc[0]
    assert (t["DP"], t["SP"]) == (1, 1) and t[list(TYPES)].sum() == 2
    assert inc.pattern_table(df)["em_types"].tolist() == ["DP SP"]


def test_probe_curves_table_and_comparison():
    df = _inc("e5", {"q1": "0110", "q2": "1000"})
    probes = pd.DataFrame(
        [
            {
                "system": "e5",
                "qid": q,
                "metric": m,
                "k": 4,
                "probe": p,
                "n_kept": 1,
                "kept": "1",
                "answer": "x",
                "correct": q == "q1" or p == "P3",
            }
            for q in ("q1", "q2")
            for m in inc.METRICS
            for p in sorted(PROBES)
        ]
    )
    curves = measures.probe_curves(df, probes)
    assert len(curves) == 2  # k = 4 for both metrics
    row = curves[curves["metric"] == "em"].iloc[0]
    assert (row["EM"], row["AcEM"], row["Probe 3"], row["Probe 1"]) == (0.0, 100.0, 100.0, 50.0)
    table = dr.probe_table(curves)
    assert table["N"].tolist() == [4, 4] and set(table["metric"]) == {"strict EM", "judged (Se)"}
    comp = dr.damaging_comparison(
        {"answer-supporting": curves, "answer-containing": curves.assign(AcEM=50.0)}
    )
    assert comp["AcEM − EM"].tolist() == [100.0, 50.0]
    assert comp["Probe 3 (EM)"].tolist() == [100.0, 100.0]
    assert "larger on the answer-supporting corpus" in dr.comparison_sentence(comp)
    assert "No prefix is ever answered" not in dr.comparison_sentence(comp)
    zero = dr.damaging_comparison(
        {"answer-supporting": curves.assign(AcEM=0.0, EM=0.0), "answer-containing": curves}
    )
    assert "e5 on the answer-supporting corpus: AcEM@N = 0" in dr.comparison_sentence(zero)
    assert "Only one corpus" in dr.comparison_sentence(comp[comp["corpus"] == "answer-supporting"])


# ---------------------------------------------------------------- SER logic


def _ds() -> Dataset:
    qs = {}
    passages = {}
    for qid, ans, hints in [("q1", "Paris", ["It is a capital.", "It has a tower.", "It is on the Seine."]),
                            ("q2", "Mars", ["It is red.", "It has two moons.", "Rovers drive on it."])]:
        qs[qid] = Question(qid, f"Which thing is {qid}?", [ans], [Hint(h) for h in hints],
                           reference=f"{ans} is described here.")
        for ids in [(0,), (1,), (0, 1), (0, 1, 2)]:
            pid = f"{qid}_{''.join(map(str, ids))}"
            passages[pid] = Passage(pid, qid, ids, " ".join(hints[i] for i in ids))
    qrels = {"q1": {"q1_0": 1, "q1_1": 2, "q1_01": 2, "q1_012": 2}, "q2": {"q2_0": 0, "q2_012": 2}}
    return Dataset("t", qs, passages, qrels, {"test": ["q1", "q2"]})


def test_gold_candidates_and_exclusions():
    ds = _ds()
    assert ser.supporting_gold_candidates(ds, "q1") == ["q1_012", "q1_01", "q1_1"]
    assert ser.supporting_gold_candidates(ds, "q2") == ["q2_012"]
    assert ser.containing_gold_candidates({"q1": {"ref:q1": 2, "ref:q9": 2}}, "q1") == ["ref:q1"]
    assert ser.containing_gold_candidates({"q1": {"ref:q9": 2}}, "q1") == []
    corpus = {pid: p.text for pid, p in ds.passages.items()} | {"x": "Paris is nice.", "y": "Unrelated."}
    ex = ser.excluded_for(ds, "q1", corpus)
    assert ex == {"q1_0", "q1_1", "q1_01", "q1_012", "x"}  # own passages + the one naming Paris


def test_negative_sampling_is_seeded_and_respects_exclusions():
    pool = [f"p{i}" for i in range(10)]
    a = ser.random_negatives(pool, {"p0", "p1"}, 4, random.Random("13:q1:0"))
    b = ser.random_negatives(pool, {"p0", "p1"}, 4, random.Random("13:q1:0"))
    assert a == b and len(set(a)) == 4 and not {"p0", "p1"} & set(a)
    with pytest.raises(ValueError):
        ser.random_negatives(pool, set(pool[1:]), 2, random.Random(0))
    assert ser.bm25_negatives(["p3", "p0", "p5", "p1", "p7"], {"p0", "p1"}, 2) == ["p3", "p5"]
    assert ser.bm25_negatives(["p3"], set(), 4) == ["p3"]
    ds = _ds()
    corpus = {pid: p.text for pid, p in ds.passages.items()}
    bm25 = {"q1": [("q1_0", 3.0), ("q2_0", 2.0), ("q2_1", 1.5), ("q2_01", 1.0), ("q2_012", 0.5)]}
    neg = ser.sample_negatives(ds, {"q1": ("q1_012", "Paris")}, corpus, bm25, max_extra=3, samples=2)
    assert neg["BM25"]["q1"] == [["q2_0", "q2_1", "q2_01"]]
    short = ser.sample_negatives(ds, {"q1": ("q1_012", "Paris")}, corpus, {"q1": bm25["q1"][:3]}, max_extra=3)
    assert "q1" not in short["BM25"] and len(short["random"]["q1"][0]) == 3  # 2 BM25 negatives < 3
    assert len(neg["random"]["q1"]) == 2
    assert all(p.startswith("q2_") for s in neg["random"]["q1"] for p in s)
    assert neg == ser.sample_negatives(ds, {"q1": ("q1_012", "Paris")}, corpus, bm25, max_extra=3, samples=2)


def test_ser_table_hand_checked():
    rows = []
    # random: 2 pairs; m=1 nothing changes, m=2 one of two changes → 0 %, 50 %
    for q, base, a2 in [("q1", "Paris", "paris."), ("q2", "Mars", "Venus")]:
        rows += [
            {
                "kind": "random",
                "qid": q,
                "sample": 0,
                "m": 1,
                "base_answer": base,
                "answer": base,
                "em": True,
            },
            {
                "kind": "random",
                "qid": q,
                "sample": 0,
                "m": 2,
                "base_answer": base,
                "answer": a2,
                "em": a2 != "Venus",
            },
        ]
    # BM25: 1 pair, changed at m=1 and m=2 → 100 %, 100 %
    rows += [{"kind": "BM25", "qid": "q1", "sample": 0, "m": m, "base_answer": "Paris", "answer": "London",
              "em": False} for m in (1, 2)]
    t = ser.ser_table(pd.DataFrame(rows))
    assert t.loc["SER w/ random", 1] == 0.0 and t.loc["SER w/ random", 2] == 50.0
    assert t.loc["SER w/ BM25", 1] == 100.0 and t.loc["SER w/ BM25", 2] == 100.0
    assert t.loc["SER w/ random", "pairs"] == 2 and t.loc["SER w/ random", "EM at m = 2 (%)"] == 50.0


# ---------------------------------------------------------------- the real tiny model


@pytest.mark.slow
def test_incremental_reuse_evaluates_fewer_tokens_and_matches_naive():
    from inferqa_utils.construction.passages import build_passages
    from inferqa_utils.llm import load_llm
    from inferqa_utils.sources import load_source

    src = load_source("embedded")
    qs = [q for q in src if len(q.hints) >= 3][:2]
    passages = {p.pid: p for q in qs for p in build_passages(q.qid, q.hint_texts[:3])}
    questions = {q.qid: Question(q.qid, q.question, q.answers, q.hints[:3]) for q in qs}
    ds = Dataset("tiny", questions, passages, {}, {"test": list(questions)})
    a, b = (q.qid for q in qs)
    # each question: one of its own 1-hint passages, one of the other question's, then a 2-hint own one
    run = {a: [(f"{a}_100_0", 3.0), (f"{b}_010_1", 2.0), (f"{a}_011_12", 1.0)],
           b: [(f"{b}_001_2", 3.0), (f"{a}_100_0", 2.0), (f"{b}_110_01", 1.0)]}
    assert all(pid in passages for lst in run.values() for pid, _ in lst)
    reuse = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048)
    naive = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048, prefix_reuse=False,
                     order_prompts=False)
    r = inc.incremental_inference(ReadingSetup(reuse, None, ds, progress=False), run, [a, b], 3)
    n = inc.incremental_inference(ReadingSetup(naive, None, ds, progress=False), run, [a, b], 3)
    assert len(r) == 6 and r["k"].tolist() == [1, 2, 3, 1, 2, 3]
    assert reuse.stats.model_calls == naive.stats.model_calls == 6  # every prefix adds a sentence here
    assert naive.stats.prompt_tokens == naive.stats.prompt_tokens_total
    assert reuse.stats.prompt_tokens_total == naive.stats.prompt_tokens_total
    assert reuse.stats.prompt_tokens < 0.5 * reuse.stats.prompt_tokens_total
    assert r["answer"].tolist() == n["answer"].tolist()
    assert inc.patterns_of(r) == inc.patterns_of(n)


class _KeywordReader:
    """Answers from the context's words: "red" → Mars, else "capital" → Paris, else Rome."""

    name = "kw"

    def __init__(self) -> None:
        from inferqa_utils.llm.base import LLMStats

        self.stats = LLMStats()

    def chat(self, batch, max_tokens=None, desc="", progress=True, until=None):
        texts = [m[-1]["content"].split("Context:")[1] for m in batch]
        return ["Mars" if "red" in t else "Paris" if "capital" in t else "Rome" for t in texts]


class _Judge:
    """Says Yes to every answer, or fails the test when ``asked`` is not allowed."""

    name = "judge"

    def __init__(self, allowed: bool) -> None:
        self.allowed = allowed

    def chat(self, batch, max_tokens=None, desc="", progress=True, until=None):
        assert self.allowed, "the judge was asked"
        return ["Yes"] * len(batch)


def test_readings_take_reader_judge_and_corpus_from_the_setup():
    """Incremental inference reads the set-up's corpus and asks its judge (Rome is judged right);
    the SER readings read the same corpus and never ask the judge: q1's first candidate (one hint)
    gives Rome, its second (hints 0 1) Paris; adding x keeps Paris, adding q2_0 ("It is red.")
    changes it to Mars."""
    ds = _ds()
    corpus = {pid: p.text for pid, p in ds.passages.items()} | {"x": "Unrelated words."}
    setup = ReadingSetup(_KeywordReader(), _Judge(allowed=True), ds, corpus, progress=False)
    df = inc.incremental_inference(setup, {"q1": [("x", 2.0), ("q1_0", 1.0)]}, ["q1"], 2, system="s")
    assert df[["k", "pid", "answer", "em", "judged", "context_chars"]].values.tolist() == [
        [1, "x", "Rome", False, True, len("Unrelated words.")],
        [2, "q1_0", "Paris", True, True, len("Unrelated words. It is a capital.")]]
    strict = ReadingSetup(_KeywordReader(), _Judge(allowed=False), ds, corpus, progress=False)
    gold = ser.select_gold(strict, {"q1": ["q1_1", "q1_01"], "q2": ["q2_012"]}, max_tries=2)
    assert gold == {"q1": ("q1_01", "Paris"), "q2": ("q2_012", "Mars")}
    readings = ser.ser_inference(strict, {"q1": gold["q1"]}, {"random": {"q1": [["x", "q2_0"]]}})
    assert readings[["m", "extras", "answer", "em", "changed"]].values.tolist() == [
        [1, "x", "Paris", True, False], [2, "x q2_0", "Mars", False, True]]
