"""Dataset releases (inferqa_utils.construction.release): written atomically, verified before use,
installed for notebooks 02–07; the shipped embedded release validates and re-labels the same with
the real 1.5B."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from inferqa_utils.construction import release as rel
from inferqa_utils.construction.file_formats import write_quit
from inferqa_utils.construction.passages import build_passages, n_subset_permutations
from inferqa_utils.core.fingerprint import sha256_file
from inferqa_utils.ir.datamodel import Dataset, Hint, Question

HINTS = {
    "t_a_1": (
        "Which object shows your reflection?",
        ["Mirror"],
        ["It is a reflective surface.", "It hangs in bathrooms."],
    ),
    "t_b_1": (
        "Which planet is the largest?",
        ["Jupiter"],
        ["It is a gas giant.", "It has a great red spot."],
    ),
}

#: the tiny release's labeler: a real packaged model, so that its answers can be reused by name
LABELER = "smollm2-135m"


def _build_folder(tmp: Path) -> Path:
    """A two-question export in the shape build_dataset writes (k = 2: 4 passages each, test split,
    labelled by one labeler), with the build manifest fields a release reads."""
    qs, passages, qrels, gens = {}, {}, {}, {}
    for qid, (question, answers, hints) in HINTS.items():
        qs[qid] = Question(
            qid, question, list(answers), [Hint(h) for h in hints], meta={"gold_answers": list(answers)}
        )
        ps = build_passages(qid, hints)
        passages.update((p.pid, p) for p in ps)
        qrels[qid] = {p.pid: 2 if p.n_hints == 2 else 1 for p in ps}
        gens.update((p.pid, {LABELER: answers[0] if p.n_hints == 2 else "NO ANSWER"}) for p in ps)
    ds = Dataset("tiny", qs, passages, qrels, {"test": list(qs)}, gens)
    folder = tmp / "build"
    write_quit(ds, folder)
    (folder / "questions.csv").write_text("qid,status\nt_a_1,kept\nt_b_1,kept\n", encoding="utf-8")
    manifest = {
        "name": "tiny",
        "fingerprint": "f" * 16,
        "labelled_splits": ["test"],
        "parameters": {"k_hints": 2, "labelers": [LABELER], "source": "embedded"},
        "counts": {"per_split": {"test": 2}, "passages": 8},
        "invariants": {"ok": True, "problems": []},
    }
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


@pytest.fixture()
def tiny_release(tmp_path) -> Path:
    judgments = pd.DataFrame([{"corpus": "answer-containing, LLM-judged", "qid": "t_a_1", "pid": "ref:t_a_1",
                               "label": 2, "answer": "Mirror", "source": "pooled"}])
    return rel.write_release(
        _build_folder(tmp_path),
        tmp_path / "release",
        {"name": "tiny", "profile": "test", "parameters": {"control": {"reader_model": LABELER}}},
        control_corpus={"ref:t_a_1": "A mirror reflects light."},
        judgments=judgments,
    )


def test_a_written_release_verifies_and_loads_as_quit(tiny_release):
    assert rel.verify_release(tiny_release) == []
    ds = rel.load_release(tiny_release)
    assert sorted(ds.splits["test"]) == ["t_a_1", "t_b_1"] and len(ds.passages) == 8
    # labels come from the release's qrels; the QUIT rule (a labeler answer in the pool) agrees here
    assert sum(v == 2 for v in ds.qrels["t_a_1"].values()) == 2
    assert rel.quit_rule_differences(ds) == []
    m = rel.read_manifest(tiny_release)
    assert m["schema"] == rel.RELEASE_SCHEMA and m["build"]["labelled_splits"] == ["test"]
    assert m["files"]["test.json"] == sha256_file(tiny_release / "test.json")
    assert rel.read_judgments(tiny_release)["label"].tolist() == [2]


def _rehash(folder: Path, name: str) -> None:
    m = json.loads((folder / rel.MANIFEST).read_text(encoding="utf-8"))
    m["files"][name] = sha256_file(folder / name)
    (folder / rel.MANIFEST).write_text(json.dumps(m), encoding="utf-8")


def test_an_edited_file_or_a_bad_label_is_named(tiny_release):
    qrels = tiny_release / "qrels" / "test.qrels"
    qrels.write_text(qrels.read_text(encoding="utf-8").replace(" 2\n", " 3\n", 1), encoding="utf-8")
    problems = rel.verify_release(tiny_release)
    assert problems == ["qrels/test.qrels: sha256 differs from the manifest (the file was changed after the "
                        "release was made)"]
    with pytest.raises(rel.ReleaseError, match=r"qrels/test\.qrels: sha256"):
        rel.load_release(tiny_release)
    _rehash(tiny_release, "qrels/test.qrels")
    assert any("label 3 outside" in p for p in rel.verify_release(tiny_release))


def test_missing_generations_and_a_leaking_hint_are_problems(tiny_release):
    test = tiny_release / "test.json"
    recs = json.loads(test.read_text(encoding="utf-8"))
    recs[0]["hints"][0]["hint"] = "It is a mirror on the wall."  # names the answer (and changes the text)
    mask = next(iter(recs[1]["subsets"]))
    perm = next(iter(recs[1]["subsets"][mask]))
    recs[1]["subsets"][mask][perm] = {}
    test.write_text(json.dumps(recs), encoding="utf-8")
    _rehash(tiny_release, "test.json")
    problems = rel.verify_release(tiny_release)
    assert any("t_a_1: hint 0 names the answer" in p for p in problems)
    assert any(p.startswith(f"t_b_1 t_b_1_{mask}_{perm}: no generated answer") for p in problems)


# verify_release, one break per test on the valid tiny release (2 questions, k = 2 hints: 4 passages
# each, labels 2 for the two-hint passages and 1 for the rest)


def test_a_listed_file_that_is_missing_is_named_before_anything_is_read(tiny_release):
    (tiny_release / "construction" / "questions.csv").unlink()
    assert rel.verify_release(tiny_release) == ["construction/questions.csv: missing"]
    with pytest.raises(rel.ReleaseError, match=r"fails its checks:\n- construction/questions\.csv: missing$"):
        rel.load_release(tiny_release)


def test_qrels_naming_a_passage_outside_the_corpus(tiny_release):
    qrels = tiny_release / "qrels" / "test.qrels"
    with open(qrels, "a", encoding="utf-8") as fh:
        fh.write("t_a_1 0 t_z_9_1_0 1\n")
    _rehash(tiny_release, "qrels/test.qrels")
    # the fifth label also no longer matches t_a_1's 4 own passages
    assert rel.verify_release(tiny_release) == [
        "qrels of t_a_1 name 't_z_9_1_0', which is not in the corpus",
        "t_a_1: 5 labels for 4 own passages",
    ]


def test_a_question_with_another_number_of_passages_than_its_k_hints_make(tiny_release):
    """k hints make Σ_j C(k, j)·j! passages: k = 2 → 2·1 + 1·2 = 4 (what the release holds), k = 3 →
    3·1 + 3·2 + 1·6 = 15 (what its manifest now says; the manifest is not among the hashed files)."""
    assert (n_subset_permutations(2), n_subset_permutations(3)) == (4, 15)
    path = tiny_release / rel.MANIFEST
    m = json.loads(path.read_text(encoding="utf-8"))
    m["build"]["parameters"]["k_hints"] = 3
    path.write_text(json.dumps(m), encoding="utf-8")
    assert rel.verify_release(tiny_release) == [
        "t_a_1: 4 passages, expected 15", "t_b_1: 4 passages, expected 15",
    ]


def test_labels_that_do_not_match_the_passages(tiny_release):
    qrels = tiny_release / "qrels" / "test.qrels"
    lines = qrels.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if line.split()[2] != "t_a_1_11_01"]  # one own passage left unlabelled
    assert len(kept) == len(lines) - 1 == 7
    qrels.write_text("".join(kept), encoding="utf-8")
    _rehash(tiny_release, "qrels/test.qrels")
    assert rel.verify_release(tiny_release) == ["t_a_1: 3 labels for 4 own passages"]


def _release_with_judgments(tmp_path: Path, rows: list[dict]) -> Path:
    """The tiny release whose control judgments are the valid one of ``tiny_release`` plus ``rows``."""
    valid = {"corpus": "answer-containing, LLM-judged", "qid": "t_a_1", "pid": "ref:t_a_1", "label": 2}
    judgments = pd.DataFrame([{"answer": "Mirror", "source": "pooled", **r} for r in [valid, *rows]])
    return rel.write_release(_build_folder(tmp_path), tmp_path / "release", {"name": "tiny"},
                             control_corpus={"ref:t_a_1": "A mirror reflects light."}, judgments=judgments)


JUDGMENT_PROBLEMS = [
    ("unknown question", {"corpus": "answer-containing, LLM-judged", "qid": "t_z_9", "pid": "ref:t_a_1",
                          "label": 2},
     "judgment of unknown question 't_z_9'"),
    ("passage in neither corpus", {"corpus": "answer-containing, LLM-judged", "qid": "t_a_1",
                                   "pid": "ref:nowhere", "label": 2},
     "t_a_1: judged passage 'ref:nowhere' is in neither corpus"),
    ("label outside 1, 2", {"corpus": "answer-supporting, LLM-judged", "qid": "t_b_1", "pid": "t_b_1_11_01",
                            "label": 0},
     "t_b_1 t_b_1_11_01: judgment label 0 outside {1, 2}"),
]


@pytest.mark.parametrize("case", JUDGMENT_PROBLEMS, ids=[c[0] for c in JUDGMENT_PROBLEMS])
def test_each_control_judgment_problem_is_named(tmp_path, case):
    """A judged passage may be in either corpus (``t_b_1_11_01`` is a supporting passage): only the
    label is wrong in the third case."""
    _name, row, message = case
    assert rel.verify_release(_release_with_judgments(tmp_path, [row])) == [message]


def test_at_most_five_problems_of_a_kind_are_listed(tmp_path):
    rows = [{"corpus": "answer-containing, LLM-judged", "qid": f"x{i}", "pid": "ref:t_a_1", "label": 2}
            for i in range(7)]
    # written sorted by corpus, qid, pid: x0 … x4 listed, x5 and x6 counted
    assert rel.verify_release(_release_with_judgments(tmp_path, rows)) == [
        *(f"judgment of unknown question 'x{i}'" for i in range(5)), "… and 2 more judgments problems",
    ]


def test_a_write_that_fails_leaves_the_old_release(tiny_release, tmp_path, monkeypatch):
    before = sha256_file(tiny_release / rel.MANIFEST)

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(rel.shutil, "copytree", boom)
    with pytest.raises(OSError, match="disk full"):
        rel.write_release(tmp_path / "build", tiny_release, {"name": "tiny"})
    assert sha256_file(tiny_release / rel.MANIFEST) == before and rel.verify_release(tiny_release) == []
    assert not list(tiny_release.parent.glob(".release.new-*"))


def test_install_reuses_the_same_release_and_refuses_another_dataset(tiny_release, tmp_path, monkeypatch):
    from inferqa_utils.construction.export_build import BuildConflictError
    from inferqa_utils.core.config import Paths

    monkeypatch.setattr(rel, "PATHS", Paths(tmp_path / "root"))
    target = rel.install_release(tiny_release, "tiny", log=lambda s: None)
    m = json.loads((target / "manifest.json").read_text(encoding="utf-8"))
    assert m["release"]["manifest_sha256"] == sha256_file(tiny_release / rel.MANIFEST)
    assert (target / rel.CONTROL_JUDGMENTS).is_file() and (target / "test.json").is_file()
    said = []
    rel.install_release(tiny_release, "tiny", log=said.append)
    assert "reusing it" in said[0]
    (target / "manifest.json").write_text(json.dumps({"fingerprint": "abc"}), encoding="utf-8")
    with pytest.raises(BuildConflictError, match="a build with fingerprint abc"):
        rel.install_release(tiny_release, "tiny", log=lambda s: None)
    rel.install_release(tiny_release, "tiny", overwrite=True, log=lambda s: None)
    assert json.loads((target / "manifest.json").read_text(encoding="utf-8"))["release"]


def test_agreement_counts_passages_by_text_and_kappa(tiny_release, tmp_path):
    from types import SimpleNamespace

    ds = rel.load_release(tiny_release)
    new = rel.load_release(tiny_release)
    flip = next(p for p, v in new.qrels["t_b_1"].items() if v == 2)
    new.qrels["t_b_1"][flip] = 1
    sample = SimpleNamespace(dataset=new, config=SimpleNamespace(questions=["t_a_1", "t_b_1"]),
                             parametric=pd.DataFrame(columns=["qid", "correct"]),
                             questions=pd.DataFrame({"qid": ["t_a_1", "t_b_1"], "reason": ["", ""]}))
    a = rel.agreement(sample, ds)
    s = a.summary.set_index("measure")["value"]
    assert s["passage agreement (%)"] == 87.5  # 7 of 8 passages
    # κ: release 4×2 / 4×1, rebuilt 3×2 / 5×1 → p_o = 7/8, p_e = .5·.375 + .5·.625 = .5 → κ = .75
    assert s["Cohen's kappa"] == pytest.approx(0.75)
    assert a.disagreements["pid"].tolist() == [flip]
    assert s["label-2 passages, release"] == 4 and s["label-2 passages, rebuilt"] == 3


def test_the_agreement_summary_has_the_columns_the_registry_declares(tiny_release):
    """Notebook 01 writes ``agreement(...).summary`` as ``release_agreement`` (``index=False``), a table
    the default matrix reads (``measure`` = ``passage agreement (%)``, column ``value``) and no smoke
    run writes (the smoke profile builds instead of reading a release)."""
    from types import SimpleNamespace

    from inferqa_utils import stages

    ds = rel.load_release(tiny_release)
    sample = SimpleNamespace(dataset=rel.load_release(tiny_release),
                             config=SimpleNamespace(questions=["t_a_1", "t_b_1"]),
                             parametric=pd.DataFrame(columns=["qid", "correct"]),
                             questions=pd.DataFrame({"qid": ["t_a_1", "t_b_1"], "reason": ["", ""]}))
    summary = rel.agreement(sample, ds).summary
    assert list(summary.columns) == list(stages.RELEASE_AGREEMENT.columns)
    assert summary.set_index("measure").loc["passage agreement (%)", "value"] == 100.0  # 8 of 8 passages


# ------------------------------------------------------------------------------------ shipped
SHIPPED = rel.release_folder("embedded")
needs_release = pytest.mark.skipif(not (SHIPPED / rel.MANIFEST).is_file(), reason="no data/embedded/release")


@needs_release
def test_the_shipped_embedded_release_validates():
    assert rel.verify_release(SHIPPED) == []
    m = rel.read_manifest(SHIPPED)
    ds = rel.load_release(SHIPPED, verify=False)
    assert m["build"]["labelled_splits"] == ["test"] and len(ds.splits["test"]) == 48
    assert all(len(v) == 64 for v in [m["models"][k]["sha256"] for k in m["models"]])
    assert m["code"]["commit"] and m["steps"]["labeling"]["llm"]
    # control/judgments.tsv, counted with cut | sort | uniq -c: 1,068 rows (1,069 lines less the
    # header), 379 answer-containing (284 label 1 + 95 label 2) and 689 answer-supporting (626 + 63)
    j = rel.read_judgments(SHIPPED)
    assert list(j.columns) == rel.JUDGMENT_COLUMNS and len(j) == 1068
    assert j.groupby(["corpus", "label"]).size().to_dict() == {
        ("answer-containing, LLM-judged", 1): 284, ("answer-containing, LLM-judged", 2): 95,
        ("answer-supporting, LLM-judged", 1): 626, ("answer-supporting, LLM-judged", 2): 63,
    }


@needs_release
@pytest.mark.slow
def test_two_release_questions_relabelled_by_the_real_15b_agree(tmp_path, monkeypatch):
    """Notebook 01's check on two questions: leakage, convergence judged anew, parametric filter,
    passages and labels by the real Qwen2.5-Coder-1.5B, compared with the release."""
    from inferqa_utils.construction.build import build_dataset

    monkeypatch.setenv("INFERQA_LLM_CACHE", str(tmp_path / "llm.sqlite"))
    ds = rel.load_release(SHIPPED)
    qids = rel.sample_questions(ds, 2)
    cfg = rel.sample_config(ds, qids, "embedded-sample")
    cfg.output_dir = str(tmp_path / "sample")
    cfg.verification_file = str(tmp_path / "none.json")
    res = build_dataset(cfg, overwrite=True, progress=False, log=lambda s: None)
    a = rel.agreement(res, ds)
    s = a.summary.set_index("measure")["value"]
    assert s["passage agreement (%)"] >= 90, a.disagreements
    assert int(a.summary.set_index("measure").loc["passage agreement (%)", "n"]) > 0


def test_release_folder_names_and_paths(tmp_path):
    assert rel.release_folder("embedded").parts[-3:] == ("data", "embedded", "release")
    assert rel.release_folder(tmp_path) == tmp_path
    with pytest.raises(rel.ReleaseError, match="not a dataset release"):
        rel.read_manifest(tmp_path)
    shutil.rmtree(tmp_path)


def test_the_builds_own_readings_are_reused_not_read_again(tiny_release, tmp_path, monkeypatch):
    """Notebooks 04-07 reuse what the build read with the same model and prompt: the labelling
    answer of each passage and, from an installed release, its pooled control judgments."""
    from inferqa_utils.answering.reader import read
    from inferqa_utils.construction.store import load_built
    from inferqa_utils.core.config import Paths
    from inferqa_utils.reading.conditions import known_answers

    monkeypatch.setattr(rel, "PATHS", Paths(tmp_path / "root"))
    folder = rel.install_release(tiny_release, "tiny", log=lambda s: None)
    ds = load_built("tiny", folder=folder)
    known = known_answers(ds, LABELER)
    p = ds.passages["t_a_1_11_01"]
    q = ds.questions["t_a_1"].question
    assert known.answers[(q, p.text)] == "Mirror"
    assert known.answers[(q, "A mirror reflects light.")] == "Mirror"  # the release's control judgment
    from inferqa_utils.llm import load_llm

    reader = load_llm(LABELER, use_cache=False, shared=False, n_ctx=2048)
    outs = read(
        reader,
        [q, q, q],
        [p.text, "A mirror reflects light.", "It is a reflective surface. Unseen."],
        known=known,
        progress=False,
    )
    assert [o.answer for o in outs[:2]] == ["Mirror", "Mirror"]
    assert reader.stats.model_calls == 1  # only the unseen context reached the model
    # another model's answers are not this one's; another prompt layout is another prompt
    read(reader, [q], [p.text], known=known_answers(ds, "qwen2.5-coder-1.5b"), progress=False)
    assert reader.stats.model_calls == 2
    read(reader, [q], [p.text], known=known, layout="question-first", progress=False)
    assert reader.stats.model_calls == 3
    reader.close()


def test_a_licence_is_shipped_beside_the_release_and_hashed(tmp_path):
    licence = tmp_path / "LICENSE"
    licence.write_text("MIT License\n\nCopyright (c) 2024 Someone\n", encoding="utf-8")
    out = rel.write_release(_build_folder(tmp_path), tmp_path / "release", {"name": "tiny"}, licence=licence)
    assert (out / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert "LICENSE" in rel.read_manifest(out)["files"]
    assert rel.verify_release(out) == []


def test_a_triviahg_source_without_its_licence_is_refused(tmp_path, monkeypatch):
    from inferqa_utils.core.errors import MissingInputError
    from inferqa_utils.sources import source_licence

    (tmp_path / "triviahg").mkdir()
    (tmp_path / "triviahg" / "validation_2024.json").write_text("[]", encoding="utf-8")
    monkeypatch.setenv("INFERQA_SHARED_DATA", str(tmp_path))
    assert source_licence("embedded") is None
    with pytest.raises(MissingInputError, match=r"licence .*LICENSE is missing"):
        source_licence("triviahg-validation")
    (tmp_path / "triviahg" / "LICENSE").write_text("MIT License\n", encoding="utf-8")
    found = source_licence("triviahg-validation")
    assert found is not None and found.file == tmp_path / "triviahg" / "LICENSE"
    assert "TriviaHG" in found.attribution and "MIT" in found.attribution


def test_a_sample_is_rebuilt_from_the_release_when_its_shared_source_is_absent(tmp_path, monkeypatch):
    ds = rel.load_release(SHIPPED, verify=False)
    assert rel.sample_source(ds, "embedded") == ("embedded", "rebuilt from the source 'embedded'")
    monkeypatch.setenv("INFERQA_SHARED_DATA", str(tmp_path))  # no triviahg/ there
    source, how = rel.sample_source(ds, "triviahg-validation")
    assert source == f"quit:{ds.meta['release']}" and "not on this machine" in how
    first = ds.splits["test"][0]
    cfg = rel.sample_config(ds, [first], "s", source=source)
    assert cfg.source == source and cfg.questions == [first]
    (tmp_path / "triviahg").mkdir()
    (tmp_path / "triviahg" / "validation_2024.json").write_text("[]", encoding="utf-8")
    assert rel.sample_source(ds, "triviahg-validation")[0] == "triviahg-validation"


def test_the_shipped_triviahg_release_validates_and_carries_its_licence():
    """The triviahg profile reads this release on a machine without ../shared/data: every file's
    sha256, the QUIT shape and the labels check out, TriviaHG's MIT licence ships beside it, and
    its parameters are the triviahg profile's (notebook 01 refuses a release built otherwise)."""
    from inferqa_utils.construction.build_config import parameter_differences, profile_build_config
    from inferqa_utils.core.config import profile

    folder = rel.release_folder("triviahg-val")
    assert profile("triviahg")["release"] == "triviahg-val"
    assert rel.verify_release(folder) == []
    m = rel.read_manifest(folder)
    assert (folder / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert "LICENSE" in m["files"] and "TriviaHG" in (folder / "README.md").read_text(encoding="utf-8")
    assert m["build"]["labelled_splits"] == ["test"] and m["build"]["counts"]["per_split"]["test"] == 210
    assert parameter_differences(m["build"]["parameters"], profile_build_config("triviahg")) == []
    # control/judgments.tsv, counted with cut | sort | uniq -c: 692 rows, 242 answer-containing
    # (212 label 1 + 30 label 2) and 450 answer-supporting (435 + 15) — the triviahg matrix's
    # "fair control judged pairs (containing)" 242 and "relevant pairs (supporting)" 15
    j = rel.read_judgments(folder)
    assert list(j.columns) == rel.JUDGMENT_COLUMNS and len(j) == 692
    assert j.groupby(["corpus", "label"]).size().to_dict() == {
        ("answer-containing, LLM-judged", 1): 212, ("answer-containing, LLM-judged", 2): 30,
        ("answer-supporting, LLM-judged", 1): 435, ("answer-supporting, LLM-judged", 2): 15,
    }


def test_the_triviahg_control_corpus_comes_from_the_release_when_the_source_is_absent(tmp_path, monkeypatch):
    """Without ../shared/data, the answer-containing control corpus of a dataset read from the
    TriviaHG release is the one the release stores (its 1,000 Snippets), not only the references of
    the questions in the dataset; with the shared data it is the same corpus, read from the source."""
    from inferqa_utils import stages
    from inferqa_utils.core.config import PATHS
    from inferqa_utils.retrieval.control import control_corpus

    folder = rel.release_folder("triviahg-val")
    ds = rel.load_release(folder, verify=False)
    shared = PATHS.shared_data()
    monkeypatch.setenv("INFERQA_SHARED_DATA", str(tmp_path))  # no triviahg/ there
    corpus, qrels = control_corpus(ds, "test")
    assert corpus == stages.control_texts(folder) and len(corpus) == 1000
    assert len(corpus) > len(ds.questions)  # more than the dataset's own questions' references
    assert qrels and all(set(rel_) <= set(corpus) for rel_ in qrels.values())
    if shared is None or not (shared / "triviahg").is_dir():
        pytest.skip("../shared/data is absent: the release's control corpus is not compared with the source")
    monkeypatch.setenv("INFERQA_SHARED_DATA", str(shared))
    assert control_corpus(ds, "test") == (corpus, qrels)
