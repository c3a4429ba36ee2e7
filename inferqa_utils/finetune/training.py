"""Shared training machinery: output folders, training fingerprints, checkpoint/resume, registration.

Layout of one trained model (ignored by git, under ``build/models/<dataset>/<name>/``)::

    training.json    fingerprint, hyper-parameters, finished flag, wall time, loss log
    checkpoints/     Hugging Face Trainer checkpoints while training (removed when finished)
    model/           the final model (sentence-transformers / CrossEncoder folder)

* **Skip**: a finished ``training.json`` with the same fingerprint and a ``model/`` folder means
  the model is reused without training.
* **Resume**: an unfinished folder with the same fingerprint resumes from its last checkpoint
  (``Trainer.train(resume_from_checkpoint=...)``: weights, optimizer, scheduler, RNG states and
  the position in the epoch). A different fingerprint wipes an unfinished folder first.
* **Replace**: a folder holding a *finished* model of another fingerprint stays as it is while
  the new model trains (and resumes) in ``.<name>.next/`` beside it; the complete new folder
  replaces it at the end (:func:`inferqa_utils.core.atomic.replace_dir`), so an interrupted training
  never leaves the folder without a model.
* **Wall time** (``seconds``): time of the training steps kept — earlier sessions count up to
  their last checkpoint (recorded at every save), plus the finishing session.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from ..core import models
from ..core.atomic import replace_dir
from ..core.config import PATHS, SEED
from ..llm import embeddings
from ..rerank.cross_encoder import CROSS_ENCODER_KIND as RERANKER_KIND

TRAIN_SCHEMA = 2
#: model-registry kinds of what we train (see ``retrieval.dense.is_dense_spec`` and
#: ``rerank.cross_encoder.CROSS_ENCODER_KIND``)
BIENCODER_KIND = "sentence-transformers"
CROSS_ENCODER_KIND = RERANKER_KIND
#: the paper's epochs by number of positives (paper 000 §5.2–5.3, A.2–A.3, authors' DPR recipe)
PAPER_EPOCHS: dict[int, int] = {1: 10, 5: 5, 10: 2, 50: 1, 100: 1, 200: 1}
#: the smallest checkpoint interval by default (steps)
MIN_CHECKPOINT_STEPS = 50


@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters of one training run (part of the fingerprint)."""

    epochs: float = 1.0
    batch_size: int = 16
    learning_rate: float = 2e-5
    max_seq_length: int = 256
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    seed: int = SEED
    #: keep the word-embedding matrix fixed (about half of MiniLM's 22.7M parameters): less
    #: optimizer work per step and less over-fitting of rare tokens on tiny training sets
    freeze_embeddings: bool = False
    #: save a checkpoint every this many optimizer steps (None: once per epoch, at most every 500
    #: and at least every MIN_CHECKPOINT_STEPS steps — a run shorter than that is not checkpointed:
    #: it costs less to redo than a checkpoint of weights + optimizer state costs to write)
    checkpoint_steps: int | None = None

    def weights_key(self) -> dict[str, Any]:
        """The fields that change the trained weights (everything but the checkpoint interval)."""
        return {k: v for k, v in asdict(self).items() if k != "checkpoint_steps"}

    def __post_init__(self) -> None:
        if not (self.epochs > 0):
            raise ValueError(f"epochs must be > 0, got {self.epochs!r}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be ≥ 1, got {self.batch_size!r}")
        if not (self.learning_rate > 0):
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate!r}")
        if self.max_seq_length < 8:
            raise ValueError(f"max_seq_length must be ≥ 8, got {self.max_seq_length!r}")
        if self.checkpoint_steps is not None and self.checkpoint_steps < 1:
            raise ValueError(f"checkpoint_steps must be ≥ 1 or None, got {self.checkpoint_steps!r}")


def epochs_for(n_positives: int, epochs: float | None) -> float:
    """``epochs`` when given; otherwise the paper's schedule (paper 000 §5.2–5.3, A.2–A.3) for the largest
    paper N ≤ ``n_positives``."""
    if epochs is not None:
        return float(epochs)
    keys = [k for k in sorted(PAPER_EPOCHS) if k <= n_positives]
    return float(PAPER_EPOCHS[keys[-1] if keys else min(PAPER_EPOCHS)])


@dataclass
class TrainedModel:
    """What :func:`run_training` returns (also stored in ``training.json``)."""

    name: str
    kind: str
    path: str
    fingerprint: str
    n_positives: int
    n_examples: int
    epochs: float
    steps: int
    seconds: float
    cached: bool = False
    resumed_from: int | None = None
    loss: list[tuple[int, float]] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        """A row of the training wall-time table."""
        final = self.loss[-1][1] if self.loss else float("nan")
        return {"model": self.name, "kind": self.kind, "N": self.n_positives, "examples": self.n_examples,
                "epochs": self.epochs, "steps": self.steps, "final loss": round(final, 4),
                "train seconds": round(self.seconds, 1), "resumed from step": self.resumed_from,
                "reused (no training)": self.cached}


