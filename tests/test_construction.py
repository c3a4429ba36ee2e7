"""Unit tests of the construction algorithms (paper 000 §3), with hand-checked values."""

from __future__ import annotations

import json
from itertools import permutations

import pytest

from inferqa_utils.construction.convergence import convergence_from_scores, gold_candidate, parse_candidates
from inferqa_utils.construction.difficulty import difficulty_from_ease
from inferqa_utils.construction.labeling import LabelCheckpoint, QuestionLabels, label_rule
from inferqa_utils.construction.leakage import LeakageFilter
from inferqa_utils.construction.passages import build_passages, n_subset_permutations, subset_permutations
from inferqa_utils.construction.splits import make_splits
from inferqa_utils.construction.stats import check_invariants, label_counts
from inferqa_utils.construction.steps import _answer_note, clean_hints, limit_candidates
from inferqa_utils.construction.verification import (
    answer_effects,
    load_decisions,
    save_decisions,
    update_labels,
    verification_widget,
)
from inferqa_utils.core.errors import DataFormatError
from inferqa_utils.ir.datamodel import Dataset, Hint, Question, parse_passage_id
from inferqa_utils.ir.textnorm import any_occurs_folded, canonical_tokens


# ---------------------------------------------------------------- step 6: subset-permutations
def test_325_passages_for_five_hints():
    # Σ C(5,k)·k! = 5 + 20 + 60 + 120 + 120
    assert n_subset_permutations(5) == 5 + 20 + 60 + 120 + 120 == 325
    assert [n_subset_permutations(k) for k in range(1, 6)] == [1, 4, 15, 64, 325]
    perms = list(subset_permutations(5))
    assert len(perms) == len(set(perms)) == 325
    assert sum(1 for p in perms if len(p) == 2) == 20


def test_passage_ids_round_trip_to_hint_indices():
    hints = ["h0.", "h1.", "h2.", "h3.", "h4."]
    ps = build_passages("Q_dev_1", hints)
    assert len({p.pid for p in ps}) == 325
    for p in ps:
        qid, mask, ids = parse_passage_id(p.pid)
        assert (qid, ids) == ("Q_dev_1", p.hint_ids)
        assert mask == "".join("1" if i in ids else "0" for i in range(5))
        assert p.text == " ".join(hints[i] for i in ids)
    assert parse_passage_id("Q_dev_1_10101_420") == ("Q_dev_1", "10101", (4, 2, 0))
    assert sorted(permutations((0, 2, 4))) == sorted(p.hint_ids for p in ps if set(p.hint_ids) == {0, 2, 4})


# ---------------------------------------------------------------- step 2: convergence
@pytest.mark.parametrize(("n_yes_besides_gold", "gold", "expected"), [
    (1, 1, 0.91),   # 2 of 11: 1 − (2 − 1)/11 = 0.909 → 0.91
    (0, 1, 1.0),    # only the gold: 1 − 0/11
    (10, 1, 0.09),  # all 11: 1 − 10/11 = 0.0909 → 0.09
    (3, 0, 0.0),    # gold not referred to → 0 whatever the rest
    (4, 1, 0.64),   # 5 of 11: 1 − 4/11 = 0.636 → 0.64
])
def test_convergence_formula(n_yes_besides_gold, gold, expected):
    scores = {f"c{i}": int(i < n_yes_besides_gold) for i in range(10)} | {"gold": gold}
    assert convergence_from_scores(scores, "gold") == expected


@pytest.mark.parametrize("n_yes_besides_gold, gold, expected", [
    (3, 0, 0.73),   # gold vote 0 is a judge false negative for a true hint: 1 − 3/11 = 0.727
    (3, 1, 0.73),   # equal to HICOS where the judge accepts the gold
    (0, 0, 1.0),
    (10, 0, 0.09),
])
def test_true_hints_rule_keeps_the_distractor_part_of_hicos(n_yes_besides_gold, gold, expected):
    scores = {f"c{i}": int(i < n_yes_besides_gold) for i in range(10)} | {"gold": gold}
    assert convergence_from_scores(scores, "gold", rule="true-hints") == expected
    with pytest.raises(ValueError, match="rule"):
        convergence_from_scores(scores, "gold", rule="hicosx")


