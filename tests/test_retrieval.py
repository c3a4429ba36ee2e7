"""Fusion (papers 001–003), dense retrieval, the retriever registry and cached runs (paper 000 §4, §5.1–5.2).

The dense tests load MiniLM once (module fixture) with the embedding cache and the local model
registry redirected to a temporary folder; nothing needs Java (``bm25`` is covered by test_pyserini).
"""

from __future__ import annotations

import json

import pytest
from tiny_corpus import CORPUS

from inferqa_utils.core import artifacts, models
from inferqa_utils.core.config import Paths
from inferqa_utils.core.errors import DataFormatError
from inferqa_utils.ir.lexical import EmptyQueryError
from inferqa_utils.llm import embeddings
from inferqa_utils.retrieval import registry
from inferqa_utils.retrieval.fusion import (
    FusedRetriever,
    interleave,
    interleave_lists,
    reciprocal_rank_fusion,
)
from inferqa_utils.retrieval.pyserini_bm25 import check_unique_ids

QUERIES = {"q1": "Which bird cannot fly and lives near Antarctica?", "q2": "What is the biggest planet?",
           "q3": "tallest peak in the world"}


def _run(*lists):
    """Run for question 'q' from lists of ids (scores are irrelevant to fusion)."""
    return [{"q": [(pid, 1.0) for pid in ids]} for ids in lists]


# ------------------------------------------------------------------------------ fusion

def test_interleave_alternates_keeps_order_drops_duplicates():
    # A: a; B: x; A: (x taken) b; B: c; A: d
    fused = interleave(_run(["a", "x", "b", "d"], ["x", "c"]), k=10)["q"]
    assert [p for p, _ in fused] == ["a", "x", "b", "c", "d"]
    assert [s for _, s in fused] == [5.0, 4.0, 3.0, 2.0, 1.0]  # rank-based, descending


def test_interleave_cuts_at_k_and_handles_three_lists():
    lists = [["a", "b", "c"], ["b", "d"], ["e", "a", "f"]]
    # A: a; B: b; C: e; A: (b) c; B: d; C: (a) f
    assert interleave_lists(lists, k=10) == ["a", "b", "e", "c", "d", "f"]
    assert interleave_lists(lists, k=4) == ["a", "b", "e", "c"]
    assert interleave(_run(*lists), k=2)["q"] == [("a", 2.0), ("b", 1.0)]


def test_interleave_questions_missing_from_a_run():
    runs = [{"q1": [("a", 3.0)], "q2": []}, {"q1": [("b", 9.0)], "q3": [("c", 1.0)]}]
    fused = interleave(runs, k=5)
    assert fused == {"q1": [("a", 2.0), ("b", 1.0)], "q2": [], "q3": [("c", 1.0)]}


def test_rrf_hand_computed():
    # A = [a, b, c], B = [b, d]; c = 60
    # a: 1/61; b: 1/62 + 1/61; c: 1/63; d: 1/62
    fused = reciprocal_rank_fusion(_run(["a", "b", "c"], ["b", "d"]), k=10, c=60)["q"]
    assert [p for p, _ in fused] == ["b", "a", "d", "c"]
    expected = {"a": 1 / 61, "b": 1 / 62 + 1 / 61, "c": 1 / 63, "d": 1 / 62}
    for pid, score in fused:
        assert score == pytest.approx(expected[pid])
    assert [p for p, _ in reciprocal_rank_fusion(_run(["a", "b", "c"], ["b", "d"]), k=2)["q"]] == ["b", "a"]


def test_rrf_ties_and_c():
    # x and y both appear once at rank 1 (tie): the earlier run wins; c = 0 → score 1/rank
    fused = reciprocal_rank_fusion(_run(["x"], ["y"]), c=0)["q"]
    assert fused == [("x", 1.0), ("y", 1.0)]
    with pytest.raises(ValueError, match="k must be"):
        reciprocal_rank_fusion(_run(["x"]), k=0)


# ------------------------------------------------------------------------------ registry without models

def test_registry_names_and_unknown_name():
    names = registry.retriever_names()
    assert names[:6] == ["bm25", "bm25s", "minilm", "e5-small", "hybrid", "rrf"]
    with pytest.raises(
        ValueError, match=r"unknown retriever 'nope'.*bm25, bm25s, minilm, e5-small, hybrid, rrf"
    ):
        registry.make_retriever("nope", CORPUS)
    with pytest.raises(ValueError, match=r"smollm2-135m.*not a bi-encoder"):
        registry.make_retriever("smollm2-135m", CORPUS)


