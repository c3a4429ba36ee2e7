"""The measured numbers of the pages come from the records under docs/records
(:mod:`inferqa_utils.present.docs_blocks`, ``make docs``): every generated block of the committed
pages is what its record renders, no record is older than the code it says it describes, the
results page is what the shipped check records give, and the pages name records, not commits (at
most eight distinct commits in README.md and docs/*.md together). The generator itself is checked
on a copy."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from inferqa_utils.__main__ import docs_results_page
from inferqa_utils.present import docs_blocks as db

ROOT = Path(__file__).resolve().parents[1]


def test_every_generated_block_matches_its_record():
    found = db.differences(ROOT)
    assert not found, ("generated blocks differ from their records (run `make docs`, or re-measure "
                       "and write the record with the benchmark's --record):\n" + "\n".join(
                           f"{d}\n  committed: {d.committed[:300]!r}\n  record:    {d.rendered[:300]!r}"
                           for d in found))


def test_the_pages_quote_records_and_name_them_once():
    for page in ("docs/benchmarks.md", "docs/reproducibility.md", "docs/profiles.md"):
        text = (ROOT / page).read_text(encoding="utf-8")
        assert text.count("<!-- records -->") == 1, page
        assert db.BLOCK.search(text), page
    for path in db.record_paths(ROOT):
        db.load_record(path, ROOT)  # every record reads, its `from` files included


def test_no_record_is_older_than_the_code_it_describes():
    checked = db.stale(ROOT)
    if checked and all(s.status == "unknown" for s in checked):
        pytest.skip("cannot check records against the history: " + checked[0].message)
    stale = [s.message for s in checked if s.status == "stale"]
    assert not stale, "records older than the code they describe:\n" + "\n".join(stale)


def test_no_prose_names_a_commit():
    found = db.prose_commits(ROOT)
    if found is None:
        pytest.skip("git cannot tell which hexadecimal words are commits here (no git, or not a clone)")
    assert not found, ("a measurement's commit belongs in its record (a generated block and the page's "
                       "table of records), not in the prose:\n" + "\n".join(found))


def test_the_pages_name_at_most_eight_commits():
    found = db.page_commits(ROOT)
    if found is None:
        pytest.skip("git cannot tell which hexadecimal words are commits here (no git, or not a clone)")
    assert len(found) <= db.MAX_PAGE_COMMITS, (
        f"README.md and docs/*.md name {len(found)} distinct commits (at most {db.MAX_PAGE_COMMITS}): a page "
        "names the record it quotes, and the record holds the commit:\n  " + " ".join(found))


def test_results_page_matches_the_shipped_check_records():
    if not list((ROOT / db.RECORDS).rglob("check_*.json")):
        pytest.skip("no check record under docs/records: docs/results.md is written by `make results-page`")
    assert docs_results_page(ROOT, write=False) is None


# ----------------------------------------------------------------------------- the generator


def _record(**over) -> dict:
    rec = {
        "what": "a benchmark", "commit": "0" * 40, "date": "2026-11-28",
        "machine": {"cpus": 2, "cpu_model": "AMD EPYC", "ram_gb": 23.5,
                    "llm_rates": {"m": {"prefill_tok_s": 37.9, "decode_tok_s": 10.2}}, "load": "quiet"},
        "values": {"x": 1234.5, "d": -2.0, "none": None, "rows": [{"a": 1, "b": 0.5}, {"a": 2, "b": None}],
                   "lines": ["one", "two"]},
        "views": {"text": {"text": ["x = {x:,.1f}, d = {d:+.2f},", "none = {none}"]},
                  "table": {"table": {"rows": "rows", "columns": [["a", "{a}"], ["b", "{b:.2f}"]]}},
                  "code": {"code": "lines"}},
    }
    rec.update(over)
    return rec


PAGE = """# A page

<!-- records -->
<!-- /records -->

Prose.

<!-- record: bench/a.json -->
<!-- /record -->

<!-- record: bench/a.json table -->
<!-- /record -->

<!-- record: bench/a.json code -->
<!-- /record -->
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "docs" / "records" / "bench").mkdir(parents=True)
    (tmp_path / "docs" / "records" / "bench" / "a.json").write_text(json.dumps(_record()), encoding="utf-8")
    (tmp_path / "docs" / "page.md").write_text(PAGE, encoding="utf-8")
    db.update(tmp_path, log=lambda _line: None)
    return tmp_path


