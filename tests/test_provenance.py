"""Which run wrote each results table and figure (inferqa_utils.record.provenance, runner).

Fast: papermill's ``execute_notebook`` is replaced by a stand-in that writes what a notebook
would (tables, a figure) into the test root; no kernel is started.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest

from inferqa_utils.core.config import PATHS
from inferqa_utils.core.errors import DataFormatError
from inferqa_utils.record import provenance as prov
from inferqa_utils.run import runner

#: names no notebook writes: the stand-in's outputs in the session's results/ and figures/
SHARED = "zz_provenance_shared.csv"
FIGURE = "zz_provenance_figure.png"
RUN = {"run_id": "20261124-080321-default", "profile": "default"}


def _folders(tmp_path: Path) -> dict[str, Path]:
    folders = {"results": tmp_path / "results", "figures": tmp_path / "figures"}
    for f in folders.values():
        f.mkdir()
    return folders


def test_changed_files_are_recorded_and_others_kept(tmp_path):
    folders = _folders(tmp_path)
    (folders["results"] / "old.csv").write_text("a\n1\n")
    prov.record([("results", "old.csv")], {**RUN, "notebook": "00.ipynb"}, folders, folders["results"])
    before = prov.snapshot(folders)
    (folders["results"] / "new.csv").write_text("a\n2\n")
    (folders["figures"] / "f.png").write_bytes(b"PNG")
    (folders["results"] / ".hidden.tmp").write_text("x")
    changed = prov.changed_since(before, folders)
    assert changed == [("figures", "f.png"), ("results", "new.csv")]
    second = {"run_id": "20261124-090000-smoke", "profile": "smoke", "notebook": "01.ipynb"}
    prov.record(changed, second, folders, folders["results"])
    data = prov.load(folders["results"])
    assert data["results"]["old.csv"]["run_id"] == RUN["run_id"]  # kept
    assert (
        data["results"]["new.csv"]["run_id"] == second["run_id"]
        and data["figures"]["f.png"]["profile"] == "smoke"
    )
    assert len(data["results"]["new.csv"]["sha256"]) == 64 and data["results"]["new.csv"]["written"]
    (folders["results"] / "old.csv").unlink()
    prov.record([], second, folders, folders["results"])
    assert "old.csv" not in prov.load(folders["results"])["results"]  # a deleted file's record goes


def test_check_table_names_the_table_and_both_runs(tmp_path):
    folders = _folders(tmp_path)
    (folders["results"] / "t.csv").write_text("a\n1\n")
    smoke = {"run_id": "20261124-090000-smoke", "profile": "smoke"}
    prov.record([("results", "t.csv")], smoke, folders, folders["results"])
    rec, why = prov.check_table("t.csv", RUN, folders["results"])
    assert rec["run_id"] == smoke["run_id"]
    assert why == (
        "table t.csv was written by run 20261124-090000-smoke (profile smoke), not by the run checked, "
        "run 20261124-080321-default (profile default)"
    )
    assert prov.check_table("t.csv", smoke, folders["results"])[1] == ""
    assert (
        "but no run checked finished its notebook" in prov.check_table("t.csv", None, folders["results"])[1]
    )
    (folders["results"] / "t.csv").write_text("a\n2\n")  # edited by hand afterwards
    assert (
        "was changed after run 20261124-090000-smoke"
        in prov.check_table("t.csv", smoke, folders["results"])[1]
    )
    (folders["results"] / "u.csv").write_text("a\n1\n")
    assert "table u.csv has no run record" in prov.check_table("u.csv", RUN, folders["results"])[1]
    assert prov.check_table("u.csv", RUN, folders["results"], allow_unrecorded=True) == (None, "")


def test_a_provenance_file_of_another_layout_is_named(tmp_path):
    (tmp_path / prov.PROVENANCE_FILE).write_text(json.dumps({"t.csv": "run"}))
    with pytest.raises(DataFormatError, match=r"provenance\.json"):
        prov.load(tmp_path)


# ----------------------------------------------------------------------------- the runner records


def _notebook(folder: Path, name: str) -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x = 1  # a parameter\ndataset_name = 'toy'  # the run's dataset")
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, folder / name)


def _fake_execute(input_path, output_path, **kw):
    """What the runner sees of a notebook: it writes a shared table (holding the run id it was
    given through the environment, as a kernel would read it), a figure, and its executed copy."""
    PATHS.results.mkdir(parents=True, exist_ok=True)
    PATHS.figures.mkdir(parents=True, exist_ok=True)
    (PATHS.results / SHARED).write_text(f"run\n{os.environ[prov.RUN_ID_ENV]}\n", encoding="utf-8")
    if Path(input_path).name.startswith("01"):
        (PATHS.figures / FIGURE).write_bytes(b"PNG")
    Path(output_path).write_bytes(Path(input_path).read_bytes())


@pytest.fixture
def fake_runs(tmp_path, monkeypatch):
    import papermill

    nbdir = tmp_path / "nb"
    nbdir.mkdir()
    _notebook(nbdir, "00_first.ipynb")
    _notebook(nbdir, "01_second.ipynb")
    monkeypatch.setattr(papermill, "execute_notebook", _fake_execute)
    built = PATHS.datasets / "provenance-test"
    built.mkdir(parents=True, exist_ok=True)
    (built / "manifest.json").write_text(json.dumps({"fingerprint": "fp-123"}), encoding="utf-8")

    def run(profile: str, only: list[str] | None = None) -> dict:
        out = tmp_path / f"20261124-0{len(list(tmp_path.glob('2026*')))}0000-{profile}"
        runner.run_notebooks(profile, only=only, overrides={"dataset_name": "provenance-test"}, out_dir=out,
                             notebooks_dir=nbdir, log=lambda s: None)
        return json.loads((out / "manifest.json").read_text(encoding="utf-8"))

    yield run
    for p in (PATHS.results / SHARED, PATHS.figures / FIGURE, built / "manifest.json"):
        p.unlink(missing_ok=True)
    built.rmdir()


def test_the_runner_records_each_notebooks_outputs_with_the_runs_identity(fake_runs):
    from inferqa_utils.record.manifest import git_commit

    m = fake_runs("smoke")
    run_id = m["run_id"]
    assert run_id.endswith("-smoke") and m["notebooks"]["00_first.ipynb"]["outputs"] == [f"results/{SHARED}"]
    assert m["notebooks"]["01_second.ipynb"]["outputs"] == [f"figures/{FIGURE}", f"results/{SHARED}"]
    assert prov.RUN_ID_ENV not in os.environ  # set for the kernels only while the run lasts
    data = prov.load()
    table, figure = data["results"][SHARED], data["figures"][FIGURE]
    assert (PATHS.results / SHARED).read_text(encoding="utf-8") == f"run\n{run_id}\n"
    assert table["run_id"] == figure["run_id"] == run_id and table["profile"] == "smoke"
    assert table["notebook"] == "01_second.ipynb" and figure["notebook"] == "01_second.ipynb"
    assert table["dataset"] == "provenance-test" and table["dataset_fingerprint"] == "fp-123"
    assert table["git"]["commit"] == git_commit()["commit"] is not None


def test_a_table_every_profile_writes_names_the_profile_that_wrote_it_last(fake_runs):
    first = fake_runs("smoke")
    second = fake_runs("default", only=["00"])
    table = prov.load()["results"][SHARED]
    assert table["run_id"] == second["run_id"] != first["run_id"] and table["profile"] == "default"
    assert prov.load()["figures"][FIGURE]["run_id"] == first["run_id"]  # not written again: kept
