"""The reproduction matrix and `python -m inferqa_utils check` (inferqa_utils.verdicts.check)."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
import yaml

from inferqa_utils import stages
from inferqa_utils.core.errors import DataFormatError
from inferqa_utils.verdicts import check as chk

#: the smoke run that wrote the hand-made tables of these tests
RUN_ID = "20261123-120000-smoke"
EM_TABLE = "04_embedded-smoke_test_em.csv"


def record_run(tmp_path, run_id=RUN_ID, notebooks=("04_reading",), status="ok"):
    """``tmp_path/executions/<run_id>/manifest.json``: a run of the profile in the id that finished
    (or not, per ``status``) the notebooks; returns the executions folder."""
    folder = tmp_path / "executions" / run_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps({
        "status": status, "parameters": {"profile": run_id.split("-", 2)[2]},
        "timings_s": {**dict.fromkeys(notebooks, 1.0), "total": float(len(notebooks))},
        "notebooks": {f"{nb}.ipynb": {"status": status, "outputs": []} for nb in notebooks}}),
        encoding="utf-8")
    return tmp_path / "executions"


def record_table(results, name=EM_TABLE, notebook="04_reading.ipynb", inherited_from=None):
    """List ``results/<name>`` in the manifest of the run whose folder holds ``results`` as the
    runner does: among the notebook's ``outputs``, or (``inherited_from``) as a file the run
    inherited from that run."""
    manifest = results.parent / "manifest.json"
    m = json.loads(manifest.read_text())
    if inherited_from:
        m.setdefault("inherited", {})[f"results/{name}"] = inherited_from
    else:
        entry = m["notebooks"].setdefault(notebook, {"status": "ok", "outputs": []})
        entry["outputs"].append(f"results/{name}")
    manifest.write_text(json.dumps(m))


def _setup(tmp_path, expected=6.25, tolerance=0.02):
    """The folder of run RUN_ID (``tmp_path/executions/<run id>``) with the EM table its notebook 04
    wrote, and a matrix of two conditions on the table; returns the run's results folder."""
    executions = record_run(tmp_path)
    results = executions / RUN_ID / "results"
    results.mkdir()
    pd.DataFrame({"setting": ["pipeline", "pipeline", "Optimal"], "system": ["bm25", "bm25", "x"],
                  "k": [3.0, 1.0, None], "EM": [6.25, 4.17, 52.08]}).to_csv(results / EM_TABLE, index=False)
    record_table(results)
    matrix = tmp_path / "m.yaml"
    matrix.write_text(yaml.safe_dump({"profiles": {"smoke": {"split": "test", "conditions": [
        {"id": "bm25 k=3 EM", "table": "reading_em",
         "row": {"setting": "pipeline", "system": "bm25", "k": 3}, "column": "EM", "expected": expected,
         "tolerance": tolerance},
        {"id": "Optimal", "table": "reading_em", "row": {"setting": "Optimal"},
         "column": "EM", "expected": 52.08},
    ]}}}), encoding="utf-8")
    return results, matrix


def _check(tmp_path, results, matrix, lines=None, **kw):
    """``check("smoke")`` of the conditions only, on ``results`` and the runs of ``tmp_path/executions``."""
    return chk.check(
        "smoke", folder=results, path=matrix,
        executions=tmp_path / "executions",
        findings_table=False,
        log=(lines.append if lines is not None else lambda *_: None),
        **kw,
    )


def test_ok_when_within_tolerance_and_fail_beyond(tmp_path):
    results, matrix = _setup(tmp_path)
    lines: list[str] = []
    assert _check(tmp_path, results, matrix, lines) == 0
    assert sum(line.startswith("OK") for line in lines) == 2
    (tmp_path / "b").mkdir()
    results2, matrix2 = _setup(tmp_path / "b", expected=8.33)  # one question of 48 off
    lines = []
    assert _check(tmp_path / "b", results2, matrix2, lines) == 1
    fail = next(line for line in lines if line.startswith("FAIL"))
    assert "bm25 k=3 EM" in fail and "off by -2.08" in fail


def test_a_notebook_counts_as_finished_only_by_its_own_status(tmp_path):
    """The run manifest's per-notebook record decides: ``ok`` finished; failed, interrupted or
    unrecorded did not (even in a run whose overall status is ``ok``)."""
    executions = record_run(tmp_path, notebooks=("02_retrieval", "03_reranking"))
    manifest = executions / RUN_ID / "manifest.json"
    m = json.loads(manifest.read_text())
    m["timings_s"]["04_reading"] = 2.0  # timed, but no per-notebook record
    m["notebooks"]["03_reranking.ipynb"] = {"status": "failed in 03_reranking.ipynb"}
    manifest.write_text(json.dumps(m))
    message = chk.no_run_message("smoke", ["03"], executions)
    assert message.startswith("no run of profile smoke finished notebook 03")
    assert chk.no_run_message("smoke", ["02"], executions) is None