def test_render_views_and_the_table_of_records(root: Path):
    text = (root / "docs" / "page.md").read_text(encoding="utf-8")
    assert "x = 1,234.5, d = −2.00,\nnone = —" in text
    assert "| a | b |\n|---|---|\n| 1 | 0.50 |\n| 2 | — |" in text
    assert "```\none\ntwo\n```" in text
    assert ("measured on hosts of one kind (2 cores AMD EPYC, 23.5 GB RAM), which differ in their LLM "
            "rates. Each record holds the commit it measured; the page names the record.*") in text
    assert ("| [`docs/records/bench/a.json`](records/bench/a.json) | a benchmark | 2026-11-28 | LLM "
            "prefill / decode tok/s: m 37.9 / 10.2; quiet |") in text
    assert "0000000" not in text  # the commit stays in the record
    assert db.differences(root) == []


def test_a_record_edited_by_hand_fails_until_make_docs(root: Path):
    path = root / "docs" / "records" / "bench" / "a.json"
    rec = json.loads(path.read_text(encoding="utf-8"))
    rec["values"]["x"] = 99.0
    path.write_text(json.dumps(rec), encoding="utf-8")
    found = db.differences(root)
    assert [(d.page, d.block, d.record, d.view) for d in found] == [
        ("docs/page.md", "1", "bench/a.json", "text")]
    assert "x = 99.0" in found[0].rendered and "x = 1,234.5" in found[0].committed
    db.update(root, log=lambda _line: None)
    assert db.differences(root) == []


def test_a_generated_block_edited_by_hand_fails_until_make_docs(root: Path):
    page = root / "docs" / "page.md"
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("| 1 | 0.50 |", "| 1 | 0.60 |"), encoding="utf-8")
    assert [str(d) for d in db.differences(root)] == [
        "docs/page.md: block 2 (record bench/a.json, view table) differs from its record"]
    dated = page.read_text(encoding="utf-8").replace("| 2026-11-28 |", "| 2026-11-29 |")
    page.write_text(dated, encoding="utf-8")
    assert [d.block for d in db.differences(root)] == ["table of records", "2"]
    assert str(db.differences(root)[0]) == (
        "docs/page.md: the table of records differs from the records the page quotes")
    db.update(root, log=lambda _line: None)
    assert db.differences(root) == []


def test_a_missing_value_or_view_names_the_record(root: Path):
    page = root / "docs" / "page.md"
    extra = "\n<!-- record: bench/a.json nosuch -->\n<!-- /record -->\n"
    page.write_text(page.read_text(encoding="utf-8") + extra, encoding="utf-8")
    with pytest.raises(db.RecordError, match=r"docs/page.md: record bench/a.json: no view 'nosuch'"):
        db.update(root, log=lambda _line: None)
    rec = _record(views={"text": {"text": "{missing}"}})
    with pytest.raises(db.RecordError, match=r"view text: cannot fill"):
        db.render_view(rec, "text")


def test_values_from_another_file_and_its_record_listed(root: Path):
    (root / "data.json").write_text(json.dumps({"build": {"counts": {"test": 210}}}), encoding="utf-8")
    inner = _record(what="an inner record", commit="1" * 40)
    (root / "docs" / "records" / "bench" / "inner.json").write_text(json.dumps(inner), encoding="utf-8")
    outer = _record(what="an outer record", values={"test": 1},
                    views={"text": {"text": "{test} and {x:,.1f}"}},
                    **{"from": [{"file": "data.json", "values": {"test": ["build", "counts", "test"]}},
                                {"file": "docs/records/bench/inner.json", "values": {"x": ["values", "x"]}}]})
    (root / "docs" / "records" / "bench" / "outer.json").write_text(json.dumps(outer), encoding="utf-8")
    (root / "docs" / "p2.md").write_text(
        "<!-- records -->\n<!-- /records -->\n\n<!-- record: bench/outer.json -->\n<!-- /record -->\n",
        encoding="utf-8")
    db.update(root, log=lambda _line: None)
    text = (root / "docs" / "p2.md").read_text(encoding="utf-8")
    assert "\n210 and 1,234.5\n" in text  # the 'from' file's value overrides the record's own
    assert "| [`docs/records/bench/outer.json`](records/bench/outer.json) | an outer record |" in text
    # the record it reads from
    assert "| [`docs/records/bench/inner.json`](records/bench/inner.json) | an inner record |" in text
    # a check record read so is the results page's, not a record of the table
    (root / "docs" / "records" / "checks").mkdir()
    (root / "docs" / "records" / "checks" / "check_x.json").write_text(json.dumps({"run": {"total_s": 9.5}}),
                                                                       encoding="utf-8")
    outer["from"][0] = {"file": "docs/records/checks/check_x.json", "values": {"test": ["run", "total_s"]}}
    (root / "docs" / "records" / "bench" / "outer.json").write_text(json.dumps(outer), encoding="utf-8")
    db.update(root, log=lambda _line: None)
    text = (root / "docs" / "p2.md").read_text(encoding="utf-8")
    assert "\n9.5 and 1,234.5\n" in text and "check_x" not in text


