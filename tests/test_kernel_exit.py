"""How a notebook's kernel ended, in the run manifest (inferqa_utils.run.kernels, runner).

Fast: no kernel is started. The kernel manager class the runner hands papermill is exercised
with a real child process that dies the way a kernel can (SIGSEGV at exit), papermill's
``execute_notebook`` replaced by a stand-in that "runs" the notebook with that manager class.
tests/test_runner.py runs a real kernel that dies at its exit (slow).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import nbformat

from inferqa_utils.run import kernels, runner

_SEGFAULT = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"


def _died(code: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", code])
    proc.wait(timeout=60)
    return proc


def test_describe_exit():
    assert kernels.describe_exit(0) == 0
    assert kernels.describe_exit(None) is None
    assert kernels.describe_exit(1) == "exit 1"
    assert kernels.describe_exit(-11) == "signal 11 (SIGSEGV)"
    by_runner = kernels.describe_exit(-15, "SIGTERM")
    assert by_runner.startswith("signal 15 (SIGTERM); the runner sent SIGTERM")
    assert kernels.abnormal("signal 11 (SIGSEGV)") and not kernels.abnormal(0) and not kernels.abnormal(None)


def test_each_recording_class_has_its_own_kernels():
    a, b = kernels.recording_manager(), kernels.recording_manager()
    assert issubclass(a, kernels.ExitRecordingKernelManager) and a.started is not b.started
    assert kernels.kernel_exit(a) is None  # no kernel started
    assert a(kernel_name="python3").shutdown_wait_time == kernels.SHUTDOWN_WAIT_S
    km = a(kernel_name="python3")
    km.record_started(_died(_SEGFAULT))
    assert kernels.kernel_exit(a) == "signal 11 (SIGSEGV)" and b.started == []


def _notebook(folder: Path) -> Path:
    folder.mkdir()
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x = 1  # a parameter")
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / "00_only.ipynb"
    nbformat.write(nb, path)
    return path


def _fake_execute(kernel_code: str):
    """papermill.execute_notebook as far as the runner sees it: the cells finish (the output is
    written, nothing raised), the kernel started by the given manager class ends as
    ``kernel_code`` makes it end."""
    def execute_notebook(input_path, output_path, *, kernel_manager_class, **kw):
        km = kernel_manager_class(kernel_name=kw["kernel_name"])
        km.record_started(_died(kernel_code))
        Path(output_path).write_bytes(Path(input_path).read_bytes())

    return execute_notebook


def _run(tmp_path, monkeypatch, kernel_code: str) -> tuple[dict, list[str]]:
    import papermill

    nb = _notebook(tmp_path / "nb")
    monkeypatch.setattr(papermill, "execute_notebook", _fake_execute(kernel_code))
    lines: list[str] = []
    runner.run_notebooks("smoke", out_dir=tmp_path / "exec", notebooks_dir=nb.parent, log=lines.append)
    manifest = json.loads((tmp_path / "exec" / "manifest.json").read_text(encoding="utf-8"))
    return manifest, lines


def test_a_kernel_that_died_after_its_cells_finished_is_recorded_and_warned(tmp_path, monkeypatch):
    manifest, lines = _run(tmp_path, monkeypatch, _SEGFAULT)
    record = manifest["notebooks"]["00_only.ipynb"]
    assert record["status"] == "ok" and manifest["status"] == "ok"  # the cells finished
    assert record["kernel_exit"] == f"signal {int(signal.SIGSEGV)} (SIGSEGV)"
    assert any(line.startswith("[inferqa] warning: the kernel of 00_only.ipynb ended abnormally: signal 11")
               for line in lines), lines


def test_a_kernel_that_exited_normally_is_recorded_without_a_warning(tmp_path, monkeypatch):
    manifest, lines = _run(tmp_path, monkeypatch, "pass")
    assert manifest["notebooks"]["00_only.ipynb"]["kernel_exit"] == 0
    assert not [line for line in lines if "warning" in line]