def test_missing_table_row_or_expected_value_fails(tmp_path):
    results, matrix = _setup(tmp_path)
    m = yaml.safe_load(matrix.read_text())
    conds = m["profiles"]["smoke"]["conditions"]
    conds.append({"id": "absent table", "table": "damaging_intervals",
                  "row": {"system": "bm25"}, "column": "EM@N", "expected": 1.0})
    conds.append({"id": "two rows", "table": "reading_em",
                  "row": {"system": "bm25"}, "column": "EM", "expected": 1.0})
    conds.append({"id": "unrecorded", "table": "reading_em",
                  "row": {"setting": "Optimal"}, "column": "EM", "expected": None})
    matrix.write_text(yaml.safe_dump(m))
    lines: list[str] = []
    assert _check(tmp_path, results, matrix, lines) == 3
    text = "\n".join(lines)
    assert "06_embedded-smoke_test_intervals.csv not found (run notebook 06)" in text
    assert "2 rows of 04_embedded-smoke_test_em.csv match" in text and "no expected value recorded" in text


def test_update_rewrites_expected_values_only(tmp_path):
    results, matrix = _setup(tmp_path, expected=1.0)
    outcomes = chk.update("smoke", path=matrix, folder=results, executions=tmp_path / "executions")
    assert [o.got for o in outcomes] == [6.25, 52.08]
    text = matrix.read_text()
    assert text.startswith("# Reproduction matrix") and "expected: 6.25" in text
    assert _check(tmp_path, results, matrix) == 0


def test_matrix_errors_name_the_condition(tmp_path):
    bad = tmp_path / "m.yaml"
    bad.write_text("profiles:\n  smoke:\n    conditions:\n    - {id: x, table: reading_em, row: {}}\n")
    with pytest.raises(DataFormatError, match="missing 'column'"):
        chk.load_matrix(bad)


def test_packaged_matrix_covers_every_notebook_of_smoke_and_default():
    """Every notebook but 09, whose tables come only from an import of the paper's released runs
    (profile paper-runs; tests/test_paper_runs.py checks them), which no smoke or default run has."""
    from inferqa_utils.record.run_dirs import discover_notebooks
    from inferqa_utils.stages import Stage

    matrix = chk.load_matrix()
    numbers = {p.name[:2] for p in discover_notebooks()} - {Stage.PAPER_RUNS}
    for profile in ("smoke", "default"):
        conds = matrix[profile]["conditions"]
        assert {c.notebook for c in conds} == numbers, profile
        assert all(c.expected is not None for c in conds), f"{profile}: run check --update on a real run"


def test_cli_list_and_unknown_profile(capsys):
    from inferqa_utils.__main__ import main

    assert main(["check", "--list", "--profile", "smoke"]) == 0
    assert "quickstart top-1 BM25 EM" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:  # argparse refuses a profile profiles.yaml does not define
        main(["check", "--list", "--profile", "nope"])
    assert exc.value.code == 2 and "invalid choice: 'nope'" in capsys.readouterr().err


def test_profile_without_conditions_scores_the_findings_only(tmp_path):
    lines: list[str] = []
    fails = chk.check("wikihint", folder=tmp_path, path=chk.MATRIX, log=lines.append)
    assert fails == 0
    assert any("no expected numbers recorded for profile 'wikihint'" in x for x in lines)
    assert any(x.startswith("[check] findings on this run") for x in lines)
    with pytest.raises(KeyError):
        chk.check("no-such-profile", folder=tmp_path, log=lines.append)


# ----------------------------------------------------------------------------- which run wrote the table


def _fail_lines(lines):
    return [line for line in lines if line.startswith("FAIL")]


def test_a_table_the_run_did_not_write_fails_naming_the_run(tmp_path):
    """A file in the run's folder that none of its notebooks wrote (copied there by hand) FAILs;
    written by its notebook 04, it counts, and the line names the run checked."""
    results, matrix = _setup(tmp_path)
    manifest = results.parent / "manifest.json"
    m = json.loads(manifest.read_text())
    m["notebooks"]["04_reading.ipynb"]["outputs"] = []
    manifest.write_text(json.dumps(m))
    lines: list[str] = []
    assert _check(tmp_path, results, matrix, lines) == 2
    assert _fail_lines(lines)[0].endswith(
        "table 04_embedded-smoke_test_em.csv is in the folder of run 20261123-120000-smoke but none of its "
        "notebooks wrote it and the run did not inherit it: rerun its notebook")
    record_table(results)
    lines = []
    assert _check(tmp_path, results, matrix, lines) == 0
    assert any(x.startswith("[check] run checked: 20261123-120000-smoke (") for x in lines)


