"""Reading experiments (paper 000 §5.4): hint-level contexts from runs, Optimal with reused answers,
the EM tables and the pattern check. The last test reads with the real tiny SmolLM2."""

from __future__ import annotations

import pandas as pd
import pytest

from inferqa_utils.construction.passages import build_passages
from inferqa_utils.ir.datamodel import Dataset, Hint, Question
from inferqa_utils.reading import conditions as reading
from inferqa_utils.reading import summary as rr
from inferqa_utils.reading import topk
from inferqa_utils.reading.setup import ReadingSetup


def _dataset() -> Dataset:
    hints = ["It reflects light.", "It hangs on walls.", "Vampires lack one."]
    q = Question("q1", "What object shows your face?", ["mirror", "looking glass"], [Hint(h) for h in hints],
                 meta={"gold_answers": ["mirror"]})
    q2 = Question("q2", "Which planet is red?", ["Mars"], [Hint("It is red."), Hint("It is fourth.")])
    passages = {p.pid: p for p in build_passages("q1", hints)}
    passages |= {p.pid: p for p in build_passages("q2", q2.hint_texts)}
    qrels = {"q1": {pid: 1 for pid in passages if pid.startswith("q1")},
             "q2": {pid: 1 for pid in passages if pid.startswith("q2")}}
    qrels["q1"]["q1_100_0"] = 2
    gens = {"q1_100_0": {"m": "Mirror"}, "q1_110_01": {"m": "glass"}, "q2_10_0": {"m": "Venus"}}
    return Dataset("t", {"q1": q, "q2": q2}, passages, qrels, {"test": ["q1", "q2"]}, gens)


def test_passage_sentences_are_the_hints_in_permutation_order():
    ds = _dataset()
    assert ds.passage_sentences("q1_111_210") == [
        "Vampires lack one.", "It hangs on walls.", "It reflects light.",
    ]
    assert ds.passage_sentences("ref:x", {"ref:x": "Mirrors reflect."}) == ["Mirrors reflect."]
    with pytest.raises(KeyError, match="ref:y"):
        ds.passage_sentences("ref:y", {})


def test_contexts_from_run_union_at_hint_level():
    ds = _dataset()
    run = {"q1": [("q1_110_10", 3.0), ("q1_111_012", 2.0), ("q1_001_2", 1.0)], "q2": []}
    # k=1: the passage as it is
    assert topk.contexts_from_run(ds, run, ["q1"], 1)["q1"] == "It hangs on walls. It reflects light."
    # k=2 norm: first occurrences in rank order → hint 1, hint 0, then hint 2 from passage 2
    norm = topk.contexts_from_run(ds, run, ["q1"], 2, "norm")["q1"]
    assert norm == "It hangs on walls. It reflects light. Vampires lack one."
    # k=3 freq on another run: P1 = [h0], P2 = [h2, h1], P3 = [h2]  (α=0.6, β=0.4)
    #   h0: 0.6·1 + 0.4·1                 = 1.0
    #   h2: 0.6(1/2+1/3) + 0.4(1+1)       = 0.5 + 0.8 = 1.3
    #   h1: 0.6·1/2 + 0.4·1/2             = 0.5
    run2 = {"q1": [("q1_100_0", 3.0), ("q1_011_21", 2.0), ("q1_001_2", 1.0)]}
    assert topk.contexts_from_run(ds, run2, ["q1"], 3, "freq")["q1"] == \
        "Vampires lack one. It reflects light. It hangs on walls."
    assert topk.contexts_from_run(ds, run2, ["q1"], 3, "norm")["q1"] == \
        "It reflects light. Vampires lack one. It hangs on walls."
    # a question the run does not cover gets an empty context
    assert topk.contexts_from_run(ds, run, ["q2"], 3)["q2"] == ""


