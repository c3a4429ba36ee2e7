"""``make release`` / ``python -m inferqa_utils release`` end to end on the smoke profile
(inferqa_utils/run/make_release.py), in the test root (tests/isolated_root.py): the complete build of
the profile's dataset with the real SmolLM2-135M, notebook 02's control corpus and pooled judgments,
the release written to ``data/embedded-smoke/release`` and checked by ``release --verify``.

Hand values: the smoke build keeps its 4 questions (``build_max_questions: 4``) with k = 3 hints,
Σ_j C(3, j)·j! = 3 + 6 + 6 = 15 passages each, 60 in all (the smoke matrix's ``corpus passages``);
the embedded source has 268 questions with 2 references each, so the control corpus holds 536
passages; the smoke matrix (inferqa_utils/verdicts/reproduction.yaml) records 14 label-2 passages in train
and 23 judged answer-containing pairs, which the release's build and judgments reproduce (same
parameters, same greedy SmolLM2 replies). SmolLM2's sha256 is the registry's
(inferqa_utils/core/models.py), and the file the build loaded hashes to it.

Cost: the first release builds 4 questions and judges the control pool with SmolLM2 — several
minutes on a 2-core machine with an empty generation cache (convergence and labeling make some
100 SmolLM2 calls), about a minute when the tests' cache (``.cache/tests/llm``) holds the
smoke run's replies, which notebooks 01 and 02 of the smoke run then reuse; the two later releases
here read the label checkpoint and the cache (under a minute each, mostly imports and model
loading). What is written goes to the test root; only the tests' shared caches
(``.cache/tests``) are the checkout's, as everywhere in the suite.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from types import SimpleNamespace

import pytest
from isolated_root import CHECKOUT

from inferqa_utils.__main__ import main
from inferqa_utils.construction import release as rel
from inferqa_utils.construction.build_config import profile_build_config
from inferqa_utils.core.config import PATHS
from inferqa_utils.core.fingerprint import sha256_file
from inferqa_utils.ir.trec import read_qrels

PROFILE = "smoke"
NAME = "embedded-smoke"
SMOLLM2 = "smollm2-135m"
#: the registry's sha256 of SmolLM2-135M-Instruct.Q4_1.gguf (inferqa_utils/core/models.py)
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
#: the smoke profile's control parameters (profiles.yaml: split … run_depth from `default`, the
#: reader and judge from `smoke`)
CONTROL = {
    "split": "test", "control_relevance": "llm", "pool_depth": 5, "pool_retrievers": ["bm25", "e5-small"],
    "pool_questions": None, "size_matched": True, "reader_model": SMOLLM2, "judge_model": SMOLLM2,
    "run_depth": 100,
}
#: the files of a release of the embedded source with control judgments (no LICENSE: the embedded
#: dataset is ours; no leakage_agreement.csv: the embedded hints carry no stored leakage score)
FILES = [
    "README.md", "construction/difficulty.csv", "construction/guard_refusals.csv", "construction/hints.csv",
    "construction/parametric.csv", "construction/pool_expansions.csv", "construction/questions.csv",
    "construction/table1.csv", "control/corpus.jsonl", "control/judgments.tsv", "corpus/corpus.jsonl",
    "dev.json", "distractors.json", "qrels/dev.qrels", "qrels/test.qrels", "qrels/train.qrels", "test.json",
    "train.json", "verification.json",
]
#: the build's steps (construction/build.py), then the control judgments (make_release.py)
STEPS = ["leakage", "type_difficulty", "parametric", "convergence", "labeling", "control judgments"]
CONTAINING = "answer-containing, LLM-judged"
CHANGED = "sha256 differs from the manifest (the file was changed after the release was made)"
#: what a release records about the run that made it, not about the dataset
RUN_RECORD = ("created", "seconds", "steps")
BUILD_RUN_RECORD = ("timings_s", "step_costs", "llm_stats")

#: a first release of an empty generation cache takes minutes on a loaded 2-core machine
TIMEOUT = 2400


def _release_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m inferqa_utils release ARGS`` on the checkout's package, in the test root (no LLM or
    embedding server route of the shell: the models run in process, as in the rest of the suite)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("INFERQA_LLM_SERVER", "INFERQA_LLM_API_KEY", "INFERQA_LLM_CONCURRENCY",
                                "INFERQA_LLM_RETRIES", "INFERQA_EMBED_"))}
    env.update(PYTHONPATH=str(CHECKOUT), INFERQA_ROOT=str(PATHS.root))
    out = subprocess.run([sys.executable, "-m", "inferqa_utils", "release", *args], capture_output=True,
                         text=True, env=env, cwd=PATHS.root, timeout=TIMEOUT)
    assert out.returncode == 0, f"exit {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


def _state(path: Path) -> tuple[bool, int | None]:
    return path.exists(), path.stat().st_mtime_ns if path.exists() else None


def _contents(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _model_calls(steps: dict) -> int:
    return sum(c.get("model_calls", 0) for s in steps.values() for c in (s.get("llm") or {}).values())


@pytest.fixture(scope="module")
def first_release() -> SimpleNamespace:
    """``release --profile smoke`` once, as ``make release PROFILE=smoke`` runs it: the release, its
    manifest and bytes, and what the command printed. Nothing of the checkout changes."""
    checkout = [CHECKOUT / "data" / NAME, CHECKOUT / "build" / "release" / NAME]
    before = [_state(p) for p in checkout]
    out = _release_cli("--profile", PROFILE)
    folder = PATHS.data / NAME / "release"
    assert [_state(p) for p in checkout] == before
    return SimpleNamespace(folder=folder, stdout=out.stdout, manifest=rel.read_manifest(folder),
                           contents=_contents(folder))


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on PATH")
def test_make_release_runs_the_release_command_of_its_profile():
    """What the slow tests below run is what ``make release PROFILE=smoke`` runs (a dry run: the
    setup and models steps are printed, not run)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    out = subprocess.run(["make", "--no-print-directory", "-n", "-C", str(CHECKOUT), "release",
                          "PROFILE=smoke", "VENV=.venv"], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == ".venv/bin/python -m inferqa_utils release --profile smoke"


@pytest.mark.slow
def test_the_smoke_release_validates_and_records_its_models_and_parameters(first_release, capsys):
    folder, m = first_release.folder, first_release.manifest
    build = PATHS.build / "release" / NAME
    assert f"[release] {PROFILE}: building '{NAME}' from 'embedded' in {build}\n" in first_release.stdout
    assert "[release] control: 536 reference passages, " in first_release.stdout
    assert f"[release] wrote {folder} in " in first_release.stdout

    # it validates, by the command a user runs (a dataset name names data/<name>/release)
    assert rel.verify_release(folder) == []
    assert main(["release", "--verify", NAME]) == 0
    said = capsys.readouterr().out.splitlines()
    assert len(said) == 1, said
    assert said[0].startswith(f"[release] {folder}: OK (4 questions, 60 passages, splits {{"), said
    splits = ast.literal_eval(said[0].split(", splits ", 1)[1][:-1])
    built = m["build"]["counts"]["per_split"]
    assert {s: n for s, n in splits.items() if n} == {s: n for s, n in built.items() if n}
    assert sum(splits.values()) == 4

    # the manifest: the model's sha256 (the file the build loaded) and the parameters
    from inferqa_utils.core import models

    assert m["models"] == {SMOLLM2: {"sha256": SMOLLM2_SHA256}}
    assert sha256_file(models.fetch(SMOLLM2, log=lambda s: None)) == SMOLLM2_SHA256
    assert m["parameters"]["control"] == CONTROL
    cfg = profile_build_config(PROFILE)
    params = m["parameters"]["build"]
    assert params == {k: v for k, v in asdict(cfg).items() if k != "output_dir"}
    assert {k: params[k] for k in ("source", "name", "max_questions", "k_hints", "labelers", "judge_model",
                                   "convergence_model", "parametric_models", "label_splits",
                                   "convergence_stored", "corpus_all_source", "seed")} == {
        "source": "embedded", "name": NAME, "max_questions": 4, "k_hints": 3, "labelers": [SMOLLM2],
        "judge_model": SMOLLM2, "convergence_model": SMOLLM2, "parametric_models": [SMOLLM2],
        "label_splits": None, "convergence_stored": False, "corpus_all_source": False, "seed": 13,
    }
    assert (m["name"], m["profile"], m["command"]) == (
        NAME, PROFILE, "python -m inferqa_utils release --profile smoke"
    )
    assert m["fingerprint"] == m["build"]["fingerprint"] == cfg.fingerprint()
    assert set(m["code"]) == {"commit", "dirty"}
    assert list(m["steps"]) == STEPS
    control_step = m["steps"]["control judgments"]["llm"][SMOLLM2]
    assert control_step["model_calls"] + control_step["cache_hits"] >= 23  # a reading per containing pair

    # a release names no machine's folders: the build folder is given relative to the root
    assert m["build"]["parameters"]["output_dir"] == f"build/release/{NAME}"
    assert m["build"]["inputs_sha256"] == {
        "data/embedded/questions.json": sha256_file(CHECKOUT / "data" / "embedded" / "questions.json")
    }
    text = (folder / rel.MANIFEST).read_text(encoding="utf-8")
    assert str(PATHS.root) not in text and str(CHECKOUT) not in text

    # the files: every one hashed; the control corpus and judgments; no licence for our own dataset
    assert sorted(m["files"]) == FILES
    assert all(sha256_file(folder / f) == digest for f, digest in m["files"].items())
    assert len((folder / "corpus" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()) == 60
    assert len((folder / "control" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()) == 536
    train = read_qrels(folder / "qrels" / "train.qrels")
    assert sum(v == 2 for labs in train.values() for v in labs.values()) == 14
    j = rel.read_judgments(folder)
    containing = j[j["corpus"] == CONTAINING]
    assert len(containing) == 23 and set(containing["source"]) == {"pooled"}
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert readme.startswith(f"# Dataset release `{NAME}`\n\nWritten by `python -m inferqa_utils release "
                             f"--profile {PROFILE}` (the compendium's construction\n")
    assert "| `control/corpus.jsonl`, `control/judgments.tsv` |" in readme and "; passages: 60; " in readme
    assert "## Source and licence" not in readme and not (folder / "LICENSE").exists()


@pytest.mark.slow
def test_a_second_release_with_nothing_changed_rewrites_nothing(first_release):
    """Same code, models, parameters and source: the build is reused (labels from its checkpoint,
    every LLM reply from the cache: no model call), and every file of the release is byte for byte
    the first one's; the manifest differs only in the record of the run (when, how long, per step)."""
    out = _release_cli("--profile", PROFILE)
    build = PATHS.build / "release" / NAME
    assert (f"{build} holds a build with these parameters (`make run PROFILE=smoke`): reusing it — labelled "
            "questions come from the checkpoint, LLM replies from the cache") in out.stdout
    folder = first_release.folder
    m1, m2 = first_release.manifest, rel.read_manifest(folder)
    assert _model_calls(m2["steps"]) == 0
    assert _model_calls(m2["build"]["step_costs"]) == 0
    assert m2["files"] == m1["files"]
    now = _contents(folder)
    assert sorted(now) == sorted([*FILES, rel.MANIFEST])
    assert {f: b for f, b in now.items() if f != rel.MANIFEST} == {
        f: b for f, b in first_release.contents.items() if f != rel.MANIFEST
    }

    def dataset_record(m: dict) -> dict:
        return {**{k: v for k, v in m.items() if k not in RUN_RECORD},
                "build": {k: v for k, v in m["build"].items() if k not in BUILD_RUN_RECORD}}

    assert dataset_record(m2) == dataset_record(m1)
    assert rel.verify_release(folder) == []


@pytest.mark.slow
def test_an_edited_byte_is_named_by_verify(first_release, tmp_path, capsys):
    copy = tmp_path / "release"
    shutil.copytree(first_release.folder, copy)
    assert main(["release", "--verify", str(copy)]) == 0
    assert capsys.readouterr().out.startswith(f"[release] {copy}: OK (4 questions, 60 passages, ")

    corpus = copy / "corpus" / "corpus.jsonl"
    data = bytearray(corpus.read_bytes())
    at = data.index(b'"contents": "') + len(b'"contents": "')
    data[at] = ord("x") if data[at] != ord("x") else ord("y")  # one letter of the first passage
    corpus.write_bytes(bytes(data))
    assert main(["release", "--verify", str(copy)]) == 1
    assert capsys.readouterr().out == f"[release] FAIL corpus/corpus.jsonl: {CHANGED}\n"
    with pytest.raises(rel.ReleaseError,
                       match=re.escape(f"fails its checks:\n- corpus/corpus.jsonl: {CHANGED}")):
        rel.load_release(copy)


@pytest.mark.slow
def test_a_release_replaces_another_build_and_ships_the_sources_licence(first_release, tmp_path, monkeypatch):
    """The release command builds with overwrite: a build of other parameters in its build folder
    (here: the same build with another fingerprint in its manifest) is replaced, not refused. A
    source that carries a licence (TriviaHG's MIT licence; here the embedded source is given one)
    ships it as ``LICENSE``, hashed, with the attribution closing the README; the dataset's files
    are the first release's."""
    from inferqa_utils.run import make_release as mr
    from inferqa_utils.sources import TRIVIAHG_ATTRIBUTION, SourceLicence

    build = PATHS.build / "release" / NAME
    bm = json.loads((build / "manifest.json").read_text(encoding="utf-8"))
    bm["fingerprint"] = "0" * 16
    (build / "manifest.json").write_text(json.dumps(bm, indent=1), encoding="utf-8")
    licence = tmp_path / "LICENSE"
    licence.write_text("MIT License\n\nCopyright (c) 2024 The TriviaHG authors\n", encoding="utf-8")
    asked = []

    def source_licence(source):
        asked.append(source)
        return SourceLicence(licence, TRIVIAHG_ATTRIBUTION)

    monkeypatch.setattr(mr, "source_licence", source_licence)
    said: list[str] = []
    out = mr.make_release(PROFILE, out=tmp_path / "licensed", log=said.append, progress=False)

    assert asked == ["embedded"]
    assert f"replacing the build in {build} (made by another parameter set): overwrite=True" in said
    assert json.loads((build / "manifest.json").read_text(encoding="utf-8"))["fingerprint"] == \
        profile_build_config(PROFILE).fingerprint()
    assert rel.verify_release(out) == []
    m, m1 = rel.read_manifest(out), first_release.manifest
    assert (out / "LICENSE").read_bytes() == licence.read_bytes()
    first_readme = first_release.contents["README.md"].decode("utf-8")
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert readme == first_readme + "\n## Source and licence\n\n" + TRIVIAHG_ATTRIBUTION + "\n"
    assert m["files"] == {
        **m1["files"], "LICENSE": sha256_file(licence), "README.md": sha256_file(out / "README.md")
    }
    assert (m["models"], m["parameters"]) == (m1["models"], m1["parameters"])
