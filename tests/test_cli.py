"""The command line's guard rails (``python -m inferqa_utils``, inferqa_utils/__main__.py).

Fast: no kernel is started and no model loaded. papermill's ``execute_notebook`` is replaced by a
stand-in wherever a run gets that far: one that fails the test (a refused run must stop before
any notebook runs) or one that raises what papermill raises for a notebook whose cell failed.
What a command writes goes to the test root (tests/conftest.py) or to ``tmp_path``.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from isolated_root import CHECKOUT

from inferqa_utils.__main__ import DEFAULT_PAGE_PROFILES, main, report_error
from inferqa_utils.core import config
from inferqa_utils.core.config import (
    PATHS,
    Paths,
    declared_profile_names,
    profile,
    profile_names,
    require_input,
)
from inferqa_utils.core.errors import PROJECT_ERRORS, MissingInputError, ParameterError, UnknownProfileError
from inferqa_utils.record import run_dirs
from inferqa_utils.run import runner
from inferqa_utils.run.notebook_params import check_overrides, declared_parameters

NOTEBOOKS = run_dirs.discover_notebooks()
#: profiles no test runs: ``check`` finds no run of them in the test root
NEVER_RUN = "paper"


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``python -m inferqa_utils ARGS`` on the checkout's package, in the test root."""
    env = {**os.environ, "PYTHONPATH": str(CHECKOUT), "INFERQA_ROOT": str(PATHS.root)}
    return subprocess.run([sys.executable, "-m", "inferqa_utils", *args], capture_output=True, text=True,
                          env=env, cwd=PATHS.root, timeout=timeout)


def _error_line(err: str) -> str:
    """The one line a refused command prints on stderr (asserting it is one line)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("error: "), err
    return lines[0]


@pytest.fixture
def no_notebook_runs(monkeypatch):
    """papermill's ``execute_notebook`` failing the test: nothing may run."""
    import papermill

    monkeypatch.setenv(config.PROFILE_ENV, "")  # restored after the test, should a run start

    def execute_notebook(*args, **kwargs):
        raise AssertionError(f"a notebook ran: {args[:1]}")

    monkeypatch.setattr(papermill, "execute_notebook", execute_notebook)


# ------------------------------------------------------------------------------ 1. --profile choices

def test_profile_choices_are_the_profiles_of_profiles_yaml():
    assert list(declared_profile_names()) == profile_names()


@pytest.mark.parametrize("command", [["run"], ["release"], ["check"], ["inspect", "emb_loc_05"]])
def test_a_profile_typo_is_refused_by_argparse_listing_the_choices(command, capsys, no_notebook_runs):
    with pytest.raises(SystemExit) as exc:
        main([*command, "--profile", "defualt"])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert "argument --profile: invalid choice: 'defualt' (choose from " in err, err
    assert all(f"'{name}'" in err for name in profile_names()) and '"unknown profile' not in err


# ------------------------------------------------------------------------------ 2. -p overrides

def test_the_parameters_cells_read_without_papermill_give_papermills_names():
    for nb in NOTEBOOKS:
        assert set(declared_parameters(nb)) == set(runner.notebook_parameters(nb)), nb.name


@pytest.mark.parametrize(
    "params, words",
    [
        (["n_tset=5"], ["-p n_tset=5:", "declares n_tset", "did you mean n_test (01_dataset_construction)"]),
        (
            ["n_test=abc"],
            [
                "-p n_test=abc:", "expected an integer or null", "n_test = 48 in 01_dataset_construction",
                "got a string",
            ],
        ),
        (["ks=[1,3]"], ["-p ks=[1, 3]:", "(--only 01)", "04_reading does (add 04 to --only)"]),
    ],
)
def test_an_override_no_notebook_takes_is_refused_before_anything_runs(
    params, words, capsys, no_notebook_runs
):
    executions = sorted(PATHS.executions.glob("*")) if PATHS.executions.is_dir() else []
    args = ["run", "--profile", "smoke", "--only", "01"]
    for p in params:
        args += ["-p", p]
    assert main(args) == 2
    line = _error_line(capsys.readouterr().err)
    assert all(w in line for w in words), line
    assert (sorted(PATHS.executions.glob("*")) if PATHS.executions.is_dir() else []) == executions


def _profiles() -> dict[str, dict]:
    return {name: profile(name) for name in profile_names()}


