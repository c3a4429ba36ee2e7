"""The verdict rule: a paper finding *holds*, is *contradicted* or is *inconclusive* on a sample of
our data (one value per unit on each side, :class:`Sample`), or is *by construction*.

**Regions.** Each relation is a region ``R`` for a statistic ``s`` of the two samples
(:meth:`inferqa_utils.measure.paper.Finding.region`):

* ``"a > b"``: ``s = mean(a) − mean(b)``, ``R = (0, ∞)``; ``"a < b"``: ``R = (−∞, 0)``;
* ``"a - b >= margin"``: ``R = (margin, ∞)``; ``"a - b <= margin"``: ``R = (−∞, margin)``;
* ``"adds little"`` (paper 000's "rerankers / fine-tuning add little"): ``R = (−margin, margin)``,
  and a difference significantly below 0 contradicts (an intervention that hurts does not "add a
  little");
* ``"ratio a/b in [lo, hi]"``: ``s = mean(a) / mean(b)``, ``R = (lo, hi)``;
* ``"abs(a - b) / b <= margin"``: ``s = |mean(a) − mean(b)| / mean(b)``, ``R = (0, margin)``.

A side's mean is ``Σ a_i / n``, or ``Σ a_i / Σ w_i`` with per-unit weights (a share among the units
that count, e.g. damage among the questions ever answered right).

**Tests.** Each edge ``e`` of ``R`` gets two one-sided p-values, ``P(s > e)``'s and ``P(s < e)``'s,
reported two-sided (doubled, at most 1), by the sample's method (:func:`method`):

* ``exact``: paired 0/1 outcomes compared by their difference, every edge at 0 (a > b, a < b).
  Only the ``m`` discordant units move it (``n₁₀`` where a = 1, b = 0; ``n₀₁`` the other way):
  ``s = (n₁₀ − n₀₁)/n`` and, given ``m``, ``n₁₀ ~ Binomial(m, π)`` with ``s = (m/n)(2π − 1)``. The
  one-sided p-values are the exact binomial tails of ``n₁₀`` at ``π = ½``: the exact sign test
  (McNemar's exact test). The interval is the Clopper–Pearson interval of ``π`` mapped to ``s``,
  conditional on ``m`` as McNemar's test is (Agresti 2013, §11.1).
* ``score``: the same outcomes against a margin (``a − b > 10``, "adds little" within ±2.16), where
  how many units are discordant is itself uncertain: Tango's (1998) score test and interval for
  the difference of paired proportions, made for equivalence and non-inferiority claims.
* ``exact share``: the same, when ``a ≥ b`` on every unit by definition (``Sample.a_at_least_b``:
  AcEM@N ≥ EM@N). Then ``n₀₁ = 0`` and ``s = n₁₀/n`` is a binomial proportion: exact binomial tails and
  the Clopper–Pearson interval of ``n₁₀`` of ``n``, unconditionally.
* ``bootstrap``: any other statistic (continuous values, ratios, weighted means): the seeded
  percentile bootstrap (Efron & Tibshirani 1993, ch. 13) with ``B`` = :data:`N_RESAMPLES` replicates,
  paired over units, clustered by question when the sample names each unit's question (the
  passages of one question share its hints), each side on its own otherwise. One-sided p-values are
  the bootstrap tails ``(1 + #{s* ≤ e}) / (B + 1)``: the test the percentile interval inverts.

**Decision.** ``p_holds`` = the p-value that ``s`` is inside ``R`` (every finite edge: the larger one,
the two one-sided tests of an equivalence region), ``p_contradicted`` = the p-value that ``s`` is
outside (the smaller edge; for "adds little" also ``s < 0``). With ``α`` = :data:`ALPHA`: **holds** when
``p_holds < α``, **contradicted** when ``p_contradicted < α``, else **inconclusive** — the same as the
95 % interval lying inside ``R``, outside it, or touching or straddling an edge (both sides alike).
The finding's p is that of its verdict (the smaller of the two when inconclusive). Across the
findings of one table — a profile's family — :func:`adjust` applies Holm's step-down adjustment to
these p-values and keeps a verdict only when its adjusted p is below ``α``; the unadjusted verdict is
kept beside it.

**Guards** (:func:`undecided`): no verdict — inconclusive whatever the test — when every value on
both sides is the same, when fewer than :data:`MIN_UNITS` units (questions; or, clustered, fewer
than :data:`MIN_UNITS` questions) were measured on a side, when a paired difference rests on fewer
than :data:`MIN_UNITS` discordant units, or when an equivalence claim's intervention moved fewer than
:data:`MIN_UNITS` units (``Sample.moved``: answers or rankings it changed). The units a verdict rests
on (:func:`rests_on`) are, for a paired difference, its discordant units; for an equivalence claim,
the units the intervention moved; otherwise every unit measured.

**By construction.** A comparison that cannot come out otherwise (``forced``; or ``a > b`` when ``a ≥ b``
by definition, which can only hold or be inconclusive) gets the verdict ``by construction``, is
not tested and is left out of the counts and of Holm's family.

Example::

    >>> import numpy as np
    >>> from inferqa_utils.measure.paper import Finding
    >>> f = Finding("x", "a beats b", "", "a", None, "b", None, "a > b")
    >>> s = Sample(np.array([1.0] * 12), np.array([0.0] * 12), paired=True, note="12 questions")
    >>> judge(f, s).verdict
    'holds'
    >>> judge(f, Sample(np.array([1.0] * 9 + [0.0] * 3), np.zeros(12), True, "9 of 12")).verdict
    'inconclusive'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.config import SEED
from .uncertainty import N_RESAMPLES, Interval, holm, mean_ci

if TYPE_CHECKING:
    from .paper import Finding

HOLDS, CONTRADICTED, INCONCLUSIVE = "holds", "contradicted", "inconclusive"
#: the label of a comparison that cannot come out otherwise: shown, never counted
BY_CONSTRUCTION = "by construction"
#: the level of every decision (two-sided, as the 95 % intervals), before and after Holm
ALPHA = 0.05
#: fewer units than this (measured per side; discordant for a paired difference; moved for an
#: equivalence claim) and no finding is decided
MIN_UNITS = 10
EXACT, EXACT_SHARE, SCORE, BOOTSTRAP = "exact", "exact share", "score", "bootstrap"


@dataclass
class Sample:
    """Our two quantities: one value per unit (question, passage, pair). ``paired`` when ``a[i]``
    and ``b[i]`` belong to the same unit. ``scale`` converts the statistic to the reported unit
    (100 for 0/1 and [0, 1] outcomes → %).

    Optional: ``a_weight``/``b_weight`` (paired), per-unit denominators — a side's mean is then
    ``Σ a / Σ a_weight``; ``a_groups``/``b_groups`` (unpaired), the question of each unit, resampled
    together; ``moved``, the units the intervention changed (answers or rankings, ``moved_what``);
    ``a_at_least_b``, ``a_i ≥ b_i`` on every unit by definition (checked); ``read``, the questions
    read to measure these units when they are not the questions read one for one (a subset, such as
    the questions ever answered right, or several pairs per question)."""

    a: np.ndarray
    b: np.ndarray
    paired: bool
    note: str
    unit: str = "questions"
    scale: float = 100.0
    a_weight: np.ndarray | None = None
    b_weight: np.ndarray | None = None
    a_groups: np.ndarray | None = None
    b_groups: np.ndarray | None = None
    moved: int | None = None
    moved_what: str = "answers"
    a_at_least_b: bool = False
    read: int | None = None

    def __post_init__(self) -> None:
        self.a, self.b = np.asarray(self.a, dtype=float), np.asarray(self.b, dtype=float)
        if self.paired and len(self.a) != len(self.b):
            raise ValueError(f"a paired sample needs as many a as b values: {len(self.a)} vs {len(self.b)}")
        if (self.a_weight is not None or self.b_weight is not None) and not self.paired:
            raise ValueError("per-unit weights need a paired sample")
        if self.a_at_least_b and np.any(self.a < self.b):
            i = int(np.argmax(self.a < self.b))
            raise ValueError(f"a ≥ b by definition, but unit {i} has a = {self.a[i]:g} < b = {self.b[i]:g}")

    @property
    def discordant(self) -> int | None:
        """Paired: the units whose a and b differ (only they move a paired difference); ``None``
        unpaired."""
        return int(np.sum(self.a != self.b)) if self.paired else None

    @property
    def groups(self) -> int | None:
        """Unpaired and clustered: the number of questions; ``None`` otherwise."""
        if self.a_groups is None or self.b_groups is None:
            return None
        return len(set(np.asarray(self.a_groups).tolist()) | set(np.asarray(self.b_groups).tolist()))


@dataclass
class Scored:
    """One finding scored: our a and b with intervals, the statistic with its interval, the p of
    the verdict before and after Holm, the verdict (after Holm when :func:`adjust` ran) and the one
    before, why, the units measured (``n``), discordant, moved and rested on, and the test."""

    finding: Finding
    verdict: str
    why: str
    a: Interval | None = None
    b: Interval | None = None
    stat: Interval | None = None
    p_value: float | None = None
    n: int = 0
    informative: int | None = None
    discordant: int | None = None
    moved: int | None = None
    test: str = ""
    unadjusted: str | None = None
    p_holm: float | None = None
    #: whether the verdict was drawn from a test (Holm's family): not missing, not by construction, not
    #: guarded (a guarded sample's p is shown all the same)
    tested: bool = False


@dataclass(frozen=True)
class Tails:
    """The one-sided p-values of the statistic at any edge (``above(e)``: that ``s > e``;
    ``below(e)``: that ``s < e``), its estimate and interval, and the test's name."""

    value: float
    lo: float
    hi: float
    above: Callable[[float], float]
    below: Callable[[float], float]
    test: str


