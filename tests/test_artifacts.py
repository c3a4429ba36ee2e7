"""The artifact store (inferqa_utils.artifacts) and the fingerprints (inferqa_utils.fingerprint)."""

from __future__ import annotations

import json

import pytest

from inferqa_utils import artifacts, fingerprint


def _writer(text):
    return lambda tmp: tmp.write_text(text, encoding="utf-8")


def test_valid_only_when_every_key_field_matches_and_files_exist(tmp_path):
    run = tmp_path / "r.trec"
    details = tmp_path / "r.details.json"
    key = {"k": 3, "corpus_sha256": "abc", "params": ("a", 1)}
    assert artifacts.valid(run, key) is None  # nothing written yet
    artifacts.write(run, _writer("q Q0 p 1 1.0 x\n"), key, cost={"seconds": 1.5},
                    companions={details: _writer("{}")})
    stamp = artifacts.valid(run, key, details)
    assert stamp is not None and artifacts.cost(stamp) == {"seconds": 1.5} and stamp["params"] == ["a", 1]
    assert artifacts.valid(run, {**key, "k": 5}) is None  # another parameter
    details.unlink()
    assert artifacts.valid(run, key, details) is None  # a companion is missing
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.trec", "r.trec.stamp.json"]  # no temporary files


def test_interrupted_write_leaves_no_valid_artifact(tmp_path):
    run = tmp_path / "r.trec"
    key = {"k": 1}
    artifacts.write(run, _writer("old\n"), key)
    assert artifacts.valid(run, key) is not None

    def boom(tmp):
        tmp.write_text("half", encoding="utf-8")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        artifacts.write(run, boom, key)
    assert artifacts.valid(run, key) is None  # the stamp went first: a re-run recomputes
    assert run.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["r.trec"]


def test_fingerprints_see_what_they_must_and_ignore_what_they_may():
    corpus = {"p1": "Paris is in France.", "p2": "Rome is in Italy."}
    assert fingerprint.corpus_sha256(corpus) == fingerprint.corpus_sha256(dict(corpus))
    assert fingerprint.corpus_sha256(corpus) != fingerprint.corpus_sha256({"p2": corpus["p2"], "p1": corpus["p1"]})
    run = {"q": [("p1", 2.0), ("p2", 1.0)]}
    assert fingerprint.ranking_sha256(run) == fingerprint.ranking_sha256({"q": [("p1", 9.0), ("p2", 3.0)]})
    assert fingerprint.run_sha256(run) != fingerprint.run_sha256({"q": [("p1", 9.0), ("p2", 3.0)]})
    assert fingerprint.run_sha256(run) == fingerprint.run_sha256({"q": [("p1", 2.0000001), ("p2", 1.0)]})
    # the JSONL lines the corpus hash covers are exactly what Pyserini indexes
    assert list(fingerprint.jsonl_lines({"p1": "x"})) == [json.dumps({"id": "p1", "contents": "x"}) + "\n"]
    assert fingerprint.sha256_json({"b": 1, "a": 2}) == fingerprint.sha256_json({"a": 2, "b": 1})
