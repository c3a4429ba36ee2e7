"""Notebook 06's tables, figures and generated "what we found" sentences (paper 004 on QUIT).

The readings come from :mod:`inferqa_utils.damaging.incremental` and
:mod:`inferqa_utils.damaging.ser`, the curves and intervals from
:mod:`inferqa_utils.damaging.measures`; here they take the shapes of the paper's tables (Table 6:
:func:`probe_table`; the two corpora side by side: :func:`damaging_comparison`), become the
figures — :func:`plot_em_curves` (paper 004 Fig. 3 shape) and the long frames the generic plots of
:mod:`inferqa_utils.present.figures` draw (passage types per rank, probes with intervals, SER over
the number of added passages) — and the sentence that closes each section, every number computed
from the tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pandas as pd

from ..measure.paper import paper_value
from ..present.figures import INTERVAL_NOTE, error_bars
from ..present.sentences import ci, share
from .incremental import METRIC_LABELS, METRICS
from .patterns import TYPES, passage_types

if TYPE_CHECKING:
    import numpy as np

#: colours of the passage types in figures (negative types warm, positive types green)
TYPE_COLOURS = {"IZ": "#c9c9c9", "DP": "#5cb85c", "DN": "#d9534f", "SP": "#a3d9a5", "SN": "#f0ad4e"}
#: the columns of a probe table (:func:`probe_table`) drawn as bars
PROBE_READINGS = ("EM@N", "AcEM@N", *(f"Probe {i}" for i in range(1, 7)))


# ---------------------------------------------------------------- tables


def probe_table(curves: pd.DataFrame) -> pd.DataFrame:
    """Paper 004 Table 6 shape: one row per system × metric of
    :func:`~inferqa_utils.damaging.measures.probe_curves` at its largest probe k (= N)."""
    if curves.empty:
        return curves
    last = curves.loc[curves.groupby(["system", "metric"], sort=False)["k"].idxmax()].copy()
    last["metric"] = last["metric"].map({"em": "strict EM", "judged": "judged (Se)"})
    last = last.rename(columns={"EM": "EM@N", "AcEM": "AcEM@N", "k": "N"})
    return last.reset_index(drop=True)


def damaging_comparison(curves_by_corpus: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Answer-supporting vs answer-containing (one frame of
    :func:`~inferqa_utils.damaging.measures.probe_curves` per corpus): per
    system and corpus, EM@N, AcEM@N and the damaging effect ``AcEM@N − EM@N`` (strict and judged),
    with Probe 3@N. In points of %."""
    rows = []
    for corpus, curves in curves_by_corpus.items():
        if curves.empty:
            continue
        for system, g in curves.groupby("system", sort=False):
            row: dict = {"system": system, "corpus": corpus}
            for metric, (em_name, ac_name) in METRIC_LABELS.items():
                last = g[g["metric"] == metric].sort_values("k").iloc[-1]
                row["N"] = int(last["k"])
                row[f"{em_name}@N"] = last["EM"]
                row[f"{ac_name}@N"] = last["AcEM"]
                row[f"{ac_name} − {em_name}"] = round(last["AcEM"] - last["EM"], 2)
                if "Probe 3" in last:
                    row[f"Probe 3 ({em_name})"] = last["Probe 3"]
            row["n_questions"] = int(g["n_questions"].iloc[0])
            rows.append(row)
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- sentences and figure inputs


def _groups(df: pd.DataFrame):
    """``(label, rows)`` per system — per corpus and system when ``df`` holds several corpora."""
    several = "corpus" in df.columns and df["corpus"].nunique() > 1
    keys = ["corpus", "system"] if several else ["system"]
    for key, g in df.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        yield (f"{key[1]} on the {key[0]} corpus" if several else str(key[0])), g


def _types_of(row: pd.Series, metric: str) -> list[str]:
    pattern = str(row["em_pattern" if metric == "em" else "judged_pattern"])
    return passage_types(pattern)[: int(row["passages"])]


