"""Per-question scores of the released runs, with the authors' conventions (paper 000 §4–5; their
scripts in ``results/`` of ``DataScienceUIBK/InferentialQA``).

Retrieval (``results/retriever/retriever.py``): Hit@k, Recall@k, MRR@k and graded nDCG@k as
:mod:`inferqa_utils.measure.metrics` defines them, against the question's pool labels with threshold
``t = 1`` (their ``label > 0``; ``t = 2`` for the cross-corpus comparison,
``results/baselines_retriever/retriever-latentIR.py``). Their convention for a question without a
relevant passage is :data:`~inferqa_utils.measure.metrics.AUTHORS_SKIP`: Hit@k and Recall@k *skip* it
(``None``), so their means run over the questions that have a relevant passage; MRR@k and nDCG@k
score it 0, so every question counts. A passage the pool does not know (another question's,
retrieved from the full corpus) has label 0. For the MS MARCO / Wikipedia baselines
(``results/baselines_retriever/retriever-msmarco.py``) the labels come from
``baselines/baseline.json`` and no question is skipped: ``Hit@k`` averages over every question.

Reading (``results/retriever/retriever_rag.py``, ``results/rag/rag.py``):

* the authors' EM is *raw membership*, ``EM_raw = 1[prediction ∈ answers]`` — no normalisation;
* our EM (:func:`inferqa_utils.ir.textnorm.exact_match`) compares SQuAD-normalised strings (lower
  case, punctuation and articles dropped, spaces collapsed): ``EM_norm = 1[norm(prediction) =
  norm(a) for some a ∈ answers]``. ``EM_raw = 1`` implies ``EM_norm = 1`` unless the prediction
  normalises to nothing; a question where the two differ is a *disagreement*.
* Optimal (paper 000 §5.4, ``results/rag/rag.py``, ``em`` with ``'1 and 2'``): a question counts
  when the reader answers it correctly from at least one of its passages with label 1 or 2,
  ``Optimal = max_{p : L(p) ≥ 1} EM(answer_p)``, averaged over every question.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..ir.textnorm import normalize_answer
from ..measure.metrics import AUTHORS_SKIP, question_scores
from .load import Question, Ranking, Release

if TYPE_CHECKING:
    import pandas as pd

HIT_KS = (1, 5, 10, 20, 50, 100)
RECALL_KS = (1, 5, 10, 20, 50, 100)
#: the per-question measures written for each ranking (notebook 02's table names)
MEASURES = (
    *(f"Hit@{k}" for k in HIT_KS), "Recall@5", "Recall@10", "Recall@50", "MRR@100", "nDCG@10", "nDCG@100",
)
#: the measures of the retrieval summary: the authors' Hit@k and Recall@k
#: (``results/retriever/retriever.py``), MRR@100 and nDCG@10/100
AUTHORS_MEASURES = (
    *(f"Hit@{k}" for k in HIT_KS), *(f"Recall@{k}" for k in RECALL_KS), "MRR@100", "nDCG@10", "nDCG@100",
)
#: the settings' names in our answers tables (notebook 04)
OPTIMAL_SYSTEM = "every label ≥ 1 passage"
SCORINGS = ("normalised", "raw")


# ----------------------------------------------------------------------------- retrieval


def labels_for(release: Release, ranking: Ranking) -> dict[str, dict[str, int]]:
    """The labels a ranking is scored against: the index pool, or baseline.json for a baseline."""
    if ranking.corpus != "quit":
        return release.baseline_labels or {}
    return {q.qid: q.labels for q in release.questions.values()}


def per_question(
    release: Release, ranking: Ranking, measures: Iterable[str] = MEASURES, threshold: int = 1
) -> dict[str, dict[str, float | None]]:
    """measure → {qid: value or None (skipped)} of one ranking, for every question of the release
    (module docstring)."""
    skip = AUTHORS_SKIP if ranking.corpus == "quit" else ()
    return question_scores(ranking.lists, labels_for(release, ranking), measures, threshold, skip,
                           qids=release.questions)


def authors_mean(values: Iterable[float | None]) -> float:
    """The authors' point estimate in %: the mean over the questions that count, rounded as their
    scripts print it (4 decimals of the fraction)."""
    xs = [v for v in values if v is not None]
    return round(100 * round(sum(xs) / len(xs), 4), 2) if xs else float("nan")


# ----------------------------------------------------------------------------- reading


def em_raw(prediction: str, answers: Sequence[str]) -> bool:
    """The authors' EM: the prediction is one of the answers, character for character."""
    return prediction in answers