def test_duplicate_passage_ids():
    with pytest.raises(ValueError, match="duplicate passage id 'b'"):
        check_unique_ids(["a", "b", "b"])
    with pytest.raises(ValueError, match="duplicate passage id 'p1'"):
        registry.make_retriever("bm25s", [("p1", "a cat"), ("p2", "a dog"), ("p1", "a bird")])


def test_bm25s_by_name():
    r = registry.make_retriever("bm25s", CORPUS)
    assert r.name == "bm25s"
    assert r.search({"q": "Jupiter gas giant planet"}, k=3)["q"][0][0] == "p8"


def test_bm25s_breaks_ties_by_corpus_order():
    """Passages made of the same words in another order score the same; they are ranked in corpus
    order (as Lucene breaks ties by document id), whatever order bm25s's top-k selection leaves."""
    from inferqa_utils.ir.lexical import BM25sRetriever, top_k_stable

    words = ["reflective", "surface", "glass", "silver", "bathroom", "wall"]
    ids = [f"t{i}" for i in (5, 1, 4, 0, 3, 2)]  # corpus order is not id order
    corpus = {pid: " ".join(words[i:] + words[:i]) for i, pid in enumerate(ids)}
    corpus["other"] = "a cat sits on the wall of a house"
    run = BM25sRetriever(corpus).search({"q": "reflective glass surface"}, k=4)["q"]
    assert [d for d, _ in run] == ids[:4]
    assert len({s for _, s in run}) == 1
    # the order of ties and the cut within them
    assert top_k_stable([1.0, 3.0, 3.0, 2.0, 3.0], 2) == [1, 2]
    assert top_k_stable([1.0, 3.0, 3.0, 2.0, 3.0], 4) == [1, 2, 4, 3]
    assert top_k_stable([0.5, 0.5], 9) == [0, 1]
    assert top_k_stable([0.5], 0) == []


def test_run_reuse_and_invalidation(tmp_path, monkeypatch):
    built = []
    real = registry.make_retriever

    def counting(name, corpus, index_dir=None):
        built.append(name)
        return real(name, corpus, index_dir)

    monkeypatch.setattr(registry, "make_retriever", counting)
    path = tmp_path / "runs" / "bm25s.trec"
    first = registry.retrieve("bm25s", CORPUS, QUERIES, 3, path)
    stamp = artifacts.stamp_path(path)
    assert path.is_file() and stamp.is_file() and built == ["bm25s"]
    written = json.loads(stamp.read_text())
    assert written["params"] == {
        "identity": registry.retriever_identity("bm25s"),
        "k": 3,
        "retriever": "bm25s",
    }
    assert written["kind"] == "retrieval-run" and written["schema"] == registry.RUN_SCHEMA
    assert (
        written["cost"]["n_queries"] == 3 and written["cost"]["seconds"] >= 0 and written["cost"]["llm"] == {}
    )
    mtime = path.stat().st_mtime_ns
    again = registry.retrieve("bm25s", CORPUS, QUERIES, 3, path)
    assert built == ["bm25s"] and path.stat().st_mtime_ns == mtime  # reused, not searched
    assert [[p for p, _ in v] for v in again.values()] == [[p for p, _ in v] for v in first.values()]
    assert list(again) == list(QUERIES)
    registry.retrieve("bm25s", CORPUS, QUERIES, 5, path)  # another k → searched again
    assert built == ["bm25s", "bm25s"]
    changed = {**CORPUS, "p9": "Chess is played on 64 squares."}
    registry.retrieve("bm25s", changed, QUERIES, 5, path)  # another corpus → searched again
    assert len(built) == 3


def test_run_key_by_hand():
    """The cached run's key: kind, schema, corpus and queries sha256, retriever name, identity and k."""
    from inferqa_utils.core.fingerprint import corpus_sha256, queries_sha256

    key = registry.run_key("bm25s", "bm25s 1.0 lucene k1=0.9 b=0.4", CORPUS, QUERIES, 7)
    assert key == {"kind": "retrieval-run", "schema": 2,
                   "inputs": {"corpus": corpus_sha256(CORPUS), "queries": queries_sha256(QUERIES)},
                   "params": {"identity": "bm25s 1.0 lucene k1=0.9 b=0.4", "k": 7, "retriever": "bm25s"}}


