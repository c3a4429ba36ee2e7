"""A process that started Pyserini's JVM ends cleanly (inferqa_utils.retrieval.java.jvm_options).

Each case runs in a fresh interpreter (the JVM starts once per process) whose working directory
is an empty folder: a JVM crash report ``hs_err_pid<pid>.log`` must never land there.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

_START = """
import ctypes, os, signal, sys, time
from inferqa_utils.retrieval.java import ensure_java
ensure_java()
from jnius import autoclass
autoclass("java.lang.System").getProperty("java.version")
"""

#: a SIGTERM (what jupyter sends a kernel slow to exit) while the interpreter is still running,
#: then the interpreter's own exit(): without -Xrs the JVM's SIGTERM handler runs a second exit
#: concurrently (exit code 143, or SIGSEGV in libc and a crash report when the two collide)
_SIGTERM_AT_EXIT = _START + """
os.kill(os.getpid(), signal.SIGTERM)
t = time.perf_counter()
while time.perf_counter() - t < 0.5:
    pass
ctypes.CDLL(None).exit(0)
"""

#: a segmentation fault in native code while the JVM runs: the JVM's crash handler writes a report
_NATIVE_CRASH = _START + "ctypes.string_at(0)\n"

_PYSERINI = """
import sys
sys.path.insert(0, {tests!r})
from tiny_corpus import CORPUS
from inferqa_utils.retrieval.pyserini_bm25 import PyseriniBM25Retriever
r = PyseriniBM25Retriever(CORPUS, {index!r})
assert r.search_one("penguins flightless")[0][0] == "p3"
"""


def _run(code: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    cwd, root = tmp_path / "cwd", tmp_path / "root"
    cwd.mkdir()
    root.mkdir()
    env = {**os.environ, "INFERQA_ROOT": str(root), "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)
    return proc, cwd, root


def _crash_reports(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("hs_err_pid*.log"))


def test_sigterm_at_exit_ends_the_process_by_the_signal_without_a_crash_report(tmp_path):
    proc, cwd, root = _run(_SIGTERM_AT_EXIT, tmp_path)
    assert proc.returncode == -signal.SIGTERM, (proc.returncode, proc.stderr[-2000:])
    assert _crash_reports(cwd) == [] and _crash_reports(root) == []


def test_a_crash_report_goes_to_build_jvm_not_the_working_directory(tmp_path):
    proc, cwd, root = _run(_NATIVE_CRASH, tmp_path)
    assert proc.returncode != 0
    assert _crash_reports(cwd) == []
    reports = list((root / "build" / "jvm").glob("hs_err_pid*.log"))
    assert len(reports) == 1, proc.stdout[-2000:]


@pytest.mark.parametrize("repeat", [1, 2])
def test_pyserini_process_exits_zero_without_a_crash_report(tmp_path, repeat):
    code = _PYSERINI.format(tests=str(REPO / "tests"), index=str(tmp_path / "index"))
    proc, cwd, root = _run(code, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _crash_reports(cwd) == [] and _crash_reports(root) == []
