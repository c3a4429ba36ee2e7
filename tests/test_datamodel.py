import pytest

from inferqa_utils.ir.datamodel import join_hints, parse_passage_id, passage_id


def test_passage_id_round_trip():
    pid = passage_id("Q_dev_8315", (2, 0, 4), 5)
    assert pid == "Q_dev_8315_10101_204"
    assert parse_passage_id(pid) == ("Q_dev_8315", "10101", (2, 0, 4))


def test_passage_id_rejects_inconsistent_mask():
    with pytest.raises(ValueError, match="does not match"):
        parse_passage_id("q1_11000_02")
    with pytest.raises(ValueError, match="bad mask"):
        parse_passage_id("q1_1x000_0")


def test_join_hints_uses_permutation_order_and_one_space():
    hints = ["A is red. ", " B is big.", "C is old."]
    assert join_hints(hints, (2, 0)) == "C is old. A is red."
