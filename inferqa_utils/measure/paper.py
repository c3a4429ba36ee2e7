"""The source papers' numbers and findings: ``inferqa_utils/measure/paper_numbers.yaml``, the one copy
every notebook and command reads (see its header for the fields).

This module only loads and validates the file (a foundation every stage may import: notebook 04
prints the paper's reading numbers, notebook 06 its AcEM and probe numbers);
:mod:`inferqa_utils.verdicts.findings` scores each finding on a run.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..core.errors import DataFormatError

PAPER_NUMBERS = Path(__file__).with_name("paper_numbers.yaml")
RELATIONS = ("a > b", "a < b", "a - b >= margin", "a - b <= margin", "adds little", "ratio a/b in [lo, hi]",
             "abs(a - b) / b <= margin")
_NEEDS = {"a - b >= margin": ("margin",), "a - b <= margin": ("margin",), "adds little": ("margin",),
          "ratio a/b in [lo, hi]": ("lo", "hi"), "abs(a - b) / b <= margin": ("margin",)}


@dataclass
class Finding:
    """One entry of ``paper_numbers.yaml``: the paper's claim and numbers, the rule our data must
    satisfy (``relation`` and its ``bounds``, with ``margin_source``: where in a paper a margin comes
    from), the measure that reads our two quantities, and per-dataset reference rows
    (``references``: a dataset name prefix → other paper numbers and bounds, e.g. paper 004's
    TriviaQA row for TriviaHG, whose questions are TriviaQA's)."""

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
    margin_source: str = ""
    references: dict[str, dict[str, Any]] = field(default_factory=dict)

    def for_dataset(self, dataset: str) -> Finding:
        """The finding with the reference row of ``dataset`` (the longest matching name prefix of
        ``references``), or itself when none matches."""
        keys = [k for k in self.references if str(dataset).startswith(k)]
        if not keys:
            return self
        ref = self.references[max(keys, key=len)]
        a, b = ref.get("a") or {}, ref.get("b") or {}
        bounds = {**self.bounds, **{k: float(ref[k]) for k in self.bounds if k in ref}}
        return replace(
            self,
            a_label=str(a.get("label", self.a_label)), a_value=a.get("value", self.a_value),
            b_label=str(b.get("label", self.b_label)), b_value=b.get("value", self.b_value),
            bounds=bounds, margin_source=str(ref.get("margin_source", self.margin_source)),
            source=str(ref.get("source", self.source)), references={},
        )

    def rule(self) -> str:
        """The relation with its numbers, e.g. ``"|a − b| < 2.16 and not significantly < 0"``."""
        if self.relation == "adds little":
            return f"|a − b| < {self.bounds['margin']:g} and not significantly < 0"
        text = {"a - b >= margin": "a − b > margin", "a - b <= margin": "a − b < margin",
                "ratio a/b in [lo, hi]": "lo < a/b < hi", "abs(a - b) / b <= margin": "|a − b| / b < margin",
                }.get(self.relation, self.relation)
        for k, v in self.bounds.items():
            text = text.replace(k, f"{v:g}")
        return text

    def region(self) -> tuple[float, float]:
        """``(low, high)``: the region R of the statistic, open at both finite edges (an interval
        touching an edge decides nothing, :mod:`inferqa_utils.measure.verdict`)."""
        b = self.bounds
        return {
            "a > b": (0.0, math.inf),
            "a < b": (-math.inf, 0.0),
            "a - b >= margin": (b.get("margin", 0.0), math.inf),
            "a - b <= margin": (-math.inf, b.get("margin", 0.0)),
            "adds little": (-b.get("margin", 0.0), b.get("margin", 0.0)),
            "ratio a/b in [lo, hi]": (b.get("lo", 0.0), b.get("hi", 0.0)),
            "abs(a - b) / b <= margin": (-math.inf, b.get("margin", 0.0)),
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
        if bounds and not e.get("margin_source"):
            raise DataFormatError(path, f"relation {rel!r} needs 'margin_source': where in a paper its "
                                  f"{', '.join(bounds)} come from", record=rec, field="margin_source")
        references = e.get("references") or {}
        if not isinstance(references, dict):
            raise DataFormatError(path, "references must map dataset name prefixes to paper rows", record=rec,
                                  field="references")
        for prefix, ref in references.items():
            where = f"references.{prefix}"
            if not isinstance(ref, dict):
                raise DataFormatError(path, "a reference row must be a mapping", record=rec, field=where)
            for side in ("a", "b"):
                row = ref.get(side)
                v = row.get("value") if isinstance(row, dict) else None
                bad = not isinstance(row, dict) or (v is not None and not isinstance(v, (int, float)))
                if side in ref and bad:
                    raise DataFormatError(path, f"{side} needs a label and a number or null", record=rec,
                                          field=f"{where}.{side}")
            for k in bounds:
                if k in ref and not isinstance(ref[k], (int, float)):
                    raise DataFormatError(path, f"{k} must be a number", record=rec, field=f"{where}.{k}")
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
                str(e.get("margin_source") or ""),
                {str(k): dict(v) for k, v in references.items()},
            )
        )
    return out


@dataclass(frozen=True)
class NotScored:
    """A claim of the papers that the compendium computes or discusses but cannot score on its data,
    and why (``paper_numbers.yaml``, ``not_scored``)."""

    id: str
    finding: str
    source: str
    why: str


def load_not_scored(path: str | Path | None = None) -> list[NotScored]:
    """The ``not_scored`` list of the paper numbers file; errors name the entry and field."""
    import yaml

    path = Path(path) if path is not None else PAPER_NUMBERS
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    out = []
    for n, e in enumerate(raw.get("not_scored") or [], 1):
        rec = f"not_scored entry {n}"
        if not isinstance(e, dict):
            raise DataFormatError(path, "an entry must be a mapping", record=rec)
        for key in ("id", "finding", "source", "why"):
            if not e.get(key):
                raise DataFormatError(path, f"missing {key!r}", record=rec, field=key)
        out.append(NotScored(str(e["id"]), str(e["finding"]), str(e["source"]), str(e["why"])))
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
