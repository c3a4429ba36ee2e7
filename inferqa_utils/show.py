"""Readable tables for notebooks and widgets: long text left-aligned and wrapped, never cut.

JupyterLab right-aligns table cells and pandas cuts cells at ``display.max_colwidth``, so a
passage of hints reads as "…" at the right edge. :func:`text_table` renders a frame as HTML with
its text columns left-aligned, wrapped and complete (HTML-escaped). pandas is imported by the
caller's frame, not here.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from .datamodel import Question

#: the class every table of :func:`text_table` carries (the browser test looks for it)
TABLE_CLASS = "inferqa-table"


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value) or type(value).__name__ in ("NAType", "NaTType"):
        return ""  # None, NaN, pandas' NA / NaT
    if isinstance(value, float):
        return f"{value:.3g}"
    return html.escape(str(value))


def text_table(df: pd.DataFrame, wrap: Sequence[str] = ("text",), max_width: str = "60em",
               index: bool = False) -> str:
    """``df`` as an HTML table: columns in ``wrap`` left-aligned, wrapped at word boundaries and
    at most ``max_width`` wide; other columns left-aligned on one line. Every value in full."""
    cols = list(df.columns)
    head = "".join(f"<th style='text-align:left'>{html.escape(str(c))}</th>" for c in cols)
    if index:
        head = f"<th style='text-align:left'>{html.escape(str(df.index.name or ''))}</th>" + head
    rows = []
    for idx, rec in zip(df.index, df.itertuples(index=False), strict=True):
        cells = []
        if index:
            cells.append(f"<td style='text-align:left'>{_cell(idx)}</td>")
        for c, v in zip(cols, rec, strict=True):
            style = (f"text-align:left;white-space:normal;max-width:{max_width};min-width:20em" if c in wrap
                     else "text-align:left;white-space:nowrap")
            cells.append(f"<td style='{style}'>{_cell(v)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (f"<table class='{TABLE_CLASS}' style='border-collapse:collapse'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def show_table(df: pd.DataFrame, wrap: Sequence[str] = ("text",), **kw: Any) -> None:
    """Display :func:`text_table` of ``df`` in the current output (a notebook cell or widget Output)."""
    from IPython.display import HTML, display

    display(HTML(text_table(df, wrap=wrap, **kw)))


def question_label(q: Question, width: int = 160) -> str:
    """A dropdown label: ``qid: question`` cut at a word boundary to ``width`` characters."""
    text = f"{q.qid}: {q.question}"
    if len(text) <= width:
        return text
    return text[: width - 1].rsplit(" ", 1)[0] + "…"


def _plain(value: Any) -> str:
    """A cell as plain text: empty for missing values, floats to 3 significant digits."""
    if value is None or (isinstance(value, float) and value != value) or type(value).__name__ in ("NAType", "NaTType"):
        return ""
    if isinstance(value, float):
        return f"{value:.3g}"
    return " ".join(str(value).split())


def plain_table(df: pd.DataFrame, wrap: Sequence[str] = ("text",), width: int = 100, indent: str = "  ") -> str:
    """``df`` as plain text for a terminal, every value in full: the columns not in ``wrap`` as
    aligned columns, one row a line; under each row its ``wrap`` columns as ``name: value``,
    wrapped at word boundaries to ``width`` characters."""
    import textwrap

    flat = [c for c in df.columns if c not in wrap]
    long = [c for c in df.columns if c in wrap]
    records = df.to_dict("records")
    cells = [[_plain(r[c]) for c in flat] for r in records]
    widths = [max([len(str(c))] + [len(row[i]) for row in cells]) for i, c in enumerate(flat)]

    def line(values: Sequence[str]) -> str:
        return (indent + "  ".join(v.ljust(w) for v, w in zip(values, widths, strict=True))).rstrip()

    out = [line([str(c) for c in flat])] if flat else []
    for rec, row in zip(records, cells, strict=True):
        if flat:
            out.append(line(row))
        for c in long:
            text = _plain(rec[c])
            if text:
                out.append(textwrap.fill(f"{c}: {text}", width=max(width, 40), initial_indent=indent + "    ",
                                         subsequent_indent=indent + "      ", break_on_hyphens=False))
    return "\n".join(out)
