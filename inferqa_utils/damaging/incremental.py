"""Incremental inference and probe-based selection (paper 004 §4–7) for decoder LLM readers.

For a ranked list ``p_1..p_N`` the reader answers from the top-1, top-2, …, top-N passages; the
strict-EM bits give the **EM pattern** (judge-accepted answers give the SeEM pattern), from which
:mod:`inferqa_utils.damaging.patterns` derives AcEM@k, the passage types and the six probes.

**Context of prefix k.** ``union_norm`` of the hint sentences of ``p_1..p_k`` joined by one space
(paper 000 §5.4, hint level; a control-corpus reference is one unit), so the context of prefix k is the
context of prefix k − 1 plus the new sentences at its end (or the same text when ``p_k`` adds none).

**Why this is cheap with a decoder.** The reader prompt
  (:func:`inferqa_utils.answering.prompts.reader_messages`)
is the system turn, five few-shot turns, the rules, *then the context*, then the question. Prompt k
therefore shares every token up to the end of context k − 1 with prompt k − 1. The llama.cpp
engine keeps its KV cache between prompts and evaluates only the tokens after the longest common
prefix with the previous prompt (``prefix_reuse``); a batch runs in lexicographic token order
(``order_prompts``), i.e. a depth-first walk of the prompts' token trie, so the N prompts of one
question run back to back and each costs roughly its new sentences plus the question. Identical
contexts (a passage that adds no new sentence) are read once. Every reading and judgement goes
through the engine's disk cache, so a re-run makes no model call.

The paper's reader (FiD) is order-invariant; a decoder is not, so our patterns describe the
passages *in retrieval order*, and a probe's kept passages are read in their original rank order.
The paper pads probe inputs to 100 passages (FiD); we read the kept passages only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..answering.reader import read
from ..answering.scoring import score_answers
from ..ir.runs import ranked_ids
from ..ir.textnorm import occurs_as_tokens
from ..ir.trec import Run
from ..measure.paper import paper_value
from ..measure.uncertainty import interval_columns, mean_ci, paired_difference
from ..present.figures import INTERVAL_NOTE, error_bars
from ..reading.contexts import union_norm
from ..reading.setup import ReadingSetup
from .patterns import (
    PROBE_KS,
    PROBES,
    TYPES,
    acem_at,
    aggregate_em_curves,
    em_pattern,
    passage_types,
    probe_keep,
)

METRICS = ("em", "judged")
"""Pattern kinds: strict EM (``em``) and judge-accepted (``judged``: SeEM / SeAcEM, paper 004 §8.3)."""

METRIC_LABELS = {"em": ("EM", "AcEM"), "judged": ("SeEM", "SeAcEM")}


# ---------------------------------------------------------------- contexts


def prefix_contexts(passages: Sequence[Sequence[str]]) -> list[str]:
    """``[context@1, …, context@N]`` with ``context@k = " ".join(union_norm(passages[:k]))``.

    Built in one pass, identical to ``build_context(passages, k, "norm")`` for every k; each
    context starts with the previous one (string prefix), which is what makes KV reuse possible.
    """
    seen: set[str] = set()
    sents: list[str] = []
    out: list[str] = []
    for passage in passages:
        for s in union_norm([passage]):
            if s not in seen:
                seen.add(s)
                sents.append(s)
        out.append(" ".join(sents))
    return out


def subset_context(passages: Sequence[Sequence[str]], keep: Sequence[int]) -> str:
    """Context from the passages at 0-based ``keep`` positions, in rank order (a probe's input)."""
    return " ".join(union_norm([passages[i] for i in sorted(keep)]))


# ---------------------------------------------------------------- reading


def read_unique(setup: ReadingSetup, items: Sequence[tuple[str, str]],
                desc: str | None = None) -> dict[tuple[str, str], dict]:
    """Read each distinct ``(qid, context)`` once with ``setup.reader`` (one batch: cached,
    prefix-ordered; answers in ``setup.known`` reused) and score it with ``setup.judge``.

    Returns ``{(qid, context): {"answer", "em", "judged", "no_answer"}}``; each distinct
    ``(qid, answer)`` is judged once (strict EM, then the guards and the LLM judge where EM fails);
    the ``in_context`` guard is then applied per context (an answer copied from the context it was
    read from is not accepted).
    """
    ds, progress = setup.dataset, setup.progress
    unique = list(dict.fromkeys(items))
    if not unique:
        return {}
    outs = read(setup.reader, [ds.questions[q].question for q, _ in unique], [c for _, c in unique],
                desc=desc, progress=progress, known=setup.known)
    answers = {item: o.answer for item, o in zip(unique, outs, strict=True)}
    pairs = list(dict.fromkeys((q, a) for (q, _), a in answers.items()))
    scored = score_answers(ds, [q for q, _ in pairs], [a for _, a in pairs], setup.judge, progress=progress)
    verdict = {(q, a): r for (q, a), r in zip(pairs, scored[["em", "judged", "no_answer"]].to_dict("records"),
                                              strict=True)}
    out = {}
    for item, a in answers.items():
        v = dict(verdict[(item[0], a)])
        if v["judged"] and not v["em"] and occurs_as_tokens(a, item[1]):
            v["judged"] = False
        out[item] = {"answer": a, **v}
    return out


def incremental_inference(setup: ReadingSetup, run: Run, qids: Sequence[str], n: int,
                          system: str = "") -> pd.DataFrame:
    """paper 004 incremental inference: read every question with its top-1 … top-N passages
    (their hints in ``setup.corpus``; read and scored by :func:`read_unique`).

    One row per (question, k = 1..N): ``qid, k, pid`` (the k-th passage; empty when the run has
    only m < k passages for the question — reading "the top-k" then reads all m, so EM@k = EM@m
    and every pattern has length N), ``answer, em, judged, no_answer``, ``adds`` (whether ``p_k``
    added a sentence to the context), ``context_chars`` and ``system``. All prefixes of all
    questions are read in one batch; identical contexts once.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"N (passages per question) must be an integer >= 1, got {n!r}")
    qids = list(qids)
    if not qids:
        raise ValueError("no questions to analyse")
    rows, items = [], []
    for qid in qids:
        pids = ranked_ids(run, qid, n)
        ctxs = prefix_contexts([setup.dataset.passage_sentences(pid, setup.corpus) for pid in pids]) or [""]
        for k in range(1, n + 1):
            ctx = ctxs[min(k, len(ctxs)) - 1]
            rows.append({"qid": qid, "k": k, "pid": pids[k - 1] if k <= len(pids) else "",
                         "adds": k <= len(pids) and (k == 1 or ctx != ctxs[k - 2]),
                         "context_chars": len(ctx), "_ctx": ctx})
            items.append((qid, ctx))
    res = read_unique(setup, items, desc=f"incremental {system} N={n}".strip())
    df = pd.DataFrame(rows)
    scored = pd.DataFrame([res[(r["qid"], r["_ctx"])] for r in rows])
    df = pd.concat([df.drop(columns="_ctx"), scored], axis=1)
    df["system"] = system
    return df[["system", "qid", "k", "pid", "answer", "em", "judged", "no_answer", "adds", "context_chars"]]


def real_types(pattern: str, n_passages: int) -> list[str]:
    """Types (paper 004) of the positions that hold a passage (the first ``n_passages``); padded
    positions of a short ranked list are not passages and are not counted."""
    return passage_types(pattern)[:n_passages]


def patterns_of(inc: pd.DataFrame, metric: str = "em") -> dict[str, str]:
    """Per question, the EM pattern (``metric="em"``) or the SeEM pattern (``"judged"``) in k order."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; expected one of {METRICS}")
    return {qid: em_pattern(g.sort_values("k")[metric].astype(bool).tolist())
            for qid, g in inc.groupby("qid", sort=False)}


