"""The experiments of notebook 05 (paper 000 §5.2–5.3, A.2–A.3, Tables 10–12, Fig. 5).

* training sets per N (and per negative kind: random, or BM25-hard as an ablation);
* one bi-encoder and one cross-encoder per set, registered as ``<name>-N<n>`` (``-hard`` for the
  ablation), and the plain names (``FT-MiniLM``, ``FT-CrossEncoder``) pointing at the variant that
  scores best on a selection split (dev by default; never the test split);
* tables: vanilla vs fine-tuned retrieval per N, the cross-encoder in the oracle-reranker setting,
  training wall times; one figure (loss curves, metric vs N, reader EM).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from .. import stages
from ..core import artifacts, models
from ..core.config import SEED
from ..ir.datamodel import Dataset
from ..ir.trec import Run, read_run, write_run
from ..present.figures import INTERVAL_NOTE, error_bars
from ..rerank import make_reranker, oracle_run
from ..rerank.evaluation import ORACLE_METRICS as ORACLE_METRICS  # notebook 05: fx.ORACLE_METRICS
from ..rerank.evaluation import oracle_scores, rerank_table
from ..rerank.stored import per_query, rerank_key
from ..retrieval.evaluation import metrics_table
from ..retrieval.registry import retrieve, retriever_identity, run_all
from .biencoder import train_biencoder
from .cross_encoder import train_cross_encoder
from .job import TrainJob
from .sampling import TrainingExample, sample_examples, sample_summary
from .training import (
    BIENCODER_KIND,
    CROSS_ENCODER_KIND,
    TrainConfig,
    TrainedModel,
    epochs_for,
    models_dir,
    register,
)

#: sample sets are keyed by (N, negatives) with negatives "random" or "hard"
SetKey = tuple[int, str]


def variant_name(base: str, n: int, negatives: str = "random") -> str:
    """Registry name of one trained variant: ``FT-MiniLM-N5``, ``FT-MiniLM-N5-hard``."""
    return f"{base}-N{n}" + ("" if negatives == "random" else f"-{negatives}")


def sample_sets(
    ds: Dataset,
    positives: Sequence[int],
    train_qids: Sequence[str],
    negative_qids: Sequence[str],
    hard_negative_run: Run | None = None,
    seed: int = SEED,
) -> dict[SetKey, list[TrainingExample]]:
    """Triplets for every N (random negatives), plus BM25-hard ones when ``hard_negative_run`` is given."""
    if not positives:
        raise ValueError("no N given: the list of positives per question is empty")
    sets: dict[SetKey, list[TrainingExample]] = {}
    for n in positives:
        sets[(n, "random")] = sample_examples(ds, train_qids, n, negative_qids=negative_qids, seed=seed)
        if hard_negative_run is not None:
            sets[(n, "hard")] = sample_examples(ds, train_qids, n, negative_qids=negative_qids,
                                                hard_negative_run=hard_negative_run, seed=seed)
    return sets


def sampling_table(
    sets: Mapping[SetKey, Sequence[TrainingExample]], train_qids: Sequence[str]
) -> pd.DataFrame:
    return pd.DataFrame(
        [{"negative kind": neg, **sample_summary(ex, train_qids, n)} for (n, neg), ex in sets.items()]
    )


@dataclass(frozen=True)
class TrainPlan:
    """What :func:`train_all` trains for each sample set: a bi-encoder and a cross-encoder from
    registry model ``base``, registered as ``<retriever_name>-N<n>`` and ``<reranker_name>-N<n>``
    (:func:`variant_name`), both with the hyper-parameters of ``cfg`` except its epochs — ``epochs``
    per model, None for the paper's schedule by N (paper 000 §5.2–5.3, A.2–A.3) — and, for the
    cross-encoder, its learning rate (``reranker_learning_rate``: its head starts from scratch)."""

    cfg: TrainConfig
    retriever_name: str
    reranker_name: str
    reranker_learning_rate: float
    epochs: float | None
    base: str = "minilm"


def train_all(
    ds: Dataset,
    dataset_name: str,
    sets: Mapping[SetKey, Sequence[TrainingExample]],
    plan: TrainPlan,
    *,
    progress: bool = True,
    log: Callable[[str], None] = print,
) -> list[TrainedModel]:
    """Train (or reuse / resume) and register a bi-encoder and a cross-encoder per sample set, as
    ``plan`` says. Checkpoints and final models live in ``build/models/<dataset>/<variant>/``.
    """
    out = []
    base = plan.base
    for (n, neg), examples in sets.items():
        ep = epochs_for(n, plan.epochs)
        for kind, base_name, lr, train in (
            (BIENCODER_KIND, plan.retriever_name, plan.cfg.learning_rate, train_biencoder),
            (CROSS_ENCODER_KIND, plan.reranker_name, plan.reranker_learning_rate, train_cross_encoder),
        ):
            name = variant_name(base_name, n, neg)
            cfg = replace(plan.cfg, epochs=ep, learning_rate=lr)
            log(f"[finetune] {name}: {len(examples)} triplets (N={n}, {neg} negatives), {ep:g} epoch(s)")
            job = TrainJob(name, models_dir(dataset_name) / name, n, base)
            m = train(ds, examples, job, cfg, progress=progress, log=log)
            m.params["negatives"] = neg
            register(
                name, kind, m.path,
                f"{base} fine-tuned on {dataset_name} train: N={n}, {neg} negatives, "
                f"{ep:g} epochs, lr {lr:g}",
            )
            out.append(m)
    return out


def times_table(trained: Sequence[TrainedModel]) -> pd.DataFrame:
    """Training wall times (s) and sizes per model; ``reused`` rows were loaded, not trained, in this run
    (their seconds are those of the run that trained them)."""
    rows = [{**m.row(), "negative kind": m.params.get("negatives", "random")} for m in trained]
    return pd.DataFrame(rows)


def select_best(scores: Mapping[str, float]) -> str:
    """The name with the highest score (ties: the first, i.e. the smallest N)."""
    if not scores:
        raise ValueError("nothing to select from")
    return max(scores, key=lambda k: (scores[k], -list(scores).index(k)))


CHOSEN = "chosen for dataset "


def register_best(name: str, kind: str, best: TrainedModel, dataset_name: str) -> Any:
    """Point the plain name (``FT-MiniLM`` / ``FT-CrossEncoder``) at the chosen variant's folder."""
    return register(name, kind, best.path, f"{CHOSEN}{dataset_name}: {best.name} "
                                           f"({best.params.get('negatives', 'random')} negatives)")


