"""The question inspector: one question of a built dataset walked through every stage, read from
the files the notebooks wrote (no model call).

For a question of ``build/datasets/<name>/`` it gathers

- **01** its hints with convergence and kept / dropped reason (``hints.csv``), its status and split
  (``questions.csv``), the closed-book answers of the parametric filter (``parametric.csv``), its
  passages with labels (qrels) and the labelers' answers (the split files, the labeling checkpoint:
  which answers the judge accepted);
- **02/03/05/07** where every stored run ranked its label-2 passages (``build/runs/<name>/supporting``,
  :func:`inferqa_utils.stages.run_dir`), as a table and a small rank plot;
- **04** the reader's answer per setting (pipeline k, oracle, Optimal) with strict EM and the judge
  (:data:`inferqa_utils.stages.READING_ANSWERS`);
- **06** its EM pattern over the top N and the passage types IZ / DP / DN / SP / SN
  (:data:`inferqa_utils.stages.PATTERNS`).

What is missing is named with the notebook that writes it (:data:`inferqa_utils.stages.NOTEBOOKS`:
``run notebook 04_reading (python -m inferqa_utils run --only 04)``; with ``--profile NAME`` when
the inspector is given the profile).
The construction tables are read from the build folder or, in an installed release, from its
``construction/`` folder. :class:`QuestionInspector` reads each file once;
:meth:`QuestionInspector.report` returns a :class:`QuestionReport` (tables as pandas frames),
:meth:`QuestionReport.show` displays it, :meth:`QuestionReport.text` renders it as plain text (the
``python -m inferqa_utils inspect QID`` command), :func:`inspector_widget` is the ipywidgets picker
over it. ipywidgets, IPython and matplotlib are imported only when something is displayed.
"""

from __future__ import annotations

import difflib
import html
import re
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import stages
from ..construction.store import built_dir, built_labels, construction_table, load_built
from ..core.config import run_command
from ..core.errors import UnknownNameError
from ..ir.trec import read_run
from ..present.show import question_label
from ..stages import NOTEBOOKS, Stage, run_stage

if TYPE_CHECKING:
    import pandas as pd

    from ..ir.datamodel import Dataset

#: passage types of paper 004 §5.1 in the order the inspector counts them
PASSAGE_TYPES = ("IZ", "DP", "DN", "SP", "SN")


#: the report's tables: attribute, heading, columns wrapped, shown when empty
SECTIONS = (
    ("hints", "01 · hints — convergence, kept (top-k) or why not", ("text", "reason"), True),
    (
        "closed_book",
        "01 · parametric filter — closed-book answers (a correct one makes the question parametric → train)",
        ("answer",),
        False,
    ),
    (
        "passages",
        "01 · passages — label (2: a labeler's answer accepted; 1: not; own passages only) and the "
        "labelers' answers (✓ accepted)",
        ("text", "answers"),
        True,
    ),
    (
        "ranks",
        "02 · 03 · 05 · 07 · retrieval — where each run ranks the question's label-2 passages (— : not in "
        "the "
        "run's top depth)",
        ("ranks",),
        False,
    ),
    (
        "readings",
        "04 · reading — the reader's answer per setting, strict EM and the judge",
        ("answer",),
        False,
    ),
    (
        "patterns",
        "06 · damaging passages — EM over the top 1…N passages (1 = correct) and the type of each "
        "passage (IZ irrelevant, DP/DN damaging, SP/SN supporting)",
        (),
        False,
    ),
)


def run_notebook_hint(nn: str, why: str, profile_name: str | None = None) -> str:
    """``"<why>: run notebook 04_reading (python -m inferqa_utils run --only 04)"``, the command
    with ``--profile NAME`` when a profile is given."""
    return f"{why}: run notebook {NOTEBOOKS[nn]} ({run_command([nn], profile_name)})"


def _id_key(qid: str) -> str:
    """A question id compared loosely: lower case, numbers without leading zeros."""
    return re.sub(r"\d+", lambda m: str(int(m.group())), qid.strip().lower())


