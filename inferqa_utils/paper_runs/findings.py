"""The paper's findings on the authors' own released runs, every comparison paired over the test
questions, with its interval, the p of its verdict, Holm adjustment and verdict.

Each comparison takes two per-question vectors ``a`` and ``b`` on the same questions (a question
that does not count on one side is dropped from both) and reports the mean of each in % with its
95 % bootstrap interval (the fast routine of :mod:`inferqa_utils.paper_runs.stats`), the statistic
``mean(a) − mean(b)`` in points (``mean(a) / mean(b)`` for a ratio rule) with the interval and the
test of the verdict rule (:mod:`inferqa_utils.measure.verdict`: the exact sign test on the discordant
questions, Tango's score test at a margin, a bootstrap otherwise), and the p of the verdict. Holm's
adjustment runs over each *family* — the rows of one finding and metric under one scoring
(``family`` and ``scoring`` columns) — and a verdict is kept only when its adjusted p is below 0.05.

The path is the notebook findings' (:mod:`inferqa_utils.verdicts.findings`): measure → rule →
verdict. One *measure* per family (:data:`MEASURES`) builds each comparison's two samples
(:class:`~inferqa_utils.measure.verdict.Sample`, paired over the questions that count on both
sides); :func:`score` hands each to :func:`inferqa_utils.measure.verdict.judge`, which applies the rule
of ``inferqa_utils/measure/paper_numbers.yaml`` (or of :data:`LOCAL_FINDINGS`) and its guards (fewer
than ``MIN_UNITS`` questions paired or discordant, every value on both sides the same:
:func:`~inferqa_utils.measure.verdict.undecided`); :func:`findings_table` adjusts each family
(:func:`~inferqa_utils.measure.verdict.adjust`). A comparison with no claim (the union family) gets the
p of ``mean(a) = mean(b)`` and Holm's adjustment only.

EM comparisons are made twice: with our normalised EM (``scoring = normalised``) and with the
authors' raw membership (``scoring = raw``) — a verdict that changes with the scoring is itself a
reproducibility finding. EM is read at one reading configuration, ``k`` passages and the
``union`` (Union_norm or Union_freq), except in the union comparison.

Families (paper 000, sections and tables as cited in ``paper_numbers.yaml``):

* **F1** ``containing_beats_supporting`` — per retriever and baseline corpus, Hit@100 at label 2
  on MS MARCO / Wikipedia (``a``, baseline.json labels, every question counts) vs on QUIT (``b``,
  questions with a label-2 passage), paired over the QUIT questions that count (§5.1, Fig. 4).
* **F2** ``rerankers_marginal_ranking`` (Hit@10) and ``rerankers_marginal`` (EM) — per first stage
  and reranker, first stage + reranker (``a``) vs the first stage alone (``b``) (§5.3–5.4).
* **F3** per reader: ``optimal_far_above_pipeline`` (Optimal vs the best pipeline),
  ``oracle_half_of_optimal`` (the best oracle reranker / Optimal, a ratio) and
  ``pipeline_below_oracle`` (the best oracle vs the best retriever alone) (§5.4, Table 8). "Best"
  is the system with the highest mean under that scoring.
* **F5** ``finetuning_small_gains`` — each fine-tuned retriever (N positives) vs its base, Hit@10
  and EM; ``ft_reranker_oracle_only`` — first stage + FT-MonoT5 vs first stage + the vanilla
  MonoT5 (:data:`VANILLA_MONOT5`), EM; ``ft_reranker_best_in_oracle`` (:data:`LOCAL_FINDINGS`) —
  oracle nDCG@10 of FT-MonoT5 vs the vanilla MonoT5 (§5.2–5.3, Tables 4, 6, 7).
* **reasoning reader** ``general_reader_beats_reasoning`` — Gemma 3 4B (``a``) vs Qwen 3 8B
  (``b``), per setting: Optimal and every released system (§5.4).
* **union** (ours, no paper claim, no verdict) — Union_freq (``a``) vs Union_norm (``b``) per
  reader, k and system.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..measure.paper import Finding, load_paper_numbers
from ..measure.uncertainty import holm
from ..measure.verdict import CONTRADICTED, HOLDS, INCONCLUSIVE, Sample, adjust, judge
from .load import Release
from .scoring import SCORINGS, em_norm, em_raw, optimal, per_question
from .stats import mean_interval

if TYPE_CHECKING:
    import pandas as pd

#: the paper's general-purpose and reasoning-oriented readers (paper 000 §5.4)
GENERAL_READER, REASONING_READER = "gemma-3-4b", "qwen-3-8b"
#: the vanilla counterpart of FT-MonoT5: the authors fine-tune t5-large
#: (``experiments/finetuning/monot5/finetune.sh``), so the MonoT5 of the same size
VANILLA_MONOT5 = "monot5-monot5-large-msmarco-10k"
#: the reading configuration of the EM comparisons: top-k passages and the union (norm or freq)
K, UNION = 3, "norm"

#: findings scored only on the released runs (the notebooks have no oracle FT reranker run)
LOCAL_FINDINGS: dict[str, Finding] = {
    "ft_reranker_best_in_oracle": Finding(
        "ft_reranker_best_in_oracle",
        "F5. Under the oracle retriever the fine-tuned MonoT5 orders the question's own passages better than "
        "the vanilla MonoT5 (nDCG@10 84.24 vs 82.95)",
        "paper 000 §5.3, Table 7",
        "FT-MonoT5 oracle nDCG@10",
        84.24,
        "MonoT5 oracle nDCG@10",
        82.95,
        "a > b",
    ),
}
FAMILIES = ("F1", "F2", "F3", "F5", "reasoning reader", "union")
COLUMNS = (
    "family", "finding", "comparison", "metric", "reader", "scoring", "k", "union", "n", "a", "a_lo", "a_hi",
    "b", "b_lo", "b_hi", "statistic", "value", "lo", "hi", "test", "discordant", "p", "p_holm", "rule",
    "verdict", "why", "paper_a", "paper_b",
)
#: the ``why`` of a comparison with no paper claim (the union family)
NO_CLAIM = "no paper claim: the difference and its Holm-adjusted p only"
#: the test of a comparison with no claim: the difference against 0 (its p is that of mean(a) = mean(b))
NO_CLAIM_RULE = Finding("no_claim", "", "", "a", None, "b", None, "a > b")


@dataclass
class Comparison:
    """One comparison of a family: the finding it tests (``None``: ours, no claim), what ``a`` and
    ``b`` are, and the sample — a and b paired over the questions that count on both sides."""

    family: str
    finding: Finding | None
    a_name: str
    b_name: str
    metric: str
    sample: Sample
    reader: str = ""
    scoring: str = ""
    k: int | None = None
    union: str | None = None


def findings_by_id() -> dict[str, Finding]:
    """The rules: ``paper_numbers.yaml`` and :data:`LOCAL_FINDINGS`."""
    out = {f.id: f for f in load_paper_numbers()}
    out.update(LOCAL_FINDINGS)
    return out


# ----------------------------------------------------------------------------- per-question vectors


class Vectors:
    """Per-question vectors of one release, in the index's question order, cached."""

    def __init__(self, release: Release) -> None:
        self.release = release
        self.qids = release.qids
        self._cache: dict[tuple[Any, ...], np.ndarray] = {}

    def _get(self, key: tuple[Any, ...], make: Callable[[], np.ndarray]) -> np.ndarray:
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def retrieval(
        self, system: str, metric: str, threshold: int = 1, corpus: str = "quit"
    ) -> np.ndarray | None:
        rk = self.release.ranking(system, corpus)
        if rk is None:
            return None

        def make() -> np.ndarray:
            vals = per_question(self.release, rk, [metric], threshold)[metric]
            return np.array([np.nan if vals[q] is None else vals[q] for q in self.qids], dtype=float)

        return self._get(("ret", system, metric, threshold, corpus), make)

    def em(
        self, system: str, reader: str, scoring: str, k: int | None = None, union: str | None = None
    ) -> np.ndarray | None:
        """EM per question of ``system`` (``"Optimal"``: the Optimal setting, which reads no
        retrieved passages, so ``k`` and ``union`` do not apply) for ``reader``."""
        score = em_norm if scoring == "normalised" else em_raw
        if system == "Optimal":
            qs = self.release.questions
            if not any(reader in a for q in qs.values() for a in q.rag_answers.values()):
                return None
            return self._get(
                ("opt", reader, scoring),
                lambda: np.array([float(optimal(qs[q], reader, score)) for q in self.qids]),
            )
        rd = self.release.reading(system)
        if rd is None or (reader, union, k) not in rd.predictions:
            return None
        preds = rd.predictions[(reader, union, k)]
        return self._get(
            ("em", system, reader, scoring, k, union),
            lambda: np.array([float(score(preds[q], rd.answers[q])) for q in self.qids]),
        )

    def best(self, systems: Iterable[str], reader: str, scoring: str, k: int, union: str) -> str | None:
        """The system with the highest mean EM (ties: the first in ``systems``)."""
        scored = [
            (float(np.mean(v)), s)
            for s in systems
            if (v := self.em(s, reader, scoring, k, union)) is not None
        ]
        return max(scored, key=lambda t: t[0])[1] if scored else None