def pattern_table(inc: pd.DataFrame) -> pd.DataFrame:
    """One row per (system, question): the strict and judged patterns and their passage types."""
    rows = []
    for (system, qid), g in inc.groupby(["system", "qid"], sort=False):
        g = g.sort_values("k")
        pe = em_pattern(g["em"].astype(bool).tolist())
        pj = em_pattern(g["judged"].astype(bool).tolist())
        m = int((g["pid"] != "").sum())
        rows.append(
            {
                "system": system,
                "qid": qid,
                "em_pattern": pe,
                "judged_pattern": pj,
                "em_types": " ".join(real_types(pe, m)),
                "passages": m,
                "n_contexts": int(g["adds"].sum()),
            }
        )
    return pd.DataFrame(rows)


def probe_inference(setup: ReadingSetup, run: Run, inc: pd.DataFrame, ks: Sequence[int] = PROBE_KS,
                    probes: Sequence[str] = tuple(PROBES), metrics: Sequence[str] = METRICS) -> pd.DataFrame:
    """Probe@k (paper 004 §6.1): re-read the passages each probe keeps among the top-k (their hints
    in ``setup.corpus``; read and scored by :func:`read_unique`).

    ``inc`` is one system's :func:`incremental_inference` frame. For each question, metric (its EM
    or SeEM pattern), k in ``ks`` (those ≤ N, and N itself) and probe:
    ``keep = probe_keep(pattern, probe, k)`` (retrieved passages only); the kept passages are read
    in rank order and scored with that metric. Distinct contexts are read once (an all-zero prefix
    keeps everything, i.e. re-reads prefix k — a cache hit). One row per (qid, metric, k, probe):
    ``n_kept``, ``kept`` (1-based ranks), ``answer``, ``correct`` (the probe's score under ``metric``).
    """
    if inc["system"].nunique() > 1:
        raise ValueError(f"probe_inference takes one system's readings, got {sorted(inc['system'].unique())}")
    system = inc["system"].iloc[0] if len(inc) else ""
    n = int(inc["k"].max()) if len(inc) else 0
    ks = sorted({k for k in ks if 1 <= k <= n} | ({n} if n else set()))
    rows, items = [], []
    for metric in metrics:
        pats = patterns_of(inc, metric)
        for qid, pat in pats.items():
            sents = [setup.dataset.passage_sentences(pid, setup.corpus) for pid in ranked_ids(run, qid, n)]
            for k in ks:
                for probe in probes:
                    keep = [i for i in probe_keep(pat, probe, k) if i < len(sents)]
                    ctx = subset_context(sents, keep)
                    rows.append(
                        {
                            "system": system,
                            "qid": qid,
                            "metric": metric,
                            "k": k,
                            "probe": probe,
                            "n_kept": len(keep),
                            "kept": " ".join(str(i + 1) for i in keep),
                            "_ctx": ctx,
                        }
                    )
                    items.append((qid, ctx))
    res = read_unique(setup, items, desc=f"probes {system}".strip())
    for r in rows:
        out = res[(r["qid"], r.pop("_ctx"))]
        r["answer"] = out["answer"]
        r["correct"] = bool(out[r["metric"]])
    return pd.DataFrame(rows, columns=["system", "qid", "metric", "k", "probe", "n_kept", "kept", "answer",
                                       "correct"])


