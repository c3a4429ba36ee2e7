"""Notebook-07 methods (inferqa_utils.beyond): the non-LLM logic with hand-checked values, the
paper reference file and the paper-vs-ours rule, plus one tiny real-model decomposition run."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from tiny_corpus import CORPUS

from inferqa_utils.answering.prompts import NO_ANSWER
from inferqa_utils.beyond import candidates as csr
from inferqa_utils.beyond import comparison as rep
from inferqa_utils.beyond import decomposition as dec
from inferqa_utils.beyond import disentangled as dis
from inferqa_utils.beyond import knowledge as know
from inferqa_utils.beyond.common import METHOD_SCHEMA, cached_method, method_key, split_sentences

# ----------------------------------------------------------------------------- decomposition


def test_pool_top_k_head_then_tail():
    lists = [["a", "b", "c", "d"], ["b", "e", "f"]]
    assert dec.pool_top_k(lists, 2) == ["a", "b", "e", "c", "f", "d"]
    assert dec.pool_top_k(lists, 1) == ["a", "b", "c", "e", "d", "f"]
    assert dec.pool_top_k(lists, 2, depth=4) == ["a", "b", "e", "c"]
    assert dec.pool_top_k([["x", "y"], []], 3) == ["x", "y"]
    assert dec.pool_top_k([], 3) == []
    with pytest.raises(ValueError, match="k_per"):
        dec.pool_top_k(lists, 0)


def test_query_lists():
    assert dec.query_lists("Q?", ["A?", "B?"]) == ["Q?", "A?", "B?"]
    assert dec.query_lists("Q?", ["A?"], include_original=False) == ["A?"]
    assert dec.query_lists("Q?", [], include_original=False) == ["Q?"]


@pytest.mark.parametrize(
    "reply, expected",
    [
        (
            "1. Who wrote the opera?\n2. Which composer died in Vienna?",
            ["Who wrote the opera?", "Which composer died in Vienna?"],
        ),
        (
            "Sub-questions:\n- Who wrote the opera?\n* Which composer died in Vienna?\n",
            ["Who wrote the opera?", "Which composer died in Vienna?"],
        ),
        (
            "Q1: Who wrote the opera? Q2: Which composer died in Vienna?",
            ["Who wrote the opera?", "Which composer died in Vienna?"],
        ),
        (
            "**1.** Who wrote the opera?\n1) who wrote the opera ?\n3. Which city is it in?\n4. Where was he "
            "born?",
            ["Who wrote the opera?", "Which city is it in?", "Where was he born?"],
        ),
        (
            "1. Find the composer of the opera\n2. Find where he died",
            ["Find the composer of the opera", "Find where he died"],
        ),
        ("Which Austrian composer wrote the opera?\n2. Why?", []),
        ("", []),
    ],
)
def test_parse_subquestions(reply, expected):
    assert dec.parse_subquestions(reply, "Which Austrian composer wrote the opera?", max_sub=3) == expected


def test_parse_subquestions_caps_and_validates():
    reply = "\n".join(f"{i}. Which clue number {i} matters here?" for i in range(1, 6))
    assert len(dec.parse_subquestions(reply, max_sub=2)) == 2
    with pytest.raises(ValueError, match="max_sub"):
        dec.parse_subquestions(reply, max_sub=0)


def test_knn_select_orders_most_similar_last():
    ex = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8], [0.8, 0.6]])
    q = np.array([1.0, 0.0])  # similarities 1.0, 0.0, 0.6, 0.8
    assert dec.knn_select(q, ex, 2) == [3, 0]
    assert dec.knn_select(q, ex, 3) == [2, 3, 0]
    assert dec.knn_select(q, np.array([[1.0, 0.0], [1.0, 0.0]]), 1) == [0]  # tie → lower index


def test_decompose_messages_and_static_examples():
    picks = dec.select_examples(["q1", "q2"], 3)
    assert picks == [[0, 1, 2], [0, 1, 2]]
    msgs = dec.decompose_messages("Which chemist made Photo 51?", [dec.EXAMPLES[i] for i in picks[0]], 2)
    assert [m["role"] for m in msgs] == ["system"] + ["user", "assistant"] * 3 + ["user"]
    assert "at most 2" in msgs[0]["content"]
    assert msgs[2]["content"].startswith("1. ") and msgs[2]["content"].count("\n") == 1
    assert msgs[-1]["content"] == "Question: Which chemist made Photo 51?\nSub-questions:"
    with pytest.raises(ValueError, match="selection"):
        dec.select_examples(["q"], 2, "random")


@pytest.mark.parametrize("reply, evidence, answer", [
    ("[Document 1] says she was born in London. These clues describe her.\nAnswer: Rosalind Franklin.",
     "[Document 1] says she was born in London. These clues describe her.", "Rosalind Franklin"),
    ("Evidence: It is in Siberia.\nAnswer:\nLake Baikal", "It is in Siberia.", "Lake Baikal"),
    ("Answer: NO ANSWER", "", NO_ANSWER),
    ("The clues point to a lake.\nLake Baikal", "The clues point to a lake.", "Lake Baikal"),
    ("Evidence: hmm\nAnswer: The answer is Lake Baikal", "hmm", NO_ANSWER),
    ("**Answer:** Sundial", "", "Sundial"),
])
def test_parse_cot(reply, evidence, answer):
    assert dec.parse_cot(reply) == (evidence, answer)


def test_cot_messages_have_two_worked_examples():
    msgs = dec.cot_messages("Which lake?", ["Clue one.", "Clue two."])
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert msgs[2]["content"].endswith("Answer: Sundial") or msgs[2]["content"].endswith(
        "Answer: Lake Baikal"
    )
    assert (
        msgs[-1]["content"]
        == "[Document 1] Clue one.\n[Document 2] Clue two.\n\nQuestion: Which lake?\nEvidence:"
    )


# ----------------------------------------------------------------------------- knowledge-aware

def test_interleave_and_diverse_merge():
    from inferqa_utils.retrieval.fusion import interleave_lists

    assert interleave_lists([["a", "x", "b"], ["x", "c"]]) == ["a", "x", "b", "c"]
    assert know.diverse_merge([["b", "a", "c"], ["c", "b", "a"]], ["a", "b", "c"], ["d"]) == [
        "b", "c", "a", "d",
    ]
    assert know.diverse_merge([["b"], ["c"]], ["a", "b", "c"], ["d", "b"]) == ["b", "c", "a", "d"]
    assert know.diverse_merge([], ["a", "b"], ["c"]) == ["a", "b", "c"]


def test_parse_knowledge_elements():
    demo = know._DECLARE_DEMO[2]
    els, given = know.parse_knowledge_elements(demo)
    assert els == [
        "Traditional Japanese crafts made with paper",
        "A craft that folds one square sheet without cutting or gluing", "The Japanese name of that craft",
    ]
    assert given == [2]
    reply = (
        "Thoughts: the question needs two things.\n**Knowledge Elements:**\n1. **Year of birth**\n2) Place "
        "of study.\n"
        "- Place of study\nAnalysis for given document: covers 1\nGiven Knowledge: 1, 2, 7"
    )
    assert know.parse_knowledge_elements(reply) == (["Year of birth", "Place of study"], [1, 2])
    assert know.parse_knowledge_elements("1. A\n2. B\nGiven Knowledge: None") == (["A", "B"], [])
    assert know.parse_knowledge_elements("1. A\n2. A\n3. B\nGiven Knowledge: 2, 3") == (["A", "B"], [1, 2])
    assert know.parse_knowledge_elements("1. A\n2. B\n3. C\nGiven Knowledge: 3, 1", max_elements=2) == (
        ["A", "B"],
        [1],
    )
    assert know.parse_knowledge_elements("1. A\n2. B\n3. C", max_elements=2) == (["A", "B"], [])
    assert know.parse_knowledge_elements("no list at all") == ([], [])


@pytest.mark.parametrize(
    "reply, expected",
    [
        (
            'Thoughts: x\nSelected Knowledge Elements:\n```json\n[\n "First element",\n "Second"\n]\n```',
            ["First element", "Second"],
        ),
        ('["a", "b", ""]', ["a", "b"]),
        ('Selected: "alpha beta", and “gamma”', ["alpha beta", "gamma"]),
        ("[broken json, 'x'\n1. one\n- two", ["one", "two"]),
        (
            '```json\n["British chemist", "X-ray image known as \'Photo 51\']\n```',
            ["British chemist", "X-ray image known as 'Photo 51'"],
        ),
        ("nothing here", []),
    ],
)
def test_parse_json_list(reply, expected):
    assert know.parse_json_list(reply) == expected


def test_match_elements():
    pool = ["The X-ray image known as 'Photo 51'", "British chemist", "Tokugawa family"]
    assert know.match_elements(
        ["x-ray image known as Photo 51", "United Nations", "british chemist"], pool
    ) == ["The X-ray image known as 'Photo 51'", "British chemist"]
    assert know.match_elements(["the Tokugawa family rule", "Tokugawa family"], pool) == ["Tokugawa family"]
    assert know.match_elements(["chem"], pool) == []  # whole words only
    assert know.match_elements([], pool) == []


def test_select_by_frequency():
    docs = [["Birth year", "Field of study"], ["field of study!", "Prize"], ["Prize", "Birth year", "Prize"]]
    assert know.select_by_frequency(docs, 2) == ["Birth year", "Field of study"]
    assert know.select_by_frequency([["x"], ["y", "x"]], 1) == ["x"]
    assert know.select_by_frequency([], 2) == []


# ----------------------------------------------------------------------------- disentangled

PHOTO51 = (
    "Which British chemist produced the X-ray diffraction image known as 'Photo 51', which helped reveal "
    "the double-helix structure of DNA?"
)


def test_entity_view():
    assert dis.entity_view(PHOTO51) == ["Photo 51", "British", "X-ray", "DNA"]
    assert dis.entity_view("Which triptych by Hieronymus Bosch hangs in the Museo del Prado in Madrid?") == [
        "Hieronymus Bosch", "Museo del Prado", "Madrid"]
    assert dis.entity_view("what is the deepest lake?") == []


def test_noun_view():
    assert dis.noun_view(PHOTO51) == ["british", "chemist", "x-ray", "diffraction", "image", "photo",
                                      "double-helix", "structure", "dna"]
    assert dis.noun_view("Which gas makes up about 78 percent of Earth's atmosphere?") == [
        "gas", "percent", "earth", "atmosphere"]


def test_ngram_view_and_exact_match_filter():
    q = "Which gas makes up about 78 percent of Earth's atmosphere?"
    assert dis.ngram_view(q) == ["gas makes", "78 percent", "earth atmosphere", "percent of earth"]
    grams = dis.CorpusNgrams(["The percent of Earth covered by water.", "78 percent!"], max_n=3)
    assert "percent of earth" in grams and "gas makes" not in grams
    assert dis.ngram_view(q, keep=grams) == ["78 percent", "percent of earth"]
    assert dis.ngram_view(q, 2, keep=lambda g: g.startswith("gas")) == ["gas makes"]


def test_query_views():
    v = dis.query_views("Which river flows through Baghdad?", ("entities", "question"))
    assert v == {"entities": ["Baghdad"], "question": ["Which river flows through Baghdad?"]}
    with pytest.raises(ValueError, match="unknown view"):
        dis.query_views("q", ("titles",))


def test_masking():
    words = dis.mask_set(PHOTO51)
    assert words == {"photo", "51", "british", "x-ray", "dna"}
    assert dis.mask_words(PHOTO51, words) == (
        "Which [M] chemist produced the [M] diffraction image known as '[M]', "
        "which helped reveal the double-helix structure of [M]?"
    )
    assert (
        dis.mask_words("New York's mayor met the NEW york team", {"new", "york"})
        == "[M] mayor met the [M] team"
    )
    assert dis.mask_words("nothing to hide", set()) == "nothing to hide"
    assert dis.mask_words("Paris, Paris and Rome", {"paris"}, token="_") == "_, _ and Rome"


def test_passages_from_hints():
    scores = {"h1": 0.9, "h2": 0.8, "h3": 0.1, "h4": 0.5}
    units = {"p1": ["h3"], "p2": ["h1", "h3"], "p3": ["h2", "h1"], "p4": ["h4"], "p5": ["h3", "h3"]}
    # top-2 hints: h1, h2 → primary p3 1.7, p2 0.9, others 0; secondary (mean): p4 0.5, p1 = p5 0.1
    out = dis.passages_from_hints(scores, units, top_h=2, order=["p5", "p1"])
    assert [p for p, _ in out] == ["p3", "p2", "p4", "p5", "p1"]
    assert [s for _, s in out] == [5.0, 4.0, 3.0, 2.0, 1.0]


def test_split_sentences():
    assert split_sentences("It is old.  It is big! Is it? yes") == [
        "It is old.", "It is big!", "Is it?", "yes",
    ]


# ----------------------------------------------------------------------------- candidate support (ours)

def test_candidate_weights():
    w = csr.candidate_weights(["Paris", NO_ANSWER, "paris.", "Lyon"])
    assert [c for c, _ in w] == ["Paris", "Lyon"]
    assert w[0][1] == pytest.approx(16 / 19) and w[1][1] == pytest.approx(3 / 19)
    w = csr.candidate_weights(["X", "Y", "Z", "Y"], top_c=1)  # Y: 1/2 + 1/4 = 0.75 < X: 1
    assert w == [("X", 1.0)]
    assert csr.candidate_weights(["X", "Y"], top_c=2)[1] == ("Y", pytest.approx(1 / 3))
    assert csr.candidate_weights([NO_ANSWER, "", " ", "The"]) == []  # "the" normalises to nothing
    assert csr.candidate_weights(["Médecins Sans Frontières", "medecins sans frontieres"]) == [
        ("Médecins Sans Frontières", 1.0)]
    with pytest.raises(ValueError, match="top_c"):
        csr.candidate_weights(["A"], top_c=0)


def test_agreement_support_and_combine():
    weights = [("Paris", 0.75), ("Lyon", 0.25)]
    agree = csr.agreement_scores({"d1": "paris", "d2": "Lyon", "d3": NO_ANSWER, "d4": "Nice"}, weights)
    assert agree == {"d1": 0.75, "d2": 0.25, "d3": 0.0, "d4": 0.0}
    sims = np.array([[0.2, 0.4], [0.8, 0.0], [0.5, 0.5]])
    assert csr.support_scores(sims, [0.75, 0.25]).tolist() == pytest.approx([0.25, 0.6, 0.5])
    with pytest.raises(ValueError, match="do not match"):
        csr.support_scores(sims, [1.0])
    order = ["d4", "d3", "d2", "d1"]
    support = {"d1": 0.1, "d2": 0.2, "d3": 0.6, "d4": 0.6}
    assert csr.combine(order, agree, support) == ["d1", "d4", "d3", "d2"]  # 0.85, 0.6 (tie: order), 0.6, 0.45
    assert csr.combine(order, agree, support, agreement_weight=0.0) == ["d4", "d3", "d2", "d1"]


# ----------------------------------------------------------------------------- common plumbing

def test_method_key_by_hand():
    from inferqa_utils.core.fingerprint import corpus_sha256, queries_sha256, run_sha256

    corpus, queries, first = {"p1": "a"}, {"q1": "?"}, {"q1": [("p1", 1.0)]}
    assert method_key("m one", corpus, queries, 3, llm="sha", k=1) == {
        "kind": "method-run",
        "schema": 2,
        "inputs": {"corpus": corpus_sha256(corpus), "queries": queries_sha256(queries)},
        "params": {"k": 1, "llm": "sha", "method": "m one", "version": 3},
    }
    assert method_key("m one", corpus, queries, 3, first=first)["inputs"]["first_stage"] == run_sha256(first)


def test_cached_method_reuses_and_invalidates(tmp_path):
    calls = []

    def compute():
        calls.append(1)
        return {"q1": [("p1", 2.0), ("p2", 1.0)]}, {"q1": {"note": "x"}}

    corpus, queries = {"p1": "a", "p2": "b"}, {"q1": "?"}
    key = method_key("m one", corpus, queries, 1, k=1)
    r1 = cached_method("m one", tmp_path, key, compute, n_queries=1)
    r2 = cached_method("m one", tmp_path, key, compute, n_queries=1)
    assert len(calls) == 1 and not r1.cached and r2.cached
    assert (
        r2.run == r1.run
        and r2.details == {"q1": {"note": "x"}}
        and r2.seconds == pytest.approx(r1.seconds, abs=1e-3)
    )
    stamp = json.loads((tmp_path / "m one.trec.stamp.json").read_text())
    assert stamp["params"] == {"k": 1, "method": "m one", "version": 1} and stamp["schema"] == METHOD_SCHEMA
    assert stamp["cost"] == {"seconds": round(r1.seconds, 3), "n_queries": 1,
                             "seconds_per_query": round(r1.seconds, 6), "llm": {}}
    cached_method("m one", tmp_path, method_key("m one", corpus, queries, 1, k=2), compute, n_queries=1)
    assert len(calls) == 2
    # a stamp of another schema misses: recomputed
    stamp = json.loads((tmp_path / "m one.trec.stamp.json").read_text())
    (tmp_path / "m one.trec.stamp.json").write_text(json.dumps({**stamp, "schema": METHOD_SCHEMA - 1}))
    r3 = cached_method("m one", tmp_path, method_key("m one", corpus, queries, 1, k=2), compute, n_queries=1)
    assert len(calls) == 3 and not r3.cached
    (tmp_path / "m one.details.json").write_text("not json")  # unreadable details: recomputed
    assert not cached_method(
        "m one", tmp_path, method_key("m one", corpus, queries, 1, k=2), compute, 1
    ).cached
    cached_method("m one", None, method_key("m one", corpus, queries, 1, k=2), compute, n_queries=1)
    assert len(calls) == 5


def test_baseline_costs_read_the_runs_cost_records(tmp_path, monkeypatch):
    """A retriever's seconds/query is its run's recorded seconds per query (4 decimals); a reranked
    run's is notebook 03's seconds/query plus its first stage's; unknown without a cost record."""
    from inferqa_utils import stages
    from inferqa_utils.core import artifacts
    from inferqa_utils.core.config import Paths

    monkeypatch.setattr(stages, "PATHS", Paths(tmp_path))
    runs = tmp_path / "build" / "runs" / "d" / "supporting"
    (tmp_path / "results").mkdir()
    artifacts.write(runs / "bm25.trec", lambda tmp: tmp.write_text("q Q0 p 1 1.0 bm25\n"), {"k": 1},
                    artifacts.Cost(1.5, 300))
    artifacts.write(runs / "minilm.trec", lambda tmp: tmp.write_text("q Q0 p 1 1.0 minilm\n"), {"k": 1})
    pd.DataFrame({"seconds/query": [None, 2.25]}, index=["bm25", "bm25 + pointwise"]).to_csv(
        stages.RERANKING.path("d", "test"))
    assert rep.baseline_costs("d", "test", ["bm25", "minilm", "bm25+pointwise", "absent"]) == {
        "bm25": 0.005, "minilm": None, "bm25+pointwise": 2.255, "absent": None}


