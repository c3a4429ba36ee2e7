"""Rerankers (paper 000 §5.3): permutation parsing, sliding windows, depth handling, oracle helpers,
cross-encoder loading errors, and each LLM reranker on the tiny model (SmolLM2-135M)."""

from __future__ import annotations

import re

import pytest

from inferqa_utils.core import models
from inferqa_utils.rerank import (
    RERANKERS,
    CrossEncoderReranker,
    DenseReranker,
    ListwiseLLMReranker,
    PairwiseScoreReranker,
    PointwiseLLMReranker,
    QueryLikelihoodReranker,
    make_reranker,
    needs_llm,
    oracle_candidates,
    oracle_run,
    parse_permutation,
    reranker_spec,
    sliding_windows,
)

# --------------------------------------------------------------------------- parse_permutation


@pytest.mark.parametrize(("text", "n", "expected"), [
    ("[3] > [1] > [2]", 3, [2, 0, 1]),
    ("[2] > [1]", 4, [1, 0, 2, 3]),  # missing ids appended in original order
    ("[2] > [2] > [9] > [0] > [1]", 3, [1, 0, 2]),  # duplicates and out-of-range ignored
    ("Ranking: [ 4 ]>[3] > [1] > [2]. Passage [4] is best.", 4, [3, 2, 0, 1]),
    ("3 > 1 > 2", 3, [2, 0, 1]),  # no brackets: bare integers
    ("I cannot rank these.", 3, [0, 1, 2]),
    ("", 0, []),
])
def test_parse_permutation(text, n, expected):
    out = parse_permutation(text, n)
    assert out == expected
    assert sorted(out) == list(range(n))


# --------------------------------------------------------------------------- sliding_windows

def test_sliding_windows_rankgpt_default():
    w = sliding_windows(100, 20, 10)
    assert w[0] == (80, 100) and w[1] == (70, 90) and w[-1] == (0, 20)
    assert w == [(s, s + 20) for s in range(80, -1, -10)]


def test_sliding_windows_edges():
    assert sliding_windows(0, 20, 10) == []
    assert sliding_windows(7, 20, 10) == [(0, 7)]
    assert sliding_windows(20, 20, 10) == [(0, 20)]
    assert sliding_windows(25, 20, 10) == [(5, 25), (0, 15)]  # the top is always covered
    assert sliding_windows(6, 2, 2) == [(4, 6), (2, 4), (0, 2)]
    with pytest.raises(ValueError):
        sliding_windows(10, 0, 1)
    with pytest.raises(ValueError):
        sliding_windows(10, 5, 0)


# --------------------------------------------------------------------------- depth handling (no model)

class LengthReranker(PairwiseScoreReranker):
    """Scores a passage by its length (a stand-in for a model)."""

    def score_pairs(self, pairs):
        return [float(len(d)) for _, d in pairs]


CORPUS = {f"p{i}": "x" * (i + 1) for i in range(8)}  # p7 longest


def test_depth_reorders_head_only_and_keeps_tail_order():
    run = {"q": [(f"p{i}", 10.0 - i) for i in range(8)]}  # p0 best (shortest)
    out = LengthReranker().rerank({"q": "query"}, run, CORPUS, depth=3)["q"]
    pids = [p for p, _ in out]
    assert pids == ["p2", "p1", "p0", "p3", "p4", "p5", "p6", "p7"]
    scores = [s for _, s in out]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)
    assert [p for p, _ in LengthReranker().rerank({"q": "q"}, run, CORPUS, depth=None)["q"]] == \
        [f"p{i}" for i in range(7, -1, -1)]
    assert [p for p, _ in LengthReranker().rerank({"q": "q"}, run, CORPUS, depth=0)["q"]] == [
        f"p{i}" for i in range(8)
    ]


def test_rerank_errors_and_empty_lists():
    r = LengthReranker()
    assert r.rerank({"q": "x"}, {"q": []}, CORPUS) == {"q": []}
    with pytest.raises(KeyError, match="no query text"):
        r.rerank({}, {"q": [("p1", 1.0)]}, CORPUS)
    with pytest.raises(KeyError, match="not in the corpus"):
        r.rerank({"q": "x"}, {"q": [("nope", 1.0)]}, CORPUS)


