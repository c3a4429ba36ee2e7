"""The results page's section *The paper's own runs*, rendered from an imported folder's stage-09
tables (``findings``, ``findings_summary``, ``em`` and the ``import`` record,
:data:`inferqa_utils.paper_runs.contract.OWN_TABLES`). Reads CSV with the standard library only;
tables and p-values in the page's one format (:mod:`inferqa_utils.present.tables`).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable
from pathlib import Path

from ..present.tables import markdown_table, p_value_text
from . import contract

_MARK = {contract.HOLDS: "✓", contract.CONTRADICTED: "✗", contract.INCONCLUSIVE: "○"}
#: the paper, cited in full (the page's own list cites only what its findings sections name)
PAPER = "*Inferential Question Answering*, arXiv 2602.01239, 2026"


#: stage 09's tables by the short names this module uses
_TABLES = {
    "findings": contract.FINDINGS, "findings_summary": contract.SUMMARY, "em": contract.EM,
    "retrieval": contract.RETRIEVAL, "import": contract.RECORD,
}


def _name(kind: str, dataset: str) -> str:
    return _TABLES[kind].file(dataset, contract.SPLIT)


def _read(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _f(v: str | None) -> float:
    try:
        return float(v) if v not in (None, "") else math.nan
    except ValueError:
        return math.nan


def _stat(r: dict[str, str]) -> str:
    if r.get("value") in (None, ""):
        return "—"
    digits = 3 if r.get("statistic") == "ratio" else 1
    sign = "" if r.get("statistic") == "ratio" else "+"
    return f"{_f(r['value']):{sign}.{digits}f} [{_f(r['lo']):.{digits}f}, {_f(r['hi']):.{digits}f}]"


def _ci(r: dict[str, str], side: str) -> str:
    return (
        "—"
        if r.get(side) in (None, "")
        else f"{_f(r[side]):.1f} [{_f(r[side + '_lo']):.1f}, {_f(r[side + '_hi']):.1f}]"
    )


def _verdict(r: dict[str, str]) -> str:
    v = r.get("verdict") or ""
    return f"{_MARK.get(v, '')} {v}".strip() or "—"


def find_import(folders: Iterable[str | Path], dataset: str = contract.DATASET) -> Path | None:
    """The first results folder among ``folders`` that holds an import's findings table."""
    for f in folders:
        if (Path(f) / _name("findings", dataset)).exists():
            return Path(f)
    return None


