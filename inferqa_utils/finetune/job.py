"""What one training run produces: :class:`TrainJob`, taken by
:func:`~inferqa_utils.finetune.biencoder.train_biencoder` and
:func:`~inferqa_utils.finetune.cross_encoder.train_cross_encoder` beside the hyper-parameters of a
:class:`~inferqa_utils.finetune.training.TrainConfig`.

    train_biencoder(ds, examples, TrainJob("FT-MiniLM-N5", models_dir("embedded") / "FT-MiniLM-N5", 5), cfg)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TrainJob:
    """One model to train: its registry ``name`` (``FT-MiniLM-N5``), the ``folder`` it is trained
    into (``training.json``, ``checkpoints/``, ``model/``: :mod:`inferqa_utils.finetune.training`),
    the number of positives per question its examples were sampled with (``n_positives``, recorded
    with the model) and the registry model it starts from (``base``, part of the fingerprint)."""

    name: str
    folder: str | Path
    n_positives: int
    base: str = "minilm"
