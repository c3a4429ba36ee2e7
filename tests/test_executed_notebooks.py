"""The executed notebooks shipped in docs/executed/ (:mod:`inferqa_utils.present.executed`,
``python -m inferqa_utils executed export``).

First the export, on a small run folder built here (real notebooks, a figure, a manifest and a
check record; the folder lies under pytest's temporary folder, so its paths are machine paths):
paths removed, figures downscaled, the header's facts (a warm run's outputs read as replayed), an
unfinished run refused, the same run giving the same bytes wherever it lies, the record in the
records' format. Then guards on the shipped copies, each a function of a folder: every notebook
of notebooks/ has a copy, no copy holds an error, each copy's code is the notebook's code of
today (else: re-run the export from a new run), no machine path, figures at most 900 px wide,
the folder under a size cap. Each guard is also shown to fail on a broken copy.
"""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest

from inferqa_utils.__main__ import main
from inferqa_utils.core.errors import MissingInputError
from inferqa_utils.present import docs_blocks as db
from inferqa_utils.present import executed as ex
from inferqa_utils.record.run_dirs import discover_notebooks, unfinished_notebooks

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "docs" / "executed"
#: the whole shipped folder stays under this many bytes
CAP = 3_000_000
#: text no shipped file may hold: the paths of a machine
MACHINE = ("/work/", "/root/", "/home/", "/tmp/")
RUN_ID = "20261201-101500-default"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


# ----------------------------------------------------------------------------- a small run folder

def _png(width: int, height: int) -> bytes:
    from PIL import Image, ImageDraw

    img = Image.new("RGBA", (width, height), "white")
    draw = ImageDraw.Draw(img)
    for i in range(0, width, 40):
        draw.line([(i, height - 1), (width - 1, i % height)], fill=(31, 119, 180, 255), width=3)
    draw.ellipse([width // 4, height // 4, width // 2, height // 2], outline=(255, 127, 14, 255), width=5)
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def _notebooks(root: Path, run_dir: Path) -> dict[str, tuple[nbformat.NotebookNode, nbformat.NotebookNode]]:
    """``{name: (source notebook, executed copy)}`` of three small notebooks."""
    v4 = nbformat.v4
    out = {}
    for n, (name, title) in enumerate([("00_alpha.ipynb", "00 · Alpha — a first look"),
                                       ("01_beta.ipynb", "01 · Beta — a figure"),
                                       ("02_gamma.ipynb", "02 · Gamma — the end")]):
        params = v4.new_code_cell("n = 1  # the parameters", metadata={"tags": ["parameters"]}, id=f"p{n}")
        work = v4.new_code_cell(f"print('step {n}')\nshow()", id=f"w{n}")
        intro = v4.new_markdown_cell(f"# {title}\n\nThe [glossary](../docs/glossary.md).", id=f"m{n}")
        source = v4.new_notebook(cells=[intro, params, work])
        source.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        executed = nbformat.from_dict(json.loads(json.dumps(source)))
        injected = v4.new_code_cell("# Parameters\nn = 2\n", metadata={"tags": ["injected-parameters"]},
                                    id=f"i{n}")
        executed.cells.insert(2, injected)
        cell = executed.cells[3]
        cell.execution_count = 1
        cell.outputs = [
            v4.new_output("stream", name="stdout", text=f"wrote {root}/build/datasets/x.csv\n"),
            v4.new_output("stream", name="stderr",
                          text=f"cache {Path.home()}/.cache/x, /home/someone/y and /tmp/abc/z\n"),
        ]
        if n == 1:
            png = base64.b64encode(_png(1800, 600)).decode("ascii")
            cell.outputs.append(v4.new_output("display_data", data={"image/png": png,
                                                                    "text/plain": "<Figure 1800x600>"}))
        executed.metadata["papermill"] = {"input_path": f"{root}/notebooks/{name}",
                                          "output_path": f"{run_dir}/{name}", "parameters": {"n": 2}}
        executed.metadata["interpreter"] = {"path": "/opt/venvs/inferqa/bin/python3.11"}
        out[name] = (source, executed)
    return out


def make_run(base: Path, warm: bool = True, statuses: dict[str, str] | None = None) -> Path:
    """A clone under ``base`` with notebooks/ and one run folder of profile default; returns the
    run folder. ``statuses`` overrides notebooks' status in the manifest."""
    root = base / "clone"
    run_dir = root / "build" / "executions" / RUN_ID
    (root / "notebooks").mkdir(parents=True)
    (run_dir / "results").mkdir(parents=True)
    nbs = _notebooks(root, run_dir)
    for name, (source, executed) in nbs.items():
        nbformat.write(source, root / "notebooks" / name)
        nbformat.write(executed, run_dir / name)
    names = list(nbs)
    statuses = statuses or {}
    stopped = [n for n in names if statuses.get(n, "ok") != "ok"]
    manifest = {
        "run_id": RUN_ID, "started": "2026-12-01T10:15:00+00:00", "finished": "2026-12-01T10:20:30+00:00",
        "status": f"failed in {stopped[0]}" if stopped else "ok",
        "outcome": "failed" if stopped else "complete",
        "git": {"commit": COMMIT, "dirty": False},
        "platform": {"machine": "x86_64", "system": "Linux", "python": "3.11.7"},
        "parameters": {"profile": "default"},
        "notebooks_selected": names,
        "notebooks": {n: {"status": statuses.get(n, "ok"), "output": f"{run_dir}/{n}"} for n in names
                      if statuses.get(n) != "absent"},
        "llm_costs": {
            "00_alpha": {"qwen2.5-coder-1.5b": {"prompts": 5, "model_calls": 0, "cache_hits": 5}},
            "01_beta": {"qwen2.5-coder-1.5b": {"prompts": 4, "model_calls": 3, "cache_hits": 1},
                        "qwen2.5-coder-0.5b": {"prompts": 2, "model_calls": 0, "cache_hits": 2}},
        },
        "timings_s": {"00_alpha": 1.5, "01_beta": 12.25, "02_gamma": 0.5, "total": 14.25},
        "caches_at_start": {"llm": 4096 if warm else 0, "embeddings": 0},
        "projection": {"rates": {"qwen2.5-coder-0.5b": {"prefill_tok_s": 133.9, "decode_tok_s": 44.4},
                                 "qwen2.5-coder-1.5b": {"prefill_tok_s": 71.8, "decode_tok_s": 29.5}}},
    }
    if warm:
        manifest["warm"] = {"file": "default_outputs.jsonl.gz", "entries": 7, "added": 7, "present": 0}
    (run_dir / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    check = {
        "machine": {"cpus": 4, "cpu_model": "Test CPU", "ram_gb": 8.0, "os": "Linux 6.1-test",
                    "python": "3.11.7"},
        "run_checked": {"run_id": RUN_ID},
        "conditions": [{"id": c, "status": s} for c, s in (("a", "OK"), ("b", "OK"), ("c", "FAIL"))],
        "findings": [{"verdict": v} for v in ("holds", "inconclusive", "inconclusive", "contradicted",
                                              "by construction")],
    }
    (run_dir / "results" / "check_default.json").write_text(json.dumps(check), encoding="utf-8")
    return run_dir


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return make_run(tmp_path / "a")


def _export(run_dir: Path, out: Path) -> ex.ExportResult:
    return ex.export(run_dir, out / "executed", record=out / "executed_notebooks.json")


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _text(value: str | list[str]) -> str:
    return "".join(value) if isinstance(value, list) else value


# ----------------------------------------------------------------------------- the export

def test_machine_paths_are_removed_and_outputs_kept(run_dir: Path, tmp_path: Path):
    _export(run_dir, tmp_path / "out")
    beta = tmp_path / "out" / "executed" / "01_beta.ipynb"
    nb = json.loads(beta.read_text(encoding="utf-8"))
    outputs = [o for c in nb["cells"] for o in c.get("outputs", [])]
    texts = [_text(o["text"]) for o in outputs if o["output_type"] == "stream"]
    assert texts == ["wrote ./build/datasets/x.csv\n", "cache ~/.cache/x, ~/y and <tmp>/abc/z\n"]
    assert any("image/png" in o.get("data", {}) for o in outputs)  # outputs kept
    assert nb["metadata"]["papermill"]["input_path"] == "./notebooks/01_beta.ipynb"
    assert nb["metadata"]["papermill"]["output_path"] == f"./build/executions/{RUN_ID}/01_beta.ipynb"
    assert nb["metadata"]["interpreter"]["path"] == "python3.11"
    assert "](../glossary.md)" in _text(nb["cells"][1]["source"])  # a link of notebooks/, rewritten
    assert str(tmp_path) .startswith("/tmp/")  # the run lay under a machine path …
    assert machine_paths(tmp_path / "out" / "executed") == []  # … and none is left


def test_figures_are_downscaled_keeping_their_aspect(run_dir: Path, tmp_path: Path):
    got = _export(run_dir, tmp_path / "out")
    beta = next(n for n in got.notebooks if n.name == "01_beta.ipynb")
    assert beta.images == 1 and got.png_before == beta.png_before and got.png_after < got.png_before
    shipped = _cells(tmp_path / "out" / "executed" / "01_beta.ipynb")
    pngs = [base64.b64decode(o["data"]["image/png"]) for c in shipped for o in c.get("outputs", [])
            if "image/png" in o.get("data", {})]
    assert [ex.png_size(p) for p in pngs] == [(900, 300)]
    assert wide_figures(tmp_path / "out" / "executed") == []


def _header(path: Path) -> str:
    first = _cells(path)[0]
    assert first["cell_type"] == "markdown" and first["metadata"]["tags"] == [ex.HEADER_TAG]
    return _text(first["source"])


def test_the_header_of_a_warm_run_says_its_outputs_were_replayed(run_dir: Path, tmp_path: Path):
    _export(run_dir, tmp_path / "out")
    folder = tmp_path / "out" / "executed"
    alpha, beta, gamma = (_header(folder / n) for n in ("00_alpha.ipynb", "01_beta.ipynb", "02_gamma.ipynb"))
    for text in (alpha, beta, gamma):
        assert f"`{RUN_ID}`" in text and "commit `0123456`" in text and "2026-12-01 10:15–10:20 UTC" in text
        assert "4 cores Test CPU, 8 GB RAM, Linux, Python 3.11.7" in text
        assert "qwen2.5-coder-1.5b 71.8 / 29.5, qwen2.5-coder-0.5b 133.9 / 44.4" in text  # the 1.5B first
        assert "2 OK / 1 FAIL of the reproduction matrix" in text
        assert "1 holds, 1 contradicted, 2 inconclusive (1 by construction)" in text
        assert "started **warm**" in text and "`default_outputs.jsonl.gz`" in text
        assert "not a recomputation" in text and "[results](../results.md)" in text
    assert "all **replayed**, not recomputed" in alpha
    assert "5 LLM outputs, each replayed from the LLM cache — none computed in this run" in alpha
    assert "partly **replayed**" in beta and "3 computed by a model call in this run, 3 replayed" in beta
    assert "no LLM prompt" in gamma and "replayed**, not" not in gamma
    assert "[← 00_alpha](00_alpha.ipynb)" in beta and "[02_gamma →](02_gamma.ipynb)" in beta
    assert "← first notebook" in alpha and "last notebook →" in gamma
    index = (folder / "README.md").read_text(encoding="utf-8")
    assert "| [01_beta](01_beta.ipynb) | 01 · Beta — a figure | 12.2 s | 3 / 3 |" in index


def test_the_header_of_a_run_from_empty_caches_says_so(tmp_path: Path):
    run_dir = make_run(tmp_path / "cold", warm=False)
    _export(run_dir, tmp_path / "out")
    text = _header(tmp_path / "out" / "executed" / "01_beta.ipynb")
    assert "from empty caches (no warm start)" in text and "computed earlier in this same run" in text
    assert "warm**" not in text


def test_a_run_with_an_unfinished_notebook_is_refused_naming_it(tmp_path: Path):
    out = tmp_path / "out"
    _export(make_run(tmp_path / "good"), out)
    before = {p.name: p.read_bytes() for p in (out / "executed").iterdir()}
    bad = make_run(tmp_path / "bad", statuses={"01_beta.ipynb": "failed", "02_gamma.ipynb": "absent"})
    with pytest.raises(MissingInputError, match=r"did not finish 01_beta\.ipynb, 02_gamma\.ipynb"):
        _export(bad, out)
    assert {p.name: p.read_bytes() for p in (out / "executed").iterdir()} == before  # left as it was


def test_the_same_run_gives_the_same_bytes_wherever_it_lies(run_dir: Path, tmp_path: Path):
    _export(run_dir, tmp_path / "one")
    _export(run_dir, tmp_path / "one")  # again, over the first
    moved = tmp_path / "somewhere" / "else"
    shutil.copytree(run_dir.parents[2], moved)  # the whole clone, at another path
    _export(moved / "build" / "executions" / RUN_ID, tmp_path / "two")
    files = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*") if p.is_file())
    assert len(files) == 5
    for f in files:
        assert (tmp_path / "one" / f).read_bytes() == (tmp_path / "two" / f).read_bytes(), f


def test_the_record_is_a_docs_record_of_the_run(run_dir: Path, tmp_path: Path):
    got = _export(run_dir, tmp_path / "out")
    rec = db.load_record(tmp_path / "out" / "executed_notebooks.json")
    assert rec["commit"] == COMMIT and rec["describes"] == ["notebooks", "inferqa_utils"]
    assert rec["date"] == "2026-12-01" and rec["command"] == ex.COMMAND
    assert rec["machine"]["cpu_model"] == "Test CPU" and rec["machine"]["os"] == "Linux"
    assert rec["machine"]["llm_rates"]["qwen2.5-coder-1.5b"] == {"prefill_tok_s": 71.8, "decode_tok_s": 29.5}
    v = rec["values"]
    assert (v["run_id"], v["files"], v["bytes"]) == (RUN_ID, 4, got.bytes)
    assert v["bytes"] == sum(p.stat().st_size for p in (tmp_path / "out" / "executed").iterdir())
    assert (v["png_bytes_before"], v["png_bytes_after"]) == (got.png_before, got.png_after)
    assert (v["model_calls"], v["cache_hits"], v["conditions_fail"]) == (3, 8, 1)
    name = "runs/executed_notebooks.json"
    assert "run `20261201-101500-default` (2026-12-01)" in db.render_view(rec, "text", name=name)
    assert db.render_view(rec, "table", name=name).count("\n") == 4


@pytest.mark.parametrize("manifest", [
    {"notebooks_selected": ["00_a.ipynb", "01_b.ipynb"],
     "notebooks": {"00_a.ipynb": {"status": "ok"}, "01_b.ipynb": {"status": "failed in 01_b.ipynb"}}},
    {"notebooks_selected": ["00_a.ipynb", "01_b.ipynb"], "notebooks": {"00_a.ipynb": {"status": "ok"}}},
    {"notebooks": {"00_a.ipynb": {"status": "ok"}, "01_b.ipynb": {"status": "interrupted"}}},
    {"notebooks": {"00_a.ipynb": {"status": "ok"}}},
])
def test_the_unfinished_rule_is_the_run_folders_rule(manifest: dict):
    assert [n[:2] for n in ex.unfinished(manifest)] == unfinished_notebooks(manifest)


def test_the_command_exports_a_run_folder_of_another_clone(run_dir: Path, tmp_path: Path, capsys):
    out, rec = tmp_path / "cli" / "executed", tmp_path / "cli" / "rec.json"
    argv = ["executed", "export", "--run-dir", str(run_dir), "--out", str(out), "--record", str(rec)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert f"run {RUN_ID}" in printed and "4 files" in printed and "PNG" in printed
    assert sorted(p.name for p in out.iterdir()) == ["00_alpha.ipynb", "01_beta.ipynb", "02_gamma.ipynb",
                                                     "README.md"]
    assert json.loads(rec.read_text(encoding="utf-8"))["commit"] == COMMIT


def test_the_command_refuses_a_run_that_did_not_complete(tmp_path: Path, capsys):
    bad = make_run(tmp_path / "bad", statuses={"02_gamma.ipynb": "failed"})
    assert main(["executed", "export", "--run-dir", str(bad), "--out", str(tmp_path / "x")]) == 2
    assert "02_gamma" in capsys.readouterr().err and not (tmp_path / "x").exists()


# ----------------------------------------------------------------------------- guards of a shipped folder

def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _copies(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.ipynb"))


def missing_copies(folder: Path, notebooks: Path) -> list[str]:
    """The notebooks of ``notebooks`` without a copy in ``folder``, and copies of no notebook."""
    want = {p.name for p in discover_notebooks(notebooks)}
    have = {p.name for p in _copies(folder)}
    return [f"{n}: no executed copy in {folder.name}/" for n in sorted(want - have)] + \
           [f"{n}: a copy of no notebook of notebooks/" for n in sorted(have - want)]


def error_outputs(folder: Path) -> list[str]:
    """Outputs of type ``error``, and stderr streams holding a traceback."""
    found = []
    for path in _copies(folder):
        for i, cell in enumerate(_load(path)["cells"]):
            for out in cell.get("outputs", []):
                if out["output_type"] == "error":
                    found.append(f"{path.name}, cell {i}: error output {out.get('ename')}: "
                                 f"{out.get('evalue')}")
                elif out["output_type"] == "stream" and out.get("name") == "stderr" \
                        and "Traceback" in _text(out.get("text", "")):
                    found.append(f"{path.name}, cell {i}: a traceback on stderr")
    return found


def _code(nb: dict) -> list[str]:
    """The code cells' sources, the header and papermill's injected parameters left out."""
    skip = {ex.HEADER_TAG, ex.INJECTED_TAG}
    return [_text(c["source"]) for c in nb["cells"]
            if c["cell_type"] == "code" and not skip & set(c.get("metadata", {}).get("tags", []))]


def code_differences(folder: Path, notebooks: Path) -> list[str]:
    """Each copy whose code cells differ from its notebook's in ``notebooks``."""
    found = []
    for path in _copies(folder):
        source = notebooks / path.name
        if not source.is_file():
            continue
        shipped, current = _code(_load(path)), _code(_load(source))
        if shipped != current:
            at = next((i for i, (a, b) in enumerate(zip(shipped, current, strict=False)) if a != b),
                      min(len(shipped), len(current)))
            found.append(f"{path.name}: its code differs from notebooks/{path.name} (code cell {at + 1}; "
                         f"{len(shipped)} code cells shipped, {len(current)} now): the notebook changed "
                         f"after the run; re-run it and `{ex.COMMAND}`")
    return found


def _without_binary(node):
    if isinstance(node, dict):
        return {k: "" if k in ex.BINARY else _without_binary(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_without_binary(v) for v in node]
    return node


def machine_paths(folder: Path) -> list[str]:
    """``file: path`` for each machine path (:data:`MACHINE`) in the folder's files (figures'
    base64 payloads left out: binary, not text)."""
    found = []
    for path in sorted(folder.iterdir()):
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".ipynb":
            text = json.dumps(_without_binary(json.loads(text)), ensure_ascii=False)
        for marker in MACHINE:
            found += [f"{path.name}: …{text[max(0, m.start() - 40):m.end() + 40]}…"
                      for m in re.finditer(re.escape(marker), text)]
    return found


def wide_figures(folder: Path, max_width: int = ex.MAX_WIDTH) -> list[str]:
    found = []
    for path in _copies(folder):
        for i, cell in enumerate(_load(path)["cells"]):
            for out in cell.get("outputs", []):
                if "image/png" in out.get("data", {}):
                    width, height = ex.png_size(base64.b64decode(out["data"]["image/png"]))
                    if width > max_width:
                        found.append(f"{path.name}, cell {i}: a figure {width} × {height} px")
    return found


def oversize(folder: Path, cap: int = CAP) -> list[str]:
    sizes = {p.name: p.stat().st_size for p in sorted(folder.iterdir())}
    total = sum(sizes.values())
    if total <= cap:
        return []
    return [f"{folder.name}/ holds {total:,} bytes (cap {cap:,}): "
            + ", ".join(f"{n} {b:,}" for n, b in sorted(sizes.items(), key=lambda kv: -kv[1]))]


GUARDS: dict[str, Callable[[Path, Path], list[str]]] = {
    "missing copies": missing_copies,
    "error outputs": lambda folder, _nbs: error_outputs(folder),
    "code differences": code_differences,
    "machine paths": lambda folder, _nbs: machine_paths(folder),
    "wide figures": lambda folder, _nbs: wide_figures(folder),
    "oversize": lambda folder, _nbs: oversize(folder),
}


# ----------------------------------------------------------------------------- the shipped copies

@pytest.fixture(scope="module")
def shipped() -> Path:
    assert SHIPPED.is_dir() and _copies(SHIPPED), f"no executed notebooks in {SHIPPED}: run `{ex.COMMAND}`"
    return SHIPPED


def test_every_notebook_has_a_shipped_executed_copy(shipped: Path):
    found = missing_copies(shipped, ROOT / "notebooks")
    assert not found, "\n".join([*found, f"re-run `{ex.COMMAND}` from a complete run"])


def test_no_shipped_notebook_holds_an_error(shipped: Path):
    found = error_outputs(shipped)
    assert not found, "\n".join(found)


def test_the_shipped_code_is_the_code_of_the_notebooks(shipped: Path):
    found = code_differences(shipped, ROOT / "notebooks")
    assert not found, "\n".join(found)


def test_no_shipped_file_names_a_machine_path(shipped: Path):
    found = machine_paths(shipped)
    assert not found, "machine paths in docs/executed:\n" + "\n".join(found[:20])


def test_the_shipped_figures_are_at_most_900_px_wide(shipped: Path):
    found = wide_figures(shipped)
    assert not found, "\n".join(found)


def test_the_shipped_folder_stays_under_its_cap(shipped: Path):
    found = oversize(shipped)
    assert not found, found[0]


def test_the_record_describes_the_shipped_copies(shipped: Path):
    rec = db.load_record(ex.RECORD.relative_to(db.RECORDS), ROOT)
    assert re.fullmatch(r"[0-9a-f]{40}", rec["commit"]) and rec["describes"] == ["notebooks", "inferqa_utils"]
    v = rec["values"]
    assert v["bytes"] == sum(p.stat().st_size for p in shipped.iterdir()), f"re-run `{ex.COMMAND}`"
    assert v["files"] == len(list(shipped.iterdir()))
    headers = {_header(p) for p in _copies(shipped)}
    assert all(f"`{v['run_id']}`" in h and f"commit `{rec['commit'][:7]}`" in h for h in headers)


# ----------------------------------------------------------------------------- the guards can fail

def _inject_error(folder: Path, _nbs: Path) -> None:
    path = folder / "01_beta.ipynb"
    nb = _load(path)
    nb["cells"][-1]["outputs"].append({"output_type": "error", "ename": "ValueError", "evalue": "boom",
                                       "traceback": ["ValueError: boom"]})
    path.write_text(json.dumps(nb), encoding="utf-8")


def _inject_traceback(folder: Path, _nbs: Path) -> None:
    path = folder / "00_alpha.ipynb"
    nb = _load(path)
    nb["cells"][-1]["outputs"].append({"output_type": "stream", "name": "stderr",
                                       "text": "Traceback (most recent call last):\n"})
    path.write_text(json.dumps(nb), encoding="utf-8")


def _edit_notebook(_folder: Path, nbs: Path) -> None:
    path = nbs / "02_gamma.ipynb"
    nb = _load(path)
    nb["cells"][-1]["source"] = "print('changed after the run')"
    path.write_text(json.dumps(nb), encoding="utf-8")


def _inject_path(folder: Path, _nbs: Path) -> None:
    path = folder / "00_alpha.ipynb"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("./build/", "/work/clone/build/"), encoding="utf-8")


def _wide_figure(folder: Path, _nbs: Path) -> None:
    path = folder / "01_beta.ipynb"
    nb = _load(path)
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            if "image/png" in out.get("data", {}):
                out["data"]["image/png"] = base64.b64encode(_png(1200, 100)).decode("ascii")
    path.write_text(json.dumps(nb), encoding="utf-8")


def _swell(folder: Path, _nbs: Path) -> None:
    (folder / "README.md").write_text("x" * (CAP + 1), encoding="utf-8")


@pytest.mark.parametrize("guard, breakage", [
    ("missing copies", lambda folder, _nbs: (folder / "02_gamma.ipynb").unlink()),
    ("error outputs", _inject_error),
    ("error outputs", _inject_traceback),
    ("code differences", _edit_notebook),
    ("machine paths", _inject_path),
    ("wide figures", _wide_figure),
    ("oversize", _swell),
])
def test_each_guard_fails_on_a_broken_copy(run_dir: Path, tmp_path: Path, guard: str, breakage):
    _export(run_dir, tmp_path / "out")
    folder, nbs = tmp_path / "out" / "executed", run_dir.parents[2] / "notebooks"
    assert {name: g(folder, nbs) for name, g in GUARDS.items()} == {name: [] for name in GUARDS}
    breakage(folder, nbs)
    found = GUARDS[guard](folder, nbs)
    assert found, guard
    if guard == "code differences":
        assert found[0].startswith("02_gamma.ipynb: its code differs") and ex.COMMAND in found[0]
