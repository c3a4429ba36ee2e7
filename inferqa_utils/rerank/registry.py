"""Rerankers by name (paper 000 §5.3): the one list every caller asks.

Names (:data:`RERANKERS`; names and aliases are case-insensitive):

* ``pointwise`` (alias ``monot5-llm``) — :class:`~.llm_rerankers.PointwiseLLMReranker`, needs an LLM;
* ``upr`` (alias ``query-likelihood``) — :class:`~.llm_rerankers.QueryLikelihoodReranker`, needs an LLM;
* ``listwise`` (alias ``rankgpt``) — :class:`~.llm_rerankers.ListwiseLLMReranker`, needs an LLM;
* ``cross-encoder`` (alias ``crossencoder``) — :class:`~.cross_encoder.CrossEncoderReranker` with
  ``model=`` a registered cross-encoder (default ``FT-CrossEncoder``, trained in notebook 05);
* ``dense`` — :class:`~.dense.DenseReranker`, written ``dense:<embedder>`` (the model name is
  case-sensitive), or the shorthands ``minilm`` / ``e5-small``.

:func:`make_reranker` also takes any other name as a registered cross-encoder or a folder
(``make_reranker("FT-CrossEncoder")``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..llm import load_llm
from ..models import ModelError
from .base import Reranker
from .cross_encoder import CrossEncoderReranker
from .dense import DenseReranker
from .llm_rerankers import ListwiseLLMReranker, PointwiseLLMReranker, QueryLikelihoodReranker

if TYPE_CHECKING:
    from ..llm.base import LLM

#: what a reranker scores with: an instruction LLM, a cross-encoder checkpoint, or a bi-encoder
KINDS = ("llm", "cross-encoder", "dense")
#: a dense reranker's spec is ``dense:<embedder>``; these embedder names are accepted bare
DENSE_PREFIX = "dense:"
DENSE_SHORTHANDS = ("minilm", "e5-small")


@dataclass(frozen=True)
class RerankerSpec:
    """One reranker of the registry.

    ``build(name, llm, **kw)`` makes the reranker: ``name`` is the name it was asked for (a dense
    spec carries its embedder), ``llm`` an engine for an LLM reranker (else None), ``kw`` the
    class's options (``window``/``step`` for listwise, ``model`` for the cross-encoder, …)."""

    name: str
    kind: str
    build: Callable[..., Reranker]
    description: str
    aliases: tuple[str, ...] = ()
    #: keywords that turn its progress bar off (callers that run it inside a larger job pass them)
    quiet: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def needs_llm(self) -> bool:
        """Whether :func:`make_reranker` needs ``llm=`` for it."""
        return self.kind == "llm"


def _llm_class(cls: type[Reranker]) -> Callable[..., Reranker]:
    return lambda name, llm, **kw: cls(llm, **kw)


def _cross_encoder(name: str, llm: None, **kw: Any) -> Reranker:
    return CrossEncoderReranker(kw.pop("model", "FT-CrossEncoder"), **kw)


def _dense(name: str, llm: None, **kw: Any) -> Reranker:
    model = name[len(DENSE_PREFIX):] if name.startswith(DENSE_PREFIX) else name
    return DenseReranker(model, **kw)


_QUIET = MappingProxyType({"progress": False})

#: canonical name → spec, in the order the names are listed to users
RERANKERS: dict[str, RerankerSpec] = {
    s.name: s
    for s in (
        RerankerSpec(
            "pointwise", "llm", _llm_class(PointwiseLLMReranker),
            "monoT5-style yes/no log-odds with an instruction LLM",
            ("monot5-llm",),
            _QUIET,
        ),
        RerankerSpec(
            "upr", "llm", _llm_class(QueryLikelihoodReranker),
            "UPR: mean log P(question | passage) with an instruction LLM",
            ("query-likelihood",),
            _QUIET,
        ),
        RerankerSpec(
            "listwise", "llm", _llm_class(ListwiseLLMReranker),
            "RankGPT sliding windows (20/10) with an instruction LLM",
            ("rankgpt",),
        ),
        RerankerSpec(
            "cross-encoder", "cross-encoder", _cross_encoder,
            "a registered cross-encoder (model=, default FT-CrossEncoder)",
            ("crossencoder",),
            _QUIET,
        ),
        RerankerSpec(
            "dense", "dense", _dense, "bi-encoder cosine, dense:<embedder> (or minilm, e5-small)",
            DENSE_SHORTHANDS,
        ),
    )
}


def reranker_spec(name: str) -> RerankerSpec | None:
    """The registry entry of ``name`` — a canonical name or alias (any case), ``dense:<embedder>``
    or a dense shorthand — or None (for :func:`make_reranker`, a cross-encoder name or folder)."""
    if name.startswith(DENSE_PREFIX) or name in DENSE_SHORTHANDS:
        return RERANKERS["dense"]
    key = name.lower()
    return next((s for s in RERANKERS.values() if s.kind != "dense" and key in (s.name, *s.aliases)), None)


def needs_llm(name: str) -> bool:
    """Whether reranker ``name`` needs an LLM (False for cross-encoder names and folders)."""
    spec = reranker_spec(name)
    return spec is not None and spec.needs_llm


def llm_reranker_names() -> list[str]:
    """The names and aliases of the LLM rerankers, as listed in error messages."""
    return [n for s in RERANKERS.values() if s.needs_llm for n in (s.name, *s.aliases)]


def make_reranker(name: str, llm: LLM | str | None = None, **kw: Any) -> Reranker:
    """Build a reranker by name (module docstring).

    An LLM reranker needs ``llm``: an :class:`~inferqa_utils.llm.LLM` or a model name passed to
    ``load_llm`` (e.g. ``"qwen2.5-coder-1.5b"``); other keywords go to the class (``window``,
    ``step`` for listwise). ``"cross-encoder"`` takes ``model=`` (default ``"FT-CrossEncoder"``);
    any name not in the registry is tried as a registered cross-encoder (e.g. ``"FT-CrossEncoder"``)
    or a folder. Passing ``llm`` to a reranker that takes none is an error.
    """
    spec = reranker_spec(name)
    if spec is not None and spec.needs_llm:
        if llm is None:
            raise ValueError(
                f"reranker {name!r} needs an LLM: make_reranker({name!r}, llm='qwen2.5-coder-1.5b')"
            )
        if isinstance(llm, str):
            llm = load_llm(llm)
        return spec.build(name, llm, **kw)
    if llm is not None:
        raise ValueError(
            f"reranker {name!r} does not take an LLM; LLM rerankers: {', '.join(llm_reranker_names())}"
        )
    if spec is not None:
        return spec.build(name, None, **kw)
    try:
        return CrossEncoderReranker(name, **kw)
    except ModelError as e:
        raise ModelError(f"unknown reranker {name!r} (LLM rerankers: {', '.join(llm_reranker_names())}); "
                         f"as a cross-encoder: {e}") from None
