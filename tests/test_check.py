"""The reproduction matrix and `python -m inferqa_utils check` (inferqa_utils.check)."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from inferqa_utils import check as chk
from inferqa_utils.errors import DataFormatError


def _setup(tmp_path, expected=6.25, tolerance=0.02):
    results = tmp_path / "results"
    results.mkdir()
    pd.DataFrame({"setting": ["pipeline", "pipeline", "Optimal"], "system": ["bm25", "bm25", "x"],
                  "k": [3.0, 1.0, None], "EM": [6.25, 4.17, 52.08]}).to_csv(
        results / "04_embedded-smoke_test_em.csv", index=False)
    matrix = tmp_path / "m.yaml"
    matrix.write_text(yaml.safe_dump({"profiles": {"smoke": {"split": "test", "conditions": [
        {"id": "bm25 k=3 EM", "notebook": "04", "table": "04_{dataset}_{split}_em.csv",
         "row": {"setting": "pipeline", "system": "bm25", "k": 3}, "column": "EM", "expected": expected,
         "tolerance": tolerance},
        {"id": "Optimal", "notebook": "04", "table": "04_{dataset}_{split}_em.csv", "row": {"setting": "Optimal"},
         "column": "EM", "expected": 52.08},
    ]}}}), encoding="utf-8")
    return results, matrix


def test_ok_when_within_tolerance_and_fail_beyond(tmp_path):
    results, matrix = _setup(tmp_path)
    lines: list[str] = []
    assert chk.check("smoke", folder=results, path=matrix, findings_table=False, log=lines.append) == 0
    assert sum(line.startswith("OK") for line in lines) == 2
    (tmp_path / "b").mkdir()
    results2, matrix2 = _setup(tmp_path / "b", expected=8.33)  # one question of 48 off
    lines = []
    assert chk.check("smoke", folder=results2, path=matrix2, findings_table=False, log=lines.append) == 1
    fail = next(line for line in lines if line.startswith("FAIL"))
    assert "bm25 k=3 EM" in fail and "off by -2.08" in fail


def test_missing_table_row_or_expected_value_fails(tmp_path):
    results, matrix = _setup(tmp_path)
    m = yaml.safe_load(matrix.read_text())
    conds = m["profiles"]["smoke"]["conditions"]
    conds.append({"id": "absent table", "notebook": "06", "table": "06_{dataset}_{split}_intervals.csv",
                  "row": {"system": "bm25"}, "column": "EM@N", "expected": 1.0})
    conds.append({"id": "two rows", "notebook": "04", "table": "04_{dataset}_{split}_em.csv",
                  "row": {"system": "bm25"}, "column": "EM", "expected": 1.0})
    conds.append({"id": "unrecorded", "notebook": "04", "table": "04_{dataset}_{split}_em.csv",
                  "row": {"setting": "Optimal"}, "column": "EM", "expected": None})
    matrix.write_text(yaml.safe_dump(m))
    lines: list[str] = []
    assert chk.check("smoke", folder=results, path=matrix, findings_table=False, log=lines.append) == 3
    text = "\n".join(lines)
    assert "06_embedded-smoke_test_intervals.csv not found (run notebook 06)" in text
    assert "2 rows of 04_embedded-smoke_test_em.csv match" in text and "no expected value recorded" in text


def test_update_rewrites_expected_values_only(tmp_path):
    results, matrix = _setup(tmp_path, expected=1.0)
    outcomes = chk.update("smoke", path=matrix, folder=results)
    assert [o.got for o in outcomes] == [6.25, 52.08]
    text = matrix.read_text()
    assert text.startswith("# Reproduction matrix") and "expected: 6.25" in text
    assert chk.check("smoke", folder=results, path=matrix, findings_table=False, log=lambda *_: None) == 0


def test_matrix_errors_name_the_condition(tmp_path):
    bad = tmp_path / "m.yaml"
    bad.write_text("profiles:\n  smoke:\n    conditions:\n    - {id: x, notebook: '04', table: t.csv, row: {}}\n")
    with pytest.raises(DataFormatError, match="missing 'column'"):
        chk.load_matrix(bad)


def test_packaged_matrix_covers_every_notebook_of_smoke_and_default():
    from inferqa_utils.runner import discover_notebooks

    matrix = chk.load_matrix()
    numbers = {p.name[:2] for p in discover_notebooks()}
    for profile in ("smoke", "default"):
        conds = matrix[profile]["conditions"]
        assert {c.notebook for c in conds} == numbers, profile
        assert all(c.expected is not None for c in conds), f"{profile}: run check --update on a real run"


def test_cli_list_and_unknown_profile(capsys):
    from inferqa_utils.__main__ import main

    assert main(["check", "--list", "--profile", "smoke"]) == 0
    assert "quickstart top-1 BM25 EM" in capsys.readouterr().out
    assert main(["check", "--list", "--profile", "nope"]) == 2


def test_profile_without_conditions_scores_the_findings_only(tmp_path):
    lines: list[str] = []
    fails = chk.check("wikihint", folder=tmp_path, path=chk.MATRIX, log=lines.append)
    assert fails == 0
    assert any("no expected numbers recorded for profile 'wikihint'" in x for x in lines)
    assert any(x.startswith("[check] findings on this run") for x in lines)
    with pytest.raises(KeyError):
        chk.check("no-such-profile", folder=tmp_path, log=lines.append)
