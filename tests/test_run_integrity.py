"""Runs that cannot mix (inferqa_utils.run.runner, record.run_dirs, provenance, check, results_page).

A run id is unique even when two runs begin within one second; a run whose notebook raises stops
there, its manifest says how far it got, ``check`` refuses the tables of the notebooks it did not
finish and the results page never calls it complete; two runs writing into one results folder at
once are told apart, and the tables written meanwhile are refused.

The slow tests execute tiny notebooks with papermill, in a project root of their own under
``tmp_path`` (``python -m inferqa_utils`` in a subprocess with ``INFERQA_ROOT`` pointed at it, or
the runner in process with its paths pointed there): nothing lands in the shared test root or
the checkout.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest
import yaml
from isolated_root import CHECKOUT
from test_runner import _nb

from inferqa_utils import stages
from inferqa_utils.core import config
from inferqa_utils.core.config import Paths, profile
from inferqa_utils.record import provenance as prov
from inferqa_utils.record import run_dirs
from inferqa_utils.run import runner
from inferqa_utils.verdicts import check as chk
from inferqa_utils.verdicts import results_page as rp

#: the second every run of the frozen clock begins in
SECOND = dt.datetime(2026, 11, 24, 8, 3, 21)
RUN = {"run_id": "20261124-090000-smoke", "profile": "smoke", "notebook": "02_y.ipynb"}
OTHER = {"run_id": "20261124-090000-default", "profile": "default", "notebook": "03_x.ipynb"}


def _cli(root: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """``python -m inferqa_utils ARGS`` on the checkout's package, in the project root ``root``."""
    env = {**os.environ, "PYTHONPATH": str(CHECKOUT), "INFERQA_ROOT": str(root)}
    return subprocess.run([sys.executable, "-m", "inferqa_utils", *args], capture_output=True, text=True,
                          env=env, cwd=root, timeout=timeout)


def _error_lines(err: str) -> list[str]:
    """The ``error: …`` lines of a command's stderr (a kernel may add warnings of its own)."""
    return [line for line in err.splitlines() if line.startswith("error: ")]


def _root(tmp_path: Path) -> Path:
    """A project root: ``notebooks/`` and ``results/``, nothing else."""
    root = (tmp_path / "root").resolve()
    for name in ("notebooks", "results"):
        (root / name).mkdir(parents=True)
    return root


def _writes(path: Path, value: float) -> str:
    """Notebook source writing the one-row table ``system,v`` = ``bm25,<value>`` to ``path``."""
    return f"from pathlib import Path\nPath({str(path)!r}).write_text('system,v\\nbm25,{value}\\n')"


def _run_dirs(executions: Path) -> list[Path]:
    return sorted(d for d in executions.iterdir() if run_dirs.RUN_DIR_RE.match(d.name) and not d.is_symlink())


# ----------------------------------------------------------------------------- run ids


def test_two_runs_begun_in_one_second_get_two_folders(tmp_path):
    """Break: ``new_run_dir`` with ``mkdir(exist_ok=True)`` on ``<stamp>-<profile>`` (the old naming):
    the second and third runs get the first one's folder."""
    folders = [run_dirs.new_run_dir("smoke", tmp_path, SECOND) for _ in range(3)]
    assert [f.name for f in folders] == [
        "20261124-080321-smoke", "20261124-080321.2-smoke", "20261124-080321.3-smoke"
    ]
    assert all(f.is_dir() for f in folders)
    assert run_dirs.new_run_dir("paper-runs", tmp_path, SECOND).name == "20261124-080321-paper-runs"
    parsed = [run_dirs.RUN_DIR_RE.match(f.name) for f in folders]
    assert [(m["stamp"], m["seq"], m["profile"]) for m in parsed] == [
        ("20261124-080321", None, "smoke"), ("20261124-080321", "2", "smoke"),
        ("20261124-080321", "3", "smoke"),
    ]


