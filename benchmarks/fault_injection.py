"""Fault injection: a process killed with SIGKILL at a bad moment loses nothing, and the next run
resumes to the same result as an uninterrupted run.

Four places where a user's work lives, each run for real in a child process (``sys.executable``,
this script's ``child`` mode) on a tiny input and killed with ``os.kill(pid, SIGKILL)``:

(a) **labeling** of a build (:func:`~inferqa_utils.construction.build.build_dataset`, checkpoint
    ``checkpoint/labels-<key>.jsonl``): killed while the labeler reads question 2; killed half-way
    through appending a checkpoint line, then killed again half-way through the next run's repair
    of that cut line;
(b) the build **export** (:mod:`inferqa_utils.construction.export_build`, :mod:`inferqa_utils.core.atomic`):
    killed while ``manifest.json`` is half written in the staged folder, between the two renames of
    the swap (no build folder at all), and after the new folder came in but before the
    ``checkpoint/`` moved across;
(c) a verification **decision** (:func:`~inferqa_utils.construction.verification.save_decision`):
    killed half-way through writing the third of five decisions;
(d) **fine-tuning** (:mod:`inferqa_utils.finetune.training`, MiniLM bi-encoder): a model of other
    parameters is in the folder; the new training is killed after its first checkpoint, and
    between the renames that swap the finished model in.

The build is the smoke-sized embedded build: 3 questions, 2 hints (4 passages each), labeler,
judge and parametric model ``smollm2-135m`` on one thread, LLM replies from the generation cache
(``INFERQA_LLM_CACHE``: the reference run fills it, so the killed and resumed runs read the same
replies).

The moment is hit deterministically, with no hook in the package: the child wraps a few functions
of its own process — ``open``/``os.fdopen`` (a write to the named file writes half its bytes,
flushes them to the file and stops), ``Path.rename`` (stops right after a given rename),
``label_question`` (stops when question n starts), a Trainer callback (stops after the n-th
checkpoint) — prints ``FAULT-POINT <what>`` and waits; the parent reads that line and kills it.
Then the operation runs again in a fresh process, and its outputs are compared byte for byte
(sha256 of every exported file; ``manifest.json`` without run times, LLM counters and the output
paths; checkpoint records without their ``seconds``; the decisions file; the model's files) with
those of an uninterrupted run in another folder. One line per kill:

    .venv/bin/python benchmarks/fault_injection.py [--only a b c d] [--out DIR] [--keep]

``--out`` defaults to a new temporary folder (removed unless ``--keep``); the script sets
``INFERQA_ROOT`` to a test root laid out there (tests/isolated_root.py), so nothing is written into
the checkout; tests/test_fault_injection.py runs (a)–(c) through the same functions.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(__file__).resolve()
TINY = "smollm2-135m"
#: the line a child prints when it reached the kill point (then it waits to be killed)
FAULT_LINE = "FAULT-POINT"
#: the decisions a person saves in the verification widget, in order (c)
DECISIONS: list[tuple[str, str, bool]] = [("q1", "Venice", True), ("q1", "La Serenissima", False),
                                          ("q2", "Jupiter", True), ("q2", "the gas giant", False),
                                          ("q3", "Mirror", True)]
#: what a resumed run says about what it found (printed lines that matter)
RESUME_PATTERNS = (
    r"labeling \d+ questions \(\d+ from checkpoint\)",
    r"holds a build with these parameters[^\n]*",
    r"replacing the build in \S+",
    r"decisions file holds \d+ decision\(s\)[^\n]*",
    r"\[finetune\][^\n]*(reused|resuming[^\n]*|stays until[^\n]*|replaced)",
)


# ------------------------------------------------------------------------------ the child process
def _stop(what: str) -> None:
    """Announce the kill point and wait to be killed."""
    print(f"{FAULT_LINE} {what}", flush=True)
    while True:
        time.sleep(60)


def _original_name(name: str) -> str:
    """The file an atomic temporary ``.<name>.<random>.tmp`` (write_text_atomic) stands for."""
    if name.startswith(".") and name.endswith(".tmp") and name.count(".") >= 3:
        return name[1:name.rindex(".", 0, len(name) - 4)]
    return name


class _HalfWriter:
    """A text file whose first write puts half its bytes in the file, flushes and stops."""

    def __init__(self, fh: Any, what: str) -> None:
        self._fh, self._what = fh, what

    def __enter__(self) -> _HalfWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self._fh.close()

    def write(self, s: str) -> int:
        self._fh.write(s[: len(s) // 2])
        self._fh.flush()
        os.fsync(self._fh.fileno())
        _stop(f"{self._what} half written")
        return len(s)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fh, name)


def _install_write_fault(pattern: str, nth: int) -> None:
    """The ``nth`` opening for writing of a file named like ``pattern`` (fnmatch; an atomic
    temporary of such a file counts) becomes a :class:`_HalfWriter`."""
    import builtins

    count = {"n": 0}
    real_open, real_fdopen = builtins.open, os.fdopen

    def hit(path: str, mode: str) -> bool:
        if not any(c in mode for c in "wax+") or not fnmatch.fnmatch(
            _original_name(os.path.basename(path)), pattern
        ):
            return False
        count["n"] += 1
        return count["n"] == nth

    def fault_open(file: Any, mode: str = "r", *a: Any, **kw: Any) -> Any:
        fh = real_open(file, mode, *a, **kw)
        if isinstance(file, (str, os.PathLike)) and hit(os.fspath(file), mode):
            return _HalfWriter(fh, os.path.basename(os.fspath(file)))
        return fh

    def fault_fdopen(fd: int, mode: str = "r", *a: Any, **kw: Any) -> Any:
        path = os.readlink(f"/proc/self/fd/{fd}")
        fh = real_fdopen(fd, mode, *a, **kw)
        return _HalfWriter(fh, os.path.basename(path)) if hit(path, mode) else fh

    builtins.open = io.open = fault_open
    os.fdopen = fault_fdopen


def _install_rename_fault(kind: str, name: str) -> None:
    """Stop right after a rename that takes folder ``name`` away (``kind="away"``) or brings a
    folder in as ``name`` (``kind="in"``)."""
    real = Path.rename

    def rename(self: Path, target: Any) -> Path:
        out = real(self, target)
        if (kind == "away" and self.name == name) or (kind == "in" and Path(target).name == name):
            _stop(f"renamed {self.name} -> {Path(target).name}")
        return out

    Path.rename = rename  # type: ignore[method-assign]


def _install_labeling_fault(nth: int) -> None:
    """Stop when the labeling of the ``nth`` question (of this run) starts."""
    from inferqa_utils.construction import labeling

    real, count = labeling.label_question, {"n": 0}

    def label_question(q: Any, *a: Any, **kw: Any) -> Any:
        count["n"] += 1
        if count["n"] == nth:
            _stop(f"labeling question {q.qid}")
        return real(q, *a, **kw)

    labeling.label_question = label_question


def install_fault(at: str | None) -> None:
    """``write:<pattern>:<n>``, ``renamed-away:<name>``, ``renamed-in:<name>``, ``labeling:<n>``
    (``checkpoint:<n>`` is the fine-tuning child's own)."""
    if not at:
        return
    kind, _, rest = at.partition(":")
    if kind == "write":
        pattern, _, n = rest.rpartition(":")
        _install_write_fault(pattern, int(n))
    elif kind in ("renamed-away", "renamed-in"):
        _install_rename_fault(kind.split("-")[1], rest)
    elif kind == "labeling":
        _install_labeling_fault(int(rest))
    elif kind != "checkpoint":
        raise ValueError(f"unknown fault point {at!r}")


def build_config(out: Path, n: int = 3) -> Any:
    """The smoke-sized embedded build (module docstring) into ``out``."""
    from inferqa_utils.construction.build_config import BuildConfig

    return BuildConfig(
        source="embedded", name="fault", max_questions=n, k_hints=2,
        labelers=[TINY],
        judge_model=TINY,
        convergence_model=TINY,
        parametric_models=[TINY],
        parametric_repeats=1, difficulty_embedder=None, corpus_all_source=False,
        output_dir=str(out),
        verification_file=str(out.parent / f"{out.name}-verification.json"),
    )


def child_build(out: str, n: int = 3) -> None:
    from inferqa_utils.construction.build import build_dataset
    from inferqa_utils.llm import load_llm

    res = build_dataset(build_config(Path(out), n), progress=True, overwrite=True,
                        llm_loader=lambda name: load_llm(name, n_threads=1))
    print(f"labels {res.manifest['counts']['labels']}", flush=True)


def child_decide(path: str) -> None:
    from inferqa_utils.construction.verification import load_decisions, save_decision

    have = load_decisions(path)
    print(f"decisions file holds {sum(len(v) for v in have.values())} decision(s); saving all "
          f"{len(DECISIONS)} again", flush=True)
    for qid, answer, accepted in DECISIONS:
        save_decision(path, qid, answer, accepted)


FT_TOPICS = {
    "qa": (
        "Which iron tower stands in Paris?",
        [
            "The Eiffel Tower is an iron lattice tower in Paris.",
            "Gustave Eiffel's company built the Paris tower in 1889.",
        ],
    ),
    "qb": (
        "Which planet is called the Red Planet?",
        ["Mars looks red because of iron oxide dust.", "The red planet Mars has two moons."],
    ),
    "qc": (
        "Which bird cannot fly and lives in Antarctica?",
        ["Emperor penguins live on the ice of Antarctica.", "Penguins are flightless seabirds of the south."],
    ),
    "qd": (
        "Which instrument is played with a bow?",
        [
            "The violin is a string instrument played with a bow.",
            "A cello is bowed and held between the knees.",
        ],
    ),
}


def child_finetune(folder: str, learning_rate: float, at: str | None) -> None:
    """Train the tiny MiniLM bi-encoder into ``folder`` (four topics, two positives each)."""
    from transformers import TrainerCallback

    from inferqa_utils.finetune import TrainConfig, sample_examples, train_biencoder
    from inferqa_utils.finetune.job import TrainJob
    from inferqa_utils.ir.datamodel import Dataset, Hint, Passage, Question

    questions, passages, qrels = {}, {}, {}
    for qid, (text, hints) in FT_TOPICS.items():
        questions[qid] = Question(qid, text, ["x"], [Hint(h) for h in hints])
        qrels[qid] = {}
        for i in range(3):
            pid = f"{qid}_p{i}"
            passages[pid] = Passage(pid, qid, (i % 2,), hints[i % 2] + f" ({i})")
            qrels[qid][pid] = 2 if i == 0 else 1
    ds = Dataset("fault-ft", questions, passages, qrels, splits={"train": ["qa", "qb", "qc"], "test": ["qd"]})
    train = ds.splits["train"]
    ex = sample_examples(ds, train, 2, negative_qids=[*train, "qd"], seed=1)
    cfg = TrainConfig(
        epochs=1, batch_size=2, learning_rate=learning_rate, max_seq_length=32, checkpoint_steps=1,
        freeze_embeddings=True,
    )
    callbacks = []
    if at and at.startswith("checkpoint:"):
        nth = int(at.split(":")[1])

        class StopAfterSave(TrainerCallback):
            def on_save(self, args: Any, state: Any, control: Any, **kw: Any) -> Any:
                if state.global_step >= nth:
                    _stop(f"checkpoint-{state.global_step} saved")
                return control

        callbacks.append(StopAfterSave())
    m = train_biencoder(ds, ex, TrainJob("FT-fault", folder, n_positives=2), cfg, progress=False,
                        callbacks=callbacks)
    print(f"trained {m.steps} steps (resumed from {m.resumed_from}, cached {m.cached})", flush=True)


def child_main(argv: Sequence[str]) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("op", choices=["build", "decide", "finetune"])
    ap.add_argument("target")
    ap.add_argument("--at", default=None)
    ap.add_argument("--n", type=int, default=3)
    ap.add_argument("--lr", type=float, default=5e-5)
    a = ap.parse_args(argv)
    install_fault(a.at)
    if a.op == "build":
        child_build(a.target, a.n)
    elif a.op == "decide":
        child_decide(a.target)
    else:
        child_finetune(a.target, a.lr, a.at)


# ------------------------------------------------------------------------------ the parent
@dataclass
class ChildRun:
    """One child process: whether it was killed at its fault point, and what it printed."""

    killed: bool
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def said(self) -> list[str]:
        """The lines of :data:`RESUME_PATTERNS` it printed (stdout and stderr; each once)."""
        text = self.stdout + "\n" + self.stderr
        found: list[str] = []
        for pat in RESUME_PATTERNS:
            for m in re.finditer(pat, text):
                if m.group(0) not in found:
                    found.append(m.group(0))
        return found


def run_child(op: str, target: Path, env: dict[str, str], at: str | None = None, timeout: float = 900,
              extra: Sequence[str] = ()) -> ChildRun:
    """Run ``op`` in a child (``nice``-less: the caller's niceness is inherited); with ``at``, kill
    it with SIGKILL as soon as it prints :data:`FAULT_LINE` (an error if it ends without)."""
    cmd = [sys.executable, str(SCRIPT), "child", op, str(target), *extra, *(["--at", at] if at else [])]
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+", encoding="utf-8") as err:
        proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, text=True, env=env,
            cwd=str(ROOT),
        )
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        lines, killed = [], False
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.append(line)
                if at and line.startswith(FAULT_LINE):
                    os.kill(proc.pid, signal.SIGKILL)
                    killed = True
                    break
            proc.wait()
            lines.append(proc.stdout.read())
        finally:
            timer.cancel()
        err.seek(0)
        stderr = err.read()
    run = ChildRun(killed, proc.returncode, "".join(lines), stderr, time.perf_counter() - t0)
    if at and not killed:
        raise RuntimeError(
            f"{op} never reached {at!r} (exit {proc.returncode}):\n{run.stdout}\n{stderr[-3000:]}"
        )
    if not at and proc.returncode != 0:
        raise RuntimeError(f"{op} failed (exit {proc.returncode}):\n{run.stdout}\n{stderr[-3000:]}")
    return run


