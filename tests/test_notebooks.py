"""Papermill smoke run of every numbered notebook on the smallest profile."""

import pytest

from inferqa_utils.runner import discover_notebooks, run_notebooks

NOTEBOOKS = discover_notebooks()


@pytest.mark.slow
@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_smoke(nb, tmp_path):
    m = run_notebooks("smoke", only=[nb.name[:2]], out_dir=tmp_path, log=print)
    assert m.extra["status"] == "ok"
    assert (tmp_path / nb.name).exists()
