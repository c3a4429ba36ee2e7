"""The display helpers and the generated "what we found" sentences that close the notebooks' sections:
values with their intervals in one cell, counts as whole numbers, and sentences computed from small
tables (no model call)."""

from __future__ import annotations

import pandas as pd
import pytest

from inferqa_utils.ir.datamodel import Hint, Question
from inferqa_utils.present import sentences as st
from inferqa_utils.present.show import engine_counters, found_text, interval_cell, readable

# ----------------------------------------------------------------------------- display

def test_readable_puts_each_value_and_its_interval_in_one_cell():
    t = pd.DataFrame(
        {
            "system": ["bm25", "e5"],
            "N": [20.0, float("nan")],
            "EM@N": [6.25, 12.5],
            "EM_lo": [0.0, 4.17],
            "EM_hi": [14.58, 22.92],
            "Hit@10": [31.25, 60.42],
            "Hit@10_lo": [18.75, 45.83],
            "Hit@10_hi": [43.75, 72.92],
            "sig Hit@10": [float("nan"), "*"],
            "AcEM − EM": [16.67, 0.0],
            "diff_lo": [6.25, 0.0],
            "diff_hi": [27.08, 0.0],
            "labels": ["x", "y"],
        }
    )
    out = readable(t, intervals={"AcEM − EM": "diff"}, drop=["labels"])
    assert list(out.columns) == ["system", "N", "EM@N", "Hit@10", "AcEM − EM"]
    assert out["EM@N"].tolist() == ["6.25 [0.0, 14.6]", "12.50 [4.2, 22.9]"]
    assert out["Hit@10"].tolist() == ["31.25 [18.8, 43.8]", "60.42 [45.8, 72.9]*"]
    assert out["AcEM − EM"].iloc[0] == "16.67 [6.2, 27.1]"
    assert str(out["N"].dtype) == "Int64" and out["N"].iloc[0] == 20 and pd.isna(out["N"].iloc[1])
    assert list(readable(t, columns=["Hit@10", "system"]).columns) == ["Hit@10", "system"]


def test_interval_cell_and_missing_values():
    assert interval_cell(12.5, 3.125, 25) == "12.50 [3.1, 25.0]"
    assert interval_cell(float("nan"), 1, 2) == "—" and interval_cell(3, None, 4) == "3.00"


def test_engine_counters_are_whole_numbers_and_an_engine_counts_once():
    class Stats:
        def __init__(self, calls):
            self.calls = calls

        def as_dict(self):
            return {"model_calls": self.calls, "cache_hits": 3, "seconds": 1.25}

    class Engine:
        def __init__(self, name, calls):
            self.name, self.stats = name, Stats(calls)

    reader = Engine("qwen", 0)
    t = engine_counters([reader, reader, None, Engine("qwen", 2)])
    assert list(t.index) == ["qwen", "qwen′"] and t["model_calls"].tolist() == [0, 2]
    assert str(t["model_calls"].dtype) == "Int64" and t["seconds"].tolist() == [1.2, 1.2]
    assert list(engine_counters({"reader": reader}).index) == ["reader"]


def test_found_text_prefixes_once():
    assert found_text("A.", "B.") == "**What we found.** A. B."
    assert found_text("**What we found.** A.") == "**What we found.** A."


# ----------------------------------------------------------------------------- sentences

def _compared() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "nDCG@10": [19.9, 35.9, 18.3],
            "nDCG@10_lo": [10.6, 25.1, 9.1],
            "nDCG@10_hi": [30.2, 47.0, 28.4],
            "p_holm nDCG@10": [float("nan"), 0.0496, 1.0],
            "sig nDCG@10": [float("nan"), "*", ""],
        },
        index=pd.Index(["bm25", "e5", "bm25s"], name="run"),
    )


def test_best_vs_baseline_names_the_best_its_interval_and_the_test():
    text = st.best_vs_baseline(_compared(), "nDCG@10", "bm25", "retriever")
    assert text.startswith(
        "On nDCG@10 the best retriever is **e5** with 35.9 [25.1, 47.0] against bm25's 19.9"
    )
    assert "+16.0 points" in text and "Holm-adjusted p = 0.0496, significant at 0.05" in text
    assert "1 of 2 retrievers differ significantly from bm25" in text
    worse = _compared().drop(index="e5")
    text = st.best_vs_baseline(worse, "nDCG@10", "bm25", "retriever")
    assert text.startswith("No retriever beats **bm25**") and "the closest is bm25s" in text
    assert "0 of 1 retriever differs" in text
    assert st.best_vs_baseline(_compared().loc[["bm25"]], "nDCG@10", "bm25").startswith("Only bm25 was run")


