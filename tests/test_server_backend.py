"""The OpenAI-compatible backend against a real llama.cpp server (llama-cpp-python's server)
started on 127.0.0.1 with the tiny model, then stopped: generation and scoring against the
in-process backend, the concurrent client (order, retries, errors, resume after a crash) and the
environment routing of ``load_llm`` with what the manifests record."""

import json
import socket
import subprocess
import sys
import threading
import time

import pytest

from inferqa_utils import models
from inferqa_utils.answering.prompts import reader_messages
from inferqa_utils.llm import GenerationCache, backend_record, load_llm
from inferqa_utils.llm.server import ServerError, ServerLLM

pytestmark = pytest.mark.slow

#: |server − in-process| log-probability of a one-token reply, same model and prompt. Both run
#: llama.cpp on the same GGUF and evaluate the prompt in one batch: measured 0.0 on the three
#: prompts below (2026-11-23); the bound leaves room for other llama.cpp builds' kernels.
SCORE_TOLERANCE = 1e-3

#: short prompts, deliberately not in sorted order (the client sends them sorted)
THINGS = ["river", "bird", "colour", "metal", "planet", "tree", "fruit", "country", "ocean", "insect", "city",
          "flower", "tool", "sport", "instrument", "animal", "mountain", "language", "drink", "vegetable",
          "fish", "stone", "dance", "game", "bread", "cheese", "boat", "star", "wind", "song"]


def _prompts(n: int) -> list[list[dict[str, str]]]:
    return [[{"role": "user", "content": f"Name one {t} and say one thing about it."}] for t in THINGS[:n]]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_server(port: int) -> subprocess.Popen:
    path = models.fetch("smollm2-135m", log=lambda s: None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--model_alias", "smollm2-135m",
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--logits_all", "true",
         "--n_threads", "2", "--verbose", "false"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ServerLLM("smollm2-135m", f"http://127.0.0.1:{port}").wait_ready(timeout=90)
    except ServerError:
        _stop(proc)
        raise
    return proc


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def server():
    pytest.importorskip("uvicorn", reason="llama-cpp-python[server] extras are not installed")
    port = _free_port()
    proc = _start_server(port)
    try:
        yield f"http://127.0.0.1:{port}", proc
    finally:
        _stop(proc)
    assert proc.poll() is not None, "server process did not stop"


@pytest.fixture(scope="module")
def local():
    """The in-process llama.cpp backend on the same GGUF."""
    return load_llm("smollm2-135m", backend="llamacpp", use_cache=False, shared=False, n_ctx=2048)


def test_server_generation_matches_in_process_and_is_cached(server, local, tmp_path):
    url, _ = server
    msgs = [reader_messages("What object shows your reflection?", "It is a reflective surface in bathrooms."),
            reader_messages("Which planet is it?", "It is the largest planet with a great red spot.")]
    srv = load_llm("smollm2-135m", backend="server", base_url=url, use_cache=False)
    srv.cache = GenerationCache(tmp_path / "c.sqlite")
    out = srv.chat(msgs, max_tokens=16, progress=False)
    assert all(isinstance(o, str) and o.strip() for o in out)
    assert srv.stats.model_calls == 2 and srv.stats.prompt_tokens > 0
    assert local.chat(msgs, max_tokens=16, progress=False) == out  # same template, greedy
    srv.reset_stats()
    assert srv.chat(msgs, max_tokens=16, progress=False) == out and srv.stats.model_calls == 0


def test_concurrent_generation_keeps_input_order_and_answers(server, local):
    """Concurrency 4 and 8 give the answers of concurrency 1 and of the in-process backend, in input order."""
    url, _ = server
    batch = _prompts(12)
    runs = {}
    for c in (1, 4, 8):
        srv = ServerLLM("smollm2-135m", url, concurrency=c, timeout=600)  # a starved 2-core machine is slow
        t0 = time.perf_counter()
        runs[c] = srv.chat(batch, max_tokens=12, progress=False)
        print(f"concurrency {c}: {time.perf_counter() - t0:.1f} s, {srv.stats.requests} requests, "
              f"{srv.stats.retries} retries")
        assert srv.stats.model_calls == srv.stats.requests == len(batch) and srv.stats.retries == 0
    expected = local.chat(batch, max_tokens=12, progress=False)
    assert len(set(expected)) > len(batch) // 2  # distinct answers: a reordering would show
    assert runs[1] == runs[4] == runs[8] == expected


def test_server_scores_single_token_continuations(server, local):
    url, _ = server
    srv = ServerLLM("smollm2-135m", url)
    batch = [[{"role": "user", "content": f"{q} Reply Yes or No."}]
             for q in ("Is Paris the capital of France?", "Is the Moon made of cheese?", "Do fish live in water?")]
    remote = srv.score(batch, ["Yes", "No"], progress=False)
    here = local.score(batch, ["Yes", "No"], progress=False)
    diff = max(abs(a - b) for r, x in zip(remote, here, strict=True) for a, b in zip(r, x, strict=True))
    print(f"max |server - in-process| = {diff:.2e}; server {remote}; in-process {here}")
    assert diff <= SCORE_TOLERANCE
    assert [r[0] > r[1] for r in remote] == [x[0] > x[1] for x in here]
    # a multi-token continuation (UPR's query likelihood) cannot be scored from the first reply
    # token: one clear error instead of the first token's log-probability
    with pytest.raises(ServerError, match=r"several tokens.*backend='llamacpp'"):
        srv.score(batch[:1], ["Paris is the capital"], progress=False)


# ---------------------------------------------------------------------------- routing and manifests

def test_env_server_routes_every_load_llm(server, monkeypatch):
    url, _ = server
    monkeypatch.setenv("INFERQA_LLM_SERVER", url + "/v1")
    llm = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048)  # n_ctx: in-process only, ignored
    assert isinstance(llm, ServerLLM) and llm.base_url == url and llm.model == "smollm2-135m"
    assert llm.chat(_prompts(1), max_tokens=4, progress=False)[0].strip()
    assert load_llm("smollm2-135m", backend="llamacpp", use_cache=False, shared=False).backend == "llamacpp"
    assert load_llm("smollm2-135m", use_cache=False) is load_llm("smollm2-135m", use_cache=False)  # shared
    monkeypatch.setenv("INFERQA_LLM_CONCURRENCY", "3")
    assert load_llm("smollm2-135m", use_cache=False, shared=False).concurrency == 3


