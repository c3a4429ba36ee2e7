"""LLM engine: one interface (:class:`~inferqa_utils.llm.base.LLM`), two backends.

``load_llm("qwen2.5-coder-0.5b")`` runs a packaged GGUF in process with llama.cpp, or — when
``INFERQA_LLM_SERVER`` / ``INFERQA_LLM_SERVERS`` route it (:mod:`.routing`) — sends it to an
OpenAI-compatible server; ``load_llm("my-model", backend="server", base_url="http://host:8000")``
binds one explicitly. Both share the persistent generation cache in ``.cache/llm``.
"""

from __future__ import annotations

import inspect
import json
import os
from dataclasses import fields
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..core import models
from ..core.config import PATHS
from .base import LLM, LLMStats, Message, Messages
from .cache import GenerationCache
from .chatformat import ChatFormat
from .http_settings import HTTPSettings
from .llamacpp import LlamaCppLLM, LlamaCppSettings
from .routing import Route, backend_record, backend_records, server_route, split_served
from .server import ServerError, ServerLLM

__all__ = [
    "LLM", "ChatFormat", "GenerationCache", "HTTPSettings", "LLMStats", "LlamaCppSettings", "Message",
    "Messages", "ServerError", "ServerLLM", "backend_record", "backend_records", "default_cache", "load_llm",
]


def default_cache() -> GenerationCache:
    """The generation cache at ``$INFERQA_LLM_CACHE`` (default ``.cache/llm/cache.sqlite``), read at
    call time: one open store per path."""

    return _cache_at(
        str(Path(os.environ.get("INFERQA_LLM_CACHE", PATHS.cache / "llm" / "cache.sqlite")).resolve())
    )


@lru_cache(maxsize=8)
def _cache_at(path: str) -> GenerationCache:
    return GenerationCache(Path(path))


_LOADED: dict[tuple, LLM] = {}


def load_llm(name: str, backend: str | None = None, base_url: str | None = None, use_cache: bool = True,
             n_ctx: int = 4096, prefix_reuse: bool = True, shared: bool = True, **kw: Any) -> LLM:
    """Load model ``name`` from the registry (llama.cpp in process) or bind it to a server.

    The backend: ``backend="llamacpp"`` always runs in process; ``backend="server"`` or a
    ``base_url`` uses an OpenAI-compatible server (``base_url``, else the environment's route);
    otherwise (``None``, ``"auto"``) the environment decides — ``INFERQA_LLM_SERVERS`` for the
    models it names, ``INFERQA_LLM_SERVER`` for all others, else in process (:mod:`.routing`).
    A server's model id is ``name`` unless the route says ``url#served-id`` or ``model=`` is given.
    Keywords are those of :class:`LlamaCppSettings` in process, and those of :class:`ServerLLM` and
    of its :class:`HTTPSettings` (``timeout=``, ``concurrency=``, …) on a server; keywords of the
    other backend are ignored (``n_ctx``, ``prefix_reuse``, ``order_prompts`` on a server). With
    ``shared=True`` one instance per configuration is reused.
    """
    if backend not in (None, "auto", "llamacpp", "server"):
        raise ValueError(f"backend must be 'llamacpp', 'server', 'auto' or None, not {backend!r}")
    if backend == "llamacpp" and base_url:
        raise ValueError("base_url is for backend='server' (or leave backend unset)")
    c = default_cache() if use_cache else None
    if backend == "server" or base_url:
        route = (
            Route(*split_served(base_url, name, "base_url"), "argument") if base_url else server_route(name)
        )
        if route is None:
            raise ValueError("backend='server' needs base_url (or INFERQA_LLM_SERVER / INFERQA_LLM_SERVERS)")
    else:
        route = server_route(name) if backend != "llamacpp" else None
    if route is not None:
        return _server_llm(name, route, c, use_cache, shared, kw)
    key = (name, n_ctx, prefix_reuse, use_cache, tuple(sorted(kw.items())))
    if shared and key in _LOADED:
        return _LOADED[key]

    spec = models.get_spec(name)
    if spec.kind != "gguf":
        raise ValueError(f"model {name!r} is a {spec.kind} model, not an LLM (GGUF)")
    path = models.fetch(name, log=lambda s: None)
    if c is not None:  # persisted few-shot prefixes live beside the generation cache
        kw.setdefault("kv_dir", c.path.parent / "kv")
    llm = LlamaCppLLM(
        name, path, models.checksum(name), cache=c,
        settings=LlamaCppSettings(n_ctx=n_ctx, prefix_reuse=prefix_reuse, **kw),
    )
    if shared:
        _LOADED[key] = llm
    return llm


def _server_llm(name: str, route: Route, cache: GenerationCache | None, use_cache: bool, shared: bool,
                kw: dict[str, Any]) -> ServerLLM:
    """A :class:`ServerLLM` for ``route``; in-process-only keywords dropped, the others split
    between its :class:`HTTPSettings` and itself; one instance per configuration."""
    in_process = set(inspect.signature(LlamaCppLLM).parameters) | {f.name for f in fields(LlamaCppSettings)}
    on_server = set(inspect.signature(ServerLLM).parameters) | {f.name for f in fields(HTTPSettings)}
    kw = {k: v for k, v in kw.items() if k not in in_process - on_server}
    kw.setdefault("model", route.model)
    key = ("server", name, route.url, use_cache, json.dumps(kw, sort_keys=True, default=str))
    if shared and key in _LOADED:
        return _LOADED[key]  # type: ignore[return-value]
    http, rest = HTTPSettings.split(route.url, kw)
    llm = ServerLLM(name, http, cache=cache, **rest)
    if shared:
        _LOADED[key] = llm
    return llm
