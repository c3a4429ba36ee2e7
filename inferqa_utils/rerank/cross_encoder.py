"""Cross-encoder reranker (paper 000 §5.3, §7): the slot for the fine-tuned reranker ("FT-CrossEncoder").

The paper fine-tunes MonoT5; no reranker weights are packaged (docs/models.md), so the fine-tuning
notebook trains a cross-encoder from MiniLM and registers it with
``models.register_local(name, "cross-encoder", path)``. This module only loads and scores it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..core import models
from .base import PairwiseScoreReranker

CROSS_ENCODER_KIND = "cross-encoder"


def resolve_cross_encoder(model_path_or_name: str | Path) -> Path:
    """The folder of a cross-encoder: a registered model name (``models.get_spec``, kind
    ``cross-encoder``) or an existing folder. Raises :class:`~inferqa_utils.core.models.ModelError`
    with what to do when it is missing."""

    name = str(model_path_or_name)
    try:
        spec = models.get_spec(name)
    except models.ModelError:
        p = Path(name).expanduser()
        if p.is_dir():
            return p
        raise models.ModelError(
            f"cross-encoder {name!r} is neither a registered model nor a folder. Train it first (fine-tuning "
            f"notebook) and register it with models.register_local({name!r}, {CROSS_ENCODER_KIND!r}, "
            "<folder>)"
        ) from None
    if spec.kind != CROSS_ENCODER_KIND:
        raise models.ModelError(f"model {name!r} is a {spec.kind} model, not a {CROSS_ENCODER_KIND}")
    return models.fetch(name, log=lambda s: None)  # local: fails clearly when the folder is gone


class CrossEncoderReranker(PairwiseScoreReranker):
    """Pointwise reranking with a sentence-transformers ``CrossEncoder`` (paper 000 §5.3, §7).

    Score: the cross-encoder's output for the pair, ``s(q, d) = σ(f_θ([CLS] q [SEP] d [SEP]))`` for a
    1-label model (sentence-transformers' default activation, a sigmoid), and the logit difference
    ``f_1 − f_0`` (relevant minus non-relevant) for a 2-label model — monotone in the relevance
    probability, like monoT5's score in the paper's FT-MonoT5 setting.
    """

    name = "cross-encoder"

    def __init__(self, model_path_or_name: str | Path = "FT-CrossEncoder", batch_size: int = 32,
                 max_length: int | None = 256, device: str | None = None, progress: bool = False) -> None:
        path = resolve_cross_encoder(model_path_or_name)
        from sentence_transformers import CrossEncoder

        self.model_name = str(model_path_or_name)
        self.path = path
        self.model = CrossEncoder(str(path), max_length=max_length, device=device)
        self.batch_size = batch_size
        self.progress = progress

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        scores = self.model.predict([(q, d) for q, d in pairs], batch_size=self.batch_size,
                                    show_progress_bar=self.progress, convert_to_numpy=True)
        scores = scores.reshape(len(pairs), -1)
        col = scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores[:, -1]
        return [float(s) for s in col]

    def __repr__(self) -> str:
        return f"CrossEncoderReranker({self.model_name!r})"
