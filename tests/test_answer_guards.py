"""Answer guards before the judge (hand-checked), their behaviour on real aliases, and the
measured judge: the guarded 1.5B must keep its false accepts under a stated share."""

from pathlib import Path

import pytest

from inferqa_utils.answering.guards import DEFAULT_GUARDS, guard_answer, is_generic
from inferqa_utils.answering.judge import judge_answers
from inferqa_utils.answering.prompts import NO_ANSWER
from inferqa_utils.ir.textnorm import occurs_as_tokens

WIKIHINT_SAMPLE = Path(__file__).parent / "data" / "wikihint_sample.json"


@pytest.mark.parametrize(
    "answer,generic",
    [
        ("the character", True),
        ("The individual", True),
        ("Canadian actor", True),
        ("this player", True),
        ("the band", True),
        ("an actor", True),
        ("Character", True),
        ("the French king", True),
        ("Bands", True),
        ("Red Sea", False),
        ("Pink Floyd", False),
        ("The Beatles", False),
        ("Barcelona", False),
        ("Michael Knight", False),
        ("The Trojan War", False),
        ("Arctic Ocean", False),
        ("Mexican walking fish", False),
        ("the 1966 World Cup", False),
        ("Gaius Julius Caesar", False),
        ("Sonic", False),
        ("", False),
    ],
)
def test_is_generic(answer, generic):
    assert is_generic(answer) is generic


def test_occurs_as_tokens_is_token_level():
    assert occurs_as_tokens("R'lyeh", "…lies dormant in the sunken city of R'lyeh?")
    assert occurs_as_tokens("Use Your Illusion", "Which band released the albums Use Your Illusion I and II?")
    assert occurs_as_tokens("mirrors", "a Mirror on the wall")  # plural folded
    assert not occurs_as_tokens("Rome", "Where is the home of the Pope?")
    assert not occurs_as_tokens("", "anything")


def test_guard_rules_and_stand_down():
    q = "Which actor played Michael Knight in Knight Rider?"
    assert guard_answer("Michael Knight", q, None, golds=["David Hasselhoff"]) == "in_question"
    assert (
        guard_answer("Knight Rider", q, "It starred a talking car.", golds=["David Hasselhoff"])
        == "in_question"
    )
    assert (
        guard_answer("KITT", q, "He drove a talking car called KITT.", golds=["David Hasselhoff"])
        == "in_context"
    )
    assert guard_answer("the actor", q, None, golds=["David Hasselhoff"]) == "generic"  # also in the question
    assert (
        guard_answer("the actor", q, None, guards=["in_question"], golds=["David Hasselhoff"])
        == "in_question"
    )
    assert guard_answer("Hasselhoff", q, "He drove a talking car.", golds=["David Hasselhoff"]) is None
    # a rule stands down when the gold itself trips it
    assert guard_answer("Fishes", "What type of creature is a crappie?", None, golds=["Fish"]) is None
    assert guard_answer("Wye", "Which river…?", "The river Wye flows…", golds=["River Wye"]) is None
    assert guard_answer("the actor", q, None, guards=()) is None
    assert guard_answer("0°C", "At which temperature…?", None, golds=["-40", "minus forty"]) == "other_number"
    assert guard_answer("1960s", "In which year…?", None, golds=["1969"]) == "other_number"
    assert guard_answer("Apollo 13", "Which mission…?", None, golds=["Apollo 11"]) == "other_number"
    assert guard_answer("Nineteen sixty-nine", "In which year…?", None, golds=["1969"]) is None
    assert guard_answer("16 pounds", "How heavy…?", None, golds=["16"]) is None
    assert guard_answer("Sir Isaac", "Who…?", None, golds=["Isaac Newton"]) is None
    # verbose: 12 tokens > 2·2 + 4 for a 2-token gold, and the gold is not in it
    ramble = "The 63-year-old schoolteacher who went over in a wooden barrel in 1901"
    assert guard_answer(ramble, "Where…?", None, golds=["Niagara Falls"]) == "verbose"
    assert (
        guard_answer(ramble, "Where…?", None, golds=["Niagara Falls", "the Niagara Falls of North America"])
        is None
    )
    assert (
        guard_answer("The mutiny on the HMS Bounty took place in 1789", "When…?", None, golds=["1789"])
        is None
    )
    assert (
        guard_answer("Czar Ivan IV of Russia", "Which title…?", None, golds=["Tsar"]) is None
    )  # 5 ≤ 6 tokens
    with pytest.raises(ValueError, match="unknown answer guard"):
        guard_answer("x", q, None, guards=["nope"])


