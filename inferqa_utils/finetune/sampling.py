"""Training examples for fine-tuning with N positives per question (paper 000 §5.2–5.3, A.2–A.3).

For every training question the sampler draws

* **positives** — ``min(N, |P_q|)`` passages of ``P_q``, the question's own passages with label
  ≥ ``min_label`` (default 1). N larger than ``|P_q|`` is *capped*, never filled by repetition:
  the embedded dataset has 15 passages per question, QUIT 325, so the paper's N = 200 is
  reachable there and not here. The positives are the first N of a seeded shuffle of ``P_q``
  (sorted by id first), so the N = 5 sample is a prefix of the N = 10 sample.
* **negatives** — exactly as many as positives (one per positive, paper 000 §5.2–5.3, A.2–A.3: "as many
  negatives"), drawn without replacement from the passages of *other* questions (the
  ``negative_qids`` pool; a passage is never a negative of its own question nor of a question
  that labels it ≥ 1). Random by default (rejection sampling from the sorted pool with a seeded
  ``random.Random``); with ``hard_negative_run`` (e.g. BM25 top-100 of the training questions)
  the highest-ranked pool passages come first and random ones fill up when the run runs out.

Each positive is paired with one negative: a :class:`TrainingExample` is a (question, positive,
negative) triplet. The bi-encoder uses it as (anchor, positive, hard negative) with in-batch
negatives; the cross-encoder as two labelled pairs (q, positive, 1) and (q, negative, 0).

Seeding: every question has its own generators, seeded from ``f"{seed}:{qid}:pos"`` and
``f"{seed}:{qid}:neg"``; the sample of one question does not depend on the others.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

import pandas as pd

from ..core.config import SEED
from ..ir.datamodel import Dataset
from ..ir.trec import Run


@dataclass(frozen=True)
class TrainingExample:
    """One (question, positive passage, negative passage) triplet."""

    qid: str
    question: str
    positive: str  #: passage id, label ≥ min_label for ``qid``
    positive_label: int
    negative: str  #: passage id of another question
    negative_qid: str  #: the question the negative belongs to
    hard: bool  #: the negative came from ``hard_negative_run``


def positives_of(qrels_of_question: Mapping[str, int], min_label: int = 1) -> list[str]:
    """The question's passages with label ≥ ``min_label``, sorted by id."""
    return sorted(pid for pid, lab in qrels_of_question.items() if int(lab) >= min_label)


def _check_n(n_positives: int) -> int:
    if isinstance(n_positives, bool) or not isinstance(n_positives, int) or n_positives < 1:
        raise ValueError(
            f"the number of positives per question N must be an integer ≥ 1, got {n_positives!r}"
        )
    return n_positives


class _NegativePool:
    """Passages of the pool questions, sorted by id, for seeded rejection sampling."""

    def __init__(self, ds: Dataset, negative_qids: Iterable[str]) -> None:
        qset = set(negative_qids)
        self.pids = sorted(pid for pid, p in ds.passages.items() if p.qid in qset)
        self.owner = {pid: ds.passages[pid].qid for pid in self.pids}
        self.per_owner = Counter(self.owner.values())
        self.ds = ds

    def allowed(self, qid: str, pid: str) -> bool:
        """A passage may be a negative of ``qid``: in the pool, not its own, not labelled ≥ 1 for it."""
        return (
            pid in self.owner and self.owner[pid] != qid and int(self.ds.qrels.get(qid, {}).get(pid, 0)) < 1
        )

    def n_allowed(self, qid: str) -> int:
        """How many pool passages may be negatives of ``qid``."""
        labelled = {pid for pid, lab in self.ds.qrels.get(qid, {}).items()
                    if int(lab) >= 1 and pid in self.owner and self.owner[pid] != qid}
        return len(self.pids) - self.per_owner.get(qid, 0) - len(labelled)

    def draw(self, qid: str, count: int, rng: random.Random, taken: set[str]) -> list[str]:
        """``count`` distinct allowed passages not in ``taken`` (rejection sampling)."""
        out: list[str] = []
        while len(out) < count:
            pid = self.pids[rng.randrange(len(self.pids))]
            if pid not in taken and self.allowed(qid, pid):
                taken.add(pid)
                out.append(pid)
        return out