# ----------------------------------------------------------------------------- report and paper reference

def _toy_report():
    runs = {"bm25": {"q1": [("a", 2.0), ("x", 1.0)], "q2": [("y", 2.0), ("b", 1.0)]},
            "ours": {"q1": [("a", 2.0), ("x", 1.0)], "q2": [("b", 2.0), ("y", 1.0)]}}
    qrels = {"q1": {"a": 1}, "q2": {"b": 2}}
    answers = pd.DataFrame({"qid": ["q1", "q2", "q1", "q2"], "system": ["bm25", "bm25", "ours", "ours"],
                            "em": [False, False, True, False], "judged": [False, True, True, True],
                            "no_answer": [True, False, False, False]})
    return rep.report_table(runs, {"bm25": "retriever", "ours": "method"}, qrels, answers,
                            {"bm25": 0.01, "ours": 1.5}, metrics=("Hit@1", "MRR@100"))


def test_report_table_and_summary():
    t = _toy_report()
    assert list(t.index) == ["bm25", "ours"]
    assert t.loc["bm25", "Hit@1"] == 50.0 and t.loc["ours", "Hit@1"] == 100.0
    assert t.loc["bm25", "MRR@100"] == 75.0
    assert (
        t.loc["ours", "EM"] == 50.0 and t.loc["bm25", "judged"] == 50.0 and t.loc["bm25", "no_answer"] == 50.0
    )
    assert t.loc["ours", "seconds/query"] == 1.5 and t.loc["ours", "kind"] == "method"
    s = rep.best_method_summary(t, "toy", dense=(), columns=("Hit@1",))
    assert "**ours** 100.00, +50.00 over bm25 (50.00)" in s
    assert rep.best_of(t, "method", "EM") == ("ours", 50.0)
    t2 = pd.concat([t, t.loc[["ours"]].rename(index={"ours": "ours 2"})])
    assert "every method ties at 100.00" in rep.best_method_summary(t2, "toy", dense=(), columns=("Hit@1",))
    assert rep.best_of(t, "oracle", "EM") is None