def test_a_table_of_a_notebook_that_did_not_finish_fails(tmp_path):
    """Notebook 04 wrote the table, then raised: the table FAILs with the command that reruns it.
    A newer run that failed is not the run checked: the older one that ended well is."""
    results, matrix = _setup(tmp_path)
    manifest = results.parent / "manifest.json"
    m = json.loads(manifest.read_text())
    m["notebooks"]["04_reading.ipynb"]["status"] = "failed in 04_reading.ipynb"
    manifest.write_text(json.dumps(m))
    lines: list[str] = []
    run = chk.checked_run("smoke", tmp_path / "executions", RUN_ID)
    assert chk.evaluate(chk.load_matrix(matrix)["smoke"]["conditions"], "embedded-smoke", "test",
                        run=run)[0].why == (
        "table 04_embedded-smoke_test_em.csv was written by 04_reading.ipynb in run 20261123-120000-smoke, "
        "which did not finish (failed in 04_reading.ipynb): rerun it "
        "(python -m inferqa_utils run --profile smoke --only 04)")
    m["notebooks"]["04_reading.ipynb"]["status"] = "ok"
    manifest.write_text(json.dumps(m))
    record_run(tmp_path, "20261123-130000-smoke", status="failed in 04_reading.ipynb")
    assert chk.checked_run("smoke", tmp_path / "executions")[0].name == RUN_ID
    assert _check(tmp_path, results, matrix, lines) == 0


def test_an_inherited_table_counts_as_the_run_it_came_from(tmp_path):
    """A partial run inherited the table: it counts, and the record names the run that wrote it."""
    results, matrix = _setup(tmp_path)
    later = "20261124-090000-smoke"
    executions = record_run(tmp_path, later, notebooks=("05_finetuning",))
    (executions / later / "results").mkdir()
    (executions / later / "results" / EM_TABLE).write_bytes((results / EM_TABLE).read_bytes())
    record_table(executions / later / "results", inherited_from=RUN_ID)
    lines: list[str] = []
    assert chk.check("smoke", path=matrix, executions=executions, findings_table=False, log=lines.append,
                     report=tmp_path / "c.md") == 0
    assert any(x.startswith(f"[check] run checked: {later} (") for x in lines)
    conds = json.loads((tmp_path / "c.json").read_text())["conditions"]
    assert [(c["run_checked"]["run_id"], c["written_by"]["run_id"]) for c in conds] == [(later, RUN_ID)] * 2


def test_update_leaves_the_values_of_a_table_the_run_did_not_write_alone(tmp_path):
    results, matrix = _setup(tmp_path, expected=1.0)
    manifest = results.parent / "manifest.json"
    m = json.loads(manifest.read_text())
    m["notebooks"]["04_reading.ipynb"]["outputs"] = []
    manifest.write_text(json.dumps(m))
    outcomes = chk.update("smoke", path=matrix, folder=results, executions=tmp_path / "executions")
    assert [o.status for o in outcomes] == ["FAIL", "FAIL"] and "none of its notebooks" in outcomes[0].why
    assert "expected: 6.25" not in matrix.read_text()


