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
*snapshots* (``llama_state_seq_get_data``; restore ~3 ms). A snapshot is taken only at a *family
switch* (the next prompt shares fewer than :attr:`LlamaCppLLM.SWITCH_TOKENS` tokens with the cache),
and only of the family's *stable prefix* (the tokens every prompt since the last switch shared):
the reader's system turn and few-shot examples, not the last passage read. A prompt that shares a
longer prefix with a snapshot than with the current cache restores it first. Stable prefixes of
at least :attr:`LlamaCppLLM.PERSIST_TOKENS` tokens are also written to disk
(``.cache/llm/kv/``, keyed by the model checksum, the llama.cpp build and the tokens), so the next
notebook's process restores the few-shot prefix instead of evaluating it again.

Scoring several continuations of one prompt (candidate names, Yes/No) evaluates them in **one**
decode: each continuation is its own sequence that shares the prompt's KV cells
(``llama_memory_seq_cp`` on a unified KV cache). The log-probabilities equal those of one decode
per continuation up to the floating-point rounding of llama.cpp's batch kernels.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .base import LLM, Messages, decided
from .cache import GenerationCache
from .chatformat import render_template


def _log_softmax(row: np.ndarray, tok: int) -> float:
    m = row.max()
    return float(row[tok] - m - np.log(np.exp(row - m).sum()))


_PARAMS_LOCK = threading.Lock()


def _multi_sequence_llama(n_seq_max: int, extra_bufts: bool = True, **kw: Any):
    """``llama_cpp.Llama(**kw)`` whose context holds ``n_seq_max`` sequences in one unified KV cache
    (llama-cpp-python sets neither for a generation model; its context parameters are patched for
    the duration of the constructor). A single sequence decodes exactly as in a one-sequence
    context (logits compared bit for bit on the 1.5B). ``extra_bufts=False`` loads the weights
    without llama.cpp's CPU repacking (``use_extra_bufts``, on by default in llama.cpp)."""
    import llama_cpp
    import llama_cpp.llama_cpp as lib

    with _PARAMS_LOCK:
        default = lib.llama_context_default_params
        model_default = lib.llama_model_default_params

        def params():
            p = default()
            p.n_seq_max = n_seq_max
            p.kv_unified = True
            return p

        def model_params():
            p = model_default()
            p.use_extra_bufts = extra_bufts
            return p

        lib.llama_context_default_params = params
        lib.llama_model_default_params = model_params
        try:
            return llama_cpp.Llama(**kw)
        finally:
            lib.llama_context_default_params = default
            lib.llama_model_default_params = model_default


@dataclass(frozen=True)
class LlamaCppSettings:
    """How :class:`LlamaCppLLM` loads and runs a GGUF model in process.

    * ``n_ctx`` — tokens the context (and its KV cache) holds;
    * ``n_threads`` — CPU threads (None: every core);
    * ``n_batch`` — prompt tokens evaluated per decode call;
    * ``prefix_reuse`` — keep the KV cache's common prefix between prompts (False: every prompt is
      evaluated from an empty context, the naive baseline of the benchmarks);
    * ``order_prompts`` — run a batch in token order so that neighbours share prefixes (with
      ``prefix_reuse`` only);
    * ``seed`` — llama.cpp's sampler seed (decoding is greedy);
    * ``kv_dir`` — where stable prompt prefixes are persisted (None: not persisted);
    * ``extra_bufts`` — llama.cpp's CPU repacking of the weights, and ``engine`` further
      ``llama_cpp.Llama`` settings (``flash_attn``, ``type_k``, ``type_v``, ``n_ubatch``), both for
      ``benchmarks/engine.py``: the compendium's runs use llama.cpp's defaults, under which its
      recorded greedy tokens were made.
    """

    n_ctx: int = 4096
    n_threads: int | None = None
    n_batch: int = 512
    prefix_reuse: bool = True
    order_prompts: bool = True
    seed: int = 13
    kv_dir: str | Path | None = None
    extra_bufts: bool = True
    engine: Mapping[str, Any] | None = None