def test_run_with_a_stale_schema_is_searched_again(tmp_path, monkeypatch):
    path = tmp_path / "bm25s.trec"
    registry.retrieve("bm25s", CORPUS, QUERIES, 3, path)
    stamp = json.loads(artifacts.stamp_path(path).read_text())
    artifacts.stamp_path(path).write_text(json.dumps({**stamp, "schema": registry.RUN_SCHEMA - 1}))
    searched = []
    monkeypatch.setattr(registry, "make_retriever", lambda *a, **kw: searched.append(a[0]) or _Fixed("bm25s"))
    assert registry.retrieve("bm25s", CORPUS, QUERIES, 3, path) == {q: [("p1", 1.0)] for q in QUERIES}
    assert (
        searched == ["bm25s"]
        and json.loads(artifacts.stamp_path(path).read_text())["schema"] == registry.RUN_SCHEMA
    )


class _Fixed:
    """A retriever returning p1 for every query, with an optional ``identity``."""

    def __init__(self, name, identity=None):
        self.name = name
        if identity is not None:
            self.identity = identity

    def search(self, queries, k=100):
        return {q: [("p1", 1.0)] for q in queries}


def test_a_callers_retriever_is_keyed_by_its_identity(tmp_path):
    """Its ``identity`` attribute goes into the stamp (another identity → searched again); one
    without takes its class path."""
    path = tmp_path / "mine.trec"
    registry.retrieve("mine", CORPUS, QUERIES, 3, path, retriever=_Fixed("mine", "my index v1"))
    assert json.loads(artifacts.stamp_path(path).read_text())["params"]["identity"] == "my index v1"
    mtime = path.stat().st_mtime_ns
    registry.retrieve("mine", CORPUS, QUERIES, 3, path, retriever=_Fixed("mine", "my index v1"))
    assert path.stat().st_mtime_ns == mtime  # same identity: reused
    registry.retrieve("mine", CORPUS, QUERIES, 3, path, retriever=_Fixed("mine", "my index v2"))
    assert json.loads(artifacts.stamp_path(path).read_text())["params"]["identity"] == "my index v2"
    registry.retrieve("mine", CORPUS, QUERIES, 3, path, retriever=_Fixed("mine"))
    assert json.loads(artifacts.stamp_path(path).read_text())["params"]["identity"] == \
        f"custom:{__name__}._Fixed"
    # a registry name searched by a prebuilt retriever: keyed by the retriever (the registry's when built the
    # same)
    from inferqa_utils.ir.lexical import BM25sRetriever

    assert registry.make_retriever("bm25s", CORPUS).identity == registry.retriever_identity("bm25s")
    tuned = BM25sRetriever(CORPUS, k1=1.2)
    registry.retrieve("bm25s", CORPUS, QUERIES, 3, tmp_path / "bm25s.trec", retriever=tuned)
    ident = json.loads(artifacts.stamp_path(tmp_path / "bm25s.trec").read_text())["params"]["identity"]
    assert ident == tuned.identity == registry.retriever_identity("bm25s").replace("k1=0.9", "k1=1.2")


def test_register_retriever_is_an_ordinary_name(tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "RETRIEVERS", dict(registry.RETRIEVERS))
    built = []

    def build(corpus, index_dir):
        built.append(len(corpus))
        return _Fixed("fixed", "fixed v3")

    spec = registry.register_retriever("fixed", build, lambda: "fixed v3", "always p1")
    assert registry.retriever_spec("fixed") is spec and "fixed" in registry.retriever_names()
    assert registry.RETRIEVERS["fixed"] == "always p1" and registry.retriever_identity("fixed") == "fixed v3"
    path = tmp_path / "fixed.trec"
    assert registry.retrieve("fixed", CORPUS, QUERIES, 2, path)["q1"] == [("p1", 1.0)] and built == [
        len(CORPUS)
    ]
    assert json.loads(artifacts.stamp_path(path).read_text())["params"]["identity"] == "fixed v3"
    registry.retrieve("fixed", CORPUS, QUERIES, 2, path)
    assert built == [len(CORPUS)]  # cached: the identity came from the registry, nothing was built
    with pytest.raises(ValueError, match="already registered"):
        registry.register_retriever("fixed", build, lambda: "x")
    registry.register_retriever("fixed", build, lambda: "fixed v4", replace=True)
    registry.retrieve("fixed", CORPUS, QUERIES, 2, path)
    assert built == [len(CORPUS)] * 2  # another identity: searched again