def test_cli_exit_code_is_the_checks_outcome(tmp_path, monkeypatch, capsys):
    """``check --report`` in a root of its own (the run's folder under build/executions holding the
    EM table its notebook 04 wrote, the two-condition matrix): exit 0 when both conditions hold,
    with the report in the run's folder; 1 when one is off by 2.08; 2 ("no run to check") without a
    run, and for a run id that does not exist."""
    from inferqa_utils.__main__ import main
    from inferqa_utils.core.config import Paths
    from inferqa_utils.record import run_dirs

    results, matrix = _setup(tmp_path / "build")
    for module in (chk, run_dirs):
        monkeypatch.setattr(module, "PATHS", Paths(tmp_path))
    monkeypatch.setattr(chk, "MATRIX", matrix)
    argv = ["check", "--profile", "smoke", "--no-findings", "--report"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"[check] run checked: {RUN_ID} (" in out and "[check] 2 OK, 0 FAIL" in out
    assert (results / "check_smoke.md").is_file() and (results / "check_smoke.json").is_file()
    m = yaml.safe_load(matrix.read_text(encoding="utf-8"))
    m["profiles"]["smoke"]["conditions"][0]["expected"] = 8.33  # 6.25 − 8.33 = −2.08
    matrix.write_text(yaml.safe_dump(m), encoding="utf-8")
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "[check] 1 OK, 1 FAIL" in out and "off by -2.08" in out
    assert main([*argv, "--run", "20990101-000000-smoke"]) == 2
    assert "no run 20990101-000000-smoke of profile smoke" in capsys.readouterr().err
    (results.parent / "manifest.json").unlink()
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith("error: no run of profile smoke to check")


# ----------------------------------------------------------------------------- the tolerance, by hand


def _outcome(folder, got, expected, tolerance=0.02):
    """One condition on a one-row EM table holding ``got`` (written to ``folder``), evaluated on its
    own (no run: which run wrote the table is not asked)."""
    folder.mkdir(exist_ok=True)
    pd.DataFrame({"setting": ["pipeline"], "EM": [got]}).to_csv(folder / EM_TABLE, index=False)
    c = chk.Condition("EM", stages.READING_EM, {"setting": "pipeline"}, "EM", expected, tolerance)
    return chk.evaluate([c], "embedded-smoke", "test", folder)[0]


def test_the_tolerance_is_absolute_and_inclusive_at_its_edge(tmp_path):
    """Tolerance 0.5 around 6.25: 6.75 − 6.25 = 0.5 exactly (both are binary fractions), so 6.75 and
    5.75 are OK at the edge; 6.76 and 5.74 are off by ±0.51; 6.5 is inside."""
    cases = [(6.5, "OK", ""), (6.75, "OK", ""), (5.75, "OK", ""), (6.76, "FAIL", "off by +0.51"),
             (5.74, "FAIL", "off by -0.51")]
    got = [(o.status, o.why) for o in (_outcome(tmp_path, g, 6.25, 0.5) for g, _s, _w in cases)]
    assert got == [(s, w) for _g, s, w in cases]


def test_the_default_tolerance_absorbs_the_csvs_rounding_only(tmp_path):
    # 53.59 − 53.57 is 0.020000000000003126 in binary floating point (> 0.02): OK by the 1e-9 slack
    assert _outcome(tmp_path, 53.59, 53.57).status == "OK"
    o = _outcome(tmp_path, 53.60, 53.57)  # 0.03: one unit of the second decimal beyond the tolerance
    assert (o.status, o.why) == ("FAIL", "off by +0.03")


def test_an_expected_nan_is_reproduced_by_nan_only(tmp_path):
    """A number no question counts for is NaN (an empty CSV cell; e.g. cross_corpus Hit@k without a
    label-2 passage); ``expected: .nan`` in the matrix holds only against NaN, and NaN never
    matches a number (NaN − x is NaN, never ≤ the tolerance)."""
    bad = tmp_path / "m.yaml"
    bad.write_text("profiles:\n  smoke:\n    conditions:\n"
                   "    - {id: x, table: reading_em, row: {setting: pipeline}, column: EM, expected: .nan}\n",
                   encoding="utf-8")
    c = chk.load_matrix(bad)["smoke"]["conditions"][0]
    assert math.isnan(c.expected)
    folder = tmp_path / "results"
    assert _outcome(folder, float("nan"), c.expected).status == "OK"
    for o in (_outcome(folder, 0.0, c.expected), _outcome(folder, float("nan"), 0.0)):
        assert (o.status, o.why) == ("FAIL", "off by +nan")


def test_the_record_and_report_carry_the_runs_ledger(tmp_path):
    """The ledger of the run checked (its analysis marks and LLM batches), joined with the findings
    scored: in the printed check, the Markdown report and the JSON record."""
    results, matrix = _setup(tmp_path)
    run = tmp_path / "executions" / RUN_ID
    marks = [{"event": "start", "stage": "04_reading", "at": 10.0},
             {"event": "begin", "stage": "04_reading", "analysis": "04.reading", "at": 12.0},
             {"event": "begin", "stage": "04_reading", "analysis": "04.report", "at": 40.0},
             {"event": "end", "stage": "04_reading", "at": 41.5}]
    (run / "analyses.jsonl").write_text("".join(json.dumps(m) + "\n" for m in marks), encoding="utf-8")
    (run / "llm_costs.jsonl").write_text(json.dumps({
        "stage": "04_reading", "analysis": "04.reading", "model": "m", "model_calls": 3, "seconds": 25.0,
        "prompt_tokens": 300, "prompt_tokens_total": 2000, "generated_tokens": 12}) + "\n", encoding="utf-8")
    lines: list[str] = []
    chk.check("smoke", folder=results, path=matrix, executions=tmp_path / "executions",
              report=tmp_path / "check.md", log=lines.append)
    rows = {r["analysis"]: r for r in json.loads((tmp_path / "check.json").read_text())["ledger"]}
    assert list(rows) == ["04.setup", "04.reading", "04.report"]
    r = rows["04.reading"]
    assert (r["seconds"], r["llm_s"], r["evaluated"], r["reused"], r["generated"]) == (
        28.0, 25.0, 300, 1700, 12)
    # nothing of notebook 04 beyond the EM table was written here: every finding it feeds is unmeasured
    assert {f["finding"] for f in r["feeds"]} >= {"optimal_far_above_pipeline", "rerankers_marginal"}
    assert r["informative"] == 0 and r["s_per_unit"] is None
    assert all(f["verdict"] == "inconclusive" for f in r["feeds"])
    assert "## Ledger" in (tmp_path / "check.md").read_text()
    assert any(x.startswith("[check] the run's ledger") for x in lines)
    assert any(x.strip().startswith("04.reading") and "28.0" in x for x in lines)


def test_verdict_changes_list_the_informative_units_before_and_after():
    now = pd.DataFrame({"verdict": ["holds", "inconclusive", "holds"], "informative": [12, 3, 40]},
                       index=["a", "b", "d"])
    before = [{"id": "a", "verdict": "holds", "informative": 30},
              {"id": "b", "verdict": "holds", "informative": 8},
              {"id": "c", "verdict": "contradicted", "informative": 11}]
    assert chk.verdict_changes(before, now) == [
        {"id": "b", "before": "holds", "after": "inconclusive", "informative_before": 8,
         "informative_after": 3},
        {"id": "c", "before": "contradicted", "after": "absent", "informative_before": 11,
         "informative_after": None},
        {"id": "d", "before": "absent", "after": "holds", "informative_before": None,
         "informative_after": 40},
    ]


# ----------------------------------------------------------------------------- where the values came from


def _name_sources(matrix, sources):
    """Give the hand-made matrix of :func:`_setup` the ``recorded_from`` list ``sources``."""
    m = yaml.safe_load(matrix.read_text(encoding="utf-8"))
    m["profiles"]["smoke"]["recorded_from"] = sources
    matrix.write_text(yaml.safe_dump(m, sort_keys=False), encoding="utf-8")


def test_each_condition_gets_the_source_that_names_it_or_the_rest():
    sources = [{"run": "r1", "commit": "c1"}, {"run": "r2", "commit": "c2", "conditions": ["b"]}]
    assert [s["run"] for s in chk.condition_sources(sources, ["a", "b", "c"])] == ["r1", "r2", "r1"]
    assert chk.condition_sources([sources[1]], ["a", "b"]) == [None, sources[1]]  # no rest: a is unnamed
    assert chk.condition_sources([], ["a"]) == [None]


@pytest.mark.parametrize(("sources", "message"), [
    ([{"run": "r1"}, {"run": "r2"}], "only one entry may omit 'conditions'"),
    ([{"run": "r1", "conditions": ["nope"]}], "no condition 'nope' in the profile"),
    ([{"run": "r1", "conditions": ["a"]}, {"run": "r2", "conditions": ["a"]}], "'a' is named by two runs"),
    ([{"commit": "c1"}], "each entry needs a 'run'"),
    ({"run": "r1"}, "recorded_from must be a list"),
])
def test_a_malformed_recorded_from_is_refused(sources, message):
    with pytest.raises(DataFormatError, match=message):
        chk.condition_sources(sources, ["a", "b"])


def test_an_update_keeps_the_sources_of_the_values_it_did_not_rewrite():
    old = [{"run": "r0", "commit": "c0"}, {"run": "r1", "commit": "c1", "conditions": ["b", "c"]}]
    new = {"run": "r2", "commit": "c2"}
    # r2 rewrote b: r1 keeps c, r0 the rest (a), r2 names b
    assert chk.recorded_from(old, ["a", "b", "c"], {"b": new}) == [
        {"run": "r0", "commit": "c0"}, {"run": "r1", "commit": "c1", "conditions": ["c"]},
        {"run": "r2", "commit": "c2", "conditions": ["b"]}]
    # r2 rewrote every value: one entry, every condition its own
    assert chk.recorded_from(old, ["a", "b", "c"], dict.fromkeys("abc", new)) == [new]
    # two runs rewrote every value (a profile run a notebook at a time): each names its conditions
    other = {"run": "r3", "commit": "c3"}
    assert chk.recorded_from(old, ["a", "b", "c"], {"a": new, "b": other, "c": new}) == [
        {**new, "conditions": ["a", "c"]}, {**other, "conditions": ["b"]}]


def test_update_names_the_run_it_read_the_values_from(tmp_path):
    """``--update`` writes the run each value was read from (its id, the commit its manifest names,
    this machine) into the profile's ``recorded_from``; a condition it could not read keeps the
    source it had."""
    results, matrix = _setup(tmp_path, expected=1.0)
    manifest = tmp_path / "executions" / RUN_ID / "manifest.json"
    m = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**m, "git": {"commit": "abc1234" + "0" * 33, "dirty": False}}))
    m = yaml.safe_load(matrix.read_text())
    m["profiles"]["smoke"]["conditions"].append({"id": "absent table", "table": "damaging_intervals",
                                                 "row": {"system": "bm25"}, "column": "EM@N",
                                                 "expected": 1.0})
    matrix.write_text(yaml.safe_dump(m))
    _name_sources(matrix, [{"run": "20261101-000000-smoke", "commit": "old"}])
    chk.update("smoke", path=matrix, folder=results, executions=tmp_path / "executions")
    spec = yaml.safe_load(matrix.read_text())["profiles"]["smoke"]
    assert list(spec) == ["split", "recorded_from", "conditions"]
    old, new = spec["recorded_from"]
    assert old == {"run": "20261101-000000-smoke", "commit": "old"}  # still gives "absent table"
    assert (new["run"], new["commit"], new["conditions"]) == (RUN_ID, "abc1234" + "0" * 33,
                                                              ["bm25 k=3 EM", "Optimal"])
    assert new["machine"]["cpus"] and "dirty" not in new
    sources = {c.id: c.recorded_from["run"] for c in chk.load_matrix(matrix)["smoke"]["conditions"]}
    assert sources == {"bm25 k=3 EM": RUN_ID, "Optimal": RUN_ID, "absent table": "20261101-000000-smoke"}