def test_optimal_reuses_labeling_answers_and_aggregates_any_correct():
    ds = _dataset()
    ds.questions["q2"].answers = ["Mars"]
    ds.qrels["q2"] = {"q2_10_0": 1}
    ds.qrels["q1"] = {"q1_100_0": 2, "q1_110_01": 1, "q1_010_1": 0}
    per, counts = reading.optimal("m", None, ds, ["q1", "q2"])
    assert counts == {"passages": 3, "reused": 3, "read": 0}  # label-0 passage not read
    assert per.set_index("pid")["em"].to_dict() == {"q1_100_0": True, "q1_110_01": False, "q2_10_0": False}
    agg = reading.optimal_per_question(per, ["q1", "q2", "q3"], "m")
    assert agg.set_index("qid")["em"].to_dict() == {"q1": True, "q2": False, "q3": False}
    assert set(agg["setting"]) == {"Optimal"}
    # a missing stored answer needs a loaded reader
    ds.generations.pop("q2_10_0")
    with pytest.raises(ValueError, match="no stored answer"):
        reading.optimal("m", None, ds, ["q2"])


def test_em_table_table8_and_pattern():
    rows = []
    for setting, system, ems in (("pipeline", "bm25", [1, 0, 0, 0]), ("oracle", "oracle+pw", [1, 1, 0, 0]),
                                 ("Optimal", "all", [1, 1, 1, 0])):
        for k in ((None,) if setting == "Optimal" else (1, 3)):
            for i, e in enumerate(ems):
                rows.append({"qid": f"q{i}", "em": bool(e), "judged": bool(e), "no_answer": False,
                             "setting": setting, "system": system, "k": k,
                             "union": None if k is None else "norm", "reader": "r"})
    em = reading.em_table(pd.DataFrame(rows))
    oracle3 = em.set_index(["setting", "k"]).loc[("oracle", 3)]
    assert oracle3["EM"] == 50.0
    # Bootstrap means of 4 questions are 0, 25, 50, 75 or 100. 2 of 4 right: P(mean = 0) =
    # P(mean = 100) = (1/2)^4 = 6.25 % > 2.5 %, so the 95 % interval is [0, 100]. 1 of 4 right:
    # P(0) = (3/4)^4 = 31.6 %, P(100) = (1/4)^4 = 0.4 % and P(75) = 4 (1/4)^3 (3/4) = 4.7 %, so
    # [0, 75]; 3 of 4 right mirrors it: [25, 100].
    assert (oracle3["EM_lo"], oracle3["EM_hi"]) == (0.0, 100.0)
    assert (oracle3["judged_lo"], oracle3["judged_hi"]) == (0.0, 100.0)
    pipe1 = em.set_index(["setting", "k"]).loc[("pipeline", 1)]
    assert (pipe1["EM"], pipe1["EM_lo"], pipe1["EM_hi"]) == (25.0, 0.0, 75.0)
    opt = em[em["setting"] == "Optimal"].iloc[0]
    assert (opt["EM"], opt["EM_lo"], opt["EM_hi"]) == (75.0, 25.0, 100.0)
    t8 = rr.table8(em)
    assert list(t8.columns) == ["norm k=1", "norm k=3", "Optimal"]
    assert t8.loc[("r", "Optimal", "all"), "Optimal"] == 75.0
    best = rr.best_per_setting(em)
    assert list(best["setting"]) == ["Optimal", "oracle", "pipeline"]
    assert rr.pattern_holds(best) == {"r": True}
    assert "holds" in rr.pattern_sentences(best, {"Optimal (Gemma 3 4B)": 90.16})
    # not holding when the oracle is no better than the pipeline
    worse = best.assign(EM=[75.0, 25.0, 25.0])
    assert rr.pattern_holds(worse) == {"r": False}


