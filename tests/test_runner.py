"""The papermill runner: parameters from profiles and overrides, manifest, failures.

Uses a real notebook written to a temporary folder and executed by papermill.
"""

import json
import os
from pathlib import Path

import nbformat
import pytest

from inferqa_utils.run.runner import parse_overrides, run_notebooks


def _nb(path, params_src, body_src):
    nb = nbformat.v4.new_notebook()
    p = nbformat.v4.new_code_cell(params_src)
    p.metadata["tags"] = ["parameters"]
    nb.cells = [p, nbformat.v4.new_code_cell(body_src)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def test_parse_overrides():
    assert parse_overrides(["k=3", "xs=[1, 3]", "s=abc", "n=null"]) == {
        "k": 3,
        "xs": [1, 3],
        "s": "abc",
        "n": None,
    }
    with pytest.raises(ValueError, match="name=value"):
        parse_overrides(["oops"])


@pytest.mark.slow
def test_runner_executes_in_order_with_profile_params(tmp_path):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    out_file = tmp_path / "seen.jsonl"
    body = (
        f"import json\nopen({str(out_file)!r}, 'a').write(json.dumps(dict(nb=NB, mq=max_questions, x=x)) + "
        "'\\n')"
    )
    _nb(nbdir / "00_first.ipynb", "NB = '00'  # name\nmax_questions = 99  # cap\nx = 0  # extra", body)
    _nb(nbdir / "01_second.ipynb", "NB = '01'\nmax_questions = 99\nx = 0", body)
    _nb(nbdir / "notes.ipynb", "NB = 'zz'", "raise SystemExit(1)")  # not numbered: ignored
    run_notebooks(
        "smoke", overrides={"x": 7}, out_dir=tmp_path / "exec", notebooks_dir=nbdir, log=lambda s: None
    )
    seen = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert seen == [{"nb": "00", "mq": 4, "x": 7}, {"nb": "01", "mq": 4, "x": 7}]
    man = json.loads((tmp_path / "exec" / "manifest.json").read_text())
    assert man["parameters"]["profile"] == "smoke" and man["parameters"]["x"] == 7
    assert set(man["timings_s"]) == {"00_first", "01_second", "total"}
    assert man["status"] == "ok" and man["versions"]["papermill"]
    assert "git" in man and any(k.endswith("00_first.ipynb") for k in man["inputs_sha256"])
    assert (tmp_path / "exec" / "01_second.ipynb").exists()


@pytest.mark.slow
def test_runner_failure_is_reported_in_manifest(tmp_path):
    nbdir = tmp_path / "nb"
    nbdir.mkdir()
    _nb(nbdir / "00_bad.ipynb", "x = 1", "raise RuntimeError('boom')")
    with pytest.raises(Exception, match="boom"):
        run_notebooks(
            "smoke", only=["00"], out_dir=tmp_path / "exec", notebooks_dir=nbdir, log=lambda s: None
        )
    man = json.loads((tmp_path / "exec" / "manifest.json").read_text())
    assert man["status"] == "failed in 00_bad.ipynb"


def test_only_that_matches_nothing(tmp_path):
    with pytest.raises(ValueError, match="matches no notebook"):
        run_notebooks(
            "smoke", only=["42"], out_dir=tmp_path / "e", notebooks_dir=tmp_path, log=lambda s: None
        )


def test_a_profile_with_a_notebook_list_runs_only_those():
    """The paper-runs profile (inferqa_utils/core/profiles.yaml) is meant for notebook 09 alone: a run of it
    selects 09, refuses an --only that selects another notebook, and profiles without a list run all."""
    from inferqa_utils.core.config import profile_notebooks
    from inferqa_utils.record.run_dirs import discover_notebooks
    from inferqa_utils.run.runner import selected_notebooks

    assert profile_notebooks("paper-runs") == ["09"] and profile_notebooks("default") is None
    assert [p.stem for p in selected_notebooks(None, None, "paper-runs")] == ["09_paper_runs"]
    assert [p.stem for p in selected_notebooks(["09"], None, "paper-runs")] == ["09_paper_runs"]
    with pytest.raises(ValueError, match=r"paper-runs is meant for notebook 09 only.*selects 02_retrieval"):
        selected_notebooks(["02"], None, "paper-runs")
    assert selected_notebooks(None, None, "default") == discover_notebooks()


@pytest.mark.slow
def test_interrupted_run_keeps_the_times_of_finished_notebooks(tmp_path):
    """SIGTERM during notebook 01 (a CI timeout, ``kill``): the manifest written after notebook 00
    keeps its time, and the final one says where the run stopped."""
    import os
    import signal
    import subprocess
    import sys
    import time

    nbdir, exec_dir = tmp_path / "nb", tmp_path / "exec"
    nbdir.mkdir()
    _nb(nbdir / "00_quick.ipynb", "x = 1", "y = x + 1")
    _nb(nbdir / "01_slow.ipynb", "x = 1", "import time\ntime.sleep(120)")
    code = ("from inferqa_utils.run.runner import run_notebooks; from pathlib import Path; "
            f"run_notebooks('smoke', out_dir=Path({str(exec_dir)!r}), notebooks_dir=Path({str(nbdir)!r}))")
    proc = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": os.getcwd()},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    manifest = exec_dir / "manifest.json"
    deadline = time.time() + 120
    while not (manifest.exists() and "00_quick" in json.loads(manifest.read_text())["timings_s"]):
        assert proc.poll() is None and time.time() < deadline, (
            proc.stdout.read() if proc.poll() else "timeout"
        )
        time.sleep(0.2)
    assert json.loads(manifest.read_text())["status"] == "running"
    time.sleep(3)  # inside 01's sleep
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    man = json.loads(manifest.read_text())
    assert man["status"] == "interrupted in 01_slow.ipynb", out
    assert man["notebooks"]["00_quick.ipynb"]["status"] == "ok"
    assert man["notebooks"]["01_slow.ipynb"]["status"] == "interrupted in 01_slow.ipynb"
    assert man["timings_s"]["01_slow"] < 60


@pytest.mark.slow
def test_kernel_that_dies_after_its_cells_finished_is_reported(tmp_path):
    """The last cell makes the kernel die with SIGSEGV at its exit: papermill returns normally, the
    manifest records the signal for the notebook and the runner logs a warning."""
    nbdir = tmp_path / "nb"
    nbdir.mkdir()
    _nb(nbdir / "00_dies.ipynb", "x = 1", "import atexit, os, signal\n"
                                          "atexit.register(lambda: os.kill(os.getpid(), signal.SIGSEGV))")
    _nb(nbdir / "01_fine.ipynb", "x = 1", "y = x + 1")
    lines: list[str] = []
    m = run_notebooks("smoke", out_dir=tmp_path / "exec", notebooks_dir=nbdir, log=lines.append)
    assert m.extra["status"] == "ok"
    assert m.extra["notebooks"]["00_dies.ipynb"]["kernel_exit"] == "signal 11 (SIGSEGV)"
    assert m.extra["notebooks"]["01_fine.ipynb"]["kernel_exit"] == 0
    assert any("the kernel of 00_dies.ipynb ended abnormally: signal 11" in line for line in lines), lines


@pytest.mark.slow
def test_a_run_projects_its_time_and_keeps_a_ledger(tmp_path, monkeypatch):
    """With a reference record of the profile, the run prints the projection before the first
    notebook, an ETA after each and the projection against the actual seconds at the end (also in
    the manifest); the notebooks' analysis marks land in the run's ledger log."""
    from inferqa_utils.record import projection
    from inferqa_utils.record.ledger import LEDGER_NAME, read_events, segments

    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    body = "from inferqa_utils.record import ledger\nledger.begin({key!r})\nimport time\ntime.sleep(0.5)"
    _nb(nbdir / "00_first.ipynb", "x = 0", body.format(key="00.quickstart"))
    _nb(nbdir / "01_second.ipynb", "x = 0", body.format(key="01.release"))
    ref = {"commit": "0123456", "date": "2026-11-27", "machine": {"cpus": 2, "cpu_model": "AMD EPYC"},
           "rates": {}, "notebooks": {"00_first": {"seconds": 3.0, "llm": {}},
                                      "01_second": {"seconds": 200.0, "llm": {}}}}
    (tmp_path / "ref.json").write_text(json.dumps({"profiles": {"smoke": ref}}))
    monkeypatch.setenv(projection.REFERENCE_ENV, str(tmp_path / "ref.json"))
    lines: list[str] = []
    m = run_notebooks("smoke", out_dir=tmp_path / "exec", notebooks_dir=nbdir, log=lines.append,
                      projection=True)
    text = "\n".join(lines)
    assert "projected for profile smoke: 3 min of notebooks" in text
    assert "00_first (1 of 2): projected 3 s" in text
    assert "1 left, projected 3 min, ETA" in text
    assert any(x.startswith("[inferqa] projected 3 min, took") for x in lines)
    assert m.extra["projection"]["notebooks"]["01_second"]["projected"] == 200.0
    segs = segments(read_events(tmp_path / "exec" / LEDGER_NAME))
    assert [(s, k) for s, k, _ in segs] == [("00_first", "00.setup"), ("00_first", "00.quickstart"),
                                           ("01_second", "01.setup"), ("01_second", "01.release")]
    assert all(secs >= 0.5 for s, k, secs in segs if not k.endswith("setup"))


# ----------------------------------------------------------------------------- the run's three steps


def test_a_run_is_planned_and_checked_before_anything_runs(tmp_path):
    """The plan holds the numbered notebooks, the overrides checked and coerced (``1e-5`` as YAML
    reads it is a string, taken as the float 1e-05 where the notebook's default is a float), the
    profile's values under them, and the outcome the run would have; nothing is written.
    Break: ``plan_run`` keeping the overrides as given (``"1e-5"``)."""
    from inferqa_utils.run.runner import plan_run

    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    _nb(nbdir / "00_first.ipynb", "max_questions = 99\nlr = 0.1", "y = 1")
    _nb(nbdir / "01_second.ipynb", "x = 0", "y = 1")
    _nb(nbdir / "notes.ipynb", "x = 0", "y = 1")  # not numbered: not planned
    plan = plan_run("smoke", overrides={"lr": "1e-5"}, notebooks_dir=nbdir)
    assert [p.name for p in plan.notebooks] == ["00_first.ipynb", "01_second.ipynb"]
    assert plan.overrides == {"lr": 1e-05} and plan.parameters["lr"] == 1e-05
    assert plan.parameters["max_questions"] == 4  # the smoke profile's
    assert (plan.only, plan.kernel_path, plan.scope) == (None, None, "complete")
    only = plan_run("smoke", only=["01"], notebooks_dir=nbdir)
    assert [p.name for p in only.notebooks] == ["01_second.ipynb"]
    assert (only.only, only.scope) == (("01",), "partial")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notebooks"]


def test_the_kernel_environment_is_set_for_the_run_and_restored_after(tmp_path, monkeypatch):
    """Inside: the profile, the run's folder, cost log, ledger and the plugged-in folders before
    ``PYTHONPATH``; SIGTERM raises KeyboardInterrupt. After, even when the run raised: the run's own
    variables gone (the notebook's stage included), ``PYTHONPATH`` and the SIGTERM handler as before,
    this environment's python first on ``PATH`` and the profile kept.
    Break: restoring ``PYTHONPATH`` only when the run ended normally."""
    import os
    import signal
    import sys

    from inferqa_utils.core.config import PROFILE_ENV, RUN_DIR_ENV
    from inferqa_utils.llm.costs import COST_LOG_ENV, COST_LOG_NAME, COST_STAGE_ENV
    from inferqa_utils.record.ledger import LEDGER_ENV, LEDGER_NAME
    from inferqa_utils.run.runner import kernel_environment

    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("PYTHONPATH", "/before")
    monkeypatch.setenv(PROFILE_ENV, "")
    for name in (RUN_DIR_ENV, COST_LOG_ENV, COST_STAGE_ENV, LEDGER_ENV):
        monkeypatch.delenv(name, raising=False)
    previous = signal.getsignal(signal.SIGTERM)
    out = tmp_path / "20261124-080321-smoke"
    with pytest.raises(RuntimeError, match="notebook"), \
            kernel_environment("smoke", out, f"/plug{os.pathsep}/before"):
        assert (os.environ[PROFILE_ENV], os.environ[RUN_DIR_ENV]) == ("smoke", str(out.resolve()))
        assert os.environ[COST_LOG_ENV] == str(out / COST_LOG_NAME)
        assert os.environ[LEDGER_ENV] == str(out / LEDGER_NAME)
        assert os.environ["PYTHONPATH"] == f"/plug{os.pathsep}/before"
        handler = signal.getsignal(signal.SIGTERM)
        assert handler is not previous
        with pytest.raises(KeyboardInterrupt):
            handler(signal.SIGTERM, None)
        os.environ[COST_STAGE_ENV] = "00_first"  # what the executor sets per notebook
        raise RuntimeError("a notebook failed")
    assert all(name not in os.environ for name in (RUN_DIR_ENV, COST_LOG_ENV, COST_STAGE_ENV, LEDGER_ENV))
    assert os.environ["PYTHONPATH"] == "/before" and signal.getsignal(signal.SIGTERM) is previous
    assert os.environ[PROFILE_ENV] == "smoke"
    assert os.environ["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)


def test_the_executor_records_each_notebook_and_where_the_run_stopped(tmp_path, monkeypatch):
    """Three notebooks, the second raising in its kernel (papermill replaced by a copy that writes
    one results table per notebook into the run's folder): the first is recorded ``ok`` with its
    table, the second ``failed in 01_b.ipynb``, the third never starts; the ledger marks both executed
    notebooks, ``latest-smoke`` names the run's folder, and the failed run is not published under
    ``results/``.
    Break: recording a notebook only when papermill returned (no ``finally``)."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    from inferqa_utils.core import config
    from inferqa_utils.core.config import Paths
    from inferqa_utils.core.errors import NotebookError
    from inferqa_utils.record import run_dirs
    from inferqa_utils.record.ledger import LEDGER_NAME
    from inferqa_utils.run import runner

    root = tmp_path / "root"
    nbdir = root / "notebooks"
    for folder in (nbdir, root / "results"):
        folder.mkdir(parents=True)
    for name in ("00_a", "01_b", "02_c"):
        _nb(nbdir / f"{name}.ipynb", "x = 1", "y = 2")
    for module in (runner, run_dirs):
        monkeypatch.setattr(module, "PATHS", Paths(root))
    monkeypatch.setenv(config.PROFILE_ENV, "")  # the runner sets it for the kernels: restored after the test

    def execute_notebook(input_path, output_path, **kw):
        Path(output_path).write_bytes(Path(input_path).read_bytes())
        stem = Path(input_path).stem
        tables = Path(os.environ[config.RUN_DIR_ENV]) / "results"
        tables.mkdir(exist_ok=True)
        (tables / f"{stem}.csv").write_text("system,v\nbm25,1\n")
        if stem == "01_b":
            raise PapermillExecutionError(1, 2, "y = 2", "ZeroDivisionError", "division by zero", [])

    monkeypatch.setattr(papermill, "execute_notebook", execute_notebook)
    out = root / "build" / "executions" / "20261124-080321-smoke"
    lines: list[str] = []
    with pytest.raises(NotebookError) as raised:
        runner.run_notebooks("smoke", out_dir=out, notebooks_dir=nbdir, log=lines.append)
    assert str(raised.value) == (f"01_b.ipynb: ZeroDivisionError: division by zero; full traceback in "
                                 f"{out / '01_b.ipynb'}")
    man = json.loads((out / "manifest.json").read_text())
    assert (man["status"], man["outcome"]) == ("failed in 01_b.ipynb", "failed")
    assert (man["notebooks_finished"], man["notebooks_not_started"]) == (["00_a.ipynb"], ["02_c.ipynb"])
    assert {name: (r["status"], r["outputs"], r["kernel_exit"]) for name, r in man["notebooks"].items()} == {
        "00_a.ipynb": ("ok", ["results/00_a.csv"], None),
        "01_b.ipynb": ("failed in 01_b.ipynb", ["results/01_b.csv"], None),
    }
    assert sorted(man["timings_s"]) == ["00_a", "01_b", "total"]
    events = [(r["stage"], r["event"]) for r in map(json.loads, (out / LEDGER_NAME).read_text().splitlines())]
    assert events == [("00_a", "start"), ("00_a", "end"), ("01_b", "start"), ("01_b", "end")]
    assert (root / "build" / "executions" / "latest-smoke").readlink() == Path(out.name)
    assert list((root / "results").iterdir()) == []
    assert any(line.startswith("[inferqa] 01_b.ipynb FAILED after ") for line in lines)


# ----------------------------------------------------------------------------- component resolvers


def test_each_kind_of_component_is_resolved_by_its_stage_registry(tmp_path, monkeypatch):
    """One resolver per kind of component, each the look-up function of its stage's registry; a
    built-in name resolves to no plugin, a ``module:function`` spec to its plugin, another kind is
    refused. Break: ``component_resolvers`` mapping kind ``reader`` to the methods' look-up."""
    from inferqa_utils.beyond.registry import method_spec
    from inferqa_utils.core import plugins
    from inferqa_utils.reading.readers import reader_spec
    from inferqa_utils.rerank.registry import check_reranker
    from inferqa_utils.retrieval.registry import retriever_spec
    from inferqa_utils.run.notebook_params import check_component, component_resolvers

    resolvers = component_resolvers()
    assert resolvers == {
        "retriever": retriever_spec, "reranker": check_reranker, "reader": reader_spec, "method": method_spec,
    }
    assert set(resolvers) == set(plugins.KINDS)
    assert check_component("retriever", "bm25") is None and check_component("reader", "few-shot") is None
    (tmp_path / "resolver_test_plugin.py").write_text("def build(corpus, index_dir):\n    return None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = check_component("retriever", "resolver_test_plugin:build")
    assert (found.kind.name, found.spec) == ("retriever", "resolver_test_plugin:build")
    with pytest.raises(ValueError, match="unknown component kind 'scorer'"):
        check_component("scorer", "x")
