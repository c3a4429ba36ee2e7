"""What notebook 09 shows of the paper's own runs: where the release is found, the import's tables
read back, the views the notebook displays, the sentences that close its sections and a forest
plot per family of findings.

:func:`locate` decides what the notebook reads — a release folder it was given, an earlier import
of the dataset, the copy :func:`~inferqa_utils.paper_runs.fetch.fetch` leaves in its cache, or a
fresh download when asked — and, when there is none, says how to get one, without network unless
asked (the notebook runs under every profile, so with no release it must end in a second).
:func:`load_import` reads an import's stage-09 tables (:data:`~inferqa_utils.paper_runs.contract.OWN_TABLES`).

The tables and figures show a *focus* of each family (:data:`FOCUS`): the release holds hundreds
of comparisons (5 retrievers × 15 rerankers × 3 readers × 2 scorings in F2 alone), so a family's
table and forest plot keep the paper's headline ones — BGE as first stage, Gemma 3 4B as reader —
while its sentence (:func:`family_found`) counts every comparison of the findings table.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import contract

if TYPE_CHECKING:
    import pandas as pd

#: the general-purpose reader and the first stage the paper's headline numbers use (paper 000 §5.4)
GENERAL_READER, HEADLINE_FIRST_STAGE = "gemma-3-4b", "bge"
#: the families in the notebook's order, with their titles
FAMILIES = {
    "F1": "F1 — answer-containing corpora vs QUIT (Hit@100, label 2)",
    "F2": "F2 — rerankers over the first stage",
    "F3": "F3 — Optimal vs oracle vs pipeline, per reader",
    "F5": "F5 — fine-tuned vs vanilla",
    "reasoning reader": "The reasoning reader — Gemma 3 4B vs Qwen 3 8B",
    "union": "Union_freq vs Union_norm (ours, no paper claim)",
}
#: how each scoring is named in the figures' legends, and in the sentences
SCORING_LABELS = {"": "retrieval", "normalised": "EM normalised (ours)", "raw": "EM raw (authors')"}
SCORING_WORDS = {"normalised": "our normalised EM", "raw": "the authors' raw EM"}
#: the retrieval measures the notebook shows (the table holds every Hit@k and Recall@k)
VIEW_MEASURES = ("Hit@1", "Hit@10", "Hit@100", "Recall@100", "MRR@100", "nDCG@10")
#: rows a family's figure draws at most (the table and the sentence keep every focused comparison)
MAX_FIGURE_ROWS = 40

HOW_TO_GET = (
    "To score the paper's own runs: on a machine that reaches the Hugging Face hub, run "
    "`python -m inferqa_utils paper-runs fetch` (or run this notebook with `-p fetch_release=true`, as "
    "the paper-runs profile does); offline, copy the folder `results/` of the hub dataset "
    "`JamshidJDMY/InferentialQA` to this machine (its .zsd files, or the decompressed .json/.jsonl "
    "files) and run `python -m inferqa_utils run --profile paper-runs -p paper_runs_dir=DIR`, or "
    "`python -m inferqa_utils paper-runs import DIR` and then this notebook. docs/paper_runs.md lists "
    "the files."
)


# ----------------------------------------------------------------------------- where the release is


@dataclass
class Located:
    """What the notebook reads: ``how`` is ``given``, ``cache`` or ``fetched`` (``folder``, a release
    to import), ``import`` (an earlier import of the dataset, read as it is) or ``none``;
    ``message`` says which, or how to get a release."""

    how: str
    folder: Path | None
    message: str

    @property
    def found(self) -> bool:
        """Whether there is something to show (a release to import, or an import)."""
        return self.how != "none"


def _import_parameters(dataset: str, root: str | Path | None) -> dict[str, Any] | None:
    """The parameters of the earlier import of ``dataset`` (its record), ``{}`` when it has no
    record, ``None`` when there is no import (no findings table)."""
    if not contract.table_path(root, contract.FINDINGS, dataset).exists():
        return None
    record = contract.table_path(root, contract.RECORD, dataset)
    try:
        return dict(json.loads(record.read_text(encoding="utf-8")).get("parameters") or {})
    except (OSError, ValueError, AttributeError):
        return {}


def locate(
    paper_runs_dir: str | Path | None, fetch_release: bool = False, dataset: str = contract.DATASET,
    k: int | None = None, union: str | None = None, root: str | Path | None = None,
    cache: str | Path | None = None, log: Callable[[str], Any] = print,
) -> Located:
    """The release notebook 09 reads: ``paper_runs_dir`` when given; else an earlier import of
    ``dataset`` under ``root`` (its findings table exists) made at ``k`` and ``union`` (``None``:
    any); else the copy ``fetch`` left in ``cache`` (default
    :data:`~inferqa_utils.paper_runs.fetch.DEFAULT_DIR`); else, with ``fetch_release``, a download
    into ``cache`` (offline: the hub error within seconds); else an earlier import made at another
    k or union, as it is. Nothing found: ``how == "none"`` and the message says how to get the
    release (:data:`HOW_TO_GET`). No network is tried unless ``fetch_release``."""
    from .fetch import DEFAULT_DIR

    if paper_runs_dir:
        return Located("given", Path(paper_runs_dir), f"The release copy {paper_runs_dir} is imported.")
    findings = contract.table_path(root, contract.FINDINGS, dataset)
    earlier = _import_parameters(dataset, root)
    wanted = {n: v for n, v in (("k", k), ("union", union)) if v is not None}
    if earlier is not None and all(earlier.get(n) == v for n, v in wanted.items()):
        return Located("import", None, f"Reading the earlier import of dataset {dataset} ({findings.name}); "
                       "pass paper_runs_dir to import a release again.")
    cache = Path(cache) if cache is not None else DEFAULT_DIR
    cached = cache / "results"
    if (cached / "index").is_dir():
        return Located("cache", cached, f"The release fetched earlier into {cached} is imported.")
    offline = ""
    if fetch_release:
        from ..core.errors import OfflineError
        from .fetch import fetch

        try:
            return Located("fetched", fetch(cache, log=log), f"The release was fetched into {cached}.")
        except OfflineError as exc:
            offline = f"{exc}\n\n"
    if earlier is not None:
        made = ", ".join(f"{n} = {earlier.get(n)!r}" for n in wanted)
        return Located("import", None, f"{offline}Reading the earlier import of dataset {dataset} "
                       f"({findings.name}), made at {made}: no release copy is here to import again.")
    if offline:
        return Located("none", None, offline + HOW_TO_GET)
    return Located(
        "none", None,
        f"No copy of the paper's released runs here: no import of dataset {dataset} ({findings.name} is "
        f"missing) and nothing in {cached}. {HOW_TO_GET}",
    )


# ----------------------------------------------------------------------------- the import's tables


@dataclass
class Shown:
    """An import's stage-09 tables, read back: every ranking as the authors score it, both EMs, the
    comparisons and their verdict counts, and the import's record (what was read)."""

    dataset: str
    record: dict[str, Any]
    retrieval: pd.DataFrame
    em: pd.DataFrame
    findings: pd.DataFrame
    summary: pd.DataFrame

    @property
    def k(self) -> int | None:
        """The top-k passages of the import's EM comparisons (its record's parameters)."""
        return self.record.get("parameters", {}).get("k")

    @property
    def union(self) -> str | None:
        """The union (``norm`` or ``freq``) of the import's EM comparisons."""
        return self.record.get("parameters", {}).get("union")


