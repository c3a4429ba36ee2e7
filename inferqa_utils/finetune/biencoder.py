"""Fine-tuning a MiniLM bi-encoder with N positives per question (paper 000 §5.2, A.2).

The paper fine-tunes DPR (bert-base) with in-batch negatives plus one sampled negative per
positive. Here the packaged ``all-MiniLM-L6-v2`` (``minilm``) is trained with
sentence-transformers' trainer and **MultipleNegativesRankingLoss** on (question, positive,
negative) triplets: for anchor q_i in a batch of B rows the loss is the cross-entropy

    L_i = −log  exp(s·cos(q_i, p_i)) / [ Σ_j exp(s·cos(q_i, p_j)) + Σ_j exp(s·cos(q_i, n_j)) ]

with scale s = 20 over every positive p_j and sampled negative n_j of the batch (in-batch +
sampled negatives, as DPR). Batches are question-disjoint (:mod:`.batching`), so no in-batch
negative is a passage of the anchor's own question. One max sequence length covers questions and
passages (paper: 64 / 256; our passages are < 100 tokens).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..core import models
from ..ir.datamodel import Dataset
from .batching import plan_batches
from .job import TrainJob
from .sampling import TrainingExample, examples_fingerprint
from .training import (
    BIENCODER_KIND,
    TrainConfig,
    TrainedModel,
    fingerprint,
    prepare_model,
    run_training,
    seed_everything,
    trainer_arguments,
    versions,
)


def triplet_columns(ds: Dataset, examples: Sequence[TrainingExample]) -> dict[str, list[str]]:
    """The training dataset: ``anchor`` (question), ``positive`` and ``negative`` passage texts."""
    return {
        "anchor": [e.question for e in examples],
        "positive": [ds.passages[e.positive].text for e in examples],
        "negative": [ds.passages[e.negative].text for e in examples],
    }


def biencoder_fingerprint(
    ds: Dataset, examples: Sequence[TrainingExample], cfg: TrainConfig, base: str
) -> str:
    return fingerprint(
        {
            "kind": BIENCODER_KIND,
            "loss": "MultipleNegativesRankingLoss(scale=20, cos)",
            "batches": "question-disjoint",
            "base": base,
            "base_identity": models.checksum(base),
            "examples": examples_fingerprint(ds, examples),
            "config": cfg.weights_key(),
            "versions": versions(),
        }
    )


def train_biencoder(ds: Dataset, examples: Sequence[TrainingExample], job: TrainJob, cfg: TrainConfig, *,
                    progress: bool = True, callbacks: list[Any] | None = None,
                    log: Callable[[str], None] = print) -> TrainedModel:
    """Fine-tune bi-encoder ``job.base`` (a sentence-transformers model of the registry) on
    ``examples`` with ``cfg`` into ``job.folder`` (see :mod:`.training` for reuse/resume); ``callbacks``
    go to the Trainer, ``progress`` shows its progress bar. Returns the :class:`TrainedModel`;
    register it with :func:`.training.register` (kind ``"sentence-transformers"``)."""
    if not examples:
        raise ValueError("no training examples")
    base = job.base
    fp = biencoder_fingerprint(ds, examples, cfg, base)
    meta = {"n_positives": job.n_positives, "n_examples": len(examples), "epochs": cfg.epochs, "base": base,
            **cfg.__dict__}
    columns = triplet_columns(ds, examples)
    anchors = [e.qid for e in examples]
    negs = [e.negative_qid for e in examples]

    def make_trainer(checkpoint_dir: Path) -> Any:
        from datasets import Dataset as HFDataset
        from sentence_transformers import (
            SentenceTransformer,
            SentenceTransformerTrainer,
            SentenceTransformerTrainingArguments,
        )
        from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

        seed_everything(cfg.seed)
        model = SentenceTransformer(str(models.fetch(base, log=lambda s: None)), device="cpu")
        model.max_seq_length = cfg.max_seq_length
        prepare_model(model, cfg)
        steps = len(plan_batches(anchors, negs, cfg.batch_size, cfg.seed))
        args = trainer_arguments(SentenceTransformerTrainingArguments, checkpoint_dir, cfg, steps,
                                 progress=progress, batch_sampler=disjoint_batch_sampler(anchors, negs))
        return SentenceTransformerTrainer(model=model, args=args, train_dataset=HFDataset.from_dict(columns),
                                          loss=MultipleNegativesRankingLoss(model))

    def save(trainer: Any, path: Path) -> None:
        trainer.model.save(str(path))

    folder = Path(job.folder)
    return run_training(job.name, BIENCODER_KIND, folder, fp, meta, make_trainer, save, callbacks, log)


def disjoint_batch_sampler(anchor_keys: Sequence[str], negative_keys: Sequence[str | None]) -> Any:
    """A picklable factory for sentence-transformers' ``batch_sampler=`` training argument (the
    trainer pickles its arguments into every checkpoint): it builds a
    :class:`~inferqa_utils.finetune.torch_sampler.QuestionDisjointBatchSampler` that yields
    :func:`~inferqa_utils.finetune.batching.plan_batches` for the rows of the training dataset, re-planned
    every epoch with
    ``seed + epoch`` (deterministic, so a resumed run skips exactly the batches it had seen)."""
    from functools import partial

    from .torch_sampler import QuestionDisjointBatchSampler

    return partial(
        QuestionDisjointBatchSampler, anchor_keys=list(anchor_keys), negative_keys=list(negative_keys)
    )
