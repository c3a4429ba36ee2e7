"""Question-disjoint batches for in-batch-negative training (paper 000 §5.2–5.3, A.2–A.3).

With N positives per question, MultipleNegativesRankingLoss would treat a question's *other*
positives in the same batch as negatives, and a sampled negative that belongs to another
question of the batch is a positive of that question. A batch is therefore built so that

* every question appears at most once as an anchor, and
* no anchor's question owns another row's sampled negative.

Then every in-batch negative of an anchor is a passage of a different question (label 0 for it
by construction of the qrels, docs/data.md). The effective batch size is at most the number of
distinct training questions. The plan of an epoch is a greedy pass over a seeded shuffle of the
rows (seed + epoch): rows that conflict with the current batch wait, in order, for the next one.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Sequence


def plan_batches(anchor_keys: Sequence[str], negative_keys: Sequence[str | None], batch_size: int,
                 seed: int) -> list[list[int]]:
    """Row indices grouped into question-disjoint batches (each ≤ ``batch_size``, all rows once)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be ≥ 1, got {batch_size}")
    if len(anchor_keys) != len(negative_keys):
        raise ValueError("anchor_keys and negative_keys must have the same length")
    order = list(range(len(anchor_keys)))
    random.Random(seed).shuffle(order)
    queue = deque(order)
    batches: list[list[int]] = []
    while queue:
        batch: list[int] = []
        anchors: set[str] = set()
        negs: set[str] = set()
        waiting: list[int] = []
        while queue and len(batch) < batch_size:
            i = queue.popleft()
            a, n = anchor_keys[i], negative_keys[i]
            if a in anchors or a in negs or (n is not None and n in anchors) or (n is not None and n == a):
                waiting.append(i)
                continue
            batch.append(i)
            anchors.add(a)
            if n is not None:
                negs.add(n)
        queue.extendleft(reversed(waiting))
        if (
            not batch
        ):  # a row conflicting with itself (negative of its own question) — cannot happen from the sampler
            batch = [queue.popleft()]
        batches.append(batch)
    return batches