@dataclass
class QuestionReport:
    """Everything the notebooks wrote about one question (see the module docstring)."""

    dataset: str
    qid: str
    question: str
    split: str | None
    gold: list[str]
    pool: list[str]
    qtype: str | None = None
    difficulty: str | None = None
    #: the question's row of ``questions.csv`` (status, reason, parametric, pool counts)
    status: dict[str, Any] = field(default_factory=dict)
    #: hint, text, convergence, kept, reason (every source hint, kept or not)
    hints: pd.DataFrame | None = None
    #: model, repeat, answer, em, correct, guard (the parametric filter's closed-book answers)
    closed_book: pd.DataFrame | None = None
    #: passage, hints, label, answers (labeler: answer, ✓ when accepted), text
    passages: pd.DataFrame | None = None
    #: run, notebook, depth, label-2 passages, retrieved, first rank, ranks
    ranks: pd.DataFrame | None = None
    #: setting, system, k, union, reader, answer, em, judged
    readings: pd.DataFrame | None = None
    #: system, corpus, em_pattern, judged_pattern, em_types
    patterns: pd.DataFrame | None = None
    #: what could not be shown and which notebook writes it
    notes: list[str] = field(default_factory=list)
    #: run name → ranks of the label-2 passages (1-based; for the plot)
    rank_points: dict[str, list[int]] = field(default_factory=dict)
    run_depths: dict[str, int] = field(default_factory=dict)

    @property
    def n_hints(self) -> int:
        """Hints the source gives this question (kept or not)."""
        return 0 if self.hints is None else len(self.hints)

    @property
    def n_kept(self) -> int:
        return 0 if self.hints is None else int(self.hints["kept"].astype(bool).sum())

    def type_counts(self) -> pd.DataFrame | None:
        """Passage types per run and corpus: counts of IZ / DP / DN / SP / SN over the top N."""
        import pandas as pd

        if self.patterns is None or not len(self.patterns):
            return None
        rows = []
        for _, r in self.patterns.iterrows():
            c = Counter(str(r["em_types"]).split())
            rows.append(
                {"system": r["system"], "corpus": r["corpus"], **{t: c.get(t, 0) for t in PASSAGE_TYPES}}
            )
        return pd.DataFrame(rows)

    def summary(self) -> str:
        """One line: question, split, gold, hint counts, passages and label-2 passages."""
        n2 = 0 if self.passages is None else int((self.passages["label"] == 2).sum())
        npas = 0 if self.passages is None else len(self.passages)
        return (f"{self.qid} ({self.split or self.status.get('status', '?')}): {self.n_hints} hints, "
                f"{self.n_kept} kept; {npas} passages, {n2} with label 2")

    def rank_figure(self):
        """A small strip plot: one row per run, a dot at the rank of each label-2 passage (log
        scale, up to the run's depth). ``None`` when no run holds a label-2 passage."""
        if not any(self.rank_points.values()):
            return None
        import matplotlib.pyplot as plt

        names = list(self.rank_points)
        fig, ax = plt.subplots(figsize=(9, 0.32 * len(names) + 1.0))
        for y, name in enumerate(names):
            depth = self.run_depths.get(name, 100)
            ax.plot([1, depth], [y, y], color="#ddd", lw=1, zorder=0)
            pts = self.rank_points[name]
            ax.scatter(pts, [y] * len(pts), s=18, color="#1f77b4", zorder=2)
        ax.set_yticks(range(len(names)), names, fontsize=8)
        ax.set_xscale("log")
        top = max(self.run_depths.get(n, 100) for n in names)
        ticks = [t for t in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if t <= top]
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel("rank of the question's label-2 passages (log scale)")
        ax.invert_yaxis()
        ax.set_title(f"{self.qid}: where each run ranks its label-2 passages", fontsize=9)
        fig.tight_layout()
        return fig

    def show(self) -> None:
        """Display the report in the current output (cell or widget ``Output``)."""
        from IPython.display import HTML, Markdown, display

        from ..present.show import show_table

        gold = " | ".join(self.gold)
        extra = [a for a in self.pool if a not in self.gold]
        display(
            HTML(
                f"<div class='inferqa-inspector-summary'><b>{html.escape(self.question)}</b><br>"
                f"gold: <code>{html.escape(gold)}</code>"
                + (f" · pool adds: <code>{html.escape(' | '.join(extra))}</code>" if extra else "")
                + f" · type {html.escape(str(self.qtype))}"
                f" · difficulty {html.escape(str(self.difficulty))}<br>"
                f"<span class='inferqa-hint-count'>{html.escape(self.summary())}</span></div>"
            )
        )
        for note in self.notes:
            display(HTML(f"<div class='inferqa-note' style='color:#a15c00'>⚠ {html.escape(note)}</div>"))
        for attr, heading, wrap, when_empty in SECTIONS:
            table = getattr(self, attr)
            if table is None or (not when_empty and not len(table)):
                continue
            title, _, rest = heading.partition(" — ")
            display(Markdown(f"**{title}** — {rest}"))
            show_table(table, wrap=wrap)
            if attr == "ranks":
                fig = self.rank_figure()
                if fig is not None:
                    import matplotlib.pyplot as plt

                    display(fig)
                    plt.close(fig)
            elif attr == "patterns":
                counts = self.type_counts()
                if counts is not None:
                    show_table(counts, wrap=())

    def text(self, width: int = 100) -> str:
        """The report as plain text for a terminal: what :meth:`show` displays but the rank plot
        (the ranks are in the retrieval table), every value in full, lines wrapped at ``width``."""
        import textwrap

        from ..present.show import plain_table

        extra = [a for a in self.pool if a not in self.gold]
        head = [f"{self.qid} · {self.question}", f"gold: {' | '.join(self.gold)}"]
        if extra:
            head.append(f"pool adds: {' | '.join(extra)}")
        head += [
            f"dataset {self.dataset} · split {self.split} · type {self.qtype} · difficulty {self.difficulty}",
            self.summary(),
        ]
        status = {k: v for k, v in self.status.items() if k not in ("qid", "question", "answer")}
        if status:
            head.append("questions.csv: " + ", ".join(
                f"{k} {int(v) if isinstance(v, float) and v.is_integer() else v}" for k, v in status.items()))
        head += [f"note: {n}" for n in self.notes]
        lines = [
            textwrap.fill(h, width=max(width, 40), subsequent_indent="  ", break_on_hyphens=False)
            for h in head
        ]
        for attr, heading, wrap, when_empty in SECTIONS:
            table = getattr(self, attr)
            if table is None or (not when_empty and not len(table)):
                continue
            lines += ["", textwrap.fill(heading, width=max(width, 40), subsequent_indent="  "),
                      plain_table(table, wrap=wrap, width=width) if len(table) else "  (none)"]
            counts = self.type_counts() if attr == "patterns" else None
            if counts is not None:
                lines += [
                    "",
                    "06 · passage types over the top N per run and corpus",
                    plain_table(counts, wrap=(), width=width),
                ]
        return "\n".join(lines)


