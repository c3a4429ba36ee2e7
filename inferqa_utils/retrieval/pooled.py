"""A fair answer-containing control: one relevance rule for both corpora, pooled, size-matched.

Paper 000 §5.1 compares retrieval from the answer-supporting corpus (QUIT: relevance = label 2,
an LLM reader answers correctly from the passage) with answer-containing corpora (MS MARCO,
Wikipedia) that it *relabels by LLM answerability*. Judging the control by "contains the answer"
while judging QUIT by answerability mixes two rules; and a control made of each question's own
reference ranks that reference first by construction. Here both corpora are judged by the same
rule — the labeler reads (question, passage) with the reader prompt and the judge accepts its
answer (EM, else guards, else the LLM judge; paper 000 §3.2.2) — so another question's passage can
be relevant and a question's own reference can be irrelevant.

Judging every (question, passage) pair is out of reach (150 questions × 15,000 passages), so the
judgments are **pooled** as in TREC: the union of the top-``depth`` passages of the pooled
retrievers, per question and corpus, is judged; unjudged passages count as not relevant. Own
passages of the answer-supporting corpus already carry their labeling verdict (same rule).
Measures are taken only to the pool depth (Hit@k, k ≤ depth), where every counted passage is judged.

**Size-matched comparison.** Corpora differ in size (TriviaHG: 1,000 Snippets vs ~15,000 hint
passages), and chance levels with them. For each question the larger corpus is cut to the
smaller one's size: the question's own items (its passages, or its reference) plus a seeded
sample of the others; the full-corpus ranking restricted to that sample is the size-matched
ranking (exact for the dense retrievers; BM25 keeps full-corpus term statistics).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from ..core.config import SEED
from ..ir.datamodel import LABEL_PARTIAL, LABEL_RELEVANT, Dataset, Question
from ..ir.trec import Run
from ..llm.base import LLM
from ..measure.metrics import question_scores
from ..stages import CONTAINING_JUDGED, SUPPORTING_JUDGED, Corpus

#: Hit@k measured on judged pools (k ≤ pool depth)
POOLED_KS = (1, 3, 5)


@dataclass(frozen=True)
class JudgedCorpus:
    """One corpus of the comparison: its texts, the runs on it, and whose items each text is."""

    label: str
    texts: Mapping[str, str]
    runs: Mapping[str, Run]
    #: owner question of an item (None: belongs to no evaluated question)
    owner: Callable[[str], str | None]


def pool(corpora: Sequence[JudgedCorpus], qids: Sequence[str], depth: int,
         extra: Mapping[str, Mapping[str, Sequence[str]]] | None = None) -> dict[str, dict[str, list[str]]]:
    """``{corpus label: {qid: [pid, …]}}``: the union of every run's top-``depth`` per question
    (in first-seen order), plus ``extra[label][qid]`` (e.g. the size-matched rankings' tops)."""
    out: dict[str, dict[str, list[str]]] = {}
    for c in corpora:
        per_q: dict[str, list[str]] = {}
        for qid in qids:
            seen: dict[str, None] = {}
            for run in c.runs.values():
                for pid, _ in run.get(qid, [])[:depth]:
                    seen.setdefault(pid)
            for pid in (extra or {}).get(c.label, {}).get(qid, []):
                seen.setdefault(pid)
            per_q[qid] = list(seen)
        out[c.label] = per_q
    return out


def judge_pool(
    pools: Mapping[str, Mapping[str, Sequence[str]]],
    texts: Mapping[str, Mapping[str, str]],
    questions: Sequence[Question],
    reader: LLM,
    judge: LLM | None,
    known: Mapping[str, Mapping[str, int]] | None = None,
    progress: bool = True,
    guards: Sequence[str] | None = None,
    prior: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Judge every pooled (question, passage): the reader answers from the passage, the judge
    decides (label 2 = accepted, 1 = not) against the question's gold answers (``gold_answers``,
    else its answers; paper 000 §3.2.2). ``questions`` holds every question of ``pools``.
    ``known[qid][pid]`` (the build's labels of own passages) is reused instead of a new reading,
    and so is a judgment of the same corpus, question and passage in ``prior`` (a dataset
    release's ``control/judgments.tsv``). One row per judgment: ``corpus, qid, pid, answer,
    label, source`` (``labeling``, ``release`` or ``pooled``). Generations are cached by the LLM."""
    from ..answering.guards import DEFAULT_GUARDS
    from ..answering.judge import judge_answers
    from ..answering.reader import read

    released = (
        {
            (c, q, p): (int(lab), a)
            for c, q, p, lab, a in zip(
                prior["corpus"], prior["qid"], prior["pid"], prior["label"], prior["answer"], strict=True
            )
        }
        if prior is not None and len(prior)
        else {}
    )
    rows, todo = [], []
    for label, per_q in pools.items():
        for qid, pids in per_q.items():
            for pid in pids:
                lab = (known or {}).get(qid, {}).get(pid)
                if lab is not None and lab > 0:
                    rows.append({"corpus": label, "qid": qid, "pid": pid, "answer": None, "label": int(lab),
                                 "source": "labeling"})
                elif (label, qid, pid) in released:
                    lab, ans = released[(label, qid, pid)]
                    rows.append({"corpus": label, "qid": qid, "pid": pid, "answer": ans or None, "label": lab,
                                 "source": "release"})
                else:
                    todo.append((label, qid, pid))
    if todo:
        by_qid = {q.qid: q for q in questions}
        qs = [by_qid[qid].question for _, qid, _ in todo]
        golds = [list(by_qid[qid].meta.get("gold_answers") or by_qid[qid].answers) for _, qid, _ in todo]
        ctx = [texts[label][pid] for label, _, pid in todo]
        outs = read(reader, qs, ctx, desc=f"judge pooled passages ({reader.name})", progress=progress)
        preds = [o.answer for o in outs]
        verdicts = judge_answers(judge, qs, golds, preds, progress=progress,
                                 contexts=ctx, guards=DEFAULT_GUARDS if guards is None else guards)
        for (label, qid, pid), pred, v in zip(todo, preds, verdicts, strict=True):
            rows.append({"corpus": label, "qid": qid, "pid": pid, "answer": pred,
                         "label": LABEL_RELEVANT if v.judged else LABEL_PARTIAL, "source": "pooled"})
    return pd.DataFrame(rows, columns=["corpus", "qid", "pid", "answer", "label", "source"])


def judged_qrels(judgments: pd.DataFrame, corpus: str) -> dict[str, dict[str, int]]:
    """``{qid: {pid: label}}`` of one corpus's judgments."""
    sub = judgments[judgments["corpus"] == corpus]
    out: dict[str, dict[str, int]] = {}
    for qid, pid, lab in zip(sub["qid"], sub["pid"], sub["label"], strict=True):
        out.setdefault(str(qid), {})[str(pid)] = int(lab)
    return out


def size_matched_runs(runs: Mapping[str, Run], texts: Mapping[str, str], owner: Callable[[str], str | None],
                      size: int, qids: Sequence[str], seed: int = SEED) -> dict[str, Run]:
    """Each run restricted, per question, to a corpus of ``size`` items: the question's own items
    plus a seeded sample of the others (the same sample for every retriever). Rankings keep their
    full-corpus order and scores."""
    pids = sorted(texts)
    out: dict[str, Run] = {name: {} for name in runs}
    for qid in qids:
        own = [p for p in pids if owner(p) == qid]
        others = [p for p in pids if owner(p) != qid]
        n = max(0, min(len(others), size - len(own)))
        keep = set(own) | set(random.Random(f"{seed}:size-matched:{qid}").sample(others, n))
        for name, run in runs.items():
            out[name][qid] = [(pid, s) for pid, s in run.get(qid, []) if pid in keep]
    return out


def pooled_hits(corpora: Sequence[JudgedCorpus], qrels: Mapping[str, Mapping[str, Mapping[str, int]]],
                qids: Sequence[str], ks: Sequence[int] = POOLED_KS) -> pd.DataFrame:
    """Per question, retriever and corpus: Hit@k of :mod:`inferqa_utils.measure.metrics` with the
    judged label-2 passages as relevant (threshold :data:`LABEL_RELEVANT`), every question counting
    (a question with no relevant passage found scores 0, on both sides alike). Rows in the
    per-question format of the findings (``corpus, system, measure, threshold, qid, value``; 0/1
    like :func:`inferqa_utils.measure.uncertainty.compare_runs`)."""
    names = [f"Hit@{k}" for k in ks]
    rows = []
    for c in corpora:
        qr = qrels.get(c.label, {})
        for name, run in c.runs.items():
            ranked = {qid: [pid for pid, _ in run.get(qid, [])] for qid in qids}
            hits = question_scores(ranked, qr, names, LABEL_RELEVANT, skip=(), qids=qids)
            for qid in qids:
                for m in names:
                    rows.append({"corpus": c.label, "system": name, "measure": m, "threshold": 2,
                                 "qid": qid, "value": hits[m][qid]})
    return pd.DataFrame(rows)


def corpus_summary(corpora: Sequence[JudgedCorpus], judgments: pd.DataFrame, matched_size: int | None = None
                   ) -> pd.DataFrame:
    """One row per corpus: passages, mean tokens, judged pairs, relevant pairs, questions with a relevant
    passage."""
    from ..construction.stats import n_tokens

    rows = []
    for c in corpora:
        j = judgments[judgments["corpus"] == c.label]
        rows.append(
            {
                "corpus": c.label,
                "passages": len(c.texts),
                "mean tokens": round(sum(n_tokens(t) for t in c.texts.values()) / max(1, len(c.texts)), 2),
                "size-matched to": matched_size,
                "judged pairs": len(j),
                "relevant pairs": int((j["label"] >= LABEL_RELEVANT).sum()),
                "relevant pairs, other questions' items": int(
                    ((j["label"] >= LABEL_RELEVANT) & (j["pid"].map(c.owner) != j["qid"])).sum()
                ),
                "questions with a relevant passage": int(
                    j.loc[j["label"] >= LABEL_RELEVANT, "qid"].nunique()
                ),
            }
        )
    return pd.DataFrame(rows)


#: corpus labels of the fair comparison (per-question rows and tables): :data:`SUPPORTING_JUDGED` and
#: :data:`CONTAINING_JUDGED` (:mod:`inferqa_utils.stages`), the same at equal size, their difference
MATCHED = ", size-matched"
DIFFERENCE = f"{Corpus.CONTAINING} − {Corpus.SUPPORTING}"


@dataclass(frozen=True)
class RankedCorpus:
    """One side of the fair comparison as the notebook has it: the corpus's texts and the runs
    retrieved from it (by retriever name)."""

    texts: Mapping[str, str]
    runs: Mapping[str, Run]


@dataclass(frozen=True)
class PoolSettings:
    """How the fair comparison pools and samples (module docstring): the top-``depth`` of every
    run is judged (Hit@k is measured for k ≤ ``depth``), on the first ``max_questions`` of the
    split (None: all); with ``size_matched`` the size-matched view of each corpus is added, its
    per-question sample seeded by ``seed``."""

    depth: int = 5
    max_questions: int | None = None
    size_matched: bool = True
    seed: int = SEED


@dataclass
class FairControl:
    """Everything the fair comparison produced (see the module docstring)."""

    judgments: pd.DataFrame
    per_question: pd.DataFrame
    summary: pd.DataFrame
    comparison: pd.DataFrame
    matched_size: int


def reference_owner(pid: str, qids: set[str]) -> str | None:
    """Owner question of a control id ``ref:<qid>`` / ``ref:<qid>:<n>`` (:func:`stages.reference_id`)."""
    body = pid[4:] if pid.startswith("ref:") else pid
    if body in qids:
        return body
    head, _, tail = body.rpartition(":")
    return head if tail.isdigit() and head in qids else None


def fair_control(ds: Dataset, split: str, supporting: RankedCorpus, control: RankedCorpus, reader: LLM,
                 judge: LLM | None, settings: PoolSettings = PoolSettings(), progress: bool = True,
                 prior: pd.DataFrame | None = None) -> FairControl:
    """The fair cross-corpus comparison of ``split`` (module docstring) between the
    answer-supporting corpus and the answer-containing control, each with its runs: pool the
    top-``settings.depth`` of every run in both corpora (and, with ``settings.size_matched``, of
    the size-matched rankings), judge the pool with ``reader`` + ``judge``, and score Hit@k
    (k ≤ depth) per question.

    The build's labels of the questions' own passages are reused as judgments (same rule) when the
    split was LLM-labelled; otherwise own passages are read and judged like any other. Judgments
    in ``prior`` (those a dataset release ships) are reused too: only pairs it lacks are judged."""
    depth, max_questions = settings.depth, settings.max_questions
    evaluated = ds.split(split)[:max_questions] if max_questions is not None else ds.split(split)
    qids = [q.qid for q in evaluated]
    known_qids = set(ds.questions)
    sup = JudgedCorpus(SUPPORTING_JUDGED, supporting.texts, supporting.runs,
                       lambda pid: ds.passages[pid].qid if pid in ds.passages else None)
    con = JudgedCorpus(CONTAINING_JUDGED, control.texts, control.runs,
                       lambda pid: reference_owner(pid, known_qids))
    corpora = [sup, con]
    size = min(len(supporting.texts), len(control.texts))
    if settings.size_matched:
        for c in (sup, con):
            runs = (
                size_matched_runs(c.runs, c.texts, c.owner, size, qids, settings.seed)
                if len(c.texts) > size
                else c.runs
            )
            corpora.append(JudgedCorpus(c.label + MATCHED, c.texts, runs, c.owner))
    pools = pool(corpora, qids, depth)
    # one judgment per (question, passage), shared by a corpus and its size-matched view
    base_pools: dict[str, dict[str, list[str]]] = {}
    for c in corpora:
        per_q = base_pools.setdefault(c.label.removesuffix(MATCHED), {})
        for qid, pids in pools[c.label].items():
            lst = per_q.setdefault(qid, [])
            lst.extend(p for p in pids if p not in lst)
    labelled = split in (ds.meta.get("labelled_splits") or [])
    known = {qid: dict(ds.qrels.get(qid, {})) for qid in qids} if labelled else {}
    judgments = judge_pool(base_pools, {sup.label: supporting.texts, con.label: control.texts}, evaluated,
                           reader, judge, known=known, progress=progress, prior=prior)
    qrels_base = {base: judged_qrels(judgments, base) for base in base_pools}
    qrels = {c.label: qrels_base[c.label.removesuffix(MATCHED)] for c in corpora}
    per_q = pooled_hits(corpora, qrels, qids, [k for k in POOLED_KS if k <= depth])
    return FairControl(judgments, per_q, corpus_summary([sup, con], judgments, size),
                       comparison_table(per_q, corpora), size)


def comparison_table(per_q: pd.DataFrame, corpora: Sequence[JudgedCorpus]) -> pd.DataFrame:
    """Mean Hit@k (in %) per corpus view and retriever with seeded bootstrap intervals, and the
    paired difference containing − supporting (same questions) at the same size."""
    from ..measure.uncertainty import mean_ci, paired_difference

    rows = []
    labels = [c.label for c in corpora]
    for measure, g in per_q.groupby("measure", sort=False):
        for system, gs in g.groupby("system", sort=False):
            piv = gs.pivot_table(index="qid", columns="corpus", values="value", aggfunc="first")
            for lab in labels:
                if lab in piv.columns:
                    ci = mean_ci(100 * piv[lab].to_numpy(float))
                    rows.append({"measure": measure, "system": system, "corpus": lab, "n": ci.n,
                                 "mean": round(ci.value, 2), "lo": round(ci.lo, 2), "hi": round(ci.hi, 2)})
            for suffix in ("", MATCHED):
                a, b = CONTAINING_JUDGED + suffix, SUPPORTING_JUDGED + suffix
                if a in piv.columns and b in piv.columns:
                    d = paired_difference(100 * piv[a].to_numpy(float), 100 * piv[b].to_numpy(float))
                    rows.append({"measure": measure, "system": system,
                                 "corpus": f"{DIFFERENCE}{suffix}", "n": d.n,
                                 "mean": round(d.diff.value, 2), "lo": round(d.diff.lo, 2),
                                 "hi": round(d.diff.hi, 2), "p": round(d.p_value, 4)})
    return pd.DataFrame(rows)


def comparison_display(comparison: pd.DataFrame) -> pd.DataFrame:
    """:func:`comparison_table` as measure × system rows and one ``mean [lo, hi]`` column per
    corpus view (differences with their p-value)."""
    if comparison.empty:
        return comparison
    cell = comparison.apply(lambda r: f"{r['mean']:.1f} [{r['lo']:.1f}, {r['hi']:.1f}]"
                            + (f" p={r['p']:.3f}" if "p" in r and pd.notna(r.get("p")) else ""), axis=1)
    t = comparison.assign(cell=cell).pivot_table(index=["measure", "system"], columns="corpus", values="cell",
                                                 aggfunc="first", sort=False)
    return t[[c for c in dict.fromkeys(comparison["corpus"]) if c in t.columns]]


def fair_sentence(comparison: pd.DataFrame) -> str:
    """The sentence of the fair control (:func:`comparison_table`): at the deepest Hit@k judged, per
    retriever, answer-containing against answer-supporting with one relevance rule, the paired
    difference with its interval and randomization-test p, and the same at equal corpus size."""
    from ..present.sentences import ci

    if comparison.empty:
        return "No pooled judgments: the fair comparison was not made."
    measure = list(dict.fromkeys(comparison["measure"]))[-1]
    t = comparison[comparison["measure"] == measure]
    parts = []
    for system, g in t.groupby("system", sort=False):
        r = g.set_index("corpus")
        bits = []
        for suffix, what in (("", "all passages"), (MATCHED, "equal size")):
            a, b, d = CONTAINING_JUDGED + suffix, SUPPORTING_JUDGED + suffix, f"{DIFFERENCE}{suffix}"
            if a in r.index and b in r.index:
                diff = (
                    f"; difference {ci(r.at[d, 'mean'], r.at[d, 'lo'], r.at[d, 'hi'])}, paired randomization "
                    f"p = {r.at[d, 'p']:.3g}"
                    if d in r.index
                    else ""
                )
                bits.append(
                    f"{what}: containing {ci(r.at[a, 'mean'], r.at[a, 'lo'], r.at[a, 'hi'])} vs supporting "
                    f"{ci(r.at[b, 'mean'], r.at[b, 'lo'], r.at[b, 'hi'])}{diff}"
                )
        parts.append(f"{system} ({'; '.join(bits)})")
    diffs = t[t["corpus"].str.startswith(DIFFERENCE)]
    if len(diffs) and (diffs["lo"] > 0).all():
        verdict = (
            "Every difference interval lies above 0: the gap of section 2 is not an artefact of two "
            "relevance "
            "rules or of corpus size."
        )
    elif len(diffs) and (diffs["hi"] < 0).all():
        verdict = (
            "Every difference interval lies below 0: with one rule, the supporting corpus is retrieved "
            "better."
        )
    else:
        verdict = (
            f"{int((diffs['lo'] > 0).sum())} of {len(diffs)} difference intervals lie above 0; the others "
            "include 0 or lie below it."
        )
    return f"Judged by the same LLM rule in both corpora, {measure} — " + " · ".join(parts) + ". " + verdict
