"""The source papers' numbers and findings: ``inferqa_utils/measure/paper_numbers.yaml``, the one copy
every notebook and command reads (see its header for the fields).

This module only loads and validates the file (a foundation every stage may import: notebook 04
prints the paper's reading numbers, notebook 06 its AcEM and probe numbers);
:mod:`inferqa_utils.verdicts.findings` scores each finding on a run.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import DataFormatError

PAPER_NUMBERS = Path(__file__).with_name("paper_numbers.yaml")
RELATIONS = ("a > b", "a - b >= margin", "a - b <= margin", "adds little", "ratio a/b in [lo, hi]",
             "abs(a - b) / b <= margin")
_NEEDS = {"a - b >= margin": ("margin",), "a - b <= margin": ("margin",), "adds little": ("margin",),
          "ratio a/b in [lo, hi]": ("lo", "hi"), "abs(a - b) / b <= margin": ("margin",)}


@dataclass
class Finding:
    """One entry of ``paper_numbers.yaml``."""

    id: str
    finding: str
    source: str
    a_label: str
    a_value: float | None
    b_label: str
    b_value: float | None
    relation: str
    bounds: dict[str, float] = field(default_factory=dict)
    measure: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    ours: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def rule(self) -> str:
        """The relation with its numbers, e.g. ``"|a − b| ≤ 5 and not significantly < 0"``."""
        if self.relation == "adds little":
            return f"|a − b| ≤ {self.bounds['margin']:g} and not significantly < 0"
        text = self.relation
        for k, v in self.bounds.items():
            text = text.replace(k, f"{v:g}")
        return text

    def region(self) -> tuple[float, float, bool]:
        """``(low, high, low_open)``: the region R of the statistic (module docstring)."""
        b = self.bounds
        return {
            "a > b": (0.0, math.inf, True),
            "a - b >= margin": (b.get("margin", 0.0), math.inf, False),
            "a - b <= margin": (-math.inf, b.get("margin", 0.0), False),
            "adds little": (-b.get("margin", 0.0), b.get("margin", 0.0), False),
            "ratio a/b in [lo, hi]": (b.get("lo", 0.0), b.get("hi", 0.0), False),
            "abs(a - b) / b <= margin": (0.0, b.get("margin", 0.0), False),
        }[self.relation]

    @property
    def statistic(self) -> str:
        return {"ratio a/b in [lo, hi]": "ratio", "abs(a - b) / b <= margin": "relative"}.get(
            self.relation, "diff"
        )


def load_paper_numbers(path: str | Path | None = None, known_measures: Collection[str] | None = None
                       ) -> list[Finding]:
    """Read and validate the paper numbers file (see its header); ``known_measures`` (the
    measures of :mod:`inferqa_utils.verdicts.findings`) also validates each entry's measure. Errors name the
    entry and field."""
    import yaml

    path = Path(path) if path is not None else PAPER_NUMBERS
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataFormatError(path, f"cannot read the paper numbers file ({exc})") from None
    except yaml.YAMLError as exc:
        raise DataFormatError(path, f"invalid YAML ({exc})") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("findings"), list):
        raise DataFormatError(path, "expected a mapping with a 'findings' list")
    out: list[Finding] = []
    seen: set[str] = set()
    for n, e in enumerate(raw["findings"], 1):
        rec = f"entry {n}" + (f" ({e.get('id')})" if isinstance(e, dict) and e.get("id") else "")
        if not isinstance(e, dict):
            raise DataFormatError(path, "an entry must be a mapping", record=rec)
        for key in ("id", "finding", "source", "paper", "relation", "measure"):
            if not e.get(key):
                raise DataFormatError(path, f"missing {key!r}", record=rec, field=key)
        if e["id"] in seen:
            raise DataFormatError(path, f"duplicate id {e['id']!r}", record=rec, field="id")
        seen.add(e["id"])
        sides = {}
        for side in ("a", "b"):
            s = (e["paper"] or {}).get(side)
            if not isinstance(s, dict) or "label" not in s or "value" not in s:
                raise DataFormatError(
                    path, f"paper.{side} needs 'label' and 'value'", record=rec, field=f"paper.{side}"
                )
            v = s["value"]
            if v is not None and not isinstance(v, (int, float)):
                raise DataFormatError(
                    path,
                    f"paper.{side}.value must be a number or null, got {v!r}",
                    record=rec,
                    field=f"paper.{side}.value",
                )
            sides[side] = (str(s["label"]), None if v is None else float(v))
        rel = e["relation"]
        if rel not in RELATIONS:
            raise DataFormatError(
                path,
                f"unknown relation {rel!r} (known: {', '.join(RELATIONS)})",
                record=rec,
                field="relation",
            )
        bounds = {}
        for k in _NEEDS.get(rel, ()):
            if not isinstance(e.get(k), (int, float)):
                raise DataFormatError(path, f"relation {rel!r} needs a number {k!r}", record=rec, field=k)
            bounds[k] = float(e[k])
        if known_measures is not None and e["measure"] not in known_measures:
            raise DataFormatError(
                path,
                f"unknown measure {e['measure']!r} (known: {', '.join(known_measures)})",
                record=rec,
                field="measure",
            )
        out.append(
            Finding(
                str(e["id"]),
                str(e["finding"]),
                str(e["source"]),
                *sides["a"],
                *sides["b"],
                rel,
                bounds,
                str(e["measure"]),
                dict(e.get("params") or {}),
                str(e.get("ours") or ""),
                dict(e.get("extra") or {}),
            )
        )
    return out


def paper_value(finding_id: str, side: str = "a") -> float | None:
    """One paper number by finding id and side (``"a"``/``"b"``) or an ``extra`` label."""
    for f in load_paper_numbers():
        if f.id == finding_id:
            if side == "a":
                return f.a_value
            if side == "b":
                return f.b_value
            v = f.extra.get(side)
            return float(v) if isinstance(v, (int, float)) else None
    raise KeyError(f"no finding {finding_id!r} in {PAPER_NUMBERS}")