# ----------------------------------------------------------------------------- statistics


def _side_means(
    a_sum: np.ndarray, a_den: np.ndarray, b_sum: np.ndarray, b_den: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(divide="ignore", invalid="ignore"):
        return a_sum / a_den, b_sum / b_den


def _combine(kind: str, ma: Any, mb: Any) -> Any:
    ma, mb = np.asarray(ma, dtype=float), np.asarray(mb, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "diff":
            return ma - mb
        if kind == "ratio":
            return ma / mb
        if kind == "relative":
            return np.abs(ma - mb) / mb
    raise ValueError(f"unknown statistic {kind!r}")


def side_mean(values: np.ndarray, weight: np.ndarray | None = None) -> float:
    """``Σ values / n`` or, with per-unit weights, ``Σ values / Σ weight`` (NaN when it is 0)."""
    den = float(len(values)) if weight is None else float(np.sum(weight))
    return float(np.sum(values) / den) if den else math.nan


def statistic_value(s: Sample, kind: str) -> float:
    """The statistic ``kind`` (``diff``, ``ratio``, ``relative``) of the sample's two means."""
    return float(_combine(kind, side_mean(s.a, s.a_weight), side_mean(s.b, s.b_weight)))


def _is_binary(x: np.ndarray) -> bool:
    return bool(np.all((x == 0) | (x == 1)))


def _edges(finding: Finding) -> list[float]:
    r0, r1 = finding.region()
    edges = [e for e in (r0, r1) if not math.isinf(e)]
    return edges + ([0.0] if finding.relation == "adds little" else [])


def method(s: Sample, finding: Finding) -> str:
    """The sample's test for ``finding`` (module docstring): for a paired difference of 0/1
    outcomes ``exact share`` when ``a ≥ b`` by definition, ``exact`` when every edge is 0, ``score``
    (Tango) at a margin; else ``bootstrap``."""
    if (
        finding.statistic == "diff"
        and s.paired
        and s.a_weight is None
        and s.b_weight is None
        and _is_binary(s.a)
        and _is_binary(s.b)
    ):
        if s.a_at_least_b:
            return EXACT_SHARE
        return EXACT if all(e == 0 for e in _edges(finding)) else SCORE
    return BOOTSTRAP


def _binom_tails(k: int, m: int, p: float) -> tuple[float, float]:
    """``(P(X ≥ k), P(X ≤ k))`` for ``X ~ Binomial(m, p)``, ``p`` clipped to [0, 1]."""
    from scipy.stats import binom

    p = min(1.0, max(0.0, p))
    return float(binom.sf(k - 1, m, p)), float(binom.cdf(k, m, p))


def clopper_pearson(k: int, m: int, confidence: float = 1 - ALPHA) -> tuple[float, float]:
    """The exact (Clopper–Pearson 1934) interval of a binomial proportion, ``k`` of ``m``."""
    from scipy.stats import beta

    if m == 0:
        return 0.0, 1.0
    a = (1 - confidence) / 2
    lo = 0.0 if k == 0 else float(beta.ppf(a, k, m - k + 1))
    hi = 1.0 if k == m else float(beta.ppf(1 - a, k + 1, m - k))
    return lo, hi


def _exact_tails(s: Sample) -> Tails:
    n = len(s.a)
    n10, n01 = int(np.sum((s.a == 1) & (s.b == 0))), int(np.sum((s.a == 0) & (s.b == 1)))
    m = n10 + n01
    value = (n10 - n01) / n * s.scale
    if s.a_at_least_b:
        lo, hi = clopper_pearson(n10, n)

        def at(e: float) -> tuple[float, float]:
            return _binom_tails(n10, n, e / s.scale)

        return Tails(
            value,
            lo * s.scale,
            hi * s.scale,
            lambda e: at(e)[0],
            lambda e: at(e)[1],
            f"exact binomial (Clopper–Pearson), {n10} of {n} {s.unit}",
        )
    if m == 0:
        return Tails(
            0.0,
            0.0,
            0.0,
            lambda e: 1.0 if e >= 0 else 0.0,
            lambda e: 1.0 if e <= 0 else 0.0,
            f"exact sign test, {_units(0, 'discordant ' + s.unit)}",
        )
    lo, hi = clopper_pearson(n10, m)

    def tails(e: float) -> tuple[float, float]:
        return _binom_tails(n10, m, (e / s.scale * n / m + 1) / 2)

    return Tails(
        value,
        (2 * lo - 1) * m / n * s.scale,
        (2 * hi - 1) * m / n * s.scale,
        lambda e: tails(e)[0],
        lambda e: tails(e)[1],
        f"exact sign test (McNemar) on {_units(m, 'discordant ' + s.unit)}: {n10} for a, {n01} for b",
    )


def _tango_z(x: int, y: int, n: int, delta: float) -> float:
    """Tango's (1998) score statistic of ``H0: p₁₀ − p₀₁ = delta`` for ``x`` = n₁₀, ``y`` = n₀₁ of
    ``n`` pairs: ``z = (x − y − n·δ) / √(n(2q̃ + δ(1 − δ)))`` with ``q̃`` the constrained maximum
    likelihood estimate of p₀₁, the root of ``2n·q² + (δ(2n − x + y) − x − y)·q − y·δ(1 − δ) = 0``."""
    a = 2.0 * n
    b = delta * (2 * n - x + y) - x - y
    c = -y * delta * (1 - delta)
    q = (-b + math.sqrt(max(0.0, b * b - 4 * a * c))) / (2 * a)
    var = n * (2 * q + delta * (1 - delta))
    num = x - y - n * delta
    if var <= 0:
        return 0.0 if num == 0 else math.copysign(math.inf, num)
    return num / math.sqrt(var)


def _score_tails(s: Sample, confidence: float = 1 - ALPHA) -> Tails:
    from scipy.optimize import brentq
    from scipy.stats import norm

    n = len(s.a)
    x, y = int(np.sum((s.a == 1) & (s.b == 0))), int(np.sum((s.a == 0) & (s.b == 1)))
    z = float(norm.ppf(1 - (1 - confidence) / 2))
    eps = 1e-9

    def bound(target: float, default: float) -> float:
        f = lambda d: _tango_z(x, y, n, d) - target  # noqa: E731  (decreasing in d)
        lo_d, hi_d = -1 + eps, 1 - eps
        if f(lo_d) * f(hi_d) > 0:
            return default
        return float(brentq(f, lo_d, hi_d, xtol=1e-10))

    lo, hi = bound(z, -1.0), bound(-z, 1.0)

    def above(e: float) -> float:  # that s > e
        return float(norm.sf(_tango_z(x, y, n, e / s.scale)))

    def below(e: float) -> float:
        return float(norm.cdf(_tango_z(x, y, n, e / s.scale)))

    return Tails(
        (x - y) / n * s.scale,
        lo * s.scale,
        hi * s.scale,
        above,
        below,
        "score test and interval for paired proportions (Tango 1998), "
        f"{_units(x + y, 'discordant ' + s.unit)} of {n}: {x} for a, {y} for b",
    )


def resample_counts(rng: np.random.Generator, n: int, counts: np.ndarray, size: int) -> np.ndarray:
    """``size`` draws of ``Multinomial(n, counts / Σ counts)`` as a ``(size, m)`` array: how often
    each of ``m`` distinct rows appears in a bootstrap resample of ``n`` units (Efron & Tibshirani
    1993, ch. 6), drawn as ``m − 1`` vectorised conditional binomials."""
    p = counts / counts.sum()
    out = np.empty((size, len(p)), dtype=np.int64)
    left = np.full(size, n, dtype=np.int64)
    mass = 1.0
    for j in range(len(p) - 1):
        q = min(1.0, max(0.0, p[j] / mass)) if mass > 0 else 0.0
        out[:, j] = rng.binomial(left, q)
        left -= out[:, j]
        mass -= p[j]
    out[:, -1] = left
    return out


def _resampled_sums(
    rows: np.ndarray, n_resamples: int, rng: np.random.Generator, chunk: int = 2_000
) -> np.ndarray:
    """``(n_resamples, columns)``: the column sums of bootstrap resamples of the unit ``rows``
    (units with the same row are drawn together through their counts)."""
    distinct, counts = np.unique(rows, axis=0, return_counts=True)
    n = len(rows)
    out = np.empty((n_resamples, rows.shape[1]))
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        out[start : start + size] = resample_counts(rng, n, counts, size) @ distinct
    return out


def bootstrap_replicates(
    s: Sample, kind: str, n_resamples: int = N_RESAMPLES, seed: int = SEED
) -> np.ndarray:
    """The statistic ``kind`` on ``n_resamples`` seeded bootstrap resamples of ``s`` (module
    docstring: paired, clustered by question, or each side on its own); NaN replicates dropped."""
    rng = np.random.default_rng(seed)
    if s.paired:
        wa = np.ones(len(s.a)) if s.a_weight is None else np.asarray(s.a_weight, float)
        wb = np.ones(len(s.b)) if s.b_weight is None else np.asarray(s.b_weight, float)
        sums = _resampled_sums(np.column_stack([s.a, wa, s.b, wb]), n_resamples, rng)
        ma, mb = _side_means(sums[:, 0], sums[:, 1], sums[:, 2], sums[:, 3])
    elif s.a_groups is not None and s.b_groups is not None:
        import pandas as pd

        per_q = (
            pd.concat(
                [
                    pd.DataFrame(
                        {"q": np.asarray(s.a_groups).astype(str), "a": s.a, "na": 1.0, "b": 0.0, "nb": 0.0}
                    ),
                    pd.DataFrame(
                        {"q": np.asarray(s.b_groups).astype(str), "a": 0.0, "na": 0.0, "b": s.b, "nb": 1.0}
                    ),
                ]
            )
            .groupby("q")[["a", "na", "b", "nb"]]
            .sum()
        )
        sums = _resampled_sums(per_q.to_numpy(float), n_resamples, rng)
        ma, mb = _side_means(sums[:, 0], sums[:, 1], sums[:, 2], sums[:, 3])
    else:
        sa = _resampled_sums(s.a[:, None], n_resamples, rng)[:, 0] / len(s.a)
        sb = _resampled_sums(s.b[:, None], n_resamples, rng)[:, 0] / len(s.b)
        ma, mb = sa, sb
    stats_ = np.asarray(_combine(kind, ma, mb), dtype=float)
    return stats_[~np.isnan(stats_)]


def _bootstrap_tails(s: Sample, kind: str, confidence: float = 1 - ALPHA) -> Tails:
    value = statistic_value(s, kind) * (s.scale if kind == "diff" else 1.0)
    factor = s.scale if kind == "diff" else 1.0
    reps = bootstrap_replicates(s, kind) * factor
    how = (
        "paired over " + s.unit
        if s.paired
        else "clustered by question"
        if s.a_groups is not None
        else "each side on its own"
    )
    name = f"percentile bootstrap, {how}"
    if not len(reps) or math.isnan(value):
        return Tails(value, math.nan, math.nan, lambda e: 1.0, lambda e: 1.0, name)
    a = (1 - confidence) / 2
    lo, hi = np.quantile(reps, [a, 1 - a])
    reps = np.sort(reps)
    b = len(reps)

    def above(e: float) -> float:  # that s > e: the share of replicates at or below e
        return (1 + int(np.searchsorted(reps, e, side="right"))) / (b + 1)

    def below(e: float) -> float:
        return (1 + b - int(np.searchsorted(reps, e, side="left"))) / (b + 1)

    return Tails(value, float(lo), float(hi), above, below, name)


def tails(s: Sample, finding: Finding) -> Tails:
    """The one-sided p-values, estimate and interval of ``finding``'s statistic by the sample's
    :func:`method` (module docstring)."""
    how = method(s, finding)
    if how in (EXACT, EXACT_SHARE):
        return _exact_tails(s)
    if how == SCORE:
        return _score_tails(s)
    return _bootstrap_tails(s, finding.statistic)


# ----------------------------------------------------------------------------- decision


@dataclass(frozen=True)
class Decision:
    """A verdict before any adjustment, the p-values that the statistic is inside the region
    (``p_holds``) and outside it (``p_contradicted``), and the edge or reason that decided."""

    verdict: str
    p_holds: float
    p_contradicted: float
    why: str

    @property
    def p_value(self) -> float:
        """The p of the verdict (of the nearer one when inconclusive)."""
        if self.verdict == HOLDS:
            return self.p_holds
        if self.verdict == CONTRADICTED:
            return self.p_contradicted
        return min(self.p_holds, self.p_contradicted)


def _two(p: float) -> float:
    return min(1.0, 2.0 * p)


def decide_tests(finding: Finding, t: Tails, alpha: float = ALPHA) -> Decision:
    """The verdict of ``finding`` from the one-sided tests at its region's edges (module docstring)."""
    if math.isnan(t.value) or math.isnan(t.lo):
        return Decision(INCONCLUSIVE, 1.0, 1.0, "the statistic is undefined (division by zero)")
    r0, r1 = finding.region()
    inside, outside = [], []
    if not math.isinf(r0):
        inside.append(_two(t.above(r0)))
        outside.append((_two(t.below(r0)), f"below {r0:g}"))
    if not math.isinf(r1):
        inside.append(_two(t.below(r1)))
        outside.append((_two(t.above(r1)), f"above {r1:g}"))
    if finding.relation == "adds little":
        outside.append((_two(t.below(0.0)), "below 0 (it hurts)"))
    p_in = max(inside)
    p_out, where = min(outside)
    if p_out < alpha:
        return Decision(CONTRADICTED, p_in, p_out, f"significantly {where} (p = {p_out:.3g})")
    if p_in < alpha:
        return Decision(HOLDS, p_in, p_out, f"significantly inside the region (p = {p_in:.3g})")
    edges = " and ".join(f"{e:g}" for e in (r0, r1) if not math.isinf(e))
    return Decision(
        INCONCLUSIVE, p_in, p_out, f"not significantly on either side of {edges} (p = {min(p_in, p_out):.3g})"
    )


def decide(finding: Finding, lo: float, hi: float) -> tuple[str, str]:
    """The verdict for a statistic whose 95 % interval is ``[lo, hi]``, and why: holds inside the
    region, contradicted outside it (for "adds little" also entirely below 0), inconclusive when it
    touches or straddles an edge — the two sides alike. The interval form of :func:`decide_tests`."""
    r0, r1 = finding.region()
    if math.isnan(lo) or math.isnan(hi):
        return INCONCLUSIVE, "the statistic is undefined (division by zero)"
    if finding.relation == "adds little" and hi < 0:
        return CONTRADICTED, f"significantly negative: the whole interval is below 0 (hi = {hi:.2f})"
    if hi < r0 or lo > r1:
        return CONTRADICTED, "the interval lies outside the region"
    if lo > r0 and hi < r1:
        return HOLDS, "the interval lies inside the region"
    edge = r0 if lo <= r0 else r1
    return INCONCLUSIVE, f"the interval touches or straddles {edge:g}"


def rests_on(finding: Finding, s: Sample) -> int:
    """The units a verdict on ``s`` rests on (module docstring): an equivalence claim's moved units
    (discordant ones when the sample does not say), a paired difference's discordant units, else
    every unit measured (the smaller side; questions when clustered)."""
    if finding.relation == "adds little":
        return int(s.moved if s.moved is not None else (s.discordant or 0))
    if s.paired and finding.statistic == "diff" and s.a_weight is None and not s.a_at_least_b:
        return int(s.discordant or 0)
    return measured_units(s)


def measured_units(s: Sample) -> int:
    """The units measured on the smaller side: questions when clustered, the units that count
    (``Σ weight``) with per-unit weights, else the units."""
    if s.groups is not None:
        return s.groups
    if s.a_weight is not None or s.b_weight is not None:
        wa = len(s.a) if s.a_weight is None else float(np.sum(s.a_weight))
        wb = len(s.b) if s.b_weight is None else float(np.sum(s.b_weight))
        return int(min(wa, wb))
    return min(len(s.a), len(s.b))


def _units(n: int, unit: str) -> str:
    """``1 question``, ``2 questions``."""
    return f"{n} {unit[:-1] if n == 1 and unit.endswith('s') else unit}"


def undecided(finding: Finding, s: Sample, explain: bool = True) -> str | None:
    """Why ``s`` decides no finding whatever the test (module docstring), or ``None``. ``explain``:
    with the sample's note and what the guard means; without, the bare reason.

    Example::

        >>> from inferqa_utils.measure.paper import Finding
        >>> f = Finding("x", "", "", "a", None, "b", None, "a > b")
        >>> undecided(f, Sample(np.ones(4), np.zeros(4), paired=True, note="4 questions"), explain=False)
        'too few questions: 4 < 10'
    """
    note = f" ({s.note})" if explain else ""
    flat = np.concatenate([s.a, s.b])
    if not len(flat):
        return f"no {s.unit} measured{note}"
    if np.all(flat == flat[0]) and s.a_weight is None:
        every = f"every one of the {len(s.a)} {s.unit} scores {flat[0] * s.scale:g}"
        return f"no variation: {every} on both sides{note}"
    measured = measured_units(s)
    what = "questions" if s.groups is not None else s.unit
    if s.a_weight is not None or s.b_weight is not None:
        what = f"{s.unit} that count (weight)"
    if measured < MIN_UNITS:
        return f"too few {what}: {measured} < {MIN_UNITS}{note}"
    if finding.relation == "adds little":
        moved = rests_on(finding, s)
        if moved < MIN_UNITS:
            meaning = ": too few to tell a small effect from none" if explain else ""
            return (
                f"the intervention moved {moved} of {len(s.a)} "
                f"{s.moved_what if s.moved is not None else s.unit}"
                f" (< {MIN_UNITS}){meaning}{note}"
            )
        return None
    if s.paired and finding.statistic == "diff" and not s.a_at_least_b and s.a_weight is None:
        d = int(s.discordant or 0)
        if d < MIN_UNITS:
            unit = s.unit[:-1] if s.unit.endswith("s") else s.unit
            meaning = ": only they can show a difference" if explain else ""
            return f"{d} discordant {s.unit} of {len(s.a)} (a ≠ b) < {MIN_UNITS}{meaning}{note}".replace(
                f"1 discordant {s.unit}", f"1 discordant {unit}"
            )
    return None


def _means(s: Sample) -> tuple[Interval, Interval]:
    if s.a_weight is None and s.b_weight is None:
        return mean_ci(s.a).scaled(s.scale), mean_ci(s.b).scaled(s.scale)
    out = []
    for x, w in ((s.a, s.a_weight), (s.b, s.b_weight)):
        w = np.ones(len(x)) if w is None else np.asarray(w, float)
        one = Sample(x, w, True, "", a_weight=None)
        value = side_mean(x, w)
        reps = bootstrap_replicates(one, "ratio")
        lo, hi = np.quantile(reps, [ALPHA / 2, 1 - ALPHA / 2]) if len(reps) else (math.nan, math.nan)
        out.append(Interval(value, float(lo), float(hi), len(x)).scaled(s.scale))
    return out[0], out[1]


def judge(
    finding: Finding,
    s: Sample,
    forced: str | None = None,
    explain: bool = True,
    means: tuple[Interval, Interval] | None = None,
) -> Scored:
    """The verdict of ``finding`` on the sample ``s`` before any adjustment (module docstring): the
    means with intervals, the statistic with its interval, the p of the verdict, and *holds* /
    *contradicted* / *inconclusive* with the reason — or *by construction* (``forced``: why the
    comparison cannot come out otherwise; also ``a > b`` on a sample where ``a ≥ b`` by definition).
    ``explain``: reasons with the sample's note (:func:`undecided`). ``means``: a's and b's means with
    their intervals when the caller computed them (in the reported unit), else :func:`mean_ci`'s."""
    a_ci, b_ci = means if means is not None else (_means(s) if len(s.a) and len(s.b) else (None, None))
    t = tails(s, finding) if len(s.a) and len(s.b) else None
    stat = None if t is None else Interval(t.value, t.lo, t.hi, len(s.a))
    base = dict(
        a=a_ci,
        b=b_ci,
        stat=stat,
        n=len(s.a),
        informative=rests_on(finding, s),
        discordant=s.discordant,
        moved=s.moved,
        test="" if t is None else t.test,
    )
    if forced is None and s.a_at_least_b and finding.relation == "a > b":
        forced = "a ≥ b on every unit by definition: a > b can only hold or be inconclusive"
    if forced is not None:
        return Scored(finding, BY_CONSTRUCTION, forced, **base, unadjusted=BY_CONSTRUCTION)
    reason = undecided(finding, s, explain)
    if t is None:
        return Scored(finding, INCONCLUSIVE, reason or "nothing measured", **base, unadjusted=INCONCLUSIVE)
    d = decide_tests(finding, t)
    if reason is not None:  # no test: out of Holm's family; the p shown only when the units were measured
        measured = measured_units(s) >= MIN_UNITS and not reason.startswith("no variation")
        return Scored(
            finding,
            INCONCLUSIVE,
            reason,
            **base,
            p_value=d.p_value if measured else None,
            unadjusted=INCONCLUSIVE,
        )
    return Scored(
        finding,
        d.verdict,
        f"{d.why}; {s.note}" if explain else d.why,
        **base,
        p_value=d.p_value,
        unadjusted=d.verdict,
        tested=True,
    )


def adjust(scored: Sequence[Scored], alpha: float = ALPHA) -> list[Scored]:
    """Holm's step-down adjustment over the findings tested (module docstring): each keeps its
    verdict only when its adjusted p is below ``alpha``, else it becomes inconclusive; the verdict
    before the adjustment stays in ``unadjusted``."""
    tested = [i for i, s in enumerate(scored) if s.tested and s.p_value is not None]
    adjusted = dict(zip(tested, holm([float(scored[i].p_value) for i in tested]), strict=True))
    out = []
    for i, s in enumerate(scored):
        if i not in adjusted:
            out.append(s)
            continue
        p = adjusted[i]
        if s.verdict in (HOLDS, CONTRADICTED) and p >= alpha:
            why = (
                f"{s.unadjusted} before Holm's adjustment, not after it over the {len(tested)} findings "
                f"tested (p = {s.p_value:.3g}, p Holm = {p:.3g} ≥ {alpha:g}); {s.why}"
            )
            out.append(replace(s, verdict=INCONCLUSIVE, why=why, p_holm=p))
        else:
            out.append(replace(s, p_holm=p))
    return out
