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
