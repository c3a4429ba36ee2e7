"""Figure helpers: every figure of the compendium is written to ``figures/<name>.png``.

Means over questions are drawn with their seeded 95 % percentile-bootstrap interval over questions
(:func:`inferqa_utils.uncertainty.mean_ci`, read from a table's ``<m>_lo`` / ``<m>_hi`` columns) as
error bars: :func:`error_bars` turns the intervals into matplotlib's ``yerr`` / ``xerr``, and
:data:`INTERVAL_NOTE` is the sentence each such figure carries.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .config import PATHS

#: what the error bars of a figure are (said in the figure itself)
INTERVAL_NOTE = "error bars: 95 % percentile-bootstrap intervals over questions (seeded)"


def error_bars(values: Sequence[float] | np.ndarray, lo: Sequence[float] | np.ndarray,
               hi: Sequence[float] | np.ndarray) -> np.ndarray:
    """matplotlib's asymmetric ``yerr`` / ``xerr`` for intervals ``[lo_i, hi_i]`` around ``values_i``:
    the 2 × n array ``[[v_i − lo_i], [hi_i − v_i]]`` (lengths below and above the point). A length
    is clipped at 0 (a mean rounded in a CSV can sit a hair outside its rounded interval) and is 0
    where the value or the interval is unknown (NaN), so no bar is drawn there."""
    v, lo_, hi_ = (np.asarray(a, dtype=float) for a in (values, lo, hi))
    if not (v.shape == lo_.shape == hi_.shape) or v.ndim != 1:
        raise ValueError(f"error_bars: values, lo and hi must be 1-D of one length, got {v.shape}, {lo_.shape}, "
                         f"{hi_.shape}")
    err = np.vstack([v - lo_, hi_ - v])
    return np.clip(np.nan_to_num(err, nan=0.0), 0.0, None)


def save_figure(fig, name: str, folder: Path | None = None) -> Path:
    """Write ``fig`` as ``<folder or figures/>/<name>.png`` (stable names; 120 dpi) and return the path."""
    folder = folder or PATHS.figures
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    fig.savefig(path, dpi=120, bbox_inches="tight")
    return path
