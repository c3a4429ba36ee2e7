"""Splits (paper 000 §3.1.4): train from the parametric pool, dev/test from the rest.

The paper puts up to 5,000 parametric questions in train, 2,000 non-parametric ones in test and
the rest in dev. Sizes here are counts (int), shares of the pool (float in (0, 1)) or ``None``
(train: the whole parametric pool; test: two thirds of the non-parametric pool, the paper's
2,000 : 862 proportion rounded). Assignment is seeded and reproducible.
"""

from __future__ import annotations

import random
from collections.abc import Sequence


def _size(spec: int | float | None, pool: int, default_share: float) -> int:
    if spec is None:
        return round(pool * default_share)
    if isinstance(spec, float) and 0 < spec < 1:
        return round(pool * spec)
    if int(spec) < 0:
        raise ValueError(f"split size must be ≥ 0, got {spec}")
    return min(int(spec), pool)


def make_splits(qids: Sequence[str], parametric: set[str], n_train: int | float | None = None,
                n_test: int | float | None = None, seed: int = 13) -> tuple[dict[str, list[str]], list[str]]:
    """``({"train", "dev", "test"}, unused)``: unused are parametric questions beyond ``n_train``.

    Order inside each split follows ``qids``.
    """
    rng = random.Random(seed)
    par = [q for q in qids if q in parametric]
    non = [q for q in qids if q not in parametric]
    train = set(rng.sample(par, _size(n_train, len(par), 1.0)))
    test = set(rng.sample(non, _size(n_test, len(non), 2 / 3)))
    splits = {"train": [q for q in par if q in train],
              "dev": [q for q in non if q not in test],
              "test": [q for q in non if q in test]}
    unused = [q for q in par if q not in train]
    return splits, unused
