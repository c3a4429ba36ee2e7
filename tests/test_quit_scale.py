"""benchmarks/quit_scale.py at tiny size: the release it writes, and load → Lucene index → BM25 → metrics
on it, checked against counts and against metrics computed another way (plain Python)."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

from inferqa_utils.construction.passages import n_subset_permutations
from inferqa_utils.ir.trec import read_run
from inferqa_utils.sources import load_quit

pytestmark = pytest.mark.shared_data

N_QUESTIONS = 8  # splits 5 / 1 / 2 with QUIT's proportions


def _benchmark():
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "quit_scale.py"
    spec = importlib.util.spec_from_file_location("quit_scale", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


qs = _benchmark()


@pytest.fixture(scope="module")
def scale_run(shared_data, tmp_path_factory):
    work = tmp_path_factory.mktemp("quit_scale")
    info = qs.write_release(work / "release", N_QUESTIONS, echo=False)
    res = qs.run_pipeline(work / "release", work, echo=False)
    return info, res, work


def test_split_sizes_follow_quit():
    assert qs.split_sizes(7401) == {"train": 4811, "dev": 862, "test": 1728}
    assert qs.split_sizes(N_QUESTIONS) == {"train": 5, "dev": 1, "test": 2}
    assert qs.split_sizes(1) == {"train": 0, "dev": 0, "test": 1}


def test_reuse_gives_distinct_ids_and_other_hints(shared_data):
    src = list(qs.load_triviahg(qs.shared_file(qs.SOURCE)))[:3]
    planned = qs.plan(src, 7)
    ids = [p.qid for p in planned]
    assert len(set(ids)) == 7 and ids[3] == f"{src[0].qid}-copy1" and ids[6] == f"{src[0].qid}-copy2"
    assert planned[0].hints != planned[3].hints and len(planned[3].hints) == qs.K_HINTS


def test_release_shape_and_counts(scale_run):
    info, res, work = scale_run
    n = N_QUESTIONS * n_subset_permutations(5)
    assert n_subset_permutations(5) == 325
    assert info.passages == n == res.n_passages == res.n_indexed
    lines = (work / "release" / "corpus" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == n and set(json.loads(lines[0])) == {"id", "title", "contents"}
    rec = json.loads((work / "release" / "test.json").read_text(encoding="utf-8"))[0]
    assert set(rec) >= {"id", "question", "answers", "hints", "subsets"}
    assert sum(len(perms) for perms in rec["subsets"].values()) == 325 and len(rec["subsets"]) == 31
    # the loader derives the synthetic labels from the labelers' answers: 261 label-2 passages per question
    ds = load_quit(work / "release")
    assert len(ds.passages) == n
    for qid in ds.questions:
        labels = list(ds.qrels[qid].values())
        assert len(labels) == 325 and labels.count(2) == 261 and labels.count(1) == 64
    assert info.label2 == 261 * N_QUESTIONS


def test_every_test_question_has_a_run(scale_run):
    _info, res, _work = scale_run
    assert len(res.queries) == 2
    on_disk = read_run(res.run_path)
    assert set(on_disk) == set(res.queries)
    for q in res.queries:
        assert len(res.run[q]) == qs.DEPTH and len(on_disk[q]) == qs.DEPTH
    assert [s.name for s in res.steps] == ["load", "index", "search", "metrics"]
    assert all(s.seconds >= 0 and s.peak_gb > 0 for s in res.steps)


def _by_hand(run, qrels, threshold):
    """The table's metrics in %, straight from the run order and the labels (the package goes
    through inferqa_utils.measure.metrics): Hit@k, Recall@k, MRR@100 at ``threshold``; nDCG@k graded,
    gain 2^label − 1."""
    out: dict[str, list[float]] = {}
    for q, labels in qrels.items():
        rel = {p for p, lab in labels.items() if lab >= threshold}
        ranked = [p for p, _ in run[q]]
        first = next((i for i, p in enumerate(ranked, 1) if p in rel), None)
        for k in (1, 5, 10, 20, 50, 100):
            out.setdefault(f"Hit@{k}", []).append(float(first is not None and first <= k))
        for k in (5, 10, 50):
            out.setdefault(f"Recall@{k}", []).append(len(rel & set(ranked[:k])) / len(rel))
        out.setdefault("MRR@100", []).append(1 / first if first else 0.0)
        ideal = sorted((2 ** lab - 1 for lab in labels.values()), reverse=True)
        for k in (10, 100):
            dcg = sum((2 ** labels.get(p, 0) - 1) / math.log2(i + 1) for i, p in enumerate(ranked[:k], 1))
            idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal[:k], 1))
            out.setdefault(f"nDCG@{k}", []).append(dcg / idcg)
    return {m: 100 * sum(v) / len(v) for m, v in out.items()}


@pytest.mark.parametrize("threshold", [1, 2])
def test_metrics_in_range_and_as_computed_another_way(scale_run, threshold):
    _info, res, _work = scale_run
    row = res.tables[threshold].loc["bm25"]
    assert row["n_questions"] == len(res.queries) and row["threshold"] == threshold
    by_hand = _by_hand(res.run, res.qrels, threshold)
    assert set(by_hand) == {c for c in row.index if "@" in c}
    for m, v in by_hand.items():
        assert 0.0 <= row[m] <= 100.0, m
        assert row[m] == pytest.approx(v, abs=0.006), m  # the table is rounded to 2 decimals
    assert row["Hit@100"] > 0  # the own passages are found at all


def test_refuses_a_non_empty_out_without_overwrite(tmp_path):
    (tmp_path / "x").write_text("keep me")
    with pytest.raises(SystemExit, match="--overwrite"):
        qs.prepare_out(tmp_path, overwrite=False)
    assert (tmp_path / "x").read_text() == "keep me"
