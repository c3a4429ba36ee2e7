"""Reading experiments of notebook 04 (paper 000 §5.4, Table 8, Figs. 5–6): top-k contexts → reader → EM.

Three settings share one scorer (:func:`inferqa_utils.answering.scoring.score_answers`, strict EM and
LLM-judged accuracy):

* **pipeline** — a retriever/reranker run; the top-k passages become one context
  (Union_norm or Union_freq at hint level, :mod:`inferqa_utils.reading.contexts`), read by
  :func:`inferqa_utils.reading.topk.read_runs`;
* **oracle** — the question's own passages ordered by a reranker, then the same top-k reading;
* **Optimal** — every label-1/2 passage read alone; a question is answerable when any passage
  yields a correct answer. Answers the labeler already produced for the same passage with the
  same prompt are reused from the built dataset (``generations``) instead of calling the model.

Every reader/judge call goes through the cached engine, so a re-run makes no model call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from ..answering.reader import KnownAnswers, read
from ..answering.scoring import score_answers
from ..ir.datamodel import Dataset
from ..ir.trec import Run
from ..llm.base import LLM
from ..measure.uncertainty import mean_ci
from .contexts import ALPHA, BETA
from .setup import ReadingSetup
from .topk import contexts_from_run, read_contexts

# re-exported: notebooks 04 and 05 call ``reading.read_runs``
from .topk import read_runs as read_runs

#: the hints of a passage, ``passage_sentences(ds, pid, corpus)``: kept here for notebook 07
passage_sentences = Dataset.passage_sentences


def known_answers(ds: Dataset, model: str) -> KnownAnswers:
    """The answers ``model`` gave while the dataset was built, for
    :func:`~inferqa_utils.answering.reader.read`
    to reuse: its labelling answer to every labelled passage (the passage text as the context), and
    — for a dataset installed from a release — its answers in the release's pooled control
    judgments (notebook 02; supporting-corpus passages and control references), each under the
    reader layout they were generated with. A context that equals a passage (top-1, an oracle
    union of one question's hints) is then not read again."""
    from ..construction.release import installed_release, released_judgments
    from ..retrieval.pooled import CONTAINING_JUDGED
    from ..stages import control_texts

    built = ds.meta.get("built") or {}
    answers: dict[tuple[str, str], str] = {}
    for pid, gens in ds.generations.items():
        a, p = (gens or {}).get(model), ds.passages.get(pid)
        if a and p is not None and p.qid in ds.questions:
            answers[(ds.questions[p.qid].question, p.text)] = a
    control = ((built.get("release") or {}).get("control") or {})
    judgments = released_judgments(ds) if control.get("reader_model") == model else None
    if judgments is not None and len(judgments):
        refs = control_texts(installed_release(ds))
        for corpus, qid, pid, a in zip(
            judgments["corpus"], judgments["qid"], judgments["pid"], judgments["answer"], strict=True
        ):
            text = (
                refs.get(pid)
                if corpus == CONTAINING_JUDGED
                else (ds.passages[pid].text if pid in ds.passages else None)
            )
            if a and text is not None and qid in ds.questions:
                answers.setdefault((ds.questions[qid].question, text), a)
    return KnownAnswers(model, built.get("reader_layout", "context-first"), answers)


def optimal(reader: LLM | str, judge: LLM | None, ds: Dataset, qids: Sequence[str], min_label: int = 1,
            reuse_generations: bool = True, progress: bool = True) -> tuple[pd.DataFrame, dict[str, int]]:
    """paper 000 §5.4, Table 8 Optimal: read every passage with label ≥ ``min_label`` alone; per question,
    ``em``/``judged`` is true when any passage gives a correct answer.

    ``reader`` may be an engine or a model name; answers the same model produced during labeling
    (same prompt: the passage text as context) are taken from ``ds.generations``. Only the
    missing ones need an engine (a name is then an error). Returns (per-passage frame with a
    ``reused`` column, counts ``{"passages", "reused", "read"}``).
    """
    name = reader if isinstance(reader, str) else reader.name
    rows = []
    for qid in qids:
        for pid, lab in sorted(ds.qrels.get(qid, {}).items()):
            if lab >= min_label and pid in ds.passages:
                rows.append(
                    (qid, pid, lab, (ds.generations.get(pid) or {}).get(name) if reuse_generations else None)
                )
    todo = [i for i, r in enumerate(rows) if r[3] is None]
    answers = [r[3] for r in rows]
    if todo:
        if isinstance(reader, str):
            raise ValueError(f"{len(todo)} passages have no stored answer by {name!r}; pass a loaded reader")
        outs = read(reader, [ds.questions[rows[i][0]].question for i in todo],
                    [ds.passages[rows[i][1]].text for i in todo], desc=f"Optimal ({name})", progress=progress)
        for i, o in zip(todo, outs, strict=True):
            answers[i] = o.answer
    df = score_answers(ds, [r[0] for r in rows], answers, judge, progress=progress,
                       contexts=[ds.passages[r[1]].text for r in rows])
    df.insert(1, "pid", [r[1] for r in rows])
    df["label"] = [r[2] for r in rows]
    df["n_hints"] = [ds.passages[r[1]].n_hints for r in rows]
    df["reused"] = [r[3] is not None for r in rows]
    df["reader"] = name
    return df, {"passages": len(rows), "reused": len(rows) - len(todo), "read": len(todo)}


def optimal_per_question(per_passage: pd.DataFrame, qids: Sequence[str], reader: str) -> pd.DataFrame:
    """Any-correct aggregation of :func:`optimal` (questions without label ≥ 1 passages count as
    wrong), shaped like :func:`~inferqa_utils.reading.topk.read_run` rows (setting ``Optimal``, k and union
    empty)."""
    g = (
        per_passage.groupby("qid")[["em", "judged"]].any()
        if len(per_passage)
        else pd.DataFrame(columns=["em", "judged"])
    )
    out = pd.DataFrame({"qid": list(qids)}).set_index("qid").join(g)
    out = out.fillna(False).astype(bool).reset_index()
    out["no_answer"] = False
    return out.assign(setting="Optimal", system="every label ≥ 1 passage", k=None, union=None, reader=reader)


def grid_search_union(setup: ReadingSetup, run: Run, qids: Sequence[str],
                      grid: Sequence[tuple[float, float]]) -> pd.DataFrame:
    """paper 000 §5.4: EM / judged accuracy of Union_freq over the top-``setup.k`` passages for each
    (α, β) of ``grid`` on ``qids`` (the dev split), best first. Contexts that coincide across grid
    points are read once (engine cache)."""
    rows = []
    for alpha, beta in grid:
        ctx = contexts_from_run(setup.dataset, run, qids, setup.k, "freq", alpha, beta, setup.corpus)
        df = read_contexts(setup, ctx, desc=f"grid α={alpha} β={beta}")
        rows.append(
            {"alpha": alpha, "beta": beta, "EM": 100 * df["em"].mean(), "judged": 100 * df["judged"].mean()}
        )
    return pd.DataFrame(rows).sort_values(["EM", "judged"], ascending=False).round(2).reset_index(drop=True)


def em_table(answers: pd.DataFrame) -> pd.DataFrame:
    """Table 8 shape: EM / judged accuracy / NO ANSWER rate (%) per reader × setting × system × k × union,
    with seeded 95 % bootstrap intervals over questions for EM and judged accuracy
    (:func:`inferqa_utils.measure.uncertainty.mean_ci`; columns ``EM_lo``/``EM_hi``,
    ``judged_lo``/``judged_hi``)."""

    keys = [c for c in ("reader", "setting", "system", "k", "union") if c in answers.columns]
    answers = answers.assign(k=answers["k"].astype("Int64")) if "k" in answers.columns else answers
    groups = answers.groupby(keys, sort=False, dropna=False)
    t = groups.agg(
        EM=("em", "mean"), judged=("judged", "mean"), no_answer=("no_answer", "mean"), n=("qid", "nunique")
    )
    for col, src in (("EM", "em"), ("judged", "judged")):
        cis = [mean_ci(g[src].astype(float).to_numpy()) for _, g in groups]
        t[f"{col}_lo"] = [100 * c.lo for c in cis]
        t[f"{col}_hi"] = [100 * c.hi for c in cis]
    pct = ["EM", "judged", "no_answer"]
    t[pct] = 100 * t[pct]
    ci_cols = ["EM_lo", "EM_hi", "judged_lo", "judged_hi"]
    t[pct + ci_cols] = t[pct + ci_cols].round(2)
    return t[["EM", "EM_lo", "EM_hi", "judged", "judged_lo", "judged_hi", "no_answer", "n"]].reset_index()


@dataclass(frozen=True)
class ContextGrid:
    """The contexts every run is read with (paper 000 §5.4): the top-k passages for each k of
    ``ks``, merged by each union of ``unions`` (``"norm"``: Union_norm, ``"freq"``: Union_freq with
    the rank weight ``alpha`` and the in-passage position weight ``beta`` of paper 000 Eq. 1,
    :mod:`inferqa_utils.reading.contexts`)."""

    ks: Sequence[int]
    unions: Sequence[str]
    alpha: float = ALPHA
    beta: float = BETA


@dataclass
class Readings:
    """Everything notebook 04 reads (:func:`read_settings`)."""

    #: one row per (reader, setting, system, k, union, question); Optimal rows have no k / union
    answers: pd.DataFrame
    #: one row per (reader, passage) of the Optimal setting (:func:`optimal`)
    optimal: pd.DataFrame
    #: per reader: Optimal passages, answers reused from labelling, read now, model calls, cache hits
    reuse: pd.DataFrame


def read_settings(ds: Dataset, runs: Mapping[str, Run], settings: Mapping[str, str], qids: Sequence[str],
                  reader_models: Sequence[str], optimal_readers: Sequence[str], judge: LLM | None,
                  grid: ContextGrid, load: Callable[[str], LLM] | None = None) -> Readings:
    """Notebook 04's readings (paper 000 §5.4, Table 8): each of ``reader_models`` reads every run ×
    k × union of ``grid`` (pipeline and oracle settings, :func:`read_runs`: one reader batch and one
    judge batch, contexts the build already read reused via :func:`known_answers`) and the Optimal
    setting (:func:`optimal`); each of ``optimal_readers`` that is not also a main reader reads the
    Optimal setting only. ``load`` makes an engine from a registry name (default
    :func:`inferqa_utils.llm.load_llm`); each engine's counters start at 0, so ``reuse`` shows this
    call's model calls (0 on a re-run)."""
    if load is None:
        from ..llm import load_llm as load
    frames, optimal_rows, reuse = [], [], {}
    for name in [*reader_models, *(r for r in optimal_readers if r not in reader_models)]:
        reader = load(name)
        reader.reset_stats()
        if name in reader_models:
            setup = ReadingSetup(reader, judge, ds, known=known_answers(ds, name), alpha=grid.alpha,
                                 beta=grid.beta)
            frames.append(read_runs(setup, runs, qids, grid.ks, grid.unions, settings=settings))
        per_passage, counts = optimal(reader, judge, ds, qids)
        optimal_rows.append(per_passage)
        frames.append(optimal_per_question(per_passage, qids, name))
        reuse[name] = counts | {
            "model calls": reader.stats.model_calls,
            "cache hits": reader.stats.cache_hits,
        }
    answers = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    opt = pd.concat(optimal_rows, ignore_index=True) if optimal_rows else pd.DataFrame()
    table = pd.DataFrame.from_dict(reuse, orient="index")
    table.index.name = "reader"
    return Readings(answers, opt, table)
