"""Reference-based question complexity (paper 000 §3.1.3).

With an answer-containing reference corpus (our embedded references, TriviaHG ``Snippet``s), a
question is easy when BM25 over that corpus returns, near the top, passages that contain the
answer and are semantically close to the question:

    ease(q) = (1/n) · Σ_{r ≤ n, answer ∈ P_r} sim(q, P_r)

over the top ``n`` passages (answer ∈ P_r: :func:`~inferqa_utils.ir.textnorm.any_occurs_folded`, accents
and number words folded; sim = cosine of sentence embeddings, or 1 without an embedder).
Questions are then cut into Easy / Medium / Hard by ease tertiles of the dataset (ties go to the
easier class). Without a reference corpus the source's label is kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..ir.datamodel import Question
from ..ir.lexical import BM25sRetriever
from ..ir.textnorm import any_occurs_folded


def reference_complexity(questions: Sequence[Question], reference: Mapping[str, str], top_n: int = 10,
                         embedder: object | None = None) -> pd.DataFrame:
    """Per question: how many of the top-``n`` BM25 reference passages contain the answer, their mean
    similarity to the question, ``ease`` and the derived ``difficulty`` label."""

    retriever = BM25sRetriever(reference)
    run = retriever.search({q.qid: q.question for q in questions}, k=top_n)
    rows = []
    for q in questions:
        hits = run.get(q.qid, [])
        texts = [reference[pid] for pid, _ in hits]
        contain = [any_occurs_folded(q.answers, t) for t in texts]
        if embedder is not None and texts:
            qv = embedder.encode([q.question], role="query")[0]  # type: ignore[attr-defined]
            sims = embedder.encode(texts, role="passage") @ qv  # type: ignore[attr-defined]
        else:
            sims = np.ones(len(texts))
        ease = float(sum(s for s, c in zip(sims, contain, strict=True) if c) / top_n)
        rows.append({"qid": q.qid, "n_containing": int(sum(contain)),
                     "mean_sim": float(np.mean(sims)) if len(texts) else 0.0, "ease": round(ease, 4),
                     "source_difficulty": q.difficulty})
    df = pd.DataFrame(rows)
    df["difficulty"] = difficulty_from_ease(df["ease"]) if len(df) else []
    return df


def difficulty_from_ease(ease: pd.Series) -> list[str]:
    """Tertiles of ``ease``: top third Easy, bottom third Hard (ranks, ties to the easier class)."""
    ranks = ease.rank(method="max", ascending=True, pct=True)
    return ["Easy" if r > 2 / 3 else "Medium" if r > 1 / 3 else "Hard" for r in ranks]
