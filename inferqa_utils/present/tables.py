"""Result tables as text: one p-value format and one Markdown table writer, shared by every table
of the results page (``docs/results.md``: :mod:`inferqa_utils.verdicts.results_page` and the section
on the paper's own runs, :mod:`inferqa_utils.paper_runs.page`) and notebook 09's views.

* :func:`p_value_text` — four decimals (``0.0013``, ``1.0000``); below 0.0001 two significant
  digits in scientific notation (``1.8e-12``); a p of exactly 0 as ``< 0.0001``; no p as ``—``.
  Four decimals because the check records keep p to four (``round(p, 4)``,
  :func:`inferqa_utils.verdicts.findings.verdict_table`), so the page prints what the record holds,
  and because four keep apart the p-values next to the 0.05 level that three would round together
  (0.0496 and 0.0504). A fixed four decimals would print a p of the paper runs' exact sign test
  such as 2 · 2⁻⁴⁰ as ``0.0000``, a p no randomization test gives, hence the scientific notation
  below 0.0001; a p of 0 can only be one rounded away to four decimals, hence ``< 0.0001``.
* :func:`markdown_table` — a GitHub-flavoured Markdown table as lines, each cell by
  :func:`markdown_cell` (``—`` when empty, line breaks flattened, ``|`` escaped).

Example::

    >>> p_value_text(0.00131), p_value_text(2 * 0.5**40), p_value_text(None)
    ('0.0013', '1.8e-12', '—')
    >>> markdown_table(["finding", "p"], [["a | b", p_value_text(0.5)], ["c", None]])
    ['| finding | p |', '|---|---|', '| a \\\\| b | 0.5000 |', '| c | — |']
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

#: the text of a missing value in every table
MISSING = "—"
#: below this a p-value is printed in scientific notation (module docstring)
SMALLEST_FIXED_P = 0.0001


def p_value_text(p: Any) -> str:
    """A p-value as the results page prints it (module docstring): ``0.0013``, ``1.8e-12``,
    ``< 0.0001`` for 0, ``—`` for ``None``, NaN, ``""`` or anything that is not a number (a CSV
    cell is read as text)."""
    try:
        x = float(p)
    except (TypeError, ValueError):
        return MISSING
    if math.isnan(x):
        return MISSING
    if x == 0:
        return f"< {SMALLEST_FIXED_P:.4f}"
    return f"{x:.1e}" if x < SMALLEST_FIXED_P else f"{x:.4f}"


def markdown_cell(value: Any) -> str:
    """One Markdown table cell: ``—`` for ``None`` or ``""``, runs of whitespace (line breaks
    included) as one space, ``|`` escaped."""
    text = MISSING if value is None or value == "" else str(value)
    return " ".join(text.split()).replace("|", "\\|")


def markdown_table(header: Sequence[Any], rows: Iterable[Sequence[Any]]) -> list[str]:
    """A GitHub-flavoured Markdown table as lines: the header, the ``|---|`` rule, one line per row
    (cells by :func:`markdown_cell`)."""

    def line(cells: Sequence[Any]) -> str:
        return "| " + " | ".join(markdown_cell(c) for c in cells) + " |"

    return [line(header), "|" + "---|" * len(header), *(line(r) for r in rows)]