def child_env(root: Path, llm_cache: Path | None = None) -> dict[str, str]:
    """The environment of a child: ``INFERQA_ROOT`` = ``root``, this checkout first on the path."""
    env = dict(
        os.environ,
        INFERQA_ROOT=str(root),
        PYTHONPATH=os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
        HF_HUB_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
    )
    if llm_cache is not None:
        env["INFERQA_LLM_CACHE"] = str(llm_cache)
    for var in [v for v in env if v.startswith(("INFERQA_LLM_SERVER", "INFERQA_EMBED_SERVER"))]:
        del env[var]
    return env


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


#: manifest fields that differ between two runs of the same build (times, LLM counters, where)
VOLATILE = ("timings_s", "step_costs", "llm_stats", "inputs_sha256")


def build_digest(folder: Path) -> dict[str, str]:
    """sha256 of every file of a build folder: the manifest without :data:`VOLATILE` fields and
    output paths, checkpoint records without their ``seconds``, every other file as it is; hidden
    temporaries (:func:`leftovers`) are listed apart."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if not p.is_file() or p.name.startswith("."):
            continue
        rel = str(p.relative_to(folder))
        if rel == "manifest.json":
            m = json.loads(p.read_text(encoding="utf-8"))
            for k in VOLATILE:
                m.pop(k, None)
            m["parameters"] = {
                k: v for k, v in m["parameters"].items() if k not in ("output_dir", "verification_file")
            }
            out[rel] = hashlib.sha256(json.dumps(m, sort_keys=True).encode()).hexdigest()
        elif rel.startswith("checkpoint/"):
            recs = [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines()]
            out[rel] = hashlib.sha256(
                json.dumps(
                    [{k: v for k, v in r.items() if k != "seconds"} for r in recs], sort_keys=True
                ).encode()
            ).hexdigest()
        else:
            out[rel] = sha256(p)
    return out


def tree_sha(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` (exact bytes)."""
    return {str(p.relative_to(folder)): sha256(p) for p in sorted(folder.rglob("*")) if p.is_file()}


