"""The export replaces the build folder as a whole (checkpoint kept). Builds here use no model
(no labeler, judge or embedder)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inferqa_utils.construction import export_build as eb
from inferqa_utils.construction.build import BuildConfig, BuildConflictError, build_dataset


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
    return BuildConfig(**{"source": f"triviahg:{src}", "name": "t", "k_hints": 2, "labelers": [], "judge_model": None,
                          "difficulty_embedder": None, "label_splits": [], "corpus_all_source": False,
                          "output_dir": str(out), "verification_file": str(out.parent / "v.json"), **kw})


def _no_model(name: str):
    raise AssertionError(f"the build loaded model {name!r}")


def _build(cfg: BuildConfig, **kw):
    return build_dataset(cfg, progress=False, llm_loader=_no_model, **{"log": lambda s: None, **kw})


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