def test_small_sentence_parts():
    assert (
        st.ci(31.25, 18.75, 43.75) == "31.2 [18.8, 43.8]" and st.ci(float("nan")) == "—" and st.ci(3) == "3.0"
    )
    assert st.share(8, 48) == "8 of 48 questions (16.7 %)" and st.share(0, 0, "pairs") == "0 of 0 pairs"
    assert st.p_text(0.2) == "Holm-adjusted p = 0.2, not significant at 0.05" and st.p_text(None) == "no test"


def test_quickstart_sentences():
    from inferqa_utils.teach.quickstart import (
        QuickstartResult,
        hints_sentence,
        quickstart_sentence,
        shared_words,
    )

    q = Question(
        "q",
        "Which writer left his wife his second-best bed?",
        ["William Shakespeare", "Shakespeare"],
        [
            Hint("He married Anne Hathaway.", 0.9),
            Hint("He wrote Hamlet.", 1.0),
            Hint("Shakespeare wrote sonnets.", 0.5),
        ],
    )
    assert "Hamlet" not in hints_sentence(q, 2)
    assert hints_sentence(q, 2).startswith(
        "q has 3 hints; the passages use the 2 with the highest convergence (1.00, 0.90)"
    )
    assert "1 hint(s) name the answer" in hints_sentence(q, 2)
    assert shared_words(q.question, "The emperor built it as a tomb for his favourite wife.") == [
        "his",
        "wife",
    ]

    def result(closed, right, wrong, top1):
        rows = [("closed book (no context)", closed), ("top-1 retrieved (BM25)", top1),
                ("right passage (3 own hints)", right), ("wrong passage (another question)", wrong)]
        return QuickstartResult(q, [], [{"setting": s, "answer": "A" if ok else "B", "EM": ok, "judged": ok}
                                        for s, ok in rows])

    lesson = quickstart_sentence(result(False, True, False, False))
    assert "Closed book the reader answers “B” (wrong)" in lesson and "own passage “A” (right)" in lesson
    assert "The answer comes from the hints" in lesson and lesson.endswith("the reader is wrong.")
    assert "knew the answer without any passage" in quickstart_sentence(result(True, True, True, True))
    assert "Even the right passage" in quickstart_sentence(result(False, False, False, False))


def test_inspector_sentence_names_the_notebook_to_run_without_a_build():
    from inferqa_utils.teach.inspector import inspector_sentence

    assert "run notebook 01_dataset_construction" in inspector_sentence("no-such-dataset", "q")


def test_convergence_rules_and_what_a_zero_means():
    from inferqa_utils.construction import summary as report

    cands = ["A", "B", "C", "gold"]
    q = Question(
        "q",
        "?",
        ["gold"],
        [
            Hint("h0", scores={"A": 0, "B": 0, "C": 0, "gold": 0}),
            Hint("h1", scores={"A": 1, "B": 1, "C": 0, "gold": 1}),
            Hint("h2", scores={"A": 1, "B": 1, "C": 1, "gold": 1}),
        ],
        candidates=cands,
    )
    rules = report.convergence_rules([q, Question("x", "?", ["y"], [Hint("no votes")])], k=2)
    assert rules["hint"].tolist() == [0, 1, 2] and rules["gold vote"].tolist() == [0, 1, 1]
    assert rules["hicos"].tolist() == [0.0, 0.5, 0.25] and rules["true-hints"].tolist() == [1.0, 0.5, 0.25]
    assert rules["kept (hicos)"].tolist() == [False, True, True]
    assert rules["kept (true-hints)"].tolist() == [True, True, False]
    text = report.convergence_sentence(rules, "true-hints", 2)
    assert text.startswith("1 of 3 hints (33.3 %) with stored judge votes have a gold vote of 0")
    assert "no hint scores 0 — the lowest value, about 0.25" in text
    assert "different top-2 hints for 1 of 1 questions" in text and "1 of them with a gold vote of 0" in text
    assert "cannot be compared" in report.convergence_sentence(rules.iloc[0:0], "hicos", 2)