class _ScriptedLLM:
    """Stands in for the decomposing LLM: each prompt gets the reply scripted for its question."""

    name = "scripted"

    def __init__(self, replies: dict[str, str]) -> None:
        self.replies = replies
        self.prompts: list[list[dict[str, str]]] = []

    def chat(self, batch, max_tokens=None, desc="", progress=True):
        self.prompts += batch
        return [self.replies[m[-1]["content"].removeprefix("Question: ").removesuffix("\nSub-questions:")]
                for m in batch]


class _ListRetriever:
    """A retriever whose ranked list per query text is given."""

    def __init__(self, lists: dict[str, list[str]]) -> None:
        self.lists = lists

    def search(self, queries, k):
        return {
            key: [(p, 1.0 / r) for r, p in enumerate(self.lists[text][:k], 1)]
            for key, text in queries.items()
        }


def test_decompose_parses_each_questions_own_reply_and_pools_their_searches():
    """Scripted replies: q1's copy of its own question is dropped and max_sub = 2 cuts the rest;
    each question gets the sub-questions of its own reply; the pooled run takes the top-1 of the
    question's and each sub-question's list round-robin (p0, p6; the second p0 is a duplicate),
    then the rest (p2, p3)."""
    q1, q2 = (
        "Which tower in the French capital is made of wrought iron?",
        "Which planet is the largest gas giant?",
    )
    llm = _ScriptedLLM({
        q1: f"1. Which city is the capital of France?\n2. {q1}\n3. Which towers are made of wrought iron?\n"
            "4. Who designed the tower in Paris?",
        q2: "Sub-questions:\n- Which planets are gas giants?",
    })
    out = dec.decompose(llm, {"q1": q1, "q2": q2}, n_examples=2, max_sub=2, progress=False)
    assert out["q1"]["subquestions"] == [
        "Which city is the capital of France?",
        "Which towers are made of wrought iron?",
    ]
    assert out["q2"]["subquestions"] == ["Which planets are gas giants?"]
    assert [o["examples"] for o in out.values()] == [[0, 1], [0, 1]] and len(llm.prompts) == 2
    assert [m[-1]["content"] for m in llm.prompts] == [f"Question: {q}\nSub-questions:" for q in (q1, q2)]
    lists = {
        q1: ["p0", "p6"],
        "Which city is the capital of France?": ["p6", "p2"],
        "Which towers are made of wrought iron?": ["p0", "p3"],
        q2: ["p8"],
        "Which planets are gas giants?": ["p8", "p4"],
    }
    run = dec.decomposition_run({"q1": q1, "q2": q2}, {q: o["subquestions"] for q, o in out.items()},
                                _ListRetriever(lists), CORPUS,
                                params=dec.DecompositionParams(k_per=1, depth=10))
    assert {q: [p for p, _ in ranked] for q, ranked in run.items()} == {"q1": ["p0", "p6", "p2", "p3"],
                                                                        "q2": ["p8", "p4"]}