def test_fused_identity_combines_its_parts():
    a, b = _Fixed("a", "A 1"), _Fixed("b")
    assert FusedRetriever("f", [a, b]).identity == f"interleave(a=A 1, b=custom:{__name__}._Fixed)"
    assert FusedRetriever("f", [a, a], method="rrf").identity == "rrf(a=A 1, a=A 1)"
    assert FusedRetriever("f", [a], method="rrf", c=10, depth=200).identity == "rrf(c=10, depth=200; a=A 1)"
    assert registry.retriever_identity("hybrid") == (
        f"interleave(bm25s={registry.retriever_identity('bm25s')}, "
        f"minilm={registry.retriever_identity('minilm')})"
    )


def test_cached_run_with_unknown_passage_is_an_error(tmp_path):
    path = tmp_path / "r.trec"
    registry.retrieve("bm25s", CORPUS, QUERIES, 3, path)
    path.write_text(path.read_text().replace("p8", "p_ghost"))
    with pytest.raises(DataFormatError, match=r"unknown passage 'p_ghost'.*delete both files"):
        registry.retrieve("bm25s", CORPUS, QUERIES, 3, path)


# ------------------------------------------------------------------------------ dense (MiniLM)

@pytest.fixture(scope="module")
def isolated(tmp_path_factory):
    """Embedding cache, local model registry and shared embedders under a temporary folder."""
    root = tmp_path_factory.mktemp("retrieval_root")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(models, "PATHS", Paths(root))
        mp.setattr(embeddings, "PATHS", Paths(root))
        mp.setattr(embeddings, "_EMBEDDERS", {})
        yield root


@pytest.fixture(scope="module")
def minilm(isolated):
    return registry.make_retriever("minilm", CORPUS)


@pytest.mark.slow
def test_dense_minilm_ranks_the_matching_passage_first(minilm):
    from inferqa_utils.retrieval.dense import DenseRetriever

    assert isinstance(minilm, DenseRetriever) and minilm.name == "minilm" and minilm.dim == 384
    run = minilm.search(QUERIES, k=4)
    assert [run[q][0][0] for q in QUERIES] == ["p3", "p8", "p1"]
    assert all(len(v) == 4 for v in run.values())
    scores = [s for _, s in run["q1"]]
    assert scores == sorted(scores, reverse=True) and scores[0] <= 1.0001
    assert len(minilm.search_one("violin bow", k=100)) == len(CORPUS)  # k > corpus size
    with pytest.raises(EmptyQueryError):
        minilm.search({"q": "   "})


@pytest.mark.slow
def test_hybrid_contains_both_top1(minilm):
    hybrid = registry.make_retriever("hybrid", CORPUS)
    assert isinstance(hybrid, FusedRetriever) and hybrid.name == "hybrid"
    queries = {"q": "capital city on the Seine"}
    sparse_top = hybrid.retrievers[0].search(queries, 5)["q"][0][0]
    dense_top = hybrid.retrievers[1].search(queries, 5)["q"][0][0]
    fused = [p for p, _ in hybrid.search(queries, 5)["q"]]
    assert fused[0] == sparse_top and dense_top in fused[:2] and len(fused) == len(set(fused)) == 5


@pytest.mark.slow
def test_rrf_by_name(minilm):
    rrf = registry.make_retriever("rrf", CORPUS)
    assert [r.name for r in rrf.retrievers] == ["bm25s", "minilm", "e5-small"]
    assert rrf.search({"q": "largest planet Jupiter"}, 3)["q"][0][0] == "p8"


@pytest.mark.slow
def test_locally_registered_sentence_transformer_is_a_dense_retriever(minilm, isolated):
    ckpt = isolated / "ft-minilm"
    minilm.embedder._load().save(str(ckpt))  # stands in for a fine-tuned checkpoint
    models.register_local("FT-MiniLM", "sentence-transformers", ckpt)
    assert "FT-MiniLM" in registry.retriever_names()
    ft = registry.make_retriever("FT-MiniLM", CORPUS)
    assert ft.name == "FT-MiniLM" and ft.search_one("penguins", 1)[0][0] == "p3"
    ident = registry.retriever_identity("FT-MiniLM")
    assert ft.identity == ident and ident.startswith("local:")
    (ckpt / "README.md").write_text("retrained")  # a changed checkpoint invalidates cached runs
    assert registry.retriever_identity("FT-MiniLM") != ident


