"""A model's chat prompt as text, rendered in this process the way the in-process backend renders it.

Multi-token scoring on a server (:meth:`~inferqa_utils.llm.server.ServerLLM.score`) sends the
prompt as plain text to ``/v1/completions``, so the chat template is applied here, not on the
server. :class:`ChatFormat` renders with the same function (:func:`render_template`) as
:meth:`~inferqa_utils.llm.llamacpp.LlamaCppLLM.render` (the GGUF's ``tokenizer.chat_template``,
``bos_token``/``eos_token``), and :meth:`ChatFormat.completion_prompt` makes the server evaluate
the tokens the in-process backend evaluates. In process, llama.cpp adds a BOS token when the
tokenizer's ``add_bos_token`` flag is set and the text does not already start with the BOS text;
a completions endpoint (llama-cpp-python, vLLM) adds one whenever the flag is set. So when the
flag is set and the rendered text starts with the BOS text (Llama 3, Gemma templates), that text
is left out of the request; otherwise the text is sent as rendered.

:func:`registry_vocab` reads the template, BOS/EOS and the tokenizer from a registry GGUF that is
on this machine (packaged, or a hub file already downloaded; never a download) with llama.cpp in
vocab-only mode (no weights are loaded). For a model served from Hugging Face weights (vLLM, TGI)
whose GGUF is not here, ``INFERQA_CHAT_TEMPLATES=name=path[,name2=path2]`` names its tokenizer
files instead: a Hugging Face model folder or its ``tokenizer_config.json`` (``chat_template``,
``bos_token``, ``eos_token``, ``add_bos_token``; a ``chat_template.jinja`` and a ``tokenizer.json``
beside it are used when present), or any GGUF file of the model (:class:`HFTokenizerVocab`).
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..core.errors import DataFormatError
from .base import Messages

#: ``name=path[,name2=path2]``: tokenizer files of served models whose GGUF is not on this machine
CHAT_TEMPLATES_ENV = "INFERQA_CHAT_TEMPLATES"


def _tojson(value: Any, **_: Any) -> str:
    """The templates' ``tojson`` filter: JSON with non-ASCII characters kept (keyword arguments
    such as ``indent`` are accepted and ignored)."""
    return json.dumps(value, ensure_ascii=False)


def _raise_exception(msg: str) -> None:
    raise ValueError(msg)


@lru_cache(maxsize=8)
def _compiled_template(template: str) -> Any:
    import jinja2
    import jinja2.ext  # loopcontrols below; not imported by ``import jinja2`` itself
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(loader=jinja2.BaseLoader(), trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
    return env.from_string(template)


def render_template(
    template: str, messages: Messages, bos: str, eos: str, add_generation_prompt: bool
) -> str:
    """Apply a model's own chat template (Jinja, sandboxed; compiled once per template) the way
    :meth:`~inferqa_utils.llm.llamacpp.LlamaCppLLM.render` and :meth:`ChatFormat.render` do:
    ``bos_token``/``eos_token`` given, ``raise_exception`` raising ``ValueError``, thinking off."""
    return _compiled_template(template).render(
        messages=messages, add_generation_prompt=add_generation_prompt, bos_token=bos, eos_token=eos,
        raise_exception=_raise_exception, enable_thinking=False,
    )


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
        return render_template(self.template, messages, self.bos, self.eos, add_generation_prompt)

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


def _token_text(value: Any, field: str, path: Path) -> str:
    """A special token of ``tokenizer_config.json``: a string, an AddedToken dict or null."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"]
    raise DataFormatError(path, f"{field} is neither a string nor {{'content': ...}}: {value!r}", field=field)