class OracleWindowRanker(ListwiseLLMReranker):
    """The sliding-window logic under test with a deterministic window ranker (no LLM): it orders
    a window by the integer in each passage text, high first."""

    def __init__(self, window: int, step: int) -> None:
        super().__init__(None, window=window, step=step)  # type: ignore[arg-type]

    def rank_window(self, query, passages):
        order = sorted(range(len(passages)), key=lambda i: -int(passages[i].split()[-1]))
        reply = " > ".join(f"[{i + 1}]" for i in order)
        return order, reply


def test_listwise_sliding_windows_bubble_top_items_up():
    corpus = {f"d{i}": f"doc {i}" for i in range(30)}
    run = {"q": [(f"d{i}", 30.0 - i) for i in range(30)]}  # worst first
    rr = OracleWindowRanker(window=10, step=5)
    out = rr.rerank({"q": "which doc?"}, run, corpus, depth=30)["q"]
    assert [p for p, _ in out[:5]] == ["d29", "d28", "d27", "d26", "d25"]  # top window − step
    assert sorted(p for p, _ in out) == sorted(corpus)
    assert len(rr.replies) == len(sliding_windows(30, 10, 5))


def test_oracle_candidates_and_run():
    qrels = {"q1": {"q1_10_0": 2, "q1_01_1": 0, "q1_11_01": 1}, "q2": {"q2_1_0": 0}}
    assert oracle_candidates(qrels["q1"]) == ["q1_01_1", "q1_10_0", "q1_11_01"]
    assert oracle_candidates(qrels["q1"], min_label=1) == ["q1_10_0", "q1_11_01"]
    run = oracle_run(qrels)
    assert [p for p, _ in run["q1"]] == oracle_candidates(qrels["q1"])
    assert [s for _, s in run["q1"]] == [3.0, 2.0, 1.0]


# --------------------------------------------------------------------------- registry (no model)

class StandInLLM:
    """An engine the LLM rerankers only store at construction (nothing is called)."""

    name = "stand-in"


class StandInEmbedder:
    identity = "stand-in-embedder"


def test_registry_names_kinds_and_llm_needs():
    assert list(RERANKERS) == ["pointwise", "upr", "listwise", "cross-encoder", "dense"]
    for name, canonical, llm in [
        ("pointwise", "pointwise", True),
        ("MonoT5-LLM", "pointwise", True),
        ("upr", "upr", True),
        ("query-likelihood", "upr", True),
        ("listwise", "listwise", True),
        ("RankGPT", "listwise", True),
        ("cross-encoder", "cross-encoder", False),
        ("crossencoder", "cross-encoder", False),
        ("dense:e5-small", "dense", False),
        ("minilm", "dense", False),
        ("e5-small", "dense", False),
    ]:
        assert reranker_spec(name) is RERANKERS[canonical], name
        assert needs_llm(name) is llm and RERANKERS[canonical].needs_llm is llm
    for other in ("FT-CrossEncoder", "dense", "MiniLM", "/some/folder"):  # cross-encoder names, folders
        assert reranker_spec(other) is None and not needs_llm(other)
    assert dict(RERANKERS["pointwise"].quiet) == dict(RERANKERS["upr"].quiet) == {"progress": False}
    assert dict(RERANKERS["listwise"].quiet) == {}


def test_make_reranker_builds_from_the_registry(monkeypatch):
    llm = StandInLLM()
    assert isinstance(make_reranker("Pointwise", llm=llm), PointwiseLLMReranker)
    assert isinstance(make_reranker("query-likelihood", llm=llm, progress=False), QueryLikelihoodReranker)
    lw = make_reranker("rankgpt", llm=llm, window=4, step=2)
    assert isinstance(lw, ListwiseLLMReranker) and (lw.llm, lw.window, lw.step) == (llm, 4, 2)
    with pytest.raises(ValueError, match="needs an LLM"):
        make_reranker("upr")
    with pytest.raises(ValueError, match="does not take an LLM; LLM rerankers: pointwise, monot5-llm, upr, "
                                         "query-likelihood, listwise, rankgpt"):
        make_reranker("cross-encoder", llm=llm)
    monkeypatch.setattr("inferqa_utils.rerank.dense.load_embedder", lambda model: StandInEmbedder())
    dense = make_reranker("dense:e5-small")
    assert isinstance(dense, DenseReranker) and dense.name == "dense:e5-small"
    assert make_reranker("minilm").name == "dense:minilm"