class QuestionInspector:
    """Reads a built dataset's stage outputs once and reports on any of its questions.

    ``split`` is the split notebooks 02–07 analysed (their ``split`` parameter, ``"test"`` in every
    profile); ``corpus_tag`` the corpus of the runs (:class:`~inferqa_utils.stages.Corpus`, by default
    the answer-supporting hint passages); ``profile_name``
    the profile whose outputs these are, named in the commands of what is missing (``None``: the
    commands name no profile)."""

    def __init__(self, dataset_name: str, split: str = "test", corpus_tag: str = stages.Corpus.SUPPORTING,
                 profile_name: str | None = None) -> None:
        self.name = dataset_name
        self.split = split
        self.corpus_tag = corpus_tag
        self.profile = profile_name
        self.folder = built_dir(dataset_name)
        self._ds: Dataset | None = None
        self._tables: dict[str, Any] = {}
        self._runs: dict[str, tuple[str, dict[str, list[tuple[str, float]]]]] | None = None

    # -- inputs -------------------------------------------------------------------------------
    @property
    def built(self) -> bool:
        return (self.folder / "manifest.json").exists()

    def missing_build(self) -> str:
        return self._hint(Stage.CONSTRUCTION, f"no built dataset {self.name!r} in {self.folder}")

    def _hint(self, nn: str, why: str) -> str:
        return run_notebook_hint(nn, why, self.profile)

    @property
    def dataset(self) -> Dataset:
        if self._ds is None:
            self._ds = load_built(self.name)
        return self._ds

    def _csv(self, path: Path) -> pd.DataFrame | None:
        key = str(path)
        if key not in self._tables:
            import pandas as pd

            self._tables[key] = pd.read_csv(path, dtype={"em_pattern": str, "judged_pattern": str},
                                            keep_default_na=False, na_values=[""]) if path.exists() else None
        return self._tables[key]

    def _labels(self) -> dict[str, Any]:
        if "labels" not in self._tables:
            self._tables["labels"] = built_labels(self.folder)
        return self._tables["labels"]

    def runs(self) -> dict[str, tuple[str, dict[str, list[tuple[str, float]]]]]:
        """``{run name: (notebook, run)}`` for every run file of the dataset (notebook 07's method
        runs, :data:`~inferqa_utils.stages.METHODS_FOLDER`, as ``07 · <name>``), read once, in
        stage order."""
        if self._runs is None:
            folder = stages.run_dir(self.name, self.corpus_tag)
            methods = folder / stages.METHODS_FOLDER
            found: dict[str, tuple[str, dict[str, list[tuple[str, float]]]]] = {}
            for path in sorted(folder.glob("*.trec")) if folder.is_dir() else []:
                found[path.stem] = (run_stage(path.stem), read_run(path))
            for path in sorted(methods.glob("*.trec")) if methods.is_dir() else []:
                stage = run_stage(path.stem, in_beyond=True)
                found[f"{stage} · {path.stem}"] = (stage, read_run(path))
            self._runs = dict(sorted(found.items(), key=lambda kv: (kv[1][0], kv[0])))
        return self._runs

    def question_ids(self, split: str | None = None) -> list[str]:
        """The built questions, the analysed split first (in split order), then the others."""
        ds = self.dataset
        first = [q.qid for q in ds.split(split or self.split)] if (split or self.split) in ds.splits else []
        return first + [qid for qid in ds.questions if qid not in set(first)]

    def split_of(self, qid: str | None) -> str | None:
        """The split of a built question (None when it is not built)."""
        return next((s for s, ids in self.dataset.splits.items() if qid in ids), None)

    def default_question(self, question_id: str | None = None) -> str:
        """``question_id`` when it is in the analysed split, else the first analysed question with
        a label-2 passage (the most to show), else the first built question."""
        ds = self.dataset
        analysed = ds.split(self.split) if self.split in ds.splits else []
        if question_id in {q.qid for q in analysed}:
            return question_id  # type: ignore[return-value]
        with_rel = [q.qid for q in analysed if self.has_label2(q.qid)]
        return (with_rel or self.question_ids())[0]

    def has_label2(self, qid: str) -> bool:
        """Whether a passage of ``qid`` is labelled 2 in the build's qrels."""
        return any(v == 2 for v in self.dataset.qrels.get(qid, {}).values())

    def why_default(self, qid: str) -> str:
        """How :meth:`default_question` chose ``qid``, in words (notebook 00 prints it)."""
        if self.has_label2(qid):
            return f"the first {self.split} question with a label-2 passage"
        where = self.split_of(qid)
        return (f"the first {where} question (no {self.split} question has a label-2 passage)" if where
                else "the first built question")

    def unknown_question(self, qid: str) -> str:
        """One line: ``qid`` is not a built question, with the closest built ids (or a few)."""
        ids = self.question_ids()
        same = [i for i in ids if _id_key(i) == _id_key(qid)]  # emb_loc_5, EMB_LOC_05 → emb_loc_05
        close = [*same, *(i for i in difflib.get_close_matches(qid, ids, n=5, cutoff=0.6) if i not in same)][
            :5
        ]
        return (f"question {qid!r} is not in the built dataset {self.name!r} ({len(ids)} questions); "
                + (f"close matches: {', '.join(close)}" if close else f"e.g. {', '.join(ids[:5])}"))

    # -- one question -------------------------------------------------------------------------
    def report(self, qid: str) -> QuestionReport:
        """Everything written about ``qid`` (a built question), read from files."""
        import pandas as pd

        ds = self.dataset
        if qid not in ds.questions:
            raise UnknownNameError(self.unknown_question(qid))
        q = ds.questions[qid]
        split = next((s for s, ids in ds.splits.items() if qid in ids), None)
        gold = list(q.meta.get("gold_answers") or q.answers)
        rep = QuestionReport(self.name, qid, q.question, split, gold, list(q.answers), q.qtype, q.difficulty)
        notes = rep.notes

        qtab = self._csv(construction_table(self.folder, "questions.csv"))
        if qtab is not None:
            row = qtab[qtab["qid"] == qid]
            if len(row):
                rep.status = {k: v for k, v in row.iloc[0].to_dict().items() if pd.notna(v)}
        htab = self._csv(construction_table(self.folder, "hints.csv"))
        if htab is None:
            notes.append(
                self._hint(Stage.CONSTRUCTION, "hints.csv is missing (a build from an older version)")
            )
        else:
            rep.hints = (htab[htab["qid"] == qid].drop(columns=["qid"]).sort_values("hint")
                         .reset_index(drop=True).fillna({"reason": ""}))
        ptab = self._csv(construction_table(self.folder, "parametric.csv"))
        if ptab is not None:
            rep.closed_book = ptab[ptab["qid"] == qid].drop(columns=["qid"]).reset_index(drop=True)

        labels = self._labels().get(qid)
        qrels = ds.qrels.get(qid, {})
        rows = []
        for p in ds.passages_of(qid):
            gens = ds.generations.get(p.pid, {})
            accepted = set(labels.accepted.get(p.pid, [])) if labels is not None else set()
            answers = "; ".join(f"{m}: {a}{' ✓' if a in accepted else ''}" for m, a in gens.items())
            rows.append({"passage": p.pid, "hints": p.n_hints, "label": qrels.get(p.pid), "answers": answers,
                         "text": p.text})
        rep.passages = pd.DataFrame(rows, columns=["passage", "hints", "label", "answers", "text"])
        labelled = ds.meta.get("labelled_splits")
        if labels is None and labelled is not None and split not in labelled:
            notes.append(
                f"the {split} split is not LLM-labelled in this build (label_splits = {labelled}): its "
                "own passages are label 1 without a labeler's answer"
            )

        analysed = split == self.split
        if not analysed:
            notes.append(f"notebooks 02–07 analyse the {self.split} split; this question is in {split}: no "
                         "runs, readings or EM patterns for it")
        if analysed:
            self._retrieval(rep, qrels)
            self._reading(rep)
            self._patterns(rep)
        return rep

    def _retrieval(self, rep: QuestionReport, qrels: dict[str, int]) -> None:
        import pandas as pd

        runs = self.runs()
        if not runs:
            rep.notes.append(
                self._hint(Stage.RETRIEVAL, f"no stored runs in {stages.run_dir(self.name, self.corpus_tag)}")
            )
            return
        if not any(nb == Stage.RERANKING for nb, _ in runs.values()):
            rep.notes.append(self._hint(Stage.RERANKING, "no reranked run"))
        rel = {pid for pid, label in qrels.items() if label == 2}
        if not rel:
            rep.notes.append("no label-2 passage: no labeler's answer was accepted on any of its passages, "
                             "so there is no rank to show")
            return
        rows = []
        for name, (nb, run) in runs.items():
            ranking = run.get(rep.qid)
            if ranking is None:
                continue
            ranks = [r for r, (pid, _) in enumerate(ranking, 1) if pid in rel]
            rep.rank_points[name] = ranks
            rep.run_depths[name] = len(ranking)
            rows.append({"run": name, "notebook": nb, "depth": len(ranking), "label-2 passages": len(rel),
                         "retrieved": len(ranks), "first rank": ranks[0] if ranks else "—",
                         "in top 10": sum(r <= 10 for r in ranks),
                         "ranks": " ".join(map(str, ranks[:20])) + (" …" if len(ranks) > 20 else "")})
        if rows:
            rep.ranks = pd.DataFrame(rows)
        else:
            rep.notes.append(self._hint(Stage.RETRIEVAL, f"no stored run ranks {rep.qid}"))

    def _reading(self, rep: QuestionReport) -> None:
        path = stages.READING_ANSWERS.path(self.name, self.split)
        tab = self._csv(path)
        if tab is None:
            rep.notes.append(self._hint(stages.READING_ANSWERS.stage, f"no readings ({path.name})"))
            return
        rows = tab[tab["qid"] == rep.qid]
        order = {"pipeline": 0, "oracle": 1, "Optimal": 2}
        cols = [
            c for c in ("setting", "system", "k", "union", "reader", "answer", "em", "judged") if c in rows
        ]
        rows = rows.assign(_o=rows["setting"].map(order).fillna(9)).sort_values(
            ["_o", "reader", "system", "k", "union"]).drop(columns="_o")
        rep.readings = rows[cols].reset_index(drop=True)
        if "k" in rep.readings:
            rep.readings["k"] = rep.readings["k"].astype("Int64")

    def _patterns(self, rep: QuestionReport) -> None:
        path = stages.PATTERNS.path(self.name, self.split)
        tab = self._csv(path)
        if tab is None:
            rep.notes.append(self._hint(stages.PATTERNS.stage, f"no EM patterns ({path.name})"))
            return
        cols = [c for c in ("system", "corpus", "em_pattern", "judged_pattern", "em_types") if c in tab]
        rep.patterns = tab[tab["qid"] == rep.qid][cols].reset_index(drop=True)

    # -- widget -------------------------------------------------------------------------------
    def widget(self, question_id: str | None = None):
        """A full-width question dropdown over the built questions and an output area showing the
        selected question's report at once and after every change (files only: fast)."""
        import ipywidgets as w

        if not self.built:
            box = w.VBox([w.HTML(f"<div class='inferqa-note'>⚠ {html.escape(self.missing_build())}</div>")])
            box.add_class("inferqa-inspector")
            return box
        ds = self.dataset
        ids = self.question_ids()
        split_of = {qid: s for s, qs in ds.splits.items() for qid in qs}
        value = question_id if question_id in ds.questions else ids[0]
        picker = w.Dropdown(
            options=[(f"[{split_of.get(i, '?')}] {question_label(ds.questions[i])}", i) for i in ids],
            value=value,
            description="inspect",
            style={"description_width": "initial"},
            layout=w.Layout(width="95%", max_width="70em"),
        )
        line = w.HTML()
        out = w.Output()

        def show(qid: str) -> None:
            t0 = time.perf_counter()
            line.value = (
                f"<span class='inferqa-status'>reading the stored outputs of {html.escape(qid)}…</span>"
            )
            with out:
                out.clear_output(wait=True)
                try:
                    self.report(qid).show()
                except Exception as e:  # shown in the widget, not only in JupyterLab's log console
                    line.value = (f"<span class='inferqa-status' style='color:#b00020'>{html.escape(qid)}: "
                                  f"{html.escape(type(e).__name__)}: {html.escape(str(e))}</span>")
                    traceback.print_exc()
                    return
            line.value = (
                f"<span class='inferqa-status'>{html.escape(qid)}: read from {html.escape(str(self.folder))}"
                f" and results/ in {time.perf_counter() - t0:.1f} s (no model call)</span>"
            )

        picker.observe(lambda change: show(change["new"]), names="value")
        box = w.VBox([picker, line, out])
        box.add_class("inferqa-inspector")
        box.show = show  # type: ignore[attr-defined]
        show(value)
        return box