def test_control_corpus_relevance_uses_gold_answers_not_the_pool():
    from inferqa_utils.ir.datamodel import Dataset, Hint, Question
    from inferqa_utils.retrieval.control import control_corpus

    qs = {
        "a": Question(
            "a",
            "Which city has gondolas?",
            ["Venice", "Venezia", "Gondola"],
            [Hint("x")],
            reference="Venice is a city in Italy built on canals.",
            meta={"gold_answers": ["Venice"]},
        ),
        "b": Question(
            "b",
            "Which boat is rowed in it?",
            ["Gondola"],
            [Hint("y")],
            reference="A gondola is a rowing boat; gondolas are common in Venice.",
        ),
        "c": Question("c", "No reference here?", ["Nothing"], [Hint("z")]),
    }
    ds = Dataset("t", qs, splits={"test": ["a", "b", "c"]})
    corpus, qrels = control_corpus(ds, "test")
    assert set(corpus) == {"ref:a", "ref:b"}
    # a: both references name Venice; the pool's "Gondola" (not gold) does not count
    assert qrels == {"a": {"ref:a": 2, "ref:b": 2}, "b": {"ref:b": 2}}


def test_control_corpus_adds_the_sources_other_references():
    from inferqa_utils.ir.datamodel import Dataset, Hint, Question
    from inferqa_utils.retrieval.control import control_corpus

    built = Dataset("t", {"a": Question("a", "Which city has gondolas?", ["Venice"], [Hint("x")],
                                        reference="Venice is built on canals.")}, splits={"test": ["a"]})
    source = Dataset(
        "src",
        {
            "a": Question(
                "a",
                "Which city has gondolas?",
                ["Venice"],
                [Hint("x")],
                reference="Venice is built on canals.",
            ),
            "z": Question(
                "z",
                "Unbuilt question?",
                ["Paris"],
                [Hint("y")],
                reference="Paris, not Venice, has the Louvre.",
            ),
            "n": Question("n", "No reference?", ["Rome"], [Hint("w")]),
        },
    )
    corpus, qrels = control_corpus(built, "test", source=source)
    assert set(corpus) == {"ref:a", "ref:z"}  # distractors from questions that were not built
    assert qrels == {"a": {"ref:a": 2, "ref:z": 2}}


def test_cross_corpus_finding_strict_and_lenient_views():
    import pandas as pd

    from inferqa_utils import stages as ex  # corpus labels
    from inferqa_utils.retrieval.conditions import cross_corpus_sentence

    def rows(corpus, hits, n):
        return pd.DataFrame({"Hit@10": hits, "n_questions": [n] * len(hits), "corpus": corpus},
                            index=["bm25", "e5-small"])

    # No label-2 passage: the strict comparison cannot be tested, the lenient one still can.
    both = pd.concat([rows(ex.SUPPORTING, [float("nan")] * 2, 0), rows(ex.CONTAINING, [80.0, 50.0], 19),
                      rows(ex.SUPPORTING_LENIENT, [54.17, 66.67], 24)])
    text = cross_corpus_sentence(both, ["bm25", "e5-small"], 15)
    assert "cannot be tested" in text and "rests on 0 question(s)" in text
    assert "label ≥ 1, 24 questions" in text and "holds for 1 of 2 retrievers (bm25)" in text
    # Without lenient rows only the strict sentence is written.
    strict = pd.concat([rows(ex.SUPPORTING, [0.0, 100.0], 1), rows(ex.CONTAINING, [100.0, 100.0], 13)])
    text = cross_corpus_sentence(strict, ["bm25", "e5-small"], 15)
    assert "holds for 1 of 2 retrievers (bm25)" in text and "label ≥ 1" not in text


def test_corpora_lengths_name_each_passages_question():
    """Passage lengths carry the question each passage belongs to — a control reference's too, when its
    question was not built (the finding resamples questions)."""
    from inferqa_utils.ir.datamodel import Dataset, Hint, Passage, Question
    from inferqa_utils.retrieval.conditions import corpora_lengths

    ds = Dataset("d", questions={"q1": Question("q1", "who?", ["x"], [Hint("h")])},
                 passages={"q1_p": Passage("q1_p", "q1", (0,), "a b c")})
    t = corpora_lengths(ds, {"q1_p": "a b c"}, {"ref:q1": "d e", "ref:q9:2": "f"})
    assert t[["corpus", "pid", "qid", "tokens"]].values.tolist() == [
        ["answer-supporting", "q1_p", "q1", 3], ["answer-containing", "ref:q1", "q1", 2],
        ["answer-containing", "ref:q9:2", "q9", 1]]