@pytest.mark.parametrize("override, fitted", [
    ({"n_test": 5}, {"n_test": 5}),
    ({"n_test": None}, {"n_test": None}),                      # the smoke profile sets null
    ({"max_candidates": 7}, {"max_candidates": 7}),            # default None, a profile sets an integer
    ({"label_splits": None}, {"label_splits": None}),          # the comment says None
    ({"parametric_models": None}, {"parametric_models": None}),
    ({"release": None}, {"release": None}),
    ({"ks": [1, 2]}, {"ks": [1, 2]}),
    ({"optimal_readers": ["smollm2-135m"]}, {"optimal_readers": ["smollm2-135m"]}),
    ({"overwrite": True}, {"overwrite": True}),
    ({"alpha": 1}, {"alpha": 1}),                              # an integer where a float is taken
    ({"ft_learning_rate": "1e-5"}, {"ft_learning_rate": 1e-5}),  # YAML 1.1 reads 1e-5 as a string
])
def test_overrides_of_a_type_the_parameter_takes_pass(override, fitted):
    assert check_overrides(override, NOTEBOOKS, profiles=_profiles()) == fitted


@pytest.mark.parametrize(
    "override, words",
    [
        ({"n_test": "abc"}, "expected an integer or null"),
        (
            {"max_candidates": "x"},
            "expected an integer or null (max_candidates = None in 01_dataset_construction; "
            "profile triviahg: 5)",
        ),
        ({"ks": 3}, "expected a list of integers"),
        ({"ks": [1, "x"]}, "got a list holding a string (x)"),
        ({"overwrite": 1}, "expected true or false"),
        ({"split": 1}, "expected a string"),
        ({"ft_positives": [1.5]}, "expected a list of integers"),
        ({"judge_modle": "x"}, "did you mean judge_model (notebooks 00, 01, 02, 04, 05, 06, 07)"),
        ({"zzz": 1}, "no notebook of this run declares zzz, nor a similar name"),
    ],
)
def test_overrides_of_another_type_or_name_are_refused_in_one_line(override, words):
    with pytest.raises(ParameterError) as exc:
        check_overrides(override, NOTEBOOKS, profiles=_profiles())
    assert words in str(exc.value) and "\n" not in str(exc.value)


# ------------------------------------------------------------------------------ 3. profile-aware hints

def test_a_missing_input_names_the_command_with_the_runs_profile(tmp_path, monkeypatch):
    monkeypatch.setenv(config.PROFILE_ENV, "triviahg")  # a notebook's kernel under `run --profile triviahg`
    with pytest.raises(MissingInputError) as exc:
        require_input(tmp_path / "manifest.json", "01_dataset_construction", "the built dataset")
    assert "(python -m inferqa_utils run --profile triviahg --only 01)" in str(exc.value)
    monkeypatch.delenv(config.PROFILE_ENV)
    with pytest.raises(MissingInputError) as exc:
        require_input(tmp_path / "manifest.json", "01_dataset_construction", "the built dataset")
    assert "(python -m inferqa_utils run --only 01)" in str(exc.value)


def test_inspect_without_a_build_names_the_command_with_the_profile(capsys):
    assert not (PATHS.datasets / profile("triviahg")["dataset_name"]).exists()
    assert main(["inspect", "Q_1", "--profile", "triviahg"]) == 2
    line = _error_line(capsys.readouterr().err)
    assert (
        "run notebook 01_dataset_construction (python -m inferqa_utils run --profile triviahg --only 01)"
        in line
    )


# ------------------------------------------------------------------------------ 4. one-line errors

def _notebook(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x = 1  # a parameter")
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell, nbformat.v4.new_code_cell("load_built('x')")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, folder / name)
    return folder / name


