"""In-process llama.cpp backend (llama-cpp-python) with explicit KV-prefix reuse.

We drive ``Llama`` token by token instead of ``create_completion`` so that we control and
count prefix reuse exactly:

* a prompt is rendered with the model's own chat template (GGUF metadata) and tokenised;
* the longest common prefix with the tokens already in the KV cache is kept, and only the
  rest is evaluated (``prefix_reuse=False`` evaluates every prompt from an empty context —
  the naive baseline the benchmarks compare against);
* decoding is greedy (argmax of the last logits), stopping at an end-of-generation token, a
  stop string or ``max_tokens``;
* scoring evaluates a continuation in one batch with logits for every position and sums
  ``log softmax`` of the continuation tokens.

Batches are executed in lexicographic token order so that consecutive prompts share the
longest prefix (e.g. a question's passages sorted by hint sequence).

One KV cache holds one prompt family at a time: labeling alternates between the reader's
few-shot prompt (~750 tokens for the 1.5B, ~10 s to evaluate) and the judge's, and each switch
used to evaluate the other family's prefix again. The engine therefore keeps a few KV
*snapshots* (``llama_state_seq_get_data``, ~20 MB and ~75 ms for 750 tokens of the 1.5B; restore
~3 ms): before a prompt discards a long evaluated prefix, that state is saved; a prompt that
shares a longer prefix with a snapshot than with the current cache restores it first. The KV
values restored are the ones computed before, so results equal those of an uninterrupted run of
the same prompts.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .base import LLM, Messages
from .cache import GenerationCache


@lru_cache(maxsize=8)
def _compiled_template(template: str):
    import jinja2
    import jinja2.ext  # loopcontrols below; not imported by ``import jinja2`` itself
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(loader=jinja2.BaseLoader(), trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = lambda x, **kw: __import__("json").dumps(x, ensure_ascii=False)
    return env.from_string(template)


def _raise_exception(msg: str) -> None:
    raise ValueError(msg)


def _render_template(template: str, messages: Messages, bos: str, eos: str, add_generation_prompt: bool) -> str:
    """Apply the model's own chat template (compiled once per template)."""
    return _compiled_template(template).render(
        messages=messages, add_generation_prompt=add_generation_prompt, bos_token=bos, eos_token=eos,
        raise_exception=_raise_exception, enable_thinking=False,
    )