def load_import(dataset: str = contract.DATASET, root: str | Path | None = None) -> Shown | None:
    """The stage-09 tables of the import of ``dataset`` under ``root``, or ``None`` when there is
    no import (its findings table is missing)."""
    paths = {t.key: contract.table_path(root, t, dataset) for t in contract.OWN_TABLES}
    if not paths[contract.FINDINGS.key].exists():
        return None
    import pandas as pd

    def csv(table: Any) -> pd.DataFrame:
        p = paths[table.key]
        return pd.read_csv(p, keep_default_na=False, na_values=[""]) if p.exists() else pd.DataFrame()

    rec_path = paths[contract.RECORD.key]
    record = json.loads(rec_path.read_text(encoding="utf-8")) if rec_path.exists() else {}
    findings = csv(contract.FINDINGS)
    for col in ("finding", "reader", "scoring", "union", "verdict", "why"):
        if col in findings:
            findings[col] = findings[col].fillna("").astype(str)
    return Shown(dataset, record, csv(contract.RETRIEVAL), csv(contract.EM), findings, csv(contract.SUMMARY))


def import_line(shown: Shown) -> str:
    """One line on what the import read: questions, rankings, reader files, readers, k and union."""
    r = shown.record
    return (
        f"Import of dataset {shown.dataset}: {r.get('questions', '?')} questions, {r.get('rankings', '?')} "
        f"rankings, {r.get('readings', '?')} reader files, readers {', '.join(r.get('readers', [])) or '?'}; "
        f"EM compared at the top {shown.k} passages, Union_{shown.union}"
        + (f"; imported {r['date'][:10]} from {r.get('source')}" if r.get("date") else "")
        + "."
    )