@pytest.fixture
def failing_notebook(tmp_path, monkeypatch):
    """A run root in ``tmp_path`` holding one notebook, whose cell raises what the test sets
    (``failing_notebook["ename"]``, ``["evalue"]``) as papermill reports it."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    _notebook(tmp_path / "notebooks", "00_fails.ipynb")
    for module in (runner, run_dirs):
        monkeypatch.setattr(module, "PATHS", Paths(tmp_path))
    monkeypatch.setenv(config.PROFILE_ENV, "")  # the runner sets it for the kernels: restored after the test
    raised = {"ename": "MissingInputError", "evalue": "missing input x: run notebook 01 first\n(second line)"}

    def execute_notebook(input_path, output_path, **kw):
        Path(output_path).write_bytes(Path(input_path).read_bytes())
        raise PapermillExecutionError(
            1, 2, "load_built('x')", raised["ename"], raised["evalue"],
            ["\x1b[0;31m----\x1b[0m", f"{raised['ename']}  Traceback (most recent call last)"],
        )

    monkeypatch.setattr(papermill, "execute_notebook", execute_notebook)
    raised["executions"] = tmp_path / "build" / "executions"
    return raised


def test_a_projects_error_inside_a_notebook_is_one_line_with_the_executed_copy(failing_notebook, capsys):
    assert main(["run", "--profile", "smoke"]) == 2
    line = _error_line(capsys.readouterr().err)
    executed = next(
        p for p in failing_notebook["executions"].glob("*-smoke/00_fails.ipynb") if not p.parent.is_symlink()
    )
    assert line == (f"error: 00_fails.ipynb: MissingInputError: missing input x: run notebook 01 first "
                    f"(second line); full traceback in {executed}")


def test_another_error_inside_a_notebook_is_one_line_and_exit_code_1(failing_notebook, capsys):
    failing_notebook.update(ename="ZeroDivisionError", evalue="division by zero")
    assert main(["run", "--profile", "smoke"]) == 1
    line = _error_line(capsys.readouterr().err)
    assert line.startswith("error: 00_fails.ipynb: ZeroDivisionError: division by zero; full traceback in ")
    manifest = json.loads(next(failing_notebook["executions"].glob("*-smoke/manifest.json")).read_text())
    assert manifest["status"] == "failed in 00_fails.ipynb"


def test_errors_are_one_line_without_quotes(capsys):
    assert report_error(UnknownProfileError("unknown profile 'x'; choose one of a, b")) == 2
    assert report_error(KeyError("a key")) == 2
    assert report_error(MissingInputError("missing\n  input")) == 2
    assert capsys.readouterr().err.splitlines() == ["error: unknown profile 'x'; choose one of a, b",
                                                    "error: a key", "error: missing input"]


def test_the_project_error_names_are_every_error_class_of_the_package():
    """A kernel reports an exception by class name: PROJECT_ERRORS must hold every subclass of
    InferQAError defined in the package (found in its source, so nothing is imported)."""
    bases: dict[str, set[str]] = {}
    for path in (CHECKOUT / "inferqa_utils").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases[node.name] = {
                    b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases
                }
    found = {"InferQAError"}
    while new := {name for name, bs in bases.items() if bs & found and name not in found}:
        found |= new
    assert found == set(PROJECT_ERRORS)


# ------------------------------------------------------------------------------ 5. check without a run

@pytest.mark.parametrize("extra, command", [
    ([], f"python -m inferqa_utils run --profile {NEVER_RUN}"),
    (["--only", "04"], f"python -m inferqa_utils run --profile {NEVER_RUN} --only 04"),
])
def test_check_without_a_run_says_so_in_one_line(extra, command, capsys):
    assert main(["check", "--profile", NEVER_RUN, "--no-findings", *extra]) == 2
    out, err = capsys.readouterr()
    line = _error_line(err)
    assert line.startswith(f"error: no run of profile {NEVER_RUN} to check") and line.endswith(command), line
    assert "FAIL" not in out


def test_no_run_message_names_a_run_that_finished_nothing(tmp_path):
    from inferqa_utils.verdicts import check as chk

    run = tmp_path / "20261124-100000-smoke"
    run.mkdir()
    (run / "manifest.json").write_text(json.dumps({"status": "failed in 00_quickstart.ipynb",
                                                   "timings_s": {"00_quickstart": 3.0, "total": 3.0}}))
    assert "ended well (newest run: 20261124-100000-smoke, failed in 00_quickstart.ipynb)" in \
        chk.no_run_message("smoke", executions=tmp_path)
    (run / "manifest.json").write_text(json.dumps({"status": "ok", "timings_s": {"00_quickstart": 3.0},
                                                   "notebooks": {"00_quickstart.ipynb": {"status": "ok"}}}))
    assert chk.no_run_message("smoke", executions=tmp_path) is None
    assert "finished notebook 04 " in chk.no_run_message("smoke", ["04"], executions=tmp_path)


# ------------------------------------------------------------------------------ 6. --help is fast

HEAVY = ("pandas", "numpy", "torch", "yaml", "papermill", "matplotlib", "llama_cpp", "sentence_transformers")


def test_help_imports_nothing_heavy():
    """The parser and every subcommand's ``--help``: none of the heavy libraries is imported."""
    code = ("import sys\nfrom inferqa_utils.__main__ import build_parser, main\n"
            "for cmd in ([], *([c] for c in build_parser()._subparsers._group_actions[0].choices)):\n"
            "    try:\n        main([*cmd, '--help'])\n    except SystemExit:\n        pass\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)\n")
    env = {**os.environ, "PYTHONPATH": str(CHECKOUT), "INFERQA_ROOT": str(PATHS.root)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=PATHS.root, timeout=60
    )
    assert out.returncode == 0 and out.stderr.strip().splitlines()[-1] == "[]", out.stderr
    for cmd in ("run", "release", "check", "inspect", "results-page"):
        assert f"python -m inferqa_utils {cmd} [-h]" in out.stdout


