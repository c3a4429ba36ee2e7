"""The artifact store (inferqa_utils.core.artifacts) and the fingerprints (inferqa_utils.core.fingerprint)."""

from __future__ import annotations

import json
from pathlib import PurePosixPath

import pytest

from inferqa_utils.core import artifacts, fingerprint


def _writer(text):
    return lambda tmp: tmp.write_text(text, encoding="utf-8")


def test_valid_only_when_every_key_field_matches_and_files_exist(tmp_path):
    run = tmp_path / "r.trec"
    details = tmp_path / "r.details.json"
    key = {"k": 3, "corpus_sha256": "abc", "params": ("a", 1)}
    assert artifacts.valid(run, key) is None  # nothing written yet
    artifacts.write(run, _writer("q Q0 p 1 1.0 x\n"), key, cost=artifacts.Cost(1.5, 3),
                    companions={details: _writer("{}")})
    stamp = artifacts.valid(run, key, details)
    assert stamp is not None and stamp["params"] == ["a", 1]
    assert stamp["cost"] == {"seconds": 1.5, "n_queries": 3, "seconds_per_query": 0.5, "llm": {}}
    assert artifacts.valid(run, {**key, "k": 5}) is None  # another parameter
    details.unlink()
    assert artifacts.valid(run, key, details) is None  # a companion is missing
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.trec", "r.trec.stamp.json"]  # no temporary files


def test_key_recipe_by_hand():
    """kind, schema, inputs' fingerprints and parameters, each mapping sorted and as JSON reads it back."""
    key = artifacts.key(
        "retrieval-run",
        2,
        inputs={"queries": "q1", "corpus": "c1"},
        params={"k": 10, "retriever": "bm25s", "path": PurePosixPath("/x/y"), "pair": ("a", 1)},
    )
    assert key == {"kind": "retrieval-run", "schema": 2, "inputs": {"corpus": "c1", "queries": "q1"},
                   "params": {"k": 10, "pair": ["a", 1], "path": "/x/y", "retriever": "bm25s"}}
    assert list(key["inputs"]) == ["corpus", "queries"] and list(key["params"]) == [
        "k", "pair", "path", "retriever",
    ]


def test_cost_record_by_hand():
    """seconds rounded to 3 decimals, seconds per query to 6, unknown seconds as null, LLM counters kept."""
    llm = {"model_calls": 4, "cache_hits": 1, "prompt_tokens": 100, "generated_tokens": 7}
    cost = artifacts.Cost(10.00049, 3, llm)
    assert cost.record() == {"seconds": 10.0, "n_queries": 3, "seconds_per_query": 3.333497, "llm": llm}
    assert cost.model_calls == 4 and artifacts.Cost(1.0, 1).model_calls is None  # no LLM took part
    assert artifacts.Cost.of({"cost": cost.record()}) == artifacts.Cost(10.0, 3, llm)
    unknown = artifacts.Cost(None, 2, {"model_calls": 0})
    assert unknown.record()["seconds"] is None and unknown.record()["seconds_per_query"] is None
    assert artifacts.Cost.of(None) == artifacts.Cost() and artifacts.Cost(2.0, 0).seconds_per_query == 2.0


class _Engine:
    """An LLM stand-in whose counters ``answer`` moves (a model call, or a cache hit)."""

    def __init__(self):
        from inferqa_utils.llm.base import LLMStats

        self.stats = LLMStats()

    def answer(self, cached):
        if cached:
            self.stats.cache_hits += 1
        else:
            self.stats.model_calls += 1
            self.stats.generated_tokens += 5


def _cached(path, key, calls, **kw):
    """:func:`artifacts.cached` of a text value; ``calls`` counts the computations."""
    def compute():
        calls.append(1)
        return "value"

    return artifacts.cached(
        path, key, compute, n_queries=2, save=lambda v, tmp: tmp.write_text(v, encoding="utf-8"), **kw
    )


