"""OpenAI-compatible HTTP backend (vLLM, llama.cpp server, TGI, llama-cpp-python's server).

The scale-out path: ``INFERQA_LLM_SERVER`` / ``INFERQA_LLM_SERVERS`` (see :mod:`.routing`) or
``backend="server"`` send the same notebooks' prompts to a server. Generation uses
``/v1/chat/completions`` with temperature 0 (the server applies the chat template).

Scoring (``log P(continuation | prompt)``, the continuation starting the assistant reply):

* a continuation that is one token among the first reply token's ``top_logprobs`` of a
  ``/v1/chat/completions`` request (the Yes/No judge, pointwise reranking) is read from there —
  one request per prompt, any OpenAI-compatible server;
* every other continuation (UPR's question, the "names" convergence judge's candidate names) is
  scored like the in-process backend does: the prompt is rendered here with the model's chat
  template (:mod:`.chatformat`: the registry GGUF's template, the tokenizer files that
  ``INFERQA_CHAT_TEMPLATES`` names, or ``chat_format=``), prompt +
  continuation go to ``/v1/completions`` with ``echo: true, logprobs: 1, max_tokens: 1`` (the
  OpenAI "echo" convention that llama-cpp-python's server and vLLM implement: vLLM turns it into
  ``prompt_logprobs``), and the log-probabilities of the tokens that start inside the continuation
  are summed. The continuation is located from the end of the echoed text with the returned
  ``text_offset``s (servers drop special tokens from those offsets, so the prompt's length cannot
  be used); a token that straddles the prompt/continuation boundary is an error. One request per
  continuation.
* A server that cannot return prompt log-probabilities stops the batch with one
  :class:`ServerError` naming its URL and the missing feature: llama-cpp-python's server started
  with ``--logits_all false``, llama.cpp's ``llama-server`` (no ``echo``), TGI. llama-cpp-python
  (0.3.x) also misaligns echoed log-probabilities by one token when the prompt does not start with
  the BOS token (e.g. Qwen2.5's template); that combination is refused rather than scored wrong.

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
:class:`HTTPBackend` (connection, retries, concurrency) is shared with the embedding client
(:class:`inferqa_utils.llm.embeddings.ServerEmbedder`); both take their connection settings as one
:class:`~inferqa_utils.llm.http_settings.HTTPSettings`.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor, as_completed
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..core.errors import InferQAError
from .base import LLM, Messages
from .cache import GenerationCache
from .chatformat import ChatFormat, GGUFVocab, HFTokenizerVocab, registry_vocab
from .http_settings import HTTPSettings
from .routing import (
    API_KEY_ENV,
    CONCURRENCY_ENV,
    RETRIES_ENV,
    SERVER_ENV,
    check_url,
    env_int,
    is_loopback,
    public_url,
    redact_credentials,
)

if TYPE_CHECKING:
    import httpx

#: HTTP statuses worth repeating: request timeout, rate limiting and server-side failures
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})

#: request fields beyond the OpenAI ones that make decoding plain greedy: llama-cpp-python's server
#: applies ``repeat_penalty=1.1`` unless told otherwise (llama.cpp, vLLM and TGI accept or ignore it)
GREEDY_EXTRA: dict[str, Any] = {"repeat_penalty": 1.0}


_log = logging.getLogger(__name__)
_warned_plain_http: set[str] = set()  # servers already warned about (public URLs)


class ServerError(InferQAError, RuntimeError):
    """The LLM server refused a request, could not be reached, or kept failing after retries.
    Its message never shows credentials written into a URL (:func:`.routing.redact_credentials`)."""

    def __init__(self, message: object = "") -> None:
        super().__init__(redact_credentials(str(message)))


def warn_plain_http_token(url: str) -> bool:
    """Log a warning (once per server and process) when a bearer token is about to go over plain
    ``http://`` to a host that is not this machine, where anyone on the way can read it; True
    when a warning was logged."""
    where = public_url(url)
    if urlsplit(url).scheme != "http" or is_loopback(url) or where in _warned_plain_http:
        return False
    _warned_plain_http.add(where)
    _log.warning(
        "an API key is sent as a bearer token over plain http:// to %s, which is not this machine: "
        "anyone on the network path can read it. Serve the API over https:// (or reach it through an "
        "SSH tunnel to 127.0.0.1)",
        where,
    )
    return True


class _Aborted(Exception):
    """A request not sent (or not retried) because its batch already failed."""


_local = threading.local()  # the abort flag of the batch the current worker thread serves


class HTTPBackend:
    """Connection, retries and concurrency of a client of one OpenAI-compatible server (see the
    module docstring). Subclasses call :meth:`_setup_http` and own a ``stats`` object with
    ``requests``, ``retries`` and ``seconds`` counters."""

    #: how errors name the server, and what to unset to stop using it
    server_kind = "LLM server"
    unset_hint = f"unset {SERVER_ENV} / INFERQA_LLM_SERVERS to run models in process"
    #: environment variables holding the API key when the settings give none (the first one set wins)
    api_key_envs: tuple[str, ...] = (API_KEY_ENV,)
    #: (environment variable, default) of the requests in flight when the settings leave them None
    concurrency_env: tuple[str, int] = (CONCURRENCY_ENV, 8)
    #: (environment variable, default) of the retries when the settings leave them None
    retries_env: tuple[str, int] = (RETRIES_ENV, 4)
    stats: Any

    def _setup_http(self, http: HTTPSettings) -> None:
        """Take ``http``'s settings (concurrency and retries left None: from the environment)."""
        self.base_url = check_url(http.base_url, f"{self.server_kind} URL")
        self._api_key = http.api_key  # never recorded (describe() leaves it out)
        self.timeout = http.timeout
        self.connect_timeout = min(http.connect_timeout, http.timeout)
        self.concurrency = (http.concurrency if http.concurrency is not None
                            else env_int(*self.concurrency_env, minimum=1))
        self.max_retries = http.max_retries if http.max_retries is not None else env_int(*self.retries_env)
        if self.concurrency < 1 or self.max_retries < 0:
            raise ValueError(
                f"concurrency must be >= 1 and max_retries >= 0 (got {self.concurrency}, {self.max_retries})"
            )
        self.backoff = http.backoff
        self.max_backoff = http.max_backoff
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()
        self._reached = False  # a request got an HTTP reply: later connection failures are retried

    # ------------------------------------------------------------------ HTTP
    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                import httpx

                key = self._api_key or next(
                    (os.environ[v] for v in self.api_key_envs if os.environ.get(v)), ""
                )
                if key:
                    warn_plain_http_token(self.base_url)
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

    def _post(self, path: str, payload: dict[str, Any],
              fatal: Callable[[int, str], str | None] | None = None) -> dict[str, Any]:
        """POST ``payload`` as JSON with retries (see the module docstring); the decoded reply.

        ``fatal(status, body)`` may turn an error reply into a final :class:`ServerError` message
        (a missing server feature: not worth retrying)."""
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
                        f"cannot reach the {self.server_kind} at {public_url(self.base_url)} "
                        f"({type(e).__name__}: {e}). Start the server, or {self.unset_hint}.") from None
                why = f"{type(e).__name__}: {e}"
            except httpx.UnsupportedProtocol as e:
                raise ServerError(f"{self.server_kind} URL {public_url(self.base_url)}: {e}") from None
            except httpx.TransportError as e:  # read/write timeouts, resets, dropped connections
                why = f"{type(e).__name__}: {e}"
            else:
                self._reached = True
                if r.status_code < 400:
                    try:
                        return r.json()
                    except ValueError:
                        raise ServerError(f"{public_url(url)}: HTTP {r.status_code} reply is not JSON: "
                                          f"{r.text[:300]!r}") from None
                message = fatal(r.status_code, r.text) if fatal is not None else None
                if message:
                    raise ServerError(message)
                if r.status_code not in RETRY_STATUS and r.status_code < 500:
                    raise ServerError(
                        f"{public_url(url)}: HTTP {r.status_code} (not retried): {r.text[:300]!r}"
                    )
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
        raise ServerError(
            f"the {self.server_kind} at {public_url(self.base_url)} failed {self.max_retries + 1} "
            f"times on {path} (last: {why}); is it still running?"
        )

    def _get_json(self, path: str) -> dict[str, Any] | None:
        """``GET path`` once (no retries); the decoded reply, ``None`` on any failure."""
        import httpx

        try:
            r = self._http().get(self.base_url + path, timeout=min(10.0, self.timeout))
            return r.json() if r.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None

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

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    # ------------------------------------------------------------------ execution
    def _run_concurrently(
        self, todo: list[int], call: Callable[[int], Any], done: Callable[[int, Any], None]
    ) -> None:
        """Up to ``concurrency`` calls in flight; ``done`` runs in this thread as each finishes.

        On the first failure no further request starts, the ones in flight finish (and are cached),
        then that one error is raised. An interrupt (Ctrl-C) stops sending at once."""
        abort = threading.Event()

        def work(i: int) -> Any:
            _local.abort = abort
            try:
                if abort.is_set():
                    raise _Aborted
                return call(i)
            finally:
                _local.abort = None

        pool = ThreadPoolExecutor(
            max_workers=min(self.concurrency, len(todo)), thread_name_prefix="inferqa-http"
        )
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