def model_sha(folder: Path) -> dict[str, str]:
    """:func:`tree_sha` of a trained model folder without ``README.md`` (the model card
    sentence-transformers writes records the training's wall times)."""
    return {k: v for k, v in tree_sha(folder).items() if k != "README.md"}


def export_sha(folder: Path) -> dict[str, str]:
    """:func:`tree_sha` of a build folder without its ``checkpoint/`` (the export's own files)."""
    return (
        {k: v for k, v in tree_sha(folder).items() if not k.startswith("checkpoint/")}
        if folder.is_dir()
        else {}
    )


def leftovers(folder: Path) -> list[str]:
    """Hidden temporary entries beside ``folder`` or anywhere in it (``.<name>.new-…``, ``.old-…``,
    ``.next``, ``.tmp``), relative to its parent."""
    found = [*folder.parent.iterdir(), *(folder.rglob(".*") if folder.is_dir() else [])]
    return sorted(str(p.relative_to(folder.parent)) for p in found
                  if p.name.startswith(".") and any(t in p.name for t in (".new-", ".old-", ".next", ".tmp")))


@dataclass
class Row:
    """One kill: where, what the killed run left, what the resumed run printed, identical or not."""

    place: str
    where: str
    left: str
    said: list[str]
    identical: bool
    details: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