#: :func:`~inferqa_utils.ir.textnorm.normalize_answer` with a cache: the release repeats its answers
#: (``NO ANSWER``, the pools) millions of times
_normalized = functools.lru_cache(maxsize=1 << 18)(normalize_answer)


def em_norm(prediction: str, answers: Sequence[str]) -> bool:
    """Our EM (:func:`inferqa_utils.ir.textnorm.exact_match`): SQuAD-normalised equality with an
    answer of the pool; an answer that normalises to nothing matches nothing."""
    p = _normalized(prediction)
    return bool(p) and any(p == _normalized(a) for a in answers)


def optimal(question: Question, reader: str, score: Any = em_raw) -> bool:
    """The Optimal setting: some passage with label ≥ 1 lets the reader answer correctly."""
    return any(
        score(question.rag_answers[p].get(reader, ""), question.answers)
        for p, lab in question.labels.items()
        if lab >= 1 and reader in question.rag_answers[p]
    )


#: the columns of the answers table (notebook 04's, plus ``em_raw``)
ANSWER_COLUMNS = (
    "qid", "answer", "em", "em_raw", "judged", "no_answer", "guard", "context_chars", "setting", "system",
    "k", "union", "reader",
)


def answers_frame(release: Release) -> pd.DataFrame:
    """One row per (question, setting, system, k, union, reader) — the columns of notebook 04's
    answers table (:data:`ANSWER_COLUMNS`): the answer, ``em`` (ours, normalised), ``em_raw`` (the
    authors'), ``no_answer``; ``judged``, ``guard`` and ``context_chars`` are empty (no LLM judge and
    no answer guards were applied to the released answers, and their contexts are not released).
    The Optimal rows (setting ``Optimal``, no k or union) show the first correct answer from a
    relevant passage, else the first relevant passage's answer. Built per released file, so the full
    release (about 4 million rows) needs no per-row Python objects beyond the answers."""
    import pandas as pd

    chunks = []
    qs = list(release.questions.values())
    for reader in release.readers:
        have = [q for q in qs if any(reader in a for a in q.rag_answers.values())]
        if not have:
            continue
        chunks.append(
            _chunk(
                [q.qid for q in have], [_optimal_answer(q, reader) for q in have],
                [optimal(q, reader, em_norm) for q in have], [optimal(q, reader, em_raw) for q in have],
                "Optimal", OPTIMAL_SYSTEM, None, None, reader,
            )
        )
    for rd in release.readings:
        qids = list(rd.answers)
        for (reader, union, k), preds in rd.predictions.items():
            answers = [preds[q] for q in qids]
            chunks.append(
                _chunk(
                    qids, answers, [em_norm(a, rd.answers[q]) for q, a in zip(qids, answers, strict=True)],
                    [em_raw(a, rd.answers[q]) for q, a in zip(qids, answers, strict=True)], rd.setting,
                    rd.system, k, union, reader,
                )
            )
    if not chunks:
        return pd.DataFrame({c: [] for c in ANSWER_COLUMNS})
    df = pd.concat(chunks, ignore_index=True)
    df["k"] = df["k"].astype("Int64")
    return df