def models_dir(dataset_name: str) -> Path:
    """``build/models/<dataset>`` (ignored by git)."""
    return PATHS.build / "models" / dataset_name


def versions() -> dict[str, str]:
    out = {}
    for dist in ("sentence-transformers", "transformers", "torch"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:  # pragma: no cover - env dependent
            out[dist] = "missing"
    return out


def fingerprint(payload: Mapping[str, Any]) -> str:
    """sha256 of the JSON of everything that determines the trained weights."""
    return hashlib.sha256(json.dumps({"schema": TRAIN_SCHEMA, **payload}, sort_keys=True, default=str)
                          .encode("utf-8")).hexdigest()


def _read_json(p: Path) -> dict[str, Any] | None:
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write_json(p: Path, obj: Mapping[str, Any]) -> None:
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=1, default=str) + "\n", encoding="utf-8")
    tmp.replace(p)


def finished_model(folder: Path, fp: str) -> TrainedModel | None:
    """The stored record when ``folder`` holds a finished model with fingerprint ``fp``."""
    info = _read_json(folder / "training.json")
    if (
        not info
        or not info.get("finished")
        or info.get("fingerprint") != fp
        or not (folder / "model").is_dir()
    ):
        return None
    rec = {k: v for k, v in info["result"].items() if k in TrainedModel.__dataclass_fields__}
    rec["loss"] = [tuple(x) for x in rec.get("loss", [])]
    return TrainedModel(**{**rec, "cached": True, "path": str(folder / "model")})


def last_checkpoint(folder: Path) -> Path | None:
    """The newest ``checkpoint-<step>`` folder under ``folder/checkpoints`` (complete ones only)."""
    ck = folder / "checkpoints"
    if not ck.is_dir():
        return None
    done = [p for p in ck.iterdir() if p.is_dir() and p.name.startswith("checkpoint-")
            and p.name.split("-")[-1].isdigit() and (p / "trainer_state.json").exists()]
    return max(done, key=lambda p: int(p.name.split("-")[-1])) if done else None


def prepare_model(model: Any, cfg: TrainConfig) -> Any:
    """Apply :attr:`TrainConfig.freeze_embeddings` to a sentence-transformers / CrossEncoder model."""
    if cfg.freeze_embeddings:
        n = 0
        for pname, p in model.named_parameters():
            if "word_embeddings" in pname:
                p.requires_grad_(False)
                n += 1
        if n == 0:
            raise ValueError("freeze_embeddings: the model has no parameter named *word_embeddings*")
    return model


def seed_everything(seed: int) -> None:
    """Seed python, numpy and torch before a model is built (a fresh cross-encoder head is random)."""
    from transformers import set_seed

    set_seed(seed)


