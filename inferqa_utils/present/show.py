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

    from ..ir.datamodel import Question

#: the class every table of :func:`text_table` carries (the browser test looks for it)
TABLE_CLASS = "inferqa-table"


def _cell(value: Any) -> str:
    if (
        value is None
        or (isinstance(value, float) and value != value)
        or type(value).__name__ in ("NAType", "NaTType")
    ):
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
    if (
        value is None
        or (isinstance(value, float) and value != value)
        or type(value).__name__ in ("NAType", "NaTType")
    ):
        return ""
    if isinstance(value, float):
        return f"{value:.3g}"
    return " ".join(str(value).split())


def plain_table(
    df: pd.DataFrame, wrap: Sequence[str] = ("text",), width: int = 100, indent: str = "  "
) -> str:
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
# ----------------------------------------------------------------------------- result tables

#: columns that count things (shown as whole numbers even when a missing value made them float)
COUNT_COLUMNS = frozenset(
    {
        "N", "n", "k", "epochs", "steps", "examples", "questions", "passages", "pairs", "positives",
        "negatives", "readings", "reused", "read", "model calls", "cache hits",
    }
)


def _is_count(name: Any) -> bool:
    s = str(name)
    return (
        s in COUNT_COLUMNS
        or s.startswith(("n_", "n ", "questions "))
        or s.endswith((" questions", " passages"))
        or s
        in {
            "model_calls", "cache_hits", "prompt_tokens", "prompt_tokens_total", "generated_tokens",
            "kv_snapshots", "kv_restores", "requests", "retries",
        }
    )


def _interval_triples(df: pd.DataFrame, intervals: dict[str, str]) -> list[tuple[str, str, str]]:
    """``(value, lo, hi)`` column triples: ``m`` with ``m_lo``/``m_hi``; a stem ``s_lo``/``s_hi``
    whose value column is the one column named ``s@…`` (``EM@N`` with ``EM_lo``); ``intervals``
    maps further value columns to their stem (``{"AcEM − EM": "diff"}``)."""
    cols = [str(c) for c in df.columns]
    triples = []
    for value, stem in intervals.items():
        if value in cols and f"{stem}_lo" in cols and f"{stem}_hi" in cols:
            triples.append((value, f"{stem}_lo", f"{stem}_hi"))
    taken = {t[1] for t in triples}
    for c in cols:
        if not c.endswith("_lo") or c in taken:
            continue
        stem = c[:-3]
        if f"{stem}_hi" not in cols:
            continue
        if stem in cols:
            triples.append((stem, c, f"{stem}_hi"))
            continue
        at = [x for x in cols if x.startswith(f"{stem}@")]
        if len(at) == 1:
            triples.append((at[0], c, f"{stem}_hi"))
    return triples


def interval_cell(value: Any, lo: Any, hi: Any, digits: int = 2, ci_digits: int = 1) -> str:
    """``"12.50 [3.1, 25.0]"``: a value with its interval in one string; ``"—"`` when the value is
    missing, the value alone when the interval is."""

    def missing(v: Any) -> bool:
        try:
            return v is None or float(v) != float(v)
        except (TypeError, ValueError):
            return True

    if missing(value):
        return "—"
    text = f"{float(value):.{digits}f}"
    if missing(lo) or missing(hi):
        return text
    return f"{text} [{float(lo):.{ci_digits}f}, {float(hi):.{ci_digits}f}]"


def readable(df: pd.DataFrame, columns: Sequence[str] | None = None, digits: int = 2, ci_digits: int = 1,
             intervals: dict[str, str] | None = None, drop: Sequence[str] = ()) -> pd.DataFrame:
    """A result table as a person reads it: every value that has a 95 % interval (columns ``m``,
    ``m_lo``, ``m_hi``; ``EM@N`` with ``EM_lo``/``EM_hi``; ``intervals`` for other names) in one
    cell ``"value [lo, hi]"`` (:func:`interval_cell`) followed by its significance mark when the
    table has ``sig m``, the ``_lo``/``_hi`` columns removed; counts (:data:`COUNT_COLUMNS`,
    ``n_…``, engine counters) as whole numbers even where a missing value made them float.
    ``columns`` keeps only those columns (after combining), ``drop`` removes some. The index is
    kept; the frame is for display (values become text)."""
    import pandas as pd

    out = df.copy()
    out.columns = [str(c) for c in out.columns]
    for value, lo, hi in _interval_triples(out, dict(intervals or {})):
        sig = f"sig {value}"
        marks = out[sig].where(out[sig].map(lambda s: isinstance(s, str)), "") if sig in out else ""
        cells = [interval_cell(v, a, b, digits, ci_digits) for v, a, b in zip(out[value], out[lo], out[hi],
                                                                                strict=True)]
        out[value] = pd.Series(cells, index=out.index) + marks
        out = out.drop(columns=[lo, hi, *([sig] if sig in out else [])])
    for c in out.columns:
        s = out[c]
        if _is_count(c) and s.dtype.kind == "f" and s.dropna().map(float.is_integer).all():
            out[c] = s.astype("Int64")
    if columns is not None:
        out = out[[c for c in columns if c in out.columns]]
    return out.drop(columns=[c for c in drop if c in out.columns])


def engine_counters(engines: dict[str, Any] | Sequence[Any]) -> pd.DataFrame:
    """One row per LLM engine: model calls, cache hits, tokens as whole numbers, seconds as a
    float. ``engines`` is ``{label: engine}`` (an engine, its ``LLMStats`` or a dict of counters)
    or a list of engines, labelled by their names — an engine listed twice (reader and judge) is
    counted once."""
    import pandas as pd

    if not isinstance(engines, dict):
        unique = list({id(e): e for e in engines if e is not None}.values())
        engines = {}
        for e in unique:
            label = str(getattr(e, "name", "engine"))
            while label in engines:
                label += "′"
            engines[label] = e
    rows = {}
    for label, e in engines.items():
        stats = getattr(e, "stats", e)
        rows[label] = stats.as_dict() if hasattr(stats, "as_dict") else dict(stats)
    table = pd.DataFrame.from_dict(rows, orient="index")
    for c in table.columns:
        if c != "seconds":
            table[c] = table[c].astype("Int64")
    if "seconds" in table:
        table["seconds"] = table["seconds"].astype(float).round(1)
    return table


#: how every generated "what we found" sentence starts
FOUND = "**What we found.**"


def found_text(*sentences: str) -> str:
    """``"**What we found.** <sentences>"`` (a sentence that already starts so is not prefixed again)."""
    text = " ".join(s.strip() for s in sentences if s and s.strip())
    return text if text.startswith(FOUND) else f"{FOUND} {text}"


def show_found(*sentences: str) -> None:
    """Display :func:`found_text` as Markdown: the generated sentence that closes a notebook section."""
    from IPython.display import Markdown, display

    display(Markdown(found_text(*sentences)))