def render_section(results: str | Path, dataset: str = contract.DATASET, level: int = 2) -> str:
    """The Markdown section for the import whose tables are in the folder ``results``."""
    results = Path(results)
    rows = _read(results / _name("findings", dataset))
    summary = _read(results / _name("findings_summary", dataset))
    em = _read(results / _name("em", dataset)) if (results / _name("em", dataset)).exists() else []
    rec_path = results / _name("import", dataset)
    rec = json.loads(rec_path.read_text(encoding="utf-8")) if rec_path.exists() else {}
    params = rec.get("parameters", {})
    k, union = params.get("k", "?"), params.get("union", "?")
    h = "#" * level
    lines = [
        f"{h} The paper's own runs", "",
        f"The authors of paper 000 — {PAPER} — released their per-question outputs for the test split "
        "(hub dataset `JamshidJDMY/InferentialQA`, folder `results/`). `python -m inferqa_utils paper-runs "
        "fetch` downloads them and `paper-runs import DIR` re-scores them here "
        f"([paper_runs.md](paper_runs.md)): {rec.get('questions', '?')} questions, "
        f"{rec.get('rankings', '?')} rankings, {rec.get('readings', '?')} reader files, readers "
        f"{', '.join(f'`{r}`' for r in rec.get('readers', [])) or '?'}"
        + (f", imported {rec['date'][:10]}" if rec.get("date") else "")
        + ". "
        "Every comparison is paired over the same questions: 95 % bootstrap intervals, the paired "
        "randomization test's p, Holm-adjusted within each family (one finding, metric and scoring); the "
        "verdict applies the finding's rule of `paper_numbers.yaml` to the interval of the statistic. "
        f"EM at the top {k} passages, Union_{union}; each EM comparison under our normalised EM and under "
        "the authors' raw membership.",
        "",
    ]

    lines += [
        f"{h}# Verdicts",
        "",
        *markdown_table(
            [
                "family", "finding", "metric", "scoring", "comparisons", "holds", "contradicted",
                "inconclusive",
            ],
            (
                [
                    s["family"], f"`{s['finding']}`", s["metric"], s["scoring"] or "—", s["comparisons"],
                    s[contract.HOLDS], s[contract.CONTRADICTED], s[contract.INCONCLUSIVE],
                ]
                for s in summary
            ),
        ),
        "",
    ]

    head = [
        "comparison", "metric", "reader", "scoring", "n", "a [95 %]", "b [95 %]", "statistic [95 %]",
        "p (Holm)", "verdict",
    ]

    def cells(r: dict[str, str]) -> list[str]:
        return [
            r["comparison"], r["metric"], r["reader"] or "—", r["scoring"] or "—", r["n"], _ci(r, "a"),
            _ci(r, "b"), _stat(r), p_value_text(r.get("p_holm")), _verdict(r),
        ]

    for fam, title, keep in (
        ("F1", "F1 — answer-containing corpora vs QUIT", lambda r: True),
        ("F3", "F3 — Optimal vs oracle vs pipeline, per reader", lambda r: True),
        ("F2", "F2 — rerankers over BGE", lambda r: r["comparison"].endswith(" vs bge")),
        ("F5", "F5 — fine-tuned vs vanilla", lambda r: r["scoring"] in ("", "normalised")),
        (
            "reasoning reader", "The reasoning reader — Gemma 3 4B vs Qwen 3 8B, Optimal",
            lambda r: "Optimal" in r["comparison"],
        ),
    ):
        sel = [r for r in rows if r["family"] == fam and keep(r)]
        if not sel:
            continue
        lines += [f"{h}# {title}", ""]
        body = markdown_table(head, (cells(r) for r in sel))
        if len(sel) > 12:
            lines += [
                "<details><summary>" + f"{len(sel)} comparisons" + "</summary>", "", *body, "", "</details>",
            ]
        else:
            lines += body
        lines.append("")

    union_rows = [r for r in rows if r["family"] == "union"]
    if union_rows:
        lines += [
            f"{h}# Union_freq vs Union_norm (ours)",
            "",
            "Per reader, k and scoring: the released systems where Union_freq reads significantly better, "
            "significantly worse (Holm-adjusted p < 0.05), or neither.",
            "",
        ]
        groups: dict[tuple[str, str, str], list[int]] = {}
        for r in union_rows:
            sign = (
                0
                if _f(r.get("p_holm")) >= 0.05 or math.isnan(_f(r.get("p_holm")))
                else (1 if _f(r["value"]) > 0 else -1)
            )
            g = groups.setdefault((r["reader"], r["k"], r["scoring"]), [0, 0, 0, 0])
            g[0] += 1
            g[{1: 1, -1: 2, 0: 3}[sign]] += 1
        lines += [
            *markdown_table(
                [
                    "reader", "k", "scoring", "systems", "Union_freq better", "Union_norm better",
                    "no difference",
                ],
                ([rd, kk, sc, *g] for (rd, kk, sc), g in groups.items()),
            ),
            "",
        ]

    if em:
        lines += [
            f"{h}# Two scorings of EM",
            "",
            "The authors' EM is raw membership of the answer in the pool; ours normalises both (SQuAD). "
            "Questions where the two disagree:",
            "",
        ]
        opt = [e for e in em if e["setting"] == "Optimal"]
        lines += markdown_table(
            ["setting", "reader", "n", "EM raw (authors')", "EM normalised (ours)", "disagree"],
            (["Optimal", e["reader"], e["n"], e["em_raw"], e["em_norm"], e["n_disagree"]] for e in opt),
        )
        n_all = sum(int(e["n"]) for e in em)
        d_all = sum(int(e["n_disagree"]) for e in em)
        worst = max(em, key=lambda e: _f(e["delta"]))
        lines += [
            "",
            f"Over every released reading ({len(em)} system × reader × k × union cells, {n_all:,} answers): "
            f"{d_all:,} disagreements ({100 * d_all / max(n_all, 1):.2f} %); the largest gap is "
            f"{_f(worst['delta']):+.2f} points ("
            + (worst["setting"] if worst["setting"] == "Optimal" else worst["system"])
            + f", {worst['reader']}"
            + (f", k = {worst['k']}, Union_{worst['union']}" if worst.get("k") else "")
            + ").",
            "",
        ]
    lines += [
        f"Tables: `results/{_name('findings', dataset)}` (every comparison), "
        f"`results/{_name('em', dataset)}`, `results/{_name('retrieval', dataset)}` (every ranking scored as "
        "the authors' scripts score it).",
        "",
    ]
    return "\n".join(lines)


def section_for(folders: Iterable[str | Path], dataset: str = contract.DATASET) -> str:
    """The section for the first import among ``folders`` (results folders), or ``""``."""
    found = find_import(folders, dataset)
    return render_section(found, dataset) if found is not None else ""
