"""The OpenAI-compatible backend against a real llama.cpp server (llama-cpp-python's server)
started on 127.0.0.1 with the tiny model, then stopped."""

import socket
import subprocess
import sys

import pytest

from inferqa_utils import models
from inferqa_utils.answering.prompts import reader_messages
from inferqa_utils.llm import GenerationCache, load_llm
from inferqa_utils.llm.server import ServerError, ServerLLM

pytestmark = pytest.mark.slow

#: |server − in-process| log-probability of a one-token reply, same model and prompt. Both run
#: llama.cpp on the same GGUF and evaluate the prompt in one batch: measured 0.0 on the three
#: prompts below (2026-11-23); the bound leaves room for other llama.cpp builds' kernels.
SCORE_TOLERANCE = 1e-3


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    pytest.importorskip("uvicorn", reason="llama-cpp-python[server] extras are not installed")
    port = _free_port()
    path = models.fetch("smollm2-135m", log=lambda s: None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--model_alias", "smollm2-135m",
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--logits_all", "true",
         "--n_threads", "2", "--verbose", "false"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        ServerLLM("smollm2-135m", url).wait_ready(timeout=90)
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.poll() is not None, "server process did not stop"


def test_server_generation_matches_in_process_and_is_cached(server, tmp_path):
    url, _ = server
    msgs = [reader_messages("What object shows your reflection?", "It is a reflective surface in bathrooms."),
            reader_messages("Which planet is it?", "It is the largest planet with a great red spot.")]
    srv = load_llm("smollm2-135m", backend="server", base_url=url, use_cache=False)
    srv.cache = GenerationCache(tmp_path / "c.sqlite")
    out = srv.chat(msgs, max_tokens=16, progress=False)
    assert all(isinstance(o, str) and o.strip() for o in out)
    assert srv.stats.model_calls == 2 and srv.stats.prompt_tokens > 0
    local = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048)
    assert local.chat(msgs, max_tokens=16, progress=False) == out  # same template, greedy
    srv.reset_stats()
    assert srv.chat(msgs, max_tokens=16, progress=False) == out and srv.stats.model_calls == 0


def test_server_scores_single_token_continuations(server):
    url, _ = server
    srv = ServerLLM("smollm2-135m", url)
    batch = [[{"role": "user", "content": f"{q} Reply Yes or No."}]
             for q in ("Is Paris the capital of France?", "Is the Moon made of cheese?", "Do fish live in water?")]
    remote = srv.score(batch, ["Yes", "No"], progress=False)
    local = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048).score(batch, ["Yes", "No"],
                                                                                    progress=False)
    diff = max(abs(a - b) for r, x in zip(remote, local, strict=True) for a, b in zip(r, x, strict=True))
    print(f"max |server - in-process| = {diff:.2e}; server {remote}; in-process {local}")
    assert diff <= SCORE_TOLERANCE
    assert [r[0] > r[1] for r in remote] == [x[0] > x[1] for x in local]


def test_unreachable_server_is_a_clear_error():
    srv = ServerLLM("x", f"http://127.0.0.1:{_free_port()}", timeout=3)
    with pytest.raises(ServerError, match="cannot reach the LLM server"):
        srv.chat([[{"role": "user", "content": "hi"}]], progress=False)