def test_sums_items_by_id_minutes_and_the_records_own_fields(root: Path):
    (root / "check.json").write_text(json.dumps({"findings": [{"id": "f1", "n": 3}, {"id": "f2", "n": 4}]}),
                                     encoding="utf-8")
    rec = _record(what="sums", values={"a": 77.7, "b": 244.2, "c": 2},
                  sum={"total": ["a", "b", "c"]},
                  views={"text": {"text": "{total:,.1f} s ({total:min} min); f2 on {f2_n}; {record}; "
                                          "{machine[llm_rates][m][prefill_tok_s]} on {date}"}},
                  **{"from": {"file": "check.json", "values": {"f2_n": ["findings", "id=f2", "n"]}}})
    (root / "docs" / "records" / "bench" / "s.json").write_text(json.dumps(rec), encoding="utf-8")
    loaded = db.load_record("bench/s.json", root)
    assert loaded["values"]["total"] == 323.9 and loaded["values"]["f2_n"] == 4
    assert db.render_view(loaded, "text", name="bench/s.json") == (
        "323.9 s (5 min); f2 on 4; docs/records/bench/s.json; 37.9 on 2026-11-28")
    rec["from"]["values"]["f2_n"] = ["findings", "id=f9", "n"]  # no such item: the record is named
    (root / "docs" / "records" / "bench" / "s.json").write_text(json.dumps(rec), encoding="utf-8")
    with pytest.raises(db.RecordError, match=r"s.json: check.json has no"):
        db.load_record("bench/s.json", root)


def test_write_record_keeps_views_and_describes(root: Path):
    path = root / "docs" / "records" / "bench" / "a.json"
    old = json.loads(path.read_text(encoding="utf-8"))
    old.update(describes=["benchmarks/x.py"], still_valid_after="2" * 40)
    path.write_text(json.dumps(old), encoding="utf-8")
    db.write_record(path, {"x": 1.0, "d": 1.0, "none": 3, "rows": [], "lines": []}, what="ignored",
                    commit="3" * 40, date="2026-12-01", machine={"cpus": 4})
    new = json.loads(path.read_text(encoding="utf-8"))
    assert new["views"] == old["views"] and new["what"] == "a benchmark"
    assert new["describes"] == ["benchmarks/x.py"] and "still_valid_after" not in new
    assert (new["commit"], new["date"], new["machine"]) == ("3" * 40, "2026-12-01", {"cpus": 4})
    assert new["values"]["x"] == 1.0


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout.strip()