def test_judge_answers_reports_guards_without_llm():
    js = judge_answers(None, ["Which city has the Rialto Bridge?"] * 4, [["Venice"]] * 4,
                       ["venice", "Rialto Bridge", "the city", NO_ANSWER], contexts=[None, None, None, None])
    assert [(j.em, j.judged, j.guard) for j in js] == [
        (True, True, None), (False, False, "in_question"), (False, False, "generic"), (False, False, None)]
    js = judge_answers(None, ["Which city has the Rialto Bridge?"], [["Venice"]], ["the city"], guards=())
    assert js[0].guard is None and not js[0].judged


def test_guards_keep_true_aliases_of_the_embedded_set():
    from inferqa_utils.sources import load_embedded

    refused = [(q.qid, a, r) for q in load_embedded() for a in q.answers[1:]
               if (r := guard_answer(a, q.question, " ".join(q.hint_texts), DEFAULT_GUARDS, q.answers[:1]))]
    assert refused == []


@pytest.mark.shared_data
def test_guards_keep_true_aliases_on_real_triviahg(shared_data):
    """Every distinct alias of TriviaHG's Copilot file, judged against its first form with the hints
    as context, passes the guards. On the 1,000 validation questions, a gold answer itself trips a
    rule in 14 cases (measured: category answers such as "Fish", "Bird"; "The letter A" whose
    normalised form is in its question) — the reason a rule stands down when the gold trips it."""
    from inferqa_utils.answering.guards import GUARDS
    from inferqa_utils.sources import load_triviahg

    ds = load_triviahg(shared_data / "triviahg" / "model_hints" / "Copilot.json")
    pairs = [(q, a) for q in ds for a in q.answers[1:]]
    assert len(pairs) >= 3
    refused = [(q.qid, a) for q, a in pairs
               if guard_answer(a, q.question, " ".join(q.hint_texts), DEFAULT_GUARDS, q.answers[:1])]
    assert refused == []
    val = load_triviahg(shared_data / "triviahg" / "validation_2024.json")
    trips = [q.answer for q in val if any(GUARDS[g].trips(q.answer, q.question, None) for g in GUARDS)]
    assert len(trips) <= 20, trips  # 14 measured
    assert all(guard_answer(q.answer, q.question, None, DEFAULT_GUARDS, q.answers) is None for q in val)


def fixed_judge_set():
    """The small fixed candidate set of the judge test: the first 8 embedded questions and every
    question of the WikiHint-shaped test file."""
    from inferqa_utils.answering.judge_quality import candidate_set
    from inferqa_utils.sources import load_embedded, load_wikihint

    qs = list(load_embedded())[:8] + list(load_wikihint(WIKIHINT_SAMPLE))
    return candidate_set(qs)


#: the share of wrong candidates the guarded 1.5B may accept (measured 0.6 % guarded, 3.2 % unguarded
#: on this set of 515 candidates; the test fails with the guards switched off)
MAX_FALSE_ACCEPT = 0.02


@pytest.mark.slow
def test_guarded_judge_rejects_related_entities_and_generic_phrases():
    from inferqa_utils.answering.judge_quality import judge_candidates, precision_recall
    from inferqa_utils.llm import load_llm

    cands = fixed_judge_set()
    assert {c.kind for c in cands} == {"alias", "distractor", "named entity", "generic"}
    judge = load_llm("qwen2.5-coder-1.5b")
    pr = precision_recall(judge_candidates(judge, cands, DEFAULT_GUARDS))
    assert pr["false_accept_rate"] <= MAX_FALSE_ACCEPT, pr
    assert pr["false_accept named entity"] == 0 and pr["false_accept generic"] == 0, pr
    assert pr["recall"] >= 0.6, pr  # the guards must not buy precision by refusing the aliases