class LlamaCppLLM(LLM):
    """A registry GGUF model run in process by llama.cpp (module docstring), loaded and run as
    ``settings`` say; ``identity`` (the model file's checksum) keys its cached outputs."""

    backend = "llamacpp"

    def __init__(
        self,
        name: str,
        model_path: str | Path,
        identity: str,
        cache: GenerationCache | None = None,
        settings: LlamaCppSettings | None = None,
    ) -> None:
        super().__init__(name, identity, cache)
        import llama_cpp

        s = settings if settings is not None else LlamaCppSettings()
        self._lc = llama_cpp
        self.model_path = str(model_path)
        self.prefix_reuse = s.prefix_reuse
        self.order_prompts = s.order_prompts
        self.llm = _multi_sequence_llama(
            n_seq_max=self.N_SEQ_MAX, extra_bufts=s.extra_bufts, model_path=self.model_path, n_ctx=s.n_ctx,
            n_threads=s.n_threads or max(1, os.cpu_count() or 1),
            n_batch=s.n_batch, logits_all=False, verbose=False, seed=s.seed, **(s.engine or {}),
        )
        self._mem = llama_cpp.llama_get_memory(self.llm._ctx.ctx)
        self.n_ctx = s.n_ctx
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
        #: tokens every prompt since the last family switch shared (the family's stable prefix)
        self._stable = 0
        #: where persisted prefix snapshots live (None: not persisted)
        self.kv_dir: Path | None = Path(s.kv_dir) if s.kv_dir else None
        self._disk_checked = False

    # ------------------------------------------------------------------ text <-> tokens
    def render(self, messages: Messages, add_generation_prompt: bool = True) -> str:
        """The full prompt text as the model sees it (chat template applied)."""
        return render_template(self.template, messages, self.bos, self.eos, add_generation_prompt)

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
            raise ValueError(
                f"{self.name}: prompt of {llm.n_tokens + len(tokens)} tokens exceeds n_ctx={self.n_ctx}; "
                "use fewer/shorter passages or a larger n_ctx"
            )
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
        return np.ctypeslib.as_array(
            ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(self.n_vocab,)
        ).copy()

    #: at most this many KV snapshots are kept in memory (LRU)
    MAX_SNAPSHOTS = 4
    #: a prompt sharing fewer tokens than this with the KV cache starts another prompt family
    SWITCH_TOKENS = 32
    #: a snapshot is worth restoring when it gives at least this many more tokens than the cache
    MIN_RESTORE_TOKENS = 16
    #: stable prefixes of at least this many tokens are persisted (the few-shot prefixes)
    PERSIST_TOKENS = 256
    #: at most this many persisted prefixes per model (oldest removed)
    MAX_PERSISTED = 8
    #: sequences of the context: 0 holds the prompt, the others the continuations scored in one decode
    N_SEQ_MAX = 16

    @staticmethod
    def _common(a: np.ndarray, b: Sequence[int]) -> int:
        n = min(len(a), len(b))
        if n == 0:
            return 0
        diff = np.nonzero(a[:n] != np.asarray(b[:n]))[0]
        return int(diff[0]) if len(diff) else n

    def _save_snapshot(self, upto: int, protect: tuple | None = None) -> None:
        """Save the KV state of sequence 0 cut to its first ``upto`` tokens (the family's stable
        prefix; the rest is about to be discarded anyway) unless a snapshot already covers it; the
        least recently used snapshot other than ``protect`` makes room."""
        llm = self.llm
        if upto < self.SWITCH_TOKENS:
            return
        cur = np.array(llm.input_ids[:upto])
        for i, (toks, _, _) in enumerate(self._snapshots):
            if self._common(toks, cur) >= upto - self.MIN_RESTORE_TOKENS:
                self._snapshots.append(self._snapshots.pop(i))  # still fresh enough: mark as used
                return
        self._lc.llama_memory_seq_rm(self._mem, 0, upto, -1)
        llm.n_tokens = upto
        size = self._lc.llama_state_seq_get_size(self._ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        n = self._lc.llama_state_seq_get_data(self._ctx, buf, size, 0)
        snap = (cur, buf, int(n))
        self._snapshots.append(snap)
        self.stats.kv_snapshots += 1
        if len(self._snapshots) > self.MAX_SNAPSHOTS:
            victim = next(j for j, sn in enumerate(self._snapshots) if sn is not protect)
            self._snapshots.pop(victim)
        if upto >= self.PERSIST_TOKENS:
            self._persist(snap)

    def _restore_snapshot(self, snap: tuple) -> None:
        llm = self.llm
        i = next(j for j, sn in enumerate(self._snapshots) if sn is snap)
        toks, buf, n = self._snapshots.pop(i)
        self._snapshots.append(snap)
        self._lc.llama_memory_seq_rm(self._mem, -1, -1, -1)
        if self._lc.llama_state_seq_set_data(self._ctx, buf, n, 0) != n:
            raise RuntimeError(f"{self.name}: restoring a KV snapshot of {len(toks)} tokens failed")
        llm.input_ids[: len(toks)] = toks
        llm.n_tokens = len(toks)
        self.stats.kv_restores += 1

    # ------------------------------------------------------------------ persisted prefixes
    def _kv_folder(self) -> Path | None:
        if self.kv_dir is None:
            return None
        build = hashlib.sha256(f"{self._lc.__version__}|{self._lc.llama_print_system_info()!r}|{self.n_ctx}"
                               .encode()).hexdigest()[:12]
        return self.kv_dir / f"{self.identity[:16]}-{build}"

    def _persist(self, snap: tuple) -> None:
        """Write a stable-prefix snapshot to disk (atomic; at most :attr:`MAX_PERSISTED` per model)."""
        folder = self._kv_folder()
        if folder is None:
            return
        toks, buf, n = snap
        key = hashlib.sha256(np.asarray(toks, dtype=np.int32).tobytes()).hexdigest()[:16]
        target = folder / f"{key}.kv"
        if target.exists():
            return
        with contextlib.suppress(OSError):
            folder.mkdir(parents=True, exist_ok=True)
            tmp = folder / f".{key}.{os.getpid()}.tmp"
            with open(tmp, "wb") as fh:
                np.save(fh, np.asarray(toks, dtype=np.int32))
                fh.write(memoryview(buf)[:n])
            os.replace(tmp, target)
            old = sorted(folder.glob("*.kv"), key=lambda f: f.stat().st_mtime)
            for f in old[: max(0, len(old) - self.MAX_PERSISTED)]:
                f.unlink(missing_ok=True)

    def _load_persisted(self, tokens: Sequence[int]) -> None:
        """Once per engine: load the persisted prefix that shares the most tokens with ``tokens``
        (at least :attr:`PERSIST_TOKENS`) into the in-memory snapshots."""
        self._disk_checked = True
        folder = self._kv_folder()
        if folder is None or not folder.is_dir():
            return
        best, best_file = self.PERSIST_TOKENS - 1, None
        for f in folder.glob("*.kv"):
            with contextlib.suppress(OSError, ValueError), open(f, "rb") as fh:
                toks = np.load(fh)
                c = self._common(toks, tokens)
                if c > best:
                    best, best_file = c, f
        if best_file is None:
            return
        with contextlib.suppress(OSError, ValueError), open(best_file, "rb") as fh:
            toks = np.load(fh)
            data = fh.read()
            buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
            self._snapshots.append((toks, buf, len(data)))
            os.utime(best_file)
            if len(self._snapshots) > self.MAX_SNAPSHOTS:
                self._snapshots.pop(0)

    def _prefill(self, tokens: list[int]) -> np.ndarray:
        """Make the KV cache hold ``tokens``, reusing the longest cached prefix (current cache or a
        snapshot); last logits. A family switch saves the old family's stable prefix first."""
        llm = self.llm
        keep = 0
        if self.prefix_reuse:
            if not self._disk_checked:
                self._load_persisted(tokens)
            keep = self._common(llm.input_ids[: llm.n_tokens], tokens) if llm.n_tokens else 0
            best, snap = keep, None
            for sn in self._snapshots:
                c = self._common(sn[0], tokens)
                if c > best:
                    best, snap = c, sn
            # a family switch: the prompt leaves the family's stable prefix (after the family's
            # first prompt, when none is known yet: shares almost nothing with the cache)
            floor = self._stable or self.SWITCH_TOKENS
            switch = llm.n_tokens >= self.SWITCH_TOKENS and keep < floor
            if switch:
                self._save_snapshot(self._stable or llm.n_tokens, protect=snap)
            restored = snap is not None and best - keep >= self.MIN_RESTORE_TOKENS
            if restored:
                self._restore_snapshot(snap)
                keep = best
            keep = min(keep, len(tokens) - 1)  # always evaluate ≥ 1 token to get fresh logits
            if restored:
                self._stable = keep
            elif switch:
                self._stable = 0  # a new family: its stable prefix is known from its second prompt on
            elif not self._stable and llm.n_tokens:
                self._stable = keep if keep >= self.SWITCH_TOKENS else 0
        llm.n_tokens = keep
        self.stats.prompt_tokens += len(tokens) - keep
        self.stats.prompt_tokens_total += len(tokens)
        return self._decode(tokens[keep:])[-1]

    def _is_eog(self, tok: int) -> bool:
        return bool(self._lc.llama_vocab_is_eog(self._vocab, tok))

    def _end_tokens(self) -> list[int]:
        """The vocabulary's end-of-generation tokens (listed once)."""
        if not hasattr(self, "_ends"):
            self._ends = [t for t in range(self.n_vocab) if self._is_eog(t)]
        return self._ends

    def generate_tokens(self, tokens: list[int], max_tokens: int, stop: Sequence[str] = (),
                        until: Sequence[str] = ()) -> str:
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
            if until and decided(text, until):
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

    def _generate(
        self, messages: Messages, max_tokens: int, stop: Sequence[str], until: Sequence[str] = ()
    ) -> str:
        return self.generate_tokens(self.tokenize(self.render(messages)), max_tokens, stop, until)

    def _score(self, messages: Messages, continuations: Sequence[str]) -> list[float]:
        return self.score_text(self.render(messages), continuations)

    def recompute(self, request: Mapping[str, Any]) -> Any:
        """The value of one cached call recomputed from its request (the canonical JSON of
        :func:`~inferqa_utils.llm.cache.request_blob`, parsed): ``chat`` greedy-decodes the stored
        prompt text with the stored ``max_tokens``, ``stop`` and ``until``; ``score`` gives the
        log-probabilities of the stored continuations — the model's own call, without the cache."""
        prompt, op, params = request["prompt"], request["op"], request.get("params") or {}
        if op == "chat":
            return self.generate_tokens(self.tokenize(prompt), int(params["max_tokens"]),
                                        tuple(params.get("stop") or ()), tuple(params.get("until") or ()))
        if op == "score":
            return self.score_text(prompt, list(params["continuations"]))
        raise ValueError(f"{self.name}: no operation {op!r} to recompute")

    def greedy_gap(self, request: Mapping[str, Any], reply: str) -> float:
        """How far ``reply`` is from this model's greedy path for a ``chat`` request: the reply's
        tokens forced one after the other, the largest gap, in nats, between the most likely token
        and the reply's token at any step, and, for a reply that ended on its own (no stop string,
        no ``until``, fewer than ``max_tokens`` tokens), the gap to ending there. 0 when greedy
        decoding gives the reply; a reply of another model or prompt is nats away at some step."""
        params = request.get("params") or {}
        logits = self._prefill(self.tokenize(request["prompt"]))
        toks = self.tokenize(reply, prompt=False)
        gap = 0.0
        for tok in toks:
            gap = max(gap, float(logits.max() - logits[tok]))
            logits = self._decode([tok])[-1]
        ended = len(toks) < int(params.get("max_tokens", 0))
        if ended and not params.get("stop") and not params.get("until"):
            gap = max(gap, float(logits.max() - max(logits[t] for t in self._end_tokens())))
        return gap

    def score_text(self, text: str, continuations: Sequence[str]) -> list[float]:
        """log P(continuation | prompt text) per continuation (the text already rendered)."""
        prompt = self.tokenize(text)
        last = self._prefill(prompt)
        ctoks = [self.tokenize(c, prompt=False) for c in continuations]
        out = [0.0 if not t else _log_softmax(last, t[0]) for t in ctoks]
        longer = [i for i, t in enumerate(ctoks) if len(t) > 1]
        # continuations of ≥ 2 tokens: one decode per group (one sequence each, sharing the prompt)
        group: list[int] = []
        for i in longer:
            if group and (len(group) == self.N_SEQ_MAX - 1
                          or sum(len(ctoks[j]) - 1 for j in group) + len(ctoks[i]) - 1 > self.llm.n_batch):
                self._score_group(ctoks, group, out)
                group = []
            group.append(i)
        if group:
            self._score_group(ctoks, group, out)
        return out

    def _score_group(self, ctoks: list[list[int]], group: list[int], out: list[float]) -> None:
        """Add Σ log P(token) of tokens 2… of each continuation in ``group`` to ``out``, all in one
        decode: continuation j is sequence j+1, a copy of the prompt's cells (sequence 0)."""
        llm, lc = self.llm, self._lc
        base = llm.n_tokens
        if base + sum(len(ctoks[i]) - 1 for i in group) > self.n_ctx:  # one KV cache holds them all
            raise ValueError(f"{self.name}: prompt and continuations exceed n_ctx={self.n_ctx}")
        b = llm._batch.batch
        b.n_tokens = 0
        rows: list[list[int]] = []
        for s, i in enumerate(group, 1):
            lc.llama_memory_seq_rm(self._mem, s, -1, -1)
            lc.llama_memory_seq_cp(self._mem, 0, s, 0, base)
            idx = []
            for p, t in enumerate(ctoks[i][:-1]):
                j = b.n_tokens
                b.token[j], b.pos[j], b.n_seq_id[j], b.logits[j] = t, base + p, 1, True
                b.seq_id[j][0] = s
                idx.append(j)
                b.n_tokens += 1
            rows.append(idx)
        try:
            llm._ctx.decode(llm._batch)
            for i, idx in zip(group, rows, strict=True):
                out[i] += sum(
                    _log_softmax(self._logits_ith(j), t) for j, t in zip(idx, ctoks[i][1:], strict=True)
                )
        finally:
            for s in range(1, len(group) + 1):
                lc.llama_memory_seq_rm(self._mem, s, -1, -1)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.llm.close()
