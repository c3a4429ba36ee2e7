"""The paper's own runs: a hand-written release in the authors' exact shapes (``results/`` of the hub
dataset JamshidJDMY/InferentialQA, as the scripts of DataScienceUIBK/InferentialQA read it),
imported and scored; every number below is computed by hand in the comments.

Tiny release (4 questions; readers gemma-3-4b and qwen-3-8b; retrievers bm25 and bge; the reranker
monot5-monot5-base-msmarco-10k over bge and as an oracle; Union_norm/freq at k = 1 and 3; MS MARCO
and Wikipedia baselines). The index is stored as the hub stores it (``index/test/retriever.zsd``),
bm25's ranking as ``retriever.json.zst``, a rag file as ``rag.zsd``, the rest plain.

  question     passages: label (gemma, qwen single-passage answers)        answers
  tq_test_1    a: 2 ("Paris", "paris")  b: 1 ("Lyon", "Paris")  c: 0     ["Paris"]
  tq_test_2    a: 1 ("the beatles", "Stones")  b: 1 ("Stones", "Stones")  ["The Beatles", "Beatles"]
  tq_test_3    a: 2 ("42", "forty-two")  b: 0 ("42", "42")                ["42"]
  tq_test_4    a: 0  b: 0  (no relevant passage: skipped by Hit@k and Recall@k)  ["Mercury"]

A larger generated release (40 questions) decides verdicts (the tiny one has fewer than
MIN_UNITS = 10 questions: every verdict is inconclusive there, as it should be); a 12-question one
(write_f5_release) decides the two findings on the fine-tuned reranker (F5).
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import zstandard

from inferqa_utils import stages
from inferqa_utils.core.config import PATHS
from inferqa_utils.core.errors import DataFormatError, OfflineError
from inferqa_utils.measure import metrics
from inferqa_utils.paper_runs import contract, export, files, page, scoring, stats, views
from inferqa_utils.paper_runs.findings import VANILLA_MONOT5, findings_table
from inferqa_utils.paper_runs.importer import import_release
from inferqa_utils.paper_runs.load import load_release

CHECKOUT = Path(__file__).resolve().parents[1]
Q = ["tq_test_1", "tq_test_2", "tq_test_3", "tq_test_4"]
MONO = "monot5-monot5-base-msmarco-10k"
READERS = ("gemma-3-4b", "qwen-3-8b")
KEYS = ("un_1", "uf_1", "un_3", "uf_3")


def pid(q: int, x: str) -> str:
    """Passage ``a``, ``b`` or ``c`` of question ``q`` (1-based): ``{qid}_{mask}_{permutation}``."""
    return {"a": f"{Q[q - 1]}_10000_0", "b": f"{Q[q - 1]}_01000_1", "c": f"{Q[q - 1]}_11000_01"}[x]


def _ctx(p: str, label: int, gemma: str, qwen: str) -> dict[str, Any]:
    return {
        "id": p, "text": "a hint.", "label": label, "rag_answers": {"gemma-3-4b": gemma, "qwen-3-8b": qwen},
    }


INDEX = [
    {
        "question": "Which city?", "answers": ["Paris"],
        "contexts": [
            _ctx(pid(1, "a"), 2, "Paris", "paris"), _ctx(pid(1, "b"), 1, "Lyon", "Paris"),
            _ctx(pid(1, "c"), 0, "Paris", "Paris"),
        ],
    },
    {
        "question": "Which band?", "answers": ["The Beatles", "Beatles"],
        "contexts": [_ctx(pid(2, "a"), 1, "the beatles", "Stones"), _ctx(pid(2, "b"), 1, "Stones", "Stones")],
    },
    {
        "question": "Which number?", "answers": ["42"],
        "contexts": [_ctx(pid(3, "a"), 2, "42", "forty-two"), _ctx(pid(3, "b"), 0, "42", "42")],
    },
    {
        "question": "Which planet?", "answers": ["Mercury"],
        "contexts": [_ctx(pid(4, "a"), 0, "Mercury", "Mercury"), _ctx(pid(4, "b"), 0, "Venus", "Venus")],
    },
]

BM25 = [
    [pid(2, "a"), pid(1, "c"), pid(1, "b")], [pid(1, "a"), pid(3, "a"), pid(4, "a")],
    [pid(3, "a"), pid(1, "a"), pid(2, "b")], [pid(4, "b"), pid(1, "a"), pid(2, "a")],
]
BGE = [
    [pid(1, "a"), pid(1, "b"), pid(3, "a")], [pid(2, "b"), pid(1, "a"), pid(2, "a")],
    [pid(3, "b"), pid(1, "a"), pid(2, "a")], [pid(4, "a"), pid(4, "b"), pid(1, "a")],
]
BGE_MONO = [
    [pid(1, "b"), pid(1, "a"), pid(3, "a")], [pid(1, "a"), pid(2, "b"), pid(2, "a")],
    [pid(1, "a"), pid(2, "a"), pid(3, "b")], [pid(4, "b"), pid(4, "a"), pid(1, "a")],
]
ORACLE = [
    [pid(1, "c"), pid(1, "a"), pid(1, "b")], [pid(2, "b"), pid(2, "a")], [pid(3, "b"), pid(3, "a")],
    [pid(4, "a"), pid(4, "b")],
]
#: baselines/baseline.json: the MS MARCO (m*) and Wikipedia (w*) passages' labels, by position
BASELINE = [{"m1": 2, "m2": 0, "w1": 2}, {"m3": 0, "w2": 2}, {"m4": 2, "w3": 0}, {"m5": 0, "w4": 0}]
MSMARCO = [["m2", "m1"], ["m3"], ["m4"], ["m5"]]
WIKI = [["w1"], ["w2"], ["w3"], ["w4"]]


def _ranked(ids: list[str]) -> list[dict[str, Any]]:
    return [
        {"score": float(len(ids) - i), "has_answer": False, "id": p, "text": "t", "title": None}
        for i, p in enumerate(ids)
    ]


def ranking_file(lists: list[list[str]], first: list[list[str]] | None = None) -> list[dict[str, Any]]:
    """A retriever.json (``ctxs``) or, with ``first``, a reranker.json (``ctxs`` + ``reranked_ctxs``)."""
    out = []
    for i, ids in enumerate(lists):
        rec = {"question": INDEX[i]["question"], "answers": INDEX[i]["answers"]}
        if first is None:
            rec["ctxs"] = _ranked(ids)
        else:
            rec["ctxs"], rec["reranked_ctxs"] = _ranked(first[i]), _ranked(ids)
        out.append(rec)
    return out


def rag_file(
    answers: dict[tuple[str, str, int], str] | None = None, qids: list[str] = Q,
    pools: list[list[str]] | None = None,
) -> list[dict[str, Any]]:
    """A rag.json: every answer "NO ANSWER" except ``answers[(reader, key, question number)]``."""
    answers = answers or {}
    pools = pools or [r["answers"] for r in INDEX]
    return [
        {
            "id": q, "question": "?", "answers": pools[i], "ctxs": [],
            "predicted_answer": {
                r: {f"{q}_{key}": answers.get((r, key, i + 1), "NO ANSWER") for key in KEYS} for r in READERS
            },
        }
        for i, q in enumerate(qids)
    ]


#: gemma, Union_norm top 3: bge reads "paris" (raw 0, normalised 1), "Beatles", "42", NO ANSWER;
#: bge + MonoT5 reads all four right; the oracle only question 1
BGE_RAG = {
    ("gemma-3-4b", "un_3", 1): "paris", ("gemma-3-4b", "un_3", 2): "Beatles", ("gemma-3-4b", "un_3", 3): "42",
    **{("gemma-3-4b", "uf_3", i): a for i, a in enumerate(["Paris", "Beatles", "42", "Mercury"], 1)},
}
MONO_RAG = {
    **{("gemma-3-4b", "un_3", i): a for i, a in enumerate(["Paris", "Beatles", "42", "Mercury"], 1)},
    ("qwen-3-8b", "un_3", 2): "The Beatles",
}
ORACLE_RAG = {("gemma-3-4b", "un_3", 1): "Paris"}


def zsd(obj: Any, jsonl: bool = False) -> bytes:
    text = "".join(json.dumps(o) + "\n" for o in obj) if jsonl else json.dumps(obj)
    return zstandard.ZstdCompressor().compress(text.encode())


def write_release(folder: Path, overrides: dict[str, Any] | None = None) -> Path:
    """The tiny release under ``folder`` (paths as on the hub; ``overrides`` replace or add files:
    name → JSON-able object, bytes, or None to leave the file out)."""
    files_: dict[str, Any] = {
        "index/test/retriever.zsd": zsd(INDEX, jsonl=True),
        "retriever/bm25/retriever.json.zst": zsd(ranking_file(BM25)), "retriever/bm25/rag.json": rag_file(),
        "retriever/bge/retriever.json": ranking_file(BGE), "retriever/bge/rag.zsd": zsd(rag_file(BGE_RAG)),
        f"retriever_reranker/bge/{MONO}/reranker.json": ranking_file(BGE_MONO, BGE),
        f"retriever_reranker/bge/{MONO}/rag.json": rag_file(MONO_RAG),
        f"reranker/{MONO}/reranker.json": ranking_file(ORACLE, ORACLE),
        f"reranker/{MONO}/rag.json": rag_file(ORACLE_RAG),
        "baselines/baseline.json": [
            {"question": r["question"], "ctxs": {p: {"label": v} for p, v in b.items()}}
            for r, b in zip(INDEX, BASELINE, strict=True)
        ],
        "baselines_retriever/msmarco/bge/retriever.json": ranking_file(MSMARCO),
        "baselines_retriever/wiki/bge/retriever.json": ranking_file(WIKI),
        # the authors' script reads ctxs here; the file a reranker wrote also holds reranked_ctxs
        "retriever_ft_reranker/bge/retriever.json": ranking_file(BGE_MONO, BGE),
    }
    files_.update(overrides or {})
    for name, obj in files_.items():
        if obj is None:
            continue
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(obj, bytes):
            path.write_bytes(obj)
        else:
            path.write_text(json.dumps(obj), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Any]:
    """The tiny release written, imported under a fresh root: (release folder, root, import)."""
    base = tmp_path_factory.mktemp("paper-runs")
    src = write_release(base / "release")
    root = base / "root"
    done = import_release(src, root=root, log=lambda s: None)
    return src, root, done


# ------------------------------------------------------------------------------------------ layout


def test_the_layout_names_the_authors_files():
    assert files.match("index/test/retriever.zsd")[0].path == "index/test/retriever.jsonl"
    e, names = files.match(f"retriever_reranker/bge/{MONO}/reranker.json.zst")
    assert (e.ranked, e.system.format(**names)) == ("reranked_ctxs", f"bge+{MONO}")
    e, names = files.match("ft_retriever/dpr/10_positive/retriever.zsd")
    assert e.system.format(**names) == "FT-dpr-N10"
    assert (
        files.match("retriever_ft_reranker/bge/retriever.json")[0].ranked == "ctxs"
    )  # the authors' script reads ctxs
    assert files.match("hint-contribution/rag.py") is None
    assert files.compressed_name("index/test/retriever.jsonl") == "index/test/retriever.zsd"


def test_a_plain_file_is_preferred_to_its_compressed_copy(tmp_path: Path):
    write_release(tmp_path, {"retriever/bge/rag.json": rag_file()})  # beside rag.zsd
    found, unknown = files.scan(tmp_path)
    rag = next(f for f in found if f.released == "retriever/bge/rag.json")
    assert rag.file.name == "rag.json" and not rag.compressed
    assert unknown == []


# ------------------------------------------------------------------------------------------ loading


def test_the_release_loads_with_its_shapes(tiny):
    _src, _root, done = tiny
    rel = done.release
    assert rel.qids == Q and rel.readers == ["gemma-3-4b", "qwen-3-8b"]
    assert rel.questions["tq_test_2"].answers == ("The Beatles", "Beatles")
    assert rel.questions["tq_test_1"].labels == {pid(1, "a"): 2, pid(1, "b"): 1, pid(1, "c"): 0}
    assert {(r.corpus, r.system) for r in rel.rankings} == {
        ("quit", "bm25"), ("quit", "bge"), ("quit", f"bge+{MONO}"), ("quit", f"oracle+{MONO}"),
        ("msmarco", "bge"), ("wiki", "bge"), ("quit", "bge+FT-monot5"),
    }
    assert rel.ranking(f"bge+{MONO}").first_stage["tq_test_1"] == BGE[0]
    ft = rel.ranking("bge+FT-monot5")  # the reranker's order, not the first stage the authors' script reads
    assert (ft.key, ft.lists["tq_test_1"], ft.first_stage["tq_test_1"]) == (
        "reranked_ctxs", BGE_MONO[0], BGE[0],
    )
    assert rel.ranking("bge").key == "ctxs"
    rd = rel.reading("bge")
    assert rd.predictions[("gemma-3-4b", "norm", 3)]["tq_test_1"] == "paris"
    assert sorted({(u, k) for _, u, k in rd.predictions}) == [
        ("freq", 1), ("freq", 3), ("norm", 1), ("norm", 3),
    ]
    compressed = {f.released: f.compressed for f in rel.found}
    assert compressed["index/test/retriever.jsonl"] and compressed["retriever/bm25/retriever.json"]
    assert not compressed["retriever/bge/retriever.json"]


# ------------------------------------------------------------------------------------------ scoring


def _retrieval(done: Any, system: str, threshold: int = 1, corpus: str = "quit") -> dict[str, Any]:
    t = done.tables.retrieval
    row = t[(t["system"] == system) & (t["threshold"] == threshold) & (t["corpus"] == corpus)]
    assert len(row) == 1
    return row.iloc[0].to_dict()


def test_hit_and_recall_by_hand(tiny):
    """Relevant = label ≥ 1; question 4 has none and is skipped (n = 3).
    bm25: Hit@1 = [0, 0, 1] → 33.33; Hit@10 = [1 (b at rank 3), 0, 1] → 66.67; Recall@10 = [1/2, 0, 1] → 50.
    bge:  Hit@1 = [1, 1, 0 (c is label 0)] → 66.67; Recall@1 = [1/2, 1/2, 0] → 33.33;
    Recall@10 = [1, 1, 0] → 66.67. bge + MonoT5: Hit@1 = [1 (b), 0, 0] → 33.33; Hit@10 = [1, 1, 0] → 66.67.
    Oracle: Hit@1 = [0, 1, 0], Hit@10 = 100."""
    _src, _root, done = tiny
    bm25, bge = _retrieval(done, "bm25"), _retrieval(done, "bge")
    assert (bm25["Hit@1"], bm25["Hit@10"], bm25["Recall@10"], bm25["n"]) == (33.33, 66.67, 50.0, 3)
    assert (bge["Hit@1"], bge["Recall@1"], bge["Recall@10"]) == (66.67, 33.33, 66.67)
    mono, oracle = _retrieval(done, f"bge+{MONO}"), _retrieval(done, f"oracle+{MONO}")
    assert (mono["Hit@1"], mono["Hit@10"]) == (33.33, 66.67)
    assert (oracle["Hit@1"], oracle["Hit@10"]) == (33.33, 100.0)
    # oracle nDCG@10 of question 1: ranking [c (0), a (2), b (1)],
    # DCG = 3/log2 3 + 1/log2 4, ideal 3/1 + 1/log2 3
    q1 = metrics.ndcg_at(ORACLE[0], done.release.questions["tq_test_1"].labels, 10)
    assert q1 == pytest.approx((3 / math.log2(3) + 0.5) / (3 + 1 / math.log2(3)))


def test_mrr_ndcg_and_every_recall_in_the_written_table_by_hand(tiny):
    """The written ``retrieval`` table at label ≥ 1. MRR and nDCG average over all 4 questions (0
    without a relevant passage); Recall over the 3 that have one. Ideal DCG of question 1 (labels 2,
    1): 3/1 + 1/log2 3 = 3.6309.
    bm25: q1 b (label 1) at rank 3, q2 none of its own, q3 a (label 2) first. MRR@100 = (1/3 + 0 + 1
    + 0) / 4 = 0.3333 → 33.33; nDCG = (0.5/3.6309 = 0.1377 + 0 + 3/3 + 0) / 4 = 0.2844 → 28.44 at 10
    and 100 (3-passage lists); Recall@k for every k ≥ 3 = (1/2 + 0 + 1) / 3 → 50.
    bge: q1 a, b at 1, 2; q2 b at 1, a at 3; q3 and q4 nothing relevant. MRR@100 = (1 + 1) / 4 → 50;
    nDCG = (1 + (1 + 1/log2 4) / (1 + 1/log2 3) = 1.5/1.6309 = 0.9197) / 4 = 0.4799 → 47.99;
    Recall = (1 + 1 + 0) / 3 → 66.67. (MRR as 1/(rank + 1) gives 18.75 and 25; an ascending ideal
    ranking 29.32 and 54.37.)"""
    import pandas as pd

    _src, root, _done = tiny
    t = pd.read_csv(contract.table_path(root, contract.RETRIEVAL))
    t = t[(t["threshold"] == 1) & (t["corpus"] == "quit")].set_index("system")
    cols = ["MRR@100", "nDCG@10", "nDCG@100", "Recall@5", "Recall@20", "Recall@50", "Recall@100"]
    assert t.loc["bm25", cols].tolist() == [33.33, 28.44, 28.44, 50.0, 50.0, 50.0, 50.0]
    assert t.loc["bge", cols].tolist() == [50.0, 47.99, 47.99, 66.67, 66.67, 66.67, 66.67]


def _deep(q: int, at: dict[str, int]) -> list[str]:
    """120 passages ranked for question ``q``: its own passages ``at`` the given ranks (1-based), the
    other places passages the pool does not label (label 0); the import keeps the top 100."""
    ids = [f"far_{q}_{r}" for r in range(1, 121)]
    for x, rank in at.items():
        ids[rank - 1] = pid(q, x)
    return ids


def test_the_cutoffs_of_recall_mrr_and_ndcg_on_a_deep_ranking_by_hand(tmp_path: Path):
    """A hand-made 120-deep ranking with the relevant passages just inside and just outside the
    cut-offs: q1 a (label 2) at 5, b (label 1) at 21; q2 a (1) at 6, b (1) at 51; q3 a (2) at 20; q4
    none. Scored as ``paper-runs import`` writes it (``importer.score_release`` → ``retrieval_summary``).
    Recall@k over q1–q3: @5 [1/2, 0, 0] → 16.67; @10 [1/2, 1/2, 0] → 33.33; @20 [1/2, 1/2, 1] →
    66.67; @50 [1, 1/2, 1] → 83.33; @100 → 100. MRR@100 over q1–q4: (1/5 + 1/6 + 1/20 + 0) / 4 = 0.1042
    → 10.42 (1/(rank + 1) would give 8.93). nDCG (ideal: q1 3 + 1/log2 3 = 3.6309, q2 1 + 1/log2 3 =
    1.6309, q3 3): @10 q1 (3/log2 6) / 3.6309 = 0.3196, q2 (1/log2 7) / 1.6309 = 0.2184, q3 0 (rank 20)
    → 0.1345 → 13.45; @100 q1 (3/log2 6 + 1/log2 22) / 3.6309 = 0.3814, q2 (1/log2 7 + 1/log2 52) /
    1.6309 = 0.3260, q3 (3/log2 21) / 3 = 0.2277 → 0.2338 → 23.38."""
    deep = [_deep(1, {"a": 5, "b": 21}), _deep(2, {"a": 6, "b": 51}), _deep(3, {"a": 20}), _deep(4, {})]
    src = write_release(tmp_path / "release", {"retriever/deep/retriever.json": ranking_file(deep)})
    rel = load_release(src)
    assert len(rel.ranking("deep").lists["tq_test_1"]) == 100  # the import depth
    t = scoring.retrieval_summary(rel)
    row = t[(t["system"] == "deep") & (t["threshold"] == 1) & (t["corpus"] == "quit")].iloc[0]
    cols = ["Recall@1", "Recall@5", "Recall@10", "Recall@20", "Recall@50", "Recall@100", "MRR@100", "nDCG@10",
            "nDCG@100", "n"]
    assert row[cols].tolist() == [0.0, 16.67, 33.33, 66.67, 83.33, 100.0, 10.42, 13.45, 23.38, 3]
    assert row[["Hit@1", "Hit@5", "Hit@10", "Hit@20"]].tolist() == [0.0, 33.33, 66.67, 100.0]


def test_label_2_and_the_baselines_by_hand(tiny):
    """Label 2: questions 1 and 3 count; bge Hit@100 = [1, 0] → 50. The MS MARCO baseline skips
    nothing (the authors' baseline script): Hit@100 = [1 (m1), 0, 1 (m4), 0] over 4 → 50; Wikipedia
    [1, 1, 0, 0] → 50."""
    _src, _root, done = tiny
    assert (_retrieval(done, "bge", 2)["Hit@100"], _retrieval(done, "bge", 2)["n"]) == (50.0, 2)
    msm, wiki = _retrieval(done, "bge", 2, "msmarco"), _retrieval(done, "bge", 2, "wiki")
    assert (msm["Hit@100"], msm["n"], wiki["Hit@100"]) == (50.0, 4, 50.0)


def test_raw_and_normalised_em_by_hand(tiny):
    """Optimal (a passage with label ≥ 1 answered right): gemma raw [1, 0 ("the beatles"), 1, 0] = 50,
    normalised [1, 1, 1, 0] = 75, 1 disagreement; qwen raw [1 (b: "Paris"), 0, 0, 0] = 25 = normalised
    ("forty-two" is not "42"; question 3's "42" is from a label-0 passage). bge, gemma, Union_norm top 3:
    ["paris", "Beatles", "42", NO ANSWER] → raw 50, normalised 75, 1 disagreement (question 1)."""
    _src, _root, done = tiny
    em = done.tables.em

    def row(setting: str, system: str, reader: str, k: Any = None, union: Any = None) -> dict[str, Any]:
        sel = (em["setting"] == setting) & (em["system"] == system) & (em["reader"] == reader)
        sel &= em["k"].isna() if k is None else (em["k"] == k) & (em["union"] == union)
        assert sel.sum() == 1
        return em[sel].iloc[0].to_dict()

    g = row("Optimal", scoring.OPTIMAL_SYSTEM, "gemma-3-4b")
    assert (g["em_raw"], g["em_norm"], g["n_disagree"], g["norm_only"], g["raw_only"]) == (
        50.0, 75.0, 1, 1, 0,
    )
    q = row("Optimal", scoring.OPTIMAL_SYSTEM, "qwen-3-8b")
    assert (q["em_raw"], q["em_norm"], q["n_disagree"]) == (25.0, 25.0, 0)
    b = row("pipeline", "bge", "gemma-3-4b", 3, "norm")
    assert (b["n"], b["em_raw"], b["em_norm"], b["n_disagree"], b["delta"]) == (4, 50.0, 75.0, 1, 25.0)
    assert row("pipeline", "bge", "gemma-3-4b", 3, "freq")["em_raw"] == 100.0
    assert row("oracle", f"oracle+{MONO}", "gemma-3-4b", 3, "norm")["em_norm"] == 25.0
    assert em["n_disagree"].sum() == 2  # Optimal gemma and bge gemma un_3: nowhere else


def test_the_two_ems_on_single_answers():
    """Raw membership vs SQuAD normalisation, and the one way raw can win: an answer that normalises
    to nothing ("A" is an article) matches nothing under normalisation (textnorm.exact_match)."""
    from inferqa_utils.ir.textnorm import exact_match

    cases = [
        ("the Beatles!", ["Beatles"], False, True), ("Paris", ["Paris"], True, True),
        ("A", ["A"], True, False), ("", ["A"], False, False), ("paris ", ["Paris"], False, True),
    ]
    for pred, pool, raw, norm in cases:
        assert (scoring.em_raw(pred, pool), scoring.em_norm(pred, pool)) == (raw, norm), pred
        assert scoring.em_norm(pred, pool) == exact_match(pred, pool)


def _finding(table: Any, **where: Any) -> dict[str, Any]:
    sel = np.ones(len(table), dtype=bool)
    for k, v in where.items():
        sel &= (table[k] == v).fillna(False).to_numpy(dtype=bool)
    assert sel.sum() == 1, f"{sel.sum()} rows for {where}"
    return table[sel].iloc[0].to_dict()


def test_paired_differences_by_hand(tiny):
    """F2, bge + MonoT5 vs bge, gemma, top 3 Union_norm. Normalised: a = [1, 1, 1, 1], b = [1, 1, 1, 0]
    → +25 points; raw: b = [0 ("paris"), 1, 1, 0] → +50. Hit@10: [1, 1, 0] vs [1, 1, 0] → 0. With 4
    questions (< 10) every verdict is inconclusive, and no test is drawn: no p, no Holm."""
    _src, _root, done = tiny
    t = done.tables.findings
    norm = _finding(t, family="F2", metric="EM", reader="gemma-3-4b", scoring="normalised")
    raw = _finding(t, family="F2", metric="EM", reader="gemma-3-4b", scoring="raw")
    assert (norm["comparison"], norm["n"], norm["a"], norm["b"], norm["value"]) == (
        f"bge+{MONO} vs bge", 4, 100.0, 75.0, 25.0,
    )
    assert raw["value"] == 50.0 and pd.isna(raw["p"]) and pd.isna(raw["p_holm"])
    qwen = _finding(t, family="F2", metric="EM", reader="qwen-3-8b", scoring="raw")
    assert qwen["value"] == 25.0 and pd.isna(qwen["p"])
    assert raw["lo"] <= 50 <= raw["hi"]
    hit = _finding(t, family="F2", metric="Hit@10")
    assert (hit["n"], hit["value"]) == (3, 0.0)
    assert (norm["verdict"], norm["why"]) == ("inconclusive", "too few questions: 4 < 10")
    assert (hit["verdict"], hit["why"]) == ("inconclusive", "too few questions: 3 < 10")
    assert set(t.loc[t["finding"] != "", "verdict"]) == {"inconclusive"}


def test_the_families_on_the_tiny_release(tiny):
    """F1 pairs MS MARCO with QUIT on the questions that count on QUIT (1 and 3): a = [1, 1],
    b = [1, 0] → +50. F3, gemma normalised: Optimal 75 vs the best pipeline (bge + MonoT5, 100) → −25;
    the best oracle is 25 → ratio 25 / 75 = 0.3333. The reasoning reader at Optimal: gemma 75 vs qwen
    25 → +50. Union, bge, gemma, k = 3, normalised: freq 100 vs norm 75 → +25."""
    _src, _root, done = tiny
    t = done.tables.findings
    f1 = _finding(t, family="F1", comparison="msmarco bge vs QUIT bge")
    assert (f1["n"], f1["a"], f1["b"], f1["value"]) == (2, 100.0, 50.0, 50.0)
    opt = _finding(
        t, family="F3", finding="optimal_far_above_pipeline", reader="gemma-3-4b", scoring="normalised"
    )
    assert (opt["comparison"], opt["value"]) == (f"Optimal vs bge+{MONO}", -25.0)
    half = _finding(
        t, family="F3", finding="oracle_half_of_optimal", reader="gemma-3-4b", scoring="normalised"
    )
    assert (half["statistic"], half["value"]) == ("ratio", 0.3333)
    rs = _finding(
        t, family="reasoning reader", comparison="gemma-3-4b, Optimal vs qwen-3-8b, Optimal",
        scoring="normalised",
    )
    assert rs["value"] == 50.0
    un = _finding(
        t, family="union", comparison="bge, Union_freq vs bge, Union_norm", reader="gemma-3-4b", k=3,
        scoring="normalised",
    )
    assert (un["value"], un["verdict"], un["rule"]) == (25.0, "", "none (our comparison)")


# ------------------------------------------------------------------------------------------ what is written


def test_the_import_writes_the_notebooks_files(tiny):
    from inferqa_utils.ir.trec import read_qrels, read_run
    from inferqa_utils.measure.metrics import evaluate

    _src, root, done = tiny
    written = {p.name for p in done.written if p.parent == _tables(root)}
    assert written == {t.file(contract.DATASET, contract.SPLIT) for t in export.written_tables()}
    assert {t.stage for t in contract.OWN_TABLES} == {stages.Stage.PAPER_RUNS}
    run = root / "build" / "runs" / contract.DATASET / "supporting" / "bge.trec"
    assert run.read_text().splitlines()[0] == f"tq_test_1 Q0 {pid(1, 'a')} 1 3.000000 bge"
    qrels = read_qrels(root / "build" / "datasets" / contract.DATASET / "qrels" / "test.qrels")
    assert qrels["tq_test_3"] == {pid(3, "a"): 2, pid(3, "b"): 0}
    # our own metrics (measure.metrics) agree with the authors' conventions on the written files
    ours = evaluate(read_run(run), qrels, threshold=1, metrics=("Hit@1", "Hit@10", "Recall@10"))
    assert [round(float(ours[m].iloc[0]), 2) for m in ("Hit@1", "Hit@10", "Recall@10")] == [
        66.67, 66.67, 66.67,
    ]
    assert (root / "build" / "runs" / contract.DATASET / "msmarco" / "bge.trec").exists()
    import pandas as pd

    ans = pd.read_csv(contract.table_path(root, stages.READING_ANSWERS))
    assert list(ans.columns) == list(scoring.ANSWER_COLUMNS)
    assert set(ans["system"]) == {scoring.OPTIMAL_SYSTEM, "bm25", "bge", f"bge+{MONO}", f"oracle+{MONO}"}
    pq = pd.read_csv(contract.table_path(root, stages.RETRIEVAL_PER_QUESTION))
    judged = pq[(pq["corpus"] == contract.JUDGED_CONTAINING) & (pq["measure"] == "Hit@100")]
    assert sorted(judged["value"]) == [0.0, 0.0, 1.0, 1.0]  # the MS MARCO baseline: every question counts
    rec = json.loads(contract.table_path(root, stages.PAPER_RUNS_IMPORT).read_text())
    assert rec["questions"] == 4 and rec["parameters"]["k"] == 3
    assert {f["released"] for f in rec["files"] if f["compressed"]} == {
        "index/test/retriever.jsonl", "retriever/bm25/retriever.json", "retriever/bge/rag.json",
    }


def test_the_results_page_section(tiny):
    _src, root, _done = tiny
    text = page.section_for([root / "nothing", _tables(root)])
    assert text.startswith("## The paper's own runs")
    for fragment in (
        "4 questions",
        "### Verdicts",
        "`rerankers_marginal`",
        "### Two scorings of EM",
        "| Optimal | gemma-3-4b | 4 | 50.0 | 75.0 | 1 |",
        "### Union_freq vs Union_norm (ours)",
        "[paper_runs.md](paper_runs.md)",
    ):
        assert fragment in text, fragment
    assert page.section_for([root / "nothing"]) == ""
    from inferqa_utils.verdicts.results_page import render

    assert render({}, ["default"], extra=text).count("## The paper's own runs") == 1


def test_the_section_prints_p_values_and_tables_as_the_results_page(big):
    """One p format and one table writer for the whole page (inferqa_utils.present.tables): F2's
    Hit@10, bge + MonoT5 vs bge (+100 on 40 questions), has Tango's p that the gain exceeds 1.22
    points, alone in its Holm family: 4.2e-10; F3's Optimal vs the best pipeline, gemma, raw EM
    (+45, 18 discordant) straddles 35.70 (p 0.2196), alone in its family as qwen's comparison reads
    nothing (no test); qwen's F2 comparison reads nothing: no p. Each table's rule line is the page's."""
    from inferqa_utils.present.tables import markdown_table

    root, _done = big
    lines = page.section_for([_tables(root)]).splitlines()

    def p_holm(start: str) -> str:
        return next(line for line in lines if line.startswith(start)).split(" | ")[-2]

    assert p_holm(f"| bge+{MONO} vs bge | Hit@10 |") == "4.2e-10"
    assert p_holm(f"| Optimal vs bge+{MONO} | EM | gemma-3-4b | raw") == "0.2196"
    assert p_holm(f"| bge+{MONO} vs bge | EM | qwen-3-8b | normalised") == "—"
    rules = [line for line in lines if line.startswith("|-")]  # each table's rule line, as the page's
    assert rules and all(line == markdown_table(["x"] * line.count("|-"), [])[1] for line in rules)


def test_each_family_has_a_measure_and_each_comparison_a_paired_sample(tiny):
    """The measures (one per family) build the two samples over the questions that count on both
    sides: F1 on the tiny release pairs MS MARCO with QUIT on questions 1 and 3 (question 2 has no
    label-2 passage on QUIT, question 4 none at all): a = [1, 1], b = [1, 0]."""
    from inferqa_utils.paper_runs import findings as prf

    src, _root, _done = tiny
    assert tuple(prf.MEASURES) == prf.FAMILIES
    comps = prf.comparisons(load_release(src))
    assert all(c.sample.paired and not np.isnan(c.sample.a).any() for c in comps)
    f1 = next(c for c in comps if c.family == "F1" and c.a_name == "msmarco bge")
    assert (f1.sample.a.tolist(), f1.sample.b.tolist()) == ([1.0, 1.0], [1.0, 0.0])
    assert f1.finding is not None and f1.finding.id == "containing_beats_supporting"
    assert all(c.finding is None for c in comps if c.family == "union")


# ------------------------------------------------------------------------------------------ one set of files


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under ``root``."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes() if p.is_file() else None
        for p in sorted(root.rglob("*"))
    }


BGE_RUN = f"build/runs/{contract.DATASET}/supporting/bge.trec"


def _first_and_second(tmp_path: Path) -> tuple[Path, dict[str, bytes | None], Path]:
    """The tiny release imported under ``tmp_path/root`` (the root, its files), and a second release
    whose bge ranks as bge + MonoT5 does (another bge run, other retrieval tables)."""
    root = tmp_path / "root"
    import_release(write_release(tmp_path / "first"), root=root, log=lambda s: None)
    second = write_release(tmp_path / "second", {"retriever/bge/retriever.json": ranking_file(BGE_MONO)})
    return root, _tree(root), second


def test_an_import_failing_while_writing_leaves_the_earlier_one_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The second import fails at its third table (a full disk): every file of the first import is
    byte for byte as it was and nothing was added — no staging folder, no temporary file. (Writing
    in place, the qrels, the runs — bge's among them — and two tables would already be replaced.)"""
    root, before, second = _first_and_second(tmp_path)
    assert before[BGE_RUN].splitlines()[0] == f"tq_test_1 Q0 {pid(1, 'a')} 1 3.000000 bge".encode()
    real, calls = export._csv, []

    def disk_full(df: Any, path: Path) -> Path:
        calls.append(path)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(df, path)

    monkeypatch.setattr(export, "_csv", disk_full)
    with pytest.raises(OSError, match="No space left on device"):
        import_release(second, root=root, log=lambda s: None)
    assert _tree(root) == before


def test_an_import_failing_while_renaming_puts_the_earlier_files_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The second import's files are all written; renaming them into place is refused for the first
    table, after the qrels and every run (bge's new one included) were renamed: those are put back,
    the root holds exactly the first import again."""
    from inferqa_utils.paper_runs import staging

    root, before, second = _first_and_second(tmp_path)
    real = os.replace
    renamed: list[str] = []

    def refuse_tables(src: Any, dst: Any) -> None:
        if Path(dst).parent.name == "results" and "executions" in Path(dst).parts:
            raise PermissionError(errno.EACCES, "Permission denied", str(dst))
        real(src, dst)
        renamed.append(Path(dst).as_posix())

    monkeypatch.setattr(staging.os, "replace", refuse_tables)
    with pytest.raises(PermissionError):
        import_release(second, root=root, log=lambda s: None)
    assert (root / BGE_RUN).as_posix() in renamed  # the new bge run was in place, then put back
    assert _tree(root) == before


def test_an_import_killed_while_renaming_is_undone_by_the_next(tmp_path: Path):
    """A process killed (``os._exit``: no clean-up runs) right after renaming the second import's bge
    run into place leaves a mix: bge's new run beside the first import's tables. What the next
    import does first (``export.recover_import``) puts the earlier files back and removes the
    staging folder: the root holds exactly the first import again, beside the killed import's run
    folder, which holds no manifest."""
    root, before, second = _first_and_second(tmp_path)
    script = "\n".join(
        [
            "import os, sys",
            "from pathlib import Path",
            "from inferqa_utils.paper_runs.importer import import_release",
            "real = os.replace",
            "def replace(src, dst):",
            "    real(src, dst)",
            "    if Path(dst).as_posix().endswith('/supporting/bge.trec'):",
            "        os._exit(9)",
            "os.replace = replace",
            "import_release(sys.argv[1], root=sys.argv[2], log=lambda s: None)",
        ]
    )
    env = {**os.environ, "PYTHONPATH": str(CHECKOUT)}
    out = subprocess.run(
        [sys.executable, "-c", script, str(second), str(root)], capture_output=True, text=True, env=env,
        timeout=300,
    )
    assert out.returncode == 9, out.stderr
    mixed = _tree(root)
    assert mixed[BGE_RUN] != before[BGE_RUN]
    findings = (_tables(root) / contract.FINDINGS.file(contract.DATASET, contract.SPLIT)).relative_to(
        root.resolve()).as_posix()
    assert mixed[findings] == before[findings]
    restored = export.recover_import(root)
    assert root / BGE_RUN in restored
    # the killed import's run folder stays, without a manifest: no run (run_dirs.run_manifests)
    after = {k: v for k, v in _tree(root).items() if k in before or not k.startswith("build/executions/")}
    assert after == before


# ------------------------------------------------------------------------------------------ verdicts

N_BIG = 40


def write_big_release(folder: Path) -> Path:
    """40 questions, each with passage a (label 2) and b (label 1); answers ``Answer i``.

    * Optimal: gemma answers a right except for questions 1 and 3 (95), qwen never (0).
    * bge ranks 10 other questions' passages, then its own a at rank 11 (Hit@10 = 0); bge + MonoT5
      puts a first (Hit@10 = 1); FT-bge-N10 too. bge reads nothing right; bge + MonoT5 (gemma,
      Union_norm top 3) reads ``Answer i`` for even i and ``answer i`` for odd i: normalised EM 100,
      raw EM 50. The oracle MonoT5 reads the first 20 questions right (50)."""
    qs = [f"gq_test_{i}" for i in range(N_BIG)]
    a = [f"{q}_10000_0" for q in qs]
    b = [f"{q}_01000_1" for q in qs]
    gold = [f"Answer {i}" for i in range(N_BIG)]
    index = [
        {
            "question": f"Q{i}?", "answers": [gold[i]],
            "contexts": [
                {
                    "id": a[i], "label": 2,
                    "rag_answers": {"gemma-3-4b": "wrong" if i in (1, 3) else gold[i], "qwen-3-8b": "wrong"},
                },
                {"id": b[i], "label": 1, "rag_answers": {"gemma-3-4b": "wrong", "qwen-3-8b": "wrong"}},
            ],
        }
        for i in range(N_BIG)
    ]

    def ranked(lists: list[list[str]], first: list[list[str]] | None = None) -> list[dict[str, Any]]:
        out = []
        for i, ids in enumerate(lists):
            rec: dict[str, Any] = {"question": f"Q{i}?", "ctxs": _ranked(first[i] if first else ids)}
            if first:
                rec["reranked_ctxs"] = _ranked(ids)
            out.append(rec)
        return out

    def rag(un3: Callable[[int], str], uf3: Callable[[int], str]) -> list[dict[str, Any]]:
        return [
            {
                "id": q, "answers": [gold[i]],
                "predicted_answer": {
                    "gemma-3-4b": {f"{q}_un_3": un3(i), f"{q}_uf_3": uf3(i)},
                    "qwen-3-8b": {f"{q}_un_3": "wrong", f"{q}_uf_3": "wrong"},
                },
            }
            for i, q in enumerate(qs)
        ]

    others = [[a[(i + j) % N_BIG] for j in range(1, 11)] for i in range(N_BIG)]
    bge = [[*others[i], a[i], b[i]] for i in range(N_BIG)]
    mono = [[a[i], *others[i], b[i]] for i in range(N_BIG)]
    docs = {
        "index/test/retriever.jsonl": "".join(json.dumps(r) + "\n" for r in index),
        "retriever/bge/retriever.json": ranked(bge),
        "retriever/bge/rag.json": rag(lambda i: "wrong", lambda i: "wrong"),
        f"retriever_reranker/bge/{MONO}/reranker.json": ranked(mono, bge),
        f"retriever_reranker/bge/{MONO}/rag.json": rag(
            lambda i: gold[i] if i % 2 == 0 else gold[i].lower(), lambda i: gold[i]
        ),
        f"reranker/{MONO}/reranker.json": ranked(
            [[b[i], a[i]] for i in range(N_BIG)], [[a[i], b[i]] for i in range(N_BIG)]
        ),
        f"reranker/{MONO}/rag.json": rag(lambda i: gold[i] if i < N_BIG // 2 else "wrong", lambda i: "wrong"),
        "ft_retriever/bge/10_positive/retriever.json": ranked(mono),
    }
    for name, obj in docs.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(obj if isinstance(obj, str) else json.dumps(obj), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    base = tmp_path_factory.mktemp("paper-runs-big")
    root = base / "root"
    return root, import_release(write_big_release(base / "release"), root=root, log=lambda s: None)


def test_verdicts_by_hand(big):
    """F2 Hit@10: +100 on 40 questions, all discordant the same way: Tango's interval [82.48, 100] lies
    above the 1.22-point margin of "adds little": contradicted. F3, gemma: Optimal 95 vs the best
    pipeline — normalised bge + MonoT5 100 → Δ −5 on 2 discordant questions (< 10): inconclusive;
    raw 50 → Δ +45 on 18 discordant questions, Tango's interval [30.71, 60.17] straddles the margin
    35.70: inconclusive. The oracle's 50 / Optimal's 95 = 0.5263, its interval wider than the paper's
    range [0.4977, 0.5592]: inconclusive; oracle 50 vs bge alone 0, 20 discordant all for a: exact sign
    test p = 2 · 2⁻²⁰, holds. Gemma vs qwen at Optimal: +95 on 38, holds. qwen reads nothing anywhere:
    no variation, inconclusive. F5 Hit@10 +100: contradicted."""
    _root, done = big
    t = done.tables.findings
    hit = _finding(t, family="F2", metric="Hit@10")
    assert (hit["value"], hit["lo"], hit["hi"], hit["verdict"]) == (100.0, 82.48, 100.0, "contradicted")
    assert hit["p"] < 1e-9 and "Tango" in hit["test"]
    norm = _finding(t, finding="optimal_far_above_pipeline", reader="gemma-3-4b", scoring="normalised")
    assert (norm["value"], norm["discordant"], norm["verdict"]) == (-5.0, 2, "inconclusive")
    raw = _finding(t, finding="optimal_far_above_pipeline", reader="gemma-3-4b", scoring="raw")
    assert (raw["value"], raw["verdict"]) == (45.0, "inconclusive") and raw["lo"] < 35.7 < raw["hi"]
    half = _finding(t, finding="oracle_half_of_optimal", reader="gemma-3-4b", scoring="normalised")
    assert (half["value"], half["verdict"]) == (0.5263, "inconclusive") and half["lo"] < 0.4977
    below = _finding(t, finding="pipeline_below_oracle", reader="gemma-3-4b", scoring="raw")
    assert (below["comparison"], below["value"], below["verdict"]) == (f"oracle+{MONO} vs bge", 50.0, "holds")
    assert below["p"] == pytest.approx(2 * 0.5**20, rel=1e-9)
    rs = _finding(
        t, family="reasoning reader", comparison="gemma-3-4b, Optimal vs qwen-3-8b, Optimal", scoring="raw"
    )
    assert (rs["value"], rs["verdict"]) == (95.0, "holds")
    q = _finding(t, family="F2", metric="EM", reader="qwen-3-8b", scoring="normalised")
    assert q["verdict"] == "inconclusive" and q["why"].startswith("no variation") and pd.isna(q["p"])
    ft = _finding(t, family="F5", metric="Hit@10")
    assert (ft["comparison"], ft["value"], ft["verdict"]) == ("FT-bge-N10 vs bge", 100.0, "contradicted")


def test_holm_runs_within_each_family(big, tiny):
    """One comparison in a family: p_holm = p. Over the tiny release's union family (readers × k ×
    systems, one scoring), Holm equals the step-down formula on that family's p-values alone."""
    from inferqa_utils.measure.uncertainty import holm

    _root, done = big
    t = done.tables.findings
    assert (t["p_holm"].dropna() >= t.loc[t["p_holm"].notna(), "p"] - 1e-12).all()
    hit = _finding(t, family="F2", metric="Hit@10")  # alone in its family: not multiplied by the table's size
    assert hit["p_holm"] == hit["p"]
    fam = tiny[2].tables.findings
    fam = fam[(fam["family"] == "union") & (fam["scoring"] == "normalised")]
    assert len(fam) == 4 * 2 * 2  # systems × readers × k
    tested = fam[fam["p"].notna()]
    assert tested["p_holm"].tolist() == pytest.approx(holm(tested["p"].tolist()))


def test_the_findings_score_the_import_unchanged(big):
    """``inferqa_utils.verdicts.findings`` reads the written tables as a notebook run's (through the
    contract)."""
    root, _done = big
    params = {"first_stage": "bge", "reader_model": "gemma-3-4b", "reading_k": 3, "reading_union": "norm"}
    from inferqa_utils.verdicts import findings

    results = findings.Results(contract.DATASET, contract.SPLIT, params, folder=_tables(root))
    table = findings.verdict_table(results)
    assert table.loc["optimal_far_above_pipeline", "verdict"] == "inconclusive"  # 2 discordant, as above
    assert table.loc["oracle_half_of_optimal", "verdict"] == "inconclusive"
    assert table.loc["pipeline_below_oracle", "verdict"] == "holds"
    assert table.loc["rerankers_marginal", "verdict"] == "contradicted"


def test_the_fast_intervals_match_the_package_ones():
    """The multinomial shortcut of the paper runs' means draws what the package's bootstrap draws, up
    to the resampling noise."""
    from inferqa_utils.measure.uncertainty import mean_ci

    rng = np.random.default_rng(3)
    a = (rng.random(200) < 0.3).astype(float)
    fast, ref = stats.mean_interval(a), mean_ci(a)
    assert fast.value == ref.value and abs(fast.lo - ref.lo) < 0.01 and abs(fast.hi - ref.hi) < 0.01
    assert stats.mean_interval(np.ones(5)) == stats.mean_interval(np.ones(5)) and stats.mean_interval(
        np.ones(5)).lo == 1.0


# ------------------------------------------------------------------------------------------ F5: FT-MonoT5

N_F5 = 12


def write_f5_release(folder: Path) -> Path:
    """12 questions ``fq_test_i`` (i = 0…11), each with passages a (label 2), b (label 1) and c
    (label 0); answers ``Answer i``.

    * Under the oracle FT-MonoT5 (``ft_reranker/10_positive``) ranks every question a, b, c; the
      vanilla MonoT5 (``VANILLA_MONOT5``, ``reranker/``) b, a, c.
    * In the pipeline (Union_norm, top 3), with BGE + FT-MonoT5 (``retriever_ft_reranker/bge``)
      gemma answers questions 0–3, with BGE + the vanilla MonoT5 questions 0–9; qwen answers
      questions 0 and 1 with both."""
    qs = [f"fq_test_{i}" for i in range(N_F5)]
    gold = [f"Answer {i}" for i in range(N_F5)]
    ids = [[f"{q}_10000_0", f"{q}_01000_1", f"{q}_00100_2"] for q in qs]  # a, b, c
    index = [
        {
            "question": f"F{i}?", "answers": [gold[i]],
            "contexts": [
                {
                    "id": p, "label": label,
                    "rag_answers": {"gemma-3-4b": gold[i] if label == 2 else "wrong", "qwen-3-8b": "wrong"},
                }
                for p, label in zip(ids[i], (2, 1, 0), strict=True)
            ],
        }
        for i in range(N_F5)
    ]

    def oracle(order: tuple[int, int, int]) -> list[dict[str, Any]]:
        return [
            {
                "question": f"F{i}?", "ctxs": _ranked(ids[i]),
                "reranked_ctxs": _ranked([ids[i][j] for j in order]),
            }
            for i in range(N_F5)
        ]

    def rag(gemma_right: int, qwen_right: int) -> list[dict[str, Any]]:
        """Gemma answers the first ``gemma_right`` questions, qwen the first ``qwen_right``."""
        return [
            {
                "id": q, "answers": [gold[i]],
                "predicted_answer": {
                    "gemma-3-4b": {f"{q}_un_3": gold[i] if i < gemma_right else "wrong"},
                    "qwen-3-8b": {f"{q}_un_3": gold[i] if i < qwen_right else "wrong"},
                },
            }
            for i, q in enumerate(qs)
        ]

    docs = {
        "index/test/retriever.jsonl": "".join(json.dumps(r) + "\n" for r in index),
        f"reranker/{VANILLA_MONOT5}/reranker.json": oracle((1, 0, 2)),
        "ft_reranker/10_positive/reranker.json": oracle((0, 1, 2)),
        f"retriever_reranker/bge/{VANILLA_MONOT5}/rag.json": rag(10, 2),
        "retriever_ft_reranker/bge/rag.json": rag(4, 2),
    }
    for name, obj in docs.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(obj if isinstance(obj, str) else json.dumps(obj), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def f5(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The findings table of the F5 release (write_f5_release)."""
    return findings_table(load_release(write_f5_release(tmp_path_factory.mktemp("paper-runs-f5"))))


def test_f5_the_fine_tuned_reranker_in_the_pipeline_by_hand(f5):
    """``ft_reranker_oracle_only``: BGE + FT-MonoT5 (a) vs BGE + the vanilla MonoT5 (b), gemma, top 3
    Union_norm. a = [1]·4 + [0]·8 → 33.33; b = [1]·10 + [0]·2 → 83.33; Δ = −50 on 6 discordant
    questions, all for b (exact sign test p = 2 · 2⁻⁶ = 0.03125): fewer than 10 discordant, so a < b
    is left inconclusive, its p shown and no Holm. Raw EM is the same (every answer is the gold
    string)."""
    for how in ("normalised", "raw"):
        row = _finding(f5, finding="ft_reranker_oracle_only", reader="gemma-3-4b", scoring=how)
        assert (row["family"], row["comparison"], row["metric"], row["k"], row["union"]) == (
            "F5", f"bge+FT-monot5 vs bge+{VANILLA_MONOT5}", "EM", 3, "norm",
        )
        assert (row["n"], row["a"], row["b"], row["value"], row["discordant"]) == (12, 33.33, 83.33, -50.0, 6)
        assert row["p"] == pytest.approx(2 * 0.5**6) and pd.isna(row["p_holm"])
        assert (row["rule"], row["verdict"], row["why"]) == (
            "a < b", "inconclusive", "6 discordant questions of 12 (a ≠ b) < 10",
        )


def test_f5_no_question_differing_is_inconclusive(f5):
    """qwen answers questions 0 and 1 with BGE + FT-MonoT5 and with BGE + the vanilla MonoT5, nothing
    else: a = b = [1, 1] + [0]·10 → 16.67 each, Δ = 0 on every question: 0 discordant (< 10),
    inconclusive; the interval alone, [0, 0], decides nothing either (it touches the edge)."""
    for how in ("normalised", "raw"):
        row = _finding(f5, finding="ft_reranker_oracle_only", reader="qwen-3-8b", scoring=how)
        assert (row["n"], row["a"], row["b"], row["value"], row["lo"], row["hi"]) == (
            12, 16.67, 16.67, 0.0, 0.0, 0.0,
        )
        assert (row["verdict"], row["why"]) == ("inconclusive", "0 discordant questions of 12 (a ≠ b) < 10")


def test_f5_the_fine_tuned_reranker_under_the_oracle_by_hand(f5):
    """``ft_reranker_best_in_oracle``: oracle nDCG@10 of FT-MonoT5 (a) vs the vanilla MonoT5 (b).
    Ideal DCG of every question (labels 2, 1, 0): 3/1 + 1/log2 3 = 3.6309. FT-MonoT5 ranks a, b, c:
    nDCG 1 → 100; the vanilla MonoT5 b, a, c: (1/1 + 3/log2 3) / 3.6309 = 2.8928 / 3.6309 = 0.7967
    → 79.67. Δ = 0.2033 on all 12 questions (12 discordant): every resample's mean is 20.33, so the
    interval is [20.33, 20.33] and no bootstrap replicate is at or below 0: p = 2 / (10,000 + 1),
    the bootstrap's floor, alone in its Holm family: a > b holds."""
    row = _finding(f5, finding="ft_reranker_best_in_oracle")
    assert (row["family"], row["comparison"], row["metric"]) == (
        "F5", f"oracle+FT-monot5-N10 vs oracle+{VANILLA_MONOT5}", "nDCG@10",
    )
    assert (row["n"], row["a"], row["b"], row["value"], row["lo"], row["hi"]) == (
        12, 100.0, 79.67, 20.33, 20.33, 20.33,
    )
    assert (row["p"], row["p_holm"]) == pytest.approx((2 / 10_001, 2 / 10_001))
    assert (row["rule"], row["verdict"]) == ("a > b", "holds")
    assert row["why"].startswith("significantly inside")


# ------------------------------------------------------------------------------------------ malformed


def _truncated_index() -> bytes:
    data = zsd(INDEX, jsonl=True)
    return data[: len(data) // 2]


def _index_with(change: Callable[[list[dict[str, Any]]], None]) -> bytes:
    index = json.loads(json.dumps(INDEX))
    change(index)
    return zsd(index, jsonl=True)


MALFORMED = [
    (
        "missing field", {"index/test/retriever.zsd": _index_with(lambda ix: ix[1].pop("answers"))},
        ("retriever.zsd", "record 1", "field 'answers'", "missing required field"),
    ),
    (
        "bad label",
        {"index/test/retriever.zsd": _index_with(lambda ix: ix[0]["contexts"][1].update(label=3))},
        ("retriever.zsd", "record 0 (tq_test_1)", "field 'contexts[1].label'", "0, 1, 2, got 3"),
    ),
    (
        "label as text",
        {"index/test/retriever.zsd": _index_with(lambda ix: ix[2]["contexts"][0].update(label="2"))},
        ("record 2 (tq_test_3)", "field 'contexts[0].label'", "got '2'"),
    ),
    (
        "unknown passage id",
        {
            f"reranker/{MONO}/reranker.json": ranking_file(
                [ORACLE[0], [pid(2, "b"), pid(3, "a")], *ORACLE[2:]], ORACLE
            )
        },
        (
            f"reranker/{MONO}/reranker.json", "record 1 (tq_test_2)", "field 'reranked_ctxs[1].id'",
            f"unknown passage id '{pid(3, 'a')}'",
        ),
    ),
    (
        "truncated zstd", {"index/test/retriever.zsd": _truncated_index()},
        ("retriever.zsd", "truncated zstandard file"),
    ),
    ("not zstd", {"retriever/bge/rag.zsd": b'{"id": 1}'}, ("rag.zsd", "not a zstandard file")),
    (
        "missing index", {"index/test/retriever.zsd": None},
        ("missing required file index/test/retriever.jsonl",),
    ),
    (
        "ranking of another length", {"retriever/bge/retriever.json": ranking_file(BGE[:3])},
        ("retriever/bge/retriever.json", "3 records, the index has 4 questions"),
    ),
    (
        "rag answer of another question",
        {
            "retriever/bm25/rag.json": [
                *rag_file()[:2],
                {**rag_file()[2], "predicted_answer": {"gemma-3-4b": {"tq_test_4_un_1": "x"}}}, rag_file()[3],
            ]
        },
        (
            "retriever/bm25/rag.json", "record 2 (tq_test_3)",
            "field 'predicted_answer.gemma-3-4b.tq_test_4_un_1'", "names question 'tq_test_4'",
        ),
    ),
    (
        "rag question unknown",
        {"retriever/bm25/rag.json": [*rag_file()[:3], {**rag_file()[3], "id": "tq_test_9"}]},
        ("record 3 (tq_test_9)", "field 'id'", "not a question of the index"),
    ),
    (
        "rag answer not a string",
        {
            "retriever/bm25/rag.json": [
                {**r, "predicted_answer": {"gemma-3-4b": {"tq_test_1_un_1": None}}} if i == 0 else r
                for i, r in enumerate(rag_file())
            ]
        },
        (
            "record 0 (tq_test_1)", "field 'predicted_answer.gemma-3-4b.tq_test_1_un_1'",
            "expected a string answer",
        ),
    ),
    (
        "baseline passage without label",
        {"baselines_retriever/wiki/bge/retriever.json": ranking_file([["w1"], ["w2", "m1"], ["w3"], ["w4"]])},
        ("baselines_retriever/wiki/bge/retriever.json", "record 1 (tq_test_2)", "unknown passage id 'm1'"),
    ),
    (
        "question text differs",
        {
            "retriever/bge/retriever.json": [
                {**r, "question": "Another?"} if i == 2 else r for i, r in enumerate(ranking_file(BGE))
            ]
        },
        ("record 2 (tq_test_3)", "field 'question'", "differs from the index"),
    ),
]


@pytest.mark.parametrize("case", MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed_releases_are_refused_before_anything_is_written(
    tmp_path: Path, case: tuple[str, dict, tuple]
):
    _name, overrides, expect = case
    src = write_release(tmp_path / "release", overrides)
    root = tmp_path / "root"
    with pytest.raises(DataFormatError) as err:
        import_release(src, root=root, log=lambda s: None)
    for fragment in expect:
        assert fragment in str(err.value), (fragment, str(err.value))
    assert not root.exists()


def _norm_only(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A rag.json's records with their Union_freq answers left out."""
    return [
        {
            **r, "predicted_answer": {
                reader: {key: a for key, a in per.items() if "_un_" in key}
                for reader, per in r["predicted_answer"].items()
            },
        }
        for r in records
    ]


NORM_ONLY = {
    "retriever/bm25/rag.json": _norm_only(rag_file()),
    "retriever/bge/rag.zsd": zsd(_norm_only(rag_file(BGE_RAG))),
    f"retriever_reranker/bge/{MONO}/rag.json": _norm_only(rag_file(MONO_RAG)),
    f"reranker/{MONO}/rag.json": _norm_only(rag_file(ORACLE_RAG)),
}
#: options of ``paper-runs import`` that do not fit (the tiny release's reader files answer at k = 1
#: and 3; Hit@100 is the deepest cut-off scored): the arguments, release overrides, the error line
IMPORT_OPTIONS = [
    (
        ["--k", "5"], {},
        "--k 5: the release's reader files answer at k = 1, 3 only (Union_norm); every EM comparison "
        "at k = 5 would be empty",
    ),
    (["--k", "0"], {}, "--k 0: the EM comparisons read the top k passages; k must be at least 1"),
    (["--depth", "0"], {}, "--depth 0: the ranked passages kept per question must be at least 1"),
    (["--depth", "-5"], {}, "--depth -5: the ranked passages kept per question must be at least 1"),
    (
        ["--depth", "99"], {},
        "--depth 99: below 100, the deepest cut-off scored (Hit@100); a ranking cut at 99 would score "
        "as if it ended there; give --depth 100 or more",
    ),
    (
        ["--union", "freq"], NORM_ONLY,
        "--union freq: the release's reader files have no Union_freq answers (only Union_norm)",
    ),
]


@pytest.mark.parametrize("case", IMPORT_OPTIONS, ids=[" ".join(c[0]) for c in IMPORT_OPTIONS])
def test_import_options_that_do_not_fit_are_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: tuple[list[str], dict[str, Any], str]
):
    """``python -m inferqa_utils paper-runs import`` (its ``main``, in this process): exit 2 and one
    line on stderr naming the option and its value; the root is never created."""
    from inferqa_utils.__main__ import main

    args, overrides, message = case
    src = write_release(tmp_path / "release", overrides)
    root = tmp_path / "root"
    code = main(["paper-runs", "import", str(src), "--out", str(root), *args])
    assert (code, capsys.readouterr().err) == (2, f"error: {message}\n")
    assert not root.exists()


# ------------------------------------------------------------------------------ zstandard and the hub


def test_zstandard_frames_and_decompression(tmp_path: Path):
    data = b"[1, 2, 3]"
    unsized = zstandard.ZstdCompressor(write_content_size=False)
    two = zstandard.ZstdCompressor().compress(data[:4]) + unsized.compress(data[4:])
    p = tmp_path / "x.zsd"
    p.write_bytes(two)
    assert b"".join(files.iter_decompressed(p)) == data  # concatenated frames, one without a content size
    assert files.decompress_to(p, tmp_path / "x.json") == len(data)
    assert [r for _, r in files.iter_records(p, jsonl=False)] == [1, 2, 3]


def test_fetch_decompresses_to_the_released_names(tmp_path: Path):
    from inferqa_utils.paper_runs.fetch import decompress_tree

    hub = tmp_path / "hub"
    write_release(hub)
    entries = decompress_tree(hub, tmp_path / "results")
    names = {e["released"] for e in entries}
    assert {"index/test/retriever.jsonl", "retriever/bm25/retriever.json", "retriever/bge/rag.json"} <= names
    assert json.loads((tmp_path / "results" / "retriever/bge/rag.json").read_text())[0]["id"] == "tq_test_1"
    assert len(load_release(tmp_path / "results").questions) == 4


@pytest.fixture()
def offline_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hub unreachable, as on a machine without network, whether or not this one has it:
    ``HF_HUB_OFFLINE=1`` (read by :func:`inferqa_utils.core.hub.hub_reachable`; the subprocesses below
    inherit it), as tests/test_models.py does."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_fetch_offline_fails_fast_with_the_hub_error(tmp_path: Path, offline_hub: None):
    from inferqa_utils.paper_runs.fetch import fetch

    t0 = time.perf_counter()
    with pytest.raises(
        OfflineError,
        match=r"JamshidJDMY/InferentialQA, folder results/.*not reachable.*paper-runs "
        r"import DIR",
    ):
        fetch(tmp_path / "to", log=lambda s: None)
    assert time.perf_counter() - t0 < 10
    assert not (tmp_path / "to").exists()


def test_the_cli_fetch_offline_and_import(tmp_path: Path, offline_hub: None):
    env = {**os.environ, "PYTHONPATH": str(CHECKOUT), "INFERQA_ROOT": str(PATHS.root)}
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "inferqa_utils", "paper-runs", "fetch", "--to", str(tmp_path / "to")],
        capture_output=True, text=True, env=env, timeout=60,
    )
    seconds = time.perf_counter() - t0
    assert out.returncode == 2 and out.stderr.startswith("error: The paper's released result files"), (
        out.stderr
    )
    assert seconds < 15, seconds
    src = write_release(tmp_path / "release")
    shutil.rmtree(tmp_path / "to", ignore_errors=True)
    out = subprocess.run(
        [
            sys.executable, "-m", "inferqa_utils", "paper-runs", "import", str(src), "--out",
            str(tmp_path / "root"), "--k", "1", "--union", "freq",
        ],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    # the summary lines of F2's EM finding itself (not rerankers_marginal_ranking, which the name is a
    # prefix of): gemma and qwen compared under each scoring, 4 questions < 10: inconclusive
    lines = [line.split()[1:] for line in out.stdout.splitlines() if line.startswith("[paper-runs] F2")]
    summary = {" ".join(words) for words in lines}
    for how in ("normalised", "raw"):
        assert f"F2 rerankers_marginal EM {how} 2 compared: 0 hold, 0 contradicted, 2 inconclusive" in summary
    # --k 1 --union freq reached the comparisons: every Union_freq top-1 answer of bge and bge + MonoT5
    # is NO ANSWER (the release answers at top 3 only), so both sides score 0 on all 4 questions (at
    # the default k = 3, Union_norm, gemma's normalised EM would be 100 vs 75)
    import pandas as pd

    root = tmp_path / "root"
    f2 = pd.read_csv(contract.table_path(root, contract.FINDINGS))
    f2 = f2[(f2["finding"] == "rerankers_marginal") & (f2["metric"] == "EM")]
    assert len(f2) == 4 and set(f2["k"]) == {1} and set(f2["union"]) == {"freq"}
    assert set(f2["why"]) == {"no variation: every one of the 4 questions scores 0 on both sides"}
    params = json.loads(contract.table_path(root, contract.RECORD).read_text())["parameters"]
    assert (params["k"], params["union"]) == (1, "freq")
    bad = write_release(tmp_path / "bad", {"index/test/retriever.zsd": _truncated_index()})
    out = subprocess.run(
        [
            sys.executable, "-m", "inferqa_utils", "paper-runs", "import", str(bad), "--out",
            str(tmp_path / "root2"),
        ],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert out.returncode == 2 and "truncated zstandard file" in out.stderr
    assert not (tmp_path / "root2").exists()


def write_hub_copy(release: Path, hub: Path) -> Path:
    """``release`` as the hub dataset stores it: each file, whatever its form in ``release``, under
    ``hub/results/`` zstandard-compressed with its suffix replaced by ``.zsd``; and two files fetch
    must not take: one the layout does not name and the dataset card outside ``results/``."""
    for p in sorted(release.rglob("*")):
        if p.is_file():
            stored = hub / "results" / (files.released_stem(p.relative_to(release).as_posix()) + ".zsd")
            stored.parent.mkdir(parents=True, exist_ok=True)
            stored.write_bytes(zstandard.ZstdCompressor().compress(files.read_text(p).encode()))
    (hub / "results" / "hint-contribution").mkdir(parents=True)
    (hub / "results" / "hint-contribution" / "rag.zsd").write_bytes(zsd([]))
    (hub / "README.md").write_text("the dataset card\n", encoding="utf-8")
    return hub


def test_fetch_from_a_local_copy_decompresses_records_and_verifies(tmp_path: Path, offline_hub: None):
    """``fetch(source=...)`` with a local copy standing in for the hub (which HF_HUB_OFFLINE makes
    unreachable: a download would fail): the default patterns take the 13 files of the tiny release
    (not hint-contribution/, not the card); each is decompressed to its released name with the
    original bytes and recorded in MANIFEST.json (stored name, sizes, sha256 of both); the copy is
    verified by loading it — 4 questions; 7 rankings (bm25, bge, bge + MonoT5, the oracle MonoT5,
    bge + FT-MonoT5 and the MS MARCO and Wikipedia baselines); 4 reader files — and download/ is
    removed."""
    from inferqa_utils.paper_runs.fetch import default_patterns, fetch

    release = write_release(tmp_path / "release")
    hub = write_hub_copy(release, tmp_path / "hub")
    plain: dict[str, bytes] = {}
    for p in release.rglob("*"):
        if p.is_file():
            entry, names = files.match(p.relative_to(release).as_posix())
            plain[entry.path.format(**names)] = files.read_text(p).encode()
    to, lines = tmp_path / "to", []
    assert fetch(to, log=lines.append, source=hub) == to / "results"
    manifest = json.loads((to / "MANIFEST.json").read_text(encoding="utf-8"))
    assert (manifest["repo"], manifest["patterns"]) == ("JamshidJDMY/InferentialQA", default_patterns())
    assert len(plain) == 13 and {e["released"] for e in manifest["files"]} == set(plain)
    for e in manifest["files"]:
        data, stored = plain[e["released"]], hub / "results" / e["stored"]
        assert e["stored"] == files.compressed_name(e["released"])
        assert (to / "results" / e["released"]).read_bytes() == data
        assert (e["bytes"], e["sha256"]) == (len(data), hashlib.sha256(data).hexdigest())
        assert (e["stored_bytes"], e["stored_sha256"]) == (
            stored.stat().st_size, hashlib.sha256(stored.read_bytes()).hexdigest(),
        )
    verified = "[paper-runs] verified: 4 questions, 7 rankings, 4 reader files, readers gemma-3-4b, qwen-3-8b"
    assert verified in lines
    assert not (to / "download").exists() and not (to / "results" / "hint-contribution").exists()


def test_fetch_verifies_what_it_decompressed(tmp_path: Path, offline_hub: None):
    """A stored file that decompresses but is malformed (bge's ranking with 3 records for 4
    questions) is refused by the verification with the loader's message; ``verify=False`` takes the
    same copy as it is. A truncated stored file is refused while decompressing, before any manifest
    is written."""
    from inferqa_utils.paper_runs.fetch import fetch

    short = write_release(tmp_path / "short", {"retriever/bge/retriever.json": ranking_file(BGE[:3])})
    hub = write_hub_copy(short, tmp_path / "hub")
    with pytest.raises(
        DataFormatError, match=r"retriever/bge/retriever\.json: 3 records, the index has 4 questions"
    ):
        fetch(tmp_path / "to", log=lambda s: None, source=hub)
    assert fetch(tmp_path / "as-is", verify=False, log=lambda s: None, source=hub).is_dir()
    cut = write_hub_copy(write_release(tmp_path / "cut"), tmp_path / "hub-cut")
    (cut / "results" / "index" / "test" / "retriever.zsd").write_bytes(_truncated_index())
    with pytest.raises(DataFormatError, match=r"retriever\.zsd.*truncated zstandard file"):
        fetch(tmp_path / "cut-to", log=lambda s: None, source=cut)
    assert not (tmp_path / "cut-to" / "MANIFEST.json").exists()


def test_fetch_replaces_its_manifest_in_one_rename(tmp_path: Path, offline_hub: None):
    """A second fetch into the same folder puts a complete new MANIFEST.json in place of the old one
    (a new file renamed over it), never rewriting the old file in place, where a reader or a fetch
    killed half-way would see half a manifest: a hard link to the first manifest keeps the first's
    text (1 file: the index alone), the second lists 13, and no temporary file is left."""
    from inferqa_utils.paper_runs.fetch import fetch

    hub = write_hub_copy(write_release(tmp_path / "release"), tmp_path / "hub")
    to = tmp_path / "to"
    fetch(to, include=["results/index/*"], log=lambda s: None, source=hub)
    first = (to / "MANIFEST.json").read_text(encoding="utf-8")
    os.link(to / "MANIFEST.json", tmp_path / "first.json")
    fetch(to, log=lambda s: None, source=hub)
    assert (tmp_path / "first.json").read_text(encoding="utf-8") == first
    assert len(json.loads(first)["files"]) == 1
    assert len(json.loads((to / "MANIFEST.json").read_text(encoding="utf-8"))["files"]) == 13
    assert sorted(p.name for p in to.iterdir()) == ["MANIFEST.json", "results"]


def test_without_reader_files_only_rankings_and_optimal_are_compared(tmp_path: Path):
    src = write_release(
        tmp_path,
        {
            name: None
            for name in (
                "retriever/bm25/rag.json", "retriever/bge/rag.zsd", f"retriever_reranker/bge/{MONO}/rag.json",
                f"reranker/{MONO}/rag.json",
            )
        },
    )
    t = findings_table(load_release(src))
    assert set(t["family"]) == {"F1", "F2", "reasoning reader"}  # Optimal is read from the index
    assert set(t.loc[t["family"] == "F2", "metric"]) == {"Hit@10"}
    assert set(t.loc[t["family"] == "reasoning reader", "comparison"]) == {
        "gemma-3-4b, Optimal vs qwen-3-8b, Optimal"
    }


# ------------------------------------------------------------------------------------------ the check


def _tables(root: Path) -> Path:
    """The folder of the tables of the latest import into ``root`` (``results/paper-runs`` points at
    its run's folder)."""
    return (root / "results" / contract.PROFILE).resolve()


def test_the_import_is_recorded_as_a_run_of_stage_09(big):
    """Outside a notebook run the import files itself as the runner files a notebook: a run folder
    of the paper-runs profile holding every table it wrote, whose manifest says it finished notebook
    09 with those tables as its outputs, published as ``results/paper-runs``."""
    from inferqa_utils.verdicts import check as chk

    root, done = big
    executions = root / "build" / "executions"
    run = chk.checked_run(contract.PROFILE, executions)
    assert run is not None and run[0].name.endswith("-paper-runs")
    assert chk.no_run_message(contract.PROFILE, executions=executions) is None
    assert _tables(root) == (run[0] / "results").resolve()
    tables = [p.name for p in done.written if p.parent == _tables(root)]
    assert len(tables) == len(export.written_tables())
    for name in tables:
        written, refused = chk.table_refusal(run, name)
        assert not refused and written["run_id"] == run[0].name
    assert list(run[1]["notebooks"]) == [contract.notebook_file()] == ["09_paper_runs.ipynb"]


def test_check_scores_the_findings_on_an_import_without_flags(big, tmp_path: Path):
    """``python -m inferqa_utils check --profile paper-runs`` in a root holding only an import: no
    expected numbers (the release decides them), the findings of paper_numbers.yaml scored on the
    imported tables with the profile's parameters (BGE, Gemma 3 4B, top 3, Union_norm), as
    test_the_findings_score_the_import_unchanged finds them."""
    root, _done = big
    env = {**os.environ, "PYTHONPATH": str(CHECKOUT), "INFERQA_ROOT": str(root)}
    report = tmp_path / "check.md"
    out = subprocess.run(
        [sys.executable, "-m", "inferqa_utils", "check", "--profile", "paper-runs", "--report", str(report)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert any("no expected numbers recorded for profile 'paper-runs'" in x for x in lines)
    assert any(x.startswith("[check] run checked: ") and "-paper-runs (complete" in x for x in lines)
    assert any(x.startswith("[check] findings on this run") for x in lines)
    verdicts = {x.split()[1]: x.split()[0] for x in lines if x.startswith("  ") and len(x.split()) > 1}
    assert verdicts["optimal_far_above_pipeline"] == "inconclusive"
    assert verdicts["oracle_half_of_optimal"] == "inconclusive"
    assert verdicts["pipeline_below_oracle"] == "holds"
    assert verdicts["rerankers_marginal"] == "contradicted"
    record = json.loads(report.with_suffix(".json").read_text())
    assert (record["dataset"], record["split"]) == ("quit-paper", "test")
    assert record["run_checked"]["run_id"].endswith("-paper-runs")
    assert list(record["run"]["notebooks_s"]) == ["09_paper_runs"]


# ------------------------------------------------------------------------------------------ notebook 09


def test_locate_without_a_release_tries_no_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import socket

    def no_connection(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("locate opened a connection")

    monkeypatch.setattr(socket, "create_connection", no_connection)
    found = views.locate(None, False, root=tmp_path, cache=tmp_path / "cache")
    assert (found.how, found.folder, found.found) == ("none", None, False)
    assert "No copy of the paper's released runs here" in found.message
    assert "paper-runs fetch" in found.message and "paper_runs_dir=DIR" in found.message
    given = views.locate(tmp_path / "copy", root=tmp_path)
    assert (given.how, given.folder) == ("given", tmp_path / "copy")


def test_locate_prefers_an_import_made_at_the_same_k_then_the_cache(big, tmp_path: Path):
    root, _done = big
    cache = tmp_path / "cache"
    assert views.locate(None, root=root, cache=cache, k=3, union="norm").how == "import"
    (cache / "results" / "index").mkdir(parents=True)
    at5 = views.locate(None, root=root, cache=cache, k=5)
    assert (at5.how, at5.folder) == ("cache", cache / "results")
    shutil.rmtree(cache)
    kept = views.locate(None, root=root, cache=cache, k=5)
    assert kept.how == "import" and "made at k = 3" in kept.message


def test_locate_offline_fetch_prints_the_hub_error_and_how_to_copy(tmp_path: Path, offline_hub: None):
    t0 = time.perf_counter()
    found = views.locate(None, True, root=tmp_path, cache=tmp_path / "cache", log=lambda s: None)
    assert time.perf_counter() - t0 < 10
    assert found.how == "none" and "not reachable" in found.message
    assert "copy the folder `results/` of the hub dataset `JamshidJDMY/InferentialQA`" in found.message


def test_the_views_of_an_import(big, tmp_path: Path):
    """The sentences by hand (module docstring of write_big_release): 14 readings × 40 questions,
    20 disagreements (bge + MonoT5, Gemma, top 3 Union_norm: the pipeline's answers differ in case);
    F3's Optimal vs the best pipeline is inconclusive under both scorings (2 and 18 discordant
    questions against a margin of 35.70)."""
    root, _done = big
    shown = views.load_import(root=root)
    assert shown is not None and (shown.k, shown.union) == (3, "norm")
    assert views.load_import("no-such-dataset", root=root) is None
    assert "40 questions" in views.import_line(shown)
    ret = views.retrieval_view(shown)
    assert ret.loc[("reranked", f"bge+{MONO}"), "Hit@10"] == 100.0
    assert ret.loc[("first stage", "bge"), "n"] == 40
    assert "**FT-bge-N10** with 100.00 % over 40 questions" in views.retrieval_found(shown)
    em = views.em_found(shown)
    assert "disagree on 20 of 560 answers (3.6 %)" in em and "+50.00 points" in em
    f3 = views.family_found(shown, "F3")
    assert "`oracle_half_of_optimal` (EM, 4 comparisons): holds 0, contradicted 0, inconclusive 4" in f3
    assert "The verdict changes with the EM scoring in 0 of 6 EM comparisons." in f3
    assert views.family_found(shown, "F1").startswith("The release has no file this family compares")
    union = views.family_found(shown, "union")
    assert "With the authors' raw EM Union_freq reads significantly better than Union_norm in 1" in union
    table = views.family_table(shown, "F2")
    assert list(table.columns) == list(views.FAMILY_COLUMNS)
    assert set(table["reader"]) == {"—", "gemma-3-4b"}  # the focus: Gemma's EM only
    assert len(views.family_rows(shown, "F2", focus=False)) == 5
    figure = views.family_forest(shown, "F3", tmp_path)
    assert figure == tmp_path / "09_quit-paper_test_findings_f3.png" and figure.stat().st_size > 0
    assert views.family_forest(shown, "F1", tmp_path) is None


def _notebook_cells() -> list[str]:
    import nbformat

    nb = nbformat.read(PATHS.notebooks / f"{stages.Stage.PAPER_RUNS.notebook}.ipynb", as_version=4)
    return [c.source for c in nb.cells if c.cell_type == "code"]


def _run_notebook(
    params: dict[str, Any], monkeypatch: pytest.MonkeyPatch, cells: list[str] | None = None
) -> tuple[dict[str, Any], list[Any]]:
    """Notebook 09's code cells (``cells``, default read from the notebook) run in this process,
    ``params`` injected after the parameters cell as papermill injects them; returns the namespace
    and what the cells displayed."""
    import IPython.display

    shown: list[Any] = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **kw: shown.extend(objs))
    cells = cells if cells is not None else _notebook_cells()
    ns: dict[str, Any] = {}
    exec(cells[0], ns)
    ns.update(params)
    for source in cells[1:]:
        exec(source, ns)
    return ns, shown


def test_notebook_09_without_a_release_shows_nothing(monkeypatch: pytest.MonkeyPatch, capsys):
    """Every profile's run executes notebook 09: without a release its cells take well under a
    second (what they import included; the kernel's start is the runner's)."""
    cells = _notebook_cells()
    t0 = time.perf_counter()
    ns, shown = _run_notebook({"paper_runs_dataset": "no-release-here"}, monkeypatch, cells)
    assert time.perf_counter() - t0 < 5
    assert ns["shown"] is None and shown == []
    assert "No copy of the paper's released runs here" in capsys.readouterr().out


def test_notebook_09_imports_a_release_and_shows_every_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Run as the runner runs it (``INFERQA_RUN_DIR`` set: the tables go to the run's folder, and the
    runner, not the import, files the run), on the 40-question release under a dataset name of its
    own."""
    from inferqa_utils.core.config import RUN_DIR_ENV

    run_dir = PATHS.executions / "20261126-000000-paper-runs"
    monkeypatch.setenv(RUN_DIR_ENV, str(run_dir))
    dataset = "paper-runs-notebook-test"
    src = write_big_release(tmp_path / "release")
    try:
        ns, shown = _run_notebook({"paper_runs_dir": str(src), "paper_runs_dataset": dataset}, monkeypatch)
        texts = [o.data for o in shown if isinstance(getattr(o, "data", None), str)]
        found = [t for t in texts if t.startswith("**What we found.**")]
        assert len(found) == 2 + len(views.FAMILIES)  # retrieval, EM and each family
        figures = {p.name for p in PATHS.figures.glob(f"09_{dataset}_test_findings_*.png")}
        assert figures == {f"09_{dataset}_test_findings_{f}.png" for f in
                           ("f2", "f3", "f5", "reasoning-reader", "union")}
        assert ns["shown"].dataset == dataset
        manifests = PATHS.executions.glob("*-paper-runs/manifest.json")
        assert all(dataset not in p.read_text() for p in manifests)  # the runner records it, not the import
        assert (run_dir / "results" / f"09_{dataset}_test_findings.csv").is_file()
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
        shutil.rmtree(PATHS.runs / dataset, ignore_errors=True)
        shutil.rmtree(PATHS.datasets / dataset, ignore_errors=True)
