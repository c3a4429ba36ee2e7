"""LLM engine: one interface (:class:`~inferqa_utils.llm.base.LLM`), two backends.

``load_llm("qwen2.5-coder-0.5b")`` runs a packaged GGUF in process with llama.cpp;
``load_llm("my-model", backend="server", base_url="http://host:8000")`` talks to any
OpenAI-compatible server. Both share the persistent generation cache in ``.cache/llm``.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from .. import models
from ..config import PATHS
from .base import LLM, LLMStats, Message, Messages
from .cache import GenerationCache
from .llamacpp import LlamaCppLLM
from .server import ServerLLM

__all__ = ["LLM", "GenerationCache", "LLMStats", "Message", "Messages", "default_cache", "load_llm"]


def default_cache() -> GenerationCache:
    """The generation cache at ``$INFERQA_LLM_CACHE`` (default ``.cache/llm/cache.sqlite``), read at
    call time: one open store per path."""

    return _cache_at(str(Path(os.environ.get("INFERQA_LLM_CACHE", PATHS.cache / "llm" / "cache.sqlite")).resolve()))


@lru_cache(maxsize=8)
def _cache_at(path: str) -> GenerationCache:
    return GenerationCache(Path(path))


_LOADED: dict[tuple, LLM] = {}


def load_llm(name: str, backend: str = "llamacpp", base_url: str | None = None, use_cache: bool = True,
             n_ctx: int = 4096, prefix_reuse: bool = True, shared: bool = True, **kw) -> LLM:
    """Load model ``name`` from the registry (llama.cpp) or bind it to a server.

    ``backend="server"`` (or ``INFERQA_LLM_SERVER=http://...``) sends requests to an
    OpenAI-compatible endpoint instead; ``name`` is then the server's model id. With
    ``shared=True`` one in-process instance per configuration is reused.
    """
    base_url = base_url or os.environ.get("INFERQA_LLM_SERVER")
    c = default_cache() if use_cache else None
    if backend == "server" or (backend == "auto" and base_url):

        if not base_url:
            raise ValueError("backend='server' needs base_url (or INFERQA_LLM_SERVER)")
        return ServerLLM(name, base_url, cache=c, **kw)
    key = (name, n_ctx, prefix_reuse, use_cache, tuple(sorted(kw.items())))
    if shared and key in _LOADED:
        return _LOADED[key]

    spec = models.get_spec(name)
    if spec.kind != "gguf":
        raise ValueError(f"model {name!r} is a {spec.kind} model, not an LLM (GGUF)")
    path = models.fetch(name, log=lambda s: None)
    llm = LlamaCppLLM(name, path, models.checksum(name), cache=c, n_ctx=n_ctx, prefix_reuse=prefix_reuse, **kw)
    if shared:
        _LOADED[key] = llm
    return llm
