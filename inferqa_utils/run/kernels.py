"""How each notebook's kernel ended, for the run manifest (:func:`inferqa_utils.run.runner.run_notebooks`).

papermill returns normally when every cell finished, even if the kernel process then died at its
exit (a segmentation fault while the interpreter shut down, say). The runner hands papermill a
kernel manager class made by :func:`recording_manager` (nbclient's ``kernel_manager_class``);
each kernel manager of that class keeps the kernel's process, and :func:`kernel_exit` reads its
exit status after the notebook: ``0``, ``"exit N"`` or ``"signal N (NAME)"``, with a note when the
signal was jupyter's own (a kernel that had not exited after its shutdown request gets SIGTERM,
then SIGKILL).

The kernel gets :data:`SHUTDOWN_WAIT_S` seconds to exit after the shutdown request instead of
jupyter's 5 s (SIGTERM after half of it): a kernel holding large models on a loaded machine can
take longer than 2.5 s to finish, and a SIGTERM there is the runner's doing, not the notebook's.
"""

from __future__ import annotations

import signal
import subprocess
from typing import Any, ClassVar

from jupyter_client.manager import AsyncKernelManager
from traitlets import Float

#: seconds between a kernel's shutdown request and SIGKILL (SIGTERM after half of it)
SHUTDOWN_WAIT_S = 60.0
#: jupyter_client's shutdown states in which it signalled the kernel itself
_SIGNALLED_BY_JUPYTER = {"SigtermRequest": "SIGTERM", "SigkillRequest": "SIGKILL"}


class ExitRecordingKernelManager(AsyncKernelManager):
    """An :class:`AsyncKernelManager` that appends itself to its class's ``started`` list when its
    kernel has started, keeping the kernel's process (``kernel_process``; ``None`` when the
    provisioner has none). Use a subclass from :func:`recording_manager`, one per notebook."""

    shutdown_wait_time = Float(SHUTDOWN_WAIT_S, config=True,
                               help="seconds a kernel gets to exit after its shutdown request")
    started: ClassVar[list[ExitRecordingKernelManager]] = []
    kernel_process: subprocess.Popen[Any] | None = None

    async def _async_post_start_kernel(self, **kw: Any) -> None:
        await super()._async_post_start_kernel(**kw)
        self.record_started(getattr(self.provisioner, "process", None))

    def record_started(self, process: subprocess.Popen[Any] | None) -> None:
        """Keep the kernel's ``process`` (the local provisioner's) and list this manager as started."""
        self.kernel_process = process
        type(self).started.append(self)


def recording_manager() -> type[ExitRecordingKernelManager]:
    """A fresh :class:`ExitRecordingKernelManager` subclass with its own, empty ``started`` list."""
    return type("ExitRecordingKernelManager", (ExitRecordingKernelManager,), {"started": []})


def describe_exit(returncode: int | None, signalled_by_jupyter: str | None = None) -> int | str | None:
    """``0``; ``"exit N"``; ``"signal N (NAME)"`` (a negative ``returncode``, as :mod:`subprocess`
    reports a process killed by a signal); ``None`` when unknown. ``signalled_by_jupyter`` (e.g.
    ``"SIGTERM"``) adds that jupyter sent that signal because the kernel had not exited."""
    if returncode is None:
        return None
    if returncode == 0 and not signalled_by_jupyter:
        return 0
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "unknown signal"
        text = f"signal {-returncode} ({name})"
    else:
        text = f"exit {returncode}"
    if signalled_by_jupyter:
        text += (
            f"; the runner sent {signalled_by_jupyter}: the kernel had not exited after its shutdown request"
        )

    return text


def kernel_exit(manager_class: type[ExitRecordingKernelManager]) -> int | str | None:
    """How the last kernel started by ``manager_class`` ended (:func:`describe_exit`); ``None`` when
    none was started or its process is unknown or still running."""
    if not manager_class.started:
        return None
    km = manager_class.started[-1]
    proc = km.kernel_process
    code = proc.poll() if proc is not None else None
    status = getattr(getattr(km, "_shutdown_status", None), "value", None)
    return describe_exit(code, _SIGNALLED_BY_JUPYTER.get(str(status)))


def abnormal(exit_status: int | str | None) -> bool:
    """True for an exit status of :func:`kernel_exit` that is neither ``0`` nor unknown."""
    return exit_status not in (0, None)