def chosen_names(kind: str, dataset_name: str) -> list[str]:
    """Plain fine-tuned names registered for ``dataset_name`` whose folders exist — e.g.
    ``chosen_names("sentence-transformers", "embedded") == ["FT-MiniLM"]`` after notebook 05 —
    so notebooks 02–04 can add them to their lists (empty before notebook 05 has run)."""
    from pathlib import Path as _Path

    out = []
    for n in models.all_names():
        spec = models.get_spec(n)
        if (
            spec.source == "local"
            and spec.kind == kind
            and spec.description.startswith(f"{CHOSEN}{dataset_name}:")
            and _Path(spec.extra["path"]).exists()
        ):
            out.append(n)
    return out


def select_variants(ds: Dataset, trained: Sequence[TrainedModel], select_split: str, metric: str,
                    corpus: Mapping[str, str], dataset_name: str, threshold: int = 1, k: int = 100
                    ) -> tuple[pd.DataFrame, TrainedModel, TrainedModel]:
    """Pick the bi-encoder by retrieval ``metric`` and the cross-encoder by oracle nDCG@10, both on
    ``select_split`` (dev: the test split is never looked at). Without questions there, the
    variants with the largest N are taken. Returns (selection table, best bi-encoder, best cross-encoder)."""

    bi = [m for m in trained if m.kind == BIENCODER_KIND]
    ce = [m for m in trained if m.kind == CROSS_ENCODER_KIND]
    if not bi or not ce:
        raise ValueError("select_variants needs at least one trained bi-encoder and one cross-encoder")
    queries = stages.queries_of(ds, select_split) if select_split in ds.splits else {}
    queries = {q: t for q, t in queries.items() if any(v >= threshold for v in ds.qrels.get(q, {}).values())}
    if not queries:
        rows = [
            {"model": m.name, "kind": m.kind, "N": m.n_positives, "score": None, "chosen": False}
            for m in trained
        ]
        best_bi = max(bi, key=lambda m: m.n_positives)
        best_ce = max(ce, key=lambda m: m.n_positives)
        note = f"no {select_split} question with a relevant passage: largest N taken"
    else:
        qrels = {q: ds.qrels[q] for q in queries}
        runs = run_all(
            [m.name for m in bi], dict(corpus), queries, dataset_name, stages.finetune_tag(select_split), k=k
        )
        bi_scores = metrics_table(runs, qrels, threshold, [metric])[metric].to_dict()
        oracle, _ = oracle_rows([m.name for m in ce], queries, qrels, corpus,
                                out_dir=stages.run_dir(dataset_name, stages.finetune_tag(select_split)))
        ce_scores = (
            oracle["nDCG@10"]
            .drop(index=[i for i in oracle.index if str(i).startswith("no reranker")])
            .to_dict()
        )
        best_bi = next(m for m in bi if m.name == select_best(bi_scores))
        best_ce = next(m for m in ce if m.name == select_best(ce_scores))
        rows = [{"model": m.name, "kind": m.kind, "N": m.n_positives,
                 "score": (bi_scores if m.kind == BIENCODER_KIND else ce_scores)[m.name], "chosen": False}
                for m in trained]
        note = (
            f"{select_split}: {len(queries)} questions; bi-encoder by {metric}, cross-encoder by oracle "
            "nDCG@10"
        )
    table = pd.DataFrame(rows)
    table["chosen"] = table["model"].isin([best_bi.name, best_ce.name])
    table.attrs["note"] = note
    return table, best_bi, best_ce