def test_check_says_which_values_were_recorded_from_the_run_it_checks(tmp_path):
    """Recorded from the run checked, OK is true by construction; the check says so, and its
    record carries each condition's source."""
    results, matrix = _setup(tmp_path)
    _name_sources(matrix, [{"run": RUN_ID, "commit": "abc"},
                           {"run": "20261101-000000-smoke", "commit": "old", "dirty": True,
                            "conditions": ["Optimal"]}])
    lines: list[str] = []
    assert _check(tmp_path, results, matrix, lines, report=tmp_path / "check.md") == 0
    assert ("[check] expected values recorded from the run checked: 1 (OK by construction); from another "
            "run: 1; from a run the matrix does not name: 0") in lines
    conds = json.loads((tmp_path / "check.json").read_text())["conditions"]
    assert [c["recorded_from"] for c in conds] == [
        {"run_id": RUN_ID, "commit": "abc", "dirty": False, "machine": None},
        {"run_id": "20261101-000000-smoke", "commit": "old", "dirty": True, "machine": None}]
    _name_sources(matrix, [])
    lines = []
    _check(tmp_path, results, matrix, lines)
    assert any(x.endswith("from another run: 0; from a run the matrix does not name: 2") for x in lines)


def test_the_packaged_matrix_names_its_sources():
    """default and triviahg name the run each expected value was recorded from (default's four
    recorded on a second clone name none: its run id is not in the matrix)."""
    matrix = chk.load_matrix()
    unnamed = {p: [c.id for c in matrix[p]["conditions"] if (c.recorded_from or {}).get("run") is None]
               for p in ("default", "triviahg")}
    assert unnamed == {"default": ["bm25s nDCG@10", "hybrid nDCG@10", "rrf nDCG@10",
                                   "decomposition + CoT reader EM"], "triviahg": []}


