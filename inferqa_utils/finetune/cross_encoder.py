"""Fine-tuning a cross-encoder reranker from MiniLM with N positives per question (paper 000 §5.2–5.3,
A.2–A.3).

The paper fine-tunes MonoT5 (pointwise: "Query: q Document: d Relevant:" → true/false). No
reranker weights ship offline, so the packaged ``all-MiniLM-L6-v2`` encoder gets a fresh
one-logit classification head (``CrossEncoder(minilm, num_labels=1)``) and is trained with
sentence-transformers' ``CrossEncoderTrainer`` and **binary cross-entropy** on the pairs of each
triplet, (q, positive, 1) and (q, negative, 0) — the pointwise monoT5 objective with a sigmoid:

    L = −[ y·log σ(f(q, d)) + (1 − y)·log(1 − σ(f(q, d))) ]

The saved folder loads in :class:`inferqa_utils.rerank.CrossEncoderReranker` (registered with
kind ``"cross-encoder"``), which ranks by σ(f(q, d)).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..core import models
from ..ir.datamodel import Dataset
from .job import TrainJob
from .sampling import TrainingExample, examples_fingerprint
from .training import (
    CROSS_ENCODER_KIND,
    TrainConfig,
    TrainedModel,
    fingerprint,
    prepare_model,
    run_training,
    seed_everything,
    trainer_arguments,
    versions,
)


def pair_columns(ds: Dataset, examples: Sequence[TrainingExample]) -> dict[str, list[Any]]:
    """The training dataset: (query, passage, label) — one positive and one negative row per triplet."""
    cols: dict[str, list[Any]] = {"query": [], "passage": [], "label": []}
    for e in examples:
        for pid, y in ((e.positive, 1.0), (e.negative, 0.0)):
            cols["query"].append(e.question)
            cols["passage"].append(ds.passages[pid].text)
            cols["label"].append(y)
    return cols


def cross_encoder_fingerprint(
    ds: Dataset, examples: Sequence[TrainingExample], cfg: TrainConfig, base: str
) -> str:
    return fingerprint(
        {
            "kind": CROSS_ENCODER_KIND,
            "loss": "BinaryCrossEntropyLoss",
            "base": base,
            "base_identity": models.checksum(base),
            "examples": examples_fingerprint(ds, examples),
            "config": cfg.weights_key(),
            "versions": versions(),
        }
    )


def train_cross_encoder(
    ds: Dataset,
    examples: Sequence[TrainingExample],
    job: TrainJob,
    cfg: TrainConfig,
    *,
    progress: bool = True,
    callbacks: list[Any] | None = None,
    log: Callable[[str], None] = print,
) -> TrainedModel:
    """Fine-tune a one-logit cross-encoder from encoder ``job.base`` on the pairs of ``examples`` with
    ``cfg`` into ``job.folder`` (reuse/resume as in :mod:`.training`; ``callbacks`` and ``progress``
    as :func:`~inferqa_utils.finetune.biencoder.train_biencoder`). ``cfg.batch_size`` counts pairs."""
    if not examples:
        raise ValueError("no training examples")
    base = job.base
    fp = cross_encoder_fingerprint(ds, examples, cfg, base)
    meta = {"n_positives": job.n_positives, "n_examples": len(examples), "epochs": cfg.epochs, "base": base,
            **cfg.__dict__}
    columns = pair_columns(ds, examples)

    def make_trainer(checkpoint_dir: Path) -> Any:
        import math

        from datasets import Dataset as HFDataset
        from sentence_transformers import CrossEncoder, CrossEncoderTrainer, CrossEncoderTrainingArguments
        from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss
        from transformers.utils import logging as hf_logging

        seed_everything(cfg.seed)
        verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()  # the new head's "newly initialized" load report is expected
        try:
            model = CrossEncoder(str(models.fetch(base, log=lambda s: None)), num_labels=1,
                                 max_length=cfg.max_seq_length, device="cpu")
        finally:
            hf_logging.set_verbosity(verbosity)
        prepare_model(model, cfg)
        steps = math.ceil(len(columns["label"]) / cfg.batch_size)
        args = trainer_arguments(CrossEncoderTrainingArguments, checkpoint_dir, cfg, steps, progress=progress)
        return CrossEncoderTrainer(model=model, args=args, train_dataset=HFDataset.from_dict(columns),
                                   loss=BinaryCrossEntropyLoss(model))

    def save(trainer: Any, path: Path) -> None:
        trainer.model.save_pretrained(str(path))

    folder = Path(job.folder)
    return run_training(job.name, CROSS_ENCODER_KIND, folder, fp, meta, make_trainer, save, callbacks, log)
