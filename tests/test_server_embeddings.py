"""The ``/v1/embeddings`` backend (:class:`ServerEmbedder`) against a real server: llama-cpp-python's
``python -m llama_cpp.server --embedding true`` on 127.0.0.1 with the packaged SmolLM2 GGUF, then
stopped. Vectors against in-process llama.cpp embeddings of the same GGUF, the shared vector cache
(a second call sends no request; backends and served models never share vectors), concurrent
batches in input order, the errors, and the routing of ``load_embedder`` with what manifests record."""

import subprocess
import sys

import numpy as np
import pytest
from local_servers import free_port, stop_process

from inferqa_utils.core import models
from inferqa_utils.llm.embeddings import Embedder, ServerEmbedder, VectorCache, load_embedder
from inferqa_utils.llm.http_settings import HTTPSettings
from inferqa_utils.llm.server import ServerError

pytestmark = pytest.mark.slow

#: minimum cosine between a server vector and the in-process vector of the same text. Both are
#: llama.cpp on the same GGUF: the server returns SmolLM2's per-token vectors (the model has no
#: pooling layer) and the client averages them; in process llama.cpp mean-pools all texts in one
#: batch. Measured 1.000000 (six decimals; 2026-11-23, see the test's print); the bound leaves room for
#: batch-composition noise, while a wrong vector (another text's, last-token pooling) is far below.
MIN_COSINE = 0.999

TEXTS = ["The Eiffel Tower stands in Paris.", "A small cat sleeps on a woven mat.",
         "The stock market fell sharply on Monday.", "Water boils at one hundred degrees.",
         "Mount Everest is the highest mountain.", "She plays the violin every evening.",
         "Rain is expected tomorrow in the north."]


def _gguf() -> str:
    return str(models.fetch("smollm2-135m", log=lambda s: None))


@pytest.fixture(scope="module")
def embed_server():
    """llama_cpp.server in embedding mode with SmolLM2 (killed at the end of the module)."""
    pytest.importorskip("uvicorn", reason="llama-cpp-python[server] extras are not installed")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", _gguf(), "--model_alias", "smollm2-135m",
         "--host", "127.0.0.1", "--port", str(port), "--embedding", "true", "--n_ctx", "512",
         "--n_threads", "2", "--verbose", "false"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ServerEmbedder("smollm2-135m", HTTPSettings(url)).wait_ready(timeout=120)
        yield url
    finally:
        stop_process(proc)
    assert proc.poll() is not None, "server process did not stop"


@pytest.fixture(scope="module")
def in_process_vectors():
    """L2-normalised mean-pooled llama.cpp embeddings of TEXTS, in process, same GGUF."""
    import llama_cpp

    llm = llama_cpp.Llama(model_path=_gguf(), embedding=True, pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN,
                          n_ctx=512, n_threads=2, verbose=False)
    try:
        v = np.asarray(llm.embed(TEXTS), dtype=np.float32)
    finally:
        llm.close()
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _embedder(url: str, tmp_path, **kw) -> ServerEmbedder:
    e = ServerEmbedder("smollm2-135m", HTTPSettings(url, **kw), token_pooling="mean")
    e.cache = VectorCache(tmp_path / "v.sqlite")
    return e


def test_server_vectors_match_in_process_llama_cpp(embed_server, in_process_vectors, tmp_path):
    e = _embedder(embed_server, tmp_path)
    v = e.encode(TEXTS, role="passage", progress=False)
    assert v.shape == in_process_vectors.shape and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    cos = np.einsum("ij,ij->i", v, in_process_vectors)
    print(f"cosine server vs in-process: min {cos.min():.6f}; {e.stats.requests} requests")
    assert cos.min() >= MIN_COSINE
    # different texts stay apart: each row is closest to its own in-process vector
    assert (np.argmax(v @ in_process_vectors.T, axis=1) == np.arange(len(TEXTS))).all()


def test_concurrent_requests_keep_input_order(embed_server, tmp_path):
    """7 texts with 3 requests in flight give the rows of one request at a time, in input order
    (with token_pooling every text is a request of its own: see ServerEmbedder)."""
    one = _embedder(embed_server, tmp_path / "a", concurrency=1).encode(TEXTS, progress=False)
    many = _embedder(embed_server, tmp_path / "b", concurrency=3)
    out = many.encode(TEXTS, progress=False)
    assert many.stats.requests == len(TEXTS) and many.stats.retries == 0
    assert np.allclose(out, one, atol=1e-5)
    assert not np.allclose(out[0], out[1], atol=0.1)  # distinct rows: a reordering would show


