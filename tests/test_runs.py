"""In-memory run helpers (:mod:`inferqa_utils.ir.runs`), hand-checked."""

from __future__ import annotations

import math

from inferqa_utils.ir.runs import ids_to_run_list, merge_head_tail, ranked_ids, sort_scored

RUN = {"q": [("a", 3.0), ("b", 2.0), ("c", 1.0)]}


def test_ranked_ids():
    assert ranked_ids(RUN, "q") == ["a", "b", "c"]
    assert ranked_ids(RUN, "q", 2) == ["a", "b"]
    assert ranked_ids(RUN, "q", 0) == []
    assert ranked_ids(RUN, "missing") == [] and ranked_ids(RUN, "missing", 3) == []


def test_ids_to_run_list():
    assert ids_to_run_list(["x", "y"]) == [("x", 2.0), ("y", 1.0)]
    assert ids_to_run_list([]) == []


def test_sort_scored_keeps_input_order_on_ties():
    assert sort_scored([("a", 1), ("b", 2), ("c", 1)]) == [("b", 2.0), ("a", 1.0), ("c", 1.0)]


def test_merge_head_tail_puts_the_tail_below_the_head():
    assert merge_head_tail([("a", 0.5), ("b", -2.0)], ["c", "d"]) == [
        ("a", 0.5),
        ("b", -2.0),
        ("c", -3.0),
        ("d", -4.0),
    ]
    assert merge_head_tail([], ["c"]) == [("c", -1.0)]
    inf = merge_head_tail([("a", math.inf), ("b", 1.0)], ["c"])  # non-finite scores set no floor
    assert inf[-1] == ("c", 0.0)
