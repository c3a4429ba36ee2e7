"""Shared fixtures. Tests needing ../shared/data skip with a message when it is absent.

A session runs in a test root outside the checkout (tests/isolated_root.py): ``INFERQA_ROOT`` is
pointed at it here, before anything imports ``inferqa_utils`` (which reads it once), so nothing a
test or a notebook it runs writes lands in the checkout's ``results/``, ``figures/`` or ``build/``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from isolated_root import CHECKOUT, isolate

if "inferqa_utils.core.config" in sys.modules:  # its PATHS would name another root
    raise RuntimeError(
        "inferqa_utils was imported before tests/conftest.py set INFERQA_ROOT to the test root"
    )
TEST_ROOT, TEST_ROOT_CHOSEN = isolate()

from inferqa_utils.core.config import PATHS  # noqa: E402  (after INFERQA_ROOT is set)


def pytest_report_header(config: pytest.Config) -> str:
    return f"test root (INFERQA_ROOT): {TEST_ROOT}; package from {CHECKOUT}"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A temporary test root goes when every test passed; a chosen one (INFERQA_TEST_ROOT) stays."""
    if exitstatus in (0, 5) and not TEST_ROOT_CHOSEN:  # passed, or nothing collected
        shutil.rmtree(TEST_ROOT, ignore_errors=True)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if exitstatus not in (0, 5) or TEST_ROOT_CHOSEN:
        terminalreporter.write_line(f"test root kept: {TEST_ROOT} (executed notebooks in build/executions/)")


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
    for var in (
        "INFERQA_LLM_SERVER", "INFERQA_LLM_SERVERS", "INFERQA_LLM_API_KEY", "INFERQA_LLM_CONCURRENCY",
        "INFERQA_LLM_RETRIES", "INFERQA_EMBED_SERVER", "INFERQA_EMBED_SERVERS", "INFERQA_EMBED_API_KEY",
        "INFERQA_EMBED_CONCURRENCY", "INFERQA_EMBED_RETRIES",
    ):
        monkeypatch.delenv(var, raising=False)


#: the stage outputs the question inspector and the browser test read, with the notebooks that write them
SMOKE_NOTEBOOKS = ["01", "02", "03", "04", "05", "06", "07"]


@pytest.fixture(scope="session")
def smoke_outputs() -> str:
    """The smoke profile's built dataset and its stage outputs (runs, readings, EM patterns) in the
    test root, as tests/test_notebooks.py (earlier in a full run) or an earlier session in the same
    ``INFERQA_TEST_ROOT`` leave them; notebooks 01–07 are run on the smoke profile here when the
    build is missing or was made with other parameters, or an output is missing. Returns the
    dataset name."""
    import json

    from inferqa_utils.construction.build_config import profile_build_config
    from inferqa_utils.core.config import profile
    from inferqa_utils.run.runner import run_notebooks
    from inferqa_utils.teach.inspector import describe_inputs

    name = profile("smoke")["dataset_name"]
    have = describe_inputs(name)
    fresh = (
        have["build"]["exists"]
        and json.loads(Path(have["build"]["path"]).read_text(encoding="utf-8")).get("fingerprint")
        == profile_build_config("smoke").fingerprint()
    )
    if not fresh or not all(v["exists"] for v in have.values()):
        m = run_notebooks("smoke", only=SMOKE_NOTEBOOKS, log=print)
        assert m.extra["status"] == "ok", m.extra["status"]
    return name


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Browser tests run last: in a full run the notebook smoke tests have made the smoke build by
    then, so ``smoke_outputs`` finds it instead of building it a second time."""
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)