# ----------------------------------------------------------------------------- retrieval


def _kind(setting: str, system: str) -> str:
    if setting == "oracle":
        return "oracle"
    return "reranked" if "+" in system else "first stage"


def retrieval_view(shown: Shown, threshold: int = 1, corpus: str = "quit", top: int | None = 12
                   ) -> pd.DataFrame:
    """The released rankings of one corpus at one relevance threshold as the authors score them
    (:data:`VIEW_MEASURES` in %, ``n`` the questions Hit and Recall average over): every first stage,
    then the ``top`` reranked and oracle rankings by nDCG@10 (``None``: all)."""
    import pandas as pd

    t = shown.retrieval
    if t.empty:
        return t
    t = t[(t["corpus"] == corpus) & (t["threshold"] == threshold)]
    t = t.assign(kind=[_kind(s, y) for s, y in zip(t["setting"], t["system"], strict=True)])
    parts = []
    for kind in ("first stage", "reranked", "oracle"):
        part = t[t["kind"] == kind].sort_values("nDCG@10", ascending=False, kind="stable")
        parts.append(part if kind == "first stage" or top is None else part.head(top))
    cols = ["kind", "system", "list", *(m for m in VIEW_MEASURES if m in t.columns), "n"]
    return pd.concat(parts)[cols].set_index(["kind", "system"])


def retrieval_found(shown: Shown) -> str:
    """The sentence closing the retrieval section: the best first stage and the best reranking on
    Hit@10 (label ≥ 1) against BM25 and their first stage, and Hit@100 at label 2 on each corpus
    for the retrievers the baselines share — point estimates, as the authors report them."""
    t = shown.retrieval
    if t.empty:
        return "The import holds no ranking."
    quit1 = t[(t["corpus"] == "quit") & (t["threshold"] == 1)]
    first = quit1[[_kind(s, y) == "first stage" for s, y in zip(quit1["setting"], quit1["system"],
                                                                 strict=True)]]
    out = []
    if not first.empty:
        best = first.loc[first["Hit@10"].idxmax()]
        bm25 = first[first["system"] == "bm25"]
        out.append(
            f"On QUIT (relevant = label ≥ 1) the best first stage on Hit@10 is **{best['system']}** with "
            f"{best['Hit@10']:.2f} % over {int(best['n'])} questions"
            + (f" (BM25 {float(bm25['Hit@10'].iloc[0]):.2f} %)." if len(bm25) and best["system"] != "bm25"
               else ".")
        )
    reranked = quit1[["+" in y and s != "oracle" for s, y in zip(quit1["setting"], quit1["system"],
                                                                  strict=True)]]
    if not reranked.empty:
        best = reranked.loc[reranked["Hit@10"].idxmax()]
        base = first[first["system"] == str(best["system"]).split("+", 1)[0]]
        out.append(
            f"The best reranked ranking is **{best['system']}** with Hit@10 {best['Hit@10']:.2f} %"
            + (f" against its first stage's {float(base['Hit@10'].iloc[0]):.2f} %." if len(base) else ".")
        )
    two = t[t["threshold"] == 2]
    for system in sorted(set(two.loc[two["corpus"] != "quit", "system"])):
        own = two[(two["system"] == system)].set_index("corpus")["Hit@100"]
        if "quit" in own and len(own) > 1:
            others = ", ".join(f"{c} {v:.2f} %" for c, v in own.items() if c != "quit")
            out.append(f"{system} at label 2, Hit@100: QUIT {own['quit']:.2f} % vs {others}.")
    return " ".join(out) + " Intervals and tests are in the findings below."