def test_env_servers_map_models_and_manifests_record_the_url(server, monkeypatch):
    url, _ = server
    dead = f"http://127.0.0.1:{_free_port()}"
    monkeypatch.setenv("INFERQA_LLM_SERVER", dead)
    monkeypatch.setenv("INFERQA_LLM_SERVERS", f"smollm2-135m={url}#smollm2-135m , other-model=http://u:pw@gpu:9000#big")
    monkeypatch.setenv("INFERQA_LLM_API_KEY", "sekret-key")
    tiny = load_llm("smollm2-135m", use_cache=False, shared=False)
    assert isinstance(tiny, ServerLLM) and tiny.base_url == url
    assert tiny.chat(_prompts(1), max_tokens=4, progress=False)[0].strip()  # the mapped server, not the dead one
    other = load_llm("other-model", use_cache=False, shared=False)
    assert (other.model, other.identity) == ("big", "server:big")
    assert load_llm("qwen2.5-coder-0.5b", backend="server", use_cache=False, shared=False).base_url == dead

    from inferqa_utils.construction.build import _Models
    from inferqa_utils.runner import llm_backends

    engines = _Models(lambda n: load_llm(n, use_cache=False, shared=False))
    engines("smollm2-135m"), engines("other-model")
    built = engines.backends()  # the build manifest's "llm_backends"
    assert built["smollm2-135m"] == {"backend": "server", "identity": "server:smollm2-135m", "url": url,
                                     "model": "smollm2-135m", "concurrency": 8}
    assert built["other-model"]["url"] == "http://gpu:9000"
    run = llm_backends({"reader_model": "smollm2-135m", "labelers": ["other-model", "qwen2.5-coder-1.5b"],
                        "retrievers": ["bm25", "e5-small"], "k": 3})  # the notebook-run manifest's "llm_backends"
    assert run == {"smollm2-135m": {"backend": "server", "url": url, "model": "smollm2-135m",
                                    "via": "INFERQA_LLM_SERVERS"},
                   "other-model": {"backend": "server", "url": "http://gpu:9000", "model": "big",
                                   "via": "INFERQA_LLM_SERVERS"},
                   "qwen2.5-coder-1.5b": {"backend": "server", "url": dead, "model": "qwen2.5-coder-1.5b",
                                          "via": "INFERQA_LLM_SERVER"}}
    text = json.dumps([built, run])
    assert "sekret" not in text and "pw" not in text
    monkeypatch.delenv("INFERQA_LLM_SERVER")
    assert backend_record("qwen2.5-coder-1.5b") == {"backend": "llamacpp"}


