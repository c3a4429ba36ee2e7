"""A model's chat prompt as text, rendered in this process the way the in-process backend renders it.

Multi-token scoring on a server (:meth:`~inferqa_utils.llm.server.ServerLLM.score`) sends the
prompt as plain text to ``/v1/completions``, so the chat template is applied here, not on the
server. :class:`ChatFormat` renders with the same function as
:meth:`~inferqa_utils.llm.llamacpp.LlamaCppLLM.render` (the GGUF's ``tokenizer.chat_template``,
``bos_token``/``eos_token``), and :meth:`ChatFormat.completion_prompt` makes the server evaluate
the tokens the in-process backend evaluates. In process, llama.cpp adds a BOS token when the
tokenizer's ``add_bos_token`` flag is set and the text does not already start with the BOS text;
a completions endpoint (llama-cpp-python, vLLM) adds one whenever the flag is set. So when the
flag is set and the rendered text starts with the BOS text (Llama 3, Gemma templates), that text
is left out of the request; otherwise the text is sent as rendered.

:func:`registry_vocab` reads the template, BOS/EOS and the tokenizer from a registry GGUF that is
on this machine (packaged, or a hub file already downloaded; never a download) with llama.cpp in
vocab-only mode (no weights are loaded).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .base import Messages


@dataclass(frozen=True)
class ChatFormat:
    """A chat template with the special-token texts it uses and the tokenizer's BOS flag."""

    template: str
    bos: str = ""
    eos: str = ""
    #: whether the tokenizer adds a BOS token to a text prompt (GGUF ``tokenizer.ggml.add_bos_token``)
    add_bos: bool = False

    def render(self, messages: Messages, add_generation_prompt: bool = True) -> str:
        """The prompt text as :meth:`LlamaCppLLM.render` writes it (template applied)."""
        from .llamacpp import _render_template

        return _render_template(self.template, messages, self.bos, self.eos, add_generation_prompt)

    def completion_prompt(self, messages: Messages) -> str:
        """The text to send to ``/v1/completions`` so that the server evaluates the in-process
        backend's prompt tokens (see the module docstring for the BOS rule)."""
        text = self.render(messages)
        if self.add_bos and self.bos and text.startswith(self.bos):
            text = text[len(self.bos):]  # the server adds it
        return text

    def starts_with_bos(self, messages: Messages) -> bool:
        """Whether the evaluated prompt tokens of ``messages`` begin with the BOS token."""
        return bool(self.bos) and (self.add_bos or self.render(messages).startswith(self.bos))


class GGUFVocab:
    """The tokenizer and chat format of a GGUF file (llama.cpp, vocab only: no weights)."""

    def __init__(self, path: str | Path) -> None:
        import llama_cpp

        self.path = str(path)
        self._llm = llama_cpp.Llama(model_path=self.path, vocab_only=True, verbose=False)
        self._lock = threading.Lock()
        template = self._llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise ValueError(f"{self.path}: the GGUF file has no chat template")
        bos_id, eos_id = self._llm.token_bos(), self._llm.token_eos()
        model: Any = self._llm._model
        self.format = ChatFormat(template,
                                 model.token_get_text(bos_id) if bos_id != -1 else "",
                                 model.token_get_text(eos_id) if eos_id != -1 else "",
                                 bool(model.add_bos_token()))

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` as a reply continuation (no BOS, special tokens as text), as
        :meth:`LlamaCppLLM.count_tokens` counts them."""
        with self._lock:
            return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))


def local_gguf(name: str) -> Path | None:
    """The GGUF file of registry model ``name`` if it is on this machine without a download
    (packaged models are joined from their wheels), else ``None`` (unknown name, not a GGUF, or a
    hub file not downloaded yet)."""
    from .. import models
    from ..config import PATHS

    try:
        spec = models.get_spec(name)
    except models.ModelError:
        return None
    if spec.kind != "gguf":
        return None
    if spec.source == "hub":
        if not (spec.hub_repo and spec.hub_file):
            return None
        try:
            from huggingface_hub import try_to_load_from_cache
        except ImportError:  # pragma: no cover - depends on the environment
            return None
        hit = try_to_load_from_cache(spec.hub_repo, spec.hub_file, cache_dir=str(PATHS.cache / "hub"))
        return Path(hit) if isinstance(hit, str) else None
    try:
        return models.fetch(name, log=lambda s: None)
    except models.ModelError:
        return None


_VOCABS: dict[str, GGUFVocab] = {}
_VOCABS_LOCK = threading.Lock()


def registry_vocab(name: str) -> GGUFVocab | None:
    """:class:`GGUFVocab` of registry model ``name`` (one per file), or ``None`` when its GGUF is
    not on this machine (see :func:`local_gguf`)."""
    path = local_gguf(name)
    if path is None:
        return None
    with _VOCABS_LOCK:
        if str(path) not in _VOCABS:
            _VOCABS[str(path)] = GGUFVocab(path)
        return _VOCABS[str(path)]
