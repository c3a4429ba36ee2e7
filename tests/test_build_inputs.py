"""What a build depends on is its inputs' content: the fingerprint and label key hash the source
files' bytes (not their names or folders), each label checkpoint line carries its question's
input hash, and the export replaces the build folder as a whole (checkpoint kept). Builds here
use no model (no labeler, judge or embedder); the labeler of the checkpoint tests is scripted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inferqa_utils import sources
from inferqa_utils.construction import export_build as eb
from inferqa_utils.construction.build import BuildConflictError, build_dataset
from inferqa_utils.construction.build_config import BuildConfig
from inferqa_utils.construction.file_formats import write_quit
from inferqa_utils.construction.labeling import INPUTS_KEY, LabelCheckpoint, label_questions
from inferqa_utils.construction.passages import build_passages
from inferqa_utils.core.config import Paths
from inferqa_utils.core.fingerprint import files_sha256
from inferqa_utils.ir.datamodel import Dataset, Hint, Question


def _trivia(qid: str, answer: str, hints: list[str]) -> dict:
    return {"Q_ID": qid, "Question": f"Which fruit ({qid})?", "Hints": hints, "ExactAnswer": answer,
            "MajorType": "ENTY:ENTITY", "MinorType": "food:Food"}


RECORDS = [_trivia("Q_0", "Apple", ["It is red.", "It grows on trees.", "It is crunchy."]),
           _trivia("Q_1", "Banana", ["It is yellow.", "Monkeys like it.", "It is curved."])]


def _source(folder: Path, records: list[dict] = RECORDS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    f = folder / "trivia.json"
    f.write_text(json.dumps(records), encoding="utf-8")
    return f


def _cfg(src: Path, out: Path, **kw) -> BuildConfig:
    """A build that needs no model: nothing labelled, no closed-book model, no embedder."""
    return BuildConfig(
        **{
            "source": f"triviahg:{src}",
            "name": "t",
            "k_hints": 2,
            "labelers": [],
            "judge_model": None,
            "difficulty_embedder": None,
            "label_splits": [],
            "corpus_all_source": False,
            "output_dir": str(out),
            "verification_file": str(out.parent / "v.json"),
            **kw,
        }
    )


def _no_model(name: str):
    raise AssertionError(f"the build loaded model {name!r}")


def _build(cfg: BuildConfig, **kw):
    return build_dataset(cfg, progress=False, llm_loader=_no_model, **{"log": lambda s: None, **kw})


# ------------------------------------------------------------------------------ fingerprints
def test_fingerprint_and_label_key_follow_the_source_content_not_its_folder(tmp_path, monkeypatch):
    """The same source files on two machines (here: two repository roots) give the same
    fingerprint; a changed byte gives another fingerprint and another checkpoint file."""
    keys = []
    for root, text in ((tmp_path / "a", "[1]"), (tmp_path / "b", "[1]"), (tmp_path / "c", "[2]")):
        f = Paths(root).embedded_dataset
        f.parent.mkdir(parents=True)
        f.write_text(text)
        monkeypatch.setattr(sources, "PATHS", Paths(root))
        cfg = BuildConfig(output_dir=str(tmp_path / "out"))
        keys.append((cfg.fingerprint(), cfg.label_key(), cfg.label_checkpoint.name))
    assert keys[0] == keys[1]
    assert all(x != y for x, y in zip(keys[0], keys[2], strict=True))
    assert BuildConfig().fingerprint("x" * 64) != BuildConfig().fingerprint("y" * 64)


def test_a_changed_source_file_is_a_conflict_and_the_same_one_is_reused(tmp_path):
    src = _source(tmp_path / "src")
    cfg = _cfg(src, tmp_path / "out")
    res = _build(cfg)
    assert (
        res.manifest["source_sha256"] == files_sha256([src])
        and res.manifest["fingerprint"] == cfg.fingerprint()
    )
    said: list[str] = []
    _build(cfg, log=said.append)
    assert "reusing it" in said[0]
    _source(
        tmp_path / "src", [RECORDS[0], _trivia("Q_1", "Plantain", RECORDS[1]["Hints"])]
    )  # same name, new bytes
    with pytest.raises(BuildConflictError, match="content of the source files") as e:
        _build(cfg)
    assert "other parameters or source files" in str(e.value)


def test_source_files_are_the_files_the_loader_reads(tmp_path):
    qs = {"q1": Question("q1", "Q?", ["A"], [Hint("h one"), Hint("h two")])}
    ps = build_passages("q1", qs["q1"].hint_texts)
    ds = Dataset("d", qs, {p.pid: p for p in ps}, {"q1": {p.pid: 1 for p in ps}}, {"test": ["q1"], "dev": []})
    write_quit(ds, tmp_path / "quit")
    loaded = sources.load_source(f"quit:{tmp_path / 'quit'}").meta["source_files"]
    assert [str(f) for f in sources.source_files(f"quit:{tmp_path / 'quit'}")] == loaded
    rec = {"id": "w1", "question": {"question": "Q?"}, "answer": {"answer": "A"}, "hints": [{"hint": "h"}]}
    for name in ("test.json", "training.json"):
        (tmp_path / "wh").mkdir(exist_ok=True)
        (tmp_path / "wh" / name).write_text(json.dumps([rec | {"id": name}]))
    loaded = sources.load_source(f"wikihint:{tmp_path / 'wh'}").meta["source_files"]
    assert [str(f) for f in sources.source_files(f"wikihint:{tmp_path / 'wh'}")] == loaded
    assert sources.source_files(f"triviahg:{tmp_path / 'missing.json'}") == []


def test_a_shared_source_is_absent_only_when_its_file_is_missing(tmp_path, monkeypatch):
    """``source_absent``: a named TriviaHG source without its file here; never a path or the embedded set."""
    monkeypatch.setenv("INFERQA_SHARED_DATA", str(tmp_path))
    assert sources.source_absent("triviahg-validation")
    (tmp_path / "triviahg").mkdir()
    (tmp_path / "triviahg" / "validation_2024.json").write_text("[]")
    assert not sources.source_absent("triviahg-validation")
    assert sources.source_absent("triviahg-copilot")
    assert not sources.source_absent("embedded")
    assert not sources.source_absent(f"triviahg:{tmp_path / 'missing.json'}")  # a path: its loader says so
    assert not sources.source_absent(None)


# ------------------------------------------------------------------------------ label checkpoint
class _Labeler:
    """A labeler without a model: answers "Venice" when the passage mentions canals, else "Rome";
    records how many passages it read per question."""

    name = "scripted"

    def __init__(self) -> None:
        self.read: list[str] = []

    def chat(self, batch, max_tokens=None, desc="", progress=True, until=None):
        self.read += [desc.split()[1] if desc else "?"] * len(batch)
        return ["Venice" if "canals" in m[-1]["content"] else "Rome" for m in batch]


def _questions(hint: str = "It has canals.", answers: tuple[str, ...] = ("Venice",)) -> list[Question]:
    return [
        Question("q1", "Which city?", list(answers), [Hint(hint), Hint("It lies in Italy.")]),
        Question("q2", "Which capital?", ["Rome"], [Hint("It has seven hills."), Hint("It lies in Italy.")]),
    ]


def _label(qs: list[Question], ck: LabelCheckpoint, llm: _Labeler, said: list[str]):
    by_q = {q.qid: build_passages(q.qid, q.hint_texts) for q in qs}
    return label_questions(qs, by_q.__getitem__, [llm], None, ck, progress=False, log=said.append)


@pytest.mark.parametrize("change", ["hint", "answers", "line without hash"])
def test_a_checkpoint_line_made_for_other_inputs_is_discarded(tmp_path, change):
    ck = LabelCheckpoint(tmp_path / "labels.jsonl")
    first, said = _Labeler(), []
    before = _label(_questions(), ck, first, said)
    assert said == [] and all(INPUTS_KEY in json.loads(line) for line in ck.path.read_text().splitlines())
    qs = _questions()
    if change == "hint":  # another kept hint: other passages
        qs = _questions(hint="It has gondolas.")
    elif change == "answers":
        qs = _questions(answers=("Venice", "Venezia"))
    else:  # an older checkpoint: q1's line has no input hash
        lines = [json.loads(line) for line in ck.path.read_text().splitlines()]
        lines[0].pop(INPUTS_KEY)
        ck.path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    again, said = _Labeler(), []
    after = _label(qs, ck, again, said)
    assert (
        set(again.read) == {"q1"} and len(again.read) == len(first.read) // 2
    )  # q2 came from the checkpoint
    assert len(said) == 1 and "1 line(s) of 1 question(s)" in said[0] and "labelled again" in said[0]
    assert after["q2"] == before["q2"]
    quiet = _Labeler()
    _label(qs, ck, quiet, said)
    assert quiet.read == [] and len(said) == 1  # the new line is reused: nothing discarded, nothing said


# ------------------------------------------------------------------------------ the export's folder swap
def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_export_replaces_the_build_folder_and_keeps_its_checkpoint(tmp_path):
    src, out = _source(tmp_path / "src"), tmp_path / "out"
    cfg = _cfg(src, out, verification_file=str(out / "v.json"))
    _build(cfg)
    (out / "stale.csv").write_text("a table the new build does not write")
    (out / "checkpoint").mkdir()
    (out / "checkpoint" / "labels-x.jsonl").write_text("{}\n")
    (out / "v.json").write_text('{"Q_0": {"Pear": false}}')
    res = _build(_cfg(src, out, k_hints=3, verification_file=str(out / "v.json")), overwrite=True)
    files = _tree(out)
    assert "stale.csv" not in files and files["checkpoint/labels-x.jsonl"] == b"{}\n"
    assert files["v.json"] == b'{"Q_0": {"Pear": false}}'
    assert json.loads(files["manifest.json"])["fingerprint"] == res.manifest["fingerprint"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "src"]


def test_an_interrupted_export_leaves_the_old_build(tmp_path, monkeypatch):
    src, out = _source(tmp_path / "src"), tmp_path / "out"
    _build(_cfg(src, out))
    (out / "checkpoint").mkdir()
    (out / "checkpoint" / "labels-x.jsonl").write_text("{}\n")
    before = _tree(out)

    def interrupted(*a, **k):
        raise KeyboardInterrupt  # Ctrl-C half-way through writing the new export

    monkeypatch.setattr(eb, "table1", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _build(_cfg(src, out, k_hints=3), overwrite=True)
    assert _tree(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["out", "src"]


def test_a_folder_holding_other_files_is_not_replaced(tmp_path):
    src, out = _source(tmp_path / "src"), tmp_path / "notes"
    out.mkdir()
    (out / "mine.txt").write_text("not a build")
    with pytest.raises(BuildConflictError, match="not a build"):
        _build(_cfg(src, out))
    assert (out / "mine.txt").read_text() == "not a build"
    shutil.rmtree(out)