def summary(
    retrieval: pd.DataFrame,
    vanilla: str,
    best_retriever: str,
    oracle: pd.DataFrame,
    best_reranker: str,
    reading: pd.DataFrame | None = None,
    metric: str = "nDCG@10",
) -> str:
    """A few sentences: fine-tuned vs vanilla retrieval, the cross-encoder under the oracle, reader EM."""
    def delta(a: float, b: float) -> str:
        return f"{a:.2f} vs {b:.2f} ({a - b:+.2f})"

    parts = []
    if vanilla in retrieval.index and best_retriever in retrieval.index:
        ft = retrieval[retrieval["N"].notna()][metric]
        parts.append(
            f"**Retrieval.** {best_retriever} vs vanilla {vanilla}, {metric}: "
            f"{delta(retrieval.loc[best_retriever, metric], retrieval.loc[vanilla, metric])}; across N the "
            f"fine-tuned {metric} ranges {ft.min():.2f}–{ft.max():.2f}."
        )
    base = [i for i in oracle.index if str(i).startswith("no reranker")]
    if best_reranker in oracle.index and base:
        parts.append(f"**Oracle reranker.** {best_reranker} vs the id order, nDCG@10: "
                     f"{delta(oracle.loc[best_reranker, 'nDCG@10'], oracle.loc[base[0], 'nDCG@10'])}.")
    if reading is not None and len(reading):
        r = reading.set_index("system")
        best = r["EM"].idxmax()
        parts.append(f"**Reading.** Highest strict EM: {best} ({r.loc[best, 'EM']:.2f}%; judged "
                     f"{r.loc[best, 'judged']:.2f}%) over {int(r['n'].max())} questions — differences of one "
                     f"question are {100 / max(1, int(r['n'].max())):.1f} points.")
    return " ".join(parts)