# ----------------------------------------------------------------------------- tiny real model

@pytest.mark.slow
def test_decomposition_on_tiny_model():
    from inferqa_utils.ir.lexical import BM25sRetriever
    from inferqa_utils.llm import load_llm

    llm = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048)
    try:
        qs = {"q1": "Which tower in the French capital is made of wrought iron?",
              "q2": "Which planet is the largest gas giant of the Solar System?"}
        out = dec.decompose(llm, qs, n_examples=2, max_sub=2, progress=False)
    finally:
        llm.close()
    assert llm.stats.model_calls == 2
    for q, d in out.items():
        assert isinstance(d["reply"], str) and d["examples"] == [0, 1]
        assert len(d["subquestions"]) <= 2
        said = " ".join(d["reply"].replace("**", "").split()).lower()
        assert all(s.lower().rstrip("?") in said for s in d["subquestions"])  # taken from its own reply
        for s in d["subquestions"]:
            assert len(s.split()) >= 3 and s != qs[q]
    bm25 = BM25sRetriever(CORPUS)
    run = dec.decomposition_run(
        qs, {q: d["subquestions"] for q, d in out.items()}, bm25, CORPUS,
        params=dec.DecompositionParams(k_per=2, depth=10),
    )
    for q in qs:
        ids = [p for p, _ in run[q]]
        assert len(ids) == len(set(ids)) and set(ids) <= set(CORPUS)
        assert ids[0] == bm25.search({"x": qs[q]}, 1)["x"][0][0]  # the question's own top-1 leads the pool
    assert run["q1"][0][0] in ("p0", "p6") and run["q2"][0][0] == "p8"


