"""Rerankers by name (paper 000 §5.3): the one list every caller asks.

Names (:data:`RERANKERS`; names and aliases are case-insensitive):

* ``pointwise`` (alias ``monot5-llm``) — :class:`~.llm_rerankers.PointwiseLLMReranker`, needs an LLM;
* ``upr`` (alias ``query-likelihood``) — :class:`~.llm_rerankers.QueryLikelihoodReranker`, needs an LLM;
* ``listwise`` (alias ``rankgpt``) — :class:`~.llm_rerankers.ListwiseLLMReranker`, needs an LLM;
* ``cross-encoder`` (alias ``crossencoder``) — :class:`~.cross_encoder.CrossEncoderReranker` with
  ``model=`` a registered cross-encoder (default ``FT-CrossEncoder``, trained in notebook 05);
* ``dense`` — :class:`~.dense.DenseReranker`, written ``dense:<embedder>`` (the model name is
  case-sensitive), or the shorthands ``minilm`` / ``e5-small``.

:func:`register_reranker` adds a name of any kind (``needs_llm`` says whether it is given the
reranker LLM). A researcher's own reranker is named by an entry point of the group
``inferqa.rerankers`` or a ``module:function`` spec (:mod:`inferqa_utils.core.plugins`: ``build()``, or
``build(llm=...)`` when it has a required ``llm`` parameter, returning a
:class:`~.base.Reranker`). :func:`make_reranker` also takes any other name as a registered
cross-encoder or a folder (``make_reranker("FT-CrossEncoder")``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..core import models, plugins
from ..core.errors import UnknownNameError
from ..core.models import ModelError
from ..llm import load_llm
from .base import Reranker
from .cross_encoder import CrossEncoderReranker
from .dense import DenseReranker
from .llm_rerankers import ListwiseLLMReranker, PointwiseLLMReranker, QueryLikelihoodReranker

if TYPE_CHECKING:
    from ..llm.base import LLM

#: what the built-in rerankers score with: an instruction LLM, a cross-encoder checkpoint, or a
#: bi-encoder (:func:`register_reranker` takes other kinds; plugged-in rerankers are ``plugin``)
KINDS = ("llm", "cross-encoder", "dense")
#: the kind of a reranker named by an entry point or a ``module:function`` spec
PLUGIN_KIND = "plugin"
#: a dense reranker's spec is ``dense:<embedder>``; these embedder names are accepted bare
DENSE_PREFIX = "dense:"
DENSE_SHORTHANDS = ("minilm", "e5-small")


@dataclass(frozen=True)
class RerankerSpec:
    """One reranker of the registry.

    ``build(name, llm, **kw)`` makes the reranker: ``name`` is the name it was asked for (a dense
    spec carries its embedder), ``llm`` an engine for an LLM reranker (else None), ``kw`` the
    class's options (``window``/``step`` for listwise, ``model`` for the cross-encoder, …).
    ``llm`` says whether it needs the LLM (None: when its kind is ``llm``); ``identity`` what
    decides its scores besides the LLM (plugged-in rerankers: the plugin's identity), for the keys
    of cached reranked runs."""

    name: str
    kind: str
    build: Callable[..., Reranker]
    description: str
    aliases: tuple[str, ...] = ()
    #: keywords that turn its progress bar off (callers that run it inside a larger job pass them)
    quiet: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    llm: bool | None = None
    identity: Callable[[], str] | None = None
    #: the plugged-in component behind the name (:mod:`inferqa_utils.core.plugins`), None for a registered one
    plugin: plugins.Plugin | None = None

    @property
    def needs_llm(self) -> bool:
        """Whether :func:`make_reranker` needs ``llm=`` for it."""
        return self.kind == "llm" if self.llm is None else self.llm


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


def register_reranker(name: str, build: Callable[..., Reranker], kind: str = PLUGIN_KIND,
                      description: str = "", *, needs_llm: bool = False, aliases: tuple[str, ...] = (),
                      quiet: Mapping[str, Any] | None = None, identity: Callable[[], str] | None = None,
                      replace: bool = False) -> RerankerSpec:
    """Register reranker ``name`` of any ``kind``: ``build(name, llm, **kw)`` makes it (``llm`` given
    when ``needs_llm``, else None); ``identity()`` says what besides the LLM decides its scores. A
    name or alias already registered → ``ValueError`` unless ``replace``."""
    others = [s for s in RERANKERS.values() if s.name != name or not replace]
    taken = {n.lower() for s in others for n in (s.name, *s.aliases)}
    clash = [n for n in (name, *aliases) if n.lower() in taken]
    if clash:
        raise ValueError(f"reranker {clash[0]!r} is already registered")
    spec = RerankerSpec(name, kind, build, description, tuple(aliases),
                        MappingProxyType(dict(quiet or {})), llm=needs_llm, identity=identity)
    RERANKERS[name] = spec
    return spec


def plugin_reranker(plugin: plugins.Plugin) -> RerankerSpec:
    """The spec of a plugged-in reranker (:mod:`inferqa_utils.core.plugins`), named by its spec: kind
    :data:`PLUGIN_KIND`, needing the LLM when the plugin's callable has a required ``llm``
    parameter; its build checks that the result has ``rerank`` and names it by the spec."""
    name, needs = plugin.spec, plugin.needs_llm

    def build(_name: str, llm: Any, **kw: Any) -> Reranker:
        built = plugin.obj(llm=llm, **kw) if needs else plugin.obj(**kw)
        return plugin.checked(built, "rerank", "()", "rerank(queries, run, corpus, depth)")

    return RerankerSpec(name, PLUGIN_KIND, build, plugin.description, llm=needs, identity=plugin.identity,
                        plugin=plugin)


def reranker_spec(name: str) -> RerankerSpec | None:
    """The registry entry of ``name`` — a canonical name or alias (any case), ``dense:<embedder>``
    or a dense shorthand — else a plugged-in reranker (an entry point of ``inferqa.rerankers`` or a
    ``module:function`` spec, :func:`plugin_reranker`), or None (for :func:`make_reranker`, a
    cross-encoder name or folder)."""
    if name.startswith(DENSE_PREFIX) or name in DENSE_SHORTHANDS:
        return RERANKERS["dense"]
    key = name.lower()
    found = next((s for s in RERANKERS.values()
                  if s.kind != "dense" and key in (s.name.lower(), *(a.lower() for a in s.aliases))), None)
    if found is not None:
        return found
    plugin = plugins.find("reranker", name)
    return plugin_reranker(plugin) if plugin is not None else None


def reranker_names() -> list[str]:
    """The registered names and the entry points of ``inferqa.rerankers``, as listed in messages."""
    return [*RERANKERS, *(n for n in plugins.names("reranker") if n not in RERANKERS)]


def reranker_identity(spec: RerankerSpec | None, llm: Any = None) -> str | None:
    """What decides a reranker's scores, for the key of its cached runs: the LLM's identity, with a
    registered or plugged-in reranker's own ``identity()`` before it when it declares one (the
    built-in rerankers do not: their key is the LLM's identity alone)."""
    ident = getattr(llm, "identity", None)
    if spec is None or spec.identity is None:
        return ident
    own = spec.identity()
    return own if ident is None else f"{own}; llm {ident}"


def check_reranker(name: str) -> RerankerSpec | None:
    """Refuse, without building anything, a name :func:`make_reranker` cannot build: not a registered
    name or alias, a plugged-in reranker, a registered cross-encoder or a folder. The
    :class:`~inferqa_utils.core.errors.UnknownNameError` lists the valid names; a wrong plugin spec is a
    :class:`~inferqa_utils.core.errors.PluginError` (:func:`reranker_spec`). Returns the registry's
    spec, None for a cross-encoder name or folder."""
    spec = reranker_spec(name)
    if spec is not None:
        return spec
    try:
        if models.get_spec(name).kind == "cross-encoder":
            return None
    except ModelError:
        if Path(name).expanduser().is_dir():
            return None
    forms = ("dense:<embedder>, a registered cross-encoder, a folder, or a module:function spec naming "
             "build() or build(llm=...)")
    raise UnknownNameError(plugins.unknown_name("reranker", name, reranker_names(), forms))


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
    a plugged-in reranker (:func:`plugin_reranker`) gets the LLM when it requires one; any other
    name is tried as a registered cross-encoder (e.g. ``"FT-CrossEncoder"``) or a folder. Passing
    ``llm`` to a reranker that takes none is an error.
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
        raise ModelError(f"unknown reranker {name!r} (LLM rerankers: {', '.join(llm_reranker_names())}; "
                         f"rerankers: {', '.join(reranker_names())}; or a module:function spec); "
                         f"as a cross-encoder: {e}") from None
