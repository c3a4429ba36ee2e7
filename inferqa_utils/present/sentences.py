"""Building blocks of the generated "what we found" sentences that close the notebooks' sections.

A sentence is computed from a result table, never written by hand: these helpers turn numbers
with their seeded 95 % bootstrap intervals (:mod:`inferqa_utils.measure.uncertainty`) into words. The
stage modules compose them into the sentence of one section (e.g.
:func:`inferqa_utils.retrieval.pooled.fair_sentence`); :func:`inferqa_utils.present.show.show_found`
displays it. pandas frames come from the caller.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

#: significance level of the Holm-adjusted paired tests the sentences report
ALPHA = 0.05


def _num(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def ci(value: Any, lo: Any = None, hi: Any = None, digits: int = 1) -> str:
    """``"31.2 [18.8, 43.8]"`` (the interval left out when unknown, ``"—"`` for no value)."""
    v, a, b = _num(value), _num(lo), _num(hi)
    if math.isnan(v):
        return "—"
    if math.isnan(a) or math.isnan(b):
        return f"{v:.{digits}f}"
    return f"{v:.{digits}f} [{a:.{digits}f}, {b:.{digits}f}]"


def ci_of(table: pd.DataFrame, row: Any, column: str, stem: str | None = None, digits: int = 1) -> str:
    """:func:`ci` of ``table.loc[row, column]`` with its ``<stem>_lo`` / ``<stem>_hi`` columns
    (``stem`` defaults to ``column``)."""
    stem = stem or column
    lo = table.at[row, f"{stem}_lo"] if f"{stem}_lo" in table.columns else None
    hi = table.at[row, f"{stem}_hi"] if f"{stem}_hi" in table.columns else None
    return ci(table.at[row, column], lo, hi, digits)


def share(k: int, n: int, what: str = "questions") -> str:
    """``"8 of 48 questions (16.7 %)"``."""
    return f"{k} of {n} {what}" + (f" ({100 * k / n:.1f} %)" if n else "")


def p_text(p: Any, alpha: float = ALPHA) -> str:
    """``"Holm-adjusted p = 0.025, significant at 0.05"`` (or ``"not significant"``)."""
    v = _num(p)
    if math.isnan(v):
        return "no test"
    verdict = "significant" if v < alpha else "not significant"
    return f"Holm-adjusted p = {v:.3g}, {verdict} at {alpha:g}"


def best_vs_baseline(table: pd.DataFrame, metric: str, baseline: str, what: str = "run",
                     rows: Sequence[Any] | None = None, test: str = "paired randomization test") -> str:
    """The sentence of a table of systems on the same questions with intervals and tests against
    ``baseline`` (:func:`inferqa_utils.measure.uncertainty.compare_runs`: index = system; columns ``m``,
    ``m_lo``, ``m_hi``, ``p_holm m``, ``sig m``): which system is best on ``metric``, by how much
    it differs from the baseline, whether the Holm-adjusted paired test calls it significant, and
    how many systems differ significantly from the baseline."""
    t = table if rows is None else table.loc[[r for r in rows if r in table.index]]
    if metric not in t.columns or t[metric].isna().all():
        return f"No {what} has a value for {metric}."
    if baseline not in t.index:
        best = t[metric].astype(float).idxmax()
        return f"On {metric} the best {what} is **{best}** with {ci_of(t, best, metric)}."
    others = t.drop(index=baseline)
    base = ci_of(t, baseline, metric)
    if not len(others):
        return f"Only {baseline} was run: {metric} {base}."
    vals = t[metric].astype(float)
    best = vals.idxmax()
    sig_col, p_col = f"sig {metric}", f"p_holm {metric}"
    n_sig = int((others[sig_col] == "*").sum()) if sig_col in others else 0
    n = len(others)
    tail = (
        f" {n_sig} of {n} {what if n == 1 else what + 's'} {'differs' if n == 1 else 'differ'} significantly "
        f"from {baseline} on {metric} ({test}, Holm-adjusted over the table)."
    )
    if best == baseline or vals[best] == vals[baseline]:
        close = others[metric].astype(float).idxmax()
        return (
            f"No {what} beats **{baseline}** on {metric} ({base}); the closest is {close} with "
            f"{ci_of(t, close, metric)} ({p_text(t.at[close, p_col]) if p_col in t else 'no test'})." + tail
        )
    tied = [str(r) for r in vals.index if vals[r] == vals[best] and r != best]
    ties = f" (tied with {', '.join(tied)})" if tied else ""
    diff = vals[best] - vals[baseline]
    return (f"On {metric} the best {what} is **{best}**{ties} with {ci_of(t, best, metric)} against "
            f"{baseline}'s {base}: {diff:+.1f} points ({test}, "
            f"{p_text(t.at[best, p_col]) if p_col in t else 'no test'})." + tail)
