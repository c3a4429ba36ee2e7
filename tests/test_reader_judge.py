"""Reader post-processing, EM and judge parsing (hand-checked), and the reader on real TriviaHG."""

import pytest

from inferqa_utils.answering.judge import em, judge_answers, parse_yes_no
from inferqa_utils.answering.prompts import NO_ANSWER, READER_FEWSHOT, reader_messages
from inferqa_utils.answering.reader import postprocess, read
from inferqa_utils.ir.textnorm import normalize_answer


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("Paris", "Paris"),
        ('  "Paris."  ', "Paris"),
        ("Answer: Paris", "Paris"),
        ("[Rennes]", "Rennes"),
        ("Cracker (1993–1995)", "Cracker (1993–1995)"),
        ("Paris)", "Paris"),
        ("line one\n\nThe Beatles\n", "The Beatles"),
        ("", NO_ANSWER),
        ("   \n ", NO_ANSWER),
        ("No answer.", NO_ANSWER),
        ("NO ANSWER", NO_ANSWER),
        ("The capital of France is Paris.", NO_ANSWER),
        ("It is a mirror", NO_ANSWER),
        ("I think it is Paris", NO_ANSWER),
        ("Isaac Newton", "Isaac Newton"),
        ("National Aeronautics and Space Administration", "National Aeronautics and Space Administration"),
    ],
)
def test_postprocess(raw, expected):
    assert postprocess(raw) == expected


def test_normalisation_and_em():
    assert normalize_answer("The  Beatles!") == "beatles"
    assert normalize_answer("U.S.A.") == "usa"  # SQuAD deletes punctuation
    assert em("the Beatles", ["Beatles"]) and em("beatles.", ["The Beatles"])
    assert not em("Beatle", ["Beatles"]) and not em(NO_ANSWER, [NO_ANSWER]) and not em("", [""])
    assert em("42.195", ["42.195"]) and not em("42", ["42.195"])
    assert normalize_answer("42.195") == "42195"


def test_parse_yes_no():
    assert parse_yes_no("Yes.") is True and parse_yes_no(" no, it is not") is False
    assert parse_yes_no("Maybe") is None and parse_yes_no("**Yes**") is True


def test_fewshot_prompt_shape():
    msgs = reader_messages("Q?", "C.")
    assert msgs[0]["role"] == "system" and len(msgs) == 2 + 2 * len(READER_FEWSHOT) == 12
    assert msgs[-1]["content"].endswith("Context: C.\nQuestion: Q?\nAnswer:")
    assert all(len(a.split()) <= 3 for _, _, a in READER_FEWSHOT)


def test_judge_without_llm_equals_em():
    js = judge_answers(None, ["q"] * 3, [["Paris"]] * 3, ["paris", "Lyon", NO_ANSWER])
    assert [(j.em, j.judged) for j in js] == [(True, True), (False, False), (False, False)]


class _Scripted:
    """Reader and judge without a model: a reply is looked up by a key its last turn holds (the
    reader's ``Question: …``, the judge's ``Proposed answer: …``); every prompt is kept."""

    name = "scripted"

    def __init__(self, replies: dict[str, str]) -> None:
        self.replies = replies
        self.turns: list[str] = []

    def chat(self, batch, max_tokens=None, desc="", progress=True, until=None):
        self.turns += [m[-1]["content"] for m in batch]
        return [next(r for key, r in self.replies.items() if key in m[-1]["content"]) for m in batch]


def test_judge_is_asked_only_where_em_and_the_guards_leave_it_open_and_its_verdict_decides():
    """EM decides "venice", a guard "Rialto Bridge" (in the question), NO ANSWER is never judged;
    the judge is asked about the other three, in order, and its Yes / No / unreadable reply
    becomes judged True / False / False."""
    judge = _Scripted({"Proposed answer: Venezia": "Yes.", "Proposed answer: Rome": "No",
                       "Proposed answer: Milan": "Perhaps"})
    preds = ["venice", "Rialto Bridge", "Venezia", "Rome", NO_ANSWER, "Milan"]
    js = judge_answers(
        judge, ["Which city has the Rialto Bridge?"] * 6, [["Venice"]] * 6, preds, progress=False
    )
    assert [t.rsplit("Proposed answer: ", 1)[1] for t in judge.turns] == ["Venezia", "Rome", "Milan"]
    assert [(j.em, j.judged, j.verdict, j.guard) for j in js] == [
        (True, True, None, None), (False, False, None, "in_question"), (False, True, True, None),
        (False, False, False, None), (False, False, None, None), (False, False, None, None)]


def test_read_postprocesses_each_reply_of_its_own_prompt():
    """One prompt per (question, context) pair, in order, each with its context; the replies are
    post-processed (prefix and punctuation stripped, a sentence is no answer)."""
    reader = _Scripted({"Question: Which city?": "Answer: Venice.",
                        "Question: Which planet?": "The largest planet is Jupiter."})
    outs = read(reader, ["Which city?", "Which planet?"], ["It has canals.", "A gas giant."], progress=False)
    assert [(o.raw, o.answer) for o in outs] == [("Answer: Venice.", "Venice"),
                                                 ("The largest planet is Jupiter.", NO_ANSWER)]
    assert ["It has canals." in reader.turns[0], "A gas giant." in reader.turns[1]] == [True, True]


@pytest.mark.slow
def test_reader_answers_real_triviahg_questions(shared_data):
    from inferqa_utils.llm import load_llm
    from inferqa_utils.sources import load_triviahg

    ds = load_triviahg(shared_data / "triviahg" / "validation_2024.json")
    qs = list(ds)[:5]
    llm = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=4096)
    outs = read(llm, [q.question for q in qs], [" ".join(q.hint_texts[:5]) for q in qs], progress=False)
    assert len(outs) == 5 and llm.stats.model_calls == 5
    for o in outs:
        assert o.answer == NO_ANSWER or (0 < len(o.answer.split()) <= 12 and "\n" not in o.answer)
    # the real 1.5B judge rejects a rival answer (another question's gold) on every question
    judge = load_llm("qwen2.5-coder-1.5b", use_cache=False, shared=False)
    rivals = [qs[(i + 1) % len(qs)].answers[0] for i in range(len(qs))]
    js = judge_answers(judge, [q.question for q in qs], [q.answers for q in qs], rivals, progress=False)
    assert not any(j.em for j in js)
    assert [j.judged for j in js] == [False] * len(qs), [
        (r, j.verdict, j.guard) for r, j in zip(rivals, js, strict=True)
    ]
    assert judge.stats.model_calls == sum(
        j.guard is None for j in js
    )  # the judge was asked where no guard refused