def checkpoint_lines(folder: Path) -> list[str]:
    files = sorted((folder / "checkpoint").glob("labels-*.jsonl")) if folder.is_dir() else []
    return files[0].read_text(encoding="utf-8").splitlines(keepends=True) if files else []


def reference_build(work: Path, env: dict[str, str]) -> Path:
    """The uninterrupted build (made once per ``work`` folder; it fills the LLM cache)."""
    ref = work / "reference" / "build"
    if not (ref / "manifest.json").exists():
        run_child("build", ref, env)
    return ref


def labeling_killed_mid_question(work: Path, env: dict[str, str]) -> Row:
    """(a) killed while the labeler reads question 2 (question 1's line is in the checkpoint)."""
    ref = reference_build(work, env)
    t0 = time.perf_counter()
    out = work / "a1" / "build"
    run_child("build", out, env, at="labeling:2")
    kept = checkpoint_lines(out)
    resumed = run_child("build", out, env)
    return Row(
        "a labeling",
        "labelling question 2",
        f"{len(kept)} checkpoint line(s)",
        resumed.said,
        build_digest(out) == build_digest(ref),
        {"kept": kept, "final": checkpoint_lines(out), "left": leftovers(out)},
        time.perf_counter() - t0,
    )


def labeling_killed_mid_line(work: Path, env: dict[str, str]) -> Row:
    """(a) killed half-way through appending checkpoint line 2, then the next run killed half-way
    through its repair of that cut line (the file rewritten without it); a third run finishes."""
    ref = reference_build(work, env)
    t0 = time.perf_counter()
    out = work / "a2" / "build"
    run_child("build", out, env, at="write:labels-*.jsonl:2")
    cut = checkpoint_lines(out)
    run_child("build", out, env, at="write:labels-*.jsonl:1")  # the repair of the cut line
    after = checkpoint_lines(out)
    resumed = run_child("build", out, env)
    left = (f"{len(cut) - 1} line(s) + a cut one; the killed repair left "
            + ("the file as it was" if after == cut else f"{len(after)} line(s), changed"))
    return Row(
        "a labeling", "appending checkpoint line 2, then repairing that cut line (each half written)", left,
        resumed.said,
        build_digest(out) == build_digest(ref),
        {"cut": cut, "after_repair_kill": after, "final": checkpoint_lines(out), "left": leftovers(out)},
        time.perf_counter() - t0,
    )


