"""OpenAI-compatible HTTP backend (vLLM, llama.cpp server, TGI, llama-cpp-python's server).

The scale-out path: ``INFERQA_LLM_SERVER`` / ``INFERQA_LLM_SERVERS`` (see :mod:`.routing`) or
``backend="server"`` send the same notebooks' prompts to a server. Generation uses
``/v1/chat/completions`` with temperature 0; scoring reads ``top_logprobs`` of the first reply
token, so it supports single-token continuations (the Yes/No judge, pointwise reranking) —
multi-token query likelihood needs the in-process backend.

The client (httpx, imported on first use) keeps up to ``concurrency`` requests in flight from a
thread pool (safe inside Jupyter's running event loop), returns results in input order and caches
each result as it arrives, so an interrupted batch resumes. 429/5xx replies, timeouts and lost
connections are retried with exponential backoff (``max_retries`` times); any other 4xx reply,
or a server that refuses the very first connection, stops the batch with one :class:`ServerError`.
``timeout`` is the time one request may take on the server; a reply may take ``timeout ×
concurrency`` seconds to start, since a server that runs one request at a time (llama-cpp-python's)
queues this client's other requests before it (a timed-out request is not cancelled on the server,
so a tight timeout only adds duplicate work).
Prompts are sent in sorted order so that the server's prefix cache sees shared prefixes together.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor, as_completed
from typing import TYPE_CHECKING, Any

from ..errors import InferQAError
from .base import LLM, Messages
from .cache import GenerationCache
from .routing import API_KEY_ENV, CONCURRENCY_ENV, RETRIES_ENV, SERVER_ENV, check_url, env_int, public_url

if TYPE_CHECKING:
    import httpx

#: HTTP statuses worth repeating: request timeout, rate limiting and server-side failures
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})

#: request fields beyond the OpenAI ones that make decoding plain greedy: llama-cpp-python's server
#: applies ``repeat_penalty=1.1`` unless told otherwise (llama.cpp, vLLM and TGI accept or ignore it)
GREEDY_EXTRA: dict[str, Any] = {"repeat_penalty": 1.0}


class ServerError(InferQAError, RuntimeError):
    """The LLM server refused a request, could not be reached, or kept failing after retries."""


class _Aborted(Exception):
    """A request not sent (or not retried) because its batch already failed."""


_local = threading.local()  # the abort flag of the batch the current worker thread serves


class ServerLLM(LLM):
    """A model served over the OpenAI chat API; see the module docstring for the client's behaviour."""

    backend = "server"

    def __init__(self, name: str, base_url: str, model: str | None = None, cache: GenerationCache | None = None,
                 api_key: str | None = None, timeout: float = 120.0, top_logprobs: int = 20, seed: int = 13,
                 concurrency: int | None = None, max_retries: int | None = None, backoff: float = 0.5,
                 max_backoff: float = 8.0, connect_timeout: float = 5.0,
                 extra_body: dict[str, Any] | None = None) -> None:
        self.base_url = check_url(base_url, "LLM server URL")
        self.model = model or name
        self._api_key = api_key  # never recorded (describe() leaves it out)
        self.timeout = timeout
        self.connect_timeout = min(connect_timeout, timeout)
        self.top_logprobs = top_logprobs
        self.seed = seed
        self.concurrency = concurrency if concurrency is not None else env_int(CONCURRENCY_ENV, 8, minimum=1)
        self.max_retries = max_retries if max_retries is not None else env_int(RETRIES_ENV, 4)
        if self.concurrency < 1 or self.max_retries < 0:
            raise ValueError(f"concurrency must be >= 1 and max_retries >= 0 (got {concurrency}, {max_retries})")
        self.backoff = backoff
        #: extra request fields (default :data:`GREEDY_EXTRA`; ``{}`` for endpoints that reject unknown fields)
        self.extra_body = dict(GREEDY_EXTRA if extra_body is None else extra_body)
        self.max_backoff = max_backoff
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()
        self._reached = False  # a request got an HTTP reply: later connection failures are retried
        super().__init__(name, f"server:{self.model}", cache)

    # ------------------------------------------------------------------ HTTP
    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                import httpx

                key = self._api_key or os.environ.get(API_KEY_ENV, "")
                headers = {"Authorization": f"Bearer {key}"} if key else {}
                self._client = httpx.Client(
                    timeout=httpx.Timeout(self.timeout * self.concurrency, connect=self.connect_timeout),
                    headers=headers,
                    limits=httpx.Limits(max_connections=self.concurrency,
                                        max_keepalive_connections=self.concurrency))
            return self._client

    def _count(self, **deltas: int) -> None:
        with self._lock:
            for k, v in deltas.items():
                setattr(self.stats, k, getattr(self.stats, k) + v)

    def _post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        """POST ``payload`` as JSON with retries (see the module docstring); the decoded reply."""
        import httpx

        client, url = self._http(), self.base_url + path
        abort: threading.Event | None = getattr(_local, "abort", None)
        why = ""
        for attempt in range(self.max_retries + 1):
            if abort is not None and abort.is_set():
                raise _Aborted
            self._count(requests=1)
            delay = min(self.max_backoff, self.backoff * 2 ** attempt)
            try:
                r = client.post(url, json=payload)
            except (httpx.ConnectError, httpx.ConnectTimeout) as e:
                if not self._reached:
                    raise ServerError(
                        f"cannot reach the LLM server at {public_url(self.base_url)} ({type(e).__name__}: {e}). "
                        f"Start the server, or unset {SERVER_ENV} / INFERQA_LLM_SERVERS to run models in "
                        "process.") from None
                why = f"{type(e).__name__}: {e}"
            except httpx.UnsupportedProtocol as e:
                raise ServerError(f"LLM server URL {public_url(self.base_url)}: {e}") from None
            except httpx.TransportError as e:  # read/write timeouts, resets, dropped connections
                why = f"{type(e).__name__}: {e}"
            else:
                self._reached = True
                if r.status_code < 400:
                    try:
                        return r.json()
                    except ValueError:
                        raise ServerError(f"{url}: HTTP {r.status_code} reply is not JSON: {r.text[:300]!r}") from None
                if r.status_code not in RETRY_STATUS and r.status_code < 500:
                    raise ServerError(f"{public_url(url)}: HTTP {r.status_code} (not retried): {r.text[:300]!r}")
                why = f"HTTP {r.status_code}: {r.text[:200]!r}"
                delay = min(self.max_backoff, max(delay, _retry_after(r.headers.get("retry-after"))))
            if attempt == self.max_retries:
                break
            self._count(retries=1)
            if abort is not None:
                if abort.wait(delay):
                    raise _Aborted
            else:
                time.sleep(delay)
        raise ServerError(f"the LLM server at {public_url(self.base_url)} failed {self.max_retries + 1} times on "
                          f"{path} (last: {why}); is it still running?")

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Block until ``GET /v1/models`` answers 200; a ServerError after ``timeout`` seconds."""
        import httpx

        t0 = time.time()
        while True:
            try:
                if httpx.get(self.base_url + "/v1/models", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.time() - t0 > timeout:
                raise ServerError(f"server at {public_url(self.base_url)} not ready after {timeout:.0f} s")
            time.sleep(0.3)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "url": public_url(self.base_url), "model": self.model,
                "concurrency": self.concurrency}

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    # ------------------------------------------------------------------ execution
    def _execute(self, todo: list[int], call: Callable[[int], Any], done: Callable[[int, Any], None]) -> None:
        """Up to ``concurrency`` requests in flight; ``done`` runs in this thread as each finishes.

        On the first failure no further request starts, the ones in flight finish (and are cached),
        then that one error is raised. An interrupt (Ctrl-C) stops sending at once."""
        if self.concurrency == 1 or len(todo) == 1:
            super()._execute(todo, call, done)
            return
        abort = threading.Event()

        def work(i: int) -> Any:
            _local.abort = abort
            try:
                if abort.is_set():
                    raise _Aborted
                return call(i)
            finally:
                _local.abort = None

        pool = ThreadPoolExecutor(max_workers=min(self.concurrency, len(todo)), thread_name_prefix="inferqa-llm")
        t0 = time.perf_counter()
        error: BaseException | None = None
        try:
            futures: dict[Future, int] = {pool.submit(work, i): i for i in todo}
            for f in as_completed(futures):
                try:
                    out = f.result()
                except (CancelledError, _Aborted):
                    continue
                except Exception as e:
                    if error is None:
                        error = e
                        abort.set()
                        for g in futures:
                            g.cancel()
                    continue
                done(futures[f], out)
        except BaseException:
            abort.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            self.stats.seconds += time.perf_counter() - t0
        pool.shutdown(wait=True)
        if error is not None:
            raise error

    # ------------------------------------------------------------------ backend hooks
    def _prompt_key(self, messages: Messages) -> Any:
        return messages

    def _order(self, batch: list[Messages]) -> list[int]:
        keys = [json.dumps(m) for m in batch]
        return sorted(range(len(batch)), key=lambda i: keys[i])

    def _chat(self, messages: Messages, max_tokens: int, **extra: Any) -> dict[str, Any]:
        payload = {"model": self.model, "messages": messages, "max_tokens": max_tokens, "temperature": 0.0,
                   "top_p": 1.0, "seed": self.seed, **self.extra_body, **extra}
        out = self._post("/v1/chat/completions", payload)
        usage = out.get("usage") or {}
        n_prompt = int(usage.get("prompt_tokens", 0))
        self._count(prompt_tokens=n_prompt, prompt_tokens_total=n_prompt,
                    generated_tokens=int(usage.get("completion_tokens", 0)))
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
            word = c.strip()
            cands = {t.strip(): v for t, v in top.items() if t.strip() and word.startswith(t.strip())}
            if any(ch.isspace() for ch in word) or (cands and word not in cands):
                raise ServerError(
                    f"{self.base_url}: scoring the continuation {c[:40]!r} needs the log-probability of "
                    "several tokens, and this client reads only the first reply token's top_logprobs "
                    "(single-token continuations such as Yes/No). Run multi-token scoring (UPR query "
                    "likelihood) in process: load_llm(name, backend='llamacpp')")
            res.append(max(cands.values()) if cands else -math.inf)
        return res


def _retry_after(value: str | None) -> float:
    """Seconds of a ``Retry-After`` header given in seconds (0 when absent or a date)."""
    try:
        return max(0.0, float(value)) if value else 0.0
    except ValueError:
        return 0.0
