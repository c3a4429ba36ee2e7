"""The means of the paper runs' comparisons with their intervals, computed fast for outcomes that take
few distinct values (EM and Hit@k are 0/1), so hundreds of comparisons over 1,728 questions take
seconds on a CPU.

:func:`mean_interval` is the percentile bootstrap over questions of
:func:`inferqa_utils.measure.uncertainty.mean_ci` by an exact shortcut: resampling ``n`` questions with
replacement from values ``v_1..v_m`` with counts ``c_1..c_m`` draws the counts ``Multinomial(n, c/n)``
(Efron & Tibshirani 1993, ch. 6), so each resample's mean is ``Σ_j counts_j · v_j / n`` — one
multinomial draw (:func:`inferqa_utils.measure.verdict.resample_counts`) instead of ``n`` indices. The
statistic, its interval and its test are the verdict rule's (:mod:`inferqa_utils.measure.verdict`).

Seeded from :data:`inferqa_utils.core.config.SEED`; :data:`inferqa_utils.measure.uncertainty.N_RESAMPLES`
resamples; 95 % intervals.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.config import SEED
from ..measure.uncertainty import N_RESAMPLES, Interval
from ..measure.verdict import resample_counts


def _resampled_means(x: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    values, counts = np.unique(x, return_counts=True)
    if len(values) == 1:
        return np.full(n_resamples, float(values[0]))
    draws = resample_counts(np.random.default_rng(seed), len(x), counts, n_resamples)
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
