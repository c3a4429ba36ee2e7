"""Rerankers (paper 000 §5.3): one interface, ``rerank(queries, run, corpus, depth) -> Run``.

* ``pointwise`` — :class:`PointwiseLLMReranker`, monoT5-style yes/no log-odds with an LLM;
* ``upr`` — :class:`QueryLikelihoodReranker`, mean log P(question | passage);
* ``listwise`` — :class:`ListwiseLLMReranker`, RankGPT sliding windows;
* ``cross-encoder`` / a registered cross-encoder name such as ``FT-CrossEncoder`` —
  :class:`CrossEncoderReranker` (the fine-tuned reranker of paper 000 §5.2–5.3, A.2–A.3, trained elsewhere).

The oracle-reranker setting (paper 000 §5.3) uses :func:`oracle_candidates` / :func:`oracle_run` as the
first stage and ``rerank(..., depth=None)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..llm import load_llm
from ..models import ModelError
from .base import PairwiseScoreReranker, Reranker, merge_head_tail, oracle_candidates, oracle_run, sort_scored
from .cross_encoder import CrossEncoderReranker, resolve_cross_encoder
from .llm_rerankers import (
    ListwiseLLMReranker,
    PointwiseLLMReranker,
    QueryLikelihoodReranker,
    listwise_messages,
    parse_permutation,
    pointwise_messages,
    sliding_windows,
    upr_messages,
)

if TYPE_CHECKING:
    from ..llm.base import LLM

__all__ = [
    "LLM_RERANKERS",
    "CrossEncoderReranker",
    "ListwiseLLMReranker",
    "PairwiseScoreReranker",
    "PointwiseLLMReranker",
    "QueryLikelihoodReranker",
    "Reranker",
    "listwise_messages",
    "make_reranker",
    "merge_head_tail",
    "oracle_candidates",
    "oracle_run",
    "parse_permutation",
    "pointwise_messages",
    "resolve_cross_encoder",
    "sliding_windows",
    "sort_scored",
    "upr_messages",
]

#: reranker name → class, for the LLM-based rerankers (aliases included)
LLM_RERANKERS: dict[str, type[Reranker]] = {
    "pointwise": PointwiseLLMReranker,
    "monot5-llm": PointwiseLLMReranker,
    "upr": QueryLikelihoodReranker,
    "query-likelihood": QueryLikelihoodReranker,
    "listwise": ListwiseLLMReranker,
    "rankgpt": ListwiseLLMReranker,
}


def make_reranker(name: str, llm: LLM | str | None = None, **kw: Any) -> Reranker:
    """Build a reranker by name.

    ``"pointwise"``, ``"upr"``, ``"listwise"`` (aliases ``monot5-llm``, ``query-likelihood``,
    ``rankgpt``) need ``llm``: an :class:`~inferqa_utils.llm.LLM` or a model name passed to
    ``load_llm`` (e.g. ``"qwen2.5-coder-1.5b"``); other keywords go to the class (``window``,
    ``step`` for listwise). ``"cross-encoder"`` takes ``model=`` (default ``"FT-CrossEncoder"``);
    any other name is tried as a registered cross-encoder (e.g. ``"FT-CrossEncoder"``) or a folder.
    """
    key = name.lower()
    if key in LLM_RERANKERS:
        if llm is None:
            raise ValueError(f"reranker {name!r} needs an LLM: make_reranker({name!r}, llm='qwen2.5-coder-1.5b')")
        if isinstance(llm, str):

            llm = load_llm(llm)
        return LLM_RERANKERS[key](llm, **kw)
    if llm is not None:
        raise ValueError(f"reranker {name!r} does not take an LLM; LLM rerankers: {', '.join(LLM_RERANKERS)}")
    if key in ("cross-encoder", "crossencoder"):
        return CrossEncoderReranker(kw.pop("model", "FT-CrossEncoder"), **kw)

    try:
        return CrossEncoderReranker(name, **kw)
    except ModelError as e:
        raise ModelError(f"unknown reranker {name!r} (LLM rerankers: {', '.join(LLM_RERANKERS)}); "
                         f"as a cross-encoder: {e}") from None
