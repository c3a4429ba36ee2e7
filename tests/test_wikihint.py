"""WikiHint as a build source: the stored answer-leakage score beside our filter (per hint),
tolerant parsing of that score, local and hub loading (fail-fast offline), and the export."""

from __future__ import annotations

import json
import math
import socket
import time
from pathlib import Path

import pandas as pd
import pytest

from inferqa_utils.construction import summary as report
from inferqa_utils.construction.build_config import BuildConfig, BuildResult
from inferqa_utils.construction.leakage import AGREEMENT_COLUMNS, LeakageFilter, leakage_disagreements
from inferqa_utils.construction.steps import leakage_agreement_table
from inferqa_utils.core.errors import DataFormatError, OfflineError
from inferqa_utils.ir.datamodel import Dataset
from inferqa_utils.sources import load_source, load_wikihint
from inferqa_utils.sources.wikihint import HUB_REPO, parse_answer_leakage

SAMPLE = Path(__file__).parent / "data" / "wikihint_sample.json"


def _rec(qid: str, answer: str, hints: list[tuple[str, object]]) -> dict:
    """A WikiHint-shaped record; each hint is (text, answer_leakage), ``...`` = metric absent."""
    out = []
    for i, (text, leak) in enumerate(hints, 1):
        metrics: dict = {"relevance": 0.9, "convergence": round(1 - i / 10, 2)}
        if leak is not ...:
            metrics["answer_leakage"] = leak
        out.append({"hint": text, "rank": str(i), "entities": [], "metrics": metrics})
    return {"id": qid, "question": {"question": f"Question {qid}?", "candidate_answers": ["X", answer]},
            "answer": {"answer": answer}, "hints": out}


RECORDS = [
    _rec("w1", "Vincent van Gogh", [
        ("Van Gogh painted The Starry Night in 1889.", 0.2),  # ours only (token 'gogh')
        ("He cut off part of his own ear.", 0.8),  # stored only
        ("Vincent signed his paintings with his first name.", 0.9),  # both (token 'vincent')
        ("He painted sunflowers many times.", 0.1),  # neither
        ("He was Dutch.", ...),  # no stored score: not in the table
    ]),
    _rec("w2", "Paris", [
        ("It is the capital of France.", 0.5),  # stored only: the threshold itself counts
        ("It is the capital of France!", 0.9),  # duplicate, cleaned away before the filter
        ("Paris Saint-Germain plays its home games here.", 0.3),  # ours only (exact 'paris'), source index 2
        ("It hosted the Summer Olympics in 1900 and 1924.", {"avg": 0.2, "max": 0.7}),  # stored only (max)
    ]),
]

#: hand-checked: (qid, hint index in the source, stored score, stored ≥ 0.5, our filter on that hint alone)
EXPECTED = [
    ("w1", 0, 0.2, False, True),
    ("w1", 1, 0.8, True, False),
    ("w1", 2, 0.9, True, True),
    ("w1", 3, 0.1, False, False),
    ("w2", 0, 0.5, True, False),
    ("w2", 2, 0.3, False, True),
    ("w2", 3, 0.7, True, False),
]


def _write(tmp_path: Path, recs: list[dict], name: str = "wikihint.json") -> Path:
    f = tmp_path / name
    f.write_text(json.dumps(recs), encoding="utf-8")
    return f


