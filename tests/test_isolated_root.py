"""Tests run in a test root outside the checkout (tests/isolated_root.py, tests/conftest.py).

Fast: instead of running the notebooks and looking for what they left in the checkout, these
check that every folder a run writes resolves under the session's test root and none under the
checkout, in this process and in a fresh interpreter (a notebook kernel inherits the
environment).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from isolated_root import CHECKOUT, inside, make_root, shared_cache

from inferqa_utils.core.config import PATHS


def test_the_session_root_is_not_the_checkout():
    root = Path(os.environ["INFERQA_ROOT"])
    assert PATHS.root == root.resolve()
    assert not inside(root, CHECKOUT) and not inside(CHECKOUT, root)


def test_what_runs_write_resolves_under_the_test_root():
    from inferqa_utils.retrieval.java import jvm_options
    from inferqa_utils.stages import QUICKSTART_ANSWERS

    written = [PATHS.results, PATHS.figures, PATHS.build, PATHS.executions, PATHS.datasets, PATHS.indexes,
               PATHS.runs, PATHS.notebooks, PATHS.data, QUICKSTART_ANSWERS.path(),
               PATHS.models / "local_models.json"]
    for path in written:
        assert inside(path, PATHS.root) and not inside(path, CHECKOUT), path
    error_file = next(o for o in jvm_options() if o.startswith("-XX:ErrorFile="))
    assert inside(Path(error_file.split("=", 1)[1]).parent, PATHS.build)


def test_notebooks_are_copies_of_the_checkouts():
    names = sorted(p.name for p in (CHECKOUT / "notebooks").glob("*.ipynb"))
    assert names and sorted(p.name for p in PATHS.notebooks.glob("*.ipynb")) == names
    assert not PATHS.notebooks.is_symlink()
    assert (PATHS.notebooks / names[0]).read_bytes() == (CHECKOUT / "notebooks" / names[0]).read_bytes()


def test_generation_cache_is_the_tests_own():
    cache = Path(os.environ["INFERQA_LLM_CACHE"])
    assert cache != CHECKOUT / ".cache" / "llm" / "cache.sqlite"  # make run's cache is not touched


def test_shared_data_is_still_found_beside_the_checkout():
    """The real-data tests read ../shared/data beside the checkout, not beside the test root."""
    if not (CHECKOUT.parent / "shared" / "data").is_dir():
        pytest.skip("no ../shared/data beside the checkout")
    assert PATHS.shared_data() is not None and not inside(PATHS.shared_data(), PATHS.root.parent / "shared")


def test_a_child_interpreter_sees_the_test_root():
    """What a papermill kernel started by the runner sees (it inherits the environment)."""
    code = (
        "import json; from inferqa_utils.core.config import PATHS; print(json.dumps([str(PATHS.root), "
        "str(PATHS.results)]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(CHECKOUT)}, cwd=PATHS.notebooks)
    assert out.returncode == 0, out.stderr
    root, results = json.loads(out.stdout.strip().splitlines()[-1])
    assert Path(root) == PATHS.root and inside(Path(results), PATHS.root)


def test_make_root_links_models_but_not_the_fine_tuned_registry(tmp_path):
    checkout = tmp_path / "checkout"
    for folder in ("notebooks", "data", ".cache/models/x.verified"):
        (checkout / folder).mkdir(parents=True)
    (checkout / "notebooks" / "00_a.ipynb").write_text("{}")
    (checkout / ".cache" / "models" / "m.gguf").write_bytes(b"GGUF")
    (checkout / ".cache" / "models" / "local_models.json").write_text("{}")
    root = make_root(tmp_path / "root", checkout)
    models = root / ".cache" / "models"
    assert sorted(p.name for p in models.iterdir()) == ["m.gguf", "x.verified"]
    assert (models / "m.gguf").is_symlink() and (models / "m.gguf").read_bytes() == b"GGUF"
    assert not models.is_symlink() and not (root / "results").is_symlink() and (root / "build").is_dir()
    assert (root / ".cache" / "embeddings").resolve() == (shared_cache(checkout) / "embeddings").resolve()
    (checkout / "notebooks" / "01_b.ipynb").write_text("{}")
    make_root(root, checkout)  # a kept root is refreshed
    assert sorted(p.name for p in (root / "notebooks").iterdir()) == ["00_a.ipynb", "01_b.ipynb"]


def test_git_commit_is_the_packages_work_tree_when_the_root_is_in_none():
    from inferqa_utils.record.manifest import git_commit

    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=CHECKOUT, capture_output=True, text=True
    ).stdout.strip()
    assert git_commit()["commit"] == head
    assert git_commit(PATHS.root) == {"commit": None, "dirty": None}  # the test root is in no work tree
