"""The backend-neutral LLM interface: cached, prefix-ordered chat generation and scoring.

Backends implement four hooks: ``_prompt_key`` (the full prompt as the backend sees it, used in
cache keys), ``_order`` (an execution order that maximises shared prompt prefixes),
``_generate`` (greedy decoding of one prompt) and ``_score`` (log-probabilities of given
continuations of one prompt).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from .cache import GenerationCache, key_of, request_blob
from .costs import log_batch

Message = dict[str, str]
Messages = list[Message]


@dataclass
class LLMStats:
    """Counters since the engine was created (or :meth:`LLM.reset_stats`)."""

    model_calls: int = 0  # prompts actually run by the model (cache misses)
    cache_hits: int = 0
    prompt_tokens: int = 0  # prompt tokens evaluated (after prefix reuse)
    prompt_tokens_total: int = 0  # prompt tokens of all prompts run (before prefix reuse)
    generated_tokens: int = 0
    seconds: float = 0.0  # time spent inside the model (wall time of concurrent server batches)
    kv_snapshots: int = 0  # KV states saved before a prompt discarded a long prefix (llama.cpp backend)
    kv_restores: int = 0  # KV states restored because they shared a longer prefix with the prompt
    requests: int = 0  # HTTP requests sent, retries included (server backend)
    retries: int = 0  # requests repeated after a 429/5xx, a timeout or a lost connection (server backend)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def decided(text: str, until: Sequence[str]) -> bool:
    """True when ``text`` (leading whitespace, quotes and asterisks stripped, lower-cased) starts
    with one of the prefixes ``until`` (see :meth:`LLM.chat`)."""
    t = text.strip().lstrip("\"'*").lower()
    return any(t.startswith(u) for u in until)


class LLM:
    """One model behind one interface. Decoding is greedy; results are cached on disk."""

    backend = "base"

    def __init__(self, name: str, identity: str, cache: GenerationCache | None = None) -> None:
        self.name = name
        #: model checksum (or server model id) used in cache keys
        self.identity = identity
        self.cache = cache
        self.stats = LLMStats()

    # ------------------------------------------------------------------ backend hooks
    def _prompt_key(self, messages: Messages) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _order(self, messages: list[Messages]) -> list[int]:
        return list(range(len(messages)))

    def _generate(self, messages: Messages, max_tokens: int, stop: Sequence[str],
                  until: Sequence[str] = ()) -> str:  # pragma: no cover
        raise NotImplementedError

    def _score(self, messages: Messages, continuations: Sequence[str]) -> list[float]:  # pragma: no cover
        raise NotImplementedError

    def _execute(self, todo: list[int], call: Callable[[int], Any], done: Callable[[int, Any], None]) -> None:
        """Run ``call(i)`` for each prompt index in ``todo``, in that order, and pass each result to
        ``done(i, result)`` (which caches it) as soon as it exists. Called from one thread; backends
        that run prompts concurrently override it and must still call ``done`` from this thread."""
        for i in todo:
            t0 = time.perf_counter()
            out = call(i)
            self.stats.seconds += time.perf_counter() - t0
            done(i, out)

    def describe(self) -> dict[str, Any]:
        """What serves this model, for run manifests: backend and identity (servers add their URL)."""
        return {"backend": self.backend, "identity": self.identity}

    # ------------------------------------------------------------------ public API
    def reset_stats(self) -> None:
        self.stats = LLMStats()

    def chat(self, batch: Sequence[Messages], max_tokens: int = 32, stop: Sequence[str] = (),
             desc: str | None = None, progress: bool = True, until: Sequence[str] = ()) -> list[str]:
        """Greedy replies to a batch of chat prompts, in input order.

        Cached replies are returned without a model call; the rest run in an order that
        maximises shared prompt prefixes (so the backend reuses its KV cache), each result
        committed to the cache as soon as it exists. ``until``: lower-case prefixes that decide a
        reply — generation ends as soon as the reply (leading quotes and asterisks stripped)
        starts with one of them, e.g. ``("yes", "no")`` for a judge (a reader of the reply that
        looks only at its start sees the same answer, one token sooner).
        """
        params: dict[str, Any] = {"max_tokens": max_tokens, "stop": list(stop), "decoding": "greedy"}
        if until:
            params["until"] = list(until)
        return self._run(
            batch, "chat", params, lambda m: self._generate(m, max_tokens, stop, tuple(until)), desc, progress
        )

    def score(self, batch: Sequence[Messages], continuations: Sequence[str] | Sequence[Sequence[str]],
              desc: str | None = None, progress: bool = True) -> list[list[float]]:
        """log P(continuation | prompt) for each prompt, the continuation starting the assistant reply.

        ``continuations`` is one list shared by all prompts (e.g. ``["Yes", "No"]``) or one list
        per prompt (e.g. the question, for query-likelihood reranking).
        """
        per_item = (continuations and not isinstance(continuations[0], str))
        conts = [list(c) for c in continuations] if per_item else [list(continuations)] * len(batch)
        if len(conts) != len(batch):
            raise ValueError(f"{len(conts)} continuation lists for {len(batch)} prompts")
        items = [(m, c) for m, c in zip(batch, conts, strict=True)]
        return self._run(
            [m for m, _ in items], "score", {}, None, desc, progress,
            extra=[c for _, c in items],
        )

    # ------------------------------------------------------------------ machinery
    def _run(self, batch, op, params, fn, desc, progress, extra=None):
        batch = list(batch)
        before, t0 = self.stats.as_dict(), time.perf_counter()
        keys, requests = [], []
        for i, m in enumerate(batch):
            p = dict(params)
            if extra is not None:
                p["continuations"] = extra[i]
            requests.append(request_blob(self.identity, self._prompt_key(m), op, p))
            keys.append(key_of(requests[-1]))
        cached = self.cache.get_many(keys) if self.cache is not None else {}
        if cached:
            self.cache.fill_requests({k: r for k, r in zip(keys, requests, strict=True) if k in cached})
        results: list[Any] = [None] * len(batch)
        todo = []
        copies: dict[int, list[int]] = {}  # first index of a prompt → later identical ones (run once)
        first: dict[str, int] = {}
        for i, k in enumerate(keys):
            if k in cached:
                results[i] = cached[k]
                self.stats.cache_hits += 1
            elif k in first:
                copies.setdefault(first[k], []).append(i)
                self.stats.cache_hits += 1
            else:
                first[k] = i
                todo.append(i)
        if todo:
            order = self._order([batch[i] for i in todo])
            todo = [todo[j] for j in order]
            bar = None
            if progress and len(todo) > 1:
                from tqdm.auto import tqdm

                bar = tqdm(total=len(todo), desc=desc or f"{self.name} {op}", unit="prompt", leave=False)

            def call(i: int) -> Any:
                return fn(batch[i]) if op == "chat" else self._score(batch[i], extra[i])

            def done(i: int, out: Any) -> None:
                self.stats.model_calls += 1
                results[i] = out
                for j in copies.get(i, ()):
                    results[j] = out
                if self.cache is not None:
                    self.cache.put(keys[i], out, self.identity, op, requests[i])
                if bar is not None:
                    bar.update(1)

            try:
                self._execute(todo, call, done)
            finally:
                if bar is not None:
                    bar.close()
                log_batch(
                    self.name, self.backend, op, desc, before, self.stats.as_dict(), len(batch),
                    time.perf_counter() - t0,
                )
        elif batch:
            log_batch(
                self.name, self.backend, op, desc, before, self.stats.as_dict(), len(batch),
                time.perf_counter() - t0,
            )
        return results

    def close(self) -> None:
        pass