@pytest.mark.slow
def test_knn_example_selection_with_minilm():
    picks = dec.select_examples(
        [
            "Which river runs through the city of Baghdad?",
            "What is the name for a scientist who studies volcanoes and earthquakes?",
        ],
        2,
        "knn",
    )
    assert picks[0][-1] == 2  # the Baghdad example is the nearest, placed last
    assert picks[1][-1] == 6  # the seismologist example
    assert all(len(p) == 2 and len(set(p)) == 2 for p in picks)


# ----------------------------------------------------------------------------- the report's systems

def test_report_systems_add_the_methods_their_first_stage_costs_and_the_cot_reader(tmp_path, monkeypatch):
    """Costs: bm25 1.5 s / 300 queries = 0.005; bm25+pointwise 2.25 + 0.005; e5-small 3 s / 300 =
    0.01; method m1 2 s / 4 questions = 0.5; m2 1 s / 4 = 0.25 plus its first stage e5-small = 0.26;
    the CoT system reads m1's run at m1's cost."""
    from inferqa_utils import stages
    from inferqa_utils.beyond.common import MethodResult
    from inferqa_utils.core import artifacts
    from inferqa_utils.core.config import Paths

    monkeypatch.setattr(stages, "PATHS", Paths(tmp_path))
    runs_dir = tmp_path / "build" / "runs" / "d" / "supporting"
    (tmp_path / "results").mkdir()
    for name, cost in (("bm25", artifacts.Cost(1.5, 300)), ("e5-small", artifacts.Cost(3.0, 300))):
        artifacts.write(runs_dir / f"{name}.trec", lambda tmp: tmp.write_text("q Q0 p 1 1.0 x\n"), {"k": 1},
                        cost)
    pd.DataFrame({"seconds/query": [2.25]}, index=["bm25 + pointwise"]).to_csv(
        stages.RERANKING.path("d", "test"))
    run = {"q1": [("p0", 1.0)]}
    kinds = rep.baseline_kinds(["bm25"], "bm25", ["pointwise"])
    assert kinds == {"bm25": "retriever", "bm25+pointwise": "reranker"}
    assert rep.baseline_kinds([], "bm25", [], "oracle+pointwise") == {"oracle+pointwise": "oracle"}
    methods = [MethodResult("m1", {"q1": [("p1", 1.0)]}, seconds=2.0, n_queries=4),
               MethodResult("m2", {"q1": [("p2", 1.0)]}, seconds=1.0, n_queries=4)]
    systems = rep.report_systems("d", "test", {"bm25": run, "bm25+pointwise": run}, kinds, methods,
                                 {"m2": "e5-small"}, cot_of="m1")
    assert list(systems.runs) == ["bm25", "bm25+pointwise", "m1", "m2"]
    assert systems.runs["m2"] == methods[1].run
    assert systems.kinds == {"bm25": "retriever", "bm25+pointwise": "reranker", "m1": "method",
                             "m2": "method", "m1 + CoT reader": "method"}
    assert systems.costs == {"bm25": 0.005, "bm25+pointwise": 2.255, "e5-small": 0.01, "m1": 0.5, "m2": 0.26,
                             "m1 + CoT reader": 0.5}
    assert systems.cot_systems == {"m1 + CoT reader": "m1"}
    assert rep.report_systems("d", "test", {}, {}, methods).cot_systems == {}


