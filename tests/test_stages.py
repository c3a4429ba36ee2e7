"""The stage contract (inferqa_utils.stages): every result table, figure and run is named, placed
and read through its registry, by the notebooks and by every module that reads an earlier stage."""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import nbformat
import pytest
import yaml

import inferqa_utils
from inferqa_utils import stages
from inferqa_utils.core.config import PATHS, PROFILE_ENV
from inferqa_utils.core.errors import DataFormatError, MissingInputError, UnknownNameError
from inferqa_utils.paper_runs import export as paper_runs_export
from inferqa_utils.record.run_dirs import discover_notebooks
from inferqa_utils.stages import FIGURES, TABLES, Corpus, Stage
from inferqa_utils.verdicts import check

PKG = Path(inferqa_utils.__file__).parent
NOTEBOOK_FILES = discover_notebooks()

#: every result table's file for dataset ``D`` and split ``S``: the names on disk, pinned
FILES = {
    "quickstart_answers": "00_quickstart_answers.csv",
    "table1": "01_D_table1.csv",
    "release_agreement": "01_D_release_agreement.csv",
    "release_agreement_passages": "01_D_release_agreement_passages.csv",
    "retrieval_metrics": "02_D_S_retrieval.csv",
    "retrieval_compared": "02_D_S_compared.csv",
    "cross_corpus": "02_D_S_cross_corpus.csv",
    "passage_lengths": "02_D_S_passage_lengths.csv",
    "pooled_judgments": "02_D_S_pooled_judgments.csv",
    "fair_corpora": "02_D_S_fair_corpora.csv",
    "fair_comparison": "02_D_S_fair_comparison.csv",
    "retrieval_per_question": "02_D_S_per_question.csv",
    "reranking": "03_D_S_reranking.csv",
    "reranking_compared": "03_D_S_compared.csv",
    "reranking_per_question": "03_D_S_per_question.csv",
    "oracle_reranker": "03_D_S_oracle_reranker.csv",
    "reading_answers": "04_D_S_answers.csv",
    "reading_em": "04_D_S_em.csv",
    "table8": "04_D_S_table8.csv",
    "hints_distribution": "04_D_S_hints_distribution.csv",
    "hint_passages": "04_D_S_hint_passages.csv",
    "ft_training_times": "05_D_training_times.csv",
    "ft_retrieval": "05_D_S_retrieval.csv",
    "ft_compared": "05_D_S_compared.csv",
    "ft_per_question": "05_D_S_per_question.csv",
    "ft_oracle_reranker": "05_D_S_oracle_reranker.csv",
    "ft_reranking": "05_D_S_reranking.csv",
    "ft_answers": "05_D_S_answers.csv",
    "ft_reading": "05_D_S_reading.csv",
    "patterns": "06_D_S_patterns.csv",
    "em_curves": "06_D_S_em_curves.csv",
    "passage_types": "06_D_S_types.csv",
    "probe_curves": "06_D_S_probe_curves.csv",
    "probe_readings": "06_D_S_probe_readings.csv",
    "probes": "06_D_S_probes.csv",
    "ser": "06_D_S_ser.csv",
    "ser_readings": "06_D_S_ser_readings.csv",
    "damaging_comparison": "06_D_S_comparison.csv",
    "damaging_intervals": "06_D_S_intervals.csv",
    "beyond_answers": "07_D_S_answers.csv",
    "beyond_report": "07_D_S_report.csv",
    "beyond_em_compared": "07_D_S_em_compared.csv",
    "findings": "07_D_S_findings.csv",
    "yours_compared": "08_D_S_compared.csv",
    "yours_answers": "08_D_S_answers.csv",
    "paper_runs_retrieval": "09_D_S_retrieval.csv",
    "paper_runs_em": "09_D_S_em.csv",
    "paper_runs_findings": "09_D_S_findings.csv",
    "paper_runs_findings_summary": "09_D_S_findings_summary.csv",
    "paper_runs_import": "09_D_S_import.json",
}