# ------------------------------------------------------------------------- the report, the ledger, --against

def _toy_answers(results) -> None:
    """04 answers of the smoke dataset in which two findings are tested (see tests/test_findings.py):
    pipeline_below_oracle p = 2/1024, union_freq_beats_norm p = 26/4096."""
    rows = []
    for i in range(40):
        q = f"q{i:02d}"
        oracle, freq = i < 10, (i < 9 or 10 <= i <= 20)
        rows += [{"qid": q, "answer": "x", "em": oracle, "judged": oracle, "setting": "oracle",
                  "system": "oracle+pointwise", "k": 3, "union": "norm", "reader": "smollm2-135m"},
                 {"qid": q, "answer": "x", "em": False, "judged": False, "setting": "pipeline",
                  "system": "e5-small", "k": 3, "union": "norm", "reader": "smollm2-135m"},
                 {"qid": q, "answer": "x", "em": freq, "judged": freq, "setting": "oracle",
                  "system": "oracle+pointwise", "k": 3, "union": "freq", "reader": "smollm2-135m"}]
    name = "04_embedded-smoke_test_answers.csv"
    pd.DataFrame(rows).to_csv(results / name, index=False)
    record_table(results, name)


def test_the_report_prints_holms_p_as_p_holm(tmp_path):
    """The report's *p (Holm)* column is Holm's, not the raw p (pipeline_below_oracle: raw 0.0020,
    Holm over the two tested findings 0.0039)."""
    results, matrix = _setup(tmp_path)
    _toy_answers(results)
    chk.check("smoke", folder=results, path=matrix, executions=tmp_path / "executions",
              report=tmp_path / "check.md", log=lambda *_: None)
    report = (tmp_path / "check.md").read_text().splitlines()
    line = next(x for x in report if x.startswith("| F3. Retriever-only"))
    cells = [c.strip() for c in line.strip("|").split(" | ")]
    assert cells[7:9] == ["0.0020", "0.0039"] and cells[-2] == "**holds**"
    rec = json.loads((tmp_path / "check.json").read_text())
    row = next(f for f in rec["findings"] if f["id"] == "pipeline_below_oracle")
    assert (row["p"], row["p_holm"], row["discordant"], row["unadjusted"]) == (0.002, 0.0039, 10, "holds")
    assert rec["decidability"]
    assert {d["id"] for d in rec["decidability"]} == {f["id"] for f in rec["findings"]}