# ----------------------------------------------------------------------------- the two EMs


def em_view(shown: Shown, top: int = 15) -> pd.DataFrame:
    """Both EM scorings per setting, system and reader: the Optimal rows and, at the import's k and
    union, the ``top`` readings with the most disagreements."""
    import pandas as pd

    e = shown.em
    if e.empty:
        return e
    opt = e[e["setting"] == "Optimal"]
    at = e[(e["setting"] != "Optimal") & (e["k"] == shown.k) & (e["union"] == shown.union)]
    at = at.sort_values(["n_disagree", "system"], ascending=[False, True], kind="stable").head(top)
    cols = ["setting", "system", "reader", "k", "union", "n", "em_raw", "em_norm", "delta", "n_disagree",
            "norm_only", "raw_only"]
    return pd.concat([opt, at])[cols].rename(
        columns={"em_raw": "EM raw (authors')", "em_norm": "EM normalised (ours)"}
    ).reset_index(drop=True)


def em_found(shown: Shown) -> str:
    """The sentence closing the EM section: how often the authors' raw membership and our
    normalised EM disagree over every released answer, in which direction, and the largest gap."""
    from ..present.sentences import share

    e = shown.em
    if e.empty:
        return "The import holds no reading."
    n, d = int(e["n"].sum()), int(e["n_disagree"].sum())
    no, ro = int(e["norm_only"].sum()), int(e["raw_only"].sum())
    worst = e.loc[e["delta"].abs().idxmax()]
    where = ("Optimal" if worst["setting"] == "Optimal" else str(worst["system"])) + f", {worst['reader']}"
    if worst["setting"] != "Optimal":
        where += f", k = {int(worst['k'])}, Union_{worst['union']}"
    return (
        f"Over every released reading ({len(e)} setting × system × reader × k × union cells) the two EMs "
        f"disagree on {share(d, n, 'answers')}: ours counts {no} answers the authors' raw membership "
        f"misses and misses {ro} it counts. The largest gap is {float(worst['delta']):+.2f} points "
        f"(ours − theirs; {where})."
    )


# ----------------------------------------------------------------------------- the findings


def _system(family: str, comparison: str) -> str:
    """The system a reader or union comparison is about: ``"gemma-3-4b, bge vs qwen-3-8b, bge"`` →
    ``"bge"`` (reasoning reader), ``"bge, Union_freq vs bge, Union_norm"`` → ``"bge"`` (union)."""
    a = comparison.split(" vs ", 1)[0]
    if family == "reasoning reader":
        return a.split(", ", 1)[-1]
    return a.split(", ", 1)[0] if family == "union" else a