def test_make_method_reranker_asks_the_registry(monkeypatch):
    from inferqa_utils.beyond.common import make_method_reranker, reranker_identity

    llm = StandInLLM()
    assert make_method_reranker(None) is None and make_method_reranker("None") is None
    pw = make_method_reranker("pointwise", llm)
    assert isinstance(pw, PointwiseLLMReranker) and pw.progress is False
    assert make_method_reranker("upr", llm).progress is False
    assert isinstance(make_method_reranker("listwise", llm), ListwiseLLMReranker)
    with pytest.raises(ValueError, match="needs an LLM"):
        make_method_reranker("pointwise")
    for refused in ("cross-encoder", "FT-CrossEncoder", "dense"):
        with pytest.raises(ValueError, match="unknown reranker spec"):
            make_method_reranker(refused, llm)
    monkeypatch.setattr("inferqa_utils.rerank.dense.load_embedder", lambda model: StandInEmbedder())
    dense = make_method_reranker("dense:e5-small", llm)  # the LLM is not passed on
    assert isinstance(dense, DenseReranker) and reranker_identity(dense) == "dense:e5-small:stand-in-embedder"
    assert make_method_reranker("minilm").name == "dense:minilm"


# --------------------------------------------------------------------------- factory / cross-encoder

def test_make_reranker_names_and_errors(monkeypatch, tmp_path, tiny):
    assert isinstance(make_reranker("pointwise", llm=tiny), PointwiseLLMReranker)
    assert isinstance(make_reranker("upr", llm=tiny), QueryLikelihoodReranker)
    lw = make_reranker("listwise", llm=tiny, window=4, step=2)
    assert isinstance(lw, ListwiseLLMReranker) and (lw.window, lw.step) == (4, 2)
    with pytest.raises(ValueError, match="needs an LLM"):
        make_reranker("pointwise")
    monkeypatch.setattr(models, "PATHS", models.PATHS.__class__(tmp_path))
    with pytest.raises(models.ModelError, match="register_local"):
        make_reranker("FT-CrossEncoder")
    models.register_local("FT-CE-gone", "cross-encoder", tmp_path / "gone")
    with pytest.raises(models.ModelError, match="no longer exists"):
        CrossEncoderReranker("FT-CE-gone")
    models.register_local("FT-MiniLM-x", "sentence-transformers", tmp_path)
    with pytest.raises(models.ModelError, match="not a cross-encoder"):
        CrossEncoderReranker("FT-MiniLM-x")


# --------------------------------------------------------------------------- tiny real model

QUERY = "Which planet is known as the Red Planet?"
PASSAGES = {
    "a": "Mars is the fourth planet from the Sun and looks red because of iron oxide dust.",
    "b": "Bread is baked from flour, water and yeast.",
    "c": "Jupiter is the largest planet of the solar system.",
    "d": "The red planet Mars has two small moons, Phobos and Deimos.",
}
RUN = {"q": [(p, 4.0 - i) for i, p in enumerate(PASSAGES)]}


@pytest.fixture(scope="module")
def tiny():
    from inferqa_utils.llm import load_llm

    llm = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048)
    yield llm
    llm.close()


def _check_valid(out, depth=4):
    """A run of the four passages, sorted by score, the tail below ``depth`` as the first stage left it."""
    ranked = out["q"]
    assert sorted(p for p, _ in ranked) == sorted(PASSAGES)
    scores = [s for _, s in ranked]
    assert scores == sorted(scores, reverse=True)
    assert [p for p, _ in ranked[depth:]] == [p for p, _ in RUN["q"][depth:]]


#: how relevant the scripted model finds each passage of the fixture
RELEVANCE = {"a": 3.0, "d": 2.0, "c": 1.0, "b": 0.0}