def _systems(release: Release, pred: Callable[[str, str], bool]) -> list[str]:
    return [r.system for r in release.readings if pred(r.system, r.setting)]


def _split_pair(system: str) -> tuple[str, str] | None:
    """``"bge+monot5-…"`` → ``("bge", "monot5-…")``; None for a system without a reranker."""
    if "+" not in system:
        return None
    first, second = system.split("+", 1)
    return first, second


# ----------------------------------------------------------------------------- the measures


@dataclass
class Context:
    """What the measures read: the release, its per-question vectors, the rules, the reading
    configuration of the EM comparisons (``k`` passages, ``union``) and the vanilla MonoT5 the
    fine-tuned one is compared with."""

    release: Release
    vectors: Vectors
    rules: Mapping[str, Finding]
    k: int
    union: str
    vanilla_monot5: str


@dataclass(frozen=True)
class ReadingConfig:
    """The reading configuration of an EM comparison (module docstring): the reader (or the two
    readers compared), the EM scoring (``normalised`` or ``raw``), ``k`` passages and the ``union``;
    all empty for a comparison of rankings."""

    reader: str = ""
    scoring: str = ""
    k: int | None = None
    union: str | None = None


#: the reading configuration of a comparison of rankings (no reader, no EM scoring)
NO_READING = ReadingConfig()