def test_per_hint_leakage_agreement_table(tmp_path):
    ds = load_source(f"wikihint:{_write(tmp_path, RECORDS)}")
    tab = leakage_agreement_table(ds.questions.values(), LeakageFilter(), threshold=0.5)
    assert list(tab.columns) == AGREEMENT_COLUMNS
    got = list(tab[["qid", "hint", "stored_leakage", "stored_leaks", "our_filter_leaks"]]
               .itertuples(index=False, name=None))
    assert got == EXPECTED
    assert list(tab["agree"]) == [s == o for *_, s, o in EXPECTED]
    # "our filter" is LeakageFilter.find on that single hint, not the question's verdict
    for r in tab.itertuples():
        q = ds.questions[r.qid]
        assert r.our_filter_leaks == bool(LeakageFilter().find(q.answers, [q.hints[r.hint].text]))
    assert tab.loc[0, "our_match"] == "token: 'gogh' ~ 'Vincent van Gogh'"
    assert leakage_disagreements(tab) == {"stored only": 3, "ours only": 2, "both": 1, "neither": 1}
    cross = report.leakage_crosstab(tab, 0.5)
    assert cross.loc["leaks", "leaks"] == 1 and cross.loc["leaks", "does not leak"] == 3
    assert cross.loc["does not leak", "leaks"] == 2 and cross.loc["does not leak", "does not leak"] == 1
    # a stricter threshold moves the 0.5 hint out of "stored only"
    assert (
        leakage_disagreements(leakage_agreement_table(ds.questions.values(), threshold=0.6))["stored only"]
        == 2
    )


def test_odd_answer_leakage_values_are_ignored_with_a_note(tmp_path):
    assert parse_answer_leakage(None) == (None, None)
    assert parse_answer_leakage(0.25) == (0.25, None)
    assert parse_answer_leakage(1) == (1.0, None)
    assert parse_answer_leakage({"avg": 0.2, "max": 0.7}) == (0.7, None)
    score, note = parse_answer_leakage({"avg": 0.2, "model": "bert"})
    assert score == 0.2 and "non-numeric" in note
    for odd in ("high", "0.4", True, [0.1, 0.2], {"model": "bert"}, math.nan):
        score, note = parse_answer_leakage(odd)
        assert score is None and note.startswith("answer_leakage ignored"), odd
    rec = _rec(
        "w3",
        "Rome",
        [
            ("It has seven hills.", ...),
            ("It is in Lazio.", "high"),
            ("The Tiber flows through it.", {"avg": 0.1, "max": 0.4}),
            ("It was an empire.", 0.3),
        ],
    )
    q = load_wikihint(_write(tmp_path, [rec])).questions["w3"]
    assert [h.meta.get("answer_leakage") for h in q.hints] == [None, None, 0.4, 0.3]
    assert q.hints[1].meta["metrics"]["answer_leakage"] == "high"  # the raw value stays in metrics
    assert len(q.meta["load_notes"]) == 1 and q.meta["load_notes"][0].startswith(
        "hints[1]: answer_leakage ignored"
    )
    tab = leakage_agreement_table([q])
    assert list(tab["hint"]) == [2, 3]  # only hints with a usable stored score


def test_load_source_wikihint_file_and_folder(tmp_path):
    ds = load_source(f"wikihint:{SAMPLE}")
    assert len(ds) == 24 and ds.meta["shape"] == "wikihint"
    q = ds.questions["test_19"]
    assert q.answer == "France" and q.qtype == "LOC:country" and len(q.hints) == 5
    assert [h.convergence for h in q.hints] == [0.8, 0.95, 0.75, 0.9, 0.92]
    assert [h.meta["answer_leakage"] for h in q.hints] == [0.05, 0.08, 0.04, 0.06, 0.07]
    assert all(h.meta.get("answer_leakage") is not None for x in ds for h in x.hints)
    # the sample's stored scores are all low and no hint names its answer: every hint agrees
    assert leakage_disagreements(leakage_agreement_table(ds.questions.values())) == {
        "stored only": 0, "ours only": 0, "both": 0, "neither": 120}
    # a folder holding the hub's files loads them in order (training, then test) as one dataset
    recs = json.loads(SAMPLE.read_text(encoding="utf-8"))
    _write(tmp_path, [r | {"id": r["id"].replace("test", "train")} for r in recs[:3]], "training.json")
    _write(tmp_path, recs[3:5], "test.json")
    both = load_source(f"wikihint:{tmp_path}")
    assert list(both.questions) == ["train_1", "train_2", "train_3", "test_4", "test_5"]
    assert [Path(f).name for f in both.meta["source_files"]] == ["training.json", "test.json"]
    _write(tmp_path, recs[:1], "training.json")
    _write(tmp_path, recs[:2], "test.json")
    with pytest.raises(DataFormatError, match=r"'test_1' also appears in training\.json"):
        load_source(f"wikihint:{tmp_path}")


