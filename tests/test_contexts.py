"""Tests for inferqa_utils.reading.contexts (paper 000 §5.4) with hand-checked expected values."""

from __future__ import annotations

import pytest

from inferqa_utils.reading.contexts import build_context, union_freq, union_freq_scores, union_norm

# Three ranked passages sharing hints A, B, C, D.
P1 = ["A.", "B."]
P2 = ["C.", "A."]
P3 = ["B.", "C.", "D."]
PASSAGES = [P1, P2, P3]


# ---------------------------------------------------------------- union_norm


def test_union_norm_rank_order_first_occurrence():
    assert union_norm(PASSAGES) == ["A.", "B.", "C.", "D."]


def test_union_norm_strips_and_dedups_whitespace_variants():
    passages = [["  A. ", "B."], ["A.", " B.\n", "C."], ["", "   "]]
    assert union_norm(passages) == ["A.", "B.", "C."]


def test_union_norm_repeated_sentence_within_passage():
    assert union_norm([["A.", "A.", "B."], ["B.", "A."]]) == ["A.", "B."]


def test_union_norm_empty():
    assert union_norm([]) == []


def test_union_rejects_str_passage():
    with pytest.raises(TypeError):
        union_norm(["A. B."])


# ---------------------------------------------------------------- union_freq


def test_union_freq_scores_hand_computed():
    # α = 0.6, β = 0.4; ranks P1=1, P2=2, P3=3.
    # A: in P1 (pos 1), P2 (pos 2): 0.6·(1/1 + 1/2) + 0.4·(1/1 + 1/2) = 0.9 + 0.6 = 1.5
    # B: in P1 (pos 2), P3 (pos 1): 0.6·(1/1 + 1/3) + 0.4·(1/2 + 1/1) = 0.8 + 0.6 = 1.4
    # C: in P2 (pos 1), P3 (pos 2): 0.6·(1/2 + 1/3) + 0.4·(1/1 + 1/2) = 0.5 + 0.6 = 1.1
    # D: in P3 (pos 3):             0.6·(1/3)       + 0.4·(1/3)       = 0.2 + 0.1333… = 0.3333…
    scores = union_freq_scores(PASSAGES)
    assert list(scores) == ["A.", "B.", "C.", "D."]  # first-seen order
    assert scores["A."] == pytest.approx(1.5)
    assert scores["B."] == pytest.approx(1.4)
    assert scores["C."] == pytest.approx(1.1)
    assert scores["D."] == pytest.approx(1 / 3)
    assert union_freq(PASSAGES) == ["A.", "B.", "C.", "D."]


def test_union_freq_reorders_by_frequency():
    # P1 = [X, Y], P2 = [Y, Z], P3 = [Y, X]  (α = 0.6, β = 0.4)
    # X: P1 pos 1, P3 pos 2: 0.6·(1 + 1/3) + 0.4·(1 + 1/2)       = 0.8 + 0.6 = 1.4
    # Y: P1 pos 2, P2 pos 1, P3 pos 1: 0.6·(1 + 1/2 + 1/3) + 0.4·(1/2 + 1 + 1) = 1.1 + 1.0 = 2.1
    # Z: P2 pos 2: 0.6·(1/2) + 0.4·(1/2)                          = 0.3 + 0.2 = 0.5
    passages = [["X", "Y"], ["Y", "Z"], ["Y", "X"]]
    scores = union_freq_scores(passages)
    assert scores == pytest.approx({"X": 1.4, "Y": 2.1, "Z": 0.5})
    assert union_freq(passages) == ["Y", "X", "Z"]
    assert union_norm(passages) == ["X", "Y", "Z"]


def test_union_freq_ties_keep_first_seen_order():
    # P1 = [S, T], P2 = [T, S] at α = β = 0.5:
    # S: P1 pos 1, P2 pos 2: 0.5·(1 + 1/2) + 0.5·(1 + 1/2) = 1.5
    # T: P1 pos 2, P2 pos 1: 0.5·(1 + 1/2) + 0.5·(1/2 + 1) = 1.5   → tie, S first-seen
    passages = [["S", "T"], ["T", "S"]]
    scores = union_freq_scores(passages, alpha=0.5, beta=0.5)
    assert scores["S"] == pytest.approx(scores["T"]) == pytest.approx(1.5)
    assert union_freq(passages, alpha=0.5, beta=0.5) == ["S", "T"]
    # Mirror order of first appearance → T first.
    assert union_freq([["T", "S"], ["S", "T"]], alpha=0.5, beta=0.5) == ["T", "S"]


