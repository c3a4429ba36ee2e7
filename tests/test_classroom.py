"""Class in a box (notebook 00, section 6): your own question, the hint explorer and the readings of
the exercises. A scripted engine stands in for reader and judge; the last tests read with the real
tiny SmolLM2-135M (slow)."""

from __future__ import annotations

import pandas as pd
import pytest

from inferqa_utils.ir.datamodel import Hint, Question
from inferqa_utils.sources import load_source
from inferqa_utils.teach import classroom as cb
from inferqa_utils.teach.quickstart import demo_corpus, pick_questions, right_and_other

HINTS = ["It is the fourth planet from the Sun.", "Iron oxide on its surface makes it look red.",
         "Its two small moons are called Phobos and Deimos."]


class _Scripted:
    """Reader and judge: a reader prompt holding a hint about iron oxide is answered "Mars", any other
    "Venus" (closed book included); a judge prompt is answered "No". Counts the prompts."""

    name = "scripted"

    def __init__(self) -> None:
        self.prompts = 0

    def chat(self, batch, max_tokens=None, desc="", progress=True, until=None):
        self.prompts += len(batch)
        out = []
        for msgs in batch:
            turn = msgs[-1]["content"]
            out.append("No" if "Proposed answer:" in turn else ("Mars" if "Iron oxide" in turn else "Venus"))
        return out


@pytest.fixture(scope="module")
def corpus():
    ds = load_source("embedded")
    return demo_corpus(pick_questions(ds, "emb_hum_24", 4), 3)


def _question() -> Question:
    return Question("q", "Which planet has the volcano Olympus Mons?", ["Mars"], [Hint(h) for h in HINTS])


def test_own_question_keeps_typed_hints_and_refuses_too_few_or_too_many():
    q = cb.own_question(" Which planet? ", ["a", " ", "b"], "Mars", aliases=["the Red Planet", ""])
    assert (q.qid, q.question, q.answers, q.hint_texts) == (
        cb.OWN_QID,
        "Which planet?",
        ["Mars", "the Red Planet"],
        ["a", "b"],
    )
    with pytest.raises(ValueError, match="1 to 5 hints"):
        cb.own_question("Which planet?", [], "Mars")
    with pytest.raises(ValueError, match="1 to 5 hints"):
        cb.own_question("Which planet?", [f"hint {i}" for i in range(6)], "Mars")
    with pytest.raises(ValueError, match="question and its answer"):
        cb.own_question("Which planet?", ["a"], " ")


def test_try_your_own_reads_every_setting_over_the_corpus_plus_your_passages(corpus):
    llm = _Scripted()
    res = cb.try_your_own(
        "Which planet has the volcano Olympus Mons?", HINTS, "Mars", llm, llm, corpus=corpus, show=False
    )
    assert res.n_passages == 15 and not res.leaks
    answers = {a["setting"]: (a["answer"], a["judged"]) for a in res.result.answers}
    assert answers["closed book (no context)"] == ("Venus", False)
    assert answers["right passage (3 own hints)"] == ("Mars", True)
    assert answers["wrong passage (another question)"] == ("Venus", False)
    assert all(
        r["passage"] in corpus or r["passage"].startswith(f"{cb.OWN_QID}_") for r in res.result.retrieved
    )
    text = res.finding()
    assert "Closed book the reader answers “Venus” (wrong)" in text and "own passage “Mars” (right)" in text
    assert "The answer comes from the hints" in text


def test_try_your_own_reports_a_hint_that_names_the_answer(corpus):
    llm = _Scripted()
    res = cb.try_your_own("Which planet?", ["Mars is red.", "Iron oxide covers it."], "Mars", llm, None,
                          corpus=corpus, show=False)
    assert res.leaks and res.leaks[0][0] == 0 and res.n_passages == 4
    assert res.finding().startswith("Careful: hint 0 names the answer")


def test_contexts_of_the_exercises():
    assert list(cb.single_hint_contexts(HINTS)) == ["hint 0", "hint 1", "hint 2"]
    orders = cb.order_contexts(HINTS)
    assert (
        len(orders) == 6
        and next(iter(orders)) == "order 0 1 2"
        and orders["order 2 1 0"].startswith("Its two")
    )
    assert len(cb.order_contexts(HINTS, limit=2)) == 2
    both = cb.distractor_contexts("R.", "O.")
    assert list(both.values()) == ["R.", "R. O.", "O. R."]
    assert cb.distractor_contexts("R.", None) == {"right passage": "R."}


def test_read_contexts_judges_each_context_and_says_which_led_to_the_answer():
    q, llm = _question(), _Scripted()
    table = cb.read_contexts(q, cb.single_hint_contexts(q.hint_texts), llm, llm)
    assert list(table.columns) == ["context", "passage", "answer", "EM", "judged"]
    assert table["answer"].tolist() == ["Venus", "Mars", "Venus"] and table["EM"].tolist() == [
        False, True, False,
    ]
    assert (
        cb.readings_sentence(table, q)
        == "1 of 3 contexts lead the reader to “Mars” (hint 1); the others give “Venus”."
    )
    assert cb.readings_sentence(table.iloc[0:0], q) == "Nothing was read."


def test_read_hint_subset_in_the_given_order_and_refuses_bad_picks():
    q, llm = _question(), _Scripted()
    row = cb.read_hint_subset(q, [2, 1], llm, None)
    assert row["hints"] == [2, 1] and row["passage"] == f"{HINTS[2]} {HINTS[1]}" and row["answer"] == "Mars"
    assert cb.subset_sentence(row, q) == "From 2 of q's 3 hints (2, 1) the reader answers “Mars” — right."
    for bad in ([], [3], [1, 1]):
        with pytest.raises(ValueError, match="distinct hints"):
            cb.read_hint_subset(q, bad, llm, None)


def test_hint_explorer_reads_the_initial_subset_and_each_click():
    q, llm = _question(), _Scripted()
    box = cb.hint_explorer(q, llm, llm, initial=(0,))
    assert "inferqa-hint-explorer" in box._dom_classes
    boxes = [row.children[0] for row in box.children[1:4]]
    assert [b.value for b in boxes] == [True, False, False]
    assert (
        box.children[2].children[1].value
        == "<span class='inferqa-hint'>1: Iron oxide on its surface makes it "
        "look red.</span>"
    )
    reverse, button, line = box.children[4].children
    assert "done" in line.value and llm.prompts >= 1
    boxes[1].value, boxes[2].value, reverse.value = True, True, True
    button.click()  # reads hints 2, 1, 0 (reversed list order)
    assert "done" in line.value
    assert box.run([1])["answer"] == "Mars"
    assert box.run([]) is None and "ValueError" in line.value  # an error is shown in the widget


def test_explore_hints_headless_reads_the_subset():
    q, llm = _question(), _Scripted()
    row = cb.explore_hints(q, llm, None, subset=[1, 0], interactive=False)
    assert row is not None and row["passage"] == f"{HINTS[1]} {HINTS[0]}" and row["judged"]


def test_the_exercise_passages_are_the_quickstarts(corpus):
    q = load_source("embedded").questions["emb_hum_24"]
    right, other = right_and_other(q, corpus)
    assert (
        right.pid == "emb_hum_24_111_012" and other is not None and other.qid != q.qid and other.n_hints == 3
    )


@pytest.mark.slow
def test_try_your_own_and_the_explorer_with_the_tiny_real_reader(tmp_path, monkeypatch, corpus):
    """SmolLM2-135M reads every setting of a typed question and a hint subset; a second engine on the
    same disk cache answers the same without a model call."""
    from inferqa_utils.llm import load_llm

    monkeypatch.setenv("INFERQA_LLM_CACHE", str(tmp_path / "cache.sqlite"))
    first = load_llm("smollm2-135m", shared=False)
    res = cb.try_your_own(
        "Which planet has the volcano Olympus Mons?", HINTS, "Mars", first, first, corpus=corpus, show=False
    )
    answers = pd.DataFrame(res.result.answers)
    assert len(answers) == 4 and answers["answer"].map(lambda a: isinstance(a, str) and a != "").all()
    row = cb.read_hint_subset(_question(), [1, 0], first, first)
    assert isinstance(row["answer"], str) and first.stats.model_calls > 0
    first.close()
    second = load_llm("smollm2-135m", shared=False)
    again = cb.try_your_own("Which planet has the volcano Olympus Mons?", HINTS, "Mars", second, second,
                            corpus=corpus, show=False)
    assert pd.DataFrame(again.result.answers)["answer"].tolist() == answers["answer"].tolist()
    assert cb.read_hint_subset(_question(), [1, 0], second, second)["answer"] == row["answer"]
    assert second.stats.model_calls == 0
    second.close()


@pytest.mark.slow
def test_exercise_readings_with_the_tiny_real_reader(tmp_path, monkeypatch):
    """The three exercises' contexts, read by SmolLM2-135M: one row per context, each answer a string."""
    from inferqa_utils.llm import load_llm

    monkeypatch.setenv("INFERQA_LLM_CACHE", str(tmp_path / "cache.sqlite"))
    llm = load_llm("smollm2-135m", shared=False)
    q = _question()
    for contexts in (
        cb.single_hint_contexts(HINTS),
        cb.order_contexts(HINTS),
        cb.distractor_contexts(HINTS[0], "x"),
    ):
        table = cb.read_contexts(q, contexts, llm, llm)
        assert (
            table["context"].tolist() == list(contexts)
            and table["answer"].map(lambda a: isinstance(a, str)).all()
        )
        assert cb.readings_sentence(table, q).startswith(
            f"{int(table['judged'].sum())} of {len(table)} contexts"
        )
    llm.close()


def test_the_quickstart_question_shows_the_lesson_in_the_release():
    """Notebook 00's default question, read from data on disk (no model call): a test question of
    the embedded release that no packaged model answered closed book, whose quickstart passages are
    the release's own, and whose right passage (all hints, in order) is label 2 with the labeler's
    answer accepted — so closed book wrong, right with its own passage can show."""
    import ast

    import nbformat
    from isolated_root import CHECKOUT

    from inferqa_utils.construction.release import load_release
    from inferqa_utils.ir.textnorm import exact_match
    from inferqa_utils.teach.quickstart import demo_hints

    cells = nbformat.read(CHECKOUT / "notebooks" / "00_quickstart.ipynb", as_version=4).cells
    params = next(c.source for c in cells if "parameters" in c.metadata.get("tags", []))
    qid = next(ast.literal_eval(line.split("=", 1)[1].split("#")[0].strip()) for line in params.splitlines()
               if line.startswith("question_id"))
    folder = CHECKOUT / "data" / "embedded" / "release"
    rel = load_release(folder, verify=False)
    assert qid in rel.splits["test"]
    closed = pd.read_csv(folder / "construction" / "parametric.csv")
    closed = closed[closed["qid"] == qid]
    assert len(closed) and not closed["correct"].astype(bool).any(), closed
    q = load_source("embedded").questions[qid]
    hints = demo_hints(q, 3)
    assert hints == rel.questions[qid].hint_texts  # the quickstart's passages are the release's
    pid = f"{qid}_111_012"
    assert rel.passages[pid].text == " ".join(hints) and rel.qrels[qid][pid] == 2
    answer = next(iter(rel.generations[pid].values()))
    assert exact_match(answer, rel.questions[qid].answers)