def _compared(
    ctx: Context, family: str, fid: str | None, a_name: str, b_name: str, metric: str,
    a: np.ndarray | None, b: np.ndarray | None, at: ReadingConfig = NO_READING,
) -> Comparison | None:
    """The comparison of the per-question vectors ``a`` and ``b`` (NaN: the question does not count)
    as a paired sample over the questions that count on both sides, read at ``at``;
    ``None`` when the release has no file for one side. ``fid``: the finding tested (``None``, or a
    finding missing from the rules: no claim)."""
    if a is None or b is None:
        return None
    keep = ~(np.isnan(a) | np.isnan(b))
    sample = Sample(a[keep], b[keep], paired=True, note=f"{a_name} vs {b_name}")
    finding = ctx.rules.get(fid) if fid else None
    return Comparison(family, finding, a_name, b_name, metric, sample, at.reader, at.scoring, at.k, at.union)


def _em(ctx: Context, family: str, fid: str, a: str, b: str, reader: str, scoring: str) -> Comparison | None:
    """EM of system ``a`` vs system ``b`` for one reader and scoring, at the context's k and union."""
    v, k, union = ctx.vectors, ctx.k, ctx.union
    xa, xb = v.em(a, reader, scoring, k, union), v.em(b, reader, scoring, k, union)
    return _compared(ctx, family, fid, a, b, "EM", xa, xb, ReadingConfig(reader, scoring, k, union))


def f1_containing_vs_quit(ctx: Context) -> Iterator[Comparison | None]:
    """F1 ``containing_beats_supporting``: per retriever and baseline corpus, Hit@100 at label 2 on
    the baseline corpus (a) vs on QUIT (b)."""
    v = ctx.vectors
    for rk in ctx.release.rankings:
        if rk.corpus == "quit" or rk.setting != "baseline" or "+" in rk.system:
            continue
        yield _compared(
            ctx, "F1", "containing_beats_supporting", f"{rk.corpus} {rk.system}", f"QUIT {rk.system}",
            "Hit@100 (label 2)", v.retrieval(rk.system, "Hit@100", 2, rk.corpus),
            v.retrieval(rk.system, "Hit@100", 2, "quit"),
        )