#: every figure's file for dataset ``D``: the names on disk, pinned
FIGURE_FILES = {
    "convergence": "01_D_convergence_kept_vs_dropped.png",
    "labels_by_hints": "01_D_labels_by_hints.png",
    "hit_curves": "02_D_hit_curves.png",
    "reranking": "03_D_reranking.png",
    "em_settings": "04_D_em_settings.png",
    "hints_distribution": "04_D_hints_distribution.png",
    "finetuning": "05_D_finetuning.png",
    "em_acem_curves": "06_D_em_acem_curves.png",
    "passage_types": "06_D_passage_types.png",
    "probes": "06_D_probes.png",
    "ser": "06_D_ser.png",
    "beyond_report": "07_D_report.png",
    "yours_compared": "08_D_compared.png",
}

#: stages whose notebook writes its tables through one package function rather than ``to_csv``
#: cells: the function, and the registry tables it writes. Stage 09's tables are the import of the
#: paper's released runs, which ``python -m inferqa_utils paper-runs import`` writes without the
#: notebook too (it also writes its dataset's per-question and answers tables of 02-05).
WRITTEN_BY_THE_PACKAGE = {Stage.PAPER_RUNS: ("import_release", paper_runs_export.written_tables)}


def _code_cells(path: Path) -> list[ast.Module]:
    nb = nbformat.read(path, as_version=4)
    return [ast.parse(c.source) for c in nb.cells if c.cell_type == "code"]