def test_runs_of_one_second_are_ordered_by_their_number(tmp_path):
    """The newest run is the highest number of the newest second, ``.10`` after ``.2``; ``check``
    takes each notebook from it, and only the first run of a folder counts as one from empty caches.
    Break: ``run_manifests`` sorting by the folder name (``.10`` before ``.2``) or by the second
    alone."""
    names = ["20261124-080320-smoke", "20261124-080321-smoke", "20261124-080321.2-smoke",
             "20261124-080321.10-smoke"]
    for name in names:
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_text(json.dumps({
            "status": "ok", "timings_s": {"04_reading": 1.0, "total": 1.0},
            "notebooks": {"04_reading.ipynb": {"status": "ok"}}}), encoding="utf-8")
    (tmp_path / "latest-smoke").symlink_to(names[0])
    found = run_dirs.run_manifests("smoke", tmp_path)
    assert [p.parent.name for p, _m in found] == names[::-1]
    assert chk.runs_checked("smoke", tmp_path) == {"04": {"run_id": names[3], "profile": "smoke"}}
    first = [chk._first_run_in_folder(tmp_path / n / "manifest.json") for n in names]
    assert first == [True, False, False, False]


@pytest.mark.slow
def test_the_runner_gives_two_runs_begun_in_one_second_their_own_run(tmp_path, monkeypatch):
    """Two runs of one profile begun in the same second (a frozen clock): two folders, two
    manifests, two run ids; the first ran every notebook (``complete``), the second ``--only 01``
    (``partial``), and the results page calls only the first one complete.
    Break: the runner naming its folder ``<stamp>-<profile>`` with ``mkdir(exist_ok=True)`` (both
    runs write one manifest), or ``outcome`` always ``complete`` for a run that ended ``ok``."""
    root = _root(tmp_path)
    nbdir = root / "notebooks"
    _nb(nbdir / "00_a.ipynb", "x = 1", "y = x + 1")
    _nb(nbdir / "01_b.ipynb", "x = 1", "y = x + 2")
    frozen = type("Frozen", (dt.datetime,), {"now": classmethod(lambda cls, tz=None: SECOND)})
    monkeypatch.setattr(run_dirs, "_dt", types.SimpleNamespace(datetime=frozen))
    for module in (runner, run_dirs):
        monkeypatch.setattr(module, "PATHS", Paths(root))
    monkeypatch.setattr(prov, "PATHS", Paths(root))
    monkeypatch.setenv(config.PROFILE_ENV, "")  # the runner sets it for the kernels: restored after the test
    first = runner.run_notebooks("smoke", notebooks_dir=nbdir, log=lambda s: None)
    second = runner.run_notebooks("smoke", only=["01"], notebooks_dir=nbdir, log=lambda s: None)

    executions = root / "build" / "executions"
    assert (first.extra["run_id"], second.extra["run_id"]) == (
        "20261124-080321-smoke", "20261124-080321.2-smoke"
    )
    on_disk = {d.name: json.loads((d / "manifest.json").read_text()) for d in _run_dirs(executions)}
    assert {name: m["run_id"] for name, m in on_disk.items()} == {
        "20261124-080321-smoke": "20261124-080321-smoke", "20261124-080321.2-smoke": "20261124-080321.2-smoke"
    }
    one, two = on_disk["20261124-080321-smoke"], on_disk["20261124-080321.2-smoke"]
    assert (one["status"], one["outcome"], one["only"]) == ("ok", "complete", None)
    assert one["notebooks_finished"] == ["00_a.ipynb", "01_b.ipynb"] and one["notebooks_not_started"] == []
    assert (two["status"], two["outcome"], two["only"]) == ("ok", "partial", ["01"])
    assert two["notebooks_selected"] == two["notebooks_finished"] == ["01_b.ipynb"]
    assert run_dirs.describe_outcome(two) == "partial: notebook 01 only"
    assert [p.parent.name for p, _m in run_dirs.run_manifests("smoke", executions)] == [
        "20261124-080321.2-smoke", "20261124-080321-smoke"
    ]

    def alone(name: str) -> dict:
        """The check record's ``run`` of a folder of runs holding only the run ``name``."""
        shutil.copytree(executions / name, tmp_path / name / name)
        return chk._run_summary("smoke", tmp_path / name)

    assert rp.runs_phrase(alone("20261124-080321-smoke")) == "one complete run"
    assert rp.runs_phrase(alone("20261124-080321.2-smoke")) == "one run (partial: notebook 01 only)"
    both = chk._run_summary("smoke", executions)  # 01 from the second run, 00 from the first
    assert both["complete"] is False and rp.runs_phrase(both) == "2 runs"


# ----------------------------------------------------------------------------- a run that fails half-way


@pytest.mark.slow
def test_a_run_whose_second_of_three_notebooks_raises(tmp_path):
    """``python -m inferqa_utils run --profile smoke`` over three notebooks, the second of which
    writes its table and raises: the third never starts; the manifest says the run failed in the
    second, which notebooks finished and which never started; ``provenance.json`` records the
    second's table as written by a notebook that did not finish; ``check --only 03`` refuses in one
    line, a whole check FAILs the second's and third's conditions with the reasons below and says
    what the newest run did not finish; the results page calls the run failed, not complete.
    Breaks: the runner going on after a notebook raised (the third starts); ``status`` or
    ``outcome`` always ``ok``/``complete``; ``notebook_status`` left out of the records (the
    second's condition FAILs with "no run checked finished its notebook" instead);
    ``results_page.runs_phrase`` calling any single run "one complete run"."""
    root = _root(tmp_path)
    results, nbdir = root / "results", root / "notebooks"
    dataset = profile("smoke")["dataset_name"]
    t2, t3, t4 = (stages.table(key).file(dataset, "test")
                  for key in ("retrieval_compared", "reranking_compared", "reading_answers"))
    started = root / "third_started"
    _nb(nbdir / "02_first.ipynb", "x = 1", _writes(results / t2, 1.5))
    _nb(nbdir / "03_second.ipynb", "x = 1",
        _writes(results / t3, 2.5) + "\nraise RuntimeError('the second notebook fails')")
    _nb(nbdir / "04_third.ipynb", "x = 1",
        f"from pathlib import Path\nPath({str(started)!r}).write_text('yes')\n" + _writes(results / t4, 3.5))

    done = _cli(root, "run", "--profile", "smoke", "--no-projection")
    assert done.returncode == 1, done.stdout + done.stderr  # not one of the compendium's own errors
    executions = root / "build" / "executions"
    (run_dir,) = _run_dirs(executions)
    run_id = run_dir.name
    assert _error_lines(done.stderr) == [
        f"error: 03_second.ipynb: RuntimeError: the second notebook fails; full traceback in "
        f"{run_dir / '03_second.ipynb'}"
    ]

    # the third notebook never started
    assert not started.exists() and not (results / t4).exists() and not (run_dir / "04_third.ipynb").exists()
    m = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert (m["run_id"], m["status"], m["outcome"]) == (run_id, "failed in 03_second.ipynb", "failed")
    assert m["notebooks_selected"] == ["02_first.ipynb", "03_second.ipynb", "04_third.ipynb"]
    assert m["notebooks_finished"] == ["02_first.ipynb"] and m["notebooks_not_started"] == ["04_third.ipynb"]
    assert {k: v["status"] for k, v in m["notebooks"].items()} == {
        "02_first.ipynb": "ok", "03_second.ipynb": "failed in 03_second.ipynb"
    }
    assert set(m["timings_s"]) == {"02_first", "03_second", "total"}
    assert m["notebooks"]["03_second.ipynb"]["outputs"] == [f"results/{t3}"]
    records = prov.load(results)["results"]
    assert {name: (r["run_id"], r["notebook"], r["notebook_status"]) for name, r in records.items()} == {
        t2: (run_id, "02_first.ipynb", "ok"), t3: (run_id, "03_second.ipynb", "failed in 03_second.ipynb")
    }

    # check --only 03: nothing to check, in one line
    refused = _cli(root, "check", "--profile", "smoke", "--only", "03", "--no-findings", timeout=300)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert _error_lines(refused.stderr) == [
        f"error: no run of profile smoke finished notebook 03 (newest run: {run_id}, failed in "
        "03_second.ipynb); make one with: python -m inferqa_utils run --profile smoke --only 03"
    ]

    # a whole check: 02's number counts, 03's table is refused, 04's is missing
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(yaml.safe_dump({"profiles": {"smoke": {"split": "test", "conditions": [
        {"id": cid, "table": key, "row": {"system": "bm25"}, "column": "v", "expected": value}
        for cid, key, value in (("first", "retrieval_compared", 1.5), ("second", "reranking_compared", 2.5),
                                ("third", "reading_answers", 3.5))
    ]}}}), encoding="utf-8")
    report = tmp_path / "out" / "check_smoke.md"
    report.parent.mkdir()
    lines: list[str] = []
    fails = chk.check("smoke", folder=results, path=matrix, executions=executions, report=report,
                      findings_table=False, log=lines.append)
    assert fails == 2, lines
    assert f"[check] runs checked: notebook 02: run {run_id}" in lines
    assert (f"[check] newest run {run_id}: failed in 03_second.ipynb; notebooks 03, 04 did not finish in "
            "it: their tables count only from a run that finished them") in lines
    rec = rp.load_record(chk.record_path(report))
    assert [(c["id"], c["status"], c["got"], c["why"]) for c in rec["conditions"]] == [
        ("first", "OK", 1.5, ""),
        ("second", "FAIL", 2.5, f"table {t3} was written by run {run_id} (profile smoke) in 03_second.ipynb, "
                                "which did not finish (failed in 03_second.ipynb): rerun it (python -m "
                                "inferqa_utils run --profile smoke --only 03)"),
        ("third", "FAIL", None, f"{t4} not found (run notebook 04)"),
    ]

    # the results page: one run, failed — never "one complete run"
    assert rec["run"]["complete"] is False and rec["run"]["outcomes"] == ["failed in 03_second.ipynb"]
    assert rp.provenance({"smoke": rec}, ["smoke"]) == (
        "*The numbers of smoke do not all come from one complete run at one commit: **smoke** from one run "
        f"(failed in 03_second.ipynb) at {rp._commit(rec['run']['git'])}.*"
    )


# ----------------------------------------------------------------------------- two runs at once


@pytest.mark.slow
def test_two_runs_at_once_in_one_folder_are_told_apart(tmp_path):
    """Run A (profile smoke, notebook 02) writes its table, then starts run B (profile default,
    notebook 03) and waits for it: B writes its table while A's notebook is still running. Each
    run's manifest names the other as writing alongside; A's outputs are its own table only (B filed
    its table itself); both tables' records name the other run, and ``check`` refuses them.
    Breaks: the runner not registering its notebooks (:func:`~inferqa_utils.record.provenance.open_window`)
    or ``finish_window`` ignoring the register (no ``concurrent_runs``: A's notebook is credited
    with B's table, as before); ``_claimed`` left out (A's outputs list B's table)."""
    root = _root(tmp_path)
    results, nbdir = root / "results", root / "notebooks"
    t_a, t_b = "02_concurrent_a.csv", "03_concurrent_b.csv"
    launch = [sys.executable, "-m", "inferqa_utils", "run", "--profile", "default", "--only", "03",
              "--no-projection"]
    _nb(nbdir / "02_launch.ipynb", "x = 1", _writes(results / t_a, 1.5) + (
        "\nimport subprocess\n"
        f"done = subprocess.run({launch!r}, capture_output=True, text=True)\n"
        "assert done.returncode == 0, done.stdout + done.stderr"))
    _nb(nbdir / "03_write.ipynb", "x = 1", _writes(results / t_b, 2.5))

    done = _cli(root, "run", "--profile", "smoke", "--only", "02", "--no-projection")
    assert done.returncode == 0, done.stdout + done.stderr
    executions = root / "build" / "executions"
    (a_path, a), = run_dirs.run_manifests("smoke", executions)
    (b_path, b), = run_dirs.run_manifests("default", executions)
    run_a, run_b = a_path.parent.name, b_path.parent.name
    assert (a["status"], b["status"]) == ("ok", "ok")

    assert a["notebooks"]["02_launch.ipynb"]["concurrent_runs"] == [run_b]
    assert b["notebooks"]["03_write.ipynb"]["concurrent_runs"] == [run_a]
    assert a["notebooks"]["02_launch.ipynb"]["outputs"] == [f"results/{t_a}"]
    assert b["notebooks"]["03_write.ipynb"]["outputs"] == [f"results/{t_b}"]
    records = prov.load(results)["results"]
    assert {name: (r["run_id"], r["concurrent"]) for name, r in records.items()} == {
        t_a: (run_a, [run_b]), t_b: (run_b, [run_a])
    }
    assert prov.check_table(t_a, {"run_id": run_a, "profile": "smoke"}, results)[1] == (
        f"table {t_a} was written by run {run_a} (profile smoke) while run {run_b} also wrote into results/ "
        "and figures/, so which run wrote it cannot be told: rerun it with no other run writing there "
        "(python -m inferqa_utils run --profile smoke --only 02)"
    )
    assert prov.check_table(t_b, {"run_id": run_b, "profile": "default"}, results)[1].startswith(
        f"table {t_b} was written by run {run_b} (profile default) while run {run_a} also wrote"
    )
    # both notebooks ended: nothing is left in the register
    assert json.loads(prov.windows_path(results).read_text(encoding="utf-8"))["windows"] == []


def _folders(tmp_path: Path) -> dict[str, Path]:
    folders = {"results": tmp_path / "results", "figures": tmp_path / "figures"}
    for f in folders.values():
        f.mkdir()
    return folders


def _dead_pid() -> int:
    """The id of a process that has ended (and been reaped)."""
    proc = subprocess.Popen(["true"])
    proc.wait(timeout=60)
    return proc.pid


def test_a_notebook_writing_alongside_another_runs_is_told_apart(tmp_path):
    """The register without a kernel: notebook A begins, notebook B of another process begins, writes
    and ends, then A writes and ends. Each names the other; A's files leave out the one B filed.
    Break: ``_close_locked`` returning only the windows open when A began (B, begun later, missed)."""
    folders = _folders(tmp_path)
    results = folders["results"]
    a = prov.open_window(RUN["run_id"], RUN["notebook"], results)
    before = prov.snapshot(folders)
    b = prov.open_window(OTHER["run_id"], OTHER["notebook"], results, pid=os.getppid())  # a live process
    assert (a["overlaps"], b["overlaps"]) == ([], [RUN["run_id"]])
    (results / "b.csv").write_text("v\n2\n")
    assert prov.finish_window(b, before, OTHER, folders, results) == ([("results", "b.csv")], [RUN["run_id"]])
    (results / "a.csv").write_text("v\n1\n")
    assert prov.finish_window(a, before, RUN, folders, results) == ([("results", "a.csv")], [OTHER["run_id"]])
    data = prov.load(results)["results"]
    assert (data["a.csv"]["run_id"], data["a.csv"]["concurrent"]) == (RUN["run_id"], [OTHER["run_id"]])
    assert (data["b.csv"]["run_id"], data["b.csv"]["concurrent"]) == (OTHER["run_id"], [RUN["run_id"]])
    assert "so which run wrote it cannot be told" in prov.check_table("a.csv", RUN, results)[1]


def test_a_notebook_whose_process_is_gone_or_ended_is_not_writing(tmp_path):
    """A window left open by a runner that was killed (its process gone), and one this process left
    open, do not make a later notebook's files concurrent; the register is pruned to nothing.
    Breaks: ``_alive`` always true; a window this process left open not ended at its next one."""
    folders = _folders(tmp_path)
    results = folders["results"]
    prov.open_window(OTHER["run_id"], OTHER["notebook"], results, pid=_dead_pid())  # killed mid-notebook
    prov.open_window("20261124-070000-smoke", "01_z.ipynb", results)  # this process, never finished
    mine = prov.open_window(RUN["run_id"], RUN["notebook"], results)
    assert mine["overlaps"] == []
    before = prov.snapshot(folders)
    (results / "t.csv").write_text("v\n1\n")
    assert prov.finish_window(mine, before, RUN, folders, results) == ([("results", "t.csv")], [])
    rec, why = prov.check_table("t.csv", RUN, results)
    assert why == "" and "concurrent" not in rec
    assert json.loads(prov.windows_path(results).read_text(encoding="utf-8"))["windows"] == []


# ----------------------------------------------------------------------------- reading a manifest's outcome


def test_the_outcome_of_a_manifest_that_does_not_record_one():
    """Manifests of an older runner and of ``paper-runs import`` carry a status but no outcome: it is
    read off the status and the notebooks that finished against those the profile runs.
    Break: ``run_outcome`` calling every ``ok`` run complete (a run of ``--only 04`` included)."""
    smoke = {"status": "ok", "parameters": {"profile": "smoke"}}
    every = {nb.name: {"status": "ok"} for nb in run_dirs.discover_notebooks()}
    assert run_dirs.run_outcome({**smoke, "notebooks": every}) == "complete"
    only_04 = {**smoke, "notebooks": {"04_reading.ipynb": {"status": "ok"}}}
    assert run_dirs.run_outcome(only_04) == "partial"
    assert run_dirs.describe_outcome(only_04) == "partial: notebook 04 only"
    imported = {"status": "ok", "notebooks": {"09_paper_runs.ipynb": {"status": "ok"}}}
    assert run_dirs.run_outcome(imported, "paper-runs") == "complete"  # the profile runs notebook 09 only
    failed = {"status": "failed in 03_reranking.ipynb", "notebooks": {"02_retrieval.ipynb": {"status": "ok"}}}
    assert (run_dirs.run_outcome(failed), run_dirs.describe_outcome(failed)) == (
        "failed", "failed in 03_reranking.ipynb"
    )
    assert run_dirs.describe_outcome({"status": "running"}) == "not ended (status running)"
    assert run_dirs.run_outcome({}) == "unknown" and run_dirs.describe_outcome({}) == "outcome not recorded"
    assert run_dirs.unfinished_notebooks(failed) == []  # no selection recorded: none known unfinished
    failed["notebooks"]["03_reranking.ipynb"] = {"status": "failed in 03_reranking.ipynb"}
    assert run_dirs.unfinished_notebooks(failed) == ["03"]


def test_the_results_page_calls_one_run_complete_only_when_its_record_says_so():
    """Break: the old rule, any single manifest is "one complete run"."""
    one = {"manifests": ["build/executions/a/manifest.json"], "git": {"commit": "abc1234" + "0" * 33}}
    assert rp.runs_phrase({**one, "complete": True}) == "one complete run"
    assert rp.runs_phrase(one) == "one run (completeness not recorded)"  # a record written before
    assert rp.runs_phrase({**one, "complete": False, "outcomes": ["complete"],
                           "newest_outcome": "failed in 00_quickstart.ipynb"}) == (
        "one run (complete; the newest run: failed in 00_quickstart.ipynb)"
    )
    assert rp.runs_phrase({**one, "manifests": []}) == "no run that finished a notebook"
    assert rp.runs_phrase({}) == "no run manifest"