def test_convergence_needs_the_gold_candidate():
    with pytest.raises(KeyError):
        convergence_from_scores({"a": 1}, "gold")
    assert gold_candidate(["Paris", "Lyon", "the U.S.A."], ["USA"]) == "the U.S.A."


def test_parse_generated_candidates():
    reply = (
        "1. Lyon\n2) Marseille\n- paris\n* Nice.\n\nLyon\nA very long line that is not an answer at all "
        "really"
    )
    assert parse_candidates(reply, ["Paris"], 10) == ["Lyon", "Marseille", "Nice"]


def test_limit_candidates_keeps_gold_last_and_is_seeded():
    cands = [f"c{i}" for i in range(10)] + ["gold"]
    a = limit_candidates(cands, "gold", 4, 13)
    assert len(a) == 4 and a[-1] == "gold" and a == limit_candidates(cands, "gold", 4, 13)
    assert limit_candidates(cands, "gold", None, 13) == cands


# ---------------------------------------------------------------- step 1: leakage
@pytest.mark.parametrize(("answers", "hint", "method"), [
    (["New York City", "The Big Apple"], "Locals call it the big apple.", "exact"),  # alias, case
    (["Mirror"], "Mirrors like it hang in every hallway.", "exact"),  # plural
    (["PARIS"], "It is paris, not London.", "exact"),  # case
    (["U.S.A."], "Its flag is the flag of the USA.", "exact"),  # punctuation
    (["7"], "There are seven of them.", "exact"),  # number words
    (["Zürich"], "It lies on Lake Zurich.", "exact"),  # accents
    (["Jakarta"], "It was called Djakarta until 1972.", "fuzzy"),  # spelling variant
    (["Leonardo da Vinci"], "Leonardo painted it in Milan.", "token"),  # distinctive token
])
def test_leakage_filter_finds(answers, hint, method):
    leaks = LeakageFilter().find(answers, ["A harmless first hint.", hint])
    assert leaks and leaks[0].hint_index == 1 and leaks[0].method == method


@pytest.mark.parametrize(("answers", "hint"), [
    (["Rome"], "It feels like home to many."),  # short answers never match fuzzily
    (["Mexico City"], "This city is the largest in North America."),  # generic token
    (["Mirror"], "It reflects light."),
    (["Leonardo da Vinci"], "He painted a famous portrait."),
])
def test_leakage_filter_spares(answers, hint):
    assert LeakageFilter().find(answers, [hint]) == []


def test_canonical_tokens():
    assert canonical_tokens("The Seven Wonders!") == ["7", "wonder"]
    assert canonical_tokens("Café-Society") == ["cafe", "society"]


# ---------------------------------------------------------------- steps 5, 7, 8
def test_make_splits():
    qids = [f"q{i}" for i in range(12)]
    par = {"q0", "q3", "q6", "q9"}
    splits, unused = make_splits(qids, par, n_train=3, n_test=6, seed=1)
    assert set(splits["train"]) <= par and len(splits["train"]) == 3 and len(unused) == 1
    assert not (set(splits["dev"]) | set(splits["test"])) & par
    assert len(splits["test"]) == 6 and len(splits["dev"]) == 2
    assert (splits, unused) == make_splits(qids, par, n_train=3, n_test=6, seed=1)
    default, _ = make_splits(qids, par)
    assert len(default["train"]) == 4 and len(default["test"]) == round(8 * 2 / 3)


def test_label_rule():
    assert label_rule(["Venice"]) == 2
    assert label_rule([]) == 1
    assert label_rule(["Venice"], rejected={"venice"}) == 1
    assert label_rule(["Venice", "Rome"], rejected={"venice"}) == 2