def f2_rerankers(ctx: Context) -> Iterator[Comparison | None]:
    """F2: per first stage and reranker, first stage + reranker (a) vs the first stage alone (b) —
    ``rerankers_marginal_ranking`` on Hit@10, then ``rerankers_marginal`` on EM."""
    v = ctx.vectors
    for rk in ctx.release.rankings:
        pair = _split_pair(rk.system)
        if rk.corpus != "quit" or rk.family != "retriever_reranker" or pair is None:
            continue
        yield _compared(
            ctx, "F2", "rerankers_marginal_ranking", rk.system, pair[0], "Hit@10",
            v.retrieval(rk.system, "Hit@10"), v.retrieval(pair[0], "Hit@10"),
        )
    for s in _systems(ctx.release, lambda s, st: st == "pipeline"):
        pair = _split_pair(s)
        rd = ctx.release.reading(s)
        if pair is None or rd is None or rd.family != "retriever_reranker":
            continue
        for reader in ctx.release.readers:
            for scoring in SCORINGS:
                yield _em(ctx, "F2", "rerankers_marginal", s, pair[0], reader, scoring)


def f3_optimal_oracle_pipeline(ctx: Context) -> Iterator[Comparison | None]:
    """F3, per reader and scoring: ``optimal_far_above_pipeline`` (Optimal vs the best pipeline),
    ``oracle_half_of_optimal`` (the best oracle reranker / Optimal) and ``pipeline_below_oracle``
    (the best oracle vs the best retriever alone); "best": the highest mean EM under that scoring."""
    v, k, union = ctx.vectors, ctx.k, ctx.union
    pipelines = _systems(ctx.release, lambda s, st: st == "pipeline")
    oracles = _systems(ctx.release, lambda s, st: st == "oracle")
    retriever_only = [s for s in pipelines if "+" not in s]
    for reader in ctx.release.readers:
        for scoring in SCORINGS:
            best_pipe = v.best(pipelines, reader, scoring, k, union)
            best_oracle = v.best(oracles, reader, scoring, k, union)
            best_ret = v.best(retriever_only, reader, scoring, k, union)
            if best_pipe:
                yield _em(ctx, "F3", "optimal_far_above_pipeline", "Optimal", best_pipe, reader, scoring)
            if best_oracle:
                yield _em(ctx, "F3", "oracle_half_of_optimal", best_oracle, "Optimal", reader, scoring)
            if best_oracle and best_ret:
                yield _em(ctx, "F3", "pipeline_below_oracle", best_oracle, best_ret, reader, scoring)


def f5_fine_tuned(ctx: Context) -> Iterator[Comparison | None]:
    """F5: ``finetuning_small_gains`` — each fine-tuned retriever vs its base, Hit@10 and then EM;
    ``ft_reranker_oracle_only`` — first stage + FT-MonoT5 vs first stage + the vanilla MonoT5, EM;
    ``ft_reranker_best_in_oracle`` — oracle nDCG@10 of FT-MonoT5 vs the vanilla MonoT5."""
    v, release, vanilla = ctx.vectors, ctx.release, ctx.vanilla_monot5
    for rk in release.rankings:
        if rk.family != "ft_retriever":
            continue
        base = rk.names["retriever"]
        yield _compared(
            ctx, "F5", "finetuning_small_gains", rk.system, base, "Hit@10", v.retrieval(rk.system, "Hit@10"),
            v.retrieval(base, "Hit@10"),
        )
    for rd in release.readings:
        if rd.family == "ft_retriever":
            for reader in release.readers:
                for scoring in SCORINGS:
                    yield _em(ctx, "F5", "finetuning_small_gains", rd.system, rd.names["retriever"], reader,
                              scoring)
        if rd.family in ("retriever_ft_reranker", "ft_retriever_ft_reranker"):
            first = rd.system.split("+")[0]  # <retriever> or FT-<retriever>
            for reader in release.readers:
                for scoring in SCORINGS:
                    yield _em(ctx, "F5", "ft_reranker_oracle_only", rd.system, f"{first}+{vanilla}", reader,
                              scoring)
    for rk in release.rankings:
        if rk.family == "ft_reranker":
            yield _compared(
                ctx, "F5", "ft_reranker_best_in_oracle", rk.system, f"oracle+{vanilla}", "nDCG@10",
                v.retrieval(rk.system, "nDCG@10"), v.retrieval(f"oracle+{vanilla}", "nDCG@10"),
            )