def test_hint_distribution_counts_first_passages_and_correct_optimal_passages():
    ds = _dataset()
    runs = {"bm25": {"q1": [("q1_111_012", 1.0)], "q2": [("q2_10_0", 1.0)]}}
    first = rr.first_passage_hints(ds, runs, ["q1", "q2"])
    assert first["n_hints"].tolist() == [3, 1]
    opt = pd.DataFrame({"qid": ["q1", "q1", "q2"], "n_hints": [1, 2, 2], "judged": [True, True, False],
                        "reader": "r"})
    passages = rr.hint_passages(first, opt)
    assert passages["source"].tolist() == ["bm25", "bm25", rr.OPTIMAL_CORRECT, rr.OPTIMAL_CORRECT]
    assert passages["reader"].tolist() == ["", "", "r", "r"]
    assert passages["qid"].tolist() == ["q1", "q2", "q1", "q1"]
    dist = rr.hint_distribution(passages)
    assert dist.loc["bm25", "1 hints"] == 50.0 and dist.loc["bm25", "3 hints"] == 50.0
    assert dist.loc["Optimal: correct passages", "2 hints"] == 50.0 and dist.loc["bm25", "n"] == 2


def test_read_run_with_real_tiny_reader_is_cached(tmp_path, monkeypatch):
    """A second reading of the same run by a fresh engine makes no model call and returns the same
    answers, from the on-disk generation cache."""
    from inferqa_utils.llm import load_llm

    monkeypatch.setenv("INFERQA_LLM_CACHE", str(tmp_path / "cache.sqlite"))
    ds = _dataset()
    run = {"q1": [("q1_111_012", 2.0), ("q1_100_0", 1.0)], "q2": [("q2_11_01", 1.0)]}
    kw = {"ks": (1, 2), "unions": ("norm", "freq"), "system": "x"}
    first = load_llm("smollm2-135m", shared=False)
    df = topk.read_run(ReadingSetup(first, None, ds), run, ["q1", "q2"], **kw)
    assert len(df) == 8 and set(df["k"]) == {1, 2}
    assert df["answer"].map(lambda a: isinstance(a, str) and a != "").all()
    # k = 1 contexts coincide for both unions: read once, answered alike
    k1 = df[df["k"] == 1].pivot(index="qid", columns="union", values="answer")
    assert (k1["norm"] == k1["freq"]).all()
    calls = first.stats.model_calls
    assert 0 < calls < 8  # distinct contexts only
    first.close()
    second = load_llm("smollm2-135m", shared=False)
    again = topk.read_run(ReadingSetup(second, None, ds), run, ["q1", "q2"], **kw)
    assert second.stats.model_calls == 0 and second.stats.cache_hits == len(df)
    assert again["answer"].tolist() == df["answer"].tolist()
    second.close()


def test_table8_with_interval_text():
    rows = [{"qid": f"q{i}", "em": i < 1, "judged": i < 1, "no_answer": False, "setting": "pipeline",
             "system": "bm25", "k": 1, "union": "norm", "reader": "r"} for i in range(4)]
    em = reading.em_table(pd.DataFrame(rows))
    t = rr.table8(rr.with_interval(em, "EM"), "EM [95 % CI]")
    cell = t.loc[("r", "pipeline", "bm25"), "norm k=1"]
    assert cell.startswith("25.0 [0.0, ") and cell.endswith("]")