def _assert_offline_error_is_fast_and_clear() -> str:
    t0 = time.perf_counter()
    with pytest.raises(OfflineError) as e:
        load_source("wikihint")
    assert time.perf_counter() - t0 < 5
    msg = str(e.value)
    assert HUB_REPO in msg and "training.json" in msg and "not reachable" in msg
    assert "build_source=wikihint:PATH" in msg
    return msg


def test_wikihint_from_hub_fails_fast_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    _assert_offline_error_is_fast_and_clear()


def test_wikihint_from_hub_fails_fast_when_the_hub_is_unreachable(monkeypatch):
    """No HF_HUB_OFFLINE: the reachability check meets a closed local port (nothing listens)."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr("inferqa_utils.core.hub.HUB_HOST", "127.0.0.1")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr("inferqa_utils.core.hub.HUB_PORT", port)
    assert "(127.0.0.1)" in _assert_offline_error_is_fast_and_clear()


@pytest.mark.parametrize("with_scores", [True, False])
def test_export_writes_leakage_agreement_and_counts(tmp_path, monkeypatch, with_scores):
    """export_build on a one-question build: the csv only when the table has rows, the counts always."""
    from inferqa_utils.construction import export_build as eb
    from inferqa_utils.construction.passages import build_passages

    monkeypatch.setattr(eb, "git_commit", lambda: None)
    monkeypatch.setattr(eb, "package_versions", lambda: {})
    src = load_source(f"wikihint:{_write(tmp_path, RECORDS)}")
    tab = (
        leakage_agreement_table(src.questions.values())
        if with_scores
        else pd.DataFrame(columns=AGREEMENT_COLUMNS)
    )
    q = src.questions["w1"]
    q.hints = q.hints[2:]
    ps = build_passages(q.qid, q.hint_texts)
    out = tmp_path / "out"
    ds = Dataset("t", {q.qid: q}, {p.pid: p for p in ps}, {q.qid: {p.pid: 1 for p in ps}},
                 {"train": [], "dev": [], "test": [q.qid]})
    cfg = BuildConfig(source="wikihint:x.json", name="t", k_hints=3, output_dir=str(out),
                      verification_file=str(tmp_path / "v.json"))
    res = BuildResult(cfg, ds, pd.DataFrame([{"qid": q.qid, "status": "kept", "reason": ""}]), pd.DataFrame(),
                      pd.DataFrame(), None, {}, {}, {}, out, leakage_agreement=tab)
    m = eb.export_build(res, {})
    counts = m["counts"]["leakage_disagreements"]
    if with_scores:
        assert counts == {"stored only": 3, "ours only": 2, "both": 1, "neither": 1}
        back = pd.read_csv(out / "leakage_agreement.csv")
        assert list(back.columns) == AGREEMENT_COLUMNS and len(back) == 7
        assert m["outputs"]["leakage_agreement"] == "leakage_agreement.csv"
    else:
        assert counts == {"stored only": 0, "ours only": 0, "both": 0, "neither": 0}
        assert not (out / "leakage_agreement.csv").exists() and "leakage_agreement" not in m["outputs"]
        assert "note" in report.leakage_crosstab(tab, 0.5).columns


def test_stored_leakage_threshold_is_reported_only():
    """The threshold changes no built question: not in the fingerprint nor in the label key."""
    a, b = BuildConfig(), BuildConfig(stored_leakage_threshold=0.8)
    assert a.fingerprint() == b.fingerprint() and a.label_key() == b.label_key()
