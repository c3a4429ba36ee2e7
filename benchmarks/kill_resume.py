"""Nothing lost when killed: a whole run killed with SIGKILL at random moments, then resumed, ends
with the same tables as a run that was never interrupted.

Two project roots are laid out outside the checkout (``INFERQA_ROOT``; the layout of
tests/isolated_root.py: copies of ``notebooks/`` and ``data/``, links to the packaged models, but
every cache the root's own — the LLM generation cache, the persisted KV prefixes and the embedding
vectors start empty in each, so root B resumes only from what its own killed runs left):

A. one uninterrupted ``python -m inferqa_utils run --profile smoke --no-projection``: its wall time
   T and the sha256 of every file of its ``results/smoke/`` (and ``figures/smoke/``);
B. the same command started ``--kills`` times (default 10), each in a new session
   (``start_new_session=True``) and SIGKILLed at a random moment: the runner's process group and
   the group of every process of the root (a papermill kernel runs in a session of its own,
   jupyter_client starts it so; the processes are found by their ``INFERQA_ROOT``), all at once,
   so no clean-up code runs anywhere. Each next run resumes from the caches the killed ones left;
   after the last kill the command runs once more to completion.

The moment of kill i is ``uniform(--min-wait, 0.9 × E_i)`` from a ``random.Random(--seed)``
(default ``inferqa_utils.core.config.SEED``), E_i the work expected to remain: T minus root A's
times of the notebooks that some earlier run of B finished (their work is cached), at least the
wall time of the last run of B that finished by itself (a fully cached rerun). Seconds of start-up
(imports, planning) are part of T, so a kill can land there too. A run that finishes before its
moment is counted and the next one starts.

After each kill: the files of atomic writes and staged folders the killed processes left
(``*.tmp``, ``*.tmp-<pid>``, ``.*.part``, ``.<name>.new-*`` / ``.old-*``, ``tmp-checkpoint-*``;
SQLite's ``-journal`` / ``-wal`` are listed apart, SQLite replays or rolls them back), where
they are (the killed run's own folder, which no later complete run reads, or a cache / build
folder a later run reads) and whether the next run removed them; the killed run's
``manifest.json`` (absent before its first notebook ended, else it must parse and say
``running`` — never ``ok``); the notebook that was running (the manifest's first notebook not
recorded, or the ledger's open ``start``); and that ``results/smoke`` never points into the
killed run. At the end every table of root B's final ``results/smoke/`` must be identical to root
A's: byte for byte (sha256), or, for a CSV table whose bytes differ, cell for cell but in the
run-history columns (:data:`RUN_HISTORY_COLUMNS`: wall times and fine-tuning's resume history,
which differ between any two runs; ``--strict`` counts those as mismatches too). Figures are
compared too; a PNG whose bytes differ but whose pixels are equal is reported as not byte-stable
and left out. Exit 1 on any difference, on any check that failed, or on a run that ended by itself
with an error (its stderr tail is printed).

    .venv/bin/python benchmarks/kill_resume.py [--kills 10] [--seed N] [--profile smoke] [--keep]
        [--out DIR] [--reference OUT/A] [--strict] [--record docs/records/benchmarks/kill_resume.json]

``--reference`` reuses root A of an earlier run kept with ``--keep`` (its T is stored there), to
kill again with another seed without the uninterrupted run.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from isolated_root import COPIED, OWN, _link, _link_entries  # noqa: E402

from inferqa_utils.core.config import SEED  # noqa: E402
from inferqa_utils.record.benchmark_record import RECORD_HELP, record_measurement  # noqa: E402

#: names of what an interrupted atomic write or folder swap leaves (a file or a folder)
TEMP_RE = re.compile(r"(\.tmp$)|(\.tmp-\d+$)|(\.part$)|(^\..+\.(new|old)-\d+-[0-9a-f]+$)"
                     r"|(^tmp-checkpoint-\d+$)")
#: SQLite's own recovery files (replayed or rolled back by SQLite when the database is opened)
SQLITE_RE = re.compile(r"-(journal|wal)$")
#: columns that record how a run went, not what it computed: wall times measured by whichever run
#: computed the artifact (a killed run's work is timed by no one; a fully cached step has no time:
#: inferqa_utils.core.artifacts.cached) and fine-tuning's resume / reuse history. Two uninterrupted
#: runs differ in them too; a table differing only there counts as identical in content
#: (``--strict``: any byte counts)
RUN_HISTORY_COLUMNS = ("seconds/query", "train seconds", "resumed from step", "reused (no training)")
#: the file in root A holding its wall time, for ``--reference``
REFERENCE_FILE = "kill_resume_reference.json"
#: the run folders of build/executions (inferqa_utils.record.run_dirs.RUN_DIR_RE)
RUN_DIR_RE = re.compile(r"^\d{8}-\d{6}(?:\.[1-9]\d*)?-.+$")
#: the views of the record (kept by write_record once the record exists)
VIEWS = {
    "table": {"table": {"rows": "rows", "columns": [
        ["kill", "{kill}"], ["moment (s)", "{moment:.1f}"], ["window (s)", "{window:.0f}"],
        ["running", "{running}"], ["killed run's manifest", "{manifest}"],
        ["files in its folder", "{files}"], ["temporary files left", "{temps}"]]}},
    "text": {"text": [
        "`kill_resume.py --profile {profile} --kills {kills} --seed {seed}`: the uninterrupted run took "
        "**{T:.0f} s** ({T:min} min; root A {reference}); of {kills} runs of a second root, "
        "{finished_early} finished before their moment and the others were SIGKILLed, then one more ran "
        "to completion in {final_s:.0f} s. **{identical} of {tables} tables identical** to the "
        "uninterrupted run's ({byte_identical} byte for byte, {history_only} but for their run-history "
        "columns: wall times, fine-tuning's reuse); figures: {figures_note}. Verdict: **{verdict}**; "
        "the script took {total_s:.0f} s."]},
}


# ------------------------------------------------------------------------------ roots and runs
def make_root(root: Path) -> Path:
    """tests/isolated_root.py's layout (copies of notebooks/ and data/, the root's own results/,
    figures/, build/, a link to each packaged model of the checkout's .cache/models), except that
    every cache is the root's own and empty: nothing is linked to the checkout's .cache/tests."""
    root.mkdir(parents=True)
    for name in COPIED:
        shutil.copytree(ROOT / name, root / name, symlinks=True)
    for name in OWN:
        (root / name).mkdir()
    _link_entries(ROOT / ".cache" / "models", root / ".cache" / "models", skip={"local_models.json"})
    if (ROOT / ".cache" / "hub").is_dir():
        _link(root / ".cache" / "hub", ROOT / ".cache" / "hub")
    (root / ".cache" / "embeddings").mkdir(parents=True)
    return root


def child_env(root: Path) -> dict[str, str]:
    """The environment of a run in ``root``: no INFERQA_* of this shell (no server routing, no
    shared cache), ``INFERQA_ROOT`` and the root's own LLM cache, this checkout on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("INFERQA_")}
    env.update(INFERQA_ROOT=str(root), INFERQA_LLM_CACHE=str(root / ".cache" / "llm" / "cache.sqlite"),
               PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    return env


def start_run(root: Path, profile: str, logs: Path, name: str) -> tuple[subprocess.Popen, Path]:
    """``python -m inferqa_utils run --profile PROFILE --no-projection`` in ``root``, in a new
    session; stdout and stderr to ``logs/<name>.out`` / ``.err``."""
    logs.mkdir(parents=True, exist_ok=True)
    err = logs / f"{name}.err"
    with open(logs / f"{name}.out", "wb") as out, open(err, "wb") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "inferqa_utils", "run", "--profile", profile,
                                 "--no-projection"], cwd=root, env=child_env(root), stdout=out,
                                stderr=fh, start_new_session=True)
    return proc, err