def _strings(tree: ast.AST, skip_docstrings: bool = False) -> list[str]:
    """Every string literal of ``tree``, an f-string as its text with ``{}`` for each field."""
    docstrings = set()
    if skip_docstrings:
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                    and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                docstrings.add(id(body[0].value))
    inner = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            out.append("".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in inner \
                and id(node) not in docstrings:
            out.append(node.value)
    return out


def _spells_an_output(text: str) -> bool:
    """A literal that names a result file, a figure file, a run file or a producing notebook (the
    registry's job)."""
    numbered = re.search(r"(^|[^\w])0\d_", text) is not None  # <NN>_…, a stage's file
    return (any(stem in text for stem in stages.NOTEBOOKS.values()) or ".trec" in text or "results/" in text
            or "figures/" in text or re.match(r"0\d_", text) is not None
            or (numbered and (".csv" in text or ".png" in text)))


def _stages_attribute(node: ast.AST) -> str | None:
    """``NAME`` of an expression ``stages.NAME`` (else None)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "stages":
        return node.attr
    return None


def _method_calls(nb: Path, method: str) -> list[tuple[str | None, ast.Call]]:
    """Every call ``<x>.<method>(…)`` in the notebook's code cells, with ``NAME`` when ``<x>`` is
    ``stages.NAME`` (else None)."""
    return [(_stages_attribute(n.func.value), n) for tree in _code_cells(nb) for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == method]


# ----------------------------------------------------------------------------- the registry


def test_the_stage_list_is_the_notebook_folder():
    assert sorted(stages.NOTEBOOKS.values()) == [p.stem for p in NOTEBOOK_FILES]
    assert [s.notebook[:2] for s in Stage] == [s.value for s in Stage] == sorted(stages.NOTEBOOKS)


def test_table_files_are_the_names_on_disk():
    """The registry keys and the file names they give: a renamed key or file fails here."""
    assert {key: t.file("D", "S") for key, t in TABLES.items()} == FILES
    assert all(getattr(stages, key.upper()) is t for key, t in TABLES.items())
    assert stages.TABLE1.path("embedded") == PATHS.results / "01_embedded_table1.csv"
    assert stages.RERANKING.path("d", "test", Path("/x")) == Path("/x/03_d_test_reranking.csv")
    assert stages.TABLE1.notebook == "01_dataset_construction"
    with pytest.raises(ValueError, match="per split"):
        stages.RETRIEVAL_METRICS.file("D")
    with pytest.raises(UnknownNameError, match="reading_em"):
        stages.table("reading-em")


def test_figure_files_are_the_names_on_disk():
    """The figure registry's keys and the file names they give (``<KEY>_FIGURE`` the constant)."""
    assert {key: f.file("D") for key, f in FIGURES.items()} == FIGURE_FILES
    assert all(getattr(stages, f"{key.upper()}_FIGURE") is f for key, f in FIGURES.items())
    assert stages.PASSAGE_TYPES_FIGURE.path("embedded") == PATHS.figures / "06_embedded_passage_types.png"
    assert stages.HIT_CURVES_FIGURE.path("d", Path("/x")) == Path("/x/02_d_hit_curves.png")
    assert stages.BEYOND_REPORT_FIGURE.notebook == "07_beyond"
    assert [f.key for f in stages.figures_of(Stage.READING)] == ["em_settings", "hints_distribution"]
    with pytest.raises(ValueError, match="per dataset"):
        stages.SER_FIGURE.file()


def test_a_figure_is_saved_under_its_registry_name(tmp_path):
    """:meth:`Figure.save` writes what ``save_figure`` writes under the registry's file name."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from inferqa_utils.present.figures import save_figure

    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.plot([0, 1, 2], [2, 0, 1])
    path = stages.PROBES_FIGURE.save(fig, "mine", tmp_path / "figs")
    assert path == tmp_path / "figs" / "06_mine_probes.png"
    assert path.read_bytes() == save_figure(fig, "by_hand", tmp_path).read_bytes()
    plt.close(fig)


def test_a_table_is_written_as_to_csv_writes_it(tmp_path):
    """:meth:`Table.write` gives the bytes of ``DataFrame.to_csv`` with the same ``index``: floats
    as pandas writes them, the index's name first when the index is written."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(7)
    df = pd.DataFrame({"run": ["bm25", "e5", "x,y"], "Hit@10": rng.random(3) * 100,
                       "n": [3, 2, 1], "p": [1e-12, float("nan"), 0.1 + 0.2]}).set_index("run")
    for index in (True, False):
        path = stages.RETRIEVAL_METRICS.write(df, "D", "S", index=index, folder=tmp_path / str(index))
        assert path == tmp_path / str(index) / "02_D_S_retrieval.csv"
        df.to_csv(tmp_path / "by_hand.csv", index=index)
        assert path.read_bytes() == (tmp_path / "by_hand.csv").read_bytes()
    assert (tmp_path / "True" / "02_D_S_retrieval.csv").read_text().splitlines()[0] == "run,Hit@10,n,p"
    assert (tmp_path / "False" / "02_D_S_retrieval.csv").read_text().splitlines()[0] == "Hit@10,n,p"
    default = stages.QUICKSTART_ANSWERS.write(df, folder=tmp_path)  # to_csv's default: with the index
    assert default.name == "00_quickstart_answers.csv"
    assert default.read_bytes() == (tmp_path / "True" / "02_D_S_retrieval.csv").read_bytes()
    with pytest.raises(ValueError, match="per split"):
        stages.RETRIEVAL_METRICS.write(df, "D", folder=tmp_path)
    with pytest.raises(ValueError, match="json"):
        stages.PAPER_RUNS_IMPORT.write(df, "D", "S", folder=tmp_path)


def test_one_corpus_vocabulary():
    assert [(c.value, c.label) for c in Corpus] == [("supporting", "answer-supporting"),
                                                    ("containing", "answer-containing")]
    assert (stages.SUPPORTING, stages.CONTAINING) == ("answer-supporting", "answer-containing")
    assert stages.CONTAINING_JUDGED == "answer-containing, LLM-judged"
    assert stages.run_path("d", Corpus.CONTAINING, "bm25") == PATHS.runs / "d" / "containing" / "bm25.trec"
    assert stages.methods_dir("d") == PATHS.runs / "d" / "supporting" / "beyond"
    assert stages.index_dir("d", Corpus.SUPPORTING, "bm25s") == PATHS.indexes / "d" / "supporting" / "bm25s"
    assert stages.run_dir("d", stages.finetune_tag("train")) == PATHS.runs / "d" / "finetune-train"


# ----------------------------------------------------------------------------- runs


@pytest.mark.parametrize(
    ("name", "corpus", "notebook"),
    [
        ("bm25", Corpus.SUPPORTING, "02_retrieval"),
        ("e5-small", Corpus.CONTAINING, "02_retrieval"),
        ("bm25+pointwise", Corpus.SUPPORTING, "03_reranking"),
        ("oracle+upr", Corpus.SUPPORTING, "03_reranking"),
        ("FT-MiniLM", Corpus.SUPPORTING, "05_finetuning"),
        ("bm25+FT-CrossEncoder", Corpus.SUPPORTING, "05_finetuning"),
    ],
)
def test_a_missing_run_names_the_notebook_that_writes_it(name, corpus, notebook, monkeypatch):
    monkeypatch.delenv(
        PROFILE_ENV, raising=False
    )  # the command then names no profile (a run's kernel sets one)
    with pytest.raises(MissingInputError) as exc:
        stages.load_run("no-such-dataset", name, corpus)
    text = str(exc.value)
    assert text.startswith(
        f"missing input the {corpus} run {name!r} {stages.run_path('no-such-dataset', corpus, name)}"
    )
    assert f"run notebook {notebook} first (python -m inferqa_utils run --only {notebook[:2]})" in text


def test_load_run_restricts_to_the_questions_and_checks_the_passages():
    name = "stages-test-dataset"
    path = stages.run_path(name, Corpus.SUPPORTING, "bm25")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("q1 Q0 p2 1 2.0 bm25\nq1 Q0 p1 2 1.0 bm25\nq2 Q0 p1 1 3.0 bm25\n", encoding="utf-8")
    try:
        assert stages.load_run(name, "bm25", qids=["q1", "q3"]) == {
            "q1": [("p2", 2.0), ("p1", 1.0)],
            "q3": [],
        }
        assert set(stages.load_run(name, "bm25")) == {"q1", "q2"}
        with pytest.raises(DataFormatError, match="p2"):
            stages.load_run(name, "bm25", known_passages={"p1": "text"})
    finally:
        shutil.rmtree(PATHS.runs / name, ignore_errors=True)


# ----------------------------------------------------------------------------- the notebooks


@pytest.mark.parametrize("nb", NOTEBOOK_FILES, ids=[p.stem for p in NOTEBOOK_FILES])
def test_every_table_a_notebook_writes_is_its_registry_table(nb: Path):
    """A notebook writes its tables with ``stages.<TABLE>.write(…)`` (no ``to_csv``), each a table
    of its own stage, and writes every table the registry gives its stage — or, for a stage of
    :data:`WRITTEN_BY_THE_PACKAGE`, calls the package function that writes exactly those tables
    (each through its registry constant) and writes none itself."""
    written, stray = set(), [ast.unparse(n)[:120] for _, n in _method_calls(nb, "to_csv")]
    for const, node in _method_calls(nb, "write"):
        table = TABLES.get(const.lower()) if const else None
        if table is None or getattr(stages, const) is not table or table.stage != nb.stem[:2]:
            stray.append(ast.unparse(node)[:120])
        else:
            written.add(table.key)
    assert not stray, f"{nb.name} writes tables outside the registry of its stage: {stray}"
    own = {t.key for t in stages.tables_of(nb.stem[:2])}
    if nb.stem[:2] in WRITTEN_BY_THE_PACKAGE:
        function, tables = WRITTEN_BY_THE_PACKAGE[Stage(nb.stem[:2])]
        called = {ast.unparse(n.func).rsplit(".", 1)[-1] for tree in _code_cells(nb) for n in ast.walk(tree)
                  if isinstance(n, ast.Call)}
        assert not written and function in called, nb.name
        assert {t.key for t in tables() if t.stage == nb.stem[:2]} == own, nb.name
        assert all(TABLES[t.key] is t for t in tables())
    else:
        assert written == own, nb.name


@pytest.mark.parametrize("nb", NOTEBOOK_FILES, ids=[p.stem for p in NOTEBOOK_FILES])
def test_every_figure_a_notebook_saves_is_its_registry_figure(nb: Path):
    """A notebook saves its figures with ``stages.<KEY>_FIGURE.save(…)`` (never ``save_figure`` with
    a name of its own), each a figure of its own stage, and saves every figure the registry gives
    its stage."""
    names = {n.id for tree in _code_cells(nb) for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert "save_figure" not in names, f"{nb.name} names a figure itself: save it through stages.FIGURES"
    saved, stray = set(), []
    for const, node in _method_calls(nb, "save"):
        figure = getattr(stages, const, None) if const else None
        if not isinstance(figure, stages.Figure) or FIGURES.get(figure.key) is not figure \
                or figure.stage != nb.stem[:2]:
            stray.append(ast.unparse(node)[:120])
        else:
            saved.add(figure.key)
    assert not stray, f"{nb.name} saves figures outside the registry of its stage: {stray}"
    assert saved == {f.key for f in stages.figures_of(nb.stem[:2])}, nb.name


@pytest.mark.parametrize("nb", NOTEBOOK_FILES, ids=[p.stem for p in NOTEBOOK_FILES])
def test_notebooks_spell_no_result_file_run_file_or_producing_notebook(nb: Path):
    spelled = [s for tree in _code_cells(nb) for s in _strings(tree) if _spells_an_output(s)]
    spelled += [s for tree in _code_cells(nb) for s in _strings(tree)
                if s in {*(c.value for c in Corpus), *(c.label for c in Corpus)}]
    assert not spelled, f"{nb.name} spells what inferqa_utils.stages names: {spelled}"
    names = {n.id for tree in _code_cells(nb) for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert not names & {"result_path", "require_input", "read_run"}, nb.name


# ----------------------------------------------------------------------------- the package


def test_modules_spell_no_result_file_or_producing_notebook():
    """Outside :mod:`inferqa_utils.stages` no module names a result table's file, a producing
    notebook or a corpus label in code (docstrings may show them)."""
    found = []
    labels = {*(c.label for c in Corpus), stages.SUPPORTING_JUDGED, stages.CONTAINING_JUDGED}
    for path in sorted(PKG.rglob("*.py")):
        if path == PKG / "stages.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for s in _strings(tree, skip_docstrings=True):
            if (any(stem in s for stem in stages.NOTEBOOKS.values())
                    or (".csv" in s and re.search(r"(^|[^\w])0\d_", s)) or s in labels):
                found.append(f"{path.relative_to(PKG)}: {s!r}")
        found += [
            f"{path.relative_to(PKG)}: result_path"
            for n in ast.walk(tree)
            if isinstance(n, ast.Name | ast.alias)
            and getattr(n, "id", getattr(n, "name", None)) == "result_path"
        ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    "module",
    [
        "verdicts/findings.py", "teach/inspector.py", "verdicts/check.py", "verdicts/results_page.py",
        "beyond/comparison.py", "finetune/conditions.py", "construction/store.py", "paper_runs/contract.py",
        "paper_runs/export.py",
    ],
)
def test_every_table_a_module_reads_is_registered(module: str):
    """``stages.NAME`` and ``from .stages import NAME`` in the readers of earlier stages name what
    the registry has (a renamed table fails here, not when a notebook reaches the line)."""
    tree = ast.parse((PKG / module).read_text(encoding="utf-8"))
    used = {a for n in ast.walk(tree) if (a := _stages_attribute(n))}
    used |= {
        a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and (n.module or "").endswith("stages")
        for a in n.names
    }
    assert not [u for u in used if not hasattr(stages, u)], module
    tables = [getattr(stages, u) for u in used if isinstance(getattr(stages, u), stages.Table)]
    assert all(TABLES[t.key] is t for t in tables)


def test_the_reproduction_matrix_names_registered_tables():
    """``reproduction.yaml`` refers to tables by registry key (the notebook and the file follow
    from it); an unknown key is refused naming the condition and the closest key."""
    raw = yaml.safe_load(check.MATRIX.read_text(encoding="utf-8"))
    entries = [e for spec in raw["profiles"].values() for e in spec["conditions"]]
    assert entries and not [e["id"] for e in entries if e["table"] not in TABLES or "notebook" in e]
    for spec in check.load_matrix().values():
        assert all(TABLES[c.table.key] is c.table and c.notebook == c.table.stage for c in spec["conditions"])


def test_an_unknown_table_in_a_matrix_is_refused(tmp_path):
    bad = tmp_path / "m.yaml"
    bad.write_text("profiles:\n  smoke:\n    conditions:\n"
                   "    - {id: x, table: reading_ems, row: {}, column: EM, expected: 1}\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"condition 1 \(x\).*field 'table'.*reading_em"):
        check.load_matrix(bad)


# ----------------------------------------------------------------------------- declared columns


def _undeclared(conditions: list[check.Condition]) -> list[str]:
    """Per condition, its row keys and column that its table's schema does not declare."""
    out = []
    for c in conditions:
        if not c.table.columns:
            out.append(f"{c.id}: table {c.table.key} declares no columns")
            continue
        out += [f"{c.id}: {c.table.key} has no column {col!r}" for col in [*c.row, c.column]
                if not c.table.declares(col)]
    return out


def test_every_condition_names_columns_its_table_declares():
    """Every condition of the packaged matrix — the default and triviahg profiles' included, whose
    tables and columns (``ser`` column ``4``, ``cross_corpus``, ``ft_retrieval``,
    ``release_agreement``, ``yours_compared`` …) the smoke run never checks — names row keys and a
    column its table declares (``Table.columns``; tests/test_notebooks.py holds the smoke run's
    tables to the declarations): a renamed column fails here, in ``make test``, not after a full run."""
    matrix = check.load_matrix()
    assert {"smoke", "default", "triviahg"} <= set(matrix)
    for name, spec in matrix.items():
        assert spec["conditions"], name
        assert _undeclared(spec["conditions"]) == [], name


def test_a_renamed_column_or_row_key_is_named(tmp_path):
    bad = tmp_path / "m.yaml"
    bad.write_text(yaml.safe_dump({"profiles": {"default": {"conditions": [
        {"id": "SER m=4", "table": "ser", "row": {"corpus": "answer-supporting", "setting": "SER w/ BM25"},
         "column": "4", "expected": 1.0},
        {"id": "renamed column", "table": "retrieval_metrics", "row": {"run": "bm25"}, "column": "NDCG@10",
         "expected": 1.0},
        {"id": "renamed row key", "table": "reading_em", "row": {"model": "x", "k": 3}, "column": "EM",
         "expected": 1.0},
        {"id": "no schema", "table": "table8", "row": {}, "column": "EM", "expected": 1.0},
    ]}}}), encoding="utf-8")
    assert _undeclared(check.load_matrix(bad)["default"]["conditions"]) == [
        "renamed column: retrieval_metrics has no column 'NDCG@10'",
        "renamed row key: reading_em has no column 'model'",
        "no schema: table table8 declares no columns",
    ]


def test_a_written_header_is_held_to_the_declared_schema():
    # SER's m columns and its "EM at m = M (%)" depend on the run (patterns); setting, pairs, corpus do not
    header = ["setting", "1", "2", "3", "4", "pairs", "EM at m = 4 (%)", "corpus"]
    assert stages.SER.schema_problems(header) == []
    assert stages.SER.schema_problems(["setting", "1", "pair", "corpus"]) == [
        "ser: no column 'pairs'", "ser: undeclared column 'pair'",
    ]
    assert stages.PROBES.declares("Probe 3_lo") and not stages.PROBES.declares("Probe 3_mid")
    assert stages.TABLE8.schema_problems(["anything"]) == []  # no schema declared: nothing to hold it to


def test_writers_the_smoke_run_does_not_exercise_write_the_declared_columns():
    """SER: the smoke data has no SER gold (its table is empty), so notebook 06's writer is run here
    on four hand rows and written as the notebook writes it (index ``setting``, then ``corpus``);
    notebook 08's table is reindexed to ``compare.COLUMNS``. (``release_agreement``:
    tests/test_release.py.)"""
    import pandas as pd

    from inferqa_utils.damaging import ser
    from inferqa_utils.yourmethod import compare

    rows = [{"kind": "BM25", "qid": "q1", "sample": 0, "m": m, "base_answer": "Paris", "answer": "Paris",
             "em": True} for m in (1, 2, 3, 4)]
    t = ser.ser_table(pd.DataFrame(rows)).assign(corpus=stages.SUPPORTING)
    header = [str(c) for c in (t.index.name, *t.columns)]
    assert header == ["setting", "1", "2", "3", "4", "pairs", "EM at m = 4 (%)", "corpus"]
    assert stages.SER.schema_problems(header) == []
    assert stages.YOURS_COMPARED.columns == tuple(compare.COLUMNS)
