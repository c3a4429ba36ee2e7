"""Notebook 06's figure inputs and generated "what we found" sentences (paper 004 on QUIT).

The tables come from :mod:`inferqa_utils.damaging.incremental` and :mod:`inferqa_utils.damaging.ser`;
here they become the long frames the generic plots of :mod:`inferqa_utils.present.figures` draw
(passage types per rank, probes with intervals, SER over the number of added passages) and the
sentence that closes each section, every number computed from the tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from ..measure.paper import paper_value
from ..measure.uncertainty import mean_ci
from ..present.sentences import ci, share
from .patterns import TYPES, passage_types

#: colours of the passage types in figures (negative types warm, positive types green)
TYPE_COLOURS = {"IZ": "#c9c9c9", "DP": "#5cb85c", "DN": "#d9534f", "SP": "#a3d9a5", "SN": "#f0ad4e"}
#: the columns of a probe table (:func:`inferqa_utils.damaging.incremental.probe_table`) drawn as bars
PROBE_READINGS = ("EM@N", "AcEM@N", *(f"Probe {i}" for i in range(1, 7)))


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
    """Per retriever, strict EM@k over k (:func:`~inferqa_utils.damaging.incremental.em_curves`):
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
    """The strict passage-type counts (:func:`~inferqa_utils.damaging.incremental.type_table`), the
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
    """The probe table at k = N (:func:`~inferqa_utils.damaging.incremental.probe_table`) as long rows
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


def ser_long(readings: pd.DataFrame) -> pd.DataFrame:
    """SER(m) with seeded 95 % bootstrap intervals over (question, sample) pairs: long rows
    ``(setting, m, value, lo, hi, pairs)``, SER in % = mean of the per-pair 0/1 ``changed``
    (:func:`~inferqa_utils.damaging.ser.ser_inference`), for
    :func:`inferqa_utils.present.figures.interval_lines`."""
    several = "corpus" in readings.columns and readings["corpus"].nunique() > 1
    keys = ["corpus", "kind", "m"] if several else ["kind", "m"]
    rows = []
    for key, g in readings.groupby(keys, sort=False):
        *corpus, kind, m = key
        iv = mean_ci(
            g["changed"].astype(str).str.lower().isin(["true", "1"]).astype(float).to_numpy()
        ).scaled(100)
        rows.append(
            {
                "setting": (f"{corpus[0]}: " if corpus else "") + f"SER w/ {kind}",
                "m": int(m),
                "value": round(iv.value, 2),
                "lo": round(iv.lo, 2),
                "hi": round(iv.hi, 2),
                "pairs": len(g),
            }
        )
    return pd.DataFrame(rows, columns=["setting", "m", "value", "lo", "hi", "pairs"])


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
    setting with intervals (:func:`ser_long`), beside paper 004's Table 1."""
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