def test_stale_when_the_described_code_changed_after_the_record(root: Path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    _git(root, "init", "-q")
    (root / "bench.py").write_text("x = 1\n", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "first")
    first = _git(root, "rev-parse", "HEAD")
    path = root / "docs" / "records" / "bench" / "a.json"
    path.write_text(json.dumps(_record(commit=first, describes=["bench.py"])), encoding="utf-8")
    assert [s.status for s in db.stale(root)] == ["valid"]
    (root / "bench.py").write_text("x = 2\n", encoding="utf-8")
    _git(root, "commit", "-qam", "the benchmark changes")
    second = _git(root, "rev-parse", "HEAD")
    (found,) = db.stale(root)
    assert found.status == "stale"
    assert "the benchmark changes" in found.message and "bench/a.json" in found.message
    path.write_text(json.dumps(_record(commit=first, describes=["bench.py"], still_valid_after=second)),
                    encoding="utf-8")
    assert [s.status for s in db.stale(root)] == ["valid"]
    path.write_text(json.dumps(_record(commit="4" * 40, describes=["bench.py"])), encoding="utf-8")
    assert [s.status for s in db.stale(root)] == ["unknown"]  # a commit this clone does not have


def test_results_page_from_shipped_check_records(tmp_path: Path):
    from test_results_page import _finding, _write
    from test_results_page import _record as check_record

    assert docs_results_page(tmp_path, write=True) is None  # no check record: nothing written
    assert not (tmp_path / "docs" / "results.md").exists()
    _write(tmp_path / "docs" / "records" / "checks", check_record("default", [
        _finding("optimal_far_above_pipeline", "holds", "52.08 [37.50, 66.67]")]))
    (tmp_path / "docs").mkdir(exist_ok=True)
    assert "differs" in docs_results_page(tmp_path, write=False)
    docs_results_page(tmp_path, write=True)
    page = (tmp_path / "docs" / "results.md").read_text(encoding="utf-8")
    assert ("*Generated by `python -m inferqa_utils docs` on 2026-11-23 14:00 UTC from the check records "
            "under `docs/records/checks`") in page and "`make docs` regenerates this page" in page
    assert docs_results_page(tmp_path, write=False) is None  # dated by the record: the same page again


def test_a_record_names_its_command_without_this_machines_paths():
    from inferqa_utils.record.benchmark_record import measured_command

    argv = ["benchmarks/quit_scale.py", "--out", "/tmp/quit_scale", "--overwrite", "--questions", "100",
            "--record", "docs/records/benchmarks/quit_scale.json"]
    assert measured_command(argv) == ".venv/bin/python benchmarks/quit_scale.py --overwrite --questions 100"
    assert measured_command(["benchmarks/x.py", "--record=r.json", "--cache=/root/c", "--k", "3"]) == (
        ".venv/bin/python benchmarks/x.py --k 3")


def test_prose_commits_skip_blocks_tables_code_and_foreign_hashes(root: Path):
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    first = _git(root, "rev-parse", "HEAD").strip()
    page = root / "docs" / "page.md"
    page.write_text(db.render_page(page.read_text(encoding="utf-8"), "docs/page.md", root)
                    + f"\nllama.cpp at `0c1e570`, sha `deadbeefcafe`, and in a fence:\n"
                    f"```\n{first[:7]}\n```\n", encoding="utf-8")
    assert db.prose_commits(root) == []  # the table of records names it; the rest are no commits here
    text = page.read_text(encoding="utf-8") + f"Measured at commit `{first[:9]}`.\n"
    page.write_text(text, encoding="utf-8")
    (root / "README.md").write_text(f"see {first}\n", encoding="utf-8")
    last = len(text.splitlines())
    assert db.prose_commits(root) == [f"README.md:1: {first}", f"docs/page.md:{last}: {first[:9]}"]


def test_page_commits_counts_every_commit_the_pages_name(root: Path):
    """Nine commits named across two pages — in prose, a table and a fence alike — exceed the limit of
    eight; a hexadecimal word that is no commit here is not counted."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    _git(root, "init", "-q")
    commits = []
    for n in range(9):
        (root / "f.txt").write_text(f"{n}\n", encoding="utf-8")
        _git(root, "add", "-A")
        _git(root, "commit", "-qm", f"c{n}")
        commits.append(_git(root, "rev-parse", "--short=7", "HEAD"))
    readme = f"prose {commits[0]} and {commits[1]}\n| {commits[2]} |\n"
    (root / "README.md").write_text(readme, encoding="utf-8")
    page = root / "docs" / "page.md"
    fence = "```\n" + " ".join(commits[3:]) + " deadbeefcafe\n```\n"
    page.write_text(page.read_text(encoding="utf-8") + fence, encoding="utf-8")
    found = db.page_commits(root)
    assert found == sorted(commits) and len(found) > db.MAX_PAGE_COMMITS
    named = page.read_text(encoding="utf-8").replace(commits[8], "the record's commit")
    page.write_text(named, encoding="utf-8")
    assert len(db.page_commits(root)) == db.MAX_PAGE_COMMITS
