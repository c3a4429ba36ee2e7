"""The torch side of :mod:`.batching` (imports sentence-transformers: import this module lazily)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sentence_transformers import DefaultBatchSampler

from .batching import plan_batches


class QuestionDisjointBatchSampler(DefaultBatchSampler):
    """Yields :func:`~inferqa_utils.finetune.batching.plan_batches` of the dataset rows, one plan per
    epoch (seeded with ``seed + epoch``). ``anchor_keys[i]`` / ``negative_keys[i]`` are the questions
    of row i's anchor and of its sampled negative."""

    def __init__(self, dataset: Any, batch_size: int, drop_last: bool, valid_label_columns: Any = None,
                 generator: Any = None, seed: int = 0, *, anchor_keys: Sequence[str] = (),
                 negative_keys: Sequence[str | None] = ()) -> None:
        super().__init__(dataset, batch_size=batch_size, drop_last=drop_last,
                         valid_label_columns=valid_label_columns, generator=generator, seed=seed)
        if len(dataset) != len(anchor_keys) or len(anchor_keys) != len(negative_keys):
            raise ValueError(f"the dataset has {len(dataset)} rows but {len(anchor_keys)} anchor and "
                             f"{len(negative_keys)} negative question keys were given")
        self.anchor_keys = list(anchor_keys)
        self.negative_keys = list(negative_keys)
        self._plans: dict[int, list[list[int]]] = {}

    def _plan(self) -> list[list[int]]:
        if self.epoch not in self._plans:
            plan = plan_batches(
                self.anchor_keys, self.negative_keys, self.batch_size, int(self.seed) + self.epoch
            )
            self._plans[self.epoch] = [b for b in plan if not (self.drop_last and len(b) < self.batch_size)]
        return self._plans[self.epoch]

    def __iter__(self) -> Iterator[list[int]]:
        yield from self._plan()

    def __len__(self) -> int:
        return len(self._plan())