def _labels(qid="q1"):
    return QuestionLabels(qid, {f"{qid}_1_0": {"m": "Venezia"}, f"{qid}_1_1": {"m": "Gondola"}},
                          {f"{qid}_1_0": ["Venezia"], f"{qid}_1_1": ["Gondola"]},
                          {f"{qid}_1_0": 2, f"{qid}_1_1": 2})


def test_checkpoint_resumes_after_a_cut_line(tmp_path):
    ck = LabelCheckpoint(tmp_path / "labels.jsonl")
    ck.append(_labels("q1"))
    ck.append(_labels("q2"))
    text = ck.path.read_text()
    ck.path.write_text(text[: len(text) - 20])  # interrupted while writing q2
    done = ck.load()
    assert list(done) == ["q1"] and done["q1"].labels["q1_1_0"] == 2
    ck.append(_labels("q2"))
    assert list(ck.load()) == ["q1", "q2"]


def test_checkpoint_rejects_a_bad_middle_line(tmp_path):
    p = tmp_path / "labels.jsonl"
    p.write_text('{"oops": 1}\n' + json.dumps({"qid": "q"}) + "\n")
    with pytest.raises(DataFormatError, match="record 1"):
        LabelCheckpoint(p).load()


def test_verification_update(tmp_path):
    q = Question(
        "q1", "Which city has gondolas?", ["Venice"], [Hint("It has canals."), Hint("A gondola ride.")]
    )
    res = _labels()
    upd = update_labels(q, q.hint_texts, res, {"Venezia": False}, LeakageFilter())
    # Venezia rejected by the person; Gondola occurs in a hint → removed by the leakage re-run
    assert upd.rejected_by_person == ["Venezia"] and upd.rejected_by_leakage == ["Gondola"]
    assert upd.downgraded == 2 and set(res.labels.values()) == {1} and upd.pool == ["Venice"]
    path = save_decisions(tmp_path / "v.json", {"q1": {"Venezia": True}})
    assert load_decisions(path) == {"q1": {"Venezia": True}}
    path.write_text('{"q1": {"Venezia": "yes"}}')
    with pytest.raises(DataFormatError, match="q1"):
        load_decisions(path)


def _gobi() -> tuple[Question, QuestionLabels]:
    """The default build's emb_loc_61 in small: the judge admitted "Desert of Gobi" on two passages,
    one of which also has the gold "Gobi"; "Nurse Gobi" matches a hint (the leakage re-run removes it)."""
    q = Question("q1", "In which desert were dinosaur eggs found in the 1920s?", ["Gobi Desert", "Gobi"],
                 [Hint("It lies in Asia."), Hint("A nurse found fossils there.")])
    q.meta["gold_answers"] = ["Gobi Desert", "Gobi"]
    acc = {"q1_1_0": ["Desert of Gobi"], "q1_1_1": ["Desert of Gobi", "Gobi"], "q1_1_2": ["Gobi"],
           "q1_1_3": [], "q1_1_4": ["Nurse Gobi"]}
    gens = {pid: {"m": (a or ["Sahara"])[0]} for pid, a in acc.items()}
    return q, QuestionLabels("q1", gens, acc, {pid: label_rule(a) for pid, a in acc.items()})


def test_answer_effects_preview_what_a_decision_changes() -> None:
    q, res = _gobi()
    eff = {e.answer: e for e in answer_effects(q, q.hint_texts, res, {})}
    assert [e.kind for e in answer_effects(q, q.hint_texts, res, {})] == ["generated", "leaks", "gold"]
    gobi, desert, nurse = eff["Gobi"], eff["Desert of Gobi"], eff["Nurse Gobi"]
    assert (gobi.kind, gobi.passages, gobi.flips, gobi.decidable) == ("gold", 2, 0, False)
    assert "fixed" in gobi.preview()
    # q1_1_1 keeps label 2 through the gold "Gobi": unticking moves one passage, not two
    assert (desert.kind, desert.passages, desert.flips, desert.accepted) == ("generated", 2, 1, True)
    assert desert.preview() == "unticking removes it from the pool and moves 1 passage 2 → 1"
    assert (nurse.kind, nurse.accepted, nurse.flips) == (
        "leaks", False, 1,
    ) and "whatever you decide" in nurse.preview()
    off = {e.answer: e for e in answer_effects(q, q.hint_texts, res, {"Desert of Gobi": False})}[
        "Desert of Gobi"
    ]
    assert not off.accepted and off.preview().startswith(
        "unticked: out of the pool at the next build (1 passage 2 → 1)"
    )
    # the preview is what the label update then does
    upd = update_labels(q, q.hint_texts, res, {"Desert of Gobi": False}, LeakageFilter())
    assert upd.downgraded == off.flips + nurse.flips and upd.rejected_by_leakage == ["Nurse Gobi"]