def test_convergence_without_the_shared_source(tmp_path, monkeypatch):
    """A TriviaHG dataset read from its release on a machine without ../shared/data: notebook 01
    says the source is absent instead of failing on it."""
    from inferqa_utils.construction import summary as report

    monkeypatch.setenv("INFERQA_SHARED_DATA", str(tmp_path))  # no triviahg/ there
    rules = report.source_convergence_rules("triviahg-validation", 3)
    assert rules.empty
    text = report.convergence_sentence(rules, "hicos", 3, "triviahg-validation")
    assert text == ("The source `triviahg-validation` is not on this machine (set INFERQA_SHARED_DATA), so "
                    "its stored judge votes cannot be compared under the two rules; this build used `hicos`.")
    assert report.convergence_sentence(rules, "hicos", 3, "embedded").startswith("The source stores no")


def test_construction_sentences():
    from inferqa_utils.construction import summary as report

    qs = pd.DataFrame({"status": ["kept", "dropped", "dropped"], "reason": [None, "leakage", "too few hints"],
                       "split": ["train", None, None], "parametric": [True, False, False]})
    assert report.leakage_sentence(qs) == ("2 of 3 source questions (66.7 %) were dropped — 1 leakage, "
                                          "1 too few hints; 1 remain.")
    par = pd.DataFrame(
        {"qid": ["a", "a", "b"], "model": ["m1", "m2", "m1"], "correct": [True, False, "False"]}
    )
    assert report.parametric_sentence(par).startswith("1 of 2 questions (50.0 %) are parametric")
    summary = pd.DataFrame(
        [
            {
                "measure": "passage agreement (%)",
                "value": 100.0,
                "lo": 100.0,
                "hi": 100.0,
                "n": 30,
                "questions": 2,
            },
            {"measure": "Cohen's kappa", "value": 1.0, "lo": 1.0, "hi": 1.0, "n": 30, "questions": 2},
            {
                "measure": "questions with the same kept hints",
                "value": 2,
                "lo": None,
                "hi": None,
                "n": 2,
                "questions": 2,
            },
        ]
    )
    assert report.agreement_sentence(summary) == (
        "On 2 rebuilt questions, 30 passages were compared: 100.0 % [100.0, 100.0] have the same label as in "
        "the "
        "release, Cohen's κ 1.00 [1.00, 1.00]. Questions: 2 of 2 kept the same hints."
    )


def test_reading_sentences():
    from inferqa_utils.reading import summary as rr

    em = pd.DataFrame(
        [
            {
                "reader": "r",
                "setting": "pipeline",
                "system": "bm25",
                "k": 1,
                "union": "norm",
                "EM": 25.0,
                "EM_lo": 0.0,
                "EM_hi": 75.0,
                "no_answer": 0.0,
            },
            {
                "reader": "r",
                "setting": "pipeline",
                "system": "bm25",
                "k": 1,
                "union": "freq",
                "EM": 25.0,
                "EM_lo": 0.0,
                "EM_hi": 75.0,
                "no_answer": 25.0,
            },
            {
                "reader": "r",
                "setting": "Optimal",
                "system": "all",
                "k": None,
                "union": None,
                "EM": 100.0,
                "EM_lo": 100.0,
                "EM_hi": 100.0,
                "no_answer": 0.0,
            },
        ]
    )
    assert rr.table8_sentence(em).startswith(
        "Union_norm and Union_freq give the same EM in 1 of 1 (system, k) cells"
    )
    answers = pd.DataFrame(
        [
            {
                "reader": "r",
                "setting": "pipeline",
                "system": "bm25",
                "k": 1,
                "union": u,
                "qid": f"q{i}",
                "em": i == 0,
            }
            for u in ("norm", "freq")
            for i in range(4)
        ]
        + [
            {
                "reader": "r",
                "setting": "Optimal",
                "system": "all",
                "k": None,
                "union": None,
                "qid": f"q{i}",
                "em": True,
            }
            for i in range(4)
        ]
    )
    text = rr.settings_sentence(answers, em)
    assert text.startswith("r: best pipeline bm25 (k = 1, norm) 25.0 [0.0, 75.0] %")
    assert "Optimal 100.0 %, a difference of +75.0" in text
    assert (
        rr.grid_sentence(None, "bm25", 0.6, 0.4)
        == "The α, β grid search was not run: Union_freq uses α = 0.6, β = 0.4."
    )
    grid = pd.DataFrame({"alpha": [0.4, 0.6], "beta": [0.6, 0.4], "EM": [20.0, 20.0], "judged": [20.0, 20.0]})
    assert "(2 grid points tie)" in rr.grid_sentence(grid, "bm25", 0.6, 0.4)
    dist = pd.DataFrame({"1 hints": [0.0, 50.0], "2 hints": [100.0, 50.0], "n": [2, 4]},
                        index=["Optimal: correct passages", "bm25"])
    assert rr.hints_sentence(dist) == (
        "Passages read correctly under Optimal have 2.00 hints on average (100.0 % "
        "have 2, n = 2); the passages the runs put first: bm25 1.50."
    )


