"""QUIT-shaped files, corpus JSONL, TREC qrels/runs and BEIR layout round-trip."""

import json

import pytest

from inferqa_utils.construction.file_formats import write_beir, write_quit
from inferqa_utils.core.errors import DataFormatError
from inferqa_utils.ir.datamodel import Dataset, Hint, Passage, Question, join_hints, passage_id
from inferqa_utils.ir.trec import read_qrels, read_run, write_qrels, write_run
from inferqa_utils.sources import load_quit


def _quit_record(qid="Q_dev_1"):
    return {
        "id": qid,
        "question": "Which fruit?",
        "answers": ["Apple", "apples"],
        "hints": [{"hint": "It is red."}, {"hint": "It grows on trees."}],
        "subsets": {
            "10": {
                "0": {"gemma-3-1b": "cherry", "qwen-3-4b": "Apple", "llama-31-8b": "x", "gemma-3-4b": "no"}
            },
            "01": {"1": {"gemma-3-1b": "pear", "qwen-3-4b": "plum", "llama-31-8b": "NO ANSWER"}},
            "11": {"01": {"gemma-3-1b": "the apples"}, "10": {"gemma-3-1b": "banana"}},
        },
    }


def test_load_quit_folder_labels_from_labelers(tmp_path):
    (tmp_path / "dev.json").write_text(json.dumps([_quit_record()]))
    ds = load_quit(tmp_path)
    assert ds.splits == {"dev": ["Q_dev_1"]}
    assert ds.qrels["Q_dev_1"] == {
        "Q_dev_1_10_0": 2,
        "Q_dev_1_01_1": 1,
        "Q_dev_1_11_01": 2,
        "Q_dev_1_11_10": 1,
    }
    assert ds.passages["Q_dev_1_11_10"].text == "It grows on trees. It is red."
    assert ds.generations["Q_dev_1_10_0"]["qwen-3-4b"] == "Apple"


def test_load_quit_bad_permutation(tmp_path):
    rec = _quit_record()
    rec["subsets"]["11"]["0x"] = {}
    (tmp_path / "test.json").write_text(json.dumps([rec]))
    with pytest.raises(DataFormatError, match=r"record 0 \(Q_dev_1\), field 'subsets.11.0x'"):
        load_quit(tmp_path)


def test_corpus_title_is_not_used(tmp_path):
    (tmp_path / "dev.json").write_text(json.dumps([_quit_record()]))
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "corpus.jsonl").write_text(
        json.dumps({"id": "Q_dev_1_10_0", "contents": "It is red.", "title": "Q_dev_1"}) + "\n")
    ds = load_quit(tmp_path)
    assert "Q_dev_1" not in ds.passages["Q_dev_1_10_0"].text


def test_corpus_text_wins_and_adds_passages(tmp_path):
    (tmp_path / "dev.json").write_text(json.dumps([_quit_record()]))
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "corpus.jsonl").write_text("".join(json.dumps(o) + "\n" for o in [
        {"id": "Q_dev_1_10_0", "contents": "It is red."},             # same text: kept as built
        {"id": "Q_dev_1_11_01", "contents": "It is red.  It grows."},  # other text: the corpus wins
        {"id": "Q_dev_1_01_1", "contents": "It grows on trees."},
    ]))
    built = load_quit(tmp_path, name="x")
    (tmp_path / "corpus" / "corpus.jsonl").unlink()
    plain = load_quit(tmp_path)
    assert built.passages["Q_dev_1_11_01"].text == "It is red.  It grows."
    assert built.passages["Q_dev_1_11_01"].hint_ids == (0, 1)
    assert built.passages["Q_dev_1_10_0"] == plain.passages["Q_dev_1_10_0"]
    assert built.qrels == plain.qrels  # labels come from the labelers' answers, not the corpus