def tail(path: Path, n: int = 40) -> str:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines() if path.exists() else []
    return "\n".join(lines[-n:])


def root_processes(root: Path) -> dict[int, int]:
    """``{pid: pgid}`` of the live processes (zombies left out) whose environment has
    ``INFERQA_ROOT=root``: the runner and everything it started, a kernel in its own session too."""
    needle = f"INFERQA_ROOT={root}".encode()
    found: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            if fields[0] == "Z" or needle not in (d / "environ").read_bytes().split(b"\0"):
                continue
            found[int(d.name)] = int(fields[2])
        except (OSError, ValueError, IndexError):
            continue
    return found


def kill_all(proc: subprocess.Popen, root: Path) -> tuple[int, int, list[int]]:
    """SIGKILL the run: the runner's process group and every other group of the root's processes,
    one right after the other; returns (processes, process groups killed, pids still alive 2 s
    later)."""
    procs = root_processes(root)
    groups = [proc.pid, *sorted({g for g in procs.values() if g != proc.pid})]
    for g in groups:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(g, signal.SIGKILL)
    proc.wait()
    for _ in range(3):  # a process forked between the scan and the kill
        late = root_processes(root)
        for pid in late:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if not late:
            break
        time.sleep(0.2)
    time.sleep(2.0)
    return len(procs), len(groups), sorted(root_processes(root))