def test_the_results_page_help_names_its_default_profiles():
    from inferqa_utils.verdicts.results_page import DEFAULT_PROFILES

    assert tuple(DEFAULT_PROFILES) == DEFAULT_PAGE_PROFILES


# ------------------------------------------------------------------------------ 7. inspect QID

@pytest.fixture(scope="module")
def inspect_build():
    """The embedded release installed as a test dataset in the test root, with a stored run, a
    reading and an EM pattern of one test question with a label-2 passage; removed afterwards."""
    from inferqa_utils import stages
    from inferqa_utils.construction.release import install_release
    from inferqa_utils.teach.inspector import QuestionInspector

    name = "cli-inspect-test"
    install_release("embedded", name, overwrite=True, log=lambda s: None)
    ins = QuestionInspector(name)
    qid = ins.default_question()
    rel = sorted(p for p, label in ins.dataset.qrels[qid].items() if label == 2)
    other = sorted(p.pid for p in ins.dataset.passages_of(qid) if p.pid not in rel)
    runs = stages.run_dir(name, stages.Corpus.SUPPORTING)
    runs.mkdir(parents=True, exist_ok=True)
    (runs / "bm25.trec").write_text("".join(f"{qid} Q0 {p} {r} {10 - r} bm25\n"
                                            for r, p in enumerate([other[0], rel[0], other[1]], 1)))
    answers = stages.READING_ANSWERS.path(name, "test")
    answers.parent.mkdir(parents=True, exist_ok=True)
    answers.write_text(f"qid,setting,system,k,union,reader,answer,em,judged\n"
                       f"{qid},pipeline,bm25,3,norm,smollm2-135m,a guessed answer,0,\n", encoding="utf-8")
    yield name, qid, rel[0]
    shutil.rmtree(PATHS.datasets / name, ignore_errors=True)
    shutil.rmtree(runs.parent, ignore_errors=True)
    answers.unlink(missing_ok=True)


@pytest.fixture
def inspect_profile(inspect_build, monkeypatch):
    """The default profile's dataset made the test dataset (for ``inspect --profile default``)."""
    monkeypatch.setattr(config, "profile", lambda name: {"dataset_name": inspect_build[0], "split": "test"})
    return inspect_build


def test_inspect_prints_the_questions_report(inspect_profile, capsys):
    _name, qid, rel = inspect_profile
    assert main(["inspect", qid, "--width", "100"]) == 0
    out = capsys.readouterr().out
    from inferqa_utils.sources import load_source

    q = load_source("embedded").questions[qid]
    assert out.startswith(f"{qid} · {q.question[:40]}") and f"gold: {q.answers[0]}" in out
    for heading in ("01 · hints", "01 · parametric filter", "01 · passages", "02 · 03 · 05 · 07 · retrieval",
                    "04 · reading"):
        assert f"\n{heading} — " in out, heading
    assert f"  {rel}  " in out and "reason: not in top-3 convergence" in out  # a passage, a dropped hint
    assert "ranks: 2" in out and "answer: a guessed answer" in out  # where bm25 ranks it, what was read
    assert (
        "note: no reranked run: run notebook 03_reranking (python -m inferqa_utils run --profile default "
        "--only 03)" in " ".join(out.split())
    )  # the note, wrapped
    assert max(len(line) for line in out.splitlines()) <= 100


def test_inspect_an_unknown_question_names_close_matches(inspect_profile, capsys):
    name, qid, _ = inspect_profile
    typo = qid[:-2] + qid[-1]  # emb_hum_03 -> emb_hum_3
    assert main(["inspect", typo]) == 2
    line = _error_line(capsys.readouterr().err)
    assert line.startswith(f"error: question '{typo}' is not in the built dataset '{name}'") and \
        f"close matches: {qid}" in line, line


def test_inspect_runs_as_a_command():
    out = _cli("inspect", "no_such_question", "--profile", "triviahg")
    assert out.returncode == 2 and "run --profile triviahg --only 01" in _error_line(out.stderr)
