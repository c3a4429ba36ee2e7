"""Figure helpers: every figure of the compendium is written to ``figures/<name>.png``
(:func:`save_figure`; the notebooks' figures through their registry constants,
:meth:`inferqa_utils.stages.Figure.save`, which name the files).

Means over questions are drawn with their seeded 95 % percentile-bootstrap interval over questions
(:func:`inferqa_utils.measure.uncertainty.mean_ci`, read from a table's ``<m>_lo`` / ``<m>_hi`` columns) as
error bars: :func:`error_bars` turns the intervals into matplotlib's ``yerr`` / ``xerr``, and
:data:`INTERVAL_NOTE` is the sentence each such figure carries. Generic plots of such tables:
:func:`interval_bars` (values with intervals as horizontal bars, one panel per metric; a wide
table becomes their long input with :func:`long_intervals`), :func:`interval_lines` (a value
over an x such as the number of added passages, one line per series) and :func:`stacked_shares`
(counts per row as stacked shares in %). matplotlib is imported when a figure is drawn.

:func:`difference_forest` draws paired differences against 0 (notebook 08: your method minus each
baseline, significant ones filled). :func:`findings_forest` draws the forest plot of the results
page (``docs/results.md``): each finding's statistic with its 95 % interval per profile, against
the region its rule states.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.config import PATHS

if TYPE_CHECKING:
    import pandas as pd

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
        raise ValueError(
            f"error_bars: values, lo and hi must be 1-D of one length, got {v.shape}, {lo_.shape}, "
            f"{hi_.shape}"
        )
    err = np.vstack([v - lo_, hi_ - v])
    return np.clip(np.nan_to_num(err, nan=0.0), 0.0, None)


def save_figure(fig, name: str, folder: Path | None = None) -> Path:
    """Write ``fig`` as ``<folder or figures/>/<name>.png`` (stable names; 120 dpi), atomically, and
    return the path."""
    return write_figure(fig, (folder or PATHS.figures) / f"{name}.png", dpi=120, bbox_inches="tight")


def write_figure(fig, path: Path, **savefig: Any) -> Path:
    """``fig.savefig`` into ``path`` atomically (rendered in memory, then :func:`write_bytes_atomic`):
    a reader — or a run that hard-linked the file from an earlier run — never sees it half-written
    or rewritten in place. The format is the suffix's."""
    import io

    from ..core.atomic import write_bytes_atomic

    buf = io.BytesIO()
    fig.savefig(buf, format=path.suffix.lstrip("."), **savefig)
    return write_bytes_atomic(path, buf.getvalue())


# ----------------------------------------------------------------------------- forest plot of the findings

#: the statistics of the findings (:mod:`inferqa_utils.verdicts.findings`), in panel order, with their axis
# labels
STATISTICS = {"diff": "a − b: difference of the means (points on a 0–100 scale)",
              "ratio": "a / b: ratio of the means",
              "relative": "|a − b| / b: relative difference of the means"}
#: colour-blind safe colours (Okabe–Ito) of the profiles, in the order they are given
PROFILE_COLOURS = ("#0072B2", "#D55E00", "#CC79A7", "#E69F00", "#56B4E9")
#: marker and whether it is filled, per verdict
VERDICT_MARKERS = {"holds": ("o", True), "contradicted": ("X", True), "inconclusive": ("o", False),
                   "by construction": ("s", False)}
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
            _draw_point(
                ax,
                p,
                i + offsets[p.profile],
                PROFILE_COLOURS[profiles.index(p.profile) % len(PROFILE_COLOURS)],
            )
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
    handles += [
        Line2D([], [], marker=m, ls="", color="#333333", mfc="#333333" if filled else "white", label=verdict)
        for verdict, (m, filled) in VERDICT_MARKERS.items()
    ]
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
    verdict; a row's ``marks`` are dotted. Points without a finite value and interval are left out (a row with
    none says "no
    estimate"). Returns the points drawn, in panel and row order."""
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    kinds = [
        k
        for k in (*STATISTICS, *sorted({r.kind for r in rows} - set(STATISTICS)))
        if any(r.kind == k for r in rows)
    ]
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
        drawn += _draw_panel(
            fig.add_subplot(grid[n]), kind, panel_rows, [p for p in usable if p.finding in ids], profiles
        )
    _forest_legend(fig, profiles, any(r.marks for r in rows))
    legend_rows = math.ceil((len(profiles) + len(VERDICT_MARKERS) + 2 + any(r.marks for r in rows)) / 4)
    fig.subplots_adjust(top=1 - (0.25 + 0.2 * legend_rows) / fig.get_figheight())
    out = Path(out).with_suffix(".png")
    write_figure(fig, out, dpi=130, bbox_inches="tight", metadata={"Software": None})
    if svg:
        with rc_context({"svg.hashsalt": "inferqa-findings-forest"}):
            write_figure(fig, out.with_suffix(".svg"), bbox_inches="tight", metadata={"Date": None})
    return drawn