def inspector_widget(dataset_name: str, question_id: str | None = None, split: str = "test"):
    """The inspector as an ipywidgets picker (see :meth:`QuestionInspector.widget`); on a dataset
    that is not built yet it says which notebook to run."""
    return QuestionInspector(dataset_name, split).widget(question_id)


def show_inspector(dataset_name: str, question_id: str | None = None, interactive: bool = True,
                   split: str = "test") -> QuestionReport | None:
    """Notebook 00's inspector cell: the widget when ``interactive`` (JupyterLab), else the static
    report of ``question_id`` (or of the first analysed question when it is not built: a smoke
    build holds 4 questions), so a headless run exercises the same code. On a dataset that is not
    built yet it prints which notebook to run. Returns the report shown headless, else None."""
    from IPython.display import display

    ins = QuestionInspector(dataset_name, split)
    if not ins.built:
        print(ins.missing_build())
        return None
    qid = ins.default_question(question_id)
    if qid != question_id:
        where = ins.split_of(question_id) if question_id else None
        print(
            f"{question_id} is {'in the ' + where + ' split' if where else 'not built'} (notebooks 02–07 "
            "analyse "
            f"{split}): showing {qid}, {ins.why_default(qid)}; pick any question above"
        )
    if interactive:
        display(ins.widget(qid))
        return None
    rep = ins.report(qid)
    rep.show()
    return rep