class ServerLLM(HTTPBackend, LLM):
    """A model served over the OpenAI API; see the module docstring for scoring and the client.

    ``http``: where the server is and how it is talked to (:class:`HTTPSettings`); ``model``: the
    id the server knows the model by (default ``name``); ``top_logprobs``: the first reply token's
    alternatives asked for when scoring one-token continuations; ``seed``: sent with every request;
    ``extra_body``: further request fields (default :data:`GREEDY_EXTRA`); ``chat_format`` renders
    prompts for multi-token scoring (default: the registry GGUF's template when that file is on this
    machine, loaded on first use)."""

    backend = "server"

    def __init__(
        self,
        name: str,
        http: HTTPSettings,
        model: str | None = None,
        cache: GenerationCache | None = None,
        top_logprobs: int = 20,
        seed: int = 13,
        extra_body: dict[str, Any] | None = None,
        chat_format: ChatFormat | None = None,
    ) -> None:
        self._setup_http(http)
        self.model = model or name
        self.top_logprobs = top_logprobs
        self.seed = seed
        #: extra request fields (default :data:`GREEDY_EXTRA`; ``{}`` for endpoints that reject unknown
        # fields)
        self.extra_body = dict(GREEDY_EXTRA if extra_body is None else extra_body)
        self._chat_format = chat_format
        self._vocab: GGUFVocab | HFTokenizerVocab | None = None
        self._vocab_loaded = False  # the registry GGUF's vocabulary is looked up on first use
        self._is_llama_cpp_python: bool | None = (
            None  # llama-cpp-python's misaligned echo (see the module docstring)
        )
        super().__init__(name, f"server:{self.model}", cache)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "url": public_url(self.base_url), "model": self.model,
                "concurrency": self.concurrency}

    def _execute(self, todo: list[int], call: Callable[[int], Any], done: Callable[[int, Any], None]) -> None:
        if self.concurrency == 1 or len(todo) == 1:
            LLM._execute(self, todo, call, done)
        else:
            self._run_concurrently(todo, call, done)

    # ------------------------------------------------------------------ local tokenizer and template
    def _local_vocab(self) -> GGUFVocab | HFTokenizerVocab | None:
        with self._lock:
            if not self._vocab_loaded:
                self._vocab = registry_vocab(self.name)
                self._vocab_loaded = True
            return self._vocab

    def chat_format(self) -> ChatFormat:
        """How prompts are rendered for ``/v1/completions`` (a ServerError if no template is known)."""
        if self._chat_format is None:
            vocab = self._local_vocab()
            if vocab is None:
                raise ServerError(
                    f"{public_url(self.base_url)}: scoring a multi-token continuation renders the chat "
                    "prompt in "
                    f"this process, and model {self.name!r} is neither a registry GGUF on this machine nor "
                    "named in "
                    "INFERQA_CHAT_TEMPLATES, so its chat "
                    "template is unknown. Set INFERQA_CHAT_TEMPLATES="
                    + self.name
                    + "=<its Hugging Face model "
                    "folder, tokenizer_config.json or a GGUF file>, fetch its GGUF (python -m inferqa_utils "
                    "models fetch NAME), pass chat_format=ChatFormat(template, bos, eos, add_bos) to "
                    "load_llm/ServerLLM, or score in process: load_llm(name, backend='llamacpp')"
                )
            self._chat_format = vocab.format
        return self._chat_format

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` as a reply continuation, counted by the registry GGUF's tokenizer (as
        in process) when that file is on this machine, else its number of whitespace words."""
        vocab = self._local_vocab()
        n = vocab.count_tokens(text) if vocab is not None else None
        return n if n is not None else len(text.split())

    # ------------------------------------------------------------------ backend hooks
    def _prompt_key(self, messages: Messages) -> Any:
        return messages

    def _order(self, batch: list[Messages]) -> list[int]:
        keys = [json.dumps(m) for m in batch]
        return sorted(range(len(batch)), key=lambda i: keys[i])

    def _chat(
        self,
        messages: Messages,
        max_tokens: int,
        fatal: Callable[[int, str], str | None] | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        payload = {"model": self.model, "messages": messages, "max_tokens": max_tokens, "temperature": 0.0,
                   "top_p": 1.0, "seed": self.seed, **self.extra_body, **extra}
        out = self._post("/v1/chat/completions", payload, fatal)
        usage = out.get("usage") or {}
        n_prompt = int(usage.get("prompt_tokens", 0))
        self._count(prompt_tokens=n_prompt, prompt_tokens_total=n_prompt,
                    generated_tokens=int(usage.get("completion_tokens", 0)))
        return out

    def _generate(
        self, messages: Messages, max_tokens: int, stop: Sequence[str], until: Sequence[str] = ()
    ) -> str:
        # ``until`` is not sent: the server generates up to max_tokens, which decides the same
        extra = {"stop": list(stop)} if stop else {}
        out = self._chat(messages, max_tokens, **extra)
        return out["choices"][0]["message"].get("content") or ""

    def _missing_logprobs(self, status: int, body: str) -> str | None:
        """The final error for a reply that shows the server cannot return log-probabilities."""
        low = body.lower()
        if "logits_all" in low:
            return (
                f"the LLM server at {public_url(self.base_url)} cannot return log-probabilities: "
                "llama_cpp.server "
                f"needs --logits_all true for logprobs and echo+logprobs (HTTP {status}: {body[:200]!r})"
            )
        if status < 500 and status not in RETRY_STATUS and "echo" in low:
            return (
                f"the LLM server at {public_url(self.base_url)} does not support echo + logprobs on "
                f"/v1/completions (HTTP {status}: {body[:200]!r}); multi-token scoring needs prompt "
                "log-probabilities (vLLM, or llama_cpp.server with --logits_all true; llama.cpp's "
                "llama-server and TGI do not return them). Score in process: load_llm(name, "
                "backend='llamacpp')"
            )
        return None

    def _score(self, messages: Messages, continuations: Sequence[str]) -> list[float]:
        res: dict[int, float] = {}
        if any(c.strip() and not any(ch.isspace() for ch in c.strip()) for c in continuations):
            out = self._chat(
                messages, 1, fatal=self._missing_logprobs, logprobs=True, top_logprobs=self.top_logprobs
            )
            content = (out["choices"][0].get("logprobs") or {}).get("content") or []
            if not content:
                raise ServerError(f"the LLM server at {public_url(self.base_url)} returned no logprobs "
                                  "(llama_cpp.server: start it with --logits_all true)")
            top = {d["token"]: d["logprob"] for d in content[0].get("top_logprobs", [])}
            for j, c in enumerate(continuations):
                word = c.strip()
                cands = {t.strip(): v for t, v in top.items() if t.strip() and word.startswith(t.strip())}
                if word and word in cands:  # one token, among the top_logprobs
                    res[j] = max(cands.values())
        for j, c in enumerate(continuations):
            if j not in res:
                res[j] = self._score_echo(messages, c)
        return [res[j] for j in range(len(continuations))]

    def _score_echo(self, messages: Messages, continuation: str) -> float:
        """log P(continuation | prompt) from ``/v1/completions`` with echo + logprobs (module docstring)."""
        if not continuation:
            return 0.0  # no token: as in process
        fmt = self.chat_format()
        if not fmt.starts_with_bos(messages) and self._llama_cpp_python():
            raise ServerError(
                f"{public_url(self.base_url)} is llama-cpp-python's server, whose echoed log-probabilities "
                "are "
                f"shifted by one token when the prompt does not start with the BOS token, as {self.name!r}'s "
                "prompts do not: refusing to score with them. Serve the model with vLLM, or score in "
                "process: "
                "load_llm(name, backend='llamacpp')"
            )
        prompt = fmt.completion_prompt(messages)
        text = prompt + continuation
        payload = {"model": self.model, "prompt": text, "max_tokens": 1, "temperature": 0.0, "echo": True,
                   "logprobs": 1, "seed": self.seed, **self.extra_body}
        out = self._post("/v1/completions", payload, fatal=self._missing_logprobs)
        usage = out.get("usage") or {}
        n_prompt = int(usage.get("prompt_tokens", 0))
        self._count(prompt_tokens=n_prompt, prompt_tokens_total=n_prompt)
        choice = (out.get("choices") or [{}])[0]
        lp = choice.get("logprobs") or {}
        tokens, offsets, values = lp.get("tokens"), lp.get("text_offset"), lp.get("token_logprobs")
        n_gen = int(usage.get("completion_tokens", 1 if len(choice.get("text") or "") > len(text) else 0))
        if not (tokens and offsets and values) or not len(tokens) == len(offsets) == len(values) \
                or len(tokens) <= n_gen:
            raise ServerError(
                f"the LLM server at {public_url(self.base_url)} returned no log-probabilities for the prompt "
                "tokens of a /v1/completions request with echo + logprobs: multi-token scoring needs prompt "
                "log-probabilities (vLLM, or llama_cpp.server with --logits_all true; llama.cpp's "
                "llama-server "
                "and TGI do not return them). Score in process: load_llm(name, backend='llamacpp')"
            )
        echoed = len(tokens) - n_gen
        end = offsets[echoed] if n_gen else offsets[-1] + len(tokens[-1])
        start = end - len(continuation)
        idx = [i for i in range(echoed) if offsets[i] >= start]
        if not idx or offsets[idx[0]] != start or any(values[i] is None for i in idx):
            near = [(tokens[i], offsets[i]) for i in range(max(0, echoed - 12), echoed)]
            raise ServerError(
                f"{public_url(self.base_url)}: cannot find where the continuation {continuation[:40]!r} "
                "starts among "
                f"the echoed tokens (it should start at text offset {start}; last tokens and offsets: "
                f"{near}): "
                "the server tokenised a token across the prompt/continuation boundary"
            )
        return float(sum(values[i] for i in idx))

    def _llama_cpp_python(self) -> bool:
        """Whether the server is llama-cpp-python's (its ``/v1/models`` says ``owned_by: "me"``)."""
        if self._is_llama_cpp_python is None:
            models = (self._get_json("/v1/models") or {}).get("data") or [{}]
            self._is_llama_cpp_python = any(m.get("owned_by") == "me" for m in models if isinstance(m, dict))
        return self._is_llama_cpp_python


def _retry_after(value: str | None) -> float:
    """Seconds of a ``Retry-After`` header given in seconds (0 when absent or a date)."""
    try:
        return max(0.0, float(value)) if value else 0.0
    except ValueError:
        return 0.0
