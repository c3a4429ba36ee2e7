"""The verdict rule: a paper finding *holds*, is *contradicted* or is *inconclusive* on a sample of
our data (one value per unit on each side, :class:`Sample`).

Each relation is a region ``R`` for a statistic ``s`` of the two samples:

* ``"a > b"``: ``s = mean(a) − mean(b)``, ``R = (0, ∞)``;
* ``"a - b >= margin"``: ``R = [margin, ∞)``; ``"a - b <= margin"``: ``R = (−∞, margin]``;
* ``"adds little"`` (paper 000's "rerankers / fine-tuning add little"): ``R = [−margin, margin]``
  *and* the difference must not be significantly negative — a reranker that hurts does not "add
  a little", so an interval entirely below 0 contradicts;
* ``"ratio a/b in [lo, hi]"``: ``s = mean(a) / mean(b)``, ``R = [lo, hi]``;
* ``"abs(a - b) / b <= margin"``: ``s = |mean(a) − mean(b)| / mean(b)``, ``R = [0, margin]``.

With the seeded 95 % bootstrap interval ``[L, H]`` of ``s`` (paired over questions when a and b
are measured on the same questions, :mod:`inferqa_utils.measure.uncertainty`): **holds** when ``[L, H] ⊆ R``,
**contradicted** when ``[L, H] ∩ R = ∅``, **inconclusive** when the interval straddles a boundary
of ``R`` — or when an input is missing, when the comparison cannot come out otherwise on this run
(``forced``), or when every value on both sides is the same constant
(e.g. EM 0 everywhere: nothing was measured), or when fewer than :data:`MIN_UNITS` questions
were measured, or — paired — when no question differs and fewer than :data:`MIN_UNITS` questions
score above 0 on either side (EM 1 on one question for both: too few could show a difference).
The p-value is that of ``mean(a) = mean(b)`` (paired sign-flip or two-sample permutation test),
Holm-adjusted over the table.

:func:`judge` composes the steps: :func:`estimate` (the means, the statistic's interval, the
p-value; a caller may pass :class:`Estimates` computed by a faster exact-shortcut routine),
:func:`undecided` (the guards above) and :func:`decide` (the interval against the region).

Example::

    >>> import numpy as np
    >>> from inferqa_utils.measure.paper import Finding
    >>> f = Finding("x", "a beats b", "", "a", None, "b", None, "a > b")
    >>> s = Sample(np.array([1.0] * 12), np.array([0.0] * 12), paired=True, note="12 questions")
    >>> judge(f, s).verdict
    'holds'
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.config import SEED
from .uncertainty import N_RESAMPLES, Interval, mean_ci, paired_difference

if TYPE_CHECKING:
    from .paper import Finding

HOLDS, CONTRADICTED, INCONCLUSIVE = "holds", "contradicted", "inconclusive"
#: fewer units (questions, passages, pairs) than this and no finding is decided: a percentile
#: bootstrap over a handful of questions gives intervals that exclude 0 by chance
MIN_UNITS = 10



@dataclass
class Sample:
    """Our two quantities: one value per unit (question, passage, pair). ``paired`` when ``a[i]``
    and ``b[i]`` belong to the same unit. ``scale`` converts the statistic to the reported unit
    (100 for 0/1 and [0, 1] outcomes → %)."""

    a: np.ndarray
    b: np.ndarray
    paired: bool
    note: str
    unit: str = "questions"
    scale: float = 100.0


@dataclass
class Scored:
    """One finding scored: our a and b with intervals, the statistic with its interval, the
    p-value of mean(a) = mean(b), the verdict and why."""

    finding: Finding
    verdict: str
    why: str
    a: Any = None  # uncertainty.Interval
    b: Any = None
    stat: Any = None
    p_value: float | None = None
    n: int = 0
    informative: int | None = None


def _statistic(kind: str) -> Callable[[np.ndarray, np.ndarray], float]:
    def diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> Any:
        return np.mean(x, axis=axis) - np.mean(y, axis=axis)

    def ratio(x: np.ndarray, y: np.ndarray, axis: int = -1) -> Any:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.mean(x, axis=axis) / np.mean(y, axis=axis)

    def relative(x: np.ndarray, y: np.ndarray, axis: int = -1) -> Any:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.abs(np.mean(x, axis=axis) - np.mean(y, axis=axis)) / np.mean(y, axis=axis)

    return {"diff": diff, "ratio": ratio, "relative": relative}[kind]


def statistic_interval(s: Sample, kind: str, confidence: float = 0.95, n_resamples: int = 10_000,
                       seed: int = SEED) -> tuple[float, float, float]:
    """``(value, lo, hi)`` of the statistic with a seeded percentile bootstrap (paired: questions
    resampled together; unpaired: each sample resampled on its own), ``scipy.stats.bootstrap``."""
    from scipy import stats

    fn = _statistic(kind)
    value = float(fn(s.a, s.b))
    if len(s.a) < 2 or len(s.b) < 2 or (np.all(s.a == s.a[0]) and np.all(s.b == s.b[0])):
        return value, value, value
    res = stats.bootstrap(
        (s.a, s.b),
        fn, paired=s.paired, vectorized=True, confidence_level=confidence, n_resamples=n_resamples,
        method="percentile",
        random_state=np.random.default_rng(seed),
    )
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return value, lo, hi


def _p_value(s: Sample, seed: int = SEED) -> float:
    from scipy import stats

    if s.paired:
        return paired_difference(s.a, s.b).p_value
    if np.all(s.a == s.a[0]) and np.all(s.b == s.b[0]) and s.a[0] == s.b[0]:
        return 1.0
    res = stats.permutation_test(
        (s.a, s.b),
        lambda x, y, axis=-1: np.mean(x, axis=axis) - np.mean(y, axis=axis),
        permutation_type="independent", vectorized=True, n_resamples=N_RESAMPLES,
        random_state=np.random.default_rng(seed),
    )
    return float(res.pvalue)


def decide(finding: Finding, lo: float, hi: float) -> tuple[str, str]:
    """The verdict for the statistic's interval ``[lo, hi]`` (module docstring) and the reason."""
    r0, r1, open_low = finding.region()
    if math.isnan(lo) or math.isnan(hi):
        return INCONCLUSIVE, "the statistic is undefined (division by zero)"
    if finding.relation == "adds little" and hi < 0:
        return CONTRADICTED, f"significantly negative: the whole interval is below 0 (hi = {hi:.2f})"
    below = hi < r0 or (open_low and hi <= r0)
    if below or lo > r1:
        return CONTRADICTED, "the interval lies outside the region"
    inside_low = lo > r0 if open_low else lo >= r0
    if inside_low and hi <= r1:
        return HOLDS, "the interval lies inside the region"
    edge = r0 if not inside_low else r1
    return INCONCLUSIVE, f"the interval straddles {edge:g}"