def trainer_arguments(
    args_cls: Any,
    output_dir: Path,
    cfg: TrainConfig,
    steps_per_epoch: int,
    *,
    progress: bool,
    batch_sampler: Any = None,
    extra: Mapping[str, Any] | None = None,
) -> Any:
    """Training arguments shared by the bi-encoder and cross-encoder (CPU, seeded, linear warmup over
    ⌊warmup_ratio · steps⌋ steps — none for runs under 10 steps, whose first step would otherwise
    have learning rate 0 — then linear decay; checkpoints as :attr:`TrainConfig.checkpoint_steps`
    says; loss logged ~50 times per run)."""
    steps_per_epoch = max(1, int(steps_per_epoch))
    total = max(1, math.ceil(steps_per_epoch * cfg.epochs))
    save_steps = cfg.checkpoint_steps or max(MIN_CHECKPOINT_STEPS, min(500, steps_per_epoch))
    kw: dict[str, Any] = dict(
        output_dir=str(output_dir),
        num_train_epochs=cfg.epochs, per_device_train_batch_size=cfg.batch_size,
        learning_rate=cfg.learning_rate,
        warmup_steps=int(cfg.warmup_ratio * total),
        weight_decay=cfg.weight_decay, lr_scheduler_type="linear", seed=cfg.seed, data_seed=cfg.seed,
        use_cpu=True, report_to="none",
        logging_steps=max(1, total // 50),
        logging_first_step=True, save_strategy="steps", save_steps=save_steps, save_total_limit=1,
        disable_tqdm=not progress,
        dataloader_num_workers=0,
        dataloader_pin_memory=False,
    )
    if batch_sampler is not None:
        kw["batch_sampler"] = batch_sampler
    kw.update(extra or {})
    return args_cls(**kw)


def _progress_recorder(folder: Path, prior_seconds: float, t0: float) -> Any:
    """A Trainer callback that stores the elapsed training time at every checkpoint (and skips the
    Trainer's checkpoint after the last step)."""
    from transformers import TrainerCallback

    class _Recorder(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            # the Trainer saves a full checkpoint (weights + optimizer) after the last step; the final
            # model is saved by run_training instead, so that write is skipped
            if state.global_step >= state.max_steps:
                control.should_save = False
            return control

        def on_save(self, args, state, control, **kwargs):
            info = _read_json(folder / "training.json") or {}
            info["checkpoint_seconds"] = prior_seconds + (time.perf_counter() - t0)
            info["checkpoint_step"] = int(state.global_step)
            _write_json(folder / "training.json", info)
            return control

    return _Recorder()


def staging_folder(folder: Path) -> Path:
    """Where a model replacing the finished one in ``folder`` trains: ``.<name>.next`` beside it."""
    return folder.parent / f".{folder.name}.next"


def _work_folder(name: str, folder: Path, fp: str, log: Callable[[str], None]) -> Path:
    """The folder to train ``fp`` in (module docstring): ``folder`` itself unless it holds a
    finished model of another fingerprint, else :func:`staging_folder`; a run of another
    fingerprint found in the chosen folder is wiped first."""
    info = _read_json(folder / "training.json")
    keep_old = bool(info and info.get("finished") and (folder / "model").is_dir())
    work = staging_folder(folder) if keep_old else folder
    winfo = _read_json(work / "training.json") if keep_old else info
    if work.exists() and (not winfo or winfo.get("fingerprint") != fp):
        log(f"[finetune] {name}: {work} holds another training run (different data or parameters) — replaced")
        shutil.rmtree(work)
    if keep_old:
        log(
            f"[finetune] {name}: {folder} holds a model trained on other data or parameters; it stays until "
            "the "
            f"new one is complete (training in {work})"
        )
    return work


def run_training(name: str, kind: str, folder: Path, fp: str, meta: Mapping[str, Any],
                 make_trainer: Callable[[Path], Any], save_model: Callable[[Any, Path], None],
                 callbacks: list[Any] | None = None, log: Callable[[str], None] = print) -> TrainedModel:
    """Train (or reuse, or resume) one model into ``folder`` — see the module docstring.

    ``make_trainer(checkpoint_dir)`` builds the Trainer; ``save_model(trainer, path)`` writes the
    final model. ``meta`` (N, examples, epochs, hyper-parameters) is stored with the result.
    ``callbacks`` are extra Trainer callbacks (tests use one to interrupt a run).
    """
    folder = Path(folder)
    if finished_model(staging_folder(folder), fp) is not None:  # finished, then stopped before the swap
        replace_dir(staging_folder(folder), folder)
    done = finished_model(folder, fp)
    if done is not None:
        log(
            f"[finetune] {name}: finished model with the same training fingerprint found in {folder} — reused"
        )
        return done
    work = _work_folder(name, folder, fp, log)
    info = _read_json(work / "training.json")
    work.mkdir(parents=True, exist_ok=True)
    resume = last_checkpoint(work)
    prior = float(info.get("checkpoint_seconds", 0.0)) if (info and resume is not None) else 0.0
    _write_json(work / "training.json", {"fingerprint": fp, "name": name, "kind": kind, "finished": False,
                                         "meta": dict(meta), "checkpoint_seconds": prior,
                                         "checkpoint_step": int(resume.name.split("-")[-1]) if resume else 0})
    trainer = make_trainer(work / "checkpoints")
    t0 = time.perf_counter()
    trainer.add_callback(_progress_recorder(work, prior, t0))
    for cb in callbacks or []:
        trainer.add_callback(cb)
    if resume is not None:
        log(f"[finetune] {name}: resuming from {resume.name}")
    trainer.train(resume_from_checkpoint=str(resume) if resume else None)
    seconds = prior + (time.perf_counter() - t0)
    final, tmp = work / "model", work / "model.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    save_model(trainer, tmp)
    shutil.rmtree(final, ignore_errors=True)
    tmp.replace(final)
    loss = [
        (int(r["step"]), float(r["loss"])) for r in trainer.state.log_history if "loss" in r and "step" in r
    ]
    result = TrainedModel(
        name=name,
        kind=kind,
        path=str(folder / "model"),
        fingerprint=fp,
        n_positives=int(meta.get("n_positives", 0)),
        n_examples=int(meta.get("n_examples", 0)),
        epochs=float(meta.get("epochs", 0)),
        steps=int(trainer.state.global_step),
        seconds=seconds,
        resumed_from=int(resume.name.split("-")[-1]) if resume else None,
        loss=loss,
        params=dict(meta),
    )
    _write_json(work / "training.json", {"fingerprint": fp, "name": name, "kind": kind, "finished": True,
                                         "meta": dict(meta), "result": asdict(result),
                                         "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")})
    shutil.rmtree(work / "checkpoints", ignore_errors=True)
    if work != folder:
        replace_dir(work, folder)  # the finished new model takes the old one's place in one rename
    log(f"[finetune] {name}: {result.steps} steps in {seconds:.1f} s, final logged loss "
        f"{loss[-1][1] if loss else float('nan'):.4f} -> {result.path}")
    return result


def register(name: str, kind: str, path: str | Path, description: str = "") -> Any:
    """Register a trained folder under ``name`` (model registry, ``.cache/models/local_models.json``)
    and drop a stale shared embedder of that name, so retrievers/rerankers load the new weights."""

    spec = models.register_local(name, kind, path, description)
    embeddings._EMBEDDERS.pop(name, None)
    return spec
