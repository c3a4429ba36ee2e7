"""Tables, figures and the generated summary of notebook 04 (paper 000 Table 8, Figs. 5–6)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from ..ir.datamodel import Dataset
from ..ir.runs import ranked_ids
from ..measure.paper import load_paper_numbers
from ..measure.uncertainty import as_outcome, paired_difference
from ..present.sentences import ci

SETTING_ORDER = ("Optimal", "oracle", "pipeline")


def table8(em: pd.DataFrame, value: str = "EM") -> pd.DataFrame:
    """Paper Table 8 shape from :func:`inferqa_utils.reading.conditions.em_table`: rows reader × setting ×
    system, columns (union, k); Optimal (no k / union) appears under its own column."""
    rows = em[em["setting"] != "Optimal"]
    t = rows.pivot_table(
        index=["reader", "setting", "system"],
        columns=["union", "k"],
        values=value, sort=False, aggfunc="first",
    )
    t.columns = [f"{u} k={int(k)}" for u, k in t.columns]
    opt = em[em["setting"] == "Optimal"].set_index(["reader", "setting", "system"])[value].rename("Optimal")
    return pd.concat([t, opt], axis=0).sort_index(level=[0], sort_remaining=False) if len(opt) else t


def with_interval(em: pd.DataFrame, value: str = "EM") -> pd.DataFrame:
    """``em`` plus a text column ``"<value> [95 % CI]"`` ("12.5 [4.2, 22.9]") for :func:`table8`."""
    col = f"{value} [95 % CI]"
    text = [
        f"{v:.1f} [{lo:.1f}, {hi:.1f}]"
        for v, lo, hi in zip(em[value], em[f"{value}_lo"], em[f"{value}_hi"], strict=True)
    ]
    return em.assign(**{col: text})


def optimal_note(readers: Sequence[str], labelers: Sequence[str]) -> str:
    """What Optimal means for each reader (paper 000 §5.4). A reader that is also a labeler reads
    the very passages it labelled with the very prompt, so its Optimal equals "the question has a
    label-2 passage that this model produced" — true by construction of the labels, not a
    measurement of reading. Only readers that are not labelers measure Optimal independently."""
    parts = []
    for r in readers:
        if r in labelers:
            parts.append(
                f"**{r}** is a labeler of this build: its Optimal = the share of questions with a label-2 "
                "passage it produced itself (by construction, not an independent measurement)"
            )
        else:
            parts.append(
                f"**{r}** is not a labeler: its Optimal is an independent reading of every label ≥ 1 passage"
            )
    if not any(r not in labelers for r in readers):
        parts.append("no reader here is independent of the labels — add one with `-p reader_models=[...]`")
    return "Optimal: " + "; ".join(parts) + "."


def best_per_setting(em: pd.DataFrame, value: str = "EM") -> pd.DataFrame:
    """Per reader and setting, the best configuration (system, k, union) and its score."""
    idx = em.groupby(["reader", "setting"])[value].idxmax()
    out = em.loc[idx, ["reader", "setting", "system", "k", "union", value, "judged", "no_answer", "n"]]
    order = {s: i for i, s in enumerate(SETTING_ORDER)}
    return out.sort_values(["reader", "setting"], key=lambda c: c.map(order) if c.name == "setting" else c) \
        .reset_index(drop=True)


def pattern_holds(best: pd.DataFrame, value: str = "EM") -> dict[str, bool | None]:
    """Whether Optimal > oracle > pipeline (best configurations, ``value``) holds, per reader
    (None when a setting is missing). "≫" is not tested, only the strict ordering."""
    out: dict[str, bool | None] = {}
    for reader, g in best.groupby("reader"):
        s = g.set_index("setting")[value]
        if not all(k in s for k in SETTING_ORDER):
            out[reader] = None
        else:
            out[reader] = bool(s["Optimal"] > s["oracle"] > s["pipeline"])
    return out


def pattern_sentences(best: pd.DataFrame, paper: Mapping[str, float] | None = None, value: str = "EM") -> str:
    """One or two generated sentences: our best EM per setting, the paper's, and whether the
    qualitative pattern Optimal ≫ oracle > pipeline holds here."""
    holds = pattern_holds(best, value)
    parts = []
    for reader, g in best.groupby("reader", sort=False):
        s = g.set_index("setting")
        nums = ", ".join(f"{st} {s.loc[st, value]:.1f}%" for st in SETTING_ORDER if st in s.index)
        verdict = {True: "the paper's pattern Optimal > oracle > pipeline holds",
                   False: "the paper's pattern Optimal > oracle > pipeline does not hold",
                   None: "not every setting was run, so the pattern cannot be checked"}[holds[reader]]
        parts.append(f"With {reader} as reader, best {value}: {nums} — {verdict}.")
    if paper:
        parts.append(
            "Paper (paper 000 §5.4, Table 8): " + ", ".join(f"{k} {v:.2f}%" for k, v in paper.items()) + "."
        )
    return " ".join(parts)


def first_passage_hints(
    ds: Dataset, runs: Mapping[str, Mapping[str, list]], qids: Sequence[str]
) -> pd.DataFrame:
    """Fig. 6 (left): number of hints in the passage each run ranks first, per question
    (only passages of the built corpus)."""
    rows = []
    for name, run in runs.items():
        for qid in qids:
            top = ranked_ids(run, qid, 1)
            if top and top[0] in ds.passages:
                rows.append({"source": name, "qid": qid, "n_hints": ds.passages[top[0]].n_hints})
    return pd.DataFrame(rows, columns=["source", "qid", "n_hints"])


#: the ``source`` of the passages read correctly under Optimal in :func:`hint_passages`
OPTIMAL_CORRECT = "Optimal: correct passages"


def hint_passages(first: pd.DataFrame, optimal_rows: pd.DataFrame) -> pd.DataFrame:
    """Paper 000 Fig. 6 per passage: ``source, reader, qid, n_hints`` of the passages each run ranks
    first (:func:`first_passage_hints`; no reader) and of those read correctly (judged) under
    Optimal (source :data:`OPTIMAL_CORRECT`, per reader) — what :func:`hint_distribution` counts and
    the finding ``full_passages_under_optimal`` compares."""
    correct = optimal_rows[optimal_rows["judged"].astype(bool)] if len(optimal_rows) else optimal_rows
    cols = ["source", "reader", "qid", "n_hints"]
    return pd.concat([
        first.assign(reader="")[cols] if len(first) else pd.DataFrame(columns=cols),
        correct.assign(source=OPTIMAL_CORRECT)[cols] if len(correct) else pd.DataFrame(columns=cols),
    ], ignore_index=True)


def hint_distribution(passages: pd.DataFrame) -> pd.DataFrame:
    """Share (%) of passages with 1, 2, … hints per source of :func:`hint_passages`: ranked first
    by each run vs read correctly (judged) under Optimal."""
    if passages.empty:
        return pd.DataFrame()
    t = pd.crosstab(passages["source"], passages["n_hints"], normalize="index") * 100
    t.columns = [f"{c} hints" for c in t.columns]
    t["n"] = passages.groupby("source").size()
    return t.round(1)


def plot_settings(em: pd.DataFrame, value: str = "EM"):
    """Fig. 5 shape: EM of every system, grouped by setting, best (k, union) per system, with the
    95 % bootstrap interval over questions as error bars (columns ``<value>_lo``/``<value>_hi``)."""
    import matplotlib.pyplot as plt
    import numpy as np

    best = em.loc[em.groupby(["reader", "setting", "system"])[value].idxmax()].copy()
    best["label"] = best["setting"] + ": " + best["system"]
    order = {s: i for i, s in enumerate(SETTING_ORDER)}
    best = best.sort_values(["setting", value], key=lambda c: c.map(order) if c.name == "setting" else -c)
    labels = list(dict.fromkeys(best["label"]))
    readers = list(dict.fromkeys(best["reader"]))
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(labels) + 1.5))
    height = 0.8 / max(1, len(readers))
    y = np.arange(len(labels))
    for j, reader in enumerate(readers):
        sub = best[best["reader"] == reader].set_index("label").reindex(labels)
        err = None
        if f"{value}_lo" in sub.columns and f"{value}_hi" in sub.columns:
            err = np.vstack([(sub[value] - sub[f"{value}_lo"]).to_numpy(float),
                             (sub[f"{value}_hi"] - sub[value]).to_numpy(float)])
        ax.barh(y - 0.4 + height * (j + 0.5), sub[value].to_numpy(float), height=height, xerr=err, capsize=2,
                label=reader, error_kw={"elinewidth": 0.8})
    ax.set_yticks(y)
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.legend(fontsize=8, loc="lower right")
    ax.set_xlabel(f"{value} (%), best k and union per system; bars: 95 % bootstrap interval over questions")
    ax.set_ylabel("")
    ax.set_title("Reading: Optimal vs oracle vs pipeline")
    fig.tight_layout()
    return fig


def plot_hint_distribution(dist: pd.DataFrame):
    """Fig. 6 shape: stacked shares of 1/2/3… hint passages per source."""
    import matplotlib.pyplot as plt

    cols = [c for c in dist.columns if c.endswith("hints")]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(dist) + 1.5))
    dist[cols].plot.barh(stacked=True, ax=ax, colormap="viridis")
    ax.set_xlabel("share of passages (%)")
    ax.set_ylabel("")
    ax.set_title("Hints per passage: ranked first vs useful under Optimal")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


#: findings of ``inferqa_utils/measure/paper_numbers.yaml`` that hold the paper's reading numbers (paper 000
# §5.4)
READING_FINDINGS = ("optimal_far_above_pipeline", "rerankers_marginal", "ft_reranker_oracle_only")


def paper_reading_numbers() -> dict[str, float]:
    """The paper's reading EM numbers (paper 000 §5.4, Table 8) from the paper reference file,
    as {label: value} (Optimal 90.16, BGE + MonoT5 15.34, BGE + FT-MonoT5 13.89, BGE 13.18)."""

    out: dict[str, float] = {}
    for f in load_paper_numbers():
        if f.id in READING_FINDINGS:
            for label, value in ((f.a_label, f.a_value), (f.b_label, f.b_value)):
                if value is not None and float(value) not in out.values():  # one label per number
                    out[label] = float(value)
    return out


# ----------------------------------------------------------------------------- generated sentences

def reuse_sentence(reuse: pd.DataFrame) -> str:
    """Per reader: the Optimal passages, how many answers came from the labelling and how many model
    calls this run made (:attr:`~inferqa_utils.reading.conditions.Readings.reuse`)."""
    parts = []
    for reader, r in reuse.iterrows():
        parts.append(f"{reader} reads {int(r['passages'])} label ≥ 1 passages under Optimal, "
                     f"{int(r['reused'])} of them answered during labelling and reused; this run made "
                     f"{int(r['model calls'])} model calls ({int(r['cache hits'])} answers from the cache)")
    return "; ".join(parts) + "."


def table8_sentence(em: pd.DataFrame, value: str = "EM") -> str:
    """What Table 8 shows beyond its best cells: how often Union_norm and Union_freq give the same
    ``value``, how much it moves with k per system, and the highest NO ANSWER rate."""
    rows = em[em["setting"] != "Optimal"]
    if rows.empty:
        return "No pipeline or oracle reading."
    parts = []
    if rows["union"].nunique() > 1:
        wide = rows.pivot_table(
            index=["reader", "system", "k"], columns="union", values=value, aggfunc="first"
        )
        same = int((wide.nunique(axis=1) == 1).sum())
        parts.append(
            f"Union_norm and Union_freq give the same {value} in {same} of {len(wide)} (system, k) cells"
        )
    spread = rows.groupby(["reader", "system"])[value].agg(lambda v: v.max() - v.min())
    widest = spread.idxmax()
    parts.append(f"{value} moves with k and the union by at most {spread.max():.1f} points per system "
                 f"(widest: {widest[1]})")
    worst = rows.loc[rows["no_answer"].idxmax()]
    parts.append(
        f"the highest NO ANSWER rate is {worst['no_answer']:.1f} % ({worst['system']}, k = {int(worst['k'])})"
    )
    return "; ".join(parts) + "."


def _best_rows(em: pd.DataFrame, reader: str, setting: str, value: str) -> pd.Series | None:
    sub = em[(em["reader"] == reader) & (em["setting"] == setting)]
    return None if sub.empty else sub.loc[sub[value].idxmax()]


def _per_question(answers: pd.DataFrame, row: pd.Series, col: str) -> pd.Series:
    sel = (answers["reader"] == row["reader"]) & (answers["setting"] == row["setting"]) & \
        (answers["system"] == row["system"])
    if row["setting"] != "Optimal":
        sel &= (answers["k"].astype("Int64") == int(row["k"])) & (answers["union"] == row["union"])
    return answers[sel].set_index("qid")[col].pipe(as_outcome)


def settings_sentence(answers: pd.DataFrame, em: pd.DataFrame, value: str = "EM") -> str:
    """Per reader, the best configuration of each setting against the best pipeline on the same
    questions: the paired difference of per-question strict EM with its bootstrap interval and the
    paired randomization p (:func:`inferqa_utils.measure.uncertainty.paired_difference`)."""
    col = "em" if value == "EM" else "judged"
    parts = []
    for reader in dict.fromkeys(em["reader"]):
        pipe = _best_rows(em, reader, "pipeline", value)
        if pipe is None:
            continue
        base = _per_question(answers, pipe, col)
        bits = []
        for setting in ("Optimal", "oracle"):
            other = _best_rows(em, reader, setting, value)
            if other is None:
                continue
            a = _per_question(answers, other, col)
            both = pd.concat([a.rename("a"), base.rename("b")], axis=1, join="inner")
            pd_ = paired_difference(both["a"], both["b"])
            d, p = pd_.diff.scaled(100), pd_.p_value
            bits.append(
                f"{setting} {other[value]:.1f} %, a difference of {d.value:+.1f} [{d.lo:.1f}, {d.hi:.1f}] "
                f"points (paired randomization p = {p:.3g})"
            )
        parts.append(f"{reader}: best pipeline {pipe['system']} (k = {int(pipe['k'])}, {pipe['union']}) "
                     f"{ci(pipe[value], pipe[f'{value}_lo'], pipe[f'{value}_hi'])} %; " + "; ".join(bits))
    return " · ".join(parts) + "."


def hints_sentence(dist: pd.DataFrame) -> str:
    """Mean number of hints of the passages read correctly under Optimal and of the passages each
    run puts first (:func:`hint_distribution`), paper 000 Fig. 6's comparison."""
    if dist.empty:
        return "No passage to count."
    cols = [c for c in dist.columns if c.endswith("hints")]
    hints = [int(c.split()[0]) for c in cols]

    def mean(row: pd.Series) -> float:
        return sum(h * float(row[c]) for h, c in zip(hints, cols, strict=True)) / max(
            1e-9, sum(row[c] for c in cols)
        )

    opt = [i for i in dist.index if str(i).startswith("Optimal")]
    runs = {i: mean(dist.loc[i]) for i in dist.index if i not in opt}
    text = ""
    if opt:
        r = dist.loc[opt[0]]
        text = (f"Passages read correctly under Optimal have {mean(r):.2f} hints on average "
                f"({float(r[cols[-1]]):.1f} % have {hints[-1]}, n = {int(r['n'])}); ")
    text += "the passages the runs put first: " + ", ".join(f"{k} {v:.2f}" for k, v in runs.items())
    return text + "."


def grid_sentence(grid: pd.DataFrame | None, run: str, alpha: float, beta: float, split: str = "dev") -> str:
    """The best (α, β) of the Union_freq grid search, or that it was not run (then the weights in use)."""
    if grid is None or grid.empty:
        return f"The α, β grid search was not run: Union_freq uses α = {alpha:g}, β = {beta:g}."
    best = grid.iloc[0]
    ties = int((grid["EM"] == best["EM"]).sum())
    return (
        f"On {split} ({run}), the best Union_freq weights are α = {best['alpha']:g}, β = {best['beta']:g} "
        "with EM "
        f"{best['EM']:.1f} %"
        + (f" ({ties} grid points tie)" if ties > 1 else "")
        + f"; this run used α = {alpha:g}, β = {beta:g}."
    )