def types_by_rank(patterns: pd.DataFrame, metric: str = "em", system: str | None = None,
                  corpus: str | None = None) -> pd.DataFrame:
    """Passage types (paper 004 §5.1) per rank: index rank 1…N, one column per type (IZ, DP, DN,
    SP, SN), the number of questions whose passage at that rank has the type. ``patterns`` is
    :func:`~inferqa_utils.damaging.incremental.pattern_table` (one row per system and question);
    ``metric`` ``"em"`` types the strict pattern, ``"judged"`` the judge's; ``system`` and ``corpus``
    pick one retriever and corpus (default: the first of each)."""
    if patterns.empty:
        return pd.DataFrame(columns=list(TYPES))
    if "corpus" in patterns.columns:
        patterns = patterns[patterns["corpus"] == (corpus or patterns["corpus"].iloc[0])]
    system = system or str(patterns["system"].iloc[0])
    rows = []
    for _, r in patterns[patterns["system"] == system].iterrows():
        rows += [{"rank": i + 1, "type": t} for i, t in enumerate(_types_of(r, metric))]
    tab = pd.DataFrame(rows).pivot_table(index="rank", columns="type", aggfunc="size", fill_value=0)
    return tab.reindex(columns=list(TYPES), fill_value=0)


def incremental_sentence(patterns: pd.DataFrame) -> str:
    """Per retriever (strict EM patterns): how many questions are answered at some prefix k ≤ N
    (AcEM), how many with all N passages (EM@N), how many lose a correct answer by reading more,
    and how many distinct contexts the N prefixes needed."""
    parts = []
    for system, g in _groups(patterns):
        pats = g["em_pattern"].astype(str).tolist()
        n, big_n = len(pats), int(g["passages"].max())
        some = sum("1" in p for p in pats)
        at_n = sum(p[-1] == "1" for p in pats)
        lost = sum("1" in p and p[-1] == "0" for p in pats)
        prefixes, contexts = int(g["passages"].sum()), int(g["n_contexts"].sum())
        parts.append(
            f"{system}: {share(some, n)} are answered correctly from some prefix of the top {big_n} "
            f"passages, {at_n} from all {big_n}; {lost} lose a correct answer by reading further. "
            f"The {prefixes} prefixes gave {contexts} distinct contexts (a passage that adds no new hint "
            "repeats the previous context, which is read once)"
        )
    return "; ".join(parts) + "."


def curves_sentence(em_curves: pd.DataFrame) -> str:
    """Per retriever, strict EM@k over k (:func:`~inferqa_utils.damaging.measures.em_curves`):
    EM@1, the best k, EM@N and AcEM@N with their intervals, and the gap AcEM@N − EM@N beside
    paper 004's (NQ, DPR, FiD)."""
    parts = []
    for system, g in _groups(em_curves[em_curves["metric"] == "em"]):
        g = g.sort_values("k").reset_index(drop=True)
        first, last = g.iloc[0], g.iloc[-1]
        best = g.loc[g["EM"].idxmax()]
        parts.append(f"{system}: EM@1 {ci(first['EM'], first['EM_lo'], first['EM_hi'])}, highest at k = "
                     f"{int(best['k'])} ({best['EM']:.1f}), EM@{int(last['k'])} "
                     f"{ci(last['EM'], last['EM_lo'], last['EM_hi'])} while AcEM@{int(last['k'])} is "
                     f"{ci(last['AcEM'], last['AcEM_lo'], last['AcEM_hi'])} — a gap of "
                     f"{last['AcEM'] - last['EM']:.1f} points")
    em, acem = paper_value("damaging_passages", "b"), paper_value("damaging_passages")
    return (
        "; ".join(parts) + f". Paper 004 (NQ, DPR, FiD reader): EM@100 {em:g} vs AcEM@100 {acem:g}, a gap of "
        f"{acem - em:.1f} points."
    )


