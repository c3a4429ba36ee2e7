"""Reading experiments (paper 000 §5.4, Table 8, Figs. 5–6): top-k contexts → reader → EM.

Three settings share one scorer (:func:`score_answers`, strict EM and LLM-judged accuracy):

* **pipeline** — a retriever/reranker run; the top-k passages become one context
  (Union_norm or Union_freq at hint level, :mod:`inferqa_utils.reading.contexts`);
* **oracle** — the question's own passages ordered by a reranker, then the same top-k reading;
* **Optimal** — every label-1/2 passage read alone; a question is answerable when any passage
  yields a correct answer. Answers the labeler already produced for the same passage with the
  same prompt are reused from the built dataset (``generations``) instead of calling the model.

Every reader/judge call goes through the cached engine, so a re-run makes no model call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from ..answering.judge import judge_answers
from ..answering.prompts import NO_ANSWER
from ..answering.reader import KnownAnswers, read
from ..datamodel import Dataset, Question
from ..llm.base import LLM
from ..trec import Run
from ..uncertainty import mean_ci
from .contexts import ALPHA, BETA, build_context

UNIONS = ("norm", "freq")


def passage_sentences(ds: Dataset, pid: str, corpus: Mapping[str, str] | None = None) -> list[str]:
    """The hints (sentences) of a passage: its question's hints in permutation order for a built
    passage (a distractor question's hints come from ``ds.meta["distractor_hints"]``); for any other corpus entry (e.g. a control-corpus reference) the text as one unit."""
    p = ds.passages.get(pid)
    if p is not None:
        hints = (ds.questions[p.qid].hint_texts if p.qid in ds.questions
                 else ds.meta.get("distractor_hints", {}).get(p.qid))
        if hints is not None and all(i < len(hints) for i in p.hint_ids):
            return [hints[i].strip() for i in p.hint_ids]
        return [p.text]
    if corpus is not None and pid in corpus:
        return [corpus[pid]]
    raise KeyError(f"passage {pid!r} is neither in dataset {ds.name!r} nor in the given corpus")


def ranked_ids(run: Run, qid: str) -> list[str]:
    """A run's passages for ``qid`` in rank order (runs are stored best first)."""
    return [d for d, _ in run.get(qid, [])]


def contexts_from_run(ds: Dataset, run: Run, qids: Iterable[str], k: int, union: str = "norm",
                      alpha: float = ALPHA, beta: float = BETA,
                      corpus: Mapping[str, str] | None = None) -> dict[str, str]:
    """paper 000 §5.4: per question, the context built from the run's top-``k`` passages."""
    out = {}
    for qid in qids:
        top = ranked_ids(run, qid)[:k]
        out[qid] = build_context([passage_sentences(ds, pid, corpus) for pid in top], k, union, alpha, beta) if top else ""
    return out


def known_answers(ds: Dataset, model: str) -> KnownAnswers:
    """The answers ``model`` gave while the dataset was built, for :func:`~inferqa_utils.answering.reader.read`
    to reuse: its labelling answer to every labelled passage (the passage text as the context), and
    — for a dataset installed from a release — its answers in the release's pooled control
    judgments (notebook 02; supporting-corpus passages and control references), each under the
    reader layout they were generated with. A context that equals a passage (top-1, an oracle
    union of one question's hints) is then not read again."""
    from ..construction.release import control_texts, installed_release, released_judgments
    from ..retrieval.pooled import CONTAINING_JUDGED

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
        for corpus, qid, pid, a in zip(judgments["corpus"], judgments["qid"], judgments["pid"], judgments["answer"],
                                       strict=True):
            text = refs.get(pid) if corpus == CONTAINING_JUDGED else (ds.passages[pid].text if pid in ds.passages else None)
            if a and text is not None and qid in ds.questions:
                answers.setdefault((ds.questions[qid].question, text), a)
    return KnownAnswers(model, built.get("reader_layout", "context-first"), answers)


def gold_of(q: Question) -> list[str]:
    """The gold answers/aliases (what the judge is shown); the EM pool is ``q.answers``."""
    return list(q.meta.get("gold_answers") or q.answers)


def score_answers(ds: Dataset, qids: Sequence[str], answers: Sequence[str], judge: LLM | None,
                  progress: bool = True, contexts: Sequence[str] | None = None) -> pd.DataFrame:
    """Strict EM against each question's answer pool and judged accuracy: EM, or else the judge's
    Yes unless an answer guard refuses the answer first (``guard`` column; the ``in_context`` guard
    needs ``contexts``, the text each answer was read from)."""
    qs = [ds.questions[q] for q in qids]
    js = judge_answers(judge, [q.question for q in qs], [q.answers for q in qs], list(answers), progress=progress,
                       contexts=list(contexts) if contexts is not None else None)
    return pd.DataFrame({"qid": list(qids), "answer": list(answers), "em": [j.em for j in js],
                         "judged": [j.judged for j in js], "no_answer": [a == NO_ANSWER for a in answers],
                         "guard": [j.guard for j in js]})


def read_contexts(reader: LLM, judge: LLM | None, ds: Dataset, contexts: Mapping[str, str],
                  progress: bool = True, desc: str | None = None) -> pd.DataFrame:
    """Read one context per question and score it. An empty context is read as it is (the
    reader should say ``NO ANSWER``)."""
    qids = list(contexts)
    outs = read(reader, [ds.questions[q].question for q in qids], [contexts[q] for q in qids],
                desc=desc, progress=progress)
    df = score_answers(ds, qids, [o.answer for o in outs], judge, progress=progress,
                       contexts=[contexts[q] for q in qids])
    df["context_chars"] = [len(contexts[q]) for q in qids]
    return df


def read_run(reader: LLM, judge: LLM | None, ds: Dataset, run: Run, qids: Sequence[str],
             ks: Sequence[int] = (1, 3, 5), unions: Sequence[str] = UNIONS, alpha: float = ALPHA,
             beta: float = BETA, corpus: Mapping[str, str] | None = None, system: str = "",
             setting: str = "pipeline", progress: bool = True, known: KnownAnswers | None = None) -> pd.DataFrame:
    """Per-question answers for every (k, union) over one run (:func:`read_runs` of one run)."""
    return read_runs(reader, judge, ds, {system: run}, qids, ks, unions, alpha, beta, corpus,
                     settings={system: setting}, progress=progress, known=known)


def read_runs(reader: LLM, judge: LLM | None, ds: Dataset, runs: Mapping[str, Run], qids: Sequence[str],
              ks: Sequence[int] = (1, 3, 5), unions: Sequence[str] = UNIONS, alpha: float = ALPHA,
              beta: float = BETA, corpus: Mapping[str, str] | None = None,
              settings: Mapping[str, str] | None = None, progress: bool = True,
              known: KnownAnswers | None = None) -> pd.DataFrame:
    """Per-question answers for every (run, k, union): one row per (system, k, union, question),
    in that order, with ``setting`` (``settings[system]``, default ``pipeline``).

    Every context is read in **one** reader batch and every answer judged in **one** judge batch:
    the engine orders the prompts so that contexts extending one another (top-1 ⊂ top-3 ⊂ top-5)
    run one after another and share their prefix, and reads a context that several runs or both
    unions produce once (e.g. k = 1, where Union_norm = Union_freq). Answers in ``known``
    (:func:`known_answers`: the build's own readings of the same prompts) are not read again."""
    jobs = []
    for system, run in runs.items():
        for k in ks:
            for union in unions:
                ctx = contexts_from_run(ds, run, qids, k, union, alpha, beta, corpus)
                jobs += [(system, k, union, q, ctx[q]) for q in qids]
    if not jobs:
        return pd.DataFrame()
    contexts = [j[4] for j in jobs]
    outs = read(reader, [ds.questions[j[3]].question for j in jobs], contexts,
                desc=f"read {len(runs)} run(s) × k {list(ks)} × {list(unions)}", progress=progress, known=known)
    df = score_answers(ds, [j[3] for j in jobs], [o.answer for o in outs], judge, progress=progress,
                       contexts=contexts)
    df["context_chars"] = [len(c) for c in contexts]
    return df.assign(setting=[(settings or {}).get(j[0], "pipeline") for j in jobs], system=[j[0] for j in jobs],
                     k=[j[1] for j in jobs], union=[j[2] for j in jobs], reader=reader.name)


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
                rows.append((qid, pid, lab, (ds.generations.get(pid) or {}).get(name) if reuse_generations else None))
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
    wrong), shaped like :func:`read_run` rows (setting ``Optimal``, k and union empty)."""
    g = per_passage.groupby("qid")[["em", "judged"]].any() if len(per_passage) else pd.DataFrame(columns=["em", "judged"])
    out = pd.DataFrame({"qid": list(qids)}).set_index("qid").join(g)
    out = out.fillna(False).astype(bool).reset_index()
    out["no_answer"] = False
    return out.assign(setting="Optimal", system="every label ≥ 1 passage", k=None, union=None, reader=reader)


def grid_search_union(reader: LLM, judge: LLM | None, ds: Dataset, run: Run, qids: Sequence[str], k: int,
                      grid: Sequence[tuple[float, float]], progress: bool = True) -> pd.DataFrame:
    """paper 000 §5.4: EM / judged accuracy of Union_freq for each (α, β) on ``qids`` (the dev split),
    best first. Contexts that coincide across grid points are read once (engine cache)."""
    rows = []
    for alpha, beta in grid:
        ctx = contexts_from_run(ds, run, qids, k, "freq", alpha, beta)
        df = read_contexts(reader, judge, ds, ctx, progress=progress, desc=f"grid α={alpha} β={beta}")
        rows.append({"alpha": alpha, "beta": beta, "EM": 100 * df["em"].mean(), "judged": 100 * df["judged"].mean()})
    return pd.DataFrame(rows).sort_values(["EM", "judged"], ascending=False).round(2).reset_index(drop=True)


def em_table(answers: pd.DataFrame) -> pd.DataFrame:
    """Table 8 shape: EM / judged accuracy / NO ANSWER rate (%) per reader × setting × system × k × union,
    with seeded 95 % bootstrap intervals over questions for EM and judged accuracy
    (:func:`inferqa_utils.uncertainty.mean_ci`; columns ``EM_lo``/``EM_hi``, ``judged_lo``/``judged_hi``)."""

    keys = [c for c in ("reader", "setting", "system", "k", "union") if c in answers.columns]
    answers = answers.assign(k=answers["k"].astype("Int64")) if "k" in answers.columns else answers
    groups = answers.groupby(keys, sort=False, dropna=False)
    t = groups.agg(EM=("em", "mean"), judged=("judged", "mean"), no_answer=("no_answer", "mean"), n=("qid", "nunique"))
    for col, src in (("EM", "em"), ("judged", "judged")):
        cis = [mean_ci(g[src].astype(float).to_numpy()) for _, g in groups]
        t[f"{col}_lo"] = [100 * c.lo for c in cis]
        t[f"{col}_hi"] = [100 * c.hi for c in cis]
    pct = ["EM", "judged", "no_answer"]
    t[pct] = 100 * t[pct]
    ci_cols = ["EM_lo", "EM_hi", "judged_lo", "judged_hi"]
    t[pct + ci_cols] = t[pct + ci_cols].round(2)
    return t[["EM", "EM_lo", "EM_hi", "judged", "judged_lo", "judged_hi", "no_answer", "n"]].reset_index()


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
                  ks: Sequence[int], unions: Sequence[str], alpha: float = ALPHA, beta: float = BETA,
                  load: Callable[[str], LLM] | None = None) -> Readings:
    """Notebook 04's readings (paper 000 §5.4, Table 8): each of ``reader_models`` reads every run ×
    k × union (pipeline and oracle settings, :func:`read_runs`: one reader batch and one judge batch,
    contexts the build already read reused via :func:`known_answers`) and the Optimal setting
    (:func:`optimal`); each of ``optimal_readers`` that is not also a main reader reads the Optimal
    setting only. ``load`` makes an engine from a registry name (default
    :func:`inferqa_utils.llm.load_llm`); each engine's counters start at 0, so ``reuse`` shows this
    call's model calls (0 on a re-run)."""
    if load is None:
        from ..llm import load_llm as load
    frames, optimal_rows, reuse = [], [], {}
    for name in [*reader_models, *(r for r in optimal_readers if r not in reader_models)]:
        reader = load(name)
        reader.reset_stats()
        if name in reader_models:
            frames.append(read_runs(reader, judge, ds, runs, qids, ks, unions, alpha, beta, settings=settings,
                                    known=known_answers(ds, name)))
        per_passage, counts = optimal(reader, judge, ds, qids)
        optimal_rows.append(per_passage)
        frames.append(optimal_per_question(per_passage, qids, name))
        reuse[name] = counts | {"model calls": reader.stats.model_calls, "cache hits": reader.stats.cache_hits}
    answers = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    opt = pd.concat(optimal_rows, ignore_index=True) if optimal_rows else pd.DataFrame()
    table = pd.DataFrame.from_dict(reuse, orient="index")
    table.index.name = "reader"
    return Readings(answers, opt, table)