@dataclass(frozen=True)
class Estimates:
    """What a verdict is drawn from: our a and b (means in the reported unit, with intervals), the
    statistic with its interval (in the reported unit for a difference) and the p-value of
    mean(a) = mean(b)."""

    a: Interval
    b: Interval
    stat: Interval
    p_value: float


def estimate(finding: Finding, s: Sample) -> Estimates:
    """The :class:`Estimates` of ``finding``'s statistic on ``s`` (module docstring): each mean with
    :func:`~inferqa_utils.measure.uncertainty.mean_ci`, the statistic with
    :func:`statistic_interval`, the p-value with the paired sign-flip or two-sample permutation test."""
    a_ci, b_ci = mean_ci(s.a).scaled(s.scale), mean_ci(s.b).scaled(s.scale)
    stat_scale = s.scale if finding.statistic == "diff" else 1.0
    value, lo, hi = (x * stat_scale for x in statistic_interval(s, finding.statistic))
    return Estimates(a_ci, b_ci, Interval(value, lo, hi, len(s.a)), _p_value(s))


def undecided(s: Sample, explain: bool = True) -> str | None:
    """Why ``s`` decides no finding whatever the interval, or ``None`` when it can decide one: every
    value on both sides the same constant, fewer than :data:`MIN_UNITS` units, or — paired — no
    unit differs and fewer than :data:`MIN_UNITS` score above 0 on either side. ``explain``: the
    reason with the sample's note and, for the last case, what it means; without, the bare reason
    (for a table whose own columns name the comparison).

    Example::

        >>> undecided(Sample(np.ones(4), np.zeros(4), paired=True, note="4 questions"), explain=False)
        'too few questions: 4 < 10'
    """
    note = f" ({s.note})" if explain else ""
    flat = np.concatenate([s.a, s.b])
    if np.all(flat == flat[0]):
        return (
            f"no variation: every one of the {len(s.a)} {s.unit} scores {flat[0] * s.scale:g} on both "
            f"sides{note}"
        )
    if min(len(s.a), len(s.b)) < MIN_UNITS:
        return f"too few {s.unit}: {min(len(s.a), len(s.b))} < {MIN_UNITS}{note}"
    if s.paired:
        informative = int(np.sum((s.a != 0) | (s.b != 0)))
        if np.all(s.a - s.b == (s.a - s.b)[0]) and informative < MIN_UNITS:
            unit = s.unit[:-1] if s.unit.endswith("s") else s.unit
            meaning = ": too few could show a difference" if explain else ""
            return (
                f"no {unit} differs and only {informative} of {len(s.a)} score above 0 on either side "
                f"(< {MIN_UNITS}){meaning}{note}"
            )
    return None


def judge(finding: Finding, s: Sample, forced: str | None = None, estimates: Estimates | None = None,
          explain: bool = True) -> Scored:
    """The verdict of ``finding`` on the sample ``s`` (module docstring): the means with intervals,
    the statistic's seeded bootstrap interval, the p-value, and *holds* / *contradicted* /
    *inconclusive* with the reason; ``forced``: the reason the verdict is inconclusive whatever the
    interval (e.g. a comparison decided by construction). ``estimates``: the numbers when the caller
    computed them by a faster exact-shortcut routine (the paper runs,
    :mod:`inferqa_utils.paper_runs.stats`), else :func:`estimate`. ``explain``: reasons with the
    sample's note (:func:`undecided`)."""
    est = estimates if estimates is not None else estimate(finding, s)
    base = dict(
        a=est.a, b=est.b, stat=est.stat, p_value=est.p_value, n=len(s.a), informative=informative_units(s)
    )
    if forced is not None:
        return Scored(finding, INCONCLUSIVE, forced, **base)
    reason = undecided(s, explain)
    if reason is not None:
        return Scored(finding, INCONCLUSIVE, reason, **base)
    verdict, why = decide(finding, est.stat.lo, est.stat.hi)
    return Scored(finding, verdict, f"{why}; {s.note}" if explain else why, **base)


def informative_units(s: Sample) -> int:
    """The units a verdict rests on: for a paired sample the units whose *a* and *b* differ (only they
    move a paired test: the discordant questions of two 0/1 outcomes), otherwise every unit of
    both sides."""
    if s.paired:
        return int(np.sum(np.asarray(s.a, dtype=float) != np.asarray(s.b, dtype=float)))
    return len(s.a) + len(s.b)
