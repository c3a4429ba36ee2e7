"""Papermill smoke run of every numbered notebook on the smallest profile."""

import pytest

from inferqa_utils.record.run_dirs import discover_notebooks
from inferqa_utils.run.runner import run_notebooks

NOTEBOOKS = discover_notebooks()


@pytest.mark.slow
@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_smoke(nb):
    """Run the notebook on the smoke profile, then check the numbers it produced against the
    reproduction matrix (inferqa_utils/verdicts/reproduction.yaml): a notebook that runs but computes
    something else fails here. After 07, the findings table is scored on the whole smoke run. Notebook
    09 has no release to read there: it must end without writing anything.
    The run goes to the test root's build/executions/, where check finds it as the run whose
    tables it reads (tables of another run FAIL)."""
    from pathlib import Path

    from inferqa_utils.record.ledger import LEDGER_NAME, read_events, segments
    from inferqa_utils.stages import Stage
    from inferqa_utils.verdicts.check import check

    m = run_notebooks("smoke", only=[nb.name[:2]], log=print)
    assert m.extra["status"] == "ok"
    assert Path(m.extra["notebooks"][nb.name]["output"]).exists()
    assert m.extra["notebooks"][nb.name]["kernel_exit"] == 0
    # the ledger: the notebook marks its analyses, and their seconds add up to the notebook's
    run_dir = Path(m.extra["notebooks"][nb.name]["output"]).parent
    segs = [seg for seg in segments(read_events(run_dir / LEDGER_NAME)) if seg[0] == nb.stem]
    assert segs[0][1] == f"{nb.name[:2]}.setup" and len(segs) >= 2, segs
    assert abs(sum(secs for *_, secs in segs) - m.timings[nb.stem]) < 2.0, (segs, m.timings[nb.stem])
    if nb.name.startswith(Stage.PAPER_RUNS):
        # no release of the paper's runs in the test root: the notebook says how to get one and
        # writes nothing (an import writes its tables; tests/test_paper_runs.py checks them)
        assert m.extra["notebooks"][nb.name]["outputs"] == []
        return
    # the tables it wrote have exactly the columns the registry declares (Table.columns), the ones
    # the reproduction matrix may name (tests/test_stages.py); an empty table has no header to hold
    import pandas as pd

    from inferqa_utils import stages
    from inferqa_utils.core.config import profile

    params = profile("smoke")
    problems = []
    for table in stages.tables_of(nb.name[:2]):
        path = table.path(params["dataset_name"], params.get("split", "test"))
        if table.columns and path.is_file() and len(written := pd.read_csv(path)):
            problems += table.schema_problems(written.columns)
    assert problems == []
    lines: list[str] = []
    fails = check("smoke", notebooks=[nb.name[:2]], findings_table=nb.name.startswith("07"), log=lines.append)
    print("\n".join(lines))
    assert sum(line.startswith(("OK", "FAIL")) for line in lines) >= 1, "no produced number is checked"
    assert fails == 0, "\n".join(line for line in lines if line.startswith("FAIL"))


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_parameters_cell_is_fully_visible_to_papermill(nb):
    """papermill silently ignores a parameter line holding a second '=' (e.g. in its comment)."""
    import re

    import nbformat

    from inferqa_utils.run.runner import notebook_parameters

    cells = [c for c in nbformat.read(nb, as_version=4).cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1, "exactly one cell tagged 'parameters'"
    names = re.findall(r"^(\w+)\s*(?::[^=]+)?=", cells[0].source, flags=re.M)
    assert names, "the parameters cell declares nothing"
    assert set(names) == set(notebook_parameters(nb)), "some parameter lines are not parsed by papermill"
    for line in cells[0].source.splitlines():
        if re.match(r"^\w+\s*=", line):
            assert "#" in line, f"parameter without a comment: {line}"


def test_notebooks_are_committed_clean():
    import nbformat

    for nb in NOTEBOOKS:
        for c in nbformat.read(nb, as_version=4).cells:
            if c.cell_type == "code":
                assert not c.outputs and c.execution_count is None, f"{nb.name} holds outputs"


def test_parameter_defaults_equal_the_default_profile():
    """A notebook opened in JupyterLab runs the experiment of `make run`: every parameter the
    default profile sets has that value as the notebook's default (scripts/sync_notebook_parameters.py
    rewrites them)."""
    import subprocess
    import sys

    from isolated_root import CHECKOUT

    r = subprocess.run([sys.executable, str(CHECKOUT / "scripts" / "sync_notebook_parameters.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_notebook_01_defaults_make_the_default_profile_build():
    """Notebook 01 opened in JupyterLab after `make run` reuses that run's build (a default
    that differed from the profile's made Run All stop with a BuildConflictError): its parameters
    cell and set-up cell, run as written, give the default profile's build fingerprint."""
    import nbformat

    from inferqa_utils.construction.build_config import profile_build_config
    from inferqa_utils.core.config import PATHS

    cells = nbformat.read(PATHS.notebooks / "01_dataset_construction.ipynb", as_version=4).cells
    ns: dict = {}
    exec(next(c.source for c in cells if "parameters" in c.metadata.get("tags", [])), ns)
    exec(next(c.source for c in cells if "BuildConfig.from_parameters(" in c.source), ns)
    assert ns["cfg"].fingerprint() == profile_build_config("default").fingerprint()
    assert profile_build_config("smoke").fingerprint() != profile_build_config("default").fingerprint()


def test_notebook_01_names_the_parameters_that_build_the_dataset():
    """Notebook 01 builds its configuration from its build parameters passed by name, each as the
    parameters cell's variable of that name: every parameter of the cell that builds the dataset
    (:func:`~inferqa_utils.construction.build_config.build_parameters`), and no other value."""
    import ast

    import nbformat

    from inferqa_utils.construction.build_config import build_parameters
    from inferqa_utils.core.config import PATHS
    from inferqa_utils.run.notebook_params import declared_parameters

    path = PATHS.notebooks / "01_dataset_construction.ipynb"
    code = [ast.parse(c.source) for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    calls = [n for tree in code for n in ast.walk(tree)
             if isinstance(n, ast.Call) and ast.unparse(n.func) == "BuildConfig.from_parameters"]
    assert len(calls) == 1 and not calls[0].args, "one call, every parameter by name"
    named = {k.arg: k.value for k in calls[0].keywords}
    assert all(isinstance(v, ast.Name) and v.id == k for k, v in named.items()), "each the parameter itself"
    assert set(named) == set(declared_parameters(path)) & set(build_parameters())