class _ScriptedLLM:
    """Stands in for the LLM with a fixed relevance per passage (:data:`RELEVANCE`): pointwise,
    log P(Yes) = rel − 1 and log P(No) = −rel − 1 (log-odds 2·rel); UPR, the question's
    log-likelihood rel − 10 over ``count_tokens`` = words + 1; listwise, the window's passages by
    relevance, high first, as ``[i] > [j] > …``."""

    name = "scripted"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    @staticmethod
    def _rel(text: str) -> float:
        return next(RELEVANCE[pid] for pid, p in PASSAGES.items() if p in text)

    def count_tokens(self, text: str) -> int:
        return len(text.split()) + 1

    def score(self, batch, continuations, desc=None, progress=True):
        self.prompts += [m[-1]["content"] for m in batch]
        if list(continuations) == ["Yes", "No"]:
            return [[self._rel(m[-1]["content"]) - 1, -self._rel(m[-1]["content"]) - 1] for m in batch]
        assert [list(c) for c in continuations] == [[QUERY]] * len(batch)  # UPR scores the question
        return [[self._rel(m[-1]["content"]) - 10] for m in batch]

    def chat(self, batch, max_tokens=None, progress=True, **kw):
        self.prompts += [m[-1]["content"] for m in batch]
        replies = []
        for m in batch:
            shown = re.findall(r"^\[(\d+)\] (.*)$", m[-1]["content"], re.M)
            order = sorted(shown, key=lambda t: -self._rel(t[1]))
            replies.append(" > ".join(f"[{i}]" for i, _ in order))
        return replies


#: the fixture's passages with the two Mars passages last (b c a d): a reranker that keeps the order fails
ADVERSE_RUN = {"q": [(p, 4.0 - i) for i, p in enumerate(["b", "c", "a", "d"])]}


@pytest.mark.parametrize(("name", "scores"), [
    ("pointwise", [6.0, 4.0, 2.0, 0.0]),
    ("upr", [(3 - 10) / 9, (2 - 10) / 9, (1 - 10) / 9, (0 - 10) / 9]),  # QUERY has 8 words: 9 tokens
    ("listwise", [4.0, 3.0, 2.0, 1.0]),
])
def test_llm_rerankers_follow_the_models_relevance(name, scores):
    """Each LLM reranker puts the passages in the scripted model's order a, d, c, b with the scores
    its formula gives; with depth 2 only the head b, c is reordered (c first) above the tail a, d."""
    llm = _ScriptedLLM()
    rr = make_reranker(name, llm=llm, **({"progress": False} if name != "listwise" else {}))
    out = rr.rerank({"q": QUERY}, ADVERSE_RUN, PASSAGES, depth=4)["q"]
    assert [p for p, _ in out] == ["a", "d", "c", "b"]
    assert [s for _, s in out] == pytest.approx(scores)
    assert all(QUERY in t for t in llm.prompts) if name != "upr" else all(QUERY not in t for t in llm.prompts)
    head = rr.rerank({"q": QUERY}, ADVERSE_RUN, PASSAGES, depth=2)["q"]
    assert [p for p, _ in head] == ["c", "b", "a", "d"] and [s for _, s in head] == sorted(
        (s for _, s in head), reverse=True)


def test_rerank_all_gives_the_llm_only_to_llm_rerankers_and_the_window_to_listwise():
    from inferqa_utils.rerank.conditions import rerank_all

    llm = _ScriptedLLM()
    runs, cost = rerank_all(["pointwise", "rankgpt"], llm, {"q": QUERY}, ADVERSE_RUN, PASSAGES, depth=4,
                            window=2, step=1)
    assert list(runs) == list(cost) == ["pointwise", "rankgpt"]
    assert [p for p, _ in runs["pointwise"]["q"]] == ["a", "d", "c", "b"]
    # windows of 2, step 1, bottom up: one pass carries the best passage to the top, not a full sort
    assert runs["rankgpt"]["q"][0][0] == "a"
    assert sum("Here are 2 passages" in t for t in llm.prompts) == 3


def test_rerank_key_by_hand():
    """A reranked run's key: corpus, questions and first-stage order sha256; reranker, identity, depth,
    params."""
    from inferqa_utils.core.fingerprint import corpus_sha256, queries_sha256, ranking_sha256
    from inferqa_utils.rerank.stored import RERANK_SCHEMA, rerank_key

    key = rerank_key("listwise", "sha-of-model", {"q": QUERY}, RUN, PASSAGES, 4, window=2, step=1)
    assert RERANK_SCHEMA == 2
    assert key == {
        "kind": "reranked-run",
        "schema": 2,
        "inputs": {
            "corpus": corpus_sha256(PASSAGES),
            "first_stage": ranking_sha256(RUN),
            "queries": queries_sha256({"q": QUERY}),
        },
        "params": {"depth": 4, "identity": "sha-of-model", "reranker": "listwise", "step": 1, "window": 2},
    }
    rescored = {"q": [(p, 100.0 - i) for i, (p, _) in enumerate(RUN["q"])]}
    assert (
        rerank_key("listwise", "sha-of-model", {"q": QUERY}, rescored, PASSAGES, 4, window=2, step=1) == key
    )


