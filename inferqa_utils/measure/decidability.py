"""How many units a finding needs before its test can decide it: power at the observed effect.

For a scored finding (:mod:`inferqa_utils.measure.verdict`) the *effect* is the distance from the
statistic's estimate ``ŝ`` to the nearest edge ``e`` of the finding's region (for "adds little",
the nearer of ``±margin``); the units needed are the fewest with which a test at level
``α' = α / k`` (``k`` findings tested in the profile: the first step of Holm's adjustment, a
Bonferroni bound) rejects with probability :data:`POWER` when the true statistic equals ``ŝ``:

* **exact sign test** (paired 0/1 outcomes against 0): with ``π̂ = n₁₀ / m`` the share of the ``m``
  discordant units won by a, the smallest ``M`` discordant units whose exact two-sided binomial test
  at ``α'`` rejects with probability ≥ :data:`POWER` under ``Binomial(M, π̂)`` (computed exactly);
  questions needed ``= ⌈M · n / m⌉`` (``n``: the questions read for the sample);
* **every other test** (Tango's score test, exact binomial shares, bootstraps): the normal
  approximation ``N = ((z_{1−α'/2} + z_{power}) · σ / |ŝ − e|)²`` with ``σ`` the per-unit standard
  deviation implied by the interval at hand (``σ = √n · (hi − lo) / (2 z_{0.975})``).

A finding whose estimate sits on an edge (``ŝ = e``) has no effect to detect: no number of units
decides it at that effect (``None``). A finding by construction, or with nothing measured, is not
computed. These are planning numbers at the observed effect, not guarantees.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .verdict import ALPHA, BY_CONSTRUCTION, EXACT, MIN_UNITS, Sample, Scored, method

if TYPE_CHECKING:
    from .paper import Finding

#: the power the units needed are computed for
POWER = 0.8
#: the largest number of discordant units searched for the exact sign test
MAX_UNITS = 1_000_000


@dataclass(frozen=True)
class Need:
    """Units (as the verdict counts them) and questions needed to decide a finding at its observed
    effect, and how that was computed; ``units is None`` when no number suffices (why says so)."""

    units: int | None
    questions: int | None
    how: str


def sign_test_power(m: int, pi: float, alpha: float) -> float:
    """The power of the exact two-sided sign test (doubled binomial tails at ½) on ``m`` discordant
    units at level ``alpha`` when each is won by a with probability ``pi``."""
    from scipy.stats import binom

    if m <= 0:
        return 0.0
    x = np.arange(m + 1)
    p_two = np.minimum(1.0, 2 * np.minimum(binom.sf(x - 1, m, 0.5), binom.cdf(x, m, 0.5)))
    reject = p_two < alpha
    return float(binom.pmf(x[reject], m, pi).sum())


def sign_test_units(pi: float, alpha: float, power: float = POWER, max_units: int = MAX_UNITS) -> int | None:
    """The fewest discordant units at which :func:`sign_test_power` reaches ``power`` (searched by
    doubling, then bisection over the first crossing; power is not monotone in m for the exact test,
    so the scan finishes linearly over the last bracket); ``None`` when ``pi = ½`` or none up to
    ``max_units`` does."""
    if abs(pi - 0.5) < 1e-12:
        return None
    hi = MIN_UNITS
    while sign_test_power(hi, pi, alpha) < power:
        hi *= 2
        if hi > max_units:
            return None
    lo = max(1, hi // 2)
    for m in range(lo, hi + 1):
        if sign_test_power(m, pi, alpha) >= power:
            return m
    return hi


def _z(p: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(p))


def nearest_edge(finding: Finding, value: float) -> float | None:
    """The edge of ``finding``'s region nearest the estimate (``None`` when the region has none)."""
    r0, r1 = finding.region()
    edges = [e for e in (r0, r1) if not math.isinf(e)]
    if finding.relation == "adds little" and value < 0:
        edges.append(0.0)
    if not edges:
        return None
    return min(edges, key=lambda e: abs(value - e))


def units_needed(
    scored: Scored, s: Sample | None, family: int = 1, power: float = POWER, alpha: float = ALPHA
) -> Need | None:
    """The :class:`Need` of one scored finding at level ``alpha / family`` (module docstring);
    ``None`` when it is by construction or nothing was measured."""
    f = scored.finding
    if scored.verdict == BY_CONSTRUCTION or s is None or scored.stat is None or not len(s.a):
        return None
    level = alpha / max(1, family)
    value, lo, hi = scored.stat.value, scored.stat.lo, scored.stat.hi
    edge = nearest_edge(f, value)
    if edge is None or any(math.isnan(x) for x in (value, lo, hi)):
        return Need(None, None, "the statistic is undefined")
    units_now = max(1, int(scored.informative or 0))
    per_question = units_now / max(1, len(s.a)) if s.paired else 1.0
    how_level = f"α = {alpha:g}/{max(1, family)}, power {power:.0%}"
    if abs(value - edge) < 1e-12:
        return Need(None, None, f"the estimate sits on the edge {edge:g}: no effect to detect")
    if method(s, f) == EXACT and edge == 0:
        n10, n01 = int(np.sum((s.a == 1) & (s.b == 0))), int(np.sum((s.a == 0) & (s.b == 1)))
        if n10 + n01 == 0:
            return Need(None, None, "no discordant unit: no effect to detect")
        m = sign_test_units(n10 / (n10 + n01), level, power)
        if m is None:
            return Need(
                None, None, f"exact sign test at π = {n10}/{n10 + n01}: not within {MAX_UNITS:,} units"
            )
        q = math.ceil(m * (s.read or len(s.a)) / (n10 + n01))
        return Need(
            max(m, MIN_UNITS),
            q,
            f"exact sign test, π = {n10}/{n10 + n01} of the discordant units won by a; {how_level}",
        )
    n = len(s.a) if s.paired else (s.groups or min(len(s.a), len(s.b)))
    z975 = _z(1 - ALPHA / 2)
    sigma = math.sqrt(n) * (hi - lo) / (2 * z975)
    if sigma <= 0:
        return Need(None, None, "the interval has no width: the normal approximation does not apply")
    needed = ((_z(1 - level / 2) + _z(power)) * sigma / abs(value - edge)) ** 2
    n_needed = max(MIN_UNITS, math.ceil(needed))
    units = max(MIN_UNITS, math.ceil(n_needed * per_question)) if s.paired else n_needed
    questions = math.ceil(n_needed * (s.read or n) / n)
    return Need(
        units,
        questions,
        f"normal approximation at the observed effect {value:.3g} "
        f"(edge {edge:g}), σ from the interval; {how_level}",
    )