def _focus(family: str, r: Mapping[str, Any], k: int | None) -> bool:
    reader = str(r.get("reader") or "")
    general = reader in ("", GENERAL_READER)
    if family == "F2":
        return str(r["comparison"]).endswith(f" vs {HEADLINE_FIRST_STAGE}") and general
    if family == "F5":
        return general
    if family == "reasoning reader":
        return "+" not in _system(family, str(r["comparison"]))
    if family == "union":
        s = _system(family, str(r["comparison"]))
        return reader == GENERAL_READER and (k is None or r.get("k") == k) and (
            "+" not in s or s.startswith(f"{HEADLINE_FIRST_STAGE}+"))
    return True


#: per family, which comparisons its table and figure show (module docstring)
FOCUS = {
    "F1": "every comparison",
    "F2": "first stage BGE; EM of Gemma 3 4B",
    "F3": "every comparison",
    "F5": "Hit@10, nDCG@10 and EM of Gemma 3 4B",
    "reasoning reader": "Optimal and the first stages",
    "union": "Gemma 3 4B at the import's k; the first stages and BGE's rerankings",
}


def family_rows(shown: Shown, family: str, focus: bool = True) -> pd.DataFrame:
    """The comparisons of one family (:data:`FOCUS` when ``focus``)."""
    t = shown.findings
    t = t[t["family"] == family] if not t.empty else t
    if focus and not t.empty:
        t = t[[_focus(family, r, shown.k) for r in t.to_dict("records")]]
    return t


def _cell(value: Any, lo: Any, hi: Any, digits: int) -> str:
    from ..present.sentences import ci

    return ci(value, lo, hi, digits)


#: the columns of :func:`family_table`
FAMILY_COLUMNS = (
    "comparison", "metric", "reader", "scoring", "n", "a [95 %]", "b [95 %]", "statistic [95 %]", "p",
    "p (Holm)", "verdict", "why",
)


def family_table(shown: Shown, family: str, focus: bool = True) -> pd.DataFrame:
    """One family's comparisons as the notebook shows them: a and b in % with their 95 % intervals,
    the statistic (difference in points, or ratio) with its paired interval, the paired
    randomization p and its Holm adjustment within the family (the results page's p format,
    :func:`inferqa_utils.present.tables.p_value_text`), the verdict and why."""
    import pandas as pd

    from ..present.tables import p_value_text

    t = family_rows(shown, family, focus)
    rows = []
    for r in t.to_dict("records"):
        digits = 3 if r.get("statistic") == "ratio" else 1
        rows.append({
            "comparison": r["comparison"], "metric": r["metric"], "reader": r["reader"] or "—",
            "scoring": r["scoring"] or "—", "n": r["n"], "a [95 %]": _cell(r["a"], r["a_lo"], r["a_hi"], 1),
            "b [95 %]": _cell(r["b"], r["b_lo"], r["b_hi"], 1),
            "statistic [95 %]": _cell(r["value"], r["lo"], r["hi"], digits), "p": p_value_text(r["p"]),
            "p (Holm)": p_value_text(r["p_holm"]), "verdict": r["verdict"] or "—", "why": r["why"],
        })
    return pd.DataFrame(rows, columns=list(FAMILY_COLUMNS))