def long_intervals(table: pd.DataFrame, metrics: Sequence[str], label: str = "system",
                   stems: Mapping[str, str] | None = None) -> pd.DataFrame:
    """A wide table with columns ``m``, ``m_lo``, ``m_hi`` per metric (index: the systems) as long
    rows ``(label, metric, value, lo, hi)``, the input of :func:`interval_bars`. ``stems`` maps a
    metric to the stem of its interval columns when they differ (``{"EM@N": "EM"}``)."""
    import pandas as pd

    rows = []
    for m in metrics:
        if m not in table.columns:
            continue
        stem = (stems or {}).get(m, m)
        for idx, v in table[m].items():
            rows.append(
                {
                    label: idx,
                    "metric": m,
                    "value": float(v),
                    "lo": float(table.at[idx, f"{stem}_lo"])
                    if f"{stem}_lo" in table.columns
                    else float("nan"),
                    "hi": float(table.at[idx, f"{stem}_hi"])
                    if f"{stem}_hi" in table.columns
                    else float("nan"),
                }
            )
    return pd.DataFrame(rows, columns=[label, "metric", "value", "lo", "hi"])


def _labelled_panels(long: pd.DataFrame, label: str, panel: str, width: tuple[float, float],
                     height: tuple[float, float]) -> tuple[list[Any], list[Any], Any, Any, np.ndarray]:
    """One row of panels sharing the y axis, one per distinct ``panel`` value (``[None]`` when the
    column is absent), with a row per distinct ``label`` (first order); the figure is
    ``width[0] × panels + width[1]`` wide and ``height[0] × labels + height[1]`` high. Returns
    ``(panels, labels, fig, axes, y)``, ``y`` the row positions."""
    import matplotlib.pyplot as plt

    panels = list(dict.fromkeys(long[panel])) if panel in long.columns else [None]
    labels = list(dict.fromkeys(long[label]))
    fig, axes = plt.subplots(1, len(panels), squeeze=False, sharey=True,
                             figsize=(width[0] * len(panels) + width[1], height[0] * len(labels) + height[1]))
    return panels, labels, fig, axes, np.arange(len(labels))


def interval_bars(long: pd.DataFrame, label: str = "system", panel: str = "metric", title: str = "",
                  xlabel: str = "mean over questions (%)", highlight: Sequence[Any] = (),
                  reference: Mapping[str, float] | None = None):
    """Horizontal bars of ``value`` per ``label`` with their intervals ``[lo, hi]`` as error bars
    (:func:`error_bars`), one panel per distinct ``panel`` value, labels in their first order.
    Bars named in ``highlight`` are drawn in the accent colour; ``reference`` draws a dotted
    vertical line per panel (e.g. the baseline's value). The figure carries :data:`INTERVAL_NOTE`."""
    panels, labels, fig, axes, y = _labelled_panels(long, label, panel, (4.6, 1.2), (0.42, 1.6))
    for ax, name in zip(axes[0], panels, strict=True):
        sub = long if name is None else long[long[panel] == name]
        sub = sub.set_index(label).reindex(labels)
        v = sub["value"].to_numpy(float)
        colours = ["#d9534f" if lab in highlight else "#4a7ab5" for lab in labels]
        ax.barh(y, np.nan_to_num(v), color=colours, height=0.6,
                xerr=error_bars(v, sub["lo"].to_numpy(float), sub["hi"].to_numpy(float)),
                error_kw={"elinewidth": 0.8, "capsize": 2})
        for yi, vi in zip(y, v, strict=True):
            if vi == vi:
                ax.text(0.5, yi, f"{vi:.1f}", va="center", ha="left", fontsize=7, color="white")
        if reference and name in reference:
            ax.axvline(reference[name], color="#555555", ls=":", lw=1)
        ax.set_yticks(y)
        ax.set_yticklabels([str(lab) for lab in labels])
        ax.set_xlim(0, max(100.0, float(np.nanmax(sub["hi"].to_numpy(float))) if len(sub) else 100.0))
        ax.set_title(str(name) if name is not None else "", fontsize=10)
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].invert_yaxis()  # the axes share y: inverting one inverts all (first label on top)
    fig.suptitle(f"{title}\n{INTERVAL_NOTE}" if title else INTERVAL_NOTE, fontsize=10)
    fig.tight_layout()
    return fig


#: what the error bars of a paired-difference figure are (said in the figure itself)
DIFFERENCE_NOTE = ("error bars: paired 95 % bootstrap intervals over questions (seeded); "
                   "filled: Holm-adjusted paired test p < 0.05")


