"""The intervals and paired tests of :mod:`inferqa_utils.measure.uncertainty`, computed fast for outcomes that
take few distinct values (EM and Hit@k are 0/1), so hundreds of comparisons over 1,728 questions
take seconds on a CPU.

Same procedures, exact shortcuts:

* :func:`mean_interval` — the percentile bootstrap over questions of :func:`uncertainty.mean_ci`.
  Resampling ``n`` questions with replacement from values ``v_1..v_m`` with counts ``c_1..c_m``
  draws the counts ``Multinomial(n, c/n)`` (Efron & Tibshirani 1993, ch. 6), so each resample's mean
  is ``Σ_j counts_j · v_j / n`` — one multinomial draw (:func:`multinomial`) instead of ``n`` indices.
* :func:`paired` — :func:`uncertainty.paired_difference`: the mean difference ``d̄ = mean(a_i − b_i)``
  with the paired bootstrap (the multinomial over the distinct differences) and the two-sided p of
  the paired randomization (sign-flip) test. When every non-zero difference has the same size
  (0/1 outcomes: ``d_i ∈ {−1, 0, 1}``), flipping the signs of the ``k`` discordant questions gives
  ``Σ s_i d_i = |d|·(2B − k)`` with ``B ~ Binomial(k, ½)``: the exact randomization distribution is
  the exact sign test, ``p = min(1, 2·min(P(B ≤ k₊), P(B ≥ k₊)))`` with ``k₊`` the positive
  differences (the value :func:`uncertainty.paired_difference` reaches by enumeration up to 13
  discordant questions and approximates by Monte Carlo beyond). Other differences fall back to
  :func:`uncertainty.paired_difference`.
* :func:`ratio_interval` — the paired percentile bootstrap of ``mean(a) / mean(b)`` (paper 000's
  "oracle EM is about half of Optimal"), resampling question pairs as above.

Seeded from :data:`inferqa_utils.core.config.SEED`; :data:`inferqa_utils.measure.uncertainty.N_RESAMPLES`
resamples; 95 % intervals.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.config import SEED
from ..measure.uncertainty import N_RESAMPLES, Interval, Paired, paired_difference


def multinomial(rng: np.random.Generator, n: int, counts: np.ndarray, size: int) -> np.ndarray:
    """``size`` draws of ``Multinomial(n, counts / Σ counts)`` as a ``(size, m)`` array, drawn as
    ``m − 1`` vectorised conditional binomials (the j-th category given the earlier ones), which
    is much faster than ``Generator.multinomial`` for the few categories of 0/1 outcomes."""
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


def _resampled_means(x: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    values, counts = np.unique(x, return_counts=True)
    if len(values) == 1:
        return np.full(n_resamples, float(values[0]))
    draws = multinomial(np.random.default_rng(seed), len(x), counts, n_resamples)
    return draws @ values / len(x)


def mean_interval(
    values: Sequence[float] | np.ndarray, confidence: float = 0.95, n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> Interval:
    """Mean of per-question values with its percentile-bootstrap interval (module docstring)."""
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or not len(x):
        raise ValueError(f"mean_interval: expected one value per question, got shape {x.shape}")
    m = float(x.mean())
    if len(x) == 1 or np.all(x == x[0]):
        return Interval(m, m, m, len(x), confidence)
    a = (1 - confidence) / 2
    lo, hi = np.quantile(_resampled_means(x, n_resamples, seed), [a, 1 - a])
    return Interval(m, float(lo), float(hi), len(x), confidence)


def sign_test_p(d: np.ndarray) -> float | None:
    """The exact two-sided sign-flip p-value when every non-zero difference has the same size,
    else None."""
    from scipy.special import bdtr, bdtrc

    nz = d[d != 0]
    k = len(nz)
    if k < 2:
        return 1.0
    if not np.allclose(np.abs(nz), abs(nz[0])):
        return None
    kp = int((nz > 0).sum())
    at_most = float(bdtr(kp, k, 0.5))  # P(B ≤ k₊)
    at_least = 1.0 if kp == 0 else float(bdtrc(kp - 1, k, 0.5))  # P(B ≥ k₊)
    return min(1.0, 2 * min(at_most, at_least))


def paired(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES, seed: int = SEED,
) -> Paired:
    """``a − b`` over the same questions: mean difference, its paired-bootstrap interval and the
    two-sided paired randomization p-value (module docstring)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(
            f"paired: {x.shape} vs {y.shape}; a paired test needs one value per question on both sides"
        )
    d = x - y
    ci = mean_interval(d, confidence, n_resamples, seed)
    p = sign_test_p(d)
    if p is None:
        p = paired_difference(x, y, confidence, n_resamples, seed).p_value
    return Paired(ci, p)


def ratio_interval(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES, seed: int = SEED,
) -> Interval:
    """``mean(a) / mean(b)`` with a paired percentile-bootstrap interval (resamples whose ``b``
    mean is 0 are dropped; NaN when ``mean(b) = 0``)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = len(x)
    if not n or y.mean() == 0:
        return Interval(float("nan"), float("nan"), float("nan"), n, confidence)
    value = float(x.mean() / y.mean())
    pairs, counts = np.unique(np.stack([x, y], axis=1), axis=0, return_counts=True)
    if len(pairs) == 1:
        return Interval(value, value, value, n, confidence)
    draws = multinomial(np.random.default_rng(seed), n, counts, n_resamples)
    num, den = draws @ pairs[:, 0], draws @ pairs[:, 1]
    ok = den > 0
    r = num[ok] / den[ok]
    if not len(r):
        return Interval(value, float("nan"), float("nan"), n, confidence)
    q = (1 - confidence) / 2
    lo, hi = np.quantile(r, [q, 1 - q])
    return Interval(value, float(lo), float(hi), n, confidence)
