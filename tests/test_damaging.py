"""Tests for inferqa_utils.damaging.patterns and the SER formula of inferqa_utils.damaging.ser (paper 004)
with hand-checked expected values."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from inferqa_utils.damaging.patterns import (
    PROBES,
    TYPES,
    acem_at,
    acem_curve,
    aggregate_em_curves,
    em_pattern,
    passage_types,
    probe_keep,
    type_counts,
)
from inferqa_utils.damaging.ser import stability_error_ratio

# ---------------------------------------------------------------- em_pattern / AcEM


def test_em_pattern_bools_and_ints():
    assert em_pattern([True, False, 1, 0]) == "1010"
    assert em_pattern([]) == ""


@pytest.mark.parametrize("bad", [[2], ["1"], [None], [0.5]])
def test_em_pattern_rejects_non_binary(bad):
    with pytest.raises(ValueError):
        em_pattern(bad)


@pytest.mark.parametrize(
    ("pattern", "curve"),
    [
        ("0000", [0, 0, 0, 0]),
        ("1111", [1, 1, 1, 1]),
        ("0101", [0, 1, 1, 1]),
        ("0011", [0, 0, 1, 1]),
        ("1001", [1, 1, 1, 1]),
        ("10", [1, 1]),
        ("", []),
    ],
)
def test_acem_curve(pattern, curve):
    assert acem_curve(pattern) == curve
    assert [acem_at(pattern, k) for k in range(1, len(pattern) + 1)] == curve


def test_acem_at_vs_em():
    """"0110100": EM@k = 0 1 1 0 1 0 0 and AcEM@k = 0 1 1 1 1 1 1 (damaged at k = 4, 6, 7, where
    AcEM − EM = 1); "1000000": AcEM@k = 1 from k = 1 on (the first passage counts), EM@k = 1 at
    k = 1 only. Over both questions, in %: EM 50 50 50 0 50 0 0, AcEM 50 100 100 100 100 100 100."""
    assert [acem_at("0110100", k) for k in range(1, 8)] == [0, 1, 1, 1, 1, 1, 1]
    assert [acem_at("1000000", k) for k in range(1, 8)] == [1] * 7
    curves = aggregate_em_curves(["0110100", "1000000"])
    assert curves["k"].tolist() == list(range(1, 8))
    assert curves["EM"].tolist() == [50.0, 50.0, 50.0, 0.0, 50.0, 0.0, 0.0]
    assert curves["AcEM"].tolist() == [50.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0]
    damaged = (curves["AcEM"] - curves["EM"]).tolist()
    assert damaged == [0.0, 50.0, 50.0, 100.0, 50.0, 100.0, 100.0]


@pytest.mark.parametrize("k", [0, 5, -1, True])
def test_acem_at_rejects_bad_k(k):
    with pytest.raises(ValueError):
        acem_at("0101", k)


def test_bad_pattern_rejected():
    with pytest.raises(ValueError):
        passage_types("01a1")
    with pytest.raises(ValueError):
        acem_curve("012")


# ---------------------------------------------------------------- passage types


@pytest.mark.parametrize(
    ("pattern", "types"),
    [
        ("0000", ["IZ", "IZ", "IZ", "IZ"]),
        ("1111", ["DP", "SP", "SP", "SP"]),
        ("0101", ["IZ", "DP", "DN", "DP"]),
        ("010101", ["IZ", "DP", "DN", "DP", "DN", "DP"]),
        ("0011", ["IZ", "IZ", "DP", "SP"]),
        ("1001", ["DP", "DN", "SN", "DP"]),
        ("10", ["DP", "DN"]),
        ("1", ["DP"]),
        ("0", ["IZ"]),
        ("0110100", ["IZ", "DP", "SP", "DN", "DP", "DN", "SN"]),
        ("", []),
    ],
)
def test_passage_types(pattern, types):
    assert passage_types(pattern) == types


def test_type_counts():
    # "1001" → DP DN SN DP ; "0011" → IZ IZ DP SP ; "0000" → IZ ×4
    counts = type_counts(["1001", "0011", "0000"])
    assert counts == {"IZ": 6, "DP": 3, "DN": 1, "SP": 1, "SN": 1}
    assert sum(counts.values()) == 12
    assert type_counts([]) == dict.fromkeys(TYPES, 0)


# ---------------------------------------------------------------- probes


def test_probe_definitions():
    expected = {
        "P1": {"DP", "SP"},
        "P2": {"DP"},
        "P3": {"IZ", "DP", "SP"},
        "P4": {"IZ", "DP"},
        "P5": {"IZ", "DP", "SP", "SN"},
        "P6": {"IZ", "DP", "SN"},
    }
    assert {name: set(keep) for name, keep in PROBES.items()} == expected
    assert all("DN" not in keep for keep in PROBES.values())


# "0110100" → IZ DP SP DN DP DN SN  (indices 0..6)
MIXED = "0110100"


@pytest.mark.parametrize(
    ("probe", "keep"),
    [
        ("P1", [1, 2, 4]),  # DP+SP
        ("P2", [1, 4]),  # DP
        ("P3", [0, 1, 2, 4]),  # IZ+DP+SP
        ("P4", [0, 1, 4]),  # IZ+DP
        ("P5", [0, 1, 2, 4, 6]),  # IZ+DP+SP+SN
        ("P6", [0, 1, 4, 6]),  # IZ+DP+SN
    ],
)
def test_probe_keep_mixed(probe, keep):
    assert probe_keep(MIXED, probe) == keep


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        # "1001" → DP DN SN DP
        ("1001", {"P1": [0, 3], "P2": [0, 3], "P3": [0, 3], "P4": [0, 3], "P5": [0, 2, 3], "P6": [0, 2, 3]}),
        # "0011" → IZ IZ DP SP
        (
            "0011",
            {
                "P1": [2, 3],
                "P2": [2],
                "P3": [0, 1, 2, 3],
                "P4": [0, 1, 2],
                "P5": [0, 1, 2, 3],
                "P6": [0, 1, 2],
            },
        ),
        # "1111" → DP SP SP SP
        (
            "1111",
            {"P1": [0, 1, 2, 3], "P2": [0], "P3": [0, 1, 2, 3], "P4": [0], "P5": [0, 1, 2, 3], "P6": [0]},
        ),
        # "10" → DP DN
        ("10", {p: [0] for p in PROBES}),
        # "0101" → IZ DP DN DP
        (
            "0101",
            {"P1": [1, 3], "P2": [1, 3], "P3": [0, 1, 3], "P4": [0, 1, 3], "P5": [0, 1, 3], "P6": [0, 1, 3]},
        ),
    ],
)
def test_probe_keep_patterns(pattern, expected):
    assert {p: probe_keep(pattern, p) for p in PROBES} == expected


@pytest.mark.parametrize("probe", sorted(PROBES))
def test_probe_keep_all_zero_keeps_everything(probe):
    assert probe_keep("0000", probe) == [0, 1, 2, 3]
    assert probe_keep("", probe) == []


def test_probe_keep_with_k():
    # First 3 of "0011" are "001" → IZ IZ DP
    assert probe_keep("0011", "P1", k=3) == [2]
    assert probe_keep("0011", "P3", k=3) == [0, 1, 2]
    # First 2 of "0011" are all zero → keep both, even for P1/P2
    assert probe_keep("0011", "P2", k=2) == [0, 1]
    # First 5 of MIXED "01101" → IZ DP SP DN DP
    assert probe_keep(MIXED, "P3", k=5) == [0, 1, 2, 4]
    assert probe_keep(MIXED, "P6", k=5) == [0, 1, 4]
    # k = N equals k = None
    assert probe_keep(MIXED, "P5", k=7) == probe_keep(MIXED, "P5")
    assert probe_keep("1", "P2", k=1) == [0]


def test_probe_keep_errors():
    with pytest.raises(ValueError):
        probe_keep("0101", "P7")
    with pytest.raises(ValueError):
        probe_keep("0101", "P3", k=0)
    with pytest.raises(ValueError):
        probe_keep("0101", "P3", k=5)


# ---------------------------------------------------------------- EM curves


def test_aggregate_em_curves():
    # patterns  k=1 2 3 4            AcEM
    # "0011"      0 0 1 1            0 0 1 1
    # "1001"      1 0 0 1            1 1 1 1
    # "0101"      0 1 0 1            0 1 1 1
    # "0000"      0 0 0 0            0 0 0 0
    # EM %   = 25, 25, 25, 75 ; AcEM % = 25, 50, 75, 75
    df = aggregate_em_curves(["0011", "1001", "0101", "0000"])
    assert list(df.columns) == ["k", "EM", "AcEM"]
    assert df["k"].tolist() == [1, 2, 3, 4]
    assert df["EM"].tolist() == pytest.approx([25.0, 25.0, 25.0, 75.0])
    assert df["AcEM"].tolist() == pytest.approx([25.0, 50.0, 75.0, 75.0])
    assert (df["AcEM"] >= df["EM"]).all()


def test_aggregate_em_curves_extremes():
    df = aggregate_em_curves(["111", "111"])
    assert df["EM"].tolist() == [100.0, 100.0, 100.0]
    assert df["AcEM"].tolist() == [100.0, 100.0, 100.0]
    df = aggregate_em_curves(["10", "10", "00"])
    # EM: 2/3, 0 ; AcEM: 2/3, 2/3
    assert df["EM"].tolist() == pytest.approx([200 / 3, 0.0])
    assert df["AcEM"].tolist() == pytest.approx([200 / 3, 200 / 3])


def test_aggregate_em_curves_empty_and_mismatch():
    df = aggregate_em_curves([])
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["k", "EM", "AcEM"]
    assert len(df) == 0
    with pytest.raises(ValueError):
        aggregate_em_curves(["01", "011"])


# ---------------------------------------------------------------- SER


def test_stability_error_ratio():
    base = ["Paris", "The Beatles", "42", "Mount Everest"]
    # normalised: "paris"=="paris" ; "beatles"=="beatles" ; "42"≠"43" ; "mount everest"≠"k2"
    perturbed = ["paris.", "beatles", "43", "K2"]
    assert stability_error_ratio(base, perturbed) == pytest.approx(50.0)
    assert stability_error_ratio(base, base) == 0.0
    assert stability_error_ratio(["a cat"], ["dog"]) == 100.0


def test_stability_error_ratio_empty_and_mismatch():
    assert math.isnan(stability_error_ratio([], []))
    with pytest.raises(ValueError):
        stability_error_ratio(["x"], ["x", "y"])


# ---------------------------------------------------------------- hand-written patterns


@pytest.mark.parametrize(
    ("pattern", "types", "acem"),
    [
        # all zeros: every passage is an initial zero, AcEM stays 0
        ("00000", ["IZ"] * 5, [0, 0, 0, 0, 0]),
        # all ones: first is DP, the rest SP, AcEM = EM = 1 everywhere
        ("11111", ["DP", "SP", "SP", "SP", "SP"], [1, 1, 1, 1, 1]),
        # 0101…: alternating, every 1 is a DP and every 0 after a 1 a DN
        ("010101", ["IZ", "DP", "DN", "DP", "DN", "DP"], [0, 1, 1, 1, 1, 1]),
        # 1010…: starts right, damaged at every even position
        ("1010", ["DP", "DN", "DP", "DN"], [1, 1, 1, 1]),
        # leading zeros, then a run of ones, a damage and a semi-negative
        ("0001100", ["IZ", "IZ", "IZ", "DP", "SP", "DN", "SN"], [0, 0, 0, 1, 1, 1, 1]),
        # paper 004 A.3.2 (Gwen Stacy): 1111 00 11111111111111
        ("11110011111111111111", ["DP", "SP", "SP", "SP", "DN", "SN", "DP"] + ["SP"] * 13, [1] * 20),
    ],
)
def test_hand_written_patterns_types_and_acem(pattern, types, acem):
    assert passage_types(pattern) == types
    assert acem_curve(pattern) == acem
    assert [acem_at(pattern, k) for k in range(1, len(pattern) + 1)] == acem
    # AcEM@k − EM@k is 1 exactly where the pattern is 0 after a 1 (DN or SN): the damaged prefixes
    damaged = [a - int(b) for a, b in zip(acem, pattern, strict=True)]
    assert damaged == [int(t in ("DN", "SN")) for t in types]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        # all zeros → every probe keeps everything
        ("00000", {p: [0, 1, 2, 3, 4] for p in PROBES}),
        # all ones → DP SP SP SP SP
        ("11111", {"P1": [0, 1, 2, 3, 4], "P2": [0], "P3": [0, 1, 2, 3, 4], "P4": [0],
                   "P5": [0, 1, 2, 3, 4], "P6": [0]}),
        # 010101 → IZ DP DN DP DN DP: DN never kept; no SP/SN so P1 = P2, P3 = P4 = P5 = P6
        ("010101", {"P1": [1, 3, 5], "P2": [1, 3, 5], "P3": [0, 1, 3, 5], "P4": [0, 1, 3, 5],
                    "P5": [0, 1, 3, 5], "P6": [0, 1, 3, 5]}),
        # 0001100 → IZ IZ IZ DP SP DN SN
        ("0001100", {"P1": [3, 4], "P2": [3], "P3": [0, 1, 2, 3, 4], "P4": [0, 1, 2, 3],
                     "P5": [0, 1, 2, 3, 4, 6], "P6": [0, 1, 2, 3, 6]}),
    ],
)
def test_each_probe_on_hand_written_patterns(pattern, expected):
    assert {p: probe_keep(pattern, p) for p in PROBES} == expected


def test_probe_at_k_uses_only_the_first_k_bits():
    # "0001100" with k = 3 is all zeros → everything among the first 3; k = 4 → IZ IZ IZ DP
    assert probe_keep("0001100", "P2", k=3) == [0, 1, 2]
    assert probe_keep("0001100", "P2", k=4) == [3]
    assert probe_keep("0001100", "P1", k=6) == [3, 4]
    # "010101" with k = 2 → IZ DP
    assert probe_keep("010101", "P1", k=2) == [1]
    assert probe_keep("010101", "P4", k=2) == [0, 1]
