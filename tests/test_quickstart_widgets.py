"""Notebook 00's picker and the readable tables, with the real smoke reader (SmolLM2-135M)."""

from __future__ import annotations

import pandas as pd
import pytest

from inferqa_utils.core.config import profile
from inferqa_utils.llm import load_llm
from inferqa_utils.present.show import question_label, text_table
from inferqa_utils.retrieval import BM25sRetriever
from inferqa_utils.sources import load_source
from inferqa_utils.teach.quickstart import (
    QUICKSTART_STEPS,
    demo_corpus,
    pick_questions,
    quickstart_picker,
    run_quickstart,
)


@pytest.fixture(scope="module")
def smoke_corpus():
    """The smoke profile's questions, their demo passages and BM25 over them (no model)."""
    p = profile("smoke")
    ds = load_source(p["source"])
    questions = pick_questions(ds, "emb_loc_05", p["max_questions"])
    passages = demo_corpus(questions, 3)
    retriever = BM25sRetriever({pid: x.text for pid, x in passages.items()})
    return questions, passages, retriever


@pytest.fixture(scope="module")
def smoke_quickstart(smoke_corpus):
    p = profile("smoke")
    return (*smoke_corpus, load_llm(p["reader_model"]))


class _ContextEcho:
    """Stands in for reader and judge: a reader prompt is answered with the id of the passage it
    holds as context ("closed book" when it holds none), a judge prompt with "No"."""

    name = "echo"

    def __init__(self, passages) -> None:
        self.by_text = sorted(((x.text, pid) for pid, x in passages.items()), key=lambda t: -len(t[0]))

    def chat(self, batch, max_tokens=None, desc="", progress=True, until=None):
        replies = []
        for msgs in batch:
            turn = msgs[-1]["content"]
            if "Proposed answer:" in turn:
                replies.append("No")
            else:  # the longest passage text in the turn is its context (shorter ones are its parts)
                replies.append(next((pid for text, pid in self.by_text if text in turn), "closed book"))
        return replies


def test_run_quickstart_reads_each_setting_with_its_context_and_reports_every_step(smoke_corpus) -> None:
    """Closed book, then the BM25 top-1 passage, the question's own passage of all three hints in
    order, and a three-hint passage of another question, in that order; the retrieved rows are
    BM25's hits with their own-question flags; the status callback sees every step, then done."""
    questions, passages, retriever = smoke_corpus
    q = next(x for x in questions if retriever.search_one(x.question, k=1))
    echo = _ContextEcho(passages)
    seen: list[tuple[int, int, str]] = []
    res = run_quickstart(
        q, passages, retriever, echo, echo, status=lambda i, n, what: seen.append((i, n, what))
    )
    n = len(QUICKSTART_STEPS)
    assert [i for i, _, _ in seen] == [*range(n), n] and {m for _, m, _ in seen} == {n}
    assert [w.split(" (")[0] for _, _, w in seen[:-1]] == list(QUICKSTART_STEPS) and seen[-1][2] == "done"
    hits = retriever.search_one(q.question, k=5)
    assert [(r["rank"], r["passage"]) for r in res.retrieved] == [
        (i, pid) for i, (pid, _) in enumerate(hits, 1)
    ]
    assert [r["own question"] for r in res.retrieved] == [passages[pid].qid == q.qid for pid, _ in hits]
    assert [a["setting"] for a in res.answers] == [
        "closed book (no context)", "top-1 retrieved (BM25)", "right passage (3 own hints)",
        "wrong passage (another question)",
    ]
    closed, top1, right, wrong = (a["answer"] for a in res.answers)
    assert (closed, top1, right) == ("closed book", hits[0][0], f"{q.qid}_111_012")
    assert passages[wrong].qid != q.qid and passages[wrong].n_hints == 3
    assert not any(
        a["EM"] or a["judged"] for a in res.answers
    )  # a passage id is no answer; the judge said No


@pytest.mark.slow
def test_picker_shows_the_first_question_at_once_is_wide_and_follows_a_change(smoke_quickstart) -> None:
    questions, passages, retriever, llm = smoke_quickstart
    first = run_quickstart(questions[0], passages, retriever, llm, llm)
    box = quickstart_picker(questions, questions[0].qid, passages, retriever, llm, llm, first=first)
    picker, (bar, line), _out = box.children[0], box.children[1].children, box.children[2]
    # shown at once: the status says done for the first question, the bar is full
    assert f"{questions[0].qid}: done" in line.value and bar.value == bar.max == len(QUICKSTART_STEPS)
    assert picker.layout.width == "95%" and picker.style.description_width == "initial"
    assert [label for label, _ in picker.options] == [question_label(q) for q in questions]
    assert any(len(label) > 80 for label, _ in picker.options)  # the old picker cut every question at 70
    picker.value = questions[2].qid  # the observer runs the new question, as a click in JupyterLab does
    assert f"{questions[2].qid}: done" in line.value and bar.bar_style == "success" and not picker.disabled


def test_question_label_keeps_whole_words() -> None:
    q = load_source("embedded").questions["emb_loc_05"]
    label = question_label(q, width=40)
    assert label.startswith("emb_loc_05: ") and label.endswith("…") and len(label) <= 40
    assert f"{q.qid}: {q.question}".startswith(label[:-1])
    assert question_label(q) == f"{q.qid}: {q.question}"  # the default width shows the whole question


def test_text_table_is_left_aligned_wrapped_complete_and_escaped() -> None:
    long = "A passage of hints " * 20 + "<b>not bold</b>"
    html = text_table(pd.DataFrame({"rank": [1], "text": [long]}))
    assert long.replace("<", "&lt;").replace(">", "&gt;") in html  # complete, escaped
    assert "text-align:left;white-space:normal" in html and "text-align:right" not in html
    assert "class='inferqa-table'" in html
    blank = text_table(
        pd.DataFrame({"k": pd.array([1, None], dtype="Int64"), "x": [1.5, float("nan")]}), wrap=()
    )
    assert "<NA>" not in blank and "&lt;NA&gt;" not in blank and "nan" not in blank


@pytest.mark.slow
def test_picker_shows_an_error_in_the_widget(smoke_quickstart) -> None:
    """An exception in the change callback would only reach JupyterLab's log console: the picker
    shows it in its status line (here: no retriever was given) and stays usable."""
    questions, passages, retriever, llm = smoke_quickstart
    first = run_quickstart(questions[0], passages, retriever, llm, llm)
    box = quickstart_picker(questions, questions[0].qid, passages, None, llm, llm, first=first)  # type: ignore[arg-type]
    picker, line = box.children[0], box.children[1].children[1]
    picker.value = questions[1].qid
    assert f"{questions[1].qid}: AttributeError" in line.value and not picker.disabled