class FixedRun:
    """A 'retriever' that returns a run computed already — caches a run under an alias name
    (``FT-MiniLM`` is the same folder as its chosen ``FT-MiniLM-N<n>``) without re-encoding;
    ``identity`` is that of the model the run came from."""

    def __init__(self, name: str, run: Run, identity: str) -> None:
        self.name = name
        self.identity = identity
        self._run = run

    def search(self, queries: Mapping[str, str], k: int = 100) -> Run:
        return {q: list(self._run.get(q, []))[:k] for q in queries}


def alias_run(name: str, run: Run, corpus: Mapping[str, str], queries: Mapping[str, str], k: int,
              run_path: Path) -> Run:
    """Write ``run`` as the cached run of registry name ``name`` (stamped with that model's identity)."""

    return retrieve(
        name, corpus, queries, k=k, run_path=run_path, retriever=FixedRun(name, run, retriever_identity(name))
    )


def cached_rerank(
    name: str,
    queries: Mapping[str, str],
    run: Run,
    corpus: Mapping[str, str],
    depth: int | None,
    run_path: Path | None = None,
) -> tuple[Run, float]:
    """Rerank ``run`` with cross-encoder ``name`` (top-``depth``; None: the whole list), cached as an
    artifact (:func:`inferqa_utils.core.artifacts.cached`) with the reranked-run key
    (:func:`inferqa_utils.rerank.stored.rerank_key`) whose identity is the model's checksum (its
    folder's files, so retraining invalidates it). A valid artifact is read back without loading
    the model. Returns (run, seconds per query of the run that computed it, loading the model
    included)."""

    def load(path: Path) -> Run:
        found = read_run(path, known_docids=set(corpus))
        return {q: found.get(q, []) for q in run}

    key = rerank_key(name, models.checksum(name), queries, run, corpus, depth)
    tag = Path(run_path).stem if run_path is not None else name
    done = artifacts.cached(
        run_path,
        key,
        lambda: make_reranker(name).rerank(queries, run, corpus, depth=depth),
        n_queries=len(queries),
        load=load,
        save=lambda out, tmp: write_run(out, tmp, tag=tag),
    )
    return done.value, per_query(done.cost) or 0.0


def oracle_rows(
    names: Sequence[str],
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    corpus: Mapping[str, str],
    out_dir: Path | None = None,
) -> tuple[pd.DataFrame, dict[str, Run]]:
    """Oracle-reranker setting (paper 000 §5.3): the question's own passages, in id order as the baseline,
    reordered by each cross-encoder; graded nDCG@5/10/50/100 (%) with 95 % bootstrap intervals over
    questions (columns ``m_lo`` / ``m_hi``, :func:`inferqa_utils.rerank.evaluation.oracle_scores`). With
    ``out_dir`` the runs are
    cached there as ``oracle+<name>.trec`` (notebook 04 reads them)."""

    own = {q: dict(qrels[q]) for q in queries}
    first = oracle_run(own)
    runs = {
        n: cached_rerank(
            n, queries, first, corpus, None,
            None if out_dir is None else stages.run_dir_file(out_dir, stages.reranked_name("oracle", n)),
        )[0]
        for n in names
    }
    return oracle_scores(first, runs, own), runs


def oracle_informative(qrels: Mapping[str, Mapping[str, int]], queries: Iterable[str]) -> int:
    """How many questions can separate rerankers in the oracle setting: those whose own passages do
    not all carry the same label (otherwise every order scores nDCG 100)."""
    return sum(1 for q in queries if len({int(v) for v in qrels.get(q, {}).values()}) > 1)


def rerank_first_stage(name: str, first_name: str, first: Run, queries: Mapping[str, str],
                       qrels: Mapping[str, Mapping[str, int]], corpus: Mapping[str, str], depth: int,
                       threshold: int, out_dir: Path) -> tuple[pd.DataFrame, Run]:
    """Cross-encoder ``name`` over the top-``depth`` of a first-stage run, cached as
    ``<first>+<name>.trec``; the two runs' metrics side by side (notebook 03's table)."""

    run, cost = cached_rerank(
        name, queries, first, corpus, depth,
        stages.run_dir_file(out_dir, stages.reranked_name(first_name, name)),
    )
    return rerank_table(first_name, first, {name: run}, {name: cost}, qrels, threshold), run