def _tiny_dataset() -> Dataset:
    q = Question("q_1", "Which fruit?", ["Apple"], [Hint("It is red."), Hint("It grows on trees.")],
                 qtype="ENTY:food")
    ds = Dataset("tiny", {"q_1": q}, splits={"test": ["q_1"]})
    for ids in [(0,), (1,), (0, 1), (1, 0)]:
        pid = passage_id("q_1", ids, 2)
        ds.passages[pid] = Passage(pid, "q_1", ids, join_hints(q.hint_texts, ids))
        ds.generations[pid] = {"m": "Apple" if 0 in ids else "pear"}
        ds.qrels.setdefault("q_1", {})[pid] = 2 if 0 in ids else 1
    return ds


def test_write_quit_round_trip(tmp_path):
    ds = _tiny_dataset()
    written = write_quit(ds, tmp_path / "out")
    back = load_quit(tmp_path / "out", labelers=("m",))
    assert back.qrels == ds.qrels
    assert {p: v.text for p, v in back.passages.items()} == {p: v.text for p, v in ds.passages.items()}
    lines = written["corpus"].read_text().splitlines()
    assert len(lines) == 4 and set(json.loads(lines[0])) == {"id", "contents"}
    assert read_qrels(written["qrels:test"]) == ds.qrels


def test_write_quit_keeps_each_questions_passages_apart(tmp_path):
    """quit_records groups passages by question in one pass (not passages_of per question)."""
    ds = _tiny_dataset()
    q2 = Question("q_2", "Which colour?", ["Blue"], [Hint("The sky has it."), Hint("So does the sea.")])
    ds.questions["q_2"] = q2
    ds.splits = {"test": ["q_1"], "dev": ["q_2"]}
    for ids in [(1,), (0, 1)]:
        pid = passage_id("q_2", ids, 2)
        ds.passages[pid] = Passage(pid, "q_2", ids, join_hints(q2.hint_texts, ids))
        ds.generations[pid] = {"m": "Blue" if len(ids) == 2 else "grey"}
        ds.qrels.setdefault("q_2", {})[pid] = 2 if len(ids) == 2 else 1
    write_quit(ds, tmp_path / "out")
    dev = json.loads((tmp_path / "out" / "dev.json").read_text())
    assert [r["id"] for r in dev] == ["q_2"] and dev[0]["subsets"] == {"01": {"1": {"m": "grey"}},
                                                                     "11": {"01": {"m": "Blue"}}}
    back = load_quit(tmp_path / "out", labelers=("m",))
    assert back.qrels == ds.qrels and back.splits == ds.splits


def test_trec_run_round_trip_and_errors(tmp_path):
    run = {"q_1": [("q_1_11_01", 3.5), ("q_1_10_0", 1.25)]}
    p = write_run(run, tmp_path / "r.trec", tag="bm25")
    assert p.read_text().splitlines()[0] == "q_1 Q0 q_1_11_01 1 3.500000 bm25"
    assert read_run(p) == run
    with pytest.raises(DataFormatError, match=r"line 2, field 'docid': run names unknown passage"):
        read_run(p, known_docids={"q_1_11_01"})
    with pytest.raises(ValueError, match="appears twice"):
        write_run({"q": [("d", 1.0), ("d", 0.5)]}, tmp_path / "dup.trec")
    bad = tmp_path / "bad.qrels"
    bad.write_text("q 0 d x\n")
    with pytest.raises(DataFormatError, match="label 'x' is not an integer"):
        read_qrels(bad)
    assert write_qrels({"q": {"d": 2}}, tmp_path / "q.qrels").read_text() == "q 0 d 2\n"


def test_beir_layout(tmp_path):
    out = write_beir(_tiny_dataset(), tmp_path / "beir")
    assert json.loads((out / "corpus.jsonl").read_text().splitlines()[0]).keys() == {"_id", "title", "text"}
    assert (out / "queries.jsonl").read_text().count("\n") == 1
    tsv = (out / "qrels" / "test.tsv").read_text().splitlines()
    assert tsv[0] == "query-id\tcorpus-id\tscore" and len(tsv) == 5
