"""The run's ledger (inferqa_utils.record.ledger): analysis marks, their seconds and tokens, the findings
each analysis feeds, and seconds per informative unit — hand-checked on written logs, and the marks
and LLM batch attribution on a real engine."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from inferqa_utils.core.errors import UnknownNameError
from inferqa_utils.llm import costs
from inferqa_utils.record import ledger
from inferqa_utils.record.run_dirs import discover_notebooks
from inferqa_utils.verdicts.findings import load_paper_numbers


def _write(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_segments_split_a_notebook_at_its_marks():
    events = [
        {"event": "start", "stage": "03_reranking", "at": 100.0},
        {"event": "begin", "stage": "03_reranking", "analysis": "03.rerank", "at": 104.5},
        {"event": "begin", "stage": "03_reranking", "analysis": "03.oracle", "at": 160.0},
        {"event": "end", "stage": "03_reranking", "at": 171.0},
        {"event": "start", "stage": "04_reading", "at": 171.5},
        {"event": "end", "stage": "04_reading", "at": 180.0},
    ]
    assert ledger.segments(events) == [
        ("03_reranking", "03.setup", 4.5),
        ("03_reranking", "03.rerank", 55.5),
        ("03_reranking", "03.oracle", 11.0),
        ("04_reading", "04.setup", 8.5),
    ]


def test_segments_of_a_rerun_notebook_count_the_last_run_only():
    events = [
        {"event": "start", "stage": "06_x", "at": 0.0},
        {"event": "begin", "stage": "06_x", "analysis": "06.report", "at": 1.0},
        {"event": "end", "stage": "06_x", "at": 3.0},
        {"event": "start", "stage": "06_x", "at": 10.0},
        {"event": "begin", "stage": "06_x", "analysis": "06.report", "at": 12.0},
        {"event": "end", "stage": "06_x", "at": 19.0},
    ]
    assert ledger.segments(events) == [("06_x", "06.setup", 2.0), ("06_x", "06.report", 7.0)]


def test_ledger_rows_join_marks_batches_and_informative_units(tmp_path):
    nb = "06_damaging_passages"
    _write(tmp_path / ledger.LEDGER_NAME, [
        {"event": "start", "stage": nb, "at": 0.0},
        {"event": "begin", "stage": nb, "analysis": "06.incremental.supporting", "at": 10.0},
        {"event": "begin", "stage": nb, "analysis": "06.incremental.containing", "at": 70.0},
        {"event": "begin", "stage": nb, "analysis": "06.report", "at": 190.0},
        {"event": "end", "stage": nb, "at": 200.0},
    ])
    batch = {"stage": "06_damaging_passages", "model": "m", "op": "chat", "model_calls": 5, "seconds": 50.0,
             "prompt_tokens": 1000, "prompt_tokens_total": 9000, "generated_tokens": 40}
    _write(tmp_path / costs.COST_LOG_NAME, [
        {**batch, "analysis": "06.incremental.supporting"},
        {**batch, "analysis": "06.incremental.containing"},
        {**batch, "analysis": "06.incremental.containing", "seconds": 60.0},
    ])
    informative = {"damaging_passages": 8, "probe3_recovers": 8, "damaging_larger_when_supporting": 9,
                   "damaging_passages_containing": 1, "probe3_recovers_containing": 1}
    rows = {r["analysis"]: r for r in ledger.ledger_rows(tmp_path, informative)}
    assert list(rows) == ["06.setup", "06.incremental.supporting", "06.incremental.containing", "06.report"]
    sup, con = rows["06.incremental.supporting"], rows["06.incremental.containing"]
    assert (sup["seconds"], sup["llm_s"], sup["evaluated"], sup["reused"], sup["generated"]) == (
        60.0, 50.0, 1000, 8000, 40)
    # the findings one analysis feeds read the same questions: the most units any of them rests on
    assert sup["informative"] == 9 and sup["s_per_unit"] == round(60 / 9, 1)
    assert (con["seconds"], con["llm_s"], con["evaluated"]) == (120.0, 110.0, 2000)
    # the containing corpus's own findings rest on 1 unit each; the comparison finding on 9
    assert con["informative"] == 9 and con["s_per_unit"] == round(120 / 9, 1)
    # a finding by construction rests on no unit
    built = {r["analysis"]: r for r in ledger.ledger_rows(
        tmp_path, {**informative, "damaging_larger_when_supporting": 9},
        {"damaging_larger_when_supporting": "by construction"})}
    assert built["06.incremental.supporting"]["informative"] == 8
    assert rows["06.report"]["feeds"] == [] and rows["06.report"]["s_per_unit"] is None
    assert rows["06.setup"]["seconds"] == 10.0
    # a finding not measured on the run counts no unit
    none = {r["analysis"]: r for r in ledger.ledger_rows(tmp_path, {})}
    assert none["06.incremental.supporting"]["informative"] == 0
    assert none["06.incremental.supporting"]["s_per_unit"] is None
    text = "\n".join(ledger.ledger_text(list(rows.values())))
    assert "06.incremental.containing" in text and "damaging_passages_containing 1" in text


def test_begin_refuses_an_unknown_analysis_naming_the_notebooks_keys():
    with pytest.raises(UnknownNameError, match=r"06\.incremental\.supporting"):
        ledger.begin("06.incremental")


def test_every_finding_is_fed_and_every_feed_is_a_finding():
    ids = {f.id for f in load_paper_numbers()}
    fed = {f for a in ledger.ANALYSES.values() for f in a.feeds}
    assert fed <= ids, f"unknown finding ids in ledger.ANALYSES: {sorted(fed - ids)}"
    assert ids <= fed, f"findings no analysis feeds: {sorted(ids - fed)}"
    for key, a in ledger.ANALYSES.items():
        assert key.startswith(f"{a.stage}."), key


def test_notebooks_mark_registered_analyses_and_every_analysis_is_marked():
    pattern = re.compile(r"ledger\.begin\((f?)\"([^\"]+)\"\)")
    used: set[str] = set()
    for nb in discover_notebooks():
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        for cell in cells:
            for fmt, key in pattern.findall("".join(cell["source"])):
                keys = [key.replace("{tag}", c) for c in ("supporting", "containing")] if fmt else [key]
                for k in keys:
                    assert k in ledger.ANALYSES, f"{nb.name} marks unregistered analysis {k!r}"
                    assert k.startswith(nb.name[:2]), f"{nb.name} marks another notebook's analysis {k!r}"
                used.update(keys)
    assert set(ledger.ANALYSES) == used, f"registered but never marked: {sorted(set(ledger.ANALYSES) - used)}"


def test_marks_and_llm_batches_carry_the_analysis(tmp_path, monkeypatch):
    """A real engine's batch, logged while an analysis runs, carries its key; the mark is written."""
    from inferqa_utils.llm import load_llm

    monkeypatch.setenv(ledger.LEDGER_ENV, str(tmp_path / ledger.LEDGER_NAME))
    monkeypatch.setenv(costs.COST_LOG_ENV, str(tmp_path / costs.COST_LOG_NAME))
    monkeypatch.setenv(costs.COST_STAGE_ENV, "04_reading")
    llm = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=512)
    try:
        ledger.begin("04.reading")
        llm.chat([[{"role": "user", "content": "Say yes."}]], max_tokens=2, progress=False)
        ledger.begin("04.report")
        llm.chat([[{"role": "user", "content": "Say no."}]], max_tokens=2, progress=False)
    finally:
        llm.close()
        costs.set_analysis("")
    batches = costs.read_log(tmp_path / costs.COST_LOG_NAME)
    assert [b["analysis"] for b in batches] == ["04.reading", "04.report"]
    assert all(b["stage"] == "04_reading" and b["model_calls"] == 1 for b in batches)
    marks = ledger.read_events(tmp_path / ledger.LEDGER_NAME)
    assert [(m["event"], m["analysis"]) for m in marks] == [("begin", "04.reading"), ("begin", "04.report")]
    assert marks[0]["at"] <= marks[1]["at"]