def test_finetune_sentences():
    from inferqa_utils.finetune import summary as fr
    from inferqa_utils.finetune.training import BIENCODER_KIND, CROSS_ENCODER_KIND

    sel = pd.DataFrame(
        {
            "model": ["B1", "C1", "B5", "C5"],
            "kind": [BIENCODER_KIND, CROSS_ENCODER_KIND] * 2,
            "N": [1, 1, 5, 5],
            "score": [35.2, 100.0, 38.5, 100.0],
            "chosen": [False, True, True, False],
        }
    )
    sel.attrs["note"] = "dev: 114 questions; bi-encoder by nDCG@10"
    assert fr.selection_sentence(sel, "nDCG@10") == (
        "On dev: 114 questions: bi-encoder by nDCG@10: N = 1 35.2, N = 5 38.5 → **B5**; cross-encoder by "
        "oracle "
        "nDCG@10: N = 1 100.0, N = 5 100.0 → **C1** (a tie: the smallest N wins)."
    )
    rr_table = pd.DataFrame({"nDCG@10": [19.9, 12.3]}, index=["bm25", "bm25 + CE"])
    assert fr.rerank_change_sentence(rr_table) == "nDCG@10: bm25 + CE 12.3 vs bm25 19.9 (-7.6)."
    em = pd.DataFrame({"system": ["a", "b"], "EM": [50.0, 25.0], "EM_lo": [0.0, 0.0], "EM_hi": [100.0, 75.0],
                       "n": [4, 4]})
    answers = pd.DataFrame([{"system": s, "qid": f"q{i}", "em": (s == "a" and i < 2) or (s == "b" and i == 0)}
                            for s in "ab" for i in range(4)])
    text = fr.reading_pairs_sentence(answers, em, [("a", "b"), ("a", "missing")])
    assert text.startswith("Strict EM: a 50.0 [0.0, 100.0] vs b 25.0 [0.0, 75.0] (+25.0 points")
    assert text.endswith("One question is 25.0 points.")


def _patterns() -> pd.DataFrame:
    return pd.DataFrame({"system": ["bm25"] * 3, "qid": ["q1", "q2", "q3"],
                         "em_pattern": ["0110", "1000", "0000"], "judged_pattern": ["0110", "1100", "0000"],
                         "passages": [4, 4, 3], "n_contexts": [3, 2, 3], "corpus": ["answer-supporting"] * 3})