# ---------------------------------------------------------------- tables


def em_curves(inc: pd.DataFrame) -> pd.DataFrame:
    """Mean EM@k and AcEM@k (%) per system, metric and k (paper 004 Fig. 3 data), each with its
    seeded 95 % bootstrap interval over questions (``EM_lo`` / ``EM_hi``, ``AcEM_lo`` / ``AcEM_hi``:
    :func:`inferqa_utils.measure.uncertainty.interval_columns` of the per-question values
    ``EM_q@k = p_q[k]`` and ``AcEM_q@k = max_{j≤k} p_q[j]`` of the patterns ``p_q``).

    ``metric="em"``: EM / AcEM; ``"judged"``: SeEM / SeAcEM (same columns ``EM`` and ``AcEM``).
    """
    frames = []
    for system, g in inc.groupby("system", sort=False):
        for metric in METRICS:
            pats = list(patterns_of(g, metric).values())
            curve = aggregate_em_curves(pats)
            for name, per_q in (
                ("EM", lambda p, k: float(p[k - 1] == "1")),
                ("AcEM", lambda p, k: float(acem_at(p, k))),
            ):
                iv = [interval_columns([per_q(p, int(k)) for p in pats], name) for k in curve["k"]]
                curve[f"{name}_lo"] = [r[f"{name}_lo"] for r in iv]
                curve[f"{name}_hi"] = [r[f"{name}_hi"] for r in iv]
            frames.append(curve.assign(system=system, metric=metric, n_questions=len(pats)))
    return pd.concat(frames, ignore_index=True)[
        ["system", "metric", "k", "EM", "EM_lo", "EM_hi", "AcEM", "AcEM_lo", "AcEM_hi", "n_questions"]
    ]


def probe_curves(inc: pd.DataFrame, probes_df: pd.DataFrame) -> pd.DataFrame:
    """Paper 004 Fig. 5/9 and Table 6 data: per system, metric and probe k, EM@k, AcEM@k and
    Probe 1–6 @k (all % of questions), each with its seeded 95 % bootstrap interval over questions
    (``<column>_lo`` / ``<column>_hi``; a probe's from the per-question 0/1 ``correct`` of its
    readings). Table 2/6 is the row with k = N."""
    curves = em_curves(inc)
    if probes_df.empty:
        return curves.iloc[0:0]
    rows = []
    for (system, metric, k), g in probes_df.groupby(["system", "metric", "k"], sort=False):
        row: dict = {"system": system, "metric": metric, "k": k}
        for probe, gp in g.groupby("probe", sort=True):
            row.update(interval_columns(gp["correct"].astype(float).to_numpy(), f"Probe {str(probe)[1:]}"))
        rows.append(row)
    out = curves.merge(pd.DataFrame(rows), on=["system", "metric", "k"], how="inner")
    return out.round(2)