# ---------------------------------------------------------------------------- failures

def test_resume_after_the_server_dies_mid_batch(server, tmp_path):
    """Kill a server mid-batch: one ServerError after retries, the finished results are cached; a
    restarted server on the same port gets only the missing prompts; answers equal an uninterrupted run."""
    url0, _ = server
    batch = _prompts(30)
    expected = ServerLLM("smollm2-135m", url0, concurrency=1).chat(batch, max_tokens=24, progress=False)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    cache = GenerationCache(tmp_path / "c.sqlite")
    proc = _start_server(port)
    try:
        srv = ServerLLM("smollm2-135m", url, cache=cache, concurrency=4, max_retries=2, backoff=0.2)
        errors: list[BaseException] = []

        def run() -> None:
            try:
                srv.chat(batch, max_tokens=24, progress=False)
            except BaseException as e:
                errors.append(e)

        worker = threading.Thread(target=run)
        worker.start()
        t0 = time.time()
        while len(cache) < 3 and worker.is_alive() and time.time() - t0 < 120:
            time.sleep(0.02)
        proc.kill()
        proc.wait(timeout=10)
        worker.join(timeout=60)
        assert not worker.is_alive()
        n_done = len(cache)
        print(f"killed after {n_done} cached results; {srv.stats.requests} requests, {srv.stats.retries} retries; "
              f"error: {errors}")
        assert 3 <= n_done < len(batch)
        assert len(errors) == 1 and isinstance(errors[0], ServerError) and "failed 3 times" in str(errors[0])
        assert srv.stats.retries >= 2
        proc = _start_server(port)
        again = ServerLLM("smollm2-135m", url, cache=cache, concurrency=4)
        out = again.chat(batch, max_tokens=24, progress=False)
        assert again.stats.cache_hits == n_done
        assert again.stats.requests == again.stats.model_calls == len(batch) - n_done
        assert out == expected
    finally:
        _stop(proc)


def test_client_errors_are_not_retried(server):
    """A 4xx reply stops the batch with one ServerError and no retry: an unknown path (404), and in
    a concurrent batch a prompt longer than the server's context (400)."""
    url, _ = server
    srv = ServerLLM("smollm2-135m", url, concurrency=4, backoff=0.2)
    with pytest.raises(ServerError, match="HTTP 404"):
        srv._post("/v1/no-such-endpoint", {"x": 1})
    assert (srv.stats.requests, srv.stats.retries) == (1, 0)
    too_long = [[{"role": "user", "content": "word " * 3000}]]  # > n_ctx 2048
    srv.reset_stats()
    with pytest.raises(ServerError, match=r"HTTP 400.*maximum context length"):
        srv.chat(_prompts(3) + too_long, max_tokens=4, progress=False)
    assert (srv.stats.requests, srv.stats.retries) == (4, 0)


def test_server_errors_are_retried_then_one_error(server):
    """llama-cpp-python answers a request its schema rejects with HTTP 500: retried, then one error."""
    url, _ = server
    srv = ServerLLM("smollm2-135m", url, max_retries=2, backoff=0.05)
    with pytest.raises(ServerError, match=r"failed 3 times.*HTTP 500"):
        srv.chat([[{"role": "wizard", "content": "hi"}]], max_tokens=4, progress=False)
    assert (srv.stats.requests, srv.stats.retries) == (3, 2)


def test_timeouts_are_retried_then_one_error(server):
    url, _ = server
    srv = ServerLLM("smollm2-135m", url, timeout=0.05, max_retries=2, backoff=0.1, concurrency=1)
    with pytest.raises(ServerError, match=r"failed 3 times.*ReadTimeout"):
        srv.chat(_prompts(1), max_tokens=200, progress=False)
    assert (srv.stats.requests, srv.stats.retries) == (3, 2)


def test_unreachable_server_fails_fast_naming_the_url():
    url = f"http://127.0.0.1:{_free_port()}"
    srv = ServerLLM("x", url)  # default retries and concurrency
    t0 = time.perf_counter()
    with pytest.raises(ServerError, match="cannot reach the LLM server") as e:
        srv.chat(_prompts(10), progress=False)
    assert time.perf_counter() - t0 < 3
    assert url in str(e.value) and "INFERQA_LLM_SERVER" in str(e.value)
    assert srv.stats.retries == 0
