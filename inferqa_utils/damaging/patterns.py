"""Damaging passages: EM patterns, AcEM, passage types and probes (paper 004).

Incremental inference reads a ranked list ``p_1..p_N`` with the top-1, top-2, …, top-N passages;
the **EM pattern** is the bit string ``EM@1..EM@N`` (``"1"`` = exact match).

* ``AcEM@k = max(EM@1, …, EM@k)``; ``AcEM@k − EM@k`` measures the damaging effect.
* Passage types (1-based position i): **IZ** zeros before the first 1; **DP** position 1 if
  ``EM@1 = 1`` and every 0→1 transition; **DN** every 1→0 transition; **SP** a 1 after a 1;
  **SN** a 0 after a 0 once a 1 has appeared.
* Probes (passage subsets re-read; DN is never kept): P1 = DP+SP, P2 = DP, P3 = IZ+DP+SP,
  P4 = IZ+DP, P5 = IZ+DP+SP+SN, P6 = IZ+DP+SN. An all-zero pattern keeps every passage.

The Stability Error Ratio (paper 004 §3.1) is defined in :mod:`inferqa_utils.damaging.ser`.

The paper's reader (FiD) is order-invariant, so one inference per prefix suffices; decoder LLMs
are order-sensitive, so patterns obtained with them depend on the passage order used.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

TYPES: tuple[str, ...] = ("IZ", "DP", "DN", "SP", "SN")

PROBES: dict[str, frozenset[str]] = {
    "P1": frozenset({"DP", "SP"}),
    "P2": frozenset({"DP"}),
    "P3": frozenset({"IZ", "DP", "SP"}),
    "P4": frozenset({"IZ", "DP"}),
    "P5": frozenset({"IZ", "DP", "SP", "SN"}),
    "P6": frozenset({"IZ", "DP", "SN"}),
}
"""paper 004 probe patterns: the passage types each probe keeps (DN is in none of them)."""

PROBE_KS: tuple[int, ...] = (5, 10, 20, 40, 100)
"""paper 004: Probe@k is reported for these k (as far as N allows)."""


def _check_pattern(pattern: str) -> str:
    if not isinstance(pattern, str) or set(pattern) - {"0", "1"}:
        raise ValueError(f"an EM pattern is a string of '0'/'1', got {pattern!r}")
    return pattern


def _check_k(k: int, n: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= n:
        raise ValueError(f"k must be an integer in 1..{n}, got {k!r}")
    return k


def em_pattern(ems: Sequence[bool | int]) -> str:
    """EM pattern (paper 004): ``EM@1..EM@N`` as a bit string, e.g. ``[True, 0, 1] -> "101"``."""
    bits = []
    for e in ems:
        if e not in (0, 1):  # True/False compare equal to 1/0
            raise ValueError(f"EM values must be 0/1 or bool, got {e!r}")
        bits.append("1" if e else "0")
    return "".join(bits)


def acem_at(pattern: str, k: int) -> int:
    """AcEM@k (paper 004) = ``max(EM@1, …, EM@k)``: 1 if any prefix up to k was answered correctly."""
    _check_pattern(pattern)
    _check_k(k, len(pattern))
    return int("1" in pattern[:k])


def acem_curve(pattern: str) -> list[int]:
    """``[AcEM@1, …, AcEM@N]`` (paper 004), the running maximum of the EM pattern."""
    _check_pattern(pattern)
    out: list[int] = []
    acc = 0
    for b in pattern:
        acc = max(acc, int(b))
        out.append(acc)
    return out


def passage_types(pattern: str) -> list[str]:
    """Type of each passage from the EM pattern (paper 004 §5.1), one per position.

    For position i (1-based) with ``e_i = EM@i``: IZ if ``e_j = 0`` for all j ≤ i; DP if ``e_i = 1``
    and (i = 1 or ``e_{i-1} = 0``); DN if ``e_i = 0`` and ``e_{i-1} = 1``; SP if ``e_i = e_{i-1} = 1``;
    SN if ``e_i = e_{i-1} = 0`` after a 1 has appeared. Example: ``"0110100" -> IZ DP SP DN DP DN SN``.
    """
    _check_pattern(pattern)
    types: list[str] = []
    seen_one = False
    prev = "0"
    for b in pattern:
        if b == "1":
            types.append("SP" if prev == "1" else "DP")
            seen_one = True
        elif not seen_one:
            types.append("IZ")
        else:
            types.append("DN" if prev == "1" else "SN")
        prev = b
    return types


def probe_keep(pattern: str, probe: str, k: int | None = None) -> list[int]:
    """0-based indices of the passages a probe keeps among the first k (paper 004).

    Types are computed on ``pattern[:k]`` (the whole pattern when ``k`` is None) and passages whose
    type is in ``PROBES[probe]`` are kept, in rank order; DN passages are never kept. If
    ``pattern[:k]`` has no 1 (all IZ), every one of the first k passages is kept.
    """
    _check_pattern(pattern)
    if probe not in PROBES:
        raise ValueError(f"unknown probe {probe!r}; expected one of {sorted(PROBES)}")
    if k is not None:
        _check_k(k, len(pattern))
        pattern = pattern[:k]
    if "1" not in pattern:
        return list(range(len(pattern)))
    keep = PROBES[probe]
    return [i for i, t in enumerate(passage_types(pattern)) if t in keep]


def aggregate_em_curves(patterns: Sequence[str]) -> pd.DataFrame:
    """Mean EM@k and AcEM@k over questions, in %, for k = 1..N (paper 004 §4, Fig. 3).

    ``EM(k) = 100 · mean_q EM_q@k`` and ``AcEM(k) = 100 · mean_q AcEM_q@k``. All patterns must have
    the same length N. Returns columns ``k`` (int), ``EM``, ``AcEM`` (float), one row per k.
    """
    pats = [_check_pattern(p) for p in patterns]
    if not pats:
        return pd.DataFrame(
            {"k": pd.Series(dtype=int), "EM": pd.Series(dtype=float), "AcEM": pd.Series(dtype=float)}
        )
    n = len(pats[0])
    if any(len(p) != n for p in pats):
        raise ValueError(
            f"all EM patterns must have the same length; got lengths {sorted({len(p) for p in pats})}"
        )
    q = len(pats)
    em = [100.0 * sum(p[i] == "1" for p in pats) / q for i in range(n)]
    curves = [acem_curve(p) for p in pats]
    ac = [100.0 * sum(c[i] for c in curves) / q for i in range(n)]
    return pd.DataFrame({"k": list(range(1, n + 1)), "EM": em, "AcEM": ac})


def type_counts(patterns: Sequence[str]) -> dict[str, int]:
    """Number of passages of each type (paper 004) over all positions of all patterns.

    Every type in ``TYPES`` is present as a key (0 when absent); the counts sum to the total length.
    """
    counts = dict.fromkeys(TYPES, 0)
    for p in patterns:
        for t in passage_types(p):
            counts[t] += 1
    return counts