def test_cached_reads_back_a_matching_artifact_and_recomputes_a_stale_one(tmp_path):
    path, calls = tmp_path / "a.txt", []
    key = artifacts.key("thing", 1, {"corpus": "c"}, {"k": 1})
    load = {"load": lambda p: p.read_text(encoding="utf-8")}
    first = _cached(path, key, calls, **load)
    assert (first.value, first.reused, len(calls)) == ("value", False, 1) and first.cost.n_queries == 2
    again = _cached(path, key, calls, **load)
    assert (again.value, again.reused, len(calls)) == ("value", True, 1)
    assert again.cost == artifacts.Cost.of(
        artifacts.read_stamp(path)
    )  # the cost recorded when it was computed
    newer = artifacts.key("thing", 2, {"corpus": "c"}, {"k": 1})  # another schema: the old stamp misses
    assert not _cached(path, newer, calls, **load).reused and len(calls) == 2
    assert artifacts.read_stamp(path)["schema"] == 2
    assert (
        not _cached(path, newer, calls, load=lambda p: None).reused and len(calls) == 3
    )  # unreadable: recomputed
    assert not _cached(None, newer, calls, **load).reused and len(calls) == 4  # nowhere to store


def test_cached_records_llm_counters_and_keeps_the_cost_of_a_computation_that_made_no_model_call(tmp_path):
    """Without ``load`` the value is always computed; a run served by the generation cache (no model
    call) keeps the cost recorded under the same key, or has none."""
    engine, path, key = _Engine(), tmp_path / "r.txt", artifacts.key("thing", 1, {}, {})
    save = {
        "save": lambda v, tmp: tmp.write_text(v, encoding="utf-8"),
        "n_queries": 1,
        "llms": [engine, engine, None],
    }
    made = artifacts.cached(path, key, lambda: engine.answer(cached=False) or "v", **save)
    assert made.cost.llm == {"model_calls": 1, "cache_hits": 0, "prompt_tokens": 0, "generated_tokens": 5}
    artifacts.write(
        path, _writer("v"), key, artifacts.Cost(42.0, 1, made.cost.llm)
    )  # as if it had taken 42 s
    again = artifacts.cached(path, key, lambda: engine.answer(cached=True) or "v", **save)
    assert not again.reused and again.cost == artifacts.Cost(42.0, 1, made.cost.llm)
    assert artifacts.Cost.of(artifacts.read_stamp(path)).seconds == 42.0
    other = artifacts.key("thing", 1, {}, {"depth": 2})  # another workload: no recorded cost applies
    unknown = artifacts.cached(path, other, lambda: engine.answer(cached=True) or "v", **save)
    assert unknown.cost.seconds is None and unknown.cost.llm["cache_hits"] == 1
    assert artifacts.read_stamp(path)["cost"]["seconds"] is None
    measured = artifacts.cached(path, other, lambda: "v", save=save["save"], n_queries=1)  # no LLM: measured
    assert measured.cost.seconds is not None and measured.cost.llm == {}


def test_cached_leaves_setup_out_of_the_cost(tmp_path):
    import time

    done = artifacts.cached(
        tmp_path / "s.txt",
        {"k": 1},
        lambda: "v",
        n_queries=1,
        setup=lambda: time.sleep(0.3),
        save=lambda v, tmp: tmp.write_text(v, encoding="utf-8"),
    )
    assert done.cost.seconds < 0.2


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
    assert fingerprint.corpus_sha256(corpus) != fingerprint.corpus_sha256(
        {"p2": corpus["p2"], "p1": corpus["p1"]}
    )
    run = {"q": [("p1", 2.0), ("p2", 1.0)]}
    assert fingerprint.ranking_sha256(run) == fingerprint.ranking_sha256({"q": [("p1", 9.0), ("p2", 3.0)]})
    assert fingerprint.run_sha256(run) != fingerprint.run_sha256({"q": [("p1", 9.0), ("p2", 3.0)]})
    assert fingerprint.run_sha256(run) == fingerprint.run_sha256({"q": [("p1", 2.0000001), ("p2", 1.0)]})
    # the JSONL lines the corpus hash covers are exactly what Pyserini indexes
    assert list(fingerprint.jsonl_lines({"p1": "x"})) == [json.dumps({"id": "p1", "contents": "x"}) + "\n"]
    assert fingerprint.sha256_json({"b": 1, "a": 2}) == fingerprint.sha256_json({"a": 2, "b": 1})