def family_found(shown: Shown, family: str) -> str:
    """The sentence closing a family's section, over every comparison of the family (not only the
    focus): how many hold, are contradicted or are inconclusive per finding, and the comparisons
    whose verdict changes between the authors' raw EM and ours; for the union family (no verdicts),
    in how many readings Union_freq reads significantly better or worse than Union_norm."""
    from ..present.sentences import ALPHA

    t = family_rows(shown, family, focus=False)
    if t.empty:
        return f"The release has no file this family compares ({FAMILIES.get(family, family)})."
    if family == "union":
        out = []
        for scoring, g in t.groupby("scoring", sort=False):
            sig = g["p_holm"].astype(float) < ALPHA
            better, worse = int((sig & (g["value"] > 0)).sum()), int((sig & (g["value"] < 0)).sum())
            out.append(
                f"With {SCORING_WORDS.get(scoring, scoring)} Union_freq reads significantly better than "
                f"Union_norm in {better} and worse in {worse} of {len(g)} readings (Holm-adjusted p < "
                f"{ALPHA:g})."
            )
        return " ".join(out)
    parts = []
    for (finding, metric), g in t.groupby(["finding", "metric"], sort=False):
        counts = g["verdict"].value_counts()
        parts.append(
            f"`{finding}` ({metric}, {len(g)} comparison{'s' * (len(g) > 1)}): "
            + ", ".join(f"{v} {int(counts.get(v, 0))}" for v in (contract.HOLDS, contract.CONTRADICTED,
                                                                     contract.INCONCLUSIVE))
        )
    text = "; ".join(parts) + "."
    em = t[t["scoring"] != ""]
    if not em.empty:
        key = ["finding", "comparison", "metric", "reader", "k", "union"]
        em = em.assign(**{c: em[c].astype(str) for c in key})
        wide = em.pivot_table(index=key, columns="scoring", values="verdict", aggfunc="first")
        if {"normalised", "raw"} <= set(wide.columns):
            changed = wide[wide["normalised"] != wide["raw"]].reset_index()
            text += (
                f" The verdict changes with the EM scoring in {len(changed)} of {len(wide)} EM comparisons"
                + (
                    ": " + "; ".join(
                        f"{r['comparison']} ({r['reader']}): {r['raw']} under the authors' EM, "
                        f"{r['normalised']} under ours"
                        for r in changed.head(3).to_dict("records")
                    )
                    + ("; …" if len(changed) > 3 else "")
                    if len(changed) else ""
                )
                + "."
            )
    return text


def _label(family: str, r: Mapping[str, Any]) -> str:
    system = _system(family, str(r["comparison"]))
    if family == "reasoning reader":
        return f"{system} · {r['metric']}"
    if family == "union":
        return f"{system} · {r['reader']} · k = {int(r['k'])}"
    reader = f" · {r['reader']}" if r.get("reader") else ""
    return f"{r['comparison']} · {r['metric']}{reader}"


def family_forest(shown: Shown, family: str, folder: str | Path | None = None) -> Path | None:
    """The forest plot of one family's focused comparisons (:data:`FOCUS`, at most
    :data:`MAX_FIGURE_ROWS` rows): a row per comparison, its statistic with the 95 % interval under
    each scoring (one colour each; the marker is the verdict), the region the finding's rule states
    shaded (:func:`inferqa_utils.present.figures.findings_forest`). Written to ``<folder or figures/>/<the
    findings table's stem>_<family>.png``; ``None`` when the family has nothing to draw."""
    from ..core.config import PATHS
    from ..present.figures import ForestPoint, ForestRow, findings_forest
    from .findings import findings_by_id

    t = family_rows(shown, family)
    t = t[t["value"].notna()] if not t.empty else t
    if t.empty:
        return None
    rules = findings_by_id()
    rows: dict[str, ForestRow] = {}
    points = []
    for r in t.to_dict("records"):
        label = _label(family, r)
        if label not in rows:
            if len(rows) == MAX_FIGURE_ROWS:
                continue
            f = rules.get(r["finding"])
            region = f.region()[:2] if f is not None else None
            marks = (0.0,) if f is not None and f.relation == "adds little" else ()
            rows[label] = ForestRow(label, str(r["statistic"]), region, marks)
        points.append(ForestPoint(label, SCORING_LABELS.get(r["scoring"], r["scoring"]), float(r["value"]),
                                  float(r["lo"]), float(r["hi"]), r["verdict"]))
    scorings = [SCORING_LABELS[s] for s in SCORING_LABELS if SCORING_LABELS[s] in {p.profile for p in points}]
    stem = contract.FINDINGS.path(shown.dataset, contract.SPLIT).stem
    slug = family.lower().replace(" ", "-")
    out = Path(folder or PATHS.figures) / f"{stem}_{slug}.png"
    findings_forest(list(rows.values()), points, scorings, out, svg=False)
    return out