def describe_inputs(dataset_name: str, split: str = "test") -> dict[str, dict[str, Any]]:
    """Which stage outputs of ``dataset_name`` exist (path → bool), for a quick look or a test."""
    paths = {"build": built_dir(dataset_name) / "manifest.json",
             "runs": stages.run_dir(dataset_name, stages.Corpus.SUPPORTING),
             "readings": stages.READING_ANSWERS.path(dataset_name, split),
             "patterns": stages.PATTERNS.path(dataset_name, split)}
    return {k: {"path": str(v), "exists": v.exists()} for k, v in paths.items()}


def inspector_sentence(dataset_name: str, question_id: str | None = None, split: str = "test") -> str:
    """The sentence that closes notebook 00's inspector section, read from the stored outputs (no
    model call): the inspected question's hints, passages and label-2 passages, the best rank a
    stored run gives one of them, and how many stored readings were right; or which notebook to
    run when the dataset is not built yet."""
    ins = QuestionInspector(dataset_name, split)
    if not ins.built:
        return ins.missing_build()
    qid = ins.default_question(question_id)
    rep = ins.report(qid)
    text = rep.summary()
    if qid != question_id:
        text = f"{question_id} is not analysed in {split}, so the inspector shows {qid}: " + text
    best = {name: min(pts) for name, pts in rep.rank_points.items() if pts}
    if best:
        top = min(best.values())
        runs = [n for n, r in best.items() if r == top]
        text += (
            f"; the best rank of a label-2 passage is {top} ({', '.join(runs[:3])}"
            + (f" and {len(runs) - 3} more" if len(runs) > 3 else "")
            + f") over {len(rep.rank_points)} runs"
        )
    if rep.readings is not None and len(rep.readings):
        right = int(rep.readings["em"].astype(str).str.lower().isin(["true", "1"]).sum())
        text += f"; {right} of {len(rep.readings)} stored readings are right by strict EM"
    return text + "."