def _chunk(
    qids: list[str], answers: list[str], norm: list[bool], raw: list[bool], setting: str, system: str,
    k: int | None, union: str | None, reader: str,
) -> pd.DataFrame:
    import pandas as pd

    n = len(qids)
    return pd.DataFrame(
        {
            "qid": qids, "answer": answers, "em": norm, "em_raw": raw, "judged": [None] * n,
            "no_answer": [_normalized(a) == "no answer" for a in answers], "guard": [None] * n,
            "context_chars": [None] * n, "setting": [setting] * n, "system": [system] * n,
            "k": pd.array([k] * n, dtype="Int64"), "union": [union] * n, "reader": [reader] * n,
        },
        columns=list(ANSWER_COLUMNS),
    )


def _optimal_answer(q: Question, reader: str) -> str:
    answers = [
        q.rag_answers[p][reader] for p, lab in q.labels.items() if lab >= 1 and reader in q.rag_answers[p]
    ]
    return next((a for a in answers if em_norm(a, q.answers)), answers[0] if answers else "")


def em_table(answers: pd.DataFrame) -> pd.DataFrame:
    """Both scorings side by side, one row per (setting, system, reader, k, union): ``n``, the
    authors' EM (raw membership, in %), ours (normalised, in %), ``delta`` = ours − theirs, and the
    questions where they disagree — ``n_disagree``, of which ``norm_only`` (our EM 1, theirs 0) and
    ``raw_only`` (theirs 1, ours 0)."""
    keys = ["setting", "system", "reader", "k", "union"]
    n, r = answers["em"].astype(bool), answers["em_raw"].astype(bool)
    a = answers[keys].assign(_n=n, _r=r, _d=n != r, _no=n & ~r, _ro=~n & r)
    g = a.groupby(keys, dropna=False, sort=False)
    out = g.agg(
        n=("_n", "size"), em_raw=("_r", "mean"), em_norm=("_n", "mean"), n_disagree=("_d", "sum"),
        norm_only=("_no", "sum"), raw_only=("_ro", "sum"),
    ).reset_index()
    out["em_raw"] = (100 * out["em_raw"]).round(2)
    out["em_norm"] = (100 * out["em_norm"]).round(2)
    out["delta"] = (out["em_norm"] - out["em_raw"]).round(2)
    return out


# ----------------------------------------------------------------------------- tables


def per_question_rows(
    release: Release, rankings: Iterable[Ranking], measures: Iterable[str] = MEASURES, threshold: int = 1,
    corpus: str | None = None,
) -> list[dict[str, Any]]:
    """The long per-question table of notebooks 02/03/05 (``system, measure, threshold, qid, value,
    corpus``) for ``rankings``; skipped questions have no row."""
    rows: list[dict[str, Any]] = []
    for rk in rankings:
        for m, vals in per_question(release, rk, measures, threshold).items():
            rows += [
                {
                    "system": rk.system, "measure": m, "threshold": threshold, "qid": q, "value": v,
                    "corpus": corpus or rk.corpus,
                }
                for q, v in vals.items()
                if v is not None
            ]
    return rows


def retrieval_summary(
    release: Release, measures: Sequence[str] = AUTHORS_MEASURES, thresholds: Sequence[int] = (1, 2)
) -> pd.DataFrame:
    """Every released ranking scored as the authors' scripts score it (module docstring): one row
    per (corpus, system, threshold), the released file and the list read (``ctxs`` or
    ``reranked_ctxs``), each measure's point estimate in %, and ``n`` the questions Hit/Recall
    average over. The baselines are scored against baseline.json's labels."""
    import pandas as pd

    rows = []
    for rk in release.rankings:
        for t in thresholds:
            pq = per_question(release, rk, measures, t)
            row: dict[str, Any] = {
                "corpus": rk.corpus, "setting": rk.setting, "system": rk.system, "threshold": t,
                "released": rk.released, "list": rk.key,
            }
            for m in measures:
                row[m] = authors_mean(pq[m].values())
            hit = next((m for m in measures if m.startswith("Hit@")), None)
            row["n"] = sum(v is not None for v in pq[hit].values()) if hit else len(release.questions)
            rows.append(row)
    return pd.DataFrame(rows)
