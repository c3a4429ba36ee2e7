"""INFERQA_CHAT_TEMPLATES: the chat format of a served model from Hugging Face tokenizer files (or
a GGUF file) when its registry GGUF is not on this machine — rendered exactly as from the GGUF,
with the BOS flag read from the config or found by the real ``tokenizers`` library."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inferqa_utils.answering.prompts import reader_messages
from inferqa_utils.core import models
from inferqa_utils.core.errors import DataFormatError
from inferqa_utils.llm.chatformat import (
    CHAT_TEMPLATES_ENV,
    GGUFVocab,
    HFTokenizerVocab,
    chat_template_files,
    registry_vocab,
)
from inferqa_utils.llm.http_settings import HTTPSettings
from inferqa_utils.llm.server import ServerError, ServerLLM

MESSAGES = [reader_messages("Which city is built on a lagoon?", "It has canals instead of streets."),
            [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Name a city."}]]


@pytest.fixture(scope="module")
def smol() -> GGUFVocab:
    return GGUFVocab(models.fetch("smollm2-135m", log=lambda s: None))


def _config(folder: Path, **fields) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer_config.json").write_text(json.dumps(fields), encoding="utf-8")
    return folder


def _tokenizer_json(folder: Path, bos_first: bool) -> None:
    """A real (tiny) ``tokenizers`` tokenizer; with ``bos_first`` its post-processor puts <s> first."""
    from tokenizers import Tokenizer, pre_tokenizers, processors
    from tokenizers import models as tmodels

    vocab = {"<s>": 0, "</s>": 1, "<unk>": 2, "a": 3, "city": 4, "name": 5}
    tok = Tokenizer(tmodels.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    if bos_first:
        tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 0)])
    tok.save(str(folder / "tokenizer.json"))


def test_tokenizer_config_renders_as_the_gguf(smol, tmp_path):
    f = smol.format
    folder = _config(tmp_path / "hf", chat_template=f.template, bos_token=f.bos, eos_token={"content": f.eos},
                     add_bos_token=f.add_bos)
    hf = HFTokenizerVocab(folder)
    assert hf.format == f
    for m in MESSAGES:
        assert hf.format.render(m) == f.render(m)
        assert hf.format.completion_prompt(m) == f.completion_prompt(m)
    assert hf.count_tokens("a city") is None  # no tokenizer.json: the caller counts words
    # the file itself, a list-form template and a chat_template.jinja beside it
    assert HFTokenizerVocab(folder / "tokenizer_config.json").format == f
    listed = _config(tmp_path / "listed", chat_template=[{"name": "tool_use", "template": "x"},
                                                         {"name": "default", "template": f.template}],
                     bos_token=f.bos, eos_token=f.eos, add_bos_token=f.add_bos)
    assert HFTokenizerVocab(listed).format == f
    (listed / "chat_template.jinja").write_text("{{ messages[0]['content'] }}", encoding="utf-8")
    assert HFTokenizerVocab(listed).format.render(MESSAGES[1], add_generation_prompt=False) == "Be brief."


def test_bos_flag_from_the_config_or_the_tokenizer(tmp_path):
    tpl = "{{ bos_token }}{% for m in messages %}{{ m['content'] }}{% endfor %}"
    with_pp = _config(tmp_path / "pp", chat_template=tpl, bos_token="<s>", eos_token="</s>")
    _tokenizer_json(with_pp, bos_first=True)
    without = _config(tmp_path / "plain", chat_template=tpl, bos_token="<s>", eos_token="</s>")
    _tokenizer_json(without, bos_first=False)
    a, b = HFTokenizerVocab(with_pp), HFTokenizerVocab(without)
    assert a.format.add_bos and not b.format.add_bos
    msg = [{"role": "user", "content": "name a city"}]
    assert a.format.render(msg) == "<s>name a city"
    assert a.format.completion_prompt(msg) == "name a city"  # the server adds the BOS it would add
    assert b.format.completion_prompt(msg) == "<s>name a city"
    assert a.count_tokens("name a city") == 3 == b.count_tokens("name a city")
    # an explicit add_bos_token wins over what the tokenizer does
    forced = _config(tmp_path / "forced", chat_template=tpl, bos_token="<s>", add_bos_token=False)
    _tokenizer_json(forced, bos_first=True)
    assert not HFTokenizerVocab(forced).format.add_bos


def test_bad_files_name_the_file_and_field(tmp_path):
    with pytest.raises(DataFormatError, match="no such file"):
        HFTokenizerVocab(tmp_path / "missing")
    folder = _config(tmp_path / "nochat", bos_token="<s>")
    with pytest.raises(DataFormatError, match=r"tokenizer_config\.json.*chat_template"):
        HFTokenizerVocab(folder)
    bad = _config(tmp_path / "badbos", chat_template="x", bos_token=3)
    with pytest.raises(DataFormatError, match="bos_token"):
        HFTokenizerVocab(bad)
    (tmp_path / "notjson").mkdir()
    (tmp_path / "notjson" / "tokenizer_config.json").write_text("{", encoding="utf-8")
    with pytest.raises(DataFormatError, match="not JSON"):
        HFTokenizerVocab(tmp_path / "notjson")


def test_env_maps_a_served_model_without_a_gguf(smol, tmp_path, monkeypatch):
    """llama-3.1-8b's GGUF is not here: without the variable multi-token scoring cannot render its
    prompt (one ServerError, no request); with it, the named files give the format."""
    f = smol.format
    folder = _config(tmp_path / "llama", chat_template=f.template, bos_token=f.bos, eos_token=f.eos,
                     add_bos_token=f.add_bos)
    monkeypatch.delenv(CHAT_TEMPLATES_ENV, raising=False)
    srv = ServerLLM("llama-3.1-8b", HTTPSettings("http://127.0.0.1:9"))
    with pytest.raises(ServerError, match=r"INFERQA_CHAT_TEMPLATES=llama-3\.1-8b="):
        srv.chat_format()
    monkeypatch.setenv(CHAT_TEMPLATES_ENV, f" llama-3.1-8b={folder} , other={tmp_path / 'x.gguf'}")
    assert chat_template_files() == {"llama-3.1-8b": str(folder), "other": str(tmp_path / "x.gguf")}
    assert ServerLLM("llama-3.1-8b", HTTPSettings("http://127.0.0.1:9")).chat_format() == f
    # a GGUF path is read as a GGUF (here the packaged SmolLM2 under another name)
    monkeypatch.setenv(CHAT_TEMPLATES_ENV, f"qwen-3-8b={models.fetch('smollm2-135m', log=lambda s: None)}")
    v = registry_vocab("qwen-3-8b")
    assert isinstance(v, GGUFVocab) and v.format == f
    monkeypatch.setenv(CHAT_TEMPLATES_ENV, "llama-3.1-8b")
    with pytest.raises(ValueError, match="not name=path"):
        chat_template_files()