def difference_forest(long: pd.DataFrame, label: str = "system", panel: str = "metric", title: str = "",
                      xlabel: str = "difference (points of %)"):
    """Paired differences as a forest plot: per ``label`` (one row each, in first order) a point at
    ``value`` with its interval ``[lo, hi]``, one panel per distinct ``panel`` value, a line at 0
    (no difference); a point is filled when the row's ``sig`` is ``*`` (significant after Holm),
    hollow otherwise. The figure carries :data:`DIFFERENCE_NOTE`."""
    panels, labels, fig, axes, y = _labelled_panels(long, label, panel, (4.2, 1.6), (0.36, 1.7))
    for ax, name in zip(axes[0], panels, strict=True):
        sub = (long if name is None else long[long[panel] == name]).set_index(label).reindex(labels)
        v = sub["value"].to_numpy(float)
        lo, hi = sub["lo"].to_numpy(float), sub["hi"].to_numpy(float)
        sig = sub["sig"].fillna("").astype(str).to_numpy() if "sig" in sub.columns else np.full(len(v), "")
        ax.axvline(0, color="#555555", lw=0.8)
        ax.errorbar(v, y, xerr=error_bars(v, lo, hi), fmt="none", ecolor="#4a7ab5", elinewidth=1, capsize=2)
        filled = sig == "*"
        ax.scatter(v[filled], y[filled], color="#d9534f", zorder=3, s=22)
        ax.scatter(v[~filled], y[~filled], facecolors="white", edgecolors="#4a7ab5", zorder=3, s=22)
        finite = np.concatenate([x[np.isfinite(x)] for x in (v, lo, hi)])
        reach = max(5.0, float(np.abs(finite).max()) * 1.1) if len(finite) else 5.0
        ax.set_xlim(-reach, reach)
        ax.set_yticks(y)
        ax.set_yticklabels([str(lab) for lab in labels])
        ax.set_title(str(name) if name is not None else "", fontsize=10)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].invert_yaxis()
    fig.suptitle(f"{title}\n{DIFFERENCE_NOTE}" if title else DIFFERENCE_NOTE, fontsize=9)
    fig.tight_layout()
    return fig


def interval_lines(long: pd.DataFrame, x: str, series: str, title: str = "", xlabel: str = "",
                   ylabel: str = "% of questions", reference: Mapping[str, float] | None = None):
    """``value`` over ``x`` (e.g. extra passages m = 1…4), one line per ``series`` value, each point
    with its interval ``[lo, hi]`` as an error bar. ``reference`` draws labelled dotted horizontal
    lines (e.g. the paper's numbers). The figure carries :data:`INTERVAL_NOTE`."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (name, g) in enumerate(long.groupby(series, sort=False)):
        g = g.sort_values(x)
        c = colours[i % len(colours)]
        ax.errorbar(g[x].to_numpy(float) + 0.06 * (i - 0.5), g["value"], color=c, marker="o", ms=4, capsize=2,
                    elinewidth=0.8, label=str(name),
                    yerr=error_bars(g["value"], g["lo"], g["hi"]))
    for j, (name, value) in enumerate((reference or {}).items()):
        ax.axhline(value, color=colours[(j + 2) % len(colours)], ls=":", lw=1, label=name)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(-3, 103)
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"{title}\n{INTERVAL_NOTE}" if title else INTERVAL_NOTE, fontsize=9)
    fig.tight_layout()
    return fig


def stacked_shares(
    counts: pd.DataFrame,
    title: str = "",
    xlabel: str = "",
    colors: Mapping[str, str] | None = None,
    legend_title: str = "",
):
    """Counts per row (index on the x axis, e.g. rank 1…N) as stacked shares in % of the row's
    total, one colour per column; the row totals are written above the bars."""
    import matplotlib.pyplot as plt

    totals = counts.sum(axis=1)
    shares = counts.div(totals.where(totals > 0, 1), axis=0) * 100
    fig, ax = plt.subplots(figsize=(0.34 * len(counts) + 3.4, 3.8))
    bottom = np.zeros(len(shares))
    x = np.arange(len(shares))
    for c in shares.columns:
        ax.bar(x, shares[c].to_numpy(float), bottom=bottom, width=0.8, label=str(c),
               color=(colors or {}).get(str(c)))
        bottom += shares[c].to_numpy(float)
    for xi, tot in zip(x, totals, strict=True):
        ax.text(xi, 101, str(int(tot)), ha="center", va="bottom", fontsize=6)
    ax.set_xticks(x)
    ax.set_xticklabels([str(i) for i in shares.index], fontsize=8)
    ax.set_ylim(0, 108)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share (%)")
    ax.legend(title=legend_title or None, fontsize=7, bbox_to_anchor=(1.01, 1), loc="upper left")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig
