"""The papermill runner: parameters from profiles and overrides, manifest, failures.

Uses a real notebook written to a temporary folder and executed by papermill.
"""

import json

import nbformat
import pytest

from inferqa_utils.runner import parse_overrides, run_notebooks


def _nb(path, params_src, body_src):
    nb = nbformat.v4.new_notebook()
    p = nbformat.v4.new_code_cell(params_src)
    p.metadata["tags"] = ["parameters"]
    nb.cells = [p, nbformat.v4.new_code_cell(body_src)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def test_parse_overrides():
    assert parse_overrides(["k=3", "xs=[1, 3]", "s=abc", "n=null"]) == {"k": 3, "xs": [1, 3], "s": "abc", "n": None}
    with pytest.raises(ValueError, match="name=value"):
        parse_overrides(["oops"])


@pytest.mark.slow
def test_runner_executes_in_order_with_profile_params(tmp_path):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    out_file = tmp_path / "seen.jsonl"
    body = f"import json\nopen({str(out_file)!r}, 'a').write(json.dumps(dict(nb=NB, mq=max_questions, x=x)) + '\\n')"
    _nb(nbdir / "00_first.ipynb", "NB = '00'  # name\nmax_questions = 99  # cap\nx = 0  # extra", body)
    _nb(nbdir / "01_second.ipynb", "NB = '01'\nmax_questions = 99\nx = 0", body)
    _nb(nbdir / "notes.ipynb", "NB = 'zz'", "raise SystemExit(1)")  # not numbered: ignored
    run_notebooks("smoke", overrides={"x": 7}, out_dir=tmp_path / "exec", notebooks_dir=nbdir, log=lambda s: None)
    seen = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert seen == [{"nb": "00", "mq": 4, "x": 7}, {"nb": "01", "mq": 4, "x": 7}]
    man = json.loads((tmp_path / "exec" / "manifest.json").read_text())
    assert man["parameters"]["profile"] == "smoke" and man["parameters"]["x"] == 7
    assert set(man["timings_s"]) == {"00_first", "01_second", "total"}
    assert man["status"] == "ok" and man["versions"]["papermill"]
    assert "git" in man and any(k.endswith("00_first.ipynb") for k in man["inputs_sha256"])
    assert (tmp_path / "exec" / "01_second.ipynb").exists()


@pytest.mark.slow
def test_runner_failure_is_reported_in_manifest(tmp_path):
    nbdir = tmp_path / "nb"
    nbdir.mkdir()
    _nb(nbdir / "00_bad.ipynb", "x = 1", "raise RuntimeError('boom')")
    with pytest.raises(Exception, match="boom"):
        run_notebooks("smoke", only=["00"], out_dir=tmp_path / "exec", notebooks_dir=nbdir, log=lambda s: None)
    man = json.loads((tmp_path / "exec" / "manifest.json").read_text())
    assert man["status"] == "failed in 00_bad.ipynb"


def test_only_that_matches_nothing(tmp_path):
    with pytest.raises(ValueError, match="matches no notebook"):
        run_notebooks("smoke", only=["42"], out_dir=tmp_path / "e", notebooks_dir=tmp_path, log=lambda s: None)