class LlamaCppLLM(LLM):
    backend = "llamacpp"

    def __init__(self, name: str, model_path: str | Path, identity: str, cache: GenerationCache | None = None,
                 n_ctx: int = 4096, n_threads: int | None = None, n_batch: int = 512, prefix_reuse: bool = True,
                 order_prompts: bool = True, seed: int = 13) -> None:
        super().__init__(name, identity, cache)
        import llama_cpp

        self._lc = llama_cpp
        self.model_path = str(model_path)
        self.prefix_reuse = prefix_reuse
        self.order_prompts = order_prompts
        self.llm = llama_cpp.Llama(
            model_path=self.model_path, n_ctx=n_ctx, n_threads=n_threads or max(1, os.cpu_count() or 1),
            n_batch=n_batch, logits_all=False, verbose=False, seed=seed,
        )
        self.n_ctx = n_ctx
        self.n_vocab = self.llm.n_vocab()
        self._ctx = self.llm._ctx.ctx
        self._vocab = llama_cpp.llama_model_get_vocab(self.llm._model.model)
        meta = self.llm.metadata
        self.template = meta.get("tokenizer.chat_template")
        if not self.template:
            raise ValueError(f"{name}: the GGUF file has no chat template")
        bos_id, eos_id = self.llm.token_bos(), self.llm.token_eos()
        self.bos = self.llm._model.token_get_text(bos_id) if bos_id != -1 else ""
        self.eos = self.llm._model.token_get_text(eos_id) if eos_id != -1 else ""
        self._tok_cache: dict[str, list[int]] = {}
        #: KV snapshots, most recently used last: (tokens, state buffer, bytes)
        self._snapshots: list[tuple[np.ndarray, Any, int]] = []

    # ------------------------------------------------------------------ text <-> tokens
    def render(self, messages: Messages, add_generation_prompt: bool = True) -> str:
        """The full prompt text as the model sees it (chat template applied)."""
        return _render_template(self.template, messages, self.bos, self.eos, add_generation_prompt)

    def tokenize(self, text: str, prompt: bool = True) -> list[int]:
        if prompt:
            hit = self._tok_cache.get(text)
            if hit is not None:
                return hit
            add_bos = bool(self.bos) and not text.startswith(self.bos)
            toks = self.llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True)
            if len(self._tok_cache) > 20000:
                self._tok_cache.clear()
            self._tok_cache[text] = toks
            return toks
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    def count_tokens(self, text: str) -> int:
        return len(self.tokenize(text, prompt=False))

    # ------------------------------------------------------------------ core decoding
    def _decode(self, tokens: Sequence[int], all_logits: bool = False) -> np.ndarray:
        """Evaluate ``tokens`` after the current ``n_tokens``; return logits (last row, or every row)."""
        llm = self.llm
        if llm.n_tokens + len(tokens) > self.n_ctx:
            raise ValueError(f"{self.name}: prompt of {llm.n_tokens + len(tokens)} tokens exceeds n_ctx={self.n_ctx}; "
                             "use fewer/shorter passages or a larger n_ctx")
        llm._ctx.kv_cache_seq_rm(-1, llm.n_tokens, -1)
        rows: list[np.ndarray] = []
        for i in range(0, len(tokens), llm.n_batch):
            chunk = list(tokens[i: i + llm.n_batch])
            n_past = llm.n_tokens
            llm._batch.set_batch(batch=chunk, n_past=n_past, logits_all=all_logits)
            llm._ctx.decode(llm._batch)
            llm.input_ids[n_past: n_past + len(chunk)] = chunk
            llm.n_tokens += len(chunk)
            if all_logits:
                for j in range(len(chunk)):
                    rows.append(self._logits_ith(j))
        if not all_logits:
            rows = [self._logits_ith(-1)]
        return np.stack(rows)

    def _logits_ith(self, i: int) -> np.ndarray:
        ptr = self._lc.llama_get_logits_ith(self._ctx, i)
        return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(self.n_vocab,)).copy()

    #: at most this many KV snapshots are kept (LRU)
    MAX_SNAPSHOTS = 4
    #: a prefix is worth a snapshot (and a restore worth doing) from this many tokens on
    MIN_SNAPSHOT_TOKENS = 64

    @staticmethod
    def _common(a: np.ndarray, b: Sequence[int]) -> int:
        n = min(len(a), len(b))
        if n == 0:
            return 0
        diff = np.nonzero(a[:n] != np.asarray(b[:n]))[0]
        return int(diff[0]) if len(diff) else n

    def _save_snapshot(self, protect: tuple | None = None) -> None:
        """Save the current KV state (sequence 0) unless a snapshot already covers it; the least
        recently used snapshot other than ``protect`` makes room."""
        llm = self.llm
        cur = np.array(llm.input_ids[: llm.n_tokens])
        if len(cur) < self.MIN_SNAPSHOT_TOKENS:
            return
        for i, (toks, _, _) in enumerate(self._snapshots):
            if self._common(toks, cur) >= len(cur) - self.MIN_SNAPSHOT_TOKENS // 2:
                self._snapshots.append(self._snapshots.pop(i))  # still fresh enough: mark as used
                return
        size = self._lc.llama_state_seq_get_size(self._ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        n = self._lc.llama_state_seq_get_data(self._ctx, buf, size, 0)
        self._snapshots.append((cur, buf, int(n)))
        self.stats.kv_snapshots += 1
        if len(self._snapshots) > self.MAX_SNAPSHOTS:
            victim = next(j for j, sn in enumerate(self._snapshots) if sn is not protect)
            self._snapshots.pop(victim)

    def _restore_snapshot(self, snap: tuple) -> None:
        llm = self.llm
        i = next(j for j, sn in enumerate(self._snapshots) if sn is snap)
        toks, buf, n = self._snapshots.pop(i)
        self._snapshots.append(snap)
        llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        if self._lc.llama_state_seq_set_data(self._ctx, buf, n, 0) != n:
            raise RuntimeError(f"{self.name}: restoring a KV snapshot of {len(toks)} tokens failed")
        llm.input_ids[: len(toks)] = toks
        llm.n_tokens = len(toks)
        self.stats.kv_restores += 1

    def _prefill(self, tokens: list[int]) -> np.ndarray:
        """Make the KV cache hold ``tokens``, reusing the longest cached prefix (current cache or a
        snapshot); last logits."""
        llm = self.llm
        keep = 0
        if self.prefix_reuse:
            keep = self._common(llm.input_ids[: llm.n_tokens], tokens) if llm.n_tokens else 0
            best, snap = keep, None
            for sn in self._snapshots:
                c = self._common(sn[0], tokens)
                if c > best:
                    best, snap = c, sn
            discards = llm.n_tokens - keep >= self.MIN_SNAPSHOT_TOKENS
            if snap is not None and best - keep >= self.MIN_SNAPSHOT_TOKENS:
                if discards:
                    self._save_snapshot(protect=snap)
                self._restore_snapshot(snap)
                keep = best
            elif discards:
                self._save_snapshot()
            keep = min(keep, len(tokens) - 1)  # always evaluate ≥ 1 token to get fresh logits
        llm.n_tokens = keep
        self.stats.prompt_tokens += len(tokens) - keep
        self.stats.prompt_tokens_total += len(tokens)
        return self._decode(tokens[keep:])[-1]

    def _is_eog(self, tok: int) -> bool:
        return bool(self._lc.llama_vocab_is_eog(self._vocab, tok))

    def generate_tokens(self, tokens: list[int], max_tokens: int, stop: Sequence[str] = ()) -> str:
        logits = self._prefill(tokens)
        out: list[int] = []
        text = ""
        for _ in range(max_tokens):
            tok = int(np.argmax(logits))
            if self._is_eog(tok):
                break
            out.append(tok)
            self.stats.generated_tokens += 1
            text = self.llm.detokenize(out).decode("utf-8", errors="ignore")
            if stop and any(s in text for s in stop):
                break
            logits = self._decode([tok])[-1]
        for s in stop:
            if s in text:
                text = text[: text.index(s)]
        return text

    # ------------------------------------------------------------------ hooks
    def _prompt_key(self, messages: Messages) -> Any:
        return self.render(messages)

    def _order(self, batch: list[Messages]) -> list[int]:
        if not (self.order_prompts and self.prefix_reuse):
            return list(range(len(batch)))
        toks = [self.tokenize(self.render(m)) for m in batch]
        return sorted(range(len(batch)), key=lambda i: toks[i])

    def _generate(self, messages: Messages, max_tokens: int, stop: Sequence[str]) -> str:
        return self.generate_tokens(self.tokenize(self.render(messages)), max_tokens, stop)

    def _score(self, messages: Messages, continuations: Sequence[str]) -> list[float]:
        prompt = self.tokenize(self.render(messages))
        last = self._prefill(prompt)
        base = self.llm.n_tokens
        out = []
        for c in continuations:
            ctoks = self.tokenize(c, prompt=False)
            if not ctoks:
                out.append(0.0)
                continue
            self.llm.n_tokens = base
            rows = [last]
            if len(ctoks) > 1:
                rows.extend(self._decode(ctoks[:-1], all_logits=True))
            lp = 0.0
            for row, t in zip(rows, ctoks, strict=True):
                m = row.max()
                lp += float(row[t] - m - np.log(np.exp(row - m).sum()))
            out.append(lp)
        self.llm.n_tokens = base
        return out

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.llm.close()
