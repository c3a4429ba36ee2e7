"""Uncertainty of per-question metrics: bootstrap intervals, paired tests, Holm correction.

Every headline number of the compendium is a mean over questions (EM, judged accuracy, Hit@k,
nDCG@10 per question), so its uncertainty comes from the sample of questions:

* :func:`mean_ci` — the mean and a seeded percentile-bootstrap 95 % interval over questions
  (``scipy.stats.bootstrap``; Efron & Tibshirani 1993, ch. 13). Percentile rather than BCa because
  EM is 0/1 and often all-equal on small splits, where BCa is undefined.
* :func:`paired_difference` — system A vs system B *on the same questions*: the mean per-question
  difference ``d̄ = mean(a_i − b_i)``, a paired-bootstrap interval of ``d̄`` and the two-sided p-value
  of a paired randomization (sign-flip) test, ``scipy.stats.permutation_test`` with
  ``permutation_type="samples"`` over the questions where A and B differ (a tied question's flip
  changes nothing) — exact (all 2ᵏ flips of the k discordant questions) while 2ᵏ ≤ ``n_resamples``,
  Monte Carlo beyond: Fisher's randomization test (Smucker et al., CIKM 2007), applied to any
  per-question outcome.
* :func:`interval_columns` / :func:`metric_intervals` — the same :func:`mean_ci` interval as table
  columns ``m``, ``m_lo``, ``m_hi`` (in %), for any per-question values and for the retrieval metrics
  of :func:`inferqa_utils.measure.metrics.per_query` (the per-question scores behind ``evaluate``).
* :func:`compare_runs` — retrieval runs against a baseline on the same questions: per metric the
  interval of each run and the Holm-adjusted paired test of each difference, from the same
  per-question scores of :func:`~inferqa_utils.measure.metrics.per_query`.
* :func:`clustered_ci` — a statistic over units grouped in questions (agreement of passage labels,
  :func:`cohen_kappa`) with an interval from resampling whole questions.
* :func:`holm` — Holm's step-down adjustment of the p-values of one table (Holm 1979):
  sort ascending, ``p̃_(i) = max_{j≤i} min(1, (m − j + 1)·p_(j))``.

All resampling is seeded from :data:`inferqa_utils.core.config.SEED`, so a table's intervals are the
same on every run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.config import SEED
from .metrics import DEFAULT_METRICS, binarize_qrels, gain_qrels, per_query

if TYPE_CHECKING:
    import pandas as pd

#: bootstrap resamples and randomization flips (exact up to 13 discordant questions)
N_RESAMPLES = 10_000
#: how the tables' ``*`` marks are decided (:func:`compare_runs`, :func:`answers_comparison`), in words
PAIRED_TEST = (
    "paired randomization test (sign flips of the per-question differences, scipy's permutation_test; "
    "exact up to 13 discordant questions), Holm-adjusted over the table"
)


@dataclass(frozen=True)
class Interval:
    """A mean over ``n`` questions with a ``confidence`` interval [lo, hi]."""

    value: float
    lo: float
    hi: float
    n: int
    confidence: float = 0.95

    def scaled(self, factor: float) -> Interval:
        return Interval(self.value * factor, self.lo * factor, self.hi * factor, self.n, self.confidence)

    def __str__(self) -> str:
        return f"{self.value:.2f} [{self.lo:.2f}, {self.hi:.2f}]"


@dataclass(frozen=True)
class Paired:
    """``a − b`` over the same ``n`` questions: mean difference, its interval, two-sided p-value."""

    diff: Interval
    p_value: float

    @property
    def n(self) -> int:
        return self.diff.n


def _array(values: Sequence[float] | np.ndarray, what: str) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"{what}: expected one value per question, got shape {x.shape}")
    if np.isnan(x).any():
        raise ValueError(f"{what}: {int(np.isnan(x).sum())} per-question values are NaN")
    return x


def mean_ci(values: Sequence[float] | np.ndarray, confidence: float = 0.95, n_resamples: int = N_RESAMPLES,
            seed: int = SEED) -> Interval:
    """Mean of per-question ``values`` with a seeded percentile-bootstrap interval.

    One question: the interval is the value itself (nothing to resample). No question: an error.
    """
    from scipy import stats

    x = _array(values, "mean_ci")
    if len(x) == 0:
        raise ValueError("mean_ci: no questions")
    m = float(x.mean())
    if len(x) == 1 or np.all(x == x[0]):
        return Interval(m, m, m, len(x), confidence)
    res = stats.bootstrap(
        (x,),
        np.mean, confidence_level=confidence, n_resamples=n_resamples, method="percentile",
        random_state=np.random.default_rng(seed),
    )
    return Interval(
        m, float(res.confidence_interval.low), float(res.confidence_interval.high), len(x), confidence
    )


def paired_difference(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> Paired:
    """``a − b`` on the same questions (same order): mean difference with a paired-bootstrap
    interval, and the two-sided p-value of the paired randomization (sign-flip) test."""
    from scipy import stats

    x, y = _array(a, "paired_difference a"), _array(b, "paired_difference b")
    if len(x) != len(y):
        raise ValueError(
            f"paired_difference: {len(x)} vs {len(y)} questions; a paired test needs the same questions"
        )
    d = x - y
    ci = mean_ci(d, confidence, n_resamples, seed)
    nz = d != 0
    if nz.sum() < 2:  # no or one discordant question: every flip is as extreme as the data
        return Paired(ci, 1.0)
    # a sign flip of a tied question changes nothing: flip the discordant ones only (same p-value)
    res = stats.permutation_test((x[nz], y[nz]), lambda u, v: np.mean(u - v), permutation_type="samples",
                                 alternative="two-sided", n_resamples=n_resamples,
                                 random_state=np.random.default_rng(seed))
    return Paired(ci, float(min(1.0, res.pvalue)))


def clustered_ci(clusters: Sequence[Any], statistic: Any, confidence: float = 0.95, n_resamples: int = 2_000,
                 seed: int = SEED) -> Interval:
    """``statistic(clusters)`` with a seeded percentile-bootstrap interval that resamples whole
    clusters (questions) with replacement — for a statistic over units that are not independent,
    such as the passages of one question (agreement, Cohen's κ). ``n`` is the number of clusters."""
    if not len(clusters):
        raise ValueError("clustered_ci: no clusters")
    value = float(statistic(list(clusters)))
    if len(clusters) == 1:
        return Interval(value, value, value, 1, confidence)
    rng = np.random.default_rng(seed)
    stats_ = np.array([statistic([clusters[i] for i in rng.integers(0, len(clusters), len(clusters))])
                       for _ in range(n_resamples)], dtype=float)
    stats_ = stats_[~np.isnan(stats_)]
    if not len(stats_):
        return Interval(value, value, value, len(clusters), confidence)
    a = (1 - confidence) / 2
    return Interval(value, float(np.quantile(stats_, a)), float(np.quantile(stats_, 1 - a)), len(clusters),
                    confidence)


def cohen_kappa(a: Sequence[Any], b: Sequence[Any]) -> float:
    """Cohen's κ of two raters' labels on the same items: ``(p_o − p_e) / (1 − p_e)`` with ``p_o``
    the observed agreement and ``p_e`` the agreement expected from the two label distributions
    (Cohen 1960). When both raters use one and the same label throughout (``p_e = 1``, where the
    formula is 0/0) they agree on every item, and κ is taken as 1."""
    a, b = list(a), list(b)
    if len(a) != len(b) or not a:
        raise ValueError(f"cohen_kappa: {len(a)} vs {len(b)} labels")
    n = len(a)
    po = sum(x == y for x, y in zip(a, b, strict=True)) / n
    labels = set(a) | set(b)
    pe = sum((a.count(lab) / n) * (b.count(lab) / n) for lab in labels)
    return 1.0 if pe >= 1 else (po - pe) / (1 - pe)


def interval_columns(values: Sequence[float] | np.ndarray, name: str, scale: float = 100.0,
                     digits: int = 2) -> dict[str, float]:
    """``{name: m, name_lo: lo, name_hi: hi}``: the mean of per-question ``values`` and its seeded
    95 % percentile-bootstrap interval (:func:`mean_ci`), times ``scale`` (100: in %), rounded to
    ``digits``. NaN values are questions that do not count for the metric and are dropped first
    (``m = scale · Σ_{i counted} v_i / n_counted``); with no counted question all three are NaN."""
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    if len(x) == 0:
        return {name: float("nan"), f"{name}_lo": float("nan"), f"{name}_hi": float("nan")}
    ci = mean_ci(x).scaled(scale)
    return {
        name: round(ci.value, digits),
        f"{name}_lo": round(ci.lo, digits),
        f"{name}_hi": round(ci.hi, digits),
    }


def metric_intervals(runs: Mapping[str, Mapping[str, Sequence[tuple[str, float]]]],
                     qrels: Mapping[str, Mapping[str, int]], threshold: int = 1,
                     metrics: Sequence[str] = DEFAULT_METRICS) -> pd.DataFrame:
    """Retrieval metrics with intervals: one row per run (index ``run``), for each metric ``m`` the
    columns ``m`` (mean in %, exactly the number :func:`inferqa_utils.measure.metrics.evaluate` reports),
    ``m_lo`` and ``m_hi`` (:func:`interval_columns` of the per-question scores of
    :func:`inferqa_utils.measure.metrics.per_query` over the questions that count), then ``n_questions``,
    ``n_questions_ndcg`` and ``threshold`` as in ``evaluate``."""
    import pandas as pd

    rows = {}
    for name, run in runs.items():
        pq = per_query(run, qrels, threshold, metrics)
        row: dict[str, float | int] = {}
        for m in pq.columns:
            row.update(interval_columns(pq[m].to_numpy(float), m))
        row["n_questions"] = len(binarize_qrels(qrels, threshold))
        row["n_questions_ndcg"] = len(gain_qrels(qrels))
        row["threshold"] = int(threshold)
        rows[name] = row
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "run"
    return table


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order."""
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted.tolist()


def as_outcome(values: pd.Series) -> pd.Series:
    """Per-question 0/1 outcomes as floats, whether they were written as booleans, ``True``/``False``
    strings or numbers (CSV round trips change the dtype)."""
    return values.astype(str).str.lower().isin(["true", "1", "1.0"]).astype(float)


# ----------------------------------------------------------------------------- run-vs-run

COMPARE_METRICS = ("Hit@10", "nDCG@10")


def compare_runs(runs: Mapping[str, Mapping[str, Sequence[tuple[str, float]]]],
                 qrels: Mapping[str, Mapping[str, int]], baseline: str | None = None,
                 metrics: Sequence[str] = COMPARE_METRICS, threshold: int = 1, alpha: float = 0.05,
                 n_permutations: int = N_RESAMPLES, seed: int = SEED) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Retrieval runs on the same questions, with uncertainty: per run and metric the mean in %
    with a seeded 95 % bootstrap interval (:func:`mean_ci`) of the per-question scores of
    :func:`inferqa_utils.measure.metrics.per_query` over the questions that count (in sorted qid
    order), and, for every run against ``baseline`` (default: the first run), the difference and the
    two-sided p-value of the paired randomization test (:func:`paired_difference`: seeded
    ``scipy.stats.permutation_test``, exact up to 13 discordant questions), Holm-adjusted over
    every (run, metric) comparison of the table; ``sig`` marks adjusted p < ``alpha``.

    Returns ``(table, per_question)``: the table (index run; for metric m the columns m, m_lo,
    m_hi, Δm, p m, p_holm m, sig m, and n m = questions that count) and the long per-question
    frame (``system, measure, threshold, qid, value`` in [0, 1]) the findings read.
    """
    import pandas as pd

    names = list(runs)
    if not names:
        raise ValueError("compare_runs: no runs")
    baseline = baseline or names[0]
    if baseline not in runs:
        raise ValueError(f"compare_runs: baseline {baseline!r} is not one of the runs {names}")
    per_q = {n: per_query(runs[n], qrels, threshold, metrics) for n in names}
    rows: dict[str, dict[str, Any]] = {n: {} for n in names}
    long: list[dict[str, Any]] = []
    comparisons: list[tuple[str, str, float]] = []
    for m in metrics:
        qids = sorted(per_q[baseline][m].dropna().index)  # the questions that count: the same for every run
        if not qids:
            for n in names:
                rows[n].update(
                    {m: float("nan"), f"{m}_lo": float("nan"), f"{m}_hi": float("nan"), f"n {m}": 0}
                )
            continue
        scores = {}
        for n in names:
            scores[n] = values = per_q[n][m].loc[qids].tolist()
            ci = mean_ci(values).scaled(100)
            rows[n].update({m: round(ci.value, 2), f"{m}_lo": round(ci.lo, 2), f"{m}_hi": round(ci.hi, 2),
                            f"n {m}": len(qids)})
            long += [{"system": n, "measure": m, "threshold": threshold, "qid": x, "value": v}
                     for x, v in zip(qids, values, strict=True)]
        for n in names:
            if n != baseline:
                p = paired_difference(
                    scores[n], scores[baseline], n_resamples=n_permutations, seed=seed
                ).p_value
                rows[n][f"Δ{m}"] = round(rows[n][m] - rows[baseline][m], 2)
                rows[n][f"p {m}"] = p
                comparisons.append((n, m, p))
    for (n, m, _p), adj in zip(comparisons, holm([c[2] for c in comparisons]), strict=True):
        rows[n][f"p_holm {m}"] = round(adj, 4)
        rows[n][f"sig {m}"] = "*" if adj < alpha else ""
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "run"
    return table, pd.DataFrame(long, columns=["system", "measure", "threshold", "qid", "value"])


def with_intervals(table: pd.DataFrame, columns: Sequence[str], digits: int = 1) -> pd.DataFrame:
    """Display form: each ``column`` as ``"value [lo, hi]"`` from its ``_lo``/``_hi`` columns,
    followed by the significance mark of ``sig <column>`` when present (``*``: Holm-adjusted p <
    α against the baseline)."""
    out = {}
    for c in columns:
        if c not in table.columns:
            continue
        lo, hi, sig = f"{c}_lo", f"{c}_hi", f"sig {c}"
        out[c] = [
            (
                "—"
                if _isna(v)
                else f"{v:.{digits}f} [{table.at[i, lo]:.{digits}f}, {table.at[i, hi]:.{digits}f}]"
                + (
                    str(table.at[i, sig])
                    if sig in table.columns and isinstance(table.at[i, sig], str)
                    else ""
                )
            )
            for i, v in table[c].items()
        ]
    import pandas as pd

    return pd.DataFrame(out, index=table.index)


def _isna(v: Any) -> bool:
    try:
        return v is None or bool(np.isnan(float(v)))
    except (TypeError, ValueError):
        return False


def answers_comparison(answers: pd.DataFrame, baseline: str, value: str = "em", key: str = "system",
                       alpha: float = 0.05) -> pd.DataFrame:
    """EM-style outcomes (one row per question and system, 0/1 in ``value``) of several systems on the
    same questions: per system the mean in % with its bootstrap interval (:func:`mean_ci`), and against
    ``baseline`` the difference with its paired-bootstrap interval and the paired sign-flip p-value
    (:func:`paired_difference`), Holm-adjusted over the table (``sig``: adjusted p < ``alpha``)."""
    import pandas as pd

    wide = answers.assign(_v=as_outcome(answers[value])).pivot_table(index="qid", columns=key, values="_v",
                                                                     aggfunc="first")
    if baseline not in wide.columns:
        raise ValueError(f"answers_comparison: baseline {baseline!r} not among {list(wide.columns)}")
    rows, ps = [], []
    for system in wide.columns:
        both = wide[[system]].dropna() if system == baseline else wide[[system, baseline]].dropna()
        ci = mean_ci(both[system]).scaled(100)
        row = {
            key: system,
            value: round(ci.value, 2),
            f"{value}_lo": round(ci.lo, 2),
            f"{value}_hi": round(ci.hi, 2),
            "n": len(both),
        }
        if system != baseline:
            d = paired_difference(both[system], both[baseline])
            row.update({f"Δ{value}": round(100 * d.diff.value, 2), f"Δ{value}_lo": round(100 * d.diff.lo, 2),
                        f"Δ{value}_hi": round(100 * d.diff.hi, 2), f"p {value}": round(d.p_value, 4)})
            ps.append((len(rows), d.p_value))
        rows.append(row)
    for (i, _p), adj in zip(ps, holm([p for _, p in ps]), strict=True):
        rows[i][f"p_holm {value}"] = round(adj, 4)
        rows[i][f"sig {value}"] = "*" if adj < alpha else ""
    return pd.DataFrame(rows).set_index(key)


def comparison_display(table: pd.DataFrame, value: str = "em") -> pd.DataFrame:
    """Display form of :func:`answers_comparison`: ``value [lo, hi]`` per system and, against the
    baseline, ``Δ [lo, hi]`` followed by ``*`` when the Holm-adjusted paired test is significant."""
    import pandas as pd

    delta = table.rename(columns={f"Δ{value}": "Δ", f"Δ{value}_lo": "Δ_lo", f"Δ{value}_hi": "Δ_hi",
                                  f"sig {value}": "sig Δ"})
    return pd.concat([with_intervals(table.drop(columns=[f"sig {value}"], errors="ignore"), [value]),
                      with_intervals(delta, ["Δ"])], axis=1)