def test_verification_widget_offers_only_decisions_that_change_something(tmp_path) -> None:
    q, res = _gobi()
    path = tmp_path / "v.json"
    box = verification_widget([q], {"q1": res}, path)
    assert "1 judge-admitted answer(s) to verify" in box.children[0].value
    rows = box.children[1].children[1:]
    boxes = {row.children[1].value.split("</b>")[0].split("<b>")[-1]: row.children[0] for row in rows}
    assert boxes["Gobi"].disabled and boxes["Nurse Gobi"].disabled  # gold and leaking answers are fixed
    assert not boxes["Desert of Gobi"].disabled and boxes["Desert of Gobi"].value
    boxes["Desert of Gobi"].value = False  # a click: saved at once, the line says what it now does
    assert load_decisions(path) == {"q1": {"Desert of Gobi": False}}
    line = next(r.children[1].value for r in rows if "Desert of Gobi" in r.children[1].value)
    assert "unticked: out of the pool at the next build (1 passage 2 → 1)" in line
    # a question whose accepted answers are all gold matches offers no box
    gold_only = QuestionLabels("q2", {"q2_1_0": {"m": "Gobi"}}, {"q2_1_0": ["Gobi"]}, {"q2_1_0": 2})
    q2 = Question("q2", "Which desert?", ["Gobi"], [Hint("Asia.")])
    box = verification_widget([q2], {"q2": gold_only}, path)
    assert "Nothing to verify" in box.children[0].value and len(box.children) == 2
    assert "q2" in box.children[-1].value


# ---------------------------------------------------------------- hints, answers, difficulty, invariants
def test_clean_hints_and_answer_notes():
    q = Question("q", "?", ["Zürich"], [Hint("A."), Hint(" "), Hint("a"), Hint("B.")])
    kept, dropped = clean_hints(q)
    assert [h.text for h in kept] == ["A.", "B."] and dropped == [(1, "empty hint"), (2, "duplicate hint")]
    assert _answer_note("Zürich") == "non-ascii" and _answer_note("1,969") == "number,punctuation"


def test_difficulty_helpers():
    assert any_occurs_folded(["paris"], "The Eiffel Tower is in Paris.")
    assert not any_occurs_folded(["Paris"], "Parisian cafés")
    import pandas as pd

    assert difficulty_from_ease(pd.Series([0.9, 0.5, 0.1])) == ["Easy", "Medium", "Hard"]


def test_invariants_and_label_counts():
    ps = {p.pid: p for qid in ("a", "b") for p in build_passages(qid, ["x.", "y."])}
    qrels = {qid: {p: (2 if p.endswith("_0") else 1) for p in ps if p.startswith(qid)} for qid in ("a", "b")}
    qs = {qid: Question(qid, "?", ["z"], [Hint("x."), Hint("y.")]) for qid in ("a", "b")}
    ds = Dataset("t", qs, ps, qrels, {"test": ["a", "b"]})
    inv = check_invariants(ds, 2)
    assert inv["ok"] and inv["corpus_size"] == 8
    # 2 questions × 8 passages = 16 pairs: 4 own each (one label 2: the passage "_0"), 4 others → 0
    assert label_counts(ds) == {0: 8, 1: 6, 2: 2}
    ds.qrels["a"].pop(next(iter(ds.qrels["a"])))
    assert not check_invariants(ds, 2)["ok"]