def probe_table(curves: pd.DataFrame) -> pd.DataFrame:
    """Paper 004 Table 6 shape: one row per system × metric at its largest probe k (= N)."""
    if curves.empty:
        return curves
    last = curves.loc[curves.groupby(["system", "metric"], sort=False)["k"].idxmax()].copy()
    last["metric"] = last["metric"].map({"em": "strict EM", "judged": "judged (Se)"})
    last = last.rename(columns={"EM": "EM@N", "AcEM": "AcEM@N", "k": "N"})
    return last.reset_index(drop=True)


def type_table(inc: pd.DataFrame, metric: str = "em") -> pd.DataFrame:
    """Passage-type counts (paper 004) per system over every retrieved passage of every pattern
    (padding of short lists excluded), the number of questions and the share (%) of questions
    whose pattern has at least one DN (a damaging passage)."""
    rows = []
    for system, g in inc.groupby("system", sort=False):
        counts = dict.fromkeys(TYPES, 0)
        with_dn = 0
        pats = patterns_of(g, metric)
        for qid, gq in g.groupby("qid", sort=False):
            types = real_types(pats[qid], int((gq["pid"] != "").sum()))
            for t in types:
                counts[t] += 1
            with_dn += "DN" in types
        rows.append({"system": system, "metric": metric, **counts, "questions": len(pats),
                     "questions with DN (%)": round(100.0 * with_dn / len(pats), 2)})
    return pd.DataFrame(rows)


def damaging_comparison(curves_by_corpus: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Answer-supporting vs answer-containing (one frame of :func:`probe_curves` per corpus): per
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


def damaging_intervals(inc_by_corpus: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Per corpus, system and metric: EM@N and AcEM@N (paper 004 §3) with seeded 95 % bootstrap
    intervals over questions, and the damaging effect ``AcEM@N − EM@N`` — the share of questions
    answered correctly at some prefix k ≤ N but not at N — with its paired-bootstrap interval and
    the two-sided p-value of the paired sign-flip test (:mod:`inferqa_utils.measure.uncertainty`). In %.

    Per question with pattern ``p`` (one 0/1 per prefix): ``EM@N = p[N]``, ``AcEM@N = max_k p[k]``."""

    rows = []
    for corpus, inc in inc_by_corpus.items():
        if inc.empty:
            continue
        for system, g in inc.groupby("system", sort=False):
            for metric, (em_name, ac_name) in METRIC_LABELS.items():
                pats = list(patterns_of(g, metric).values())
                em = [float(p[-1] == "1") for p in pats]
                acem = [float(acem_at(p, len(p))) for p in pats]
                e, a, d = mean_ci(em).scaled(100), mean_ci(acem).scaled(100), paired_difference(acem, em)
                rows.append(
                    {
                        "corpus": corpus,
                        "system": system,
                        "metric": metric,
                        "N": max(map(len, pats)),
                        "EM@N": round(e.value, 2),
                        "EM_lo": round(e.lo, 2),
                        "EM_hi": round(e.hi, 2),
                        "AcEM@N": round(a.value, 2),
                        "AcEM_lo": round(a.lo, 2),
                        "AcEM_hi": round(a.hi, 2),
                        "AcEM − EM": round(100 * d.diff.value, 2),
                        "diff_lo": round(100 * d.diff.lo, 2),
                        "diff_hi": round(100 * d.diff.hi, 2),
                        "p (paired)": round(d.p_value, 4),
                        "damaged questions": int(sum(x > y for x, y in zip(acem, em, strict=True))),
                        "n_questions": len(pats),
                        "labels": f"{em_name} / {ac_name}",
                    }
                )
    return pd.DataFrame(rows)


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


def plot_em_curves(curves_by_corpus: Mapping[str, pd.DataFrame],
                   probes_by_corpus: Mapping[str, pd.DataFrame] | None = None, title: str = ""):
    """Paper 004 Fig. 3 shape: EM@k (solid) vs AcEM@k (dashed) over k, one colour per system; one
    column per corpus, rows strict (EM/AcEM) and judged (SeEM/SeAcEM). With ``probes_by_corpus``
    (frames of :func:`probe_curves`), Probe 3@k is drawn as crosses (paper 004 Fig. 5/9). Every
    point carries its 95 % bootstrap interval over questions as an error bar (the ``_lo`` / ``_hi``
    columns of :func:`em_curves` and :func:`probe_curves`); the lines pass through the true k, EM bars
    sit a little left of k, AcEM bars (lighter) a little right, Probe 3 bars on k."""
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