# ------------------------------------------------------------------------------ what a run left
def run_dirs(root: Path) -> set[Path]:
    folder = root / "build" / "executions"
    if not folder.is_dir():
        return set()
    return {d for d in folder.iterdir() if RUN_DIR_RE.match(d.name) and d.is_dir() and not d.is_symlink()}


def leftovers(root: Path) -> tuple[list[str], list[str]]:
    """(temporary files / folders of atomic writes, non-empty SQLite journals) under ``root``,
    relative to it; links (the packaged models) are not followed, a temporary folder not entered."""
    temps, sqlite = [], []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        for name in list(dirnames):
            if TEMP_RE.search(name):
                temps.append(f"{(here / name).relative_to(root)}/")
                dirnames.remove(name)
        for name in filenames:
            p = here / name
            if TEMP_RE.search(name):
                temps.append(str(p.relative_to(root)))
            elif SQLITE_RE.search(name) and not p.is_symlink() and p.stat().st_size > 0:
                sqlite.append(str(p.relative_to(root)))
    return sorted(temps), sorted(sqlite)


def manifest_state(run_dir: Path | None) -> tuple[str, dict[str, Any] | None]:
    """What the killed run's manifest says: ``none`` (no manifest yet), ``CORRUPT`` (it does not
    parse: half written), else its status / outcome."""
    if run_dir is None:
        return "no run folder", None
    path = run_dir / "manifest.json"
    if not path.exists():
        return "none yet", None
    try:
        m = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return "CORRUPT", None
    return f"{m.get('status')}/{m.get('outcome')}", m


def running_notebook(run_dir: Path | None, m: dict[str, Any] | None) -> str:
    """The notebook the killed run was in: the manifest's first selected notebook not recorded
    (the manifest is written after each notebook), checked against the ledger's open ``start``."""
    if run_dir is None:
        return "start-up (no run folder yet)"
    opened = None
    ledger = run_dir / "analyses.jsonl"
    if ledger.exists():
        for line in ledger.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if ev.get("event") == "start":
                opened = ev.get("stage")
            elif ev.get("event") == "end" and ev.get("stage") == opened:
                opened = None
    if m is None:
        return f"{opened} (ledger)" if opened else "start-up (no notebook started)"
    done = set(m.get("notebooks") or {})
    pending = [nb for nb in m.get("notebooks_selected") or [] if nb not in done]
    if not pending:
        return "after the last notebook"
    name = pending[0].removesuffix(".ipynb")
    return name if opened == name else f"{name} (not started: between notebooks)"


def published(root: Path, profile: str) -> Path | None:
    link = root / "results" / profile
    return link.resolve() if link.is_symlink() else None