class _TwoReaders:
    """The short-answer reader says "Eiffel Tower", the CoT reader "Jupiter"; batches are kept."""

    name = "two"

    def __init__(self) -> None:
        from inferqa_utils.llm.base import LLMStats

        self.stats, self.batches = LLMStats(), []

    def chat(self, batch, max_tokens=None, desc="", progress=True, until=None):
        self.batches.append(batch)
        cot = batch[0][0]["content"].startswith("You answer quiz questions from numbered documents")
        return ["Evidence: a gas giant.\nAnswer: Jupiter" if cot else "Eiffel Tower"] * len(batch)


def test_read_report_reads_every_run_in_one_batch_then_the_cot_reader():
    from inferqa_utils.beyond.common import MethodResult
    from inferqa_utils.ir.datamodel import Dataset, Question
    from inferqa_utils.reading.setup import ReadingSetup

    ds = Dataset("toy", {"q1": Question("q1", "Which tower is in Paris?", ["Eiffel Tower"], []),
                         "q2": Question("q2", "Which planet is largest?", ["Jupiter"], [])})
    reader = _TwoReaders()
    methods = [MethodResult("m", {"q1": [("p0", 1.0)], "q2": [("p8", 1.0)]})]
    systems = rep.report_systems("d", "test", {"bm25": {"q1": [("p8", 1.0)], "q2": [("p0", 1.0)]}},
                                 {"bm25": "retriever"}, methods, cot_of="m")
    setup = ReadingSetup(reader, None, ds, CORPUS, k=1, progress=False)
    answers = rep.read_report(setup, systems, ["q1", "q2"])
    assert [len(b) for b in reader.batches] == [4, 2]  # both runs in one batch, then the CoT reader
    assert answers[["system", "qid", "answer", "em", "k", "union"]].values.tolist() == [
        ["bm25", "q1", "Eiffel Tower", True, 1, "norm"], ["bm25", "q2", "Eiffel Tower", False, 1, "norm"],
        ["m", "q1", "Eiffel Tower", True, 1, "norm"], ["m", "q2", "Eiffel Tower", False, 1, "norm"],
        ["m + CoT reader", "q1", "Jupiter", False, 1, "docs"],
        ["m + CoT reader", "q2", "Jupiter", True, 1, "docs"]]
    assert answers["context_chars"].tolist()[-2:] == [len(CORPUS["p0"]), len(CORPUS["p8"])]
    assert "[Document 1] " + CORPUS["p8"] in reader.batches[1][1][-1]["content"]