def test_check_against_an_earlier_record_lists_the_changes(tmp_path):
    results, matrix = _setup(tmp_path)
    _toy_answers(results)
    earlier = tmp_path / "earlier.json"
    earlier.write_text(json.dumps({"git": {"commit": "abc1234def"}, "date": "2026-11-01T00:00:00+00:00",
                                   "findings": [{"id": "pipeline_below_oracle", "verdict": "contradicted",
                                                 "informative": 3}]}), encoding="utf-8")
    lines: list[str] = []
    chk.check("smoke", folder=results, path=matrix, executions=tmp_path / "executions", against=earlier,
              log=lines.append)
    head = next(x for x in lines if x.startswith("[check] verdicts against"))
    assert "(abc1234, 2026-11-01)" in head
    change = next(x for x in lines if x.strip().startswith("pipeline_below_oracle") and "→" in x)
    assert "contradicted (3) → holds (10)" in change


def test_a_notebook_rerun_in_a_newer_run_is_counted_once_in_the_ledger(tmp_path):
    """Notebook 04 finished in an older and in a newer run: the ledger takes its analyses from the
    newer run only (the run whose time the check reports), not from both."""
    marks = [{"event": "start", "stage": "04_reading", "at": 0.0},
             {"event": "begin", "stage": "04_reading", "analysis": "04.reading", "at": 1.0},
             {"event": "end", "stage": "04_reading", "at": 11.0}]
    for run_id in ("20261123-120000-smoke", "20261124-120000-smoke"):
        executions = record_run(tmp_path, run_id=run_id)
        (executions / run_id / "analyses.jsonl").write_text("".join(json.dumps(m) + "\n" for m in marks))
    verdicts = pd.DataFrame({"verdict": ["holds"], "informative": [12]}, index=["rerankers_marginal"])
    rows = chk.run_ledger("smoke", verdicts, tmp_path / "executions")
    assert [r["analysis"] for r in rows] == ["04.setup", "04.reading"]
    assert rows[1]["seconds"] == 10.0


def test_a_failed_newest_run_is_noted(tmp_path):
    record_run(tmp_path, run_id="20261123-120000-smoke", notebooks=("02_retrieval", "04_reading"))
    executions = record_run(tmp_path, run_id="20261124-120000-smoke",
                            notebooks=("02_retrieval", "04_reading"), status="failed in 04_reading.ipynb")
    note = chk.newest_run_note("smoke", executions)
    assert note is not None and note.startswith("[check] newest run 20261124-120000-smoke")
    assert "04_reading" in note and "count only from a run that finished them" in note
    assert chk.newest_run_note("smoke", record_run(tmp_path / "ok")) is None


