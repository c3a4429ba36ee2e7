"""Atomic writes where a user's work lives: the folder swap and file replacement of
inferqa_utils.core.atomic, the label checkpoint's repair of a cut line, the verification
decisions, the local model registry and its verification marker, and the replacement of a
fine-tuned model. No model is loaded."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from inferqa_utils.construction.labeling import LabelCheckpoint, QuestionLabels
from inferqa_utils.construction.verification import load_decisions, save_decision, verification_widget
from inferqa_utils.core import atomic, models
from inferqa_utils.core.errors import DataFormatError
from inferqa_utils.finetune import training
from inferqa_utils.ir.datamodel import Hint, Question


def _tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


def _folder(path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    return path


# ------------------------------------------------------------------------------ the folder swap
def test_replace_dir_drops_stale_files_and_moves_kept_entries(tmp_path):
    target = _folder(
        tmp_path / "build", {"manifest.json": "old", "dev.json": "gone", "checkpoint/l.jsonl": "work"}
    )
    with atomic.staged_dir(target, keep=("checkpoint",)) as tmp:
        _folder(tmp, {"manifest.json": "new", "test.json": "t"})
    assert _tree(target) == {"manifest.json": "new", "test.json": "t", "checkpoint/l.jsonl": "work"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build"]  # no temporary folder left


def test_an_interrupted_write_or_swap_leaves_the_old_folder(tmp_path, monkeypatch):
    before = {"manifest.json": "old", "checkpoint/l.jsonl": "work"}
    target = _folder(tmp_path / "build", before)
    with pytest.raises(KeyboardInterrupt), atomic.staged_dir(target, keep=("checkpoint",)) as tmp:
        _folder(tmp, {"manifest.json": "half"})
        raise KeyboardInterrupt  # Ctrl-C while the new folder is being written
    assert _tree(target) == before and sorted(p.name for p in tmp_path.iterdir()) == ["build"]

    real_rename = Path.rename

    def fail_second(self, dst):  # the old folder is renamed away, then renaming the new one in fails
        if ".new-" in self.name:
            raise OSError("rename failed")
        return real_rename(self, dst)

    monkeypatch.setattr(Path, "rename", fail_second)
    with (
        pytest.raises(OSError, match="rename failed"),
        atomic.staged_dir(target, keep=("checkpoint",)) as tmp,
    ):
        _folder(tmp, {"manifest.json": "new"})
    assert _tree(target) == before and sorted(p.name for p in tmp_path.iterdir()) == ["build"]


def _dead_pid() -> int:
    import subprocess

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_swap_killed_between_its_renames_is_repaired(tmp_path):
    """A killed process leaves either no folder (the old one renamed away) or the new folder without
    the kept entries (still in the old one): the next swap, or a build, repairs both."""
    pid = _dead_pid()
    _folder(tmp_path / f".build.old-{pid}-ab", {"manifest.json": "old", "checkpoint/l.jsonl": "work"})
    _folder(tmp_path / f".build.new-{pid}-ab", {"manifest.json": "half"})
    target = tmp_path / "build"
    assert atomic.recover_dir(target, keep=("checkpoint",))
    assert _tree(target) == {"manifest.json": "old", "checkpoint/l.jsonl": "work"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build"]

    import shutil

    shutil.rmtree(target)
    _folder(target, {"manifest.json": "new"})  # killed after the new folder came in, before the kept entries
    _folder(tmp_path / f".build.old-{pid}-cd", {"manifest.json": "old", "checkpoint/l.jsonl": "work"})
    assert atomic.recover_dir(target, keep=("checkpoint",))
    assert _tree(target) == {"manifest.json": "new", "checkpoint/l.jsonl": "work"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build"]


def test_write_text_atomic_replaces_the_file_instead_of_rewriting_it(tmp_path):
    p = tmp_path / "f.json"
    p.write_text("old")
    with open(p) as reader:  # a reader that opened the file before keeps reading the old version
        atomic.write_text_atomic(p, "new")
        assert reader.read() == "old"
    assert p.read_text() == "new" and sorted(x.name for x in tmp_path.iterdir()) == ["f.json"]


def test_write_text_atomic_keeps_the_mode_and_removes_a_killed_writers_leftover(tmp_path):
    import subprocess
    import sys

    p = tmp_path / "f[1].json"
    p.write_text("old")
    p.chmod(0o644)
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead = tmp_path / f".{p.name}.{int(gone.stdout)}-abcd.tmp"  # a writer killed mid-write
    alive = tmp_path / f".{p.name}.{os.getpid()}-ef01.tmp"  # a writer still running (this process)
    dead.write_text("half")
    alive.write_text("busy")
    atomic.write_text_atomic(p, "new")
    assert p.read_text() == "new" and (p.stat().st_mode & 0o777) == 0o644
    assert not dead.exists() and alive.exists()
    fresh = atomic.write_text_atomic(tmp_path / "new.json", "x")
    umask = os.umask(0)
    os.umask(umask)
    assert (fresh.stat().st_mode & 0o777) == 0o666 & ~umask


# ------------------------------------------------------------------------------ label checkpoint
def _labels(qid: str) -> QuestionLabels:
    return QuestionLabels(
        qid, {f"{qid}_1_0": {"m": "Venezia"}}, {f"{qid}_1_0": ["Venezia"]}, {f"{qid}_1_0": 2}
    )


def test_a_cut_last_checkpoint_line_is_removed_by_replacing_the_file(tmp_path):
    ck = LabelCheckpoint(tmp_path / "labels.jsonl")
    ck.append(_labels("q1"), "h1")
    ck.append(_labels("q2"), "h2")
    text = ck.path.read_text()
    ck.path.write_text(text[:-20])  # interrupted while writing q2
    with open(ck.path) as reader:
        assert list(ck.load()) == ["q1"]
        assert reader.read() == text[:-20]  # the file was replaced, not truncated under a reader
    assert ck.path.read_text() == text.splitlines(keepends=True)[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labels.jsonl"]


# ------------------------------------------------------------------------------ verification decisions
def test_each_decision_is_merged_into_the_file_as_it_is_now(tmp_path):
    path = tmp_path / "v.json"
    path.write_text(json.dumps({"q1": {"Venezia": True}}))
    save_decision(path, "q1", "Gondola", False)
    # another kernel (or a person) writes a decision meanwhile
    on_disk = load_decisions(path)
    on_disk.setdefault("q2", {})["Rome"] = True
    path.write_text(json.dumps(on_disk))
    now = save_decision(path, "q1", "Venezia", False)
    assert now == load_decisions(path) == {"q1": {"Venezia": False, "Gondola": False}, "q2": {"Rome": True}}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.json"]


def test_the_widget_keeps_decisions_written_after_it_opened(tmp_path):
    q = Question("q1", "In which desert?", ["Gobi"], [Hint("It lies in Asia."), Hint("Dinosaur eggs.")])
    q.meta["gold_answers"] = ["Gobi"]
    res = QuestionLabels(
        "q1", {"q1_1_0": {"m": "Desert of Gobi"}}, {"q1_1_0": ["Desert of Gobi"]}, {"q1_1_0": 2}
    )
    path = tmp_path / "v.json"
    box = verification_widget([q], {"q1": res}, path)
    path.write_text(json.dumps({"q9": {"Sahara": False}}))  # written elsewhere after the widget opened
    row = box.children[1].children[1]
    row.children[0].value = False  # the click
    assert load_decisions(path) == {"q1": {"Desert of Gobi": False}, "q9": {"Sahara": False}}


# ------------------------------------------------------------------------------ local model registry
@pytest.fixture
def model_paths(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "PATHS", models.PATHS.__class__(tmp_path))
    return models.PATHS.models


def test_registry_is_replaced_atomically_and_a_corrupt_one_is_named(model_paths, tmp_path):
    models.register_local("FT-a", "sentence-transformers", tmp_path)
    reg = model_paths / models.LOCAL_REGISTRY_FILE
    with open(reg) as reader:
        models.register_local("FT-b", "cross-encoder", tmp_path)
        assert set(json.loads(reader.read())) == {"FT-a"}
    assert set(json.loads(reg.read_text())) == {"FT-a", "FT-b"}
    assert sorted(p.name for p in model_paths.iterdir()) == [models.LOCAL_REGISTRY_FILE]
    reg.write_text('{"FT-a": {"kind": "sentence-transformers", "path": ')  # cut short
    with pytest.raises(DataFormatError, match="invalid JSON") as e:
        models.get_spec("FT-a")
    assert e.value.file == str(reg)
    reg.write_text(json.dumps({"FT-a": {"kind": "cross-encoder"}}))
    with pytest.raises(DataFormatError) as e:
        models.get_spec("FT-a")
    assert (e.value.file, e.value.record, e.value.field) == (str(reg), "FT-a", "path")


def test_a_corrupt_verification_marker_is_named(model_paths, tmp_path, monkeypatch):
    name = f"fakefile_{tmp_path.name.replace('-', '_')}"
    pkg = tmp_path / "site" / name
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "m.gguf").write_bytes(b"GGUF")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    spec = models.ModelSpec("fake-file", "gguf", "packaged-file", "test", (name,), "m.gguf", None, "fake")
    monkeypatch.setitem(models.REGISTRY, "fake-file", spec)
    f = models.fetch("fake-file", log=lambda s: None)
    marker = model_paths / "fake-file.verified" / "stamp.json"
    assert json.loads(marker.read_text())["path"] == str(f)
    assert sorted(p.name for p in marker.parent.iterdir()) == ["stamp.json"]
    marker.write_text("{")
    with pytest.raises(DataFormatError) as e:
        models.fetch("fake-file", log=lambda s: None)
    assert e.value.file == str(marker) and "delete" in str(e.value)


# ------------------------------------------------------------------------------ fine-tuned models
class _Stop(Exception):
    pass


class _Trainer:
    """Stands in for a Hugging Face Trainer: ``train`` raises when told to, else does two steps."""

    def __init__(self, stop: bool) -> None:
        self.stop = stop
        self.state = SimpleNamespace(global_step=0, log_history=[])

    def add_callback(self, cb: object) -> None:
        pass

    def train(self, resume_from_checkpoint: str | None = None) -> None:
        if self.stop:
            raise _Stop("interrupted")
        self.state.global_step, self.state.log_history = 2, [{"step": 2, "loss": 0.5}]


def _train(folder: Path, fp: str, stop: bool = False) -> training.TrainedModel:
    def save(trainer: _Trainer, path: Path) -> None:
        _folder(path, {"weights.txt": fp})

    return training.run_training("FT-x", "sentence-transformers", folder, fp, {"n_positives": 1},
                                 lambda ckpt: _Trainer(stop), save, log=lambda s: None)


def test_a_new_training_replaces_the_old_model_only_when_complete(tmp_path, monkeypatch):
    monkeypatch.setattr(training, "_progress_recorder", lambda *a: None)
    folder = tmp_path / "FT-x"
    first = _train(folder, "A")
    assert (folder / "model" / "weights.txt").read_text() == "A" and first.path == str(folder / "model")
    with pytest.raises(_Stop):
        _train(folder, "B", stop=True)  # other data: interrupted before the new model exists
    assert (folder / "model" / "weights.txt").read_text() == "A"
    assert training.finished_model(folder, "A") is not None
    second = _train(folder, "B")
    assert (folder / "model" / "weights.txt").read_text() == "B" and second.path == str(folder / "model")
    assert training.finished_model(folder, "B") is not None and not training.staging_folder(folder).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FT-x"]
    assert sorted(os.listdir(folder)) == ["model", "training.json"]