def reasoning_reader(ctx: Context) -> Iterator[Comparison | None]:
    """``general_reader_beats_reasoning``: Gemma 3 4B (a) vs Qwen 3 8B (b) on the same system's
    passages, per scoring, for Optimal and every released system."""
    readers = ctx.release.readers
    if GENERAL_READER not in readers or REASONING_READER not in readers:
        return
    v, k, union = ctx.vectors, ctx.k, ctx.union
    for s in ["Optimal", *(r.system for r in ctx.release.readings)]:
        at_k = None if s == "Optimal" else k
        for scoring in SCORINGS:
            yield _compared(
                ctx, "reasoning reader", "general_reader_beats_reasoning", f"{GENERAL_READER}, {s}",
                f"{REASONING_READER}, {s}", "EM", v.em(s, GENERAL_READER, scoring, k, union),
                v.em(s, REASONING_READER, scoring, k, union),
                ReadingConfig(f"{GENERAL_READER} vs {REASONING_READER}", scoring, at_k,
                              None if s == "Optimal" else union),
            )


def union_freq_vs_norm(ctx: Context) -> Iterator[Comparison | None]:
    """Ours, no claim: Union_freq (a) vs Union_norm (b) per released system, reader, k and scoring."""
    v, release = ctx.vectors, ctx.release
    ks = sorted({kk for r in release.readings for (_, _, kk) in r.predictions})
    for rd in release.readings:
        for reader in release.readers:
            for kk in ks:
                for scoring in SCORINGS:
                    freq = v.em(rd.system, reader, scoring, kk, "freq")
                    norm = v.em(rd.system, reader, scoring, kk, "norm")
                    yield _compared(
                        ctx, "union", None, f"{rd.system}, Union_freq", f"{rd.system}, Union_norm", "EM",
                        freq, norm, ReadingConfig(reader, scoring, kk, "freq vs norm"),
                    )


#: the measure of each family (:data:`FAMILIES`), in the table's order
MEASURES: dict[str, Callable[[Context], Iterable[Comparison | None]]] = {
    "F1": f1_containing_vs_quit,
    "F2": f2_rerankers,
    "F3": f3_optimal_oracle_pipeline,
    "F5": f5_fine_tuned,
    "reasoning reader": reasoning_reader,
    "union": union_freq_vs_norm,
}


def comparisons(
    release: Release, k: int = K, union: str = UNION, rules: Mapping[str, Finding] | None = None,
    vanilla_monot5: str = VANILLA_MONOT5,
) -> list[Comparison]:
    """Every comparison of the families the release has files for (:data:`MEASURES`, module
    docstring); a finding missing from ``rules`` (default :func:`findings_by_id`) is compared with no
    claim."""
    rules = dict(rules) if rules is not None else findings_by_id()
    ctx = Context(release, Vectors(release), rules, k, union, vanilla_monot5)
    return [c for family in FAMILIES for c in MEASURES[family](ctx) if c is not None]


# ----------------------------------------------------------------------------- scoring a comparison


