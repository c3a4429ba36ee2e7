"""Fault injection: a child process running the real operation is killed with SIGKILL at a bad
moment; nothing finished is lost, and the next run (a fresh process) resumes to the same outputs as
an uninterrupted run in another folder. The label checkpoint of a build (a), the build export and
its folder swap (b), a verification decision (c); fine-tuning (d) runs in
benchmarks/fault_injection.py only (MiniLM training takes minutes of CPU here).

The children and the comparisons are benchmarks/fault_injection.py's (its docstring says how each
moment is hit without a hook in the package). The builds are the smoke-sized embedded build with
``smollm2-135m``; the reference build fills the tests' LLM generation cache, which the killed and
resumed runs read (a later test run reads every reply from it).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "fault_injection.py"


def _load():
    spec = importlib.util.spec_from_file_location("fault_injection", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["fault_injection"] = mod  # dataclasses look their module up here
    spec.loader.exec_module(mod)
    return mod


fi = _load()


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the module: the reference build (made once) and each scenario's folder."""
    return tmp_path_factory.mktemp("fault")


@pytest.fixture()
def env() -> dict[str, str]:
    """The children's environment: the test root and the tests' LLM cache (conftest's)."""
    return fi.child_env(Path(os.environ["INFERQA_ROOT"]))


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
    except json.JSONDecodeError:
        return False
    return True


@pytest.mark.slow
def test_labeling_killed_while_reading_a_question_resumes_from_the_checkpoint(
    work: Path, env: dict[str, str]
):
    """Killed while the labeler reads question 2: question 1's checkpoint line is kept byte for
    byte, the next run labels only the two others (its progress bar says "1 from checkpoint"), and
    the build equals the uninterrupted one."""
    row = fi.labeling_killed_mid_question(work, env)
    kept, final = row.details["kept"], row.details["final"]
    assert len(kept) == 1 and _is_json(kept[0]) and len(final) == 3
    assert final[:1] == kept
    assert "labeling 2 questions (1 from checkpoint)" in row.said, row.said
    assert row.identical and row.details["left"] == []


@pytest.mark.slow
def test_a_cut_checkpoint_line_and_a_killed_repair_lose_no_finished_question(work: Path, env: dict[str, str]):
    """Killed half-way through appending line 2 (a cut last line), then the next run killed
    half-way through rewriting the file without it: the rewrite goes to a temporary file, so the
    checkpoint is still line 1 plus the cut line; the third run drops the cut line, keeps line 1
    and labels the rest: the same build as an uninterrupted run. The killed rewrite's temporary
    file is left beside the checkpoint (ignored by everything that reads it)."""
    row = fi.labeling_killed_mid_line(work, env)
    cut, after, final = row.details["cut"], row.details["after_repair_kill"], row.details["final"]
    assert len(cut) == 2 and _is_json(cut[0]) and not _is_json(cut[1])
    assert after == cut  # the killed repair did not touch the file
    assert final[0] == cut[0] and len(final) == 3 and all(_is_json(x) for x in final)
    assert "labeling 2 questions (1 from checkpoint)" in row.said, row.said
    assert row.identical
    assert all(p.startswith("build/checkpoint/.labels-") and p.endswith(".tmp") for p in row.details["left"])


@pytest.mark.slow
@pytest.mark.parametrize("tag", list(fi.EXPORT_KILLS))
def test_an_export_killed_at_any_moment_leaves_a_whole_build_and_its_checkpoint(
    work: Path, env: dict[str, str], tag: str
):
    """A 2-question build is replaced by the 3-question build, killed while the staged folder is
    written (b1: the old build is untouched), between the swap's two renames (b2: no build folder
    until the next run renames the old one back — it then finds the old build and replaces it), or
    after the new folder came in with the checkpoint still in the old one (b3: the next run moves
    it across and reuses the build). No checkpoint line is lost (the next run labels nothing: no
    labeling progress bar), the result equals the uninterrupted build, and no temporary folder is
    left."""
    row = fi.export_killed(work, env, tag)
    old, killed, final = row.details["old_lines"], row.details["killed_lines"], row.details["final"]
    assert len(old) == 2 and final[: len(old)] == old and len(final) == 3
    if tag == "b1":
        assert row.left == "old build intact, checkpoint 2 -> 3 lines" and killed == final
        assert any(s.startswith("replacing the build in") for s in row.said), row.said
    elif tag == "b2":
        assert row.left == "no build folder"
        assert any(s.startswith("replacing the build in") for s in row.said), row.said
    else:
        assert row.left == "new build, no checkpoint/"
        assert any("holds a build with these parameters" in s and "reusing it" in s for s in row.said), (
            row.said
        )
    assert not any(s.startswith("labeling") for s in row.said), row.said  # every question from the checkpoint
    assert row.identical and row.details["left"] == []


def test_a_decision_killed_while_saved_keeps_the_earlier_ones(work: Path, env: dict[str, str]):
    """Five decisions saved one by one (save_decision), killed half-way through writing the third:
    the file still holds the first two and loads; saving them all again gives a file identical to
    the uninterrupted run's. The killed write's temporary file is left beside it."""
    row = fi.decisions_killed(work, env)
    first = {"q1": {"Venice": True, "La Serenissima": False}}
    assert row.details["kept"] == first, row.left
    assert "decisions file holds 2 decision(s); saving all 5 again" in row.said
    assert row.identical
    assert all(p.startswith(".verification.json.") and p.endswith(".tmp") for p in row.details["left"])