def test_the_vector_cache_is_used_and_keyed_by_backend_and_model(embed_server, tmp_path):
    e = _embedder(embed_server, tmp_path)
    first = e.encode(TEXTS[:3], role="passage", progress=False)
    assert (e.stats.requests, e.calls) == (3, 3)
    again = e.encode(TEXTS[:3], role="passage", progress=False)  # all cached: no request
    assert (e.stats.requests, e.calls) == (3, 3) and np.array_equal(again, first)
    fresh = _embedder(embed_server, tmp_path)  # another instance on the same cache file
    assert np.array_equal(fresh.encode(TEXTS[:3], role="passage", progress=False), first)
    assert fresh.stats.requests == 0
    e.encode(TEXTS[:4], role="passage", progress=False)  # one new text: one request for it
    assert (e.stats.requests, e.calls) == (4, 4)
    e.encode(TEXTS[:1], role="query", progress=False)  # the role is part of the key
    assert e.stats.requests == 5
    # another served model id (the server answers with its only model) does not reuse the vectors
    other = ServerEmbedder("smollm2-135m", HTTPSettings(embed_server), model="other-id", token_pooling="mean")
    other.cache = e.cache
    other.encode(TEXTS[:1], role="passage", progress=False)
    assert other.stats.requests == 1 and other.identity != e.identity
    # nor does the in-process backend: its identity is the model checksum
    assert Embedder("smollm2-135m", use_cache=False).identity not in (e.identity, other.identity)


def test_token_level_replies_need_token_pooling(embed_server):
    """SmolLM2 has no pooling layer: llama-cpp-python returns one vector per token, refused by default."""
    e = ServerEmbedder("smollm2-135m", HTTPSettings(embed_server), use_cache=False)
    with pytest.raises(ServerError, match=r"one vector per token.*token_pooling='mean'"):
        e.encode(TEXTS[:1], progress=False)


def test_env_routes_load_embedder_and_manifests_record_it(embed_server, monkeypatch):
    from inferqa_utils.llm.routing import embed_backend_record
    from inferqa_utils.run.runner import embed_backends

    dead = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("INFERQA_EMBED_SERVER", dead)
    monkeypatch.setenv("INFERQA_EMBED_SERVERS", f"smollm2-135m={embed_server}#smollm2-135m,"
                                                "served-e5=http://u:pw@gpu:9000#intfloat/e5-small")
    monkeypatch.setenv("INFERQA_EMBED_API_KEY", "sekret-key")
    e = load_embedder("smollm2-135m", token_pooling="mean")
    assert isinstance(e, ServerEmbedder) and e.base_url == embed_server and e.model == "smollm2-135m"
    e.cache = None
    assert e.encode(TEXTS[:2], progress=False).shape[0] == 2  # the mapped server, not the dead one
    assert e.describe() == {"backend": "server", "identity": "server:smollm2-135m|pooling=mean",
                            "url": embed_server, "model": "smollm2-135m", "concurrency": 4}
    e5 = load_embedder("e5-small")  # not mapped: INFERQA_EMBED_SERVER, with the E5 prefixes
    assert isinstance(e5, ServerEmbedder) and e5.base_url == dead and e5.prefixes["query"] == "query: "
    rec = embed_backends({"retrievers": ["bm25", "minilm", "served-e5"], "method_reranker": "dense:e5-small",
                          "reader_model": "smollm2-135m"})
    assert rec == {
        "minilm": {"backend": "server", "url": dead, "model": "minilm", "via": "INFERQA_EMBED_SERVER"},
        "served-e5": {
            "backend": "server",
            "url": "http://gpu:9000",
            "model": "intfloat/e5-small",
            "via": "INFERQA_EMBED_SERVERS",
        },
        "e5-small": {"backend": "server", "url": dead, "model": "e5-small", "via": "INFERQA_EMBED_SERVER"},
        # a name INFERQA_EMBED_SERVERS maps is an embedding model wherever it appears
        "smollm2-135m": {
            "backend": "server",
            "url": embed_server,
            "model": "smollm2-135m",
            "via": "INFERQA_EMBED_SERVERS",
        },
    }
    assert "sekret" not in str(rec) and "pw" not in str(rec)
    monkeypatch.delenv("INFERQA_EMBED_SERVER")
    assert embed_backend_record("minilm") == {"backend": "in-process"}
    assert type(load_embedder("minilm")) is Embedder


def test_unreachable_embedding_server_fails_fast_naming_the_url():
    url = f"http://127.0.0.1:{free_port()}"
    e = ServerEmbedder("minilm", HTTPSettings(url), use_cache=False)
    with pytest.raises(ServerError, match="cannot reach the embedding server") as err:
        e.encode(TEXTS, progress=False)
    assert url in str(err.value) and "INFERQA_EMBED_SERVER" in str(err.value)
    assert e.stats.retries == 0