class _CountingLLM(_ScriptedLLM):
    """The scripted LLM with counters: each prompt is a model call, or a cache hit once ``cached``."""

    identity = "scripted-1"

    def __init__(self) -> None:
        from inferqa_utils.llm.base import LLMStats

        super().__init__()
        self.stats = LLMStats()
        self.cached = False

    def score(self, batch, continuations, desc=None, progress=True):
        batch = list(batch)
        if self.cached:
            self.stats.cache_hits += len(batch)
        else:
            self.stats.model_calls += len(batch)
        return super().score(batch, continuations, desc, progress)


def test_rerank_all_reports_the_recorded_cost_of_a_rerun_served_by_the_cache(tmp_path):
    import json

    from inferqa_utils.core import artifacts
    from inferqa_utils.rerank.conditions import rerank_all

    llm, path = _CountingLLM(), tmp_path / "bm25+pointwise.trec"
    runs, first = rerank_all(
        ["pointwise"], llm, {"q": QUERY}, RUN, PASSAGES, depth=4, out_dir=tmp_path, tag="bm25"
    )
    stamp = artifacts.read_stamp(path)
    assert stamp["cost"]["llm"]["model_calls"] == 4 and stamp["cost"]["n_queries"] == 1
    assert stamp["params"] == {"depth": 4, "identity": "scripted-1", "reranker": "pointwise"}
    assert first["pointwise"] == round(stamp["cost"]["seconds_per_query"], 3)
    stamp["cost"] = {**stamp["cost"], "seconds": 123.0, "seconds_per_query": 123.0}
    artifacts.stamp_path(path).write_text(json.dumps(stamp))
    llm.cached = True
    again_runs, again = rerank_all(["pointwise"], llm, {"q": QUERY}, RUN, PASSAGES, depth=4, out_dir=tmp_path,
                                   tag="bm25")
    assert (
        again_runs == runs and again["pointwise"] == 123.0
    )  # the recorded cost, not the cache's near-zero time
    # another depth is another workload: the recorded cost does not apply; served from the cache it is unknown
    _, other = rerank_all(
        ["pointwise"], llm, {"q": QUERY}, RUN, PASSAGES, depth=2, out_dir=tmp_path, tag="bm25"
    )
    assert other["pointwise"] is None and artifacts.read_stamp(path)["params"]["depth"] == 2
    assert artifacts.read_stamp(path)["cost"]["seconds"] is None
    # a stale schema is another key: no recorded cost either
    _, fresh = rerank_all(
        ["pointwise"], llm, {"q": QUERY}, RUN, PASSAGES, depth=2, out_dir=tmp_path / "x", tag="bm25"
    )
    assert fresh["pointwise"] is None


@pytest.mark.slow
@pytest.mark.parametrize("name", ["pointwise", "upr", "listwise"])
def test_llm_rerankers_on_tiny_model(tiny, name):
    """The real engine behind each reranker: a valid run, KV reuse and token counting (what they
    order is checked with a scripted model above, and on real models below)."""
    rr = make_reranker(name, llm=tiny, **({"progress": False} if name != "listwise" else {}))
    tiny.reset_stats()
    _check_valid(rr.rerank({"q": QUERY}, RUN, PASSAGES, depth=4))
    if name == "pointwise":  # query first: the candidates share the prompt prefix, the KV cache is reused
        assert tiny.stats.model_calls == 4
        assert tiny.stats.prompt_tokens < tiny.stats.prompt_tokens_total
    if name == "upr":
        assert rr.n_tokens(QUERY) == tiny.count_tokens(QUERY) > 1
    _check_valid(rr.rerank({"q": QUERY}, RUN, PASSAGES, depth=2), depth=2)


