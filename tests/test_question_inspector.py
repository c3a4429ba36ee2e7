"""The question inspector on the real smoke build (notebooks 01–07 on the smoke profile): every
number it shows is read back from the files the notebooks wrote, it calls no model, and what is
missing is named with the notebook that writes it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from isolated_root import CHECKOUT

from inferqa_utils import stages
from inferqa_utils.construction.store import built_dir
from inferqa_utils.core.config import PATHS, profile
from inferqa_utils.ir.trec import read_qrels, read_run
from inferqa_utils.sources import load_source
from inferqa_utils.stages import run_stage
from inferqa_utils.teach.inspector import QuestionInspector, inspector_widget

pytestmark = pytest.mark.slow


def _report_in(root: Path, name: str, qid: str) -> dict:
    """The report of ``qid`` computed in a fresh interpreter whose repository root is ``root``:
    its notes, summary and the heavy modules it imported."""
    code = (
        "import json, sys\n"
        "from inferqa_utils.teach.inspector import QuestionInspector\n"
        f"r = QuestionInspector({name!r}).report({qid!r})\n"
        "heavy = [m for m in ('llama_cpp', 'torch', 'sentence_transformers', 'pyserini') if m in "
        "sys.modules]\n"
        "print(json.dumps({'notes': r.notes, 'summary': r.summary(), 'heavy': heavy,"
        " 'ranks': r.ranks is not None, 'readings': r.readings is not None, 'patterns': r.patterns is not "
        "None}))\n"
    )
    env = {**os.environ, "INFERQA_ROOT": str(root), "PYTHONPATH": str(CHECKOUT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_report_reads_every_stage_output_of_a_smoke_question(smoke_outputs: str) -> None:
    name = smoke_outputs
    ins = QuestionInspector(name)
    source = load_source(profile("smoke")["build_source"])
    k = profile("smoke")["k_hints"]
    folder = built_dir(name)
    qrels = read_qrels(folder / "qrels" / "test.qrels")
    split_file = {r["id"]: r for r in json.loads((folder / "test.json").read_text(encoding="utf-8"))}
    answers = pd.read_csv(stages.READING_ANSWERS.path(name, "test"))
    patterns = pd.read_csv(stages.PATTERNS.path(name, "test"), dtype={"em_pattern": str})
    runs = {p.stem: read_run(p) for p in stages.run_dir(name, stages.Corpus.SUPPORTING).glob("*.trec")}
    test_ids = ins.dataset.splits["test"]
    assert test_ids and ins.question_ids()[: len(test_ids)] == list(test_ids)
    for qid in test_ids:
        rep = ins.report(qid)
        # 01: every source hint, the top k kept; passages with the qrels' labels and the labelers' answers
        assert rep.n_hints == len(source.questions[qid].hints) and rep.n_kept == k
        assert list(rep.hints["text"]) == [h.text for h in source.questions[qid].hints]
        assert f"{rep.n_hints} hints, {k} kept" in rep.summary()
        assert dict(zip(rep.passages["passage"], rep.passages["label"], strict=True)) == qrels[qid]
        stored = {f"{qid}_{mask}_{perm}": gens for mask, by in split_file[qid]["subsets"].items()
                  for perm, gens in by.items()}
        for pid, text in zip(rep.passages["passage"], rep.passages["answers"], strict=True):
            for labeler, answer in stored[pid].items():
                assert f"{labeler}: {answer}" in text
        # 02/03/05/07: ranks of the label-2 passages, recomputed from the run files
        rel = {pid for pid, label in qrels[qid].items() if label == 2}
        if rel:
            for run_name, run in runs.items():
                ranks = [r for r, (pid, _) in enumerate(run.get(qid, []), 1) if pid in rel]
                assert rep.rank_points[run_name] == ranks, run_name
        else:
            assert rep.ranks is None and any("no label-2 passage" in n for n in rep.notes)
        # 04: one row per reading of the question; 06: its EM pattern and passage types
        assert rep.readings is not None and len(rep.readings) == (answers["qid"] == qid).sum()
        assert set(rep.readings["setting"]) == set(answers.loc[answers["qid"] == qid, "setting"])
        mine = patterns[patterns["qid"] == qid]
        assert list(rep.patterns["em_pattern"]) == list(mine["em_pattern"])
        counts = rep.type_counts()
        assert list(counts[["IZ", "DP", "DN", "SP", "SN"]].sum(axis=1)) == [
            len(t.split()) for t in mine["em_types"]
        ]
        assert not [n for n in rep.notes if "run notebook" in n], rep.notes


def test_the_report_calls_no_model(smoke_outputs: str) -> None:
    qid = QuestionInspector(smoke_outputs).dataset.splits["test"][0]
    got = _report_in(PATHS.root, smoke_outputs, qid)
    assert got["heavy"] == [], f"the inspector imported {got['heavy']}"
    assert got["ranks"] or any("no label-2" in n for n in got["notes"])
    assert got["readings"] and got["patterns"]


def test_missing_outputs_name_the_notebook_to_run(smoke_outputs: str, tmp_path: Path) -> None:
    """A root holding only the build (notebook 01 ran, 02–07 did not), then one with the first-stage
    runs but no reranked run: each gap is named with its notebook."""
    name = smoke_outputs
    qid = QuestionInspector(name).dataset.splits["test"][0]
    shutil.copytree(built_dir(name), tmp_path / "build" / "datasets" / name)
    got = _report_in(tmp_path, name, qid)
    text = "\n".join(got["notes"])
    for nb in ("02_retrieval", "04_reading", "06_damaging_passages"):
        assert f"run notebook {nb} (python -m inferqa_utils run --only {nb[:2]})" in text, text
    assert not got["readings"] and not got["patterns"]
    runs = tmp_path / "build" / "runs" / name / "supporting"
    runs.mkdir(parents=True)
    for p in stages.run_dir(name, stages.Corpus.SUPPORTING).glob("*.trec"):
        if run_stage(p.stem) == "02":
            shutil.copy(p, runs / p.name)
    text = "\n".join(_report_in(tmp_path, name, qid)["notes"])
    assert "run notebook 03_reranking" in text and "run notebook 02_retrieval" not in text, text


def test_a_question_outside_the_analysed_split_and_an_unbuilt_dataset(smoke_outputs: str) -> None:
    ins = QuestionInspector(smoke_outputs)
    other = next(qid for qid in ins.question_ids() if qid not in ins.dataset.splits["test"])
    rep = ins.report(other)
    assert rep.readings is None and rep.patterns is None and rep.ranks is None
    assert any("notebooks 02–07 analyse the test split" in n for n in rep.notes)
    with pytest.raises(KeyError, match="not in the built dataset"):
        ins.report("no_such_question")
    missing = QuestionInspector("no-such-build")
    assert not missing.built and "run notebook 01_dataset_construction" in missing.missing_build()
    box = inspector_widget("no-such-build")
    assert "run notebook 01_dataset_construction" in box.children[0].value


def test_widget_lists_the_analysed_split_first_and_shows_the_question_at_once(smoke_outputs: str) -> None:
    ins = QuestionInspector(smoke_outputs)
    ids = ins.question_ids()
    box = inspector_widget(smoke_outputs, ids[-1])
    picker, status = box.children[0], box.children[1]
    assert [v for _, v in picker.options] == ids and picker.value == ids[-1]
    assert picker.layout.width == "95%" and all(label.startswith("[") for label, _ in picker.options)
    assert f"{ids[-1]}: read from" in status.value and "no model call" in status.value
    picker.value = ids[0]
    assert f"{ids[0]}: read from" in status.value


def test_run_stage_names_the_notebook_of_a_run_file() -> None:
    assert [run_stage(n) for n in ("bm25", "rrf", "hybrid", "bm25+pointwise", "oracle+upr", "FT-MiniLM-N5",
                                   "bm25+FT-CrossEncoder")] == ["02", "02", "02", "03", "03", "05", "05"]
    assert run_stage("decomposition", in_beyond=True) == "07"


def test_ranks_of_label2_passages_are_read_from_the_run_files(smoke_outputs: str) -> None:
    """The smoke labeler (SmolLM2) gives the test questions no label-2 passage, so the ranks are
    checked with the question's own passages taken as the relevant set: every run file's ranking,
    recomputed here, and the rank plot with one row per run."""
    ins = QuestionInspector(smoke_outputs)
    qid = ins.dataset.splits["test"][0]
    rep = ins.report(qid)
    own = {p.pid: 2 for p in ins.dataset.passages_of(qid)}
    ins._retrieval(rep, own)
    runs = {
        p.stem: read_run(p) for p in stages.run_dir(smoke_outputs, stages.Corpus.SUPPORTING).glob("*.trec")
    }
    assert runs and rep.ranks is not None
    for name, run in runs.items():
        expected = [r for r, (pid, _) in enumerate(run[qid], 1) if pid in own]
        assert rep.rank_points[name] == expected, name
        row = rep.ranks[rep.ranks["run"] == name].iloc[0]
        assert row["retrieved"] == len(expected) and row["depth"] == len(run[qid])
        assert row["first rank"] == (expected[0] if expected else "—")
    fig = rep.rank_figure()
    assert fig is not None and len(fig.axes[0].get_yticks()) == len(rep.rank_points)


def test_a_failing_report_is_shown_in_the_widget(smoke_outputs: str, tmp_path: Path) -> None:
    """A build whose hints.csv is unreadable: the inspector widget says what failed in its status
    line instead of leaving the output empty."""
    name = smoke_outputs
    folder = tmp_path / "build" / "datasets" / name
    shutil.copytree(built_dir(name), folder)
    (folder / "hints.csv").write_text("not,the,columns\n1,2,3\n", encoding="utf-8")
    code = ("from inferqa_utils.teach.inspector import inspector_widget\n"
            f"box = inspector_widget({name!r})\n"
            "print(box.children[1].value)\n")
    env = {**os.environ, "INFERQA_ROOT": str(tmp_path), "PYTHONPATH": str(CHECKOUT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "KeyError" in out.stdout.strip().splitlines()[-1], out.stdout


def test_default_question_is_one_the_notebooks_analysed(smoke_outputs: str) -> None:
    """A question outside the smoke build (emb_loc_05, as notebook 00's is), and a train question has no
    runs or readings: the inspector opens on an analysed question instead, a test question as asked."""
    ins = QuestionInspector(smoke_outputs)
    test_ids = ins.dataset.splits["test"]
    train = next(q for q in ins.question_ids() if ins.split_of(q) == "train")
    assert ins.default_question(test_ids[-1]) == test_ids[-1]
    assert (
        ins.default_question("emb_loc_05")
        == ins.default_question(train)
        == ins.default_question()
        == test_ids[0]
    )
    assert ins.split_of(train) == "train" and ins.split_of("emb_loc_05") is None
    # the reason printed by notebook 00 says what is true of the chosen question
    chosen = ins.default_question()
    has2 = any(v == 2 for v in ins.dataset.qrels.get(chosen, {}).values())
    assert ins.has_label2(chosen) == has2
    why = ins.why_default(chosen)
    assert ("with a label-2 passage" in why) == has2 and (
        "no test question has a label-2 passage" in why
    ) != has2