def types_sentence(types: pd.DataFrame, by_rank: pd.DataFrame | None = None) -> str:
    """The strict passage-type counts (:func:`~inferqa_utils.damaging.measures.type_table`), the
    share of questions with a damaging (DN) passage and, with ``by_rank``
    (:func:`types_by_rank`), the ranks where the DN passages sit."""
    parts = []
    for label, g in _groups(types[types["metric"] == "em"]):
        r = g.iloc[0]
        total = int(sum(int(r[t]) for t in TYPES))
        counts = ", ".join(f"{t} {int(r[t])}" for t in TYPES)
        with_dn = round(float(r["questions with DN (%)"]) * int(r["questions"]) / 100)
        parts.append(f"{label}: of {total} retrieved passages {counts}; "
                     f"{share(with_dn, int(r['questions']))} have at least one definite negative (DN)")
    text = "; ".join(parts) + "."
    if by_rank is not None and "DN" in by_rank and by_rank["DN"].sum():
        ranks = [str(i) for i, v in by_rank["DN"].items() if v]
        text += f" DN passages sit at rank{'s' if len(ranks) > 1 else ''} {', '.join(ranks)}."
    return text


def probe_bars(table6: pd.DataFrame, readings: Sequence[str] = PROBE_READINGS) -> pd.DataFrame:
    """The probe table at k = N (:func:`probe_table`) as long rows
    ``(panel, reading, value, lo, hi)`` for :func:`inferqa_utils.present.figures.interval_bars`: one panel
    per system and pattern (strict / judged), one bar per reading (EM@N, AcEM@N, Probe 1–6)."""
    stems = {"EM@N": "EM", "AcEM@N": "AcEM"}
    rows = []
    for _, r in table6.iterrows():
        where = f"{r['corpus']}, " if "corpus" in r and table6["corpus"].nunique() > 1 else ""
        for name in readings:
            if name not in r:
                continue
            stem = stems.get(name, name)
            rows.append({"panel": f"{where}{r['system']}, {r['metric']}, N = {int(r['N'])}", "reading": name,
                         "value": float(r[name]), "lo": float(r.get(f"{stem}_lo", float("nan"))),
                         "hi": float(r.get(f"{stem}_hi", float("nan")))})
    return pd.DataFrame(rows, columns=["panel", "reading", "value", "lo", "hi"])


def probes_sentence(table6: pd.DataFrame) -> str:
    """Per retriever (strict): Probe 3@N against EM@N and AcEM@N with intervals, how much of the
    gap it recovers, and the best probe; paper 004's numbers beside them."""
    parts = []
    for label, g in _groups(table6[table6["metric"] == "strict EM"]):
        r = g.iloc[0]
        em, ac, p3 = float(r["EM@N"]), float(r["AcEM@N"]), float(r["Probe 3"])
        probes = {f"Probe {i}": float(r[f"Probe {i}"]) for i in range(1, 7) if f"Probe {i}" in r}
        top = max(probes.values())
        best = [k for k, v in probes.items() if v == top]
        gap = ac - em
        rec = (f", recovering {p3 - em:.1f} of the {gap:.1f}-point gap" if gap > 0
               else ", with no gap to recover")
        parts.append(
            f"{label} (N = {int(r['N'])}): Probe 3 {ci(p3, r['Probe 3_lo'], r['Probe 3_hi'])} vs "
            f"EM@N {ci(em, r['EM_lo'], r['EM_hi'])} and AcEM@N {ci(ac, r['AcEM_lo'], r['AcEM_hi'])}{rec}; "
            f"the best {'probe is' if len(best) == 1 else 'probes are'} {', '.join(best)} ({top:.1f})"
        )
    p3, em = paper_value("probe3_recovers"), paper_value("probe3_recovers", "b")
    ac = paper_value("damaging_passages")
    return (
        "; ".join(parts) + f". Paper 004 (NQ, DPR): Probe 3@100 {p3:g} vs EM@100 {em:g} and AcEM@100 {ac:g}. "
        "The probes type passages with the known answer: an upper bound on filtering, not a method."
    )