@pytest.mark.slow
def test_upr_normalises_by_question_length(tiny):
    # llama.cpp's logits are not batch-invariant: a passage scored from a cold engine (whole prompt in
    # one chunk) may differ in the last digits from one scored after the same calls (prefix reused).
    # A warm-up call puts both compared calls in the same engine state.
    QueryLikelihoodReranker(tiny, normalize=False, progress=False).rerank({"q": QUERY}, RUN, PASSAGES)
    a = dict(QueryLikelihoodReranker(tiny, progress=False).rerank({"q": QUERY}, RUN, PASSAGES)["q"])
    b = dict(
        QueryLikelihoodReranker(tiny, normalize=False, progress=False).rerank({"q": QUERY}, RUN, PASSAGES)[
            "q"
        ]
    )
    n = tiny.count_tokens(QUERY)
    assert all(abs(a[p] * n - b[p]) < 1e-6 * max(1.0, abs(b[p])) for p in PASSAGES)


@pytest.mark.slow
def test_cached_rerun_reports_the_cost_measured_when_computed(tmp_path):
    import json

    from inferqa_utils.core import artifacts
    from inferqa_utils.llm import load_llm
    from inferqa_utils.llm.cache import GenerationCache
    from inferqa_utils.rerank.conditions import rerank_all

    llm = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048)
    llm.cache = GenerationCache(tmp_path / "c.sqlite")
    path = tmp_path / "bm25+pointwise.trec"
    try:
        _, first = rerank_all(
            ["pointwise"], llm, {"q": QUERY}, RUN, PASSAGES, depth=4, out_dir=tmp_path, tag="bm25"
        )
        stamp = artifacts.read_stamp(path)
        assert stamp["cost"]["llm"]["model_calls"] == 4
        assert round(stamp["cost"]["seconds_per_query"], 3) == first["pointwise"] > 0
        stamp["cost"]["seconds"] = stamp["cost"]["seconds_per_query"] = 123.0
        artifacts.stamp_path(path).write_text(json.dumps(stamp))
        calls = llm.stats.model_calls
        _, again = rerank_all(
            ["pointwise"], llm, {"q": QUERY}, RUN, PASSAGES, depth=4, out_dir=tmp_path, tag="bm25"
        )
        assert llm.stats.model_calls == calls  # served from the generation cache
        assert again["pointwise"] == 123.0  # the recorded cost, not the cache's near-zero time
        # another depth is another workload: the recorded cost does not apply; served from the cache it is
        # unknown
        _, other = rerank_all(
            ["pointwise"], llm, {"q": QUERY}, RUN, PASSAGES, depth=2, out_dir=tmp_path, tag="bm25"
        )
        assert other["pointwise"] is None and artifacts.read_stamp(path)["params"]["depth"] == 2
        # a cache filled elsewhere and no record: the cost is unknown, and no cost is invented
        fresh = tmp_path / "fresh"
        fresh.mkdir()
        _, unknown = rerank_all(
            ["pointwise"], llm, {"q": QUERY}, RUN, PASSAGES, depth=4, out_dir=fresh, tag="bm25"
        )
        assert unknown["pointwise"] is None
        assert artifacts.read_stamp(fresh / "bm25+pointwise.trec")["cost"]["seconds"] is None
    finally:
        llm.close()


@pytest.mark.slow
@pytest.mark.parametrize("name,model", [("pointwise", "smollm2-135m"), ("upr", "smollm2-135m"),
                                        ("listwise", "qwen2.5-coder-1.5b")])
def test_llm_rerankers_put_the_obvious_passages_first(name, model):
    """On a query with two obviously relevant passages ranked last by the first stage, the real
    reranker moves both to the top two. Listwise needs the 1.5B: SmolLM2 and the 0.5B echo the input
    order (docs/benchmarks.md, reranking cost)."""
    from inferqa_utils.llm import load_llm

    llm = load_llm(model, use_cache=False, shared=False, n_ctx=2048)
    rr = make_reranker(name, llm=llm, **({"progress": False} if name != "listwise" else {}))
    order = [p for p, _ in rr.rerank({"q": QUERY}, ADVERSE_RUN, PASSAGES, depth=4)["q"]]
    llm.close()
    assert set(order[:2]) == {"a", "d"}, order
