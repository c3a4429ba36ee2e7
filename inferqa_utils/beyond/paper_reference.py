"""Paper numbers (``results/paper_reference.yaml``) next to ours: the paper-vs-ours table.

Each entry of the YAML file is one qualitative finding of the paper (SPEC §4–8) with the two
quantities it compares (``a`` and ``b``, paper values and their source) and a *relation* that
holds between them when the finding holds (``a > b``, ``a - b <= margin``, …). Our ``(a, b)``
come from a named *measure* (:data:`MEASURES`) over the notebook-07 :class:`Evidence` (the report
table, the cross-corpus table of notebook 02, the Optimal reading…).

**Rule.** A finding *reproduces* (``yes``) when our ``(a, b)`` satisfy the same relation as the
paper's; ``no`` when they do not; ``not measured`` when we cannot measure it here (measured in another
notebook, a missing input, or a quantity undefined on this split such as Hit at label 2 without
any label-2 passage). Only the direction/size class of the effect is compared, never the absolute
numbers: our corpus, models and question counts are orders of magnitude smaller.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import PATHS
from ..errors import DataFormatError

if TYPE_CHECKING:
    import pandas as pd

RELATIONS: dict[str, Callable[[float, float, Mapping[str, float]], bool]] = {
    "a > b": lambda a, b, p: a > b,
    "a >= b": lambda a, b, p: a >= b,
    "a - b <= margin": lambda a, b, p: a - b <= p["margin"],
    "a - b >= margin": lambda a, b, p: a - b >= p["margin"],
    "ratio a/b in [lo, hi]": lambda a, b, p: p["lo"] <= a / b <= p["hi"],
    "abs(a - b) / b <= margin": lambda a, b, p: abs(a - b) / abs(b) <= p["margin"],
}
_DIVIDES = ("ratio a/b in [lo, hi]", "abs(a - b) / b <= margin")
_NEEDS = {"a - b <= margin": ("margin",), "a - b >= margin": ("margin",), "ratio a/b in [lo, hi]": ("lo", "hi"),
          "abs(a - b) / b <= margin": ("margin",)}


@dataclass
class Finding:
    """One entry of the paper reference file."""

    id: str
    finding: str
    source: str
    a_label: str
    a_value: float | None
    b_label: str
    b_value: float | None
    relation: str | None
    bounds: dict[str, float] = field(default_factory=dict)
    measure: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    ours: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def rule(self) -> str:
        """The relation in words with its numbers, e.g. ``"a - b <= 5.0"``."""
        if self.relation is None:
            return "—"
        text = self.relation
        for k, v in self.bounds.items():
            text = text.replace(k, f"{v:g}")
        return text

    def holds(self, a: float | None, b: float | None) -> bool | None:
        """Whether ``(a, b)`` satisfy the relation; ``None`` when undefined (missing/NaN values, no
        relation, a ratio to ``b = 0``)."""
        if self.relation is None or a is None or b is None or _nan(a) or _nan(b):
            return None
        if self.relation in _DIVIDES and float(b) == 0:
            return None  # a ratio to zero is undefined
        return bool(RELATIONS[self.relation](float(a), float(b), self.bounds))


def _nan(x: Any) -> bool:
    try:
        return math.isnan(float(x))
    except (TypeError, ValueError):
        return True


def default_path() -> Path:
    return PATHS.results / "paper_reference.yaml"


def load_paper_reference(path: str | Path | None = None) -> list[Finding]:
    """Read and validate the paper reference YAML (see its header). Errors name the entry and field."""
    import yaml

    path = Path(path) if path is not None else default_path()
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataFormatError(path, f"cannot read the paper reference file ({exc})") from None
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
        for key in ("id", "finding", "source", "paper"):
            if not e.get(key):
                raise DataFormatError(path, f"missing {key!r}", record=rec, field=key)
        if e["id"] in seen:
            raise DataFormatError(path, f"duplicate id {e['id']!r}", record=rec, field="id")
        seen.add(e["id"])
        sides = {}
        for side in ("a", "b"):
            s = (e["paper"] or {}).get(side)
            if not isinstance(s, dict) or "label" not in s or "value" not in s:
                raise DataFormatError(path, f"paper.{side} needs 'label' and 'value'", record=rec, field=f"paper.{side}")
            v = s["value"]
            if v is not None and not isinstance(v, (int, float)):
                raise DataFormatError(path, f"paper.{side}.value must be a number or null, got {v!r}", record=rec,
                                      field=f"paper.{side}.value")
            sides[side] = (str(s["label"]), None if v is None else float(v))
        rel = e.get("relation")
        if rel is not None and rel not in RELATIONS:
            raise DataFormatError(path, f"unknown relation {rel!r} (known: {', '.join(RELATIONS)})", record=rec,
                                  field="relation")
        bounds = {}
        for k in _NEEDS.get(rel, ()):
            if not isinstance(e.get(k), (int, float)):
                raise DataFormatError(path, f"relation {rel!r} needs a number {k!r}", record=rec, field=k)
            bounds[k] = float(e[k])
        measure = e.get("measure")
        if measure is not None and measure not in MEASURES:
            raise DataFormatError(path, f"unknown measure {measure!r} (known: {', '.join(MEASURES)})", record=rec,
                                  field="measure")
        out.append(Finding(str(e["id"]), str(e["finding"]), str(e["source"]), *sides["a"], *sides["b"], rel, bounds,
                           measure, dict(e.get("params") or {}), str(e.get("ours") or ""), dict(e.get("extra") or {})))
    return out


# ----------------------------------------------------------------------------- our side

@dataclass
class Evidence:
    """What notebook 07 has measured, for the measures.

    ``report``: the report table (index system; ``kind``, metrics, ``EM``, ``judged``…);
    ``cross_corpus``: notebook 02's cross-corpus table (``corpus`` column) or ``None``;
    ``lengths``: mean tokens ``{"supporting": …, "containing": …}``; ``optimal``: the per-passage
    frame of :func:`inferqa_utils.reading.optimal` (``em``, ``n_hints``) and ``optimal_em`` its
    per-question EM in %; ``top1_hints``: mean hints of each system's rank-1 passages.
    """

    report: pd.DataFrame
    first_stage: str = "bm25"
    dense: Sequence[str] = ("minilm", "e5-small")
    cross_corpus: pd.DataFrame | None = None
    lengths: Mapping[str, float] | None = None
    optimal: pd.DataFrame | None = None
    optimal_em: float | None = None
    top1_hints: Mapping[str, float] = field(default_factory=dict)
    oracle_system: str | None = None
    decomposition_system: str | None = None
    cot_system: str | None = None


Measured = tuple[float, float, str]
#: the verdict when a finding cannot be measured here (not "n/a": pandas reads that back as NaN)
NOT_MEASURED = "not measured"


def _value(report: pd.DataFrame, system: str, col: str) -> float | None:
    if system not in report.index or col not in report.columns:
        return None
    v = report.loc[system, col]
    return None if _nan(v) else float(v)


def _best(report: pd.DataFrame, systems: Sequence[str], col: str) -> tuple[str, float] | None:
    vals = [(s, v) for s in systems if (v := _value(report, s, col)) is not None]
    return max(vals, key=lambda x: x[1]) if vals else None


def _rerank_rows(ev: Evidence) -> list[str]:
    return [s for s in ev.report.index if ev.report.loc[s, "kind"] == "reranker"]


def m_cross_corpus_hit(ev: Evidence, metric: str = "mean Hit@k") -> Measured | None:
    """Best retriever per corpus by ``metric``: a ``Hit@k`` column of notebook 02's cross-corpus
    table, or ``"mean Hit@k"`` = the mean over all its Hit@k columns (the paper's Fig. 4 claim is
    "consistently higher across k"; single cut-offs saturate on a corpus of a few hundred passages)."""
    cc = ev.cross_corpus
    if cc is None:
        return None
    hits = [c for c in cc.columns if str(c).startswith("Hit@")]
    if metric == "mean Hit@k":
        if not hits:
            return None
        values = cc[hits].mean(axis=1, skipna=False)
    elif metric in cc.columns:
        values = cc[metric]
    else:
        return None
    best = {}
    for corpus in ("answer-containing", "answer-supporting"):
        sub = values[cc["corpus"] == corpus].dropna()
        if not len(sub):
            return None
        best[corpus] = (str(sub.idxmax()), float(sub.max()))
    (cn, cv), (sn, sv) = best["answer-containing"], best["answer-supporting"]
    n = cc[cc["corpus"] == "answer-supporting"]["n_questions"].max() if "n_questions" in cc.columns else "?"
    return cv, sv, (f"{metric} ({', '.join(hits)}), label 2: containing best {cn}, supporting best {sn}; "
                    f"{n} question(s) with a label-2 passage")


def m_passage_lengths(ev: Evidence) -> Measured | None:
    if not ev.lengths or not ev.lengths.get("containing"):
        return None
    return float(ev.lengths["supporting"]), float(ev.lengths["containing"]), "mean tokens"


def m_dense_vs_bm25(ev: Evidence, metric: str = "nDCG@10") -> Measured | None:
    best = _best(ev.report, list(ev.dense), metric)
    bm = _value(ev.report, "bm25", metric)
    if best is None or bm is None:
        return None
    return best[1], bm, f"{metric}: best dense {best[0]} vs bm25"


def m_reranker_gain(ev: Evidence, column: str = "EM") -> Measured | None:
    best = _best(ev.report, _rerank_rows(ev), column)
    base = _value(ev.report, ev.first_stage, column)
    if best is None or base is None:
        return None
    return best[1], base, f"{column}: {best[0]} vs {ev.first_stage}"


def m_pointwise_vs_other_rerankers(ev: Evidence, metric: str = "nDCG@10") -> Measured | None:
    rows = _rerank_rows(ev)
    pw = [s for s in rows if s.endswith("+pointwise")]
    others = [s for s in rows if s not in pw]
    a, b = _best(ev.report, pw, metric), _best(ev.report, others, metric)
    if a is None or b is None:
        return None
    return a[1], b[1], f"{metric}: {a[0]} vs {b[0]}"


def _best_pipeline(ev: Evidence, kinds: Sequence[str]) -> tuple[str, float] | None:
    return _best(ev.report, [s for s in ev.report.index if ev.report.loc[s, "kind"] in kinds], "EM")


def m_optimal_vs_pipeline(ev: Evidence) -> Measured | None:
    best = _best_pipeline(ev, ("retriever", "reranker"))
    if ev.optimal_em is None or best is None:
        return None
    return float(ev.optimal_em), best[1], f"strict EM: Optimal vs {best[0]}"


def m_oracle_vs_optimal(ev: Evidence) -> Measured | None:
    a = _value(ev.report, ev.oracle_system or "", "EM")
    if a is None or ev.optimal_em is None:
        return None
    return a, float(ev.optimal_em), f"strict EM: {ev.oracle_system} vs Optimal"


def m_oracle_vs_pipeline(ev: Evidence) -> Measured | None:
    a = _value(ev.report, ev.oracle_system or "", "EM")
    best = _best_pipeline(ev, ("retriever",))
    if a is None or best is None:
        return None
    return a, best[1], f"strict EM: {ev.oracle_system} vs {best[0]}"


def m_hints_useful_vs_ranked(ev: Evidence) -> Measured | None:
    opt = ev.optimal
    if opt is None or not len(opt) or not opt["em"].any():
        return None
    best = _best(ev.report, [s for s in ev.report.index if ev.report.loc[s, "kind"] == "retriever"], "nDCG@10")
    if best is None or _nan(ev.top1_hints.get(best[0])):
        return None
    ok = opt[opt["em"].astype(bool)]
    return (float(ok["n_hints"].mean()), float(ev.top1_hints[best[0]]),
            f"hints: {len(ok)} Optimal-correct passage(s) of {ok['qid'].nunique()} question(s) vs {best[0]} rank-1")


def m_short_vs_cot_reader(ev: Evidence) -> Measured | None:
    a = _value(ev.report, ev.decomposition_system or "", "EM")
    b = _value(ev.report, ev.cot_system or "", "EM")
    if a is None or b is None:
        return None
    return a, b, f"strict EM: {ev.decomposition_system} vs {ev.cot_system}"


MEASURES: dict[str, Callable[..., Measured | None]] = {
    "cross_corpus_hit": m_cross_corpus_hit,
    "passage_lengths": m_passage_lengths,
    "dense_vs_bm25": m_dense_vs_bm25,
    "reranker_gain": m_reranker_gain,
    "pointwise_vs_other_rerankers": m_pointwise_vs_other_rerankers,
    "optimal_vs_pipeline": m_optimal_vs_pipeline,
    "oracle_vs_optimal": m_oracle_vs_optimal,
    "oracle_vs_pipeline": m_oracle_vs_pipeline,
    "hints_useful_vs_ranked": m_hints_useful_vs_ranked,
    "short_vs_cot_reader": m_short_vs_cot_reader,
}


def _fmt(v: float | None) -> str:
    return "—" if v is None or _nan(v) else f"{v:g}"


def paper_vs_ours(findings: Sequence[Finding], evidence: Evidence) -> pd.DataFrame:
    """One row per finding: the paper's a and b, ours, the rule and whether it reproduces
    (``yes``/``no``/``not measured``, module docstring)."""
    import pandas as pd

    rows = []
    for f in findings:
        got = MEASURES[f.measure](evidence, **f.params) if f.measure else None
        oa, ob, note = got if got is not None else (None, None, "")
        verdict = f.holds(oa, ob)
        if f.measure is None:
            why = f"measured elsewhere: {f.ours}"
        elif got is None:
            why = "not measurable on this run (missing input or undefined on this split)"
        else:
            why = note
        rows.append({"id": f.id, "finding": f.finding, "source": f.source,
                     "paper a": f"{f.a_label}: {_fmt(f.a_value)}", "paper b": f"{f.b_label}: {_fmt(f.b_value)}",
                     "ours a": None if oa is None else round(oa, 2), "ours b": None if ob is None else round(ob, 2),
                     "rule": f.rule(), "paper holds": {True: "yes", False: "no", None: "—"}[f.holds(f.a_value, f.b_value)],
                     "reproduces": {True: "yes", False: "no", None: NOT_MEASURED}[verdict], "ours is": f.ours, "note": why})
    return pd.DataFrame(rows).set_index("id")
