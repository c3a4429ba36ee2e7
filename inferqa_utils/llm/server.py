"""OpenAI-compatible HTTP backend (vLLM, llama.cpp server, TGI, llama-cpp-python's server).

The scale-out path: point the same notebooks at a server with ``backend="server"`` and
``base_url``. Generation uses ``/v1/chat/completions`` with temperature 0; scoring reads
``top_logprobs`` of the first reply token, so it supports single-token continuations (the
Yes/No judge, pointwise reranking) — multi-token query likelihood needs the in-process backend.
Prefix reuse is the server's job (vLLM prefix caching, llama.cpp ``cache_prompt``); we send
prompts in sorted order so consecutive requests share prefixes.
"""

from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from ..errors import InferQAError
from .base import LLM, Messages
from .cache import GenerationCache


class ServerError(InferQAError, RuntimeError):
    pass


class ServerLLM(LLM):
    backend = "server"

    def __init__(self, name: str, base_url: str, model: str | None = None, cache: GenerationCache | None = None,
                 api_key: str = "none", timeout: float = 120.0, top_logprobs: int = 20, seed: int = 13) -> None:
        self.base_url = base_url.rstrip("/")
        if self.base_url.endswith("/v1"):
            self.base_url = self.base_url[:-3]
        self.model = model or name
        self.api_key = api_key
        self.timeout = timeout
        self.top_logprobs = top_logprobs
        self.seed = seed
        super().__init__(name, f"server:{self.model}", cache)

    def _post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        req = urllib.request.Request(
            self.base_url + path, data=json.dumps(payload).encode(), method="POST",
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.api_key}"},
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            raise ServerError(f"{self.base_url}{path}: HTTP {e.code}: {e.read()[:300]!r}") from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
            raise ServerError(f"cannot reach the LLM server at {self.base_url} ({e}); is it running?") from None

    def wait_ready(self, timeout: float = 60.0) -> None:
        t0 = time.time()
        while True:
            try:
                with urllib.request.urlopen(self.base_url + "/v1/models", timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            if time.time() - t0 > timeout:
                raise ServerError(f"server at {self.base_url} not ready after {timeout:.0f} s")
            time.sleep(0.3)

    def _prompt_key(self, messages: Messages) -> Any:
        return messages

    def _order(self, batch: list[Messages]) -> list[int]:
        keys = [json.dumps(m) for m in batch]
        return sorted(range(len(batch)), key=lambda i: keys[i])

    def _chat(self, messages: Messages, max_tokens: int, **extra: Any) -> dict[str, Any]:
        payload = {"model": self.model, "messages": messages, "max_tokens": max_tokens, "temperature": 0.0,
                   "top_p": 1.0, "seed": self.seed, **extra}
        out = self._post("/v1/chat/completions", payload)
        usage = out.get("usage") or {}
        self.stats.prompt_tokens += int(usage.get("prompt_tokens", 0))
        self.stats.prompt_tokens_total += int(usage.get("prompt_tokens", 0))
        self.stats.generated_tokens += int(usage.get("completion_tokens", 0))
        return out

    def _generate(self, messages: Messages, max_tokens: int, stop: Sequence[str]) -> str:
        extra = {"stop": list(stop)} if stop else {}
        out = self._chat(messages, max_tokens, **extra)
        return out["choices"][0]["message"].get("content") or ""

    def _score(self, messages: Messages, continuations: Sequence[str]) -> list[float]:
        out = self._chat(messages, 1, logprobs=True, top_logprobs=self.top_logprobs)
        content = (out["choices"][0].get("logprobs") or {}).get("content") or []
        if not content:
            raise ServerError("the server returned no logprobs (llama.cpp: start it with logits_all / --logprobs)")
        top = {d["token"]: d["logprob"] for d in content[0].get("top_logprobs", [])}
        res = []
        for c in continuations:
            cands = [v for t, v in top.items() if t.strip() and c.startswith(t.strip()) and len(t.strip()) > 0]
            if not cands:
                res.append(-math.inf)
            else:
                res.append(max(cands))
        return res
