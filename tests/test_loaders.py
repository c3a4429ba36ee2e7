"""Loaders: real TriviaHG (both shapes), WikiHint shape, and one clear error per corruption."""

import json

import pytest

from inferqa_utils.core.errors import DataFormatError
from inferqa_utils.sources import load_source, load_triviahg, load_wikihint


# ------------------------------------------------------------------ real data (../shared/data)
def test_triviahg_validation(shared_data):
    ds = load_triviahg(shared_data / "triviahg" / "validation_2024.json")
    assert len(ds) == 1000
    q = ds.questions["Q_dev_8315"]
    assert q.answers == ["Mirror"]
    assert 6 <= len(q.hints) <= 10 and q.hints[0].text.startswith("It is a reflective surface")
    assert q.reference and "mirror" in q.reference.lower()
    assert q.qtype == "ENTY:other" and q.difficulty == "Hard"
    assert all(len(x.hints) >= 6 for x in ds)
    assert all(h.convergence is None for x in ds for h in x.hints)


def test_triviahg_model_hints_copilot(shared_data):
    ds = load_triviahg(shared_data / "triviahg" / "model_hints" / "Copilot.json")
    assert len(ds) == 100
    q = ds.questions["Q_train_9043"]
    assert q.answers == ["Australia"]  # ["Australia", "Australia"] deduplicated
    assert q.candidates[-1] == "Australia" and len(q.candidates) == 19
    assert [h.convergence for h in q.hints][:3] == [0.82, 1.0, 1.0]
    assert q.hints[0].scores["Russia"] == 1 and q.hints[0].scores["Australia"] == 1
    assert "[^1^]" not in q.hints[0].text and "[^1^]" in q.hints[0].meta["raw"]
    # the one record whose ExactAnswer is a plain string
    assert ds.questions["Q_train_73461"].answers == ["Washington DC"]
    assert all(x.candidates and all(h.convergence is not None for h in x.hints) for x in ds)


def test_load_source_by_name(shared_data):
    assert len(load_source("triviahg-copilot")) == 100


# ------------------------------------------------------------------ WikiHint shape
WIKIHINT_RECORD = {
    "id": "test_1",
    "question": {
        "question": "Which painter cut off part of his own ear?",
        "question_type": {"major": "HUM:HUMAN", "minor": "ind:Individual"},
        "difficulty": "Easy",
        "entities": [],
        "candidate_answers": ["Paul Gauguin", "Claude Monet", "Vincent van Gogh"],
        "metrics": {"readability": 1, "familiarity": 0.8},
    },
    "answer": {"answer": "Vincent van Gogh", "entities": [], "metrics": {"familiarity": 0.9}},
    "hints": [
        {"hint": "He painted sunflowers many times.", "source": "https://example.org/a", "rank": "2",
         "entities": [], "metrics": {"relevance": 1, "readability": 2, "convergence": 0.7,
                                     "familiarity": 0.5, "answer_leakage": 0.1}},
        {"hint": "He was Dutch.", "source": "https://example.org/b", "rank": "1", "entities": [],
         "metrics": {"convergence": 0.2}},
    ],
}


def test_wikihint_record_loads(tmp_path):
    f = tmp_path / "wikihint.json"
    f.write_text(json.dumps([WIKIHINT_RECORD]))
    ds = load_wikihint(f)
    q = ds.questions["test_1"]
    assert q.qtype == "HUM:ind" and q.difficulty == "Easy"
    assert [h.text for h in q.hints] == ["He was Dutch.", "He painted sunflowers many times."]  # by rank
    assert [h.convergence for h in q.hints] == [0.2, 0.7]
    assert q.hints[1].meta["metrics"]["answer_leakage"] == 0.1
    assert q.candidates[-1] == q.answer == "Vincent van Gogh"
    # JSONL and shape auto-detection
    g = tmp_path / "wikihint.jsonl"
    g.write_text(json.dumps(WIKIHINT_RECORD) + "\n")
    assert list(load_source(g).questions) == ["test_1"]


def test_wikihint_minimal_record(tmp_path):
    f = tmp_path / "min.json"
    f.write_text(json.dumps([{"id": "x", "question": {"question": "Q?"}, "answer": {"answer": "A"},
                              "hints": [{"hint": "h1"}]}]))
    q = load_wikihint(f).questions["x"]
    assert q.qtype is None and q.candidates == [] and q.hint_texts == ["h1"]


# ------------------------------------------------------------------ corrupted inputs
TRIVIA = {"Q_ID": "Q_1", "Question": "Q?", "Hints": ["It is red.", "It is round."], "ExactAnswer": "Apple",
          "MajorType": "ENTY:ENTITY", "MinorType": "food:Food"}


def _write(tmp_path, text, name="bad.json"):
    f = tmp_path / name
    f.write_text(text)
    return f


def test_truncated_json(tmp_path):
    f = _write(tmp_path, json.dumps([TRIVIA, TRIVIA])[:-25])
    with pytest.raises(DataFormatError) as e:
        load_triviahg(f)
    assert str(f) in str(e.value) and "invalid JSON" in str(e.value) and "line 1" in str(e.value)


