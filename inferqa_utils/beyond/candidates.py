"""Ours: candidate-support retrieval (CSR) — rank passages by the answer they support.

**Failure mode addressed.** Answer-supporting passages never contain the answer (paper 000 §1), and
they share few words or little meaning with the question: "She studied natural sciences at
Newnham College" supports *Rosalind Franklin* for "Which British chemist produced Photo 51?".
Question–passage similarity (BM25, bi-encoders) and question–passage relevance (rerankers) judge
the wrong thing; what makes a passage useful is *which answer it leads to*. Closed-book answer
proposals do not help either: test questions are by construction those the LLMs could not answer
without context (paper 000 §3.1.4), so candidates must be inferred from the passages themselves.

**Method.** For each question and its first-stage ranking (top-``depth``):

1. *Probe*: the reader (paper 000 A.4 prompt) answers the question from each of the top-``pool``
   passages alone → ``a(p)``. (For a question's own passages this is the labeling prompt, so the
   engine's cache already holds most of these answers.)
2. *Candidates*: distinct non-abstaining answers, compared after SQuAD normalisation and accent
   folding, weighted by the ranks of the passages that gave them:
   ``w(c) ∝ Σ_{p in pool, a(p) ≡ c} 1 / rank(p)``; the top-``top_c`` are kept and renormalised to
   sum 1 (:func:`candidate_weights`). Hints of one entity converge on one answer (TriviaHG's
   convergence idea, paper 000 §3.1.2) while passages of other questions point elsewhere, so the
   rank-weighted consensus is a passage-grounded guess of the answer.
3. *Support* of every first-stage passage ``d``:
   ``agree(d) = w(a(d))`` for probed passages (0 otherwise; :func:`agreement_scores`) and
   ``support(d) = Σ_c w(c) · cos(E(d), E(q ⊕ c))`` with a bi-encoder ``E`` (the question extended
   by each candidate; :func:`support_scores`) — or, with ``support="llm"``, over the pool only,
   ``Σ_c w(c) · exp(mean log P(c | reader prompt(d, q)))``.
4. *Score* ``s(d) = λ · agree(d) + support(d)`` (λ = ``agreement_weight``, 1 by default; 0
   gives the dense-support-only ablation), ties by first-stage rank (:func:`combine`). Without
   any candidate (every probe abstained) the support falls back to ``cos(E(d), E(q))``.

Cost: ``pool`` short reader calls per question (cached), one batch of ``top_c`` query embeddings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..answering.prompts import NO_ANSWER, reader_messages
from ..answering.reader import KnownAnswers, read
from ..ir.runs import ids_to_run_list, ranked_ids
from ..ir.textnorm import fold_accents, normalize_answer
from ..ir.trec import Run
from .common import MethodResult, MethodSetup, cached_method, method_key

if TYPE_CHECKING:
    import numpy as np

    from ..llm.base import LLM
    from ..llm.embeddings import Embedder


def candidate_key(answer: str) -> str:
    """The comparison form of an answer: accents folded, SQuAD-normalised (paper 000 §4)."""
    return normalize_answer(fold_accents(answer))


def candidate_weights(answers: Sequence[str], top_c: int = 3) -> list[tuple[str, float]]:
    """Rank-weighted answer votes. ``answers[i]`` is the probe answer of the rank-``i+1`` passage;
    ``w(c) ∝ Σ_{i: key(answers[i]) = key(c)} 1/(i+1)`` over non-empty answers other than
    ``NO ANSWER``. Returns the top-``top_c`` ``(first surface form, weight)`` by weight (ties: the
    better first rank), weights renormalised to sum 1; empty when every answer abstains.

    ``["Paris", "NO ANSWER", "paris.", "Lyon"]`` → Paris 1 + 1/3, Lyon 1/4 →
    ``[("Paris", 16/19), ("Lyon", 3/19)]``.
    """
    if top_c < 1:
        raise ValueError(f"top_c must be ≥ 1, got {top_c}")
    votes: dict[str, float] = {}
    first: dict[str, tuple[int, str]] = {}
    for i, a in enumerate(answers):
        if not a or not a.strip() or a.strip() == NO_ANSWER:
            continue
        k = candidate_key(a)
        if not k:
            continue
        votes[k] = votes.get(k, 0.0) + 1.0 / (i + 1)
        first.setdefault(k, (i, a.strip()))
    keys = sorted(votes, key=lambda k: (-round(votes[k], 12), first[k][0]))[:top_c]
    total = sum(votes[k] for k in keys)
    return [(first[k][1], votes[k] / total) for k in keys]


def agreement_scores(answers: Mapping[str, str], weights: Sequence[tuple[str, float]]) -> dict[str, float]:
    """``agree(p) = w(c)`` for the candidate ``c`` that passage ``p``'s probe answer equals (after
    :func:`candidate_key`), else 0."""
    w = {candidate_key(c): x for c, x in weights}
    return {
        pid: float(w.get(candidate_key(a), 0.0)) if a and a != NO_ANSWER else 0.0
        for pid, a in answers.items()
    }


def support_scores(sims: np.ndarray, weights: Sequence[float]) -> np.ndarray:
    """``support(d) = Σ_c w_c · sims[d, c]`` for a (passages × candidates) similarity matrix."""
    import numpy as np

    sims = np.asarray(sims, dtype=np.float64)
    w = np.asarray(list(weights), dtype=np.float64)
    if sims.ndim != 2 or sims.shape[1] != len(w):
        raise ValueError(f"similarities of shape {sims.shape} do not match {len(w)} candidate weights")
    return sims @ w


def combine(order: Sequence[str], agree: Mapping[str, float], support: Mapping[str, float],
            agreement_weight: float = 1.0) -> list[str]:
    """Passages of ``order`` sorted by ``agreement_weight · agree + support`` (missing → 0),
    descending; ties keep the ``order`` (first-stage) position."""
    score = {p: agreement_weight * agree.get(p, 0.0) + support.get(p, 0.0) for p in order}
    return sorted(order, key=lambda p: (-round(score[p], 12), order.index(p)))


def _llm_support(reader: LLM, question: str, pids: Sequence[str], corpus: Mapping[str, str],
                 weights: Sequence[tuple[str, float]], progress: bool) -> dict[str, float]:
    import math

    cands = [c for c, _ in weights]
    out = reader.score([reader_messages(question, corpus[p]) for p in pids], cands, progress=progress,
                       desc=f"candidate support ({reader.name})")
    counter = getattr(reader, "count_tokens", None)
    n_tok = [max(1, int(counter(c)) if callable(counter) else len(c.split())) for c in cands]
    return {p: sum(w * math.exp(lp / n) for (_, w), lp, n in zip(weights, lps, n_tok, strict=True))
            for p, lps in zip(pids, out, strict=True)}


@dataclass(frozen=True)
class CandidateSupportParams:
    """The parameters of a candidate-support run (module docstring)."""

    #: first-stage passages the reader probes per question
    pool: int = 10
    #: consensus candidates kept
    top_c: int = 3
    #: passages of the run per question (the first stage's top ``depth`` reordered)
    depth: int = 100
    #: λ, the weight of the agreement score (0: dense support only)
    agreement_weight: float = 1.0
    #: the support score: ``"dense"`` (bi-encoder) or ``"llm"`` (the reader's answer likelihood)
    support: str = "dense"


def candidate_support_run(
    questions: Mapping[str, str], first: Run, corpus: Mapping[str, str], reader: LLM, embedder: Embedder,
    params: CandidateSupportParams = CandidateSupportParams(), progress: bool = True,
    known: KnownAnswers | None = None,
) -> tuple[Run, dict[str, Any]]:
    """CSR over ``first`` (module docstring). Returns the run (rank-based scores) and, per question,
    the probe answers of the pool and the weighted candidates. Probe readings in ``known`` (the
    build's own readings of the same passages) are not read again."""
    import numpy as np

    pool, top_c, depth, support = params.pool, params.top_c, params.depth, params.support
    agreement_weight = params.agreement_weight

    if support not in ("dense", "llm"):
        raise ValueError(f"support must be 'dense' or 'llm', got {support!r}")
    qids = [q for q in questions if q in first]
    jobs = [(q, p) for q in qids for p in ranked_ids(first, q, pool)]
    outs = read(reader, [questions[q] for q, _ in jobs], [corpus[p] for _, p in jobs],
                desc=f"CSR probe ({reader.name})", progress=progress, known=known)
    probe: dict[str, dict[str, str]] = {q: {} for q in qids}
    for (q, p), o in zip(jobs, outs, strict=True):
        probe[q][p] = o.answer
    run: Run = {}
    details: dict[str, Any] = {}
    for q in qids:
        order = ranked_ids(first, q, depth)
        weights = candidate_weights([probe[q][p] for p in ranked_ids(first, q, pool)], top_c)
        agree = agreement_scores(probe[q], weights)
        if support == "llm" and weights:
            sup = _llm_support(
                reader, questions[q], ranked_ids(first, q, pool), corpus, weights, progress=False
            )
        else:
            texts = [f"{questions[q].strip()} {c}" for c, _ in weights] or [questions[q]]
            ws = [w for _, w in weights] or [1.0]
            qv = embedder.encode(texts, role="query", progress=False)
            dv = embedder.encode([corpus[p] for p in order], role="passage", progress=False)
            sup = dict(
                zip(order, support_scores(np.asarray(dv) @ np.asarray(qv).T, ws).tolist(), strict=True)
            )
        run[q] = ids_to_run_list(combine(order, agree, sup, agreement_weight))
        details[q] = {"probe": probe[q], "candidates": [[c, round(w, 4)] for c, w in weights]}
    return run, details


VERSION = 1


def csr_method(name: str, setup: MethodSetup, first: Run, reader: LLM, embedder: Embedder,
               known: KnownAnswers | None = None, **params: Any) -> MethodResult:
    """:func:`candidate_support_run` over the questions of ``setup`` as one cached method run
    (``params``: fields of :class:`CandidateSupportParams` by keyword; the run's key names the ones
    given, the others take their defaults)."""

    questions, corpus = setup.questions, setup.corpus
    first = {q: first.get(q, []) for q in questions}
    p = CandidateSupportParams(**params)
    key = method_key(
        name, corpus, questions, VERSION, first=first, reader=reader.identity, embedder=embedder.identity,
        **params,
    )
    return cached_method(name, setup.out_dir, key,
                         lambda: candidate_support_run(questions, first, corpus, reader, embedder, p,
                                                       progress=setup.progress, known=known),
                         len(questions), [reader])