def comparison_sentence(comp: pd.DataFrame) -> str:
    """One generated sentence: on which corpus the strict damaging effect AcEM@N − EM@N is larger, per
    system."""
    if comp.empty or comp["corpus"].nunique() < 2:
        return "Only one corpus was analysed: no answer-supporting vs answer-containing comparison."
    parts = []
    gap = "AcEM − EM"
    never = []
    for system, g in comp.groupby("system", sort=False):
        s = g.set_index("corpus")[gap]
        desc = ", ".join(f"{c} {v:.1f}" for c, v in s.items())
        top = s.idxmax() if s.nunique() > 1 else None
        parts.append(f"{system}: {desc} points" + (f" (larger on the {top} corpus)" if top else " (equal)"))
        never += [f"{system} on the {c} corpus" for c, v in g.set_index("corpus")["AcEM@N"].items() if v == 0]
    note = (
        f" No prefix is ever answered correctly ({'; '.join(never)}: AcEM@N = 0), so no passage there can be "
        "shown to damage an answer."
        if never
        else ""
    )

    em, acem, probe3 = paper_value("damaging_passages", "b"), paper_value("damaging_passages"), paper_value(
        "probe3_recovers")
    return ("Damaging effect AcEM@N − EM@N (strict): " + "; ".join(parts) + "." + note +
            f" Paper 004 (NQ, DPR, FiD): EM@100 {em:g} vs AcEM@100 {acem:g} ({acem - em:.1f} points); "
            f"Probe 3 {probe3:g}.")

def ser_reference() -> dict[str, float]:
    """Paper 004 Table 1's SER at m = 4 (NQ, FiD), for the dotted lines of the SER figure."""
    out = {}
    bm25, rnd = paper_value("ser_bm25_above_random"), paper_value("ser_bm25_above_random", "b")
    if bm25 is not None:
        out["paper 004: BM25 negatives, m = 4"] = bm25
    if rnd is not None:
        out["paper 004: random negatives, m = 4"] = rnd
    return out


def ser_sentence(long: pd.DataFrame, gold: dict[str, int], n_questions: int | Mapping[str, int]) -> str:
    """How many questions had a good passage read correctly per corpus (``gold``, of
    ``n_questions`` read — per corpus when a mapping), and SER at m = 1 and the largest m per
    setting with intervals (:func:`~inferqa_utils.damaging.ser.ser_long`), beside paper 004's Table 1."""
    of = n_questions if isinstance(n_questions, Mapping) else dict.fromkeys(gold, n_questions)
    start = "; ".join(f"{share(n, of[c])} on the {c} corpus" for c, n in gold.items())
    if long.empty:
        return (
            f"Answered correctly from one good passage alone: {start or 'none'} — the SER has nothing to "
            "start from."
        )
    parts = []
    for setting, g in long.groupby("setting", sort=False):
        g = g.sort_values("m")
        a, b = g.iloc[0], g.iloc[-1]
        parts.append(f"{str(setting).replace('SER w/ ', '')} negatives {ci(a['value'], a['lo'], a['hi'])} at "
                     f"m = {int(a['m'])}, {ci(b['value'], b['lo'], b['hi'])} at m = {int(b['m'])} "
                     f"({int(b['pairs'])} pairs)")
    lo_r = paper_value("ser_bm25_above_random", "b")
    lo_b = paper_value("ser_bm25_above_random", "SER with 1 BM25 negative (%)")
    hi_b = paper_value("ser_bm25_above_random")
    return (
        f"Answered correctly from one good passage alone: {start}. Added passages change that answer (SER, % "
        "of "
        "pairs): "
        + "; ".join(parts)
        + f". Paper 004 (NQ, FiD): random ≤ {lo_r:g} %, BM25 {lo_b:g}–{hi_b:g} %."
    )