def sample_examples(ds: Dataset, qids: Sequence[str], n_positives: int, *,
                    negative_qids: Sequence[str] | None = None, hard_negative_run: Run | None = None,
                    min_label: int = 1, seed: int = SEED) -> list[TrainingExample]:
    """Triplets for every question of ``qids`` with at least one label ≥ ``min_label`` passage.

    ``negative_qids``: questions whose passages form the negative pool (default: ``qids``; the
    notebook passes train + dev so the test split stays unseen). Questions without a positive are
    skipped (:func:`sample_summary` lists them). Errors: ``N < 1``, an empty ``qids``, unknown
    question ids, no question with a positive, or a pool too small for a question's negatives.
    """
    _check_n(n_positives)
    qids = [str(q) for q in qids]
    if not qids:
        raise ValueError(
            "no training questions: the training split is empty (build the dataset with a train split, "
            "notebook 01)"
        )
    unknown = [q for q in qids if q not in ds.questions]
    if unknown:
        raise ValueError(
            f"{len(unknown)} training question id(s) are not in dataset {ds.name!r}, e.g. {unknown[0]!r}"
        )
    pool = _NegativePool(ds, qids if negative_qids is None else [str(q) for q in negative_qids])
    if not pool.pids:
        raise ValueError("the negative pool is empty: the negative questions have no passages")
    examples: list[TrainingExample] = []
    for qid in qids:
        own = [pid for pid in positives_of(ds.qrels.get(qid, {}), min_label) if pid in ds.passages]
        if not own:
            continue
        rng_pos = random.Random(f"{seed}:{qid}:pos")
        rng_pos.shuffle(own)
        pos = own[:n_positives]
        available = pool.n_allowed(qid)
        if available < len(pos):
            raise ValueError(
                f"question {qid!r}: {len(pos)} negatives needed but the negative pool holds only "
                f"{available} passages of other questions; add questions to the pool "
                f"(negative splits) or lower N"
            )
        taken: set[str] = set()
        negs: list[tuple[str, bool]] = []
        if hard_negative_run is not None:
            for pid, _ in hard_negative_run.get(qid, []):
                if len(negs) == len(pos):
                    break
                if pid not in taken and pool.allowed(qid, pid):
                    taken.add(pid)
                    negs.append((pid, True))
        rng_neg = random.Random(f"{seed}:{qid}:neg")
        negs += [(pid, False) for pid in pool.draw(qid, len(pos) - len(negs), rng_neg, taken)]
        q = ds.questions[qid]
        for p, (n, hard) in zip(pos, negs, strict=True):
            examples.append(
                TrainingExample(qid, q.question, p, int(ds.qrels[qid][p]), n, pool.owner[n], hard)
            )
    if not examples:
        raise ValueError(f"none of the {len(qids)} training questions has a passage with label ≥ {min_label}")
    return examples


def sample_summary(
    examples: Sequence[TrainingExample], qids: Sequence[str], n_positives: int
) -> dict[str, object]:
    """Counts for one N: questions used/skipped, positives and negatives (hard/random), the cap rule."""
    used = {e.qid for e in examples}
    per_q = pd.Series([e.qid for e in examples]).value_counts() if examples else pd.Series(dtype=int)
    return {
        "N": n_positives,
        "questions": len(used),
        "skipped (no positive)": len([q for q in qids if q not in used]),
        "positives": len(examples),
        "negatives": len(examples),
        "hard negatives": sum(e.hard for e in examples),
        "label-2 positives": sum(e.positive_label == 2 for e in examples),
        "positives per question (min/max)": f"{per_q.min()}/{per_q.max()}" if len(per_q) else "0/0",
        "capped questions": int((per_q < n_positives).sum()),
    }


def examples_fingerprint(ds: Dataset, examples: Sequence[TrainingExample]) -> str:
    """sha256 of the triplets *with their texts*: relabelling or editing a passage changes it."""
    h = hashlib.sha256()
    for e in examples:
        row = [asdict(e), ds.passages[e.positive].text, ds.passages[e.negative].text]
        h.update(json.dumps(row, sort_keys=True, ensure_ascii=False).encode("utf-8") + b"\n")
    return h.hexdigest()


def examples_frame(ds: Dataset, examples: Sequence[TrainingExample]) -> pd.DataFrame:
    """One row per triplet with the passage texts (for display)."""
    return pd.DataFrame([{**asdict(e), "positive_text": ds.passages[e.positive].text,
                          "negative_text": ds.passages[e.negative].text} for e in examples])
