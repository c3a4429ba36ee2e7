"""Shared fixtures. Tests needing ../shared/data skip with a message when it is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferqa_utils.config import PATHS


@pytest.fixture(scope="session")
def shared_data() -> Path:
    root = PATHS.shared_data()
    if root is None:
        pytest.skip("../shared/data is absent (set INFERQA_SHARED_DATA to run the real-data tests)")
    return root


@pytest.fixture(autouse=True)
def _no_llm_server_routing(monkeypatch):
    """Tests choose their LLM and embedding backends themselves: a shell's INFERQA_LLM_SERVER(S) or
    INFERQA_EMBED_SERVER(S) would otherwise send every ``load_llm`` / ``load_embedder`` to a server
    (tests that test the routing set the variables again)."""
    for var in ("INFERQA_LLM_SERVER", "INFERQA_LLM_SERVERS", "INFERQA_LLM_API_KEY", "INFERQA_LLM_CONCURRENCY",
                "INFERQA_LLM_RETRIES", "INFERQA_EMBED_SERVER", "INFERQA_EMBED_SERVERS", "INFERQA_EMBED_API_KEY",
                "INFERQA_EMBED_CONCURRENCY", "INFERQA_EMBED_RETRIES"):
        monkeypatch.delenv(var, raising=False)