# ---------------------------------------------------------------- figure


def plot_em_curves(curves_by_corpus: Mapping[str, pd.DataFrame],
                   probes_by_corpus: Mapping[str, pd.DataFrame] | None = None, title: str = ""):
    """Paper 004 Fig. 3 shape: EM@k (solid) vs AcEM@k (dashed) over k, one colour per system; one
    column per corpus, rows strict (EM/AcEM) and judged (SeEM/SeAcEM). With ``probes_by_corpus``
    (frames of :func:`~inferqa_utils.damaging.measures.probe_curves`), Probe 3@k is drawn as crosses
    (paper 004 Fig. 5/9). Every point carries its 95 % bootstrap interval over questions as an error
    bar (the ``_lo`` / ``_hi`` columns of :func:`~inferqa_utils.damaging.measures.em_curves` and
    :func:`~inferqa_utils.damaging.measures.probe_curves`, drawn with
    :func:`inferqa_utils.present.figures.error_bars`); the lines pass through the true k, EM bars sit
    a little left of k, AcEM bars (lighter) a little right, Probe 3 bars on k."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    corpora = [c for c, df in curves_by_corpus.items() if not df.empty]
    if not corpora:
        raise ValueError("no EM curves to plot")
    fig, axes = plt.subplots(len(METRICS), len(corpora), figsize=(5.2 * len(corpora), 3.6 * len(METRICS)),
                             sharey=True, squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]

    def bars(g: pd.DataFrame, col: str) -> np.ndarray | None:
        return error_bars(g[col], g[f"{col}_lo"], g[f"{col}_hi"]) if f"{col}_lo" in g else None

    bar_style = {"elinewidth": 0.7, "capsize": 2}
    for j, corpus in enumerate(corpora):
        df = curves_by_corpus[corpus]
        pc = (probes_by_corpus or {}).get(corpus)
        for i, metric in enumerate(METRICS):
            ax = axes[i][j]
            em_name, ac_name = METRIC_LABELS[metric]
            sub = df[df["metric"] == metric]
            for c, (system, g) in enumerate(sub.groupby("system", sort=False)):
                col = colours[c % len(colours)]
                ax.plot(g["k"], g["EM"], color=col, marker="o", ms=2.5, label=f"{system} {em_name}@k")
                ax.plot(g["k"], g["AcEM"], color=col, ls="--", label=f"{system} {ac_name}@k")
                ax.errorbar(g["k"] - 0.12, g["EM"], yerr=bars(g, "EM"), fmt="none", ecolor=col, **bar_style)
                ax.errorbar(g["k"] + 0.12, g["AcEM"], yerr=bars(g, "AcEM"), fmt="none", ecolor=col, alpha=0.6,
                            **bar_style)
                if pc is not None and "Probe 3" in pc:
                    pg = pc[(pc["system"] == system) & (pc["metric"] == metric)]
                    ax.errorbar(
                        pg["k"],
                        pg["Probe 3"],
                        yerr=bars(pg, "Probe 3"),
                        color=col, ls="none", marker="x", ms=7,
                        label=f"{system} Probe 3@k",
                        **bar_style,
                    )
            ax.set_ylim(-3, 103)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            n = int(sub["n_questions"].max()) if len(sub) else 0
            ax.set_title(f"{corpus}: {em_name} vs {ac_name} ({n} questions)", fontsize=10)
            ax.set_xlabel("k (top-k passages read)")
            ax.grid(alpha=0.3)
            if j == 0:
                ax.set_ylabel("% of questions")
            ax.legend(fontsize=7)
    fig.suptitle(f"{title}\n{INTERVAL_NOTE}" if title else INTERVAL_NOTE)
    fig.tight_layout()
    return fig