#: the export's kill points: tag → (fault point, where)
EXPORT_KILLS = {"b1": ("write:manifest.json:1", "writing the staged folder (manifest.json half written)"),
                "b2": ("renamed-away:build", "between the swap's renames (no build folder)"),
                "b3": ("renamed-in:build", "new folder in place, checkpoint/ not moved across yet")}


def export_killed(work: Path, env: dict[str, str], tag: str) -> Row:
    """(b) an older build (2 questions) is replaced by the 3-question build, killed at
    :data:`EXPORT_KILLS` ``[tag]``."""
    ref = reference_build(work, env)
    at, where = EXPORT_KILLS[tag]
    t0 = time.perf_counter()
    out = work / tag / "build"
    run_child("build", out, env, extra=["--n", "2"])
    old, old_lines = export_sha(out), checkpoint_lines(out)
    run_child("build", out, env, at=at)
    lines = checkpoint_lines(out)
    state = (
        "no build folder"
        if not out.exists()
        else f"old build intact, checkpoint {len(old_lines)} -> {len(lines)} lines"
        if export_sha(out) == old
        else "new build, no checkpoint/"
        if not lines
        else "build folder changed"
    )
    resumed = run_child("build", out, env)
    return Row("b export", where, state, resumed.said, build_digest(out) == build_digest(ref),
               {"old_lines": old_lines, "killed_lines": lines, "final": checkpoint_lines(out),
                "left": leftovers(out)}, time.perf_counter() - t0)


