"""Figure helpers: every figure of the compendium is written to ``figures/<name>.png``.

Means over questions are drawn with their seeded 95 % percentile-bootstrap interval over questions
(:func:`inferqa_utils.uncertainty.mean_ci`, read from a table's ``<m>_lo`` / ``<m>_hi`` columns) as
error bars: :func:`error_bars` turns the intervals into matplotlib's ``yerr`` / ``xerr``, and
:data:`INTERVAL_NOTE` is the sentence each such figure carries.

:func:`findings_forest` draws the forest plot of the results page (``docs/results.md``): each
finding's statistic with its 95 % interval per profile, against the region its rule states.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
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


# ----------------------------------------------------------------------------- forest plot of the findings

#: the statistics of the findings (:mod:`inferqa_utils.findings`), in panel order, with their axis labels
STATISTICS = {"diff": "a − b: difference of the means (points on a 0–100 scale)",
              "ratio": "a / b: ratio of the means",
              "relative": "|a − b| / b: relative difference of the means"}
#: colour-blind safe colours (Okabe–Ito) of the profiles, in the order they are given
PROFILE_COLOURS = ("#0072B2", "#D55E00", "#CC79A7", "#E69F00", "#56B4E9")
#: marker and whether it is filled, per verdict
VERDICT_MARKERS = {"holds": ("o", True), "contradicted": ("X", True), "inconclusive": ("o", False)}
REGION_COLOUR = "#009E73"


@dataclass(frozen=True)
class ForestRow:
    """One finding of the forest plot: its id, its statistic (a key of :data:`STATISTICS`), the
    region its rule states, ``(low, high)`` with ±inf for an open side (``None``: not known), and
    further values the rule tests (``marks``: 0 for "not significantly < 0"), drawn dotted."""

    finding: str
    kind: str
    region: tuple[float, float] | None
    marks: tuple[float, ...] = ()


@dataclass(frozen=True)
class ForestPoint:
    """One profile's estimate of one finding: the statistic, its 95 % interval and the verdict."""

    finding: str
    profile: str
    value: float
    lo: float
    hi: float
    verdict: str

    @property
    def finite(self) -> bool:
        return all(math.isfinite(x) for x in (self.value, self.lo, self.hi))


def _panel_limits(rows: Sequence[ForestRow], points: Sequence[ForestPoint]) -> tuple[float, float]:
    """x limits covering every interval and every finite boundary of the panel's rows, padded."""
    xs = [x for p in points for x in (p.lo, p.hi)]
    xs += [b for r in rows for b in (*(r.region or ()), *r.marks) if math.isfinite(b)]
    lo, hi = (min(xs), max(xs)) if xs else (-1.0, 1.0)
    pad = 0.08 * (hi - lo) if hi > lo else 1.0
    return lo - pad, hi + pad


def _draw_row_region(ax, y: float, row: ForestRow, limits: tuple[float, float]) -> None:
    """The row's region as a band, its finite boundaries as dashed lines, its marks dotted."""
    if row.region is not None:
        low, high = max(row.region[0], limits[0]), min(row.region[1], limits[1])
        if high > low:
            ax.fill_betweenx([y - 0.42, y + 0.42], low, high, color=REGION_COLOUR, alpha=0.16, lw=0)
    lines = [(b, "--") for b in row.region or () if math.isfinite(b)] + [(m, ":") for m in row.marks]
    for x, style in lines:
        if limits[0] <= x <= limits[1]:
            ax.plot([x, x], [y - 0.42, y + 0.42], ls=style, lw=1.0 if style == "--" else 1.3, color="#333333")


def _draw_point(ax, p: ForestPoint, y: float, colour: str) -> None:
    marker, filled = VERDICT_MARKERS.get(p.verdict, ("o", False))
    ax.errorbar([p.value], [y], xerr=error_bars([p.value], [p.lo], [p.hi]), fmt=marker, color=colour,
                mfc=colour if filled else "white", mec=colour, ms=6.5 if marker == "X" else 5.5, capsize=2.5,
                lw=1.4, zorder=3)


