"""Uncertainty of per-question metrics: bootstrap intervals, paired tests, Holm correction.

Every headline number of the compendium is a mean over questions (EM, judged accuracy, Hit@k,
nDCG@10 per question), so its uncertainty comes from the sample of questions:

* :func:`mean_ci` — the mean and a seeded percentile-bootstrap 95 % interval over questions
  (``scipy.stats.bootstrap``; Efron & Tibshirani 1993, ch. 13). Percentile rather than BCa because
  EM is 0/1 and often all-equal on small splits, where BCa is undefined.
* :func:`paired_difference` — system A vs system B *on the same questions*: the mean per-question
  difference ``d̄ = mean(a_i − b_i)``, a paired-bootstrap interval of ``d̄`` and the two-sided p-value
  of a paired randomization (sign-flip) test, ``scipy.stats.permutation_test`` with
  ``permutation_type="samples"`` over the questions where A and B differ (a tied question's flip
  changes nothing) — exact (all 2ᵏ flips of the k discordant questions) while 2ᵏ ≤ ``n_resamples``,
  Monte Carlo beyond. This is the test ranx ``compare`` calls "Fisher's randomization test" (Smucker et al.,
  CIKM 2007), applied to any per-question outcome.
* :func:`holm` — Holm's step-down adjustment of the p-values of one table (Holm 1979):
  sort ascending, ``p̃_(i) = max_{j≤i} min(1, (m − j + 1)·p_(j))``.

All resampling is seeded from :data:`inferqa_utils.config.SEED`, so a table's intervals are the
same on every run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .config import SEED

#: bootstrap resamples and randomization flips (exact up to 13 discordant questions)
N_RESAMPLES = 10_000


@dataclass(frozen=True)
class Interval:
    """A mean over ``n`` questions with a ``confidence`` interval [lo, hi]."""

    value: float
    lo: float
    hi: float
    n: int
    confidence: float = 0.95

    def scaled(self, factor: float) -> Interval:
        return Interval(self.value * factor, self.lo * factor, self.hi * factor, self.n, self.confidence)

    def __str__(self) -> str:
        return f"{self.value:.2f} [{self.lo:.2f}, {self.hi:.2f}]"


@dataclass(frozen=True)
class Paired:
    """``a − b`` over the same ``n`` questions: mean difference, its interval, two-sided p-value."""

    diff: Interval
    p_value: float

    @property
    def n(self) -> int:
        return self.diff.n


def _array(values: Sequence[float] | np.ndarray, what: str) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"{what}: expected one value per question, got shape {x.shape}")
    if np.isnan(x).any():
        raise ValueError(f"{what}: {int(np.isnan(x).sum())} per-question values are NaN")
    return x


def mean_ci(values: Sequence[float] | np.ndarray, confidence: float = 0.95, n_resamples: int = N_RESAMPLES,
            seed: int = SEED) -> Interval:
    """Mean of per-question ``values`` with a seeded percentile-bootstrap interval.

    One question: the interval is the value itself (nothing to resample). No question: an error.
    """
    from scipy import stats

    x = _array(values, "mean_ci")
    if len(x) == 0:
        raise ValueError("mean_ci: no questions")
    m = float(x.mean())
    if len(x) == 1 or np.all(x == x[0]):
        return Interval(m, m, m, len(x), confidence)
    res = stats.bootstrap((x,), np.mean, confidence_level=confidence, n_resamples=n_resamples, method="percentile",
                          random_state=np.random.default_rng(seed))
    return Interval(m, float(res.confidence_interval.low), float(res.confidence_interval.high), len(x), confidence)


def paired_difference(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, confidence: float = 0.95,
                      n_resamples: int = N_RESAMPLES, seed: int = SEED) -> Paired:
    """``a − b`` on the same questions (same order): mean difference with a paired-bootstrap
    interval, and the two-sided p-value of the paired randomization (sign-flip) test."""
    from scipy import stats

    x, y = _array(a, "paired_difference a"), _array(b, "paired_difference b")
    if len(x) != len(y):
        raise ValueError(f"paired_difference: {len(x)} vs {len(y)} questions; a paired test needs the same questions")
    d = x - y
    ci = mean_ci(d, confidence, n_resamples, seed)
    nz = d != 0
    if nz.sum() < 2:  # no or one discordant question: every flip is as extreme as the data
        return Paired(ci, 1.0)
    # a sign flip of a tied question changes nothing: flip the discordant ones only (same p-value)
    res = stats.permutation_test((x[nz], y[nz]), lambda u, v: np.mean(u - v), permutation_type="samples",
                                 alternative="two-sided", n_resamples=n_resamples,
                                 random_state=np.random.default_rng(seed))
    return Paired(ci, float(min(1.0, res.pvalue)))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order."""
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted.tolist()
