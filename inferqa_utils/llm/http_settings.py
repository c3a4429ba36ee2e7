"""How a client reaches one OpenAI-compatible server: :class:`HTTPSettings`, shared by the LLM
client (:class:`~inferqa_utils.llm.server.ServerLLM`) and the embedding client
(:class:`~inferqa_utils.llm.embeddings.ServerEmbedder`), both built on
:class:`~inferqa_utils.llm.server.HTTPBackend`.

    ServerLLM("qwen2.5-7b", HTTPSettings("http://gpu-box:8000", concurrency=16, timeout=600))
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from .routing import redact_credentials


@dataclass(frozen=True)
class HTTPSettings:
    """The connection settings of a client of one OpenAI-compatible server.

    * ``base_url`` — the server's root URL, ``http(s)://host:port`` (a trailing ``/v1`` is dropped);
    * ``api_key`` — the bearer token sent with every request; None: the client's environment
      variable (``INFERQA_LLM_API_KEY``; the embedding client reads ``INFERQA_EMBED_API_KEY``
      first). Never recorded, and left out of the representation;
    * ``timeout`` — seconds one request may take on the server (a reply may take
      ``timeout × concurrency`` seconds to start, see :mod:`inferqa_utils.llm.server`);
    * ``connect_timeout`` — seconds to open a connection (at most ``timeout``);
    * ``concurrency`` — requests in flight; None: the client's environment variable
      (``INFERQA_LLM_CONCURRENCY``, default 8; ``INFERQA_EMBED_CONCURRENCY``, default 4);
    * ``max_retries`` — repeats of a request after a 429/5xx reply, a timeout or a lost connection;
      None: the client's environment variable (``INFERQA_LLM_RETRIES`` /
      ``INFERQA_EMBED_RETRIES``, default 4);
    * ``backoff`` / ``max_backoff`` — the first and the longest wait before a repeat, in seconds
      (doubling from one repeat to the next).
    """

    base_url: str
    api_key: str | None = None
    timeout: float = 120.0
    connect_timeout: float = 5.0
    concurrency: int | None = None
    max_retries: int | None = None
    backoff: float = 0.5
    max_backoff: float = 8.0

    def __repr__(self) -> str:
        shown = {f.name: getattr(self, f.name) for f in fields(self)}
        shown["base_url"] = redact_credentials(self.base_url)
        shown["api_key"] = None if self.api_key is None else "***"
        return f"HTTPSettings({', '.join(f'{k}={v!r}' for k, v in shown.items())})"

    @classmethod
    def split(cls, base_url: str, keywords: Mapping[str, Any]) -> tuple[HTTPSettings, dict[str, Any]]:
        """The settings for ``base_url`` that ``keywords`` name (``timeout=``, ``concurrency=``, …),
        and the other keywords (for the client itself)."""
        names = {f.name for f in fields(cls)} - {"base_url"}
        settings = cls(base_url, **{k: v for k, v in keywords.items() if k in names})
        return settings, {k: v for k, v in keywords.items() if k not in names}