def _draw_panel(ax, kind: str, rows: Sequence[ForestRow], points: Sequence[ForestPoint],
                profiles: Sequence[str]) -> list[ForestPoint]:
    """One statistic's panel: a row per finding, a point per profile; returns the points drawn."""
    limits = _panel_limits(rows, points)
    n = len(profiles)
    offsets = {prof: (j - (n - 1) / 2) * (0.5 / max(n, 2)) for j, prof in enumerate(profiles)}
    drawn = []
    for i, row in enumerate(rows):
        _draw_row_region(ax, i, row, limits)
        mine = [p for p in points if p.finding == row.finding and p.profile in offsets]
        for p in mine:
            _draw_point(ax, p, i + offsets[p.profile], PROFILE_COLOURS[profiles.index(p.profile) % len(PROFILE_COLOURS)])
        drawn += mine
        if not mine:
            ax.text(limits[0] + 0.01 * (limits[1] - limits[0]), i, "no estimate", fontsize=7, color="#777777",
                    va="center")
        if i:
            ax.axhline(i - 0.5, color="#e0e0e0", lw=0.6, zorder=0)
    ax.set_xlim(*limits)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_yticks(range(len(rows)), [r.finding for r in rows], fontsize=8)
    ax.set_xlabel(STATISTICS.get(kind, kind), fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    ax.grid(axis="x", color="#eeeeee", lw=0.6)
    ax.set_axisbelow(True)
    return drawn


def _forest_legend(fig, profiles: Sequence[str], marks: bool) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Line2D([], [], marker="o", ls="", color=PROFILE_COLOURS[j % len(PROFILE_COLOURS)], label=prof)
               for j, prof in enumerate(profiles)]
    handles += [Line2D([], [], marker=m, ls="", color="#333333", mfc="#333333" if filled else "white", label=verdict)
                for verdict, (m, filled) in VERDICT_MARKERS.items()]
    handles += [Patch(color=REGION_COLOUR, alpha=0.3, label="region the rule states"),
                Line2D([], [], ls="--", color="#333333", label="its boundary")]
    if marks:
        handles.append(Line2D([], [], ls=":", lw=1.3, color="#333333", label="0: must not lie wholly below"))
    fig.legend(handles=handles, loc="upper center", ncol=4, fontsize=8, frameon=False)


def findings_forest(rows: Sequence[ForestRow], points: Sequence[ForestPoint], profiles: Sequence[str],
                    out: Path, svg: bool = True) -> list[ForestPoint]:
    """Write the forest plot of the findings to ``out`` (``.png``, and ``.svg`` beside it when
    ``svg``): one panel per statistic (:data:`STATISTICS`: values of different statistics share no
    axis), a row per finding with the region its rule states shaded and its boundaries dashed, and
    per profile (one colour each) the statistic with its 95 % interval, the marker saying the
    verdict; a row's ``marks`` are dotted. Points without a finite value and interval are left out (a row with none says "no
    estimate"). Returns the points drawn, in panel and row order."""
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    kinds = [k for k in (*STATISTICS, *sorted({r.kind for r in rows} - set(STATISTICS))) if any(r.kind == k for r in rows)]
    usable = [p for p in points if p.finite]
    if not kinds:
        raise ValueError("findings_forest: no findings to draw")
    heights = [sum(r.kind == k for r in rows) + 1.3 for k in kinds]
    fig = Figure(figsize=(8.5, 0.32 * sum(heights) + 0.9))
    grid = fig.add_gridspec(len(kinds), 1, height_ratios=heights, hspace=0.2 + 0.1 * len(kinds))
    drawn: list[ForestPoint] = []
    for n, kind in enumerate(kinds):
        panel_rows = [r for r in rows if r.kind == kind]
        ids = {r.finding for r in panel_rows}
        drawn += _draw_panel(fig.add_subplot(grid[n]), kind, panel_rows, [p for p in usable if p.finding in ids],
                             profiles)
    _forest_legend(fig, profiles, any(r.marks for r in rows))
    legend_rows = math.ceil((len(profiles) + len(VERDICT_MARKERS) + 2 + any(r.marks for r in rows)) / 4)
    fig.subplots_adjust(top=1 - (0.25 + 0.2 * legend_rows) / fig.get_figheight())
    out = Path(out).with_suffix(".png")
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=130, bbox_inches="tight", metadata={"Software": None})
    if svg:
        with rc_context({"svg.hashsalt": "inferqa-findings-forest"}):
            fig.savefig(out.with_suffix(".svg"), bbox_inches="tight", metadata={"Date": None})
    return drawn
