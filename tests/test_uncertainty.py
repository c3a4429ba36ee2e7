"""Bootstrap intervals, paired randomization tests and Holm correction, on hand-checked cases."""

from __future__ import annotations

import pytest

from inferqa_utils.uncertainty import holm, mean_ci, paired_difference


def test_mean_ci_degenerate_and_seeded():
    assert (mean_ci([1, 1, 1, 1]).lo, mean_ci([1, 1, 1, 1]).hi) == (1.0, 1.0)
    one = mean_ci([0.25])
    assert (one.value, one.lo, one.hi, one.n) == (0.25, 0.25, 0.25, 1)
    em = [1] * 6 + [0] * 42  # 6 of 48 questions right: 12.5 %
    ci = mean_ci(em)
    assert ci.value == pytest.approx(0.125)
    assert 0.02 < ci.lo < 0.125 < ci.hi < 0.25  # normal approximation: 0.125 ± 1.96·0.048 = [0.031, 0.219]
    assert mean_ci(em) == ci  # seeded: identical on a second call
    assert str(ci.scaled(100)).startswith("12.50 [")
    with pytest.raises(ValueError, match="no questions"):
        mean_ci([])
    with pytest.raises(ValueError, match="NaN"):
        mean_ci([1.0, float("nan")])


def test_paired_difference_exact_sign_flip():
    # identical systems: no difference, p = 1
    same = paired_difference([1, 0, 1], [1, 0, 1])
    assert same.diff.value == 0 and same.p_value == 1.0
    # A right on all 10 questions, B on none: of the 2^10 sign flips only the two uniform ones reach
    # |mean| = 1, so the exact two-sided p-value is 2 / 1024
    r = paired_difference([1] * 10, [0] * 10)
    assert r.diff.value == 1.0 and r.p_value == pytest.approx(2 / 1024)
    # one discordant question of 48: p = 1 (flipping it is as extreme as not)
    a, b = [1] + [0] * 47, [0] * 48
    assert paired_difference(a, b).p_value == pytest.approx(1.0)
    # 6 discordant questions all favouring A: p = 2 / 2^6
    a, b = [1] * 6 + [0] * 42, [0] * 48
    assert paired_difference(a, b).p_value == pytest.approx(2 / 64)
    with pytest.raises(ValueError, match="same questions"):
        paired_difference([1, 0], [1])


def test_holm_hand_checked():
    # sorted 0.01, 0.03, 0.04 → 3·0.01 = 0.03, max(0.03, 2·0.03) = 0.06, max(0.06, 1·0.04) = 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []
