"""Runs that cannot mix (inferqa_utils.run.runner, record.run_dirs, record.run_outputs, check, results_page).

A run id is unique even when two runs begin within one second; a run writes its tables into its own
folder, so two runs at once never share one; a run whose notebook raises stops there, its manifest
says how far it got, ``check`` refuses the tables of the notebooks it did not finish and the results
page never calls it complete; a partial run starts from the tables of the profile's newest run and
names the run each came from; a complete run is published as ``results/<profile>``.

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
from inferqa_utils.record import run_dirs
from inferqa_utils.run import runner
from inferqa_utils.verdicts import check as chk
from inferqa_utils.verdicts import results_page as rp

#: the second every run of the frozen clock begins in
SECOND = dt.datetime(2026, 11, 24, 8, 3, 21)


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


def _writes(name: str, value: float) -> str:
    """Notebook source writing the one-row table ``system,v`` = ``bm25,<value>`` as ``results/<name>``
    of the run (:data:`inferqa_utils.core.config.PATHS`, which points at the run's folder)."""
    return ("from inferqa_utils.core.config import PATHS\nPATHS.results.mkdir(parents=True, exist_ok=True)\n"
            f"(PATHS.results / {name!r}).write_text('system,v\\nbm25,{value}\\n')")


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
    assert chk.checked_run("smoke", tmp_path)[0].name == names[3]
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
    second, which notebooks finished and which never started, and lists the second's table among
    its outputs with its status; nothing is published under ``results/``; ``check --only 03`` finds
    no run that ended well, in one line; a check of that run by its id FAILs the second's and
    third's conditions with the reasons below and says what the newest run did not finish; the
    results page calls the run failed, not complete.
    Breaks: the runner going on after a notebook raised (the third starts); ``status`` or
    ``outcome`` always ``ok``/``complete``; a failed notebook's status not consulted (the second's
    condition is OK); ``results_page.runs_phrase`` calling any single run "one complete run"."""
    root = _root(tmp_path)
    nbdir = root / "notebooks"
    dataset = profile("smoke")["dataset_name"]
    t2, t3, t4 = (stages.table(key).file(dataset, "test")
                  for key in ("retrieval_compared", "reranking_compared", "reading_answers"))
    started = root / "third_started"
    _nb(nbdir / "02_first.ipynb", "x = 1", _writes(t2, 1.5))
    _nb(nbdir / "03_second.ipynb", "x = 1",
        _writes(t3, 2.5) + "\nraise RuntimeError('the second notebook fails')")
    _nb(nbdir / "04_third.ipynb", "x = 1",
        f"from pathlib import Path\nPath({str(started)!r}).write_text('yes')\n" + _writes(t4, 3.5))

    done = _cli(root, "run", "--profile", "smoke", "--no-projection")
    assert done.returncode == 1, done.stdout + done.stderr  # not one of the compendium's own errors
    executions = root / "build" / "executions"
    (run_dir,) = _run_dirs(executions)
    run_id, results = run_dir.name, run_dir / "results"
    assert _error_lines(done.stderr) == [
        f"error: 03_second.ipynb: RuntimeError: the second notebook fails; full traceback in "
        f"{run_dir / '03_second.ipynb'}"
    ]

    # the third notebook never started; the run's tables are in its own folder, none published
    assert not started.exists() and not (results / t4).exists() and not (run_dir / "04_third.ipynb").exists()
    assert sorted(p.name for p in results.iterdir()) == sorted([t2, t3])
    assert list((root / "results").iterdir()) == []
    m = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert (m["run_id"], m["status"], m["outcome"]) == (run_id, "failed in 03_second.ipynb", "failed")
    assert m["notebooks_selected"] == ["02_first.ipynb", "03_second.ipynb", "04_third.ipynb"]
    assert m["notebooks_finished"] == ["02_first.ipynb"] and m["notebooks_not_started"] == ["04_third.ipynb"]
    assert {k: (v["status"], v["outputs"]) for k, v in m["notebooks"].items()} == {
        "02_first.ipynb": ("ok", [f"results/{t2}"]),
        "03_second.ipynb": ("failed in 03_second.ipynb", [f"results/{t3}"]),
    }
    assert set(m["timings_s"]) == {"02_first", "03_second", "total"}

    # check --only 03: nothing to check, in one line
    refused = _cli(root, "check", "--profile", "smoke", "--only", "03", "--no-findings", timeout=300)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert _error_lines(refused.stderr) == [
        f"error: no run of profile smoke ended well (newest run: {run_id}, failed in "
        "03_second.ipynb); make one with: python -m inferqa_utils run --profile smoke --only 03"
    ]

    # a check of the failed run by its id: 02's number counts, 03's table is refused, 04's is missing
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(yaml.safe_dump({"profiles": {"smoke": {"split": "test", "conditions": [
        {"id": cid, "table": key, "row": {"system": "bm25"}, "column": "v", "expected": value}
        for cid, key, value in (("first", "retrieval_compared", 1.5), ("second", "reranking_compared", 2.5),
                                ("third", "reading_answers", 3.5))
    ]}}}), encoding="utf-8")
    report = tmp_path / "out" / "check_smoke.md"
    report.parent.mkdir()
    lines: list[str] = []
    fails = chk.check("smoke", path=matrix, executions=executions, report=report, run_id=run_id,
                      findings_table=False, log=lines.append)
    assert fails == 2, lines
    assert any(x.startswith(f"[check] run checked: {run_id} (failed in 03_second.ipynb") for x in lines)
    assert (f"[check] newest run {run_id}: failed in 03_second.ipynb; notebooks 03, 04 did not finish in "
            "it: their tables count only from a run that finished them") in lines
    rec = rp.load_record(chk.record_path(report))
    assert [(c["id"], c["status"], c["got"], c["why"]) for c in rec["conditions"]] == [
        ("first", "OK", 1.5, ""),
        ("second", "FAIL", 2.5, f"table {t3} was written by 03_second.ipynb in run {run_id}, "
                                "which did not finish (failed in 03_second.ipynb): rerun it (python -m "
                                "inferqa_utils run --profile smoke --only 03)"),
        ("third", "FAIL", None, f"{t4} not found (run notebook 04)"),
    ]

    # the results page: one run, failed — never "one complete run"
    assert rec["run"]["complete"] is False and rec["run"]["outcomes"] == ["failed in 03_second.ipynb"]
    assert rp.runs_phrase(rec["run"]) == "one run (failed in 03_second.ipynb)"


# ----------------------------------------------------------------------------- two runs at once; partial runs


@pytest.mark.slow
def test_two_runs_at_once_write_into_their_own_folders(tmp_path):
    """Run A (profile smoke, notebook 02) writes its table, then starts run B (profile default,
    notebook 03) and waits for it: B writes its table while A's notebook is still running. Each
    run's folder holds its own table only, each manifest lists its own table, and the results
    folder of the checkout holds neither.
    Break: the kernels not told the run's folder (``INFERQA_RUN_DIR`` left out of
    ``kernel_environment``): both tables land in ``results/``."""
    root = _root(tmp_path)
    nbdir = root / "notebooks"
    t_a, t_b = "02_concurrent_a.csv", "03_concurrent_b.csv"
    launch = [sys.executable, "-m", "inferqa_utils", "run", "--profile", "default", "--only", "03",
              "--no-projection"]
    _nb(nbdir / "02_launch.ipynb", "x = 1", _writes(t_a, 1.5) + (
        "\nimport subprocess\n"
        f"done = subprocess.run({launch!r}, capture_output=True, text=True)\n"
        "assert done.returncode == 0, done.stdout + done.stderr"))
    _nb(nbdir / "03_write.ipynb", "x = 1", _writes(t_b, 2.5))

    done = _cli(root, "run", "--profile", "smoke", "--only", "02", "--no-projection")
    assert done.returncode == 0, done.stdout + done.stderr
    executions = root / "build" / "executions"
    (a_path, a), = run_dirs.run_manifests("smoke", executions)
    (b_path, b), = run_dirs.run_manifests("default", executions)
    assert (a["status"], b["status"]) == ("ok", "ok")
    assert a["notebooks"]["02_launch.ipynb"]["outputs"] == [f"results/{t_a}"]
    assert b["notebooks"]["03_write.ipynb"]["outputs"] == [f"results/{t_b}"]
    assert sorted(p.name for p in (a_path.parent / "results").iterdir()) == [t_a]
    assert sorted(p.name for p in (b_path.parent / "results").iterdir()) == [t_b]
    assert list((root / "results").iterdir()) == []


@pytest.mark.slow
def test_a_complete_run_is_published_and_a_partial_run_inherits_its_tables(tmp_path):
    """A complete run of two notebooks is published as ``results/smoke`` (a link to its tables); a
    later ``--only 03`` starts from a copy of the first run's tables, lists them as inherited from
    it, rewrites 03's, and is not published (``results/smoke`` still names the complete run);
    ``check`` reads the partial run, counting 02's table as the first run's.
    Breaks: ``_inherit`` skipped for partial runs (03 cannot find 02's table and raises); ``publish``
    called for every run that ended ``ok``."""
    root = _root(tmp_path)
    nbdir = root / "notebooks"
    dataset = profile("smoke")["dataset_name"]
    t2, t3 = (stages.table(key).file(dataset, "test") for key in ("retrieval_compared", "reranking_compared"))
    _nb(nbdir / "02_first.ipynb", "x = 1", _writes(t2, 1.5))
    _nb(nbdir / "03_second.ipynb", "x = 1",
        "from inferqa_utils.core.config import PATHS\n"
        f"v = (PATHS.results / {t2!r}).read_text().split()[-1].split(',')[1]\n" + _writes(t3, 2.5))
    assert _cli(root, "run", "--profile", "smoke", "--no-projection").returncode == 0
    executions = root / "build" / "executions"
    (first,) = _run_dirs(executions)
    link = root / "results" / "smoke"
    assert link.is_symlink() and link.resolve() == (first / "results").resolve()
    assert (link / t2).read_text() == "system,v\nbm25,1.5\n"

    done = _cli(root, "run", "--profile", "smoke", "--only", "03", "--no-projection")
    assert done.returncode == 0, done.stdout + done.stderr
    (second,) = [d for d in _run_dirs(executions) if d != first]
    m = json.loads((second / "manifest.json").read_text(encoding="utf-8"))
    assert m["outcome"] == "partial"
    assert m["inherited"] == {f"results/{t2}": first.name, f"results/{t3}": first.name}
    assert m["notebooks"]["03_second.ipynb"]["outputs"] == [f"results/{t3}"]
    assert link.resolve() == (first / "results").resolve()
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(yaml.safe_dump({"profiles": {"smoke": {"split": "test", "conditions": [
        {"id": cid, "table": key, "row": {"system": "bm25"}, "column": "v", "expected": value}
        for cid, key, value in (("first", "retrieval_compared", 1.5), ("second", "reranking_compared", 2.5))
    ]}}}), encoding="utf-8")
    report = tmp_path / "check_smoke.md"
    assert chk.check("smoke", path=matrix, executions=executions, report=report, findings_table=False,
                     log=lambda _line: None) == 0
    rec = json.loads(chk.record_path(report).read_text(encoding="utf-8"))
    assert [(c["run_checked"]["run_id"], c["written_by"]["run_id"]) for c in rec["conditions"]] == [
        (second.name, first.name), (second.name, second.name)]


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
