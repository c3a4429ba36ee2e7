"""Fine-tuning with N positives per question (paper 000 §5.2–5.3, A.2–A.3).

* :mod:`.sampling` — (question, positive, negative) triplets from the train split;
* :mod:`.batching` — question-disjoint batches for in-batch negatives;
* :mod:`.training` — output folders, fingerprints, checkpoint/resume, registration;
* :mod:`.biencoder` — MiniLM bi-encoder (MultipleNegativesRankingLoss) → ``FT-MiniLM``;
* :mod:`.cross_encoder` — MiniLM cross-encoder reranker (binary cross-entropy) → ``FT-CrossEncoder``;
* :mod:`.experiments` — the evaluation tables and the figure of notebook 05;
* :mod:`.report` — the generated sentences that close notebook 05's sections.

torch / sentence-transformers are imported only inside the training functions.
"""

from .biencoder import train_biencoder
from .cross_encoder import train_cross_encoder
from .sampling import TrainingExample, examples_frame, positives_of, sample_examples, sample_summary
from .training import (
    BIENCODER_KIND,
    CROSS_ENCODER_KIND,
    PAPER_EPOCHS,
    TrainConfig,
    TrainedModel,
    epochs_for,
    models_dir,
    register,
)

__all__ = [
    "BIENCODER_KIND", "CROSS_ENCODER_KIND", "PAPER_EPOCHS", "TrainConfig", "TrainedModel", "TrainingExample",
    "epochs_for", "examples_frame", "models_dir", "positives_of", "register", "sample_examples",
    "sample_summary", "train_biencoder", "train_cross_encoder",
]