def notebook03_oracle(dataset_name: str, split: str) -> pd.DataFrame | None:
    """The LLM rerankers' oracle rows written by notebook 03 (:data:`inferqa_utils.stages.ORACLE_RERANKER`),
    relabelled ``<name> (notebook 03)``; None when notebook 03 has not run."""
    p = stages.ORACLE_RERANKER.path(dataset_name, split)
    if not p.exists():
        return None
    t = pd.read_csv(p, index_col=0)
    t = t[[not str(i).startswith("no reranker") for i in t.index]]
    t.index = [f"{i} (notebook {stages.ORACLE_RERANKER.stage})" for i in t.index]
    return t


def add_n_column(table: pd.DataFrame, trained: Sequence[TrainedModel]) -> pd.DataFrame:
    """Prefix a per-model table with N and the negatives kind (blank for vanilla rows)."""
    by_name = {m.name: m for m in trained}
    t = table.copy()
    t.insert(
        0,
        "negative kind",
        [by_name[i].params.get("negatives", "random") if i in by_name else "" for i in t.index],
    )
    t.insert(0, "N", [by_name[i].n_positives if i in by_name else None for i in t.index])
    return t


def loss_frame(trained: Sequence[TrainedModel]) -> pd.DataFrame:
    """Long table of the logged training loss: model, kind, N, step, loss."""
    rows = [{"model": m.name, "kind": m.kind, "N": m.n_positives, "step": s, "loss": v}
            for m in trained for s, v in m.loss]
    return pd.DataFrame(rows, columns=["model", "kind", "N", "step", "loss"])