# ----------------------------------------------------------------------------- method parameters and keys

def test_method_runs_take_their_setup_and_key_their_parameters(monkeypatch, tmp_path):
    """Decomposition and knowledge-aware keys hold every parameter (defaults included); candidate
    support and disentangled keys the ones given (a tuple as a list), as their stamps always have."""
    from inferqa_utils.beyond.common import MethodSetup
    from inferqa_utils.core.fingerprint import corpus_sha256, queries_sha256

    keys = {}

    def capture(name, out_dir, key, compute, n_queries, llms=()):
        keys[name] = (out_dir, key, n_queries)

    for module in (dec, know, csr, dis):
        monkeypatch.setattr(module, "cached_method", capture)

    class Model:
        name, identity, llm = "model", "model-sha", None

    setup = MethodSetup({"q1": "Which tower?", "q2": "Which planet?"}, CORPUS, tmp_path)
    dec.decomposition_method("d", setup, Model(), Model(), None, k_per=2)
    know.knowledge_method("k", setup, {}, Model(), Model(), summarize="frequency")
    csr.csr_method("c", setup, {}, Model(), Model(), known=None, pool=10, agreement_weight=0.0)
    dis.disentangled_method("t", setup, Model(), Model(), None, views=("entities",), use_topic=False)
    assert {n: (o, k["inputs"]["corpus"], k["inputs"]["queries"], q) for n, (o, k, q) in keys.items()} == {
        n: (tmp_path, corpus_sha256(CORPUS), queries_sha256(setup.questions), 2) for n in "dkct"}
    common = {"version": 1}
    assert keys["d"][1]["params"] == {
        **common, "method": "d", "llm": "model-sha", "retriever": "model", "retriever_identity": "model-sha",
        "reranker": "none", "n_examples": 3, "selection": "static", "max_sub": 3, "k_per": 2,
        "retrieve_depth": 100, "rerank_depth": 10, "depth": 100, "include_original": True}
    assert keys["k"][1]["params"] == {
        "version": 3, "method": "k", "llm": "model-sha", "reranker": "model:", "n_rank": 10, "n_know": 2,
        "n_elements": 2, "max_elements": 4, "summarize": "frequency"}
    assert keys["c"][1]["params"] == {**common, "method": "c", "reader": "model-sha", "embedder": "model-sha",
                                      "pool": 10, "agreement_weight": 0.0}
    assert keys["t"][1]["params"] == {
        **common, "method": "t", "retriever": "model", "retriever_identity": "model-sha",
        "embedder": "model-sha", "views": ["entities"], "use_topic": False}
    with pytest.raises(TypeError):
        csr.csr_method("c", setup, {}, Model(), Model(), progress=False)  # not a parameter of the method
