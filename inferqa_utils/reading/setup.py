"""Who reads and scores, and from what: the set-up every reading of a run shares (paper 000 §5.4).

A :class:`ReadingSetup` holds the reader, the judge (``None``: strict EM only), the built dataset,
the corpus the passages' text comes from (``None``: the dataset's own passages), the answers the
build already read (:class:`~inferqa_utils.answering.reader.KnownAnswers`, reused without a model
call), the context — the top-``k`` passages merged by ``union`` (Union_norm or Union_freq with
``alpha``, ``beta``, :mod:`inferqa_utils.reading.contexts`) — and whether progress bars show.
Notebooks 04–08 make one and pass it to every reading (:func:`inferqa_utils.reading.topk.read_runs`,
the incremental and SER readings of notebook 06, the report and CoT reader of notebook 07, your
system's reading in notebook 08); ``dataclasses.replace(setup, judge=None)`` gives a variant
without repeating the rest.

>>> from inferqa_utils.ir.datamodel import Dataset
>>> setup = ReadingSetup("reader", None, Dataset("toy", {}, {}, {}, {}), k=5)
>>> setup.k, setup.union, setup.corpus is None
(5, 'norm', True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .contexts import ALPHA, BETA

if TYPE_CHECKING:
    from ..answering.reader import KnownAnswers
    from ..ir.datamodel import Dataset
    from ..llm.base import LLM


@dataclass(frozen=True)
class ReadingSetup:
    """The reader, judge, dataset, corpus, reused answers and context of a reading (module docstring)."""

    #: the reader engine (paper 000 A.4 prompt unless a strategy is given)
    reader: LLM
    #: the answer judge (paper 000 §4); ``None``: judged accuracy is strict EM
    judge: LLM | None
    #: the built dataset: questions, answers, passages and their hints
    dataset: Dataset
    #: passage id → text the contexts are built from; ``None``: the dataset's own passages
    corpus: Mapping[str, str] | None = None
    #: answers the build already read with the same prompts (not read again); ``None``: none
    known: KnownAnswers | None = None
    #: passages read per question (top-k), where a reading reads one context size
    k: int = 3
    #: how the top-k passages are merged: ``"norm"`` (Union_norm) or ``"freq"`` (Union_freq)
    union: str = "norm"
    #: Union_freq's weight of the passage-rank term (α of paper 000 Eq. 1)
    alpha: float = ALPHA
    #: Union_freq's weight of the in-passage position term (β of paper 000 Eq. 1)
    beta: float = BETA
    #: whether the reader and judge batches show progress bars
    progress: bool = True