class HFTokenizerVocab:
    """The chat format (and, with ``tokenizer.json``, the token count) of a Hugging Face tokenizer:
    a model folder or its ``tokenizer_config.json``. The template is ``chat_template.jinja`` when
    the folder has one, else the config's ``chat_template`` (a string, or a list of
    ``{name, template}`` of which ``default`` is used). ``add_bos`` is the config's
    ``add_bos_token`` when present, else whether ``tokenizer.json`` puts the BOS token first when
    it encodes a text with its special tokens (Llama 3 adds it in its post-processor); without
    either, False. Without ``tokenizer.json`` :meth:`count_tokens` is ``None`` (the caller counts
    words)."""

    def __init__(self, path: str | Path) -> None:
        p = Path(path)
        config = p / "tokenizer_config.json" if p.is_dir() else p
        if not config.is_file():
            raise DataFormatError(
                config,
                "no such file: INFERQA_CHAT_TEMPLATES needs a Hugging Face model folder, "
                "its tokenizer_config.json or a GGUF file",
            )
        self.path = str(config)
        try:
            cfg = json.loads(config.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise DataFormatError(config, f"not JSON ({e})") from None
        if not isinstance(cfg, dict):
            raise DataFormatError(config, "not a JSON object")
        jinja = config.parent / "chat_template.jinja"
        template = jinja.read_text(encoding="utf-8") if jinja.is_file() else cfg.get("chat_template")
        if isinstance(template, list):
            named = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
            template = named.get("default")
        if not isinstance(template, str) or not template.strip():
            raise DataFormatError(
                config, "no chat template (chat_template, or chat_template.jinja beside it)",
                field="chat_template",
            )
        bos = _token_text(cfg.get("bos_token"), "bos_token", config)
        eos = _token_text(cfg.get("eos_token"), "eos_token", config)
        self._tok: Any = None
        tok_file = config.parent / "tokenizer.json"
        if tok_file.is_file():
            from tokenizers import Tokenizer

            self._tok = Tokenizer.from_file(str(tok_file))
        if isinstance(cfg.get("add_bos_token"), bool):
            add_bos = cfg["add_bos_token"]
        elif self._tok is not None and bos and self._tok.token_to_id(bos) is not None:
            ids = self._tok.encode("a", add_special_tokens=True).ids
            add_bos = bool(ids) and ids[0] == self._tok.token_to_id(bos)
        else:
            add_bos = False
        self.format = ChatFormat(template, bos, eos, add_bos)

    def count_tokens(self, text: str) -> int | None:
        """Tokens of ``text`` without special tokens (``tokenizer.json``), or None without it."""
        if self._tok is None:
            return None
        return len(self._tok.encode(text, add_special_tokens=False).ids)


def chat_template_files() -> dict[str, str]:
    """``INFERQA_CHAT_TEMPLATES`` as ``{model name: path}`` (a clear error when malformed)."""
    raw = os.environ.get(CHAT_TEMPLATES_ENV, "").strip()
    out: dict[str, str] = {}
    for item in filter(None, (x.strip() for x in raw.split(","))):
        name, sep, path = item.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise ValueError(f"{CHAT_TEMPLATES_ENV}: {item!r} is not name=path (e.g. "
                             "llama-3.1-8b=/models/Meta-Llama-3.1-8B-Instruct)")
        out[name.strip()] = path.strip()
    return out


def local_gguf(name: str) -> Path | None:
    """The GGUF file of registry model ``name`` if it is on this machine without a download
    (packaged models are joined from their wheels), else ``None`` (unknown name, not a GGUF, or a
    hub file not downloaded yet)."""
    from ..core import models
    from ..core.config import PATHS

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


_VOCABS: dict[str, GGUFVocab | HFTokenizerVocab] = {}
_VOCABS_LOCK = threading.Lock()


def registry_vocab(name: str) -> GGUFVocab | HFTokenizerVocab | None:
    """The tokenizer files of model ``name``: those ``INFERQA_CHAT_TEMPLATES`` names for it (a GGUF
    file, or Hugging Face tokenizer files: :class:`HFTokenizerVocab`), else its registry GGUF when
    that is on this machine (see :func:`local_gguf`), else ``None``. One instance per file."""
    mapped = chat_template_files().get(name)
    path: Path | None = Path(mapped).expanduser() if mapped else local_gguf(name)
    if path is None:
        return None
    with _VOCABS_LOCK:
        if str(path) not in _VOCABS:
            _VOCABS[str(path)] = (GGUFVocab(path) if path.suffix == ".gguf" else HFTokenizerVocab(path))
        return _VOCABS[str(path)]