def plot_finetuning(losses: pd.DataFrame, retrieval: pd.DataFrame, vanilla: str, metrics: Sequence[str],
                    oracle: pd.DataFrame, reading: pd.DataFrame | None = None, title: str = "",
                    intervals: pd.DataFrame | None = None) -> Any:
    """Three panels: (a) training loss per model, (b) fine-tuned retrieval/oracle metrics vs N with the
    vanilla levels dashed, (c) reader EM / judged accuracy per system.

    Means over questions carry their 95 % bootstrap interval over questions: in (b) the retrieval
    metrics' from ``intervals`` (index run, columns ``<m>_lo`` / ``<m>_hi``, e.g.
    :func:`inferqa_utils.measure.uncertainty.metric_intervals`) and oracle nDCG@10's from ``oracle``'s own
    ``nDCG@10_lo`` / ``nDCG@10_hi`` (:func:`oracle_rows`), as error bars on the fine-tuned points and
    as a shaded band around a vanilla level; in (c) ``EM_lo`` / ``EM_hi`` and ``judged_lo`` /
    ``judged_hi`` of ``reading`` (:func:`inferqa_utils.reading.conditions.em_table`) as error bars."""
    import matplotlib.pyplot as plt
    import numpy as np

    def interval(
        table: pd.DataFrame | None, rows: Sequence[Any], col: str
    ) -> tuple[np.ndarray, np.ndarray] | None:
        if table is None or f"{col}_lo" not in table.columns or f"{col}_hi" not in table.columns:
            return None
        t = table.reindex(list(rows))
        return t[f"{col}_lo"].to_numpy(float), t[f"{col}_hi"].to_numpy(float)

    def band(ax: Any, table: pd.DataFrame | None, row: Any, col: str, color: str) -> None:
        iv = interval(table, [row], col)
        if iv is not None and not np.isnan(iv[0][0]) and not np.isnan(iv[1][0]):
            ax.axhspan(iv[0][0], iv[1][0], color=color, alpha=0.08, lw=0)

    bar_style = {"elinewidth": 0.8, "capsize": 3}
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.2))
    ax = axes[0]
    for name, g in losses.groupby("model", sort=False):
        ax.plot(g["step"], g["loss"], marker="o", ms=2, label=name,
                ls="-" if g["kind"].iloc[0] == BIENCODER_KIND else "--")
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("training loss")
    ax.set_title("(a) loss (solid: bi-encoder MNRL, dashed: cross-encoder BCE)", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    ax = axes[1]
    ft = retrieval[retrieval["N"].notna()]
    oft = oracle[oracle["N"].notna()]
    n_series = len(metrics) + (1 if len(oft) else 0)
    dodge = [1.06 ** (i - (n_series - 1) / 2) for i in range(n_series)]  # spread on the log N axis
    for i, m in enumerate(metrics):
        color = f"C{i}"
        for neg, g in ft.groupby("negative kind", sort=False):
            iv = interval(intervals, g.index, m)
            yerr = None if iv is None else error_bars(g[m], *iv)
            ax.errorbar(
                g["N"] * dodge[i],
                g[m], yerr=yerr, marker="o", color=color,
                ls="-" if neg == "random" else ":",
                label=f"FT bi-encoder {m}" + ("" if neg == "random" else f" ({neg})"),
                **bar_style,
            )
        if vanilla in retrieval.index:
            ax.axhline(retrieval.loc[vanilla, m], color=color, ls="--", lw=1, label=f"{vanilla} {m}")
            band(ax, intervals, vanilla, m, color)
    if len(oft):
        for neg, g in oft.groupby("negative kind", sort=False):
            iv = interval(oracle, g.index, "nDCG@10")
            yerr = None if iv is None else error_bars(g["nDCG@10"], *iv)
            ax.errorbar(
                g["N"] * dodge[-1],
                g["nDCG@10"],
                yerr=yerr, marker="s", color="C3",
                ls="-" if neg == "random" else ":",
                label="FT cross-encoder oracle nDCG@10" + ("" if neg == "random" else f" ({neg})"),
                **bar_style,
            )
        base = [i for i in oracle.index if str(i).startswith("no reranker")]
        if base:
            ax.axhline(
                oracle.loc[base[0], "nDCG@10"], color="C3", ls="--", lw=1, label="oracle, id order nDCG@10"
            )
            band(ax, oracle, base[0], "nDCG@10", "C3")
    ax.set_xscale("log")
    ns = sorted({int(n) for n in pd.concat([ft["N"], oft["N"]]).dropna()})
    if ns:
        from matplotlib.ticker import NullLocator

        ax.set_xticks(ns, [str(n) for n in ns])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlim(min(ns) / 1.6, max(ns) * 1.6)  # the dodge stays small even with a single N
    ax.set_xlabel("N positives per question")
    ax.set_ylabel("%")
    ax.set_title("(b) vanilla (dashed, shaded: its interval) vs fine-tuned by N", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    ax = axes[2]
    if reading is not None and len(reading):
        x = np.arange(len(reading))
        top = 0.0  # highest bar or interval end
        for off, col, label in ((-0.2, "EM", "strict EM"), (0.2, "judged", "judged")):
            iv = interval(reading.reset_index(drop=True), x, col)
            yerr = None if iv is None else error_bars(reading[col], *iv)
            ax.bar(x + off, reading[col], width=0.4, label=label, yerr=yerr, capsize=3,
                   error_kw={"elinewidth": 0.8})
            y = reading[col].to_numpy(float) if iv is None else np.fmax(reading[col].to_numpy(float), iv[1])
            top = max(top, float(np.nanmax(y, initial=0.0)))
            for xi, yi, v in zip(x + off, y, reading[col], strict=True):
                ax.annotate(f"{v:.1f}", (xi, yi), xytext=(0, 2), textcoords="offset points", ha="center",
                            va="bottom", fontsize=7)
        ax.set_xticks(list(x), list(reading["system"]), rotation=30, ha="right", fontsize=8)
        ax.set_ylim(0, max(10.0, top * 1.15))
        ax.set_ylabel("%")
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no reading", ha="center", va="center")
    ax.set_title("(c) reader accuracy by retrieval system", fontsize=9)
    ax.grid(alpha=0.3, axis="y")
    fig.suptitle(f"{title}\n{INTERVAL_NOTE}" if title else INTERVAL_NOTE)
    fig.tight_layout()
    return fig