def test_union_freq_float_noise_tie():
    # α = 0, β = 1 (position only). Exact arithmetic ties Q and R, but floats do not:
    # Q: pos 3 in P1, pos 4 in P2  → 1/3 + 1/4  = 7/12 → 0.5833333333333333 in floats
    # R: pos 2 in P2, pos 12 in P3 → 1/2 + 1/12 = 7/12 → 0.5833333333333334 in floats
    # Q is seen first, so the tie must keep Q before R despite R's larger float.
    passages = [["a1", "a2", "Q"], ["b1", "R", "b3", "Q"], [*(f"c{i}" for i in range(1, 12)), "R"]]
    scores = union_freq_scores(passages, alpha=0.0, beta=1.0)
    assert scores["Q"] < scores["R"]  # float noise
    assert scores["Q"] == pytest.approx(7 / 12)
    assert scores["R"] == pytest.approx(7 / 12)
    order = union_freq(passages, alpha=0.0, beta=1.0)
    assert order.index("Q") < order.index("R")


def test_alpha_beta_change_order():
    # Rank and position disagree: P1 = [F1, F2, F3, G], P2 = [H]
    # α = 1, β = 0 (rank only): F1=F2=F3=G=1, H=1/2 → [F1, F2, F3, G, H]
    # α = 0, β = 1 (position only): F1=1, F2=1/2, F3=1/3, G=1/4, H=1 → [F1, H, F2, F3, G]
    # α = 0.6, β = 0.4: G = 0.6 + 0.4/4 = 0.7 ; H = 0.6/2 + 0.4/1 = 0.7 → tie (G seen first)
    #                   F2 = 0.6 + 0.2 = 0.8 ; F3 = 0.6 + 0.4/3 = 0.7333…
    passages = [["F1", "F2", "F3", "G"], ["H"]]
    assert union_freq(passages, alpha=1.0, beta=0.0) == ["F1", "F2", "F3", "G", "H"]
    assert union_freq(passages, alpha=0.0, beta=1.0) == ["F1", "H", "F2", "F3", "G"]
    scores = union_freq_scores(passages)
    assert scores == pytest.approx({"F1": 1.0, "F2": 0.8, "F3": 0.6 + 0.4 / 3, "G": 0.7, "H": 0.7})
    assert union_freq(passages) == ["F1", "F2", "F3", "G", "H"]
    # α = 0.4, β = 0.6: G = 0.4 + 0.15 = 0.55 ; H = 0.2 + 0.6 = 0.8 ; F2 = 0.4 + 0.3 = 0.7 ; F3 = 0.6
    assert union_freq(passages, alpha=0.4, beta=0.6) == ["F1", "H", "F2", "F3", "G"]


def test_union_freq_repeated_sentence_within_passage_counts_once():
    # P1 = [A, A, B] is treated as [A, B]: A = 0.6·1 + 0.4·1 = 1.0 ; B = 0.6·1 + 0.4·(1/2) = 0.8
    assert union_freq_scores([["A", " A ", "B"]]) == pytest.approx({"A": 1.0, "B": 0.8})


# ---------------------------------------------------------------- build_context


def test_build_context_k1():
    assert build_context(PASSAGES, 1, method="norm") == "A. B."
    assert build_context(PASSAGES, 1, method="freq") == "A. B."
    # k = 1 with freq still orders by position: [B, A] → B = 0.6 + 0.4 = 1.0, A = 0.6 + 0.2 = 0.8
    assert build_context([["B.", "A."], ["A."]], 1) == "B. A."


def test_build_context_k3_norm_and_freq():
    passages = [["X", "Y"], ["Y", "Z"], ["Y", "X"]]
    assert build_context(passages, 3, method="norm") == "X Y Z"
    assert build_context(passages, 3, method="freq") == "Y X Z"
    # top-2 only: X = 0.6 + 0.4 = 1.0 ; Y = 0.6·(1 + 1/2) + 0.4·(1/2 + 1) = 1.5 ; Z = 0.3 + 0.2 = 0.5
    assert build_context(passages, 2, method="freq") == "Y X Z"
    assert build_context(passages, 2, method="norm") == "X Y Z"


def test_build_context_k_larger_than_available():
    assert build_context(PASSAGES, 5, method="norm") == "A. B. C. D."
    assert build_context(PASSAGES, 100) == build_context(PASSAGES, 3)
    assert build_context([], 3) == ""


def test_build_context_alpha_beta_passed_through():
    passages = [["F1", "F2", "F3", "G"], ["H"]]
    assert build_context(passages, 2, alpha=0.0, beta=1.0) == "F1 H F2 F3 G"


@pytest.mark.parametrize("k", [0, -1, 1.5, True, "3"])
def test_build_context_rejects_bad_k(k):
    with pytest.raises(ValueError):
        build_context(PASSAGES, k)


def test_build_context_rejects_bad_method():
    with pytest.raises(ValueError):
        build_context(PASSAGES, 3, method="concat")  # type: ignore[arg-type]