def score(c: Comparison) -> dict[str, Any]:
    """One comparison as a row of :data:`COLUMNS` (module docstring) before Holm's adjustment: the
    verdict of :func:`~inferqa_utils.measure.verdict.judge` with the bare reason (the row names the
    comparison), each side's mean with its interval by the fast routine of :mod:`.stats`
    (:func:`.stats.mean_interval`); ``p`` is the p of the verdict's test (of mean(a) = mean(b) for a
    comparison with no claim), ``p_holm`` and the verdict after the adjustment are filled by
    :func:`findings_table`."""
    f, s = c.finding, c.sample
    row: dict[str, Any] = {
        "family": c.family, "finding": f.id if f else "", "comparison": f"{c.a_name} vs {c.b_name}",
        "metric": c.metric, "reader": c.reader, "scoring": c.scoring, "k": c.k, "union": c.union,
        "n": len(s.a),
        "rule": f.rule() if f else "none (our comparison)",
        "paper_a": _paper(f.a_label, f.a_value) if f else "",
        "paper_b": _paper(f.b_label, f.b_value) if f else "",
    }
    if not len(s.a):
        return {**row, "verdict": INCONCLUSIVE if f else "", "why": "no question counts on both sides",
                "_scored": None}
    means = (mean_interval(s.a).scaled(s.scale), mean_interval(s.b).scaled(s.scale))
    scored = judge(f if f is not None else NO_CLAIM_RULE, s, explain=False, means=means)
    statistic = scored.finding.statistic
    digits = 2 if statistic == "diff" else 4
    st = scored.stat
    row.update(
        {
            "a": _r(means[0].value), "a_lo": _r(means[0].lo), "a_hi": _r(means[0].hi),
            "b": _r(means[1].value), "b_lo": _r(means[1].lo), "b_hi": _r(means[1].hi), "statistic": statistic,
            "value": _r(st.value, digits), "lo": _r(st.lo, digits), "hi": _r(st.hi, digits),
            "p": scored.p_value, "test": scored.test, "discordant": scored.discordant,
        }
    )
    if f is None:
        return {**row, "verdict": "", "why": NO_CLAIM, "_scored": scored}
    return {**row, "verdict": scored.verdict, "why": scored.why, "_scored": scored}


def _r(x: float, digits: int = 2) -> float:
    return round(float(x), digits)


def _paper(label: str, value: float | None) -> str:
    return f"{label}: {'—' if value is None else f'{value:g}'}"


def findings_table(
    release: Release, k: int = K, union: str = UNION, rules: Mapping[str, Finding] | None = None,
    vanilla_monot5: str = VANILLA_MONOT5, comps: Sequence[Comparison] | None = None,
) -> pd.DataFrame:
    """Every comparison scored (:func:`score`), Holm-adjusted within each (family, finding, metric,
    scoring) group, in the order of :data:`FAMILIES`."""
    import pandas as pd

    comps = list(comps) if comps is not None else comparisons(release, k, union, rules, vanilla_monot5)
    rows = [score(c) for c in comps]
    groups: dict[tuple[str, str, str, str], list[int]] = {}
    for i, r in enumerate(rows):
        if r.get("_scored") is not None:
            groups.setdefault((r["family"], r["finding"], r["metric"], r["scoring"]), []).append(i)
    for idx in groups.values():
        claims = [i for i in idx if rows[i]["finding"]]
        for i, adjusted in zip(claims, adjust([rows[i]["_scored"] for i in claims]), strict=True):
            rows[i].update(p_holm=adjusted.p_holm, verdict=adjusted.verdict, why=adjusted.why)
        plain = [i for i in idx if not rows[i]["finding"] and rows[i]["p"] is not None]
        for i, p in zip(plain, holm([float(rows[i]["p"]) for i in plain]), strict=True):
            rows[i]["p_holm"] = p
    for r in rows:
        r.pop("_scored", None)
    df = pd.DataFrame(rows, columns=list(COLUMNS))
    df["k"] = df["k"].astype("Int64")
    order = {f: i for i, f in enumerate(FAMILIES)}
    return df.sort_values("family", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)


def verdict_counts(table: pd.DataFrame) -> pd.DataFrame:
    """Per family, finding, metric and scoring: the comparisons and how many hold, are
    contradicted or are inconclusive."""
    import pandas as pd

    t = table[table["finding"] != ""]
    if t.empty:
        return pd.DataFrame(
            columns=[
                "family", "finding", "metric", "scoring", "comparisons", HOLDS,
                CONTRADICTED, INCONCLUSIVE,
            ]
        )
    g = t.groupby(["family", "finding", "metric", "scoring"], sort=False)["verdict"]
    out = g.size().rename("comparisons").to_frame()
    for v in (HOLDS, CONTRADICTED, INCONCLUSIVE):
        out[v] = g.apply(lambda s, v=v: int((s == v).sum()))
    return out.reset_index()