def test_read_settings_reads_every_run_and_optimal_once_per_reader():
    """Notebook 04's readings in one call: the main reader reads every run × k × union and Optimal,
    an Optimal-only reader reads Optimal only; answers the labeler gave are reused (no prompt), and
    each engine's counters start at 0 for the reuse table."""

    class Echo:
        def __init__(self, name: str) -> None:
            from inferqa_utils.llm.base import LLMStats

            self.name, self.stats, self.prompts = name, LLMStats(), 0

        def reset_stats(self) -> None:
            from inferqa_utils.llm.base import LLMStats

            self.stats = LLMStats(cache_hits=0)

        def chat(self, batch, max_tokens=None, desc="", progress=True, until=None):
            self.prompts += len(batch)
            self.stats.model_calls += len(batch)
            return ["mirror"] * len(batch)

    engines = {"m": Echo("m"), "other": Echo("other")}
    ds = _dataset()
    run = {"q1": [("q1_111_012", 2.0)], "q2": [("q2_11_01", 1.0)]}
    got = reading.read_settings(
        ds,
        {"bm25": run},
        {"bm25": "pipeline"},
        ["q1", "q2"],
        ["m"],
        ["other", "m"],
        None,
        reading.ContextGrid(ks=[1], unions=["norm"]),
        load=engines.__getitem__,
    )
    assert set(got.answers["reader"]) == {"m", "other"}
    assert got.answers[got.answers["reader"] == "other"]["setting"].unique().tolist() == ["Optimal"]
    assert got.answers[got.answers["reader"] == "m"]["setting"].value_counts().to_dict() == {"pipeline": 2,
                                                                                             "Optimal": 2}
    assert list(got.reuse.index) == ["m", "other"] and got.reuse.index.name == "reader"
    n_passages = sum(1 for q in ("q1", "q2") for v in ds.qrels[q].values() if v >= 1)
    assert got.reuse.loc["m", "passages"] == n_passages and got.reuse.loc["m", "reused"] == 3
    assert got.reuse.loc["other", "reused"] == 0 and got.reuse.loc["other", "read"] == n_passages
    assert got.reuse.loc["m", "model calls"] == engines["m"].prompts  # counted from 0 in this call
    assert len(got.optimal) == 2 * n_passages


class _Recorder:
    """A reader that answers every prompt "mirror" and keeps the prompts it was sent."""

    name = "m"

    def __init__(self) -> None:
        from inferqa_utils.llm.base import LLMStats

        self.stats, self.prompts = LLMStats(), []

    def chat(self, batch, max_tokens=None, desc="", progress=True, until=None):
        self.prompts += batch
        return ["mirror"] * len(batch)


def test_read_runs_reads_the_setups_context_size_and_skips_known_answers():
    """Without ``ks`` / ``unions`` a reading reads the set-up's k and union: q1's top-2 passages
    (hints 0 1 2, then hint 0 again) make one context of the three hints; q2's one passage (hints
    0 1) is answered by the set-up's known answers, so only q1 reaches the reader."""
    from inferqa_utils.answering.prompts import READER_LAYOUT
    from inferqa_utils.answering.reader import KnownAnswers

    ds = _dataset()
    run = {"q1": [("q1_111_012", 2.0), ("q1_100_0", 1.0), ("q1_110_01", 0.5)], "q2": [("q2_11_01", 1.0)]}
    q1_context = "It reflects light. It hangs on walls. Vampires lack one."
    known = KnownAnswers("m", READER_LAYOUT, {("Which planet is red?", "It is red. It is fourth."): "Mars"})
    reader = _Recorder()
    df = topk.read_runs(ReadingSetup(reader, None, ds, known=known, k=2, progress=False), {"bm25": run},
                        ["q1", "q2"])
    assert df[["qid", "answer", "em", "k", "union", "setting"]].values.tolist() == [
        ["q1", "mirror", True, 2, "norm", "pipeline"], ["q2", "Mars", True, 2, "norm", "pipeline"]]
    assert df["context_chars"].tolist() == [len(q1_context), len("It is red. It is fourth.")]
    assert len(reader.prompts) == 1 and f"Context: {q1_context}" in reader.prompts[0][-1]["content"]
    # a corpus of the set-up gives the text of passages the dataset does not hold
    other = topk.read_run(ReadingSetup(reader, None, ds, {"ref:q2": "Mars is red."}, k=1, union="freq",
                                       progress=False), {"q2": [("ref:q2", 1.0)]}, ["q2"], system="ref")
    assert other[["answer", "k", "union", "system", "context_chars"]].values.tolist() == [
        ["mirror", 1, "freq", "ref", len("Mars is red.")]]