def test_damaging_sentences_and_figure_inputs():
    from inferqa_utils.damaging import ser
    from inferqa_utils.damaging import summary as dr

    by_rank = dr.types_by_rank(_patterns())
    assert list(by_rank.columns) == ["IZ", "DP", "DN", "SP", "SN"]
    assert by_rank.loc[1].tolist() == [2, 1, 0, 0, 0] and by_rank.loc[4].tolist() == [0, 0, 1, 0, 1]
    assert by_rank.loc[4].sum() == 2  # q3 has 3 passages: its 4th position is padding, not a passage
    assert dr.types_by_rank(_patterns(), "judged").loc[2].tolist() == [1, 1, 0, 1, 0]  # q2 "1100": SP, not DN
    text = dr.incremental_sentence(_patterns())
    assert text.startswith(
        "bm25: 2 of 3 questions (66.7 %) are answered correctly from some prefix of the top 4"
    )
    assert (
        "0 from all 4; 2 lose a correct answer" in text and "The 11 prefixes gave 8 distinct contexts" in text
    )
    types = pd.DataFrame([{"system": "bm25", "metric": "em", "IZ": 5, "DP": 2, "DN": 2, "SP": 1, "SN": 1,
                           "questions": 3, "questions with DN (%)": 66.67, "corpus": "answer-supporting"}])
    assert dr.types_sentence(types, by_rank) == (
        "bm25: of 11 retrieved passages IZ 5, DP 2, DN 2, SP 1, SN 1; 2 of 3 "
        "questions (66.7 %) have at least one definite negative (DN). DN "
        "passages sit at ranks 2, 4."
    )
    readings = pd.DataFrame([{"kind": k, "qid": f"q{i}", "m": m, "changed": (k == "BM25" and i == 0)}
                             for k in ("random", "BM25") for m in (1, 2) for i in range(2)])
    long = ser.ser_long(readings)
    assert long["setting"].tolist() == ["SER w/ random"] * 2 + ["SER w/ BM25"] * 2
    assert long["value"].tolist() == [0.0, 0.0, 50.0, 50.0] and long["pairs"].tolist() == [2, 2, 2, 2]
    assert dr.ser_sentence(long, {"answer-supporting": 2}, 4).startswith(
        "Answered correctly from one good passage alone: 2 of 4 questions (50.0 %) on the answer-supporting "
        "corpus."
    )
    assert "Paper 004 (NQ, FiD): random ≤ 2 %, BM25 8.3–15.9 %." in dr.ser_sentence(long, {"x": 2}, 4)
    # corpora that read different numbers of questions
    assert dr.ser_sentence(long, {"answer-supporting": 2, "answer-containing": 1},
                          {"answer-supporting": 4, "answer-containing": 2}).startswith(
        "Answered correctly from one good passage alone: 2 of 4 questions (50.0 %) on the answer-supporting "
        "corpus; 1 of 2 questions (50.0 %) on the answer-containing corpus.")


def test_damaging_probe_bars_and_sentence():
    from inferqa_utils.damaging import summary as dr

    row = {"system": "bm25", "metric": "strict EM", "N": 20, "EM@N": 6.25, "EM_lo": 0.0, "EM_hi": 14.58,
           "AcEM@N": 22.92, "AcEM_lo": 12.5, "AcEM_hi": 35.42, "corpus": "answer-supporting"}
    for i in range(1, 7):
        row |= {f"Probe {i}": 22.92 if i in (2, 3) else 6.25, f"Probe {i}_lo": 0.0, f"Probe {i}_hi": 40.0}
    t6 = pd.DataFrame([row])
    bars = dr.probe_bars(t6)
    assert bars["reading"].tolist()[:3] == ["EM@N", "AcEM@N", "Probe 1"] and bars["panel"].iloc[0] == \
        "bm25, strict EM, N = 20"
    assert bars.loc[0, "hi"] == 14.58 and bars.loc[2, "hi"] == 40.0
    text = dr.probes_sentence(t6)
    assert (
        "recovering 16.7 of the 16.7-point gap" in text
        and "the best probes are Probe 2, Probe 3 (22.9)" in text
    )


@pytest.mark.parametrize("kind", ["bars", "lines", "shares"])
def test_generic_figures(kind, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from inferqa_utils.present import figures

    if kind == "bars":
        long = figures.long_intervals(_compared(), ["nDCG@10"], label="run")
        assert long["run"].tolist() == ["bm25", "e5", "bm25s"] and long["hi"].tolist() == [30.2, 47.0, 28.4]
        fig = figures.interval_bars(long, label="run", highlight=["bm25"], title="t")
        labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
        assert labels == ["bm25", "e5", "bm25s"] and fig.axes[0].yaxis_inverted()  # first row on top
    elif kind == "lines":
        long = pd.DataFrame({"setting": ["a", "a", "b", "b"], "m": [1, 2, 1, 2], "value": [10, 20, 30, 40],
                             "lo": [5, 15, 25, 35], "hi": [15, 25, 35, 45]})
        fig = figures.interval_lines(long, x="m", series="setting", reference={"paper": 8.3})
        assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["paper", "a", "b"]
    else:
        counts = pd.DataFrame({"IZ": [2, 1], "DN": [0, 1]}, index=[1, 2])
        fig = figures.stacked_shares(counts, xlabel="rank")
        heights = [p.get_height() for p in fig.axes[0].patches]
        assert heights == [100.0, 50.0, 0.0, 50.0]
    assert figures.save_figure(fig, f"test_{kind}", tmp_path).exists()