def digests(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` but hidden ones (what run_outputs.output_files lists)."""
    if not folder.is_dir():
        return {}
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.name.startswith(".")}


def hidden_files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob(".*")) if folder.is_dir() else []


def same_pixels(a: Path, b: Path) -> bool:
    from PIL import Image

    with Image.open(a) as x, Image.open(b) as y:
        return x.size == y.size and x.convert("RGBA").tobytes() == y.convert("RGBA").tobytes()


class LoadSampler:
    """The host's 1-minute load average, sampled every ``every`` seconds in a thread while it runs
    (the runs share the cores with whatever else the host does)."""

    def __init__(self, every: float = 10.0) -> None:
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every,), daemon=True)
        self._thread.start()

    def _run(self, every: float) -> None:
        while not self._stop.wait(every if self.samples else 0):
            self.samples.append(os.getloadavg()[0])

    def summary(self) -> str:
        self._stop.set()
        x = self.samples or [os.getloadavg()[0]]
        return (f"load average {min(x):.1f}–{max(x):.1f} (mean {sum(x) / len(x):.1f}) during the runs of "
                f"root B, on {os.cpu_count()} cores")


@dataclass
class Kill:
    """One run of root B and what its kill left."""

    kill: int
    moment: float
    window: float
    ran_s: float = 0.0
    outcome: str = "killed"  # killed | finished before the kill | ERROR (exit N)
    run_id: str = "—"
    running: str = "—"
    manifest: str = "—"
    files: int = 0
    processes: int = 0
    groups: int = 0
    survivors: list[int] = field(default_factory=list)
    temps: list[str] = field(default_factory=list)
    temps_in_run: int = 0
    sqlite: list[str] = field(default_factory=list)
    published: str = "—"
    problems: list[str] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------ the benchmark
def notebook_times(root: Path, profile: str) -> dict[str, float]:
    """Root A's seconds per notebook (its final manifest's timings)."""
    run = published(root, profile)
    m = json.loads((run.parent / "manifest.json").read_text(encoding="utf-8")) if run else {}
    return {k: float(v) for k, v in (m.get("timings_s") or m.get("timings") or {}).items() if k != "total"}


def uninterrupted(root: Path, profile: str, logs: Path) -> float:
    t0 = time.perf_counter()
    proc, err = start_run(root, profile, logs, "A")
    rc = proc.wait()
    t = time.perf_counter() - t0
    if rc != 0:
        print(f"the uninterrupted run failed (exit {rc}); its stderr ends:\n{tail(err)}")
        sys.exit(1)
    (root / REFERENCE_FILE).write_text(json.dumps({"profile": profile, "T": round(t, 1)}) + "\n",
                                       encoding="utf-8")
    return t


def reference(root: Path, profile: str) -> float:
    """T of a root A kept by an earlier run (``--keep``), which ran ``profile``."""
    ref = json.loads((root / REFERENCE_FILE).read_text(encoding="utf-8"))
    if ref["profile"] != profile or published(root, profile) is None:
        raise SystemExit(f"{root} holds no uninterrupted run of profile {profile}")
    return float(ref["T"])


def table_difference(a: Path, b: Path) -> tuple[list[str], list[str]]:
    """(the columns whose cells differ, the run-history ones among them holding a value in A and
    none in B) of two CSV tables; ``["(shape)"]`` when their columns or rows differ, ``["(bytes)"]``
    when every cell is equal but the bytes are not; a JSON table is compared whole."""
    import pandas as pd

    if a.suffix != ".csv":
        return ["(content)"], []
    x, y = (pd.read_csv(p, dtype=str, keep_default_na=False) for p in (a, b))
    if list(x.columns) != list(y.columns) or len(x) != len(y):
        return ["(shape)"], []
    cols = [c for c in x.columns if not (x[c] == y[c]).all()]
    lost = [c for c in cols if c in RUN_HISTORY_COLUMNS and ((x[c] != "") & (y[c] == "")).any()]
    return cols or ["(bytes)"], lost


def kill_once(i: int, root: Path, profile: str, logs: Path, moment: float,
              window: float) -> tuple[Kill, Path]:
    row = Kill(i, moment, window)
    before = run_dirs(root)
    t0 = time.perf_counter()
    proc, err = start_run(root, profile, logs, f"B{i:02d}")
    try:
        rc = proc.wait(timeout=moment)
    except subprocess.TimeoutExpired:
        rc = None
    row.ran_s = time.perf_counter() - t0
    if rc is None:
        row.processes, row.groups, row.survivors = kill_all(proc, root)
        if row.survivors:
            row.problems.append(f"processes alive after the kill: {row.survivors}")
    else:
        row.outcome = "finished before the kill" if rc == 0 else f"ERROR (exit {rc})"
        if rc != 0:
            row.problems.append(f"run {i} ended by itself with exit {rc}; its stderr ends:\n{tail(err)}")
    new = sorted(run_dirs(root) - before)
    run_dir = new[-1] if new else None
    row.run_id = run_dir.name if run_dir else "—"
    row.manifest, m = manifest_state(run_dir)
    row.finished = list((m or {}).get("notebooks_finished") or [])
    row.running = running_notebook(run_dir, m) if rc is None else "—"
    row.files = sum(1 for p in run_dir.rglob("*") if p.is_file()) if run_dir else 0
    row.temps, row.sqlite = leftovers(root)
    rel = run_dir.relative_to(root).as_posix() + "/" if run_dir else None
    row.temps_in_run = sum(1 for t in row.temps if rel and t.startswith(rel))
    target = published(root, profile)
    row.published = target.parent.name if target else "(none)"
    if rc is None:
        if row.manifest == "CORRUPT":
            row.problems.append(f"{rel}manifest.json does not parse (half written)")
        elif m is not None and (m.get("status") == "ok" or m.get("outcome") in ("complete", "partial")):
            row.problems.append(f"the killed run's manifest says {row.manifest}")
        if run_dir is not None and target is not None and run_dir in target.parents:
            row.problems.append(f"results/{profile} points into the killed run {run_dir.name}")
    return row, err


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=10, help="runs of root B to kill (default 10)")
    ap.add_argument("--seed", type=int, default=SEED, help=f"seed of the kill moments (default {SEED})")
    ap.add_argument("--profile", default="smoke", help="the profile run (default smoke)")
    ap.add_argument("--min-wait", type=float, default=2.0, help="earliest kill moment in s (default 2)")
    ap.add_argument("--out", type=Path, default=None, help="work folder (default: a new temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the two roots for inspection")
    ap.add_argument("--reference", type=Path, default=None, metavar="ROOT_A",
                    help="reuse root A of an earlier run kept with --keep (OUT/A) instead of running it "
                         "again")
    ap.add_argument("--strict", action="store_true",
                    help="a table identical but for its run-history columns counts as a mismatch")
    ap.add_argument("--record", metavar="PATH", help=RECORD_HELP)
    a = ap.parse_args(argv)
    t_start = time.perf_counter()
    load = LoadSampler()
    work = (a.out or Path(tempfile.mkdtemp(prefix="inferqa-kill-"))).resolve()
    if ROOT in work.parents or work == ROOT:
        ap.error(f"--out {work} is inside the checkout")
    root_a = a.reference.resolve() if a.reference else make_root(work / "A")
    root_b, logs = make_root(work / "B"), work / "logs"
    print(f"roots: A {root_a}, B {root_b} (logs in {logs})", flush=True)
    failed = False
    try:
        # ---- A: uninterrupted
        T = reference(root_a, a.profile) if a.reference else uninterrupted(root_a, a.profile, logs)
        load.samples.clear()  # root B's runs, whose times the kills depend on
        times = notebook_times(root_a, a.profile)
        run_a = published(root_a, a.profile)
        tables_a, figures_a = digests(run_a), digests(run_a.parent / "figures")
        print(f"A: uninterrupted run {T:.1f} s ({run_a.parent.name}"
              f"{', kept from an earlier run' if a.reference else ''}); {len(tables_a)} tables, "
              f"{len(figures_a)} figures; notebooks: "
              + ", ".join(f"{k} {v:.0f} s" for k, v in times.items()), flush=True)
        # ---- B: killed again and again
        rng = random.Random(a.seed)
        rows: list[Kill] = []
        done: set[str] = set()
        last_full: float | None = None
        for i in range(1, a.kills + 1):
            expected = T - sum(v for k, v in times.items() if k in done)
            if last_full is not None:
                expected = max(expected, last_full)
            window = max(0.9 * expected, a.min_wait + 1.0)
            moment = rng.uniform(a.min_wait, window)
            row, err = kill_once(i, root_b, a.profile, logs, moment, window)
            done |= {nb.removesuffix(".ipynb") for nb in row.finished}
            if row.outcome == "finished before the kill":
                last_full = row.ran_s
            if rows:  # what the previous kill left and this run removed
                gone = [t for t in rows[-1].temps if t not in row.temps]
                if gone:
                    print(f"    run {i} removed {len(gone)} of them: {', '.join(gone)}")
            rows.append(row)
            print(f"B{i:02d}: {row.outcome} at {row.ran_s:.1f} s (drawn {moment:.1f} of window "
                  f"{window:.0f}); run {row.run_id}; running {row.running}; manifest {row.manifest}; "
                  f"{row.files} files; {row.processes} processes in {row.groups} groups killed; "
                  f"results/{a.profile} -> {row.published}", flush=True)
            for t in row.temps:
                where = "killed run's folder" if row.run_id in t else "read by later runs"
                print(f"    left: {t} ({where})")
            for s in row.sqlite:
                print(f"    SQLite journal: {s}")
            for p in row.problems:
                print(f"    PROBLEM: {p}")
            if row.outcome.startswith("ERROR"):
                break
        # ---- B: the final run, to completion
        errored = [r for r in rows if r.outcome.startswith("ERROR")]
        final_s = 0.0
        tables_b: dict[str, str] = {}
        figures_b: dict[str, str] = {}
        run_b = None
        if not errored:
            before = run_dirs(root_b)
            t0 = time.perf_counter()
            proc, err = start_run(root_b, a.profile, logs, "B-final")
            rc = proc.wait()
            final_s = time.perf_counter() - t0
            temps, _ = leftovers(root_b)
            if rows:
                gone = [t for t in rows[-1].temps if t not in temps]
                print(f"final run removed {len(gone)} of the last kill's temporary files"
                      + (f": {', '.join(gone)}" if gone else ""))
            if rc != 0:
                print(f"FINAL RUN FAILED (exit {rc}); its stderr ends:\n{tail(err)}")
                failed = True
            else:
                run_b = published(root_b, a.profile)
                new = sorted(run_dirs(root_b) - before)
                if not new or run_b is None or run_b.parent != new[-1]:
                    print(f"PROBLEM: results/{a.profile} -> {run_b} is not the final run's folder")
                    failed = True
                if run_b is not None:
                    tables_b, figures_b = digests(run_b), digests(run_b.parent / "figures")
                    hidden = hidden_files(run_b)
                    if hidden:
                        print(f"hidden files in the final results folder: {', '.join(hidden)}")
            print(f"B final: {final_s:.1f} s -> {run_b.parent.name if run_b else '—'}; temporary files "
                  f"under root B now: {', '.join(temps) or 'none'}", flush=True)
        # ---- the table
        print()
        head = (f"{'#':>2} | {'moment (s)':>10} | {'window':>6} | {'what was running':<40} | "
                f"{'manifest':<16} | {'files':>5} | {'tmp left':>8} | results/{a.profile} ->")
        print(head)
        print("-" * len(head))
        for r in rows:
            running = r.running if r.outcome == "killed" else r.outcome
            print(f"{r.kill:>2} | {r.ran_s:>10.1f} | {r.window:>6.0f} | {running:<40.40} | "
                  f"{r.manifest:<16} | {r.files:>5} | {len(r.temps):>8} | {r.published}")
        # ---- the comparison
        names = sorted(set(tables_a) | set(tables_b))
        same = [n for n in names if tables_a.get(n) == tables_b.get(n)]
        history: list[str] = []  # differ only in RUN_HISTORY_COLUMNS
        print()
        for n in names:
            if n in same:
                continue
            if n not in tables_b or n not in tables_a:
                print(f"table {n}: missing in {'B' if n not in tables_b else 'A'}")
                continue
            cols, lost = table_difference(run_a / n, run_b / n)
            if set(cols) <= set(RUN_HISTORY_COLUMNS):
                history.append(n)
                print(f"table {n}: bytes differ in run-history columns only ({', '.join(cols)})"
                      + (f"; no value in B where A has one: {', '.join(lost)}" if lost else ""))
            else:
                print(f"table {n}: DIFFERS in {', '.join(cols)}")
        content_same = len(same) + (0 if a.strict else len(history))
        fig_names = sorted(set(figures_a) | set(figures_b))
        fig_same = [n for n in fig_names if figures_a.get(n) == figures_b.get(n)]
        unstable = []
        for n in fig_names:
            if n in fig_same:
                continue
            if n in figures_a and n in figures_b and n.endswith(".png") and same_pixels(
                    run_a.parent / "figures" / n, run_b.parent / "figures" / n):
                unstable.append(n)
                print(f"figure {n}: bytes differ, pixels identical (not byte-stable: left out)")
            else:
                print(f"figure {n}: DIFFERS")
        fig_bad = len(fig_names) - len(fig_same) - len(unstable)
        figures_note = (f"{len(fig_same)} of {len(fig_names)} byte-identical"
                        + (f", {len(unstable)} not byte-stable (pixels identical)" if unstable else "")
                        + (f", {fig_bad} DIFFER" if fig_bad else ""))
        problems = [p for r in rows for p in r.problems]
        early = sum(r.outcome == "finished before the kill" for r in rows)
        killed = sum(r.outcome == "killed" for r in rows)
        total = time.perf_counter() - t_start
        print(f"\n{len(same)} of {len(names)} tables byte-identical"
              + (f", {len(history)} more identical but for their run-history columns "
                 f"({', '.join(RUN_HISTORY_COLUMNS)})" if history else "")
              + f": {content_same} of {len(names)} tables identical"
              + (" (--strict: bytes)" if a.strict else "") + f"; figures: {figures_note}")
        print(f"{killed} runs killed, {early} finished before their moment, {len(errored)} errored; "
              f"{len(problems)} problem(s) after the kills")
        print(f"uninterrupted run T = {T:.1f} s; final resumed run {final_s:.1f} s; "
              f"total wall time {total:.0f} s ({total / 60:.1f} min"
              + (", root A's run not included: --reference" if a.reference else "") + ")")
        conditions = load.summary()
        print(conditions)
        failed = (failed or bool(errored) or bool(problems) or content_same != len(names) or not names
                  or fig_bad > 0)
        for r in errored:
            print(f"\nrun B{r.kill:02d} errored:\n" + "\n".join(r.problems))
        rates = llm_rates(root_a, profile_llm(a.profile))
        if rates:
            print("host LLM rates: " + "; ".join(f"{m} prefill {v['prefill_tok_s']} / decode "
                                                  f"{v['decode_tok_s']} tok/s" for m, v in rates.items()))
        if a.record:
            write_record(a, T, rows, final_s, total, (len(same), len(history), content_same), len(names),
                         figures_note, failed, conditions)
    finally:
        if a.keep:
            print(f"roots kept: {work}")
        else:
            for d in (root_b, logs, *([] if a.reference else [root_a])):
                shutil.rmtree(d, ignore_errors=True)
            with contextlib.suppress(OSError):
                work.rmdir()
    print("RESULT: " + ("FAILED" if failed else "nothing lost"))
    return 1 if failed else 0


def profile_llm(profile: str) -> str:
    """The profile's reader model (the smoke profile's only LLM)."""
    from inferqa_utils.core.config import profile as profile_params

    return str(profile_params(profile)["reader_model"])


def llm_rates(root: Path, model: str) -> dict[str, Any]:
    """This host's rates of ``model``, from the rates cache the projection keeps (a few seconds of
    measuring when the host has none yet); ``{}`` when that fails."""
    code = ("import json, sys; from inferqa_utils.record.projection import host_rates; "
            "print(json.dumps(host_rates([sys.argv[1]], log=lambda s: None)))")
    try:
        out = subprocess.run([sys.executable, "-c", code, model], cwd=root, env=child_env(root),
                             capture_output=True, text=True, timeout=300)
        return json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else {}
    except (subprocess.SubprocessError, ValueError, IndexError):
        return {}


def write_record(a: argparse.Namespace, T: float, rows: list[Kill], final_s: float, total: float,
                 identical: tuple[int, int, int], tables: int, figures_note: str, failed: bool,
                 conditions: str) -> None:
    values = {
        "profile": a.profile, "kills": a.kills, "seed": a.seed, "T": round(T, 1),
        "reference": "kept from an earlier run (--reference)" if a.reference else "run first",
        "finished_early": sum(r.outcome == "finished before the kill" for r in rows),
        "final_s": round(final_s, 1), "total_s": round(total, 1), "byte_identical": identical[0],
        "history_only": identical[1], "identical": identical[2], "tables": tables,
        "figures_note": figures_note, "verdict": "failed" if failed else "nothing lost",
        "rows": [{"kill": r.kill, "moment": round(r.ran_s, 1), "window": round(r.window, 1),
                  "running": r.running if r.outcome == "killed" else r.outcome, "manifest": r.manifest,
                  "files": r.files, "temps": len(r.temps)} for r in rows],
    }
    path = record_measurement(a.record, values, what=f"benchmarks/kill_resume.py: {a.kills} SIGKILLs "
                              f"of a {a.profile} run, then resumed", script="benchmarks/kill_resume.py",
                              llm_models=[profile_llm(a.profile)], load=conditions)
    rec = json.loads(path.read_text(encoding="utf-8"))
    if not rec.get("views"):
        rec["views"] = VIEWS
        path.write_text(json.dumps(rec, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