def test_the_decidability_rows_by_hand(tmp_path):
    """damaging_passages on the default profile (it reads 48 test questions in notebook 06): its
    analysis took 96 s of which 90 s in the 1.5B (9,000 tokens evaluated, 300 generated), at rates
    of 90 / 30 tok/s here: 2 s per question here. Needing 40 questions, the default (48) reaches them:
    48 · 2 = 96 s here; on the slow reference host (its 1.5B rates from reference_costs.json) the LLM
    share scales by (9000/37.9 + 300/10.2) / (9000/90 + 300/30). Needing 1,000 questions: no
    shipped profile or data reads that many."""
    from inferqa_utils.verdicts import decidability as dec

    verdicts = pd.DataFrame({"verdict": ["inconclusive", "inconclusive", "by construction", "holds"],
                             "informative": [8, 8, 20, 31], "n": [11, 11, 48, 48],
                             "units needed": [30, 900, None, 50], "questions needed": [40, 1000, None, 77],
                             "needed how": ["h", "h", "", "h"]},
                            index=["damaging_passages", "probe3_recovers", "optimal_far_above_pipeline",
                                   "dense_beats_bm25"])
    ledger_rows = [{"analysis": "06.incremental.supporting", "seconds": 96.0, "llm_s": 90.0,
                    "evaluated": 9000, "generated": 300,
                    "feeds": [{"finding": "damaging_passages"}, {"finding": "probe3_recovers"}]}]
    host = {"qwen2.5-coder-1.5b": {"prefill_tok_s": 90.0, "decode_tok_s": 30.0}}
    rows = {r["id"]: r for r in dec.decidability_rows("default", verdicts, ledger_rows, host)}
    d = rows["damaging_passages"]
    assert (d["rests_on"], d["questions_needed"]) == (8, 40)
    assert (d["reached_by"], d["projected_s"]) == ("profile default", 96.0)
    slow = dec.reference_rates()["qwen2.5-coder-1.5b"]
    factor = (9000 / slow["prefill_tok_s"] + 300 / slow["decode_tok_s"]) / (9000 / 90 + 300 / 30)
    assert d["projected_slow_s"] == pytest.approx(round(48 * (90 * factor + 6) / 48, 1), abs=0.1)
    far = rows["probe3_recovers"]
    assert far["reached_by"] is None
    assert far["note"].startswith("no shipped profile or data reads 1,000 questions")
    assert rows["optimal_far_above_pipeline"]["note"].startswith("by construction")
    assert rows["dense_beats_bm25"]["note"] == "decided on this run (holds)"
    assert rows["dense_beats_bm25"]["questions_needed"] == 77
    assert "profile default" in "\n".join(dec.decidability_text(list(rows.values())))
    assert d["lower_bound"] is False and "≥" not in "\n".join(dec.decidability_text([d]))


def test_a_projection_from_reused_outputs_is_a_lower_bound():
    """An analysis whose model outputs came from a cache or a release (no model call, or cache hits)
    says nothing of what new questions cost: its projection is shown as a lower bound."""
    from inferqa_utils.verdicts import decidability as dec

    assert dec.reused_outputs([{"evaluated": 0, "generated": 0, "reused": 0, "seconds": 6.8}])
    assert dec.reused_outputs([{"evaluated": 900, "generated": 30, "reused": 12}])
    assert not dec.reused_outputs([{"evaluated": 900, "generated": 30, "reused": 0}])
    verdicts = pd.DataFrame({"verdict": ["inconclusive"], "informative": [5], "n": [30],
                             "units needed": [10], "questions needed": [40], "needed how": ["h"]},
                            index=["containing_beats_supporting"])
    ledger_rows = [{"analysis": "02.fair_control", "seconds": 6.8, "llm_s": 0.0, "evaluated": 0,
                    "generated": 0, "reused": 0, "feeds": [{"finding": "containing_beats_supporting"}]}]
    (row,) = dec.decidability_rows("default", verdicts, ledger_rows, None)
    assert row["lower_bound"] is True and row["reached_by"] == "profile default"
    assert "≥ " in dec.decidability_text([row])[1] and "≥ " in "\n".join(dec.decidability_markdown([row]))


def test_the_check_says_how_a_run_got_its_model_outputs():
    """Computed and replayed calls from the run manifest's LLM counters; a warm start is named as a
    replay of the file it installed, never as a recomputation."""
    costs = {"00_quickstart": {"m": {"model_calls": 3, "cache_hits": 24}},
             "04_reading": {"m": {"model_calls": 0, "cache_hits": 370},
                            "n": {"model_calls": 2, "cache_hits": 0}}}
    cold = {"llm_costs": costs}
    assert chk.model_outputs(cold) == {"computed": 5, "replayed": 394, "warm": None}
    assert chk.model_outputs_line(cold) == (
        "[check] model outputs: 5 computed on the run's host, 394 replayed from the LLM cache")
    warm = {**cold, "warm": {"file": "reference_outputs.jsonl.gz", "entries": 3205, "added": 3205,
                             "present": 0}}
    line = chk.model_outputs_line(warm)
    assert "a warm start: 3,205 of 3,205 outputs of reference_outputs.jsonl.gz installed" in line
    assert "they do not recompute them" in line
    # a manifest from before the counters: unknown, not zero
    assert chk.model_outputs({}) == {"computed": None, "replayed": None, "warm": None}
    assert chk.model_outputs_line({}) == "[check] model outputs: not counted in this run's manifest"