def decisions_killed(work: Path, env: dict[str, str]) -> Row:
    """(c) five decisions saved one by one; killed half-way through writing the third."""
    from inferqa_utils.construction.verification import load_decisions

    t0 = time.perf_counter()
    ref = work / "c-reference" / "verification.json"
    ref.parent.mkdir(parents=True, exist_ok=True)
    run_child("decide", ref, env)
    path = work / "c" / "verification.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    run_child("decide", path, env, at="write:verification.json:3")
    try:
        kept: dict[str, Any] | None = load_decisions(path)
        left = f"{sum(len(v) for v in kept.values())} decision(s), file valid"
    except Exception as e:  # reported in the table
        kept, left = None, f"unreadable: {type(e).__name__}"
    resumed = run_child("decide", path, env)
    return Row("c decisions", "writing decision 3 of 5 (half written)", left, resumed.said,
               sha256(path) == sha256(ref), {"kept": kept, "left": leftovers(path)}, time.perf_counter() - t0)


#: fine-tuning's kill points: tag → (fault point, where)
FINETUNE_KILLS = {"d1": ("checkpoint:1", "training the new model (after its checkpoint-1)"),
                  "d2": ("renamed-away:FT-fault", "between the renames swapping the finished new model in")}


def finetune_killed(work: Path, env: dict[str, str], tag: str) -> Row:
    """(d) a model of another learning rate is in the folder; the new training is killed at
    :data:`FINETUNE_KILLS` ``[tag]``; compared with the new model trained uninterrupted."""
    ref = work / "d-reference" / "FT-fault"
    if not (ref / "model").is_dir():
        run_child("finetune", ref, env)
    at, where = FINETUNE_KILLS[tag]
    t0 = time.perf_counter()
    folder = work / tag / "FT-fault"
    run_child("finetune", folder, env, extra=["--lr", "1e-4"])
    old = tree_sha(folder / "model")
    run_child("finetune", folder, env, at=at)
    state = ("old model intact" if (folder / "model").is_dir() and tree_sha(folder / "model") == old else
             "no model folder" if not folder.exists() else "model changed")
    resumed = run_child("finetune", folder, env)
    same = model_sha(folder / "model") == model_sha(ref / "model")
    return Row(
        "d fine-tuning", where, state, resumed.said, same,
        {"left": leftovers(folder)},
        time.perf_counter() - t0,
    )


SCENARIOS: dict[str, list[Callable[[Path, dict[str, str]], Row]]] = {
    "a": [labeling_killed_mid_question, labeling_killed_mid_line],
    "b": [lambda w, e, t=t: export_killed(w, e, t) for t in EXPORT_KILLS],
    "c": [decisions_killed],
    "d": [lambda w, e, t=t: finetune_killed(w, e, t) for t in FINETUNE_KILLS]}


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["child"]:
        child_main(argv[1:])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="+", choices=list(SCENARIOS), default=list(SCENARIOS))
    ap.add_argument("--out", type=Path, default=None, help="work folder (default: a new temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    a = ap.parse_args(argv)
    work = (a.out or Path(tempfile.mkdtemp(prefix="inferqa-fault-"))).resolve()
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    from isolated_root import make_root

    root = make_root(work / "root", ROOT)
    env = child_env(root, Path(os.environ.get("INFERQA_LLM_CACHE") or ROOT / ".cache" / "tests" / "llm" /
                               "cache.sqlite"))
    os.environ.update(INFERQA_ROOT=str(root))
    print(f"{'where killed':<78} | {'what the killed run left':<46} | {'what the resumed run printed':<60} | "
          "identical | s")
    try:
        for key in a.only:
            for scenario in SCENARIOS[key]:
                r = scenario(work, env)
                print(
                    f"{r.place + ': ' + r.where:<78} | {r.left:<46} | {'; '.join(r.said) or '(nothing)':<60} "
                    "| "
                    f"{'yes' if r.identical else 'NO':<9} | {r.seconds:.0f}"
                    + (f" | left: {', '.join(r.details['left'])}" if r.details.get("left") else ""),
                    flush=True,
                )
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