def test_record_without_hints(tmp_path):
    rec = {k: v for k, v in TRIVIA.items() if k != "Hints"}
    f = _write(tmp_path, json.dumps([TRIVIA | {"Q_ID": "Q_0"}, rec]))
    with pytest.raises(DataFormatError) as e:
        load_triviahg(f)
    assert e.value.record == "1 (Q_1)" and e.value.field == "Hints" and "missing" in str(e.value)


def test_empty_hint_list_loads_and_is_dropped_later(tmp_path):
    """Real model_hints files have questions with no hints: the loader keeps them, construction
    drops them — and those with fewer than k usable hints (a blank or repeated hint is not usable)
    — with the reason "fewer than k hints" (a build without any model: no labeler, judge or
    embedder is needed for it)."""
    from inferqa_utils.construction.build import build_dataset
    from inferqa_utils.construction.build_config import BuildConfig

    three = ["It is red.", "It grows on trees.", "It is crunchy."]
    f = _write(tmp_path, json.dumps([TRIVIA | {"Q_ID": "Q_0", "Hints": three}, TRIVIA | {"Hints": []},
                                     TRIVIA | {"Q_ID": "Q_2", "Hints": ["It is red."]},
                                     TRIVIA | {"Q_ID": "Q_3", "Hints": ["It is red.", "  ", "It is red."]}]))
    assert [len(q.hints) for q in load_triviahg(f)] == [3, 0, 1, 3]

    def no_model(name: str):
        raise AssertionError(f"the build loaded model {name!r}")

    cfg = BuildConfig(source=f"triviahg:{f}", name="t", k_hints=2, labelers=[], judge_model=None,
                      difficulty_embedder=None, label_splits=[], corpus_all_source=False,
                      output_dir=str(tmp_path / "out"), verification_file=str(tmp_path / "v.json"))
    res = build_dataset(cfg, progress=False, llm_loader=no_model, log=lambda _: None)
    rows = res.questions.set_index("qid")
    assert rows["status"].to_dict() == {"Q_0": "kept", "Q_1": "dropped", "Q_2": "dropped", "Q_3": "dropped"}
    assert set(rows.loc[["Q_1", "Q_2", "Q_3"], "reason"]) == {"fewer than 2 hints"}
    assert rows.loc[["Q_1", "Q_2", "Q_3"], "detail"].tolist() == [
        "0 usable hints", "1 usable hints", "1 usable hints",
    ]
    assert list(res.dataset.questions) == ["Q_0"] and res.manifest["counts"]["dropped_by_reason"] == {
        "fewer than 2 hints": 3}


def test_misaligned_side_list_is_ignored_with_a_note(tmp_path):
    rec = TRIVIA | {"Familiarity": [0.1]}
    ds = load_triviahg(_write(tmp_path, json.dumps([rec])))
    q = next(iter(ds))
    assert "Familiarity ignored" in q.meta["load_notes"][0]


def test_hint_not_a_string(tmp_path):
    f = _write(tmp_path, json.dumps([TRIVIA | {"Hints": ["ok", 42]}]))
    with pytest.raises(DataFormatError) as e:
        load_triviahg(f)
    assert e.value.field == "Hints[1]" and "expected a string, got int" in str(e.value)
    g = _write(tmp_path, json.dumps([WIKIHINT_RECORD | {"hints": [{"hint": ["x"]}]}]), "w.json")
    with pytest.raises(DataFormatError) as e:
        load_wikihint(g)
    assert e.value.field == "hints[0].hint" and e.value.record == "0 (test_1)"


def test_duplicate_ids(tmp_path):
    f = _write(tmp_path, json.dumps([TRIVIA, TRIVIA]))
    with pytest.raises(DataFormatError, match=r"record 1, field 'id': duplicate id 'Q_1' \(also record 0\)"):
        load_triviahg(f)


def test_mistyped_field(tmp_path):
    f = _write(tmp_path, json.dumps([TRIVIA | {"Question": 7}]))
    with pytest.raises(DataFormatError, match=r"field 'Question': expected str, got int"):
        load_triviahg(f)
    g = _write(tmp_path, json.dumps([TRIVIA | {"Convergence": ["high", 0.5]}]), "c.json")
    with pytest.raises(DataFormatError, match=r"'Convergence\[0\]': expected a number"):
        load_triviahg(g)


def test_not_a_list_of_objects(tmp_path):
    f = _write(tmp_path, json.dumps([TRIVIA, "oops"]))
    with pytest.raises(DataFormatError, match=r"record 1: expected a JSON object, got str"):
        load_triviahg(f)


def test_cli_reports_one_readable_line(tmp_path):
    import subprocess
    import sys

    f = _write(tmp_path, json.dumps([TRIVIA | {"Hints": ["ok", None, 3]}]))
    out = subprocess.run([sys.executable, "-m", "inferqa_utils", "data", f"triviahg:{f}"],
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "Traceback" not in out.stderr
    assert "field 'Hints[1]'" in out.stderr
