"""Notebook 08's one table: your system against every baseline, by paired tests over questions.

The baselines are runs the earlier notebooks stored — never recomputed: the profile's retrievers
(notebook 02), ``first_stage`` reranked by each of its rerankers (notebook 03) and, when notebook
07 ran, its methods (read from ``build/runs/<dataset>/supporting/``, :func:`baselines`); their
answers are the ones notebooks 04 and 07 stored for the same reader, ``k`` and Union_norm
(:func:`stored_answers`), so reading them costs no model call. A baseline neither notebook read
has retrieval metrics only. A run of notebook 08 without the notebooks that write what it reads
(``--only 08`` before a finished run) is refused in one line before anything runs
(:func:`require_stored`).

For each metric — graded nDCG@10 (gain 2^label − 1, paper 000 §4), Hit@10 with a passage of label
≥ ``hit_label`` counted as found (paper 000 §5.1 uses label 2) and the pipeline's strict EM (paper
000 §5.4) — :func:`compare` gives every system's mean over the questions that count, in %, with a
seeded 95 % bootstrap interval, and for every baseline the paired difference *yours − baseline* on
the questions both have, its paired-bootstrap interval, the two-sided p-value of the paired
randomization (sign-flip) test and that p Holm-adjusted over every comparison of the table
(:func:`inferqa_utils.measure.uncertainty.paired_difference`,
:func:`~inferqa_utils.measure.uncertainty.holm`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import stages
from ..core.config import run_command
from ..core.errors import MissingInputError
from ..ir.trec import Run, read_run
from ..measure.metrics import per_query
from ..measure.uncertainty import as_outcome, holm, mean_ci, paired_difference
from ..present.sentences import ALPHA, ci

if TYPE_CHECKING:
    import pandas as pd

#: the retrieval metrics of the table (Hit at ``hit_label``, nDCG graded)
RETRIEVAL_METRICS = ("nDCG@10", "Hit@10")
#: the reading metric of the table
EM = "EM"
#: the table's metrics, in order
METRICS = (*RETRIEVAL_METRICS, EM)
#: the kind of your system's rows
YOURS = "yours"
#: the columns of the table (:func:`compare`)
COLUMNS = ["metric", "system", "kind", "value", "value_lo", "value_hi", "n", "Δ", "Δ_lo", "Δ_hi", "p",
           "p_holm", "sig"]


# ----------------------------------------------------------------------------- the baselines


def baseline_names(retrievers: Sequence[str], first_stage: str, rerankers: Sequence[str]) -> dict[str, str]:
    """``{run name: kind}`` of the baselines of notebooks 02 and 03: each retriever, and
    ``first_stage`` reranked by each reranker."""
    out = {name: "retriever" for name in retrievers}
    out.update({stages.reranked_name(first_stage, r): "reranker" for r in rerankers})
    return out


def beyond_methods(dataset_name: str, split: str) -> list[str]:
    """The methods of notebook 07 whose runs exist, in its report's order (``[]`` when notebook 07
    has not run on the split)."""
    import pandas as pd

    path = stages.BEYOND_REPORT.path(dataset_name, split)
    if not path.is_file():
        return []
    report = pd.read_csv(path, index_col=0)
    names = [str(n) for n, kind in report["kind"].items() if kind == "method"] if "kind" in report else []
    folder = stages.methods_dir(dataset_name)
    return [n for n in names if stages.run_dir_file(folder, n).is_file()]


def baselines(dataset_name: str, kinds: Mapping[str, str], qids: Sequence[str], corpus: Mapping[str, str],
              methods: Sequence[str] = ()) -> tuple[dict[str, Run], dict[str, str]]:
    """The stored runs of the baselines ``kinds`` (:func:`inferqa_utils.stages.load_run`: a missing
    run names the notebook that writes it) and of notebook 07's ``methods``, restricted to ``qids``;
    returns ``(runs, kinds)`` with the methods added as kind ``method``."""
    known = set(corpus)
    runs = {name: stages.load_run(dataset_name, name, qids=qids, known_passages=known) for name in kinds}
    kinds = dict(kinds)
    folder = stages.methods_dir(dataset_name)
    for name in methods:
        if name in runs:
            continue
        found = read_run(stages.run_dir_file(folder, name), known_docids=known)
        runs[name] = {q: found.get(q, []) for q in qids}
        kinds[name] = "method"
    return runs, kinds


def missing_stored(dataset_name: str, retrievers: Sequence[str], first_stage: str, rerankers: Sequence[str],
                   running: Collection[str] = ()) -> dict[str, list[str]]:
    """What notebook 08 reads from a finished run and is missing now, per notebook that writes it
    (``{"01_dataset_construction": ["the built dataset 'embedded'"], "02_retrieval": ["bm25", …]}``):
    the built dataset (notebook 01), ``first_stage`` and the baselines' runs (:func:`baseline_names`:
    notebooks 02 and 03). A notebook in ``running`` (the stems of the run about to start) writes its
    part itself and is left out. Notebook 04's and 07's answers are not required: without them the
    baselines have no EM."""
    from ..construction.store import built_dir

    out: dict[str, list[str]] = {}

    def need(stage: stages.Stage, what: str) -> None:
        if stage.notebook not in running:
            out.setdefault(stage.notebook, []).append(what)

    if not (built_dir(dataset_name) / "manifest.json").is_file():
        need(stages.Stage.CONSTRUCTION, f"the built dataset {dataset_name!r}")
    for name in dict.fromkeys([first_stage, *baseline_names(retrievers, first_stage, rerankers)]):
        if not stages.run_path(dataset_name, stages.Corpus.SUPPORTING, name).is_file():
            need(stages.run_stage(name), name)
    return out


def require_stored(dataset_name: str, retrievers: Sequence[str], first_stage: str, rerankers: Sequence[str],
                   profile_name: str | None = None, running: Collection[str] = ()) -> None:
    """Refuse a notebook 08 whose stored inputs are missing (:func:`missing_stored`) with one line
    naming them, the notebooks that write them and the commands that make them: ``make run`` (a
    finished run of the profile) or a run of just those notebooks
    (:class:`~inferqa_utils.core.errors.MissingInputError`)."""
    missing = missing_stored(dataset_name, retrievers, first_stage, rerankers, running)
    if not missing:
        return
    chosen = None if profile_name in (None, "default") else profile_name
    make = "make run" + (f" PROFILE={chosen}" if chosen else "")
    what = "; ".join(f"{', '.join(names)} (notebook {nb})" for nb, names in missing.items())
    raise MissingInputError(
        f"notebook 08 compares your method with what a finished run stored, and this is missing: {what}; "
        f"run `{make}` first, or {run_command(list(missing), chosen)}"
    )


def stored_answers(dataset_name: str, split: str, reader: str, k: int, systems: Sequence[str],
                   qids: Sequence[str]) -> pd.DataFrame:
    """The answers notebooks 04 and 07 stored for ``systems`` read by ``reader`` at top-``k`` with
    Union_norm, on ``qids`` (``system, qid, answer, em``; notebook 04's first where both read a
    system). Empty when neither notebook ran."""
    import pandas as pd

    frames = []
    for table in (stages.READING_ANSWERS, stages.BEYOND_ANSWERS):
        path = table.path(dataset_name, split)
        if not path.is_file():
            continue
        df = pd.read_csv(path, dtype={"qid": str, "answer": str})
        need = {"system", "qid", "em", "k", "union", "reader"}
        if not need <= set(df.columns):
            continue
        sel = ((df["reader"] == reader) & (pd.to_numeric(df["k"], errors="coerce") == int(k))
               & (df["union"] == "norm")
               & df["system"].isin(list(systems)) & df["qid"].isin(list(qids)))
        if "setting" in df.columns:
            sel &= df["setting"] == "pipeline"
        frames.append(df.loc[sel, ["system", "qid", "answer", "em"]])
    if not frames:
        return pd.DataFrame(columns=["system", "qid", "answer", "em"])
    out = pd.concat(frames, ignore_index=True).drop_duplicates(["system", "qid"], keep="first")
    return out.reset_index(drop=True)


# ----------------------------------------------------------------------------- the table


def per_question(runs: Mapping[str, Run], answers: pd.DataFrame, qrels: Mapping[str, Mapping[str, int]],
                 qids: Sequence[str], hit_label: int = 2) -> pd.DataFrame:
    """Per-question scores in [0, 1] (``system, metric, qid, value``): nDCG@10 and Hit@10 at label
    ≥ ``hit_label`` of every run (:func:`inferqa_utils.measure.metrics.per_query`; NaN where a question does
    not count: no relevant passage) and the strict EM of every system in ``answers``."""
    import pandas as pd

    sub = {q: dict(qrels.get(q, {})) for q in qids}
    frames = []
    for name, run in runs.items():
        pq = per_query(run, sub, hit_label, RETRIEVAL_METRICS)
        long = pq.reset_index().melt(id_vars="qid", var_name="metric", value_name="value")
        frames.append(long.assign(system=name))
    if len(answers):
        em = answers[answers["qid"].isin(list(qids))]
        frames.append(pd.DataFrame({"system": em["system"].to_numpy(), "metric": EM,
                                    "qid": em["qid"].astype(str).to_numpy(),
                                    "value": as_outcome(em["em"]).to_numpy()}))
    if not frames:
        return pd.DataFrame(columns=["system", "metric", "qid", "value"])
    return pd.concat(frames, ignore_index=True)[["system", "metric", "qid", "value"]]


def compare(scores: pd.DataFrame, kinds: Mapping[str, str], yours: str | None = None,
            alpha: float = ALPHA) -> pd.DataFrame:
    """The table (module docstring): one row per (metric, system), your system first, then the
    baselines in the order of ``kinds``; columns :data:`COLUMNS` — ``value`` with ``value_lo`` /
    ``value_hi`` (mean in % and its 95 % bootstrap interval over the ``n`` questions that count),
    and on a baseline's row ``Δ`` = yours − baseline in points with its paired 95 % interval, ``p``
    (paired sign-flip test), ``p_holm`` (Holm over every comparison of the table) and ``sig``
    (``*`` when ``p_holm`` < ``alpha``). Without ``yours`` the Δ columns are empty."""
    import pandas as pd

    systems = ([yours] if yours else []) + [s for s in kinds if s != yours]
    rows: list[dict[str, Any]] = []
    tested: list[tuple[int, float]] = []
    for metric in METRICS:
        wide = scores[scores["metric"] == metric].pivot(index="qid", columns="system", values="value")
        for system in systems:
            row: dict[str, Any] = {"metric": metric, "system": system,
                                   "kind": YOURS if system == yours else kinds.get(system, "")}
            x = wide[system].dropna() if system in wide.columns else wide.iloc[:0, :0]
            if len(x):
                iv = mean_ci(x.to_numpy(float)).scaled(100)
                row.update(value=iv.value, value_lo=iv.lo, value_hi=iv.hi, n=len(x))
            else:
                row["n"] = 0
            if yours and system != yours and yours in wide.columns and system in wide.columns:
                both = wide[[yours, system]].dropna()
                if len(both):
                    d = paired_difference(both[yours].to_numpy(float), both[system].to_numpy(float))
                    diff = d.diff.scaled(100)
                    row.update({"Δ": diff.value, "Δ_lo": diff.lo, "Δ_hi": diff.hi, "p": d.p_value})
                    tested.append((len(rows), d.p_value))
            rows.append(row)
    for (i, _p), adjusted in zip(tested, holm([p for _, p in tested]), strict=True):
        rows[i]["p_holm"] = adjusted
        rows[i]["sig"] = "*" if adjusted < alpha else ""
    table = pd.DataFrame(rows).reindex(columns=COLUMNS)
    for c in ("value", "value_lo", "value_hi", "Δ", "Δ_lo", "Δ_hi"):
        table[c] = table[c].astype(float).round(2)
    for c in ("p", "p_holm"):
        table[c] = table[c].astype(float).round(4)
    table["n"] = table["n"].astype(int)
    table["sig"] = [s if isinstance(s, str) else "" for s in table["sig"]]
    return table


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """The table as a person reads it: index (metric, system); ``value [lo, hi]``, ``Δ [lo, hi]``
    followed by ``*`` when the Holm-adjusted test is significant, ``p``, ``p (Holm)``, ``n``."""
    from ..present.show import interval_cell

    out = table.set_index(["metric", "system"])
    shown = {
        "kind": out["kind"],
        "mean % [95 % CI]": [interval_cell(v, a, b) for v, a, b in zip(out["value"], out["value_lo"],
                                                                        out["value_hi"], strict=True)],
        "Δ yours − baseline [95 % CI]": [
            interval_cell(v, a, b) + (str(s) if isinstance(s, str) else "") if v == v else ""
            for v, a, b, s in zip(out["Δ"], out["Δ_lo"], out["Δ_hi"], out["sig"], strict=True)],
        "p": [f"{p:.4f}" if p == p else "" for p in out["p"]],
        "p (Holm)": [f"{p:.4f}" if p == p else "" for p in out["p_holm"]],
        "n": out["n"],
    }
    import pandas as pd

    return pd.DataFrame(shown, index=out.index)


# ----------------------------------------------------------------------------- words and figure


def finding(table: pd.DataFrame, yours: str | None, n_questions: int, split: str = "test", hit_label: int = 2,
            alpha: float = ALPHA) -> str:
    """The sentence of the table: per metric your system's value and how many baselines it beats
    or trails significantly (Holm), with its largest significant gain or loss; without your
    system, the best baseline per metric."""
    parts = []
    for metric in METRICS:
        sub = table[table["metric"] == metric]
        name = f"{metric} (label ≥ {hit_label})" if metric.startswith("Hit") else metric
        if not yours:
            vals = sub.dropna(subset=["value"])
            if len(vals):
                best = vals.loc[vals["value"].idxmax()]
                parts.append(f"{name}: best baseline **{best['system']}** "
                             f"{ci(best['value'], best['value_lo'], best['value_hi'])}")
            continue
        mine = sub[sub["system"] == yours]
        if not len(mine) or mine["value"].isna().all():
            parts.append(f"{name}: no value for your system")
            continue
        m = mine.iloc[0]
        tested = sub[sub["p_holm"].notna()]
        up = tested[(tested["p_holm"] < alpha) & (tested["Δ"] > 0)]
        down = tested[(tested["p_holm"] < alpha) & (tested["Δ"] < 0)]
        text = f"{name} {ci(m['value'], m['value_lo'], m['value_hi'])} over {int(m['n'])} questions: "
        if not len(tested):
            parts.append(text + "no baseline has values on the same questions")
            continue
        text += f"significantly above {len(up)} and below {len(down)} of {len(tested)} baselines"
        if len(up) or len(down):
            b = up.loc[up["Δ"].idxmax()] if len(up) else down.loc[down["Δ"].idxmin()]
            what = "gain over" if len(up) else "loss to"
            text += (f" (largest {what} {b['system']}: {ci(b['Δ'], b['Δ_lo'], b['Δ_hi'])} points, "
                     f"p (Holm) {b['p_holm']:.3g})")
        missing = int(sub["value"].isna().sum())
        if metric == EM and missing:
            text += f"; {missing} baseline(s) have no stored answers"
        parts.append(text)
    if not yours:
        return (f"No component is plugged in; on {n_questions} {split} questions the baselines score "
                + "; ".join(parts) + ".")
    return (f"**{yours}** against {table[table['kind'] != YOURS]['system'].nunique()} baselines on "
            f"{n_questions} {split} questions (paired sign-flip tests, Holm-adjusted over the table): "
            + "; ".join(parts) + ".")


def figure(table: pd.DataFrame, yours: str | None, title: str = "") -> Any:
    """Your system's paired differences with every baseline, one panel per metric
    (:func:`inferqa_utils.present.figures.difference_forest`); without your system, every baseline's
    value with its interval (:func:`inferqa_utils.present.figures.interval_bars`)."""
    from ..present.figures import difference_forest, interval_bars

    if not yours:
        cols = ["system", "metric", "value", "lo", "hi"]
        long = table.rename(columns={"value_lo": "lo", "value_hi": "hi"})[cols]
        return interval_bars(long.dropna(subset=["value"]), title=title)
    diffs = table.loc[table["Δ"].notna(), ["system", "metric", "Δ", "Δ_lo", "Δ_hi", "sig"]]
    return difference_forest(diffs.rename(columns={"Δ": "value", "Δ_lo": "lo", "Δ_hi": "hi"}), title=title,
                             xlabel=f"{yours} − baseline (points of %)")


def reading_sentence(answers: pd.DataFrame, yours: str | None, baselines: Sequence[str], k: int,
                    reader: str) -> str:
    """The sentence of the reading step: your system's strict EM with its interval, and which
    baselines have answers stored by notebooks 04 and 07 (read by ``reader`` at top-``k``) and which
    have none (their EM cells stay empty; none is read again)."""
    have = set(answers["system"]) if len(answers) else set()
    stored = [b for b in baselines if b in have]
    missing = [b for b in baselines if b not in have]
    text = ""
    if yours and yours in have:
        em = as_outcome(answers.loc[answers["system"] == yours, "em"]).to_numpy(float)
        iv = mean_ci(em).scaled(100)
        text = (f"**{yours}** read at top-{k} (Union_norm, {reader}): strict EM "
                f"{ci(iv.value, iv.lo, iv.hi)} on {iv.n} questions. ")
    text += (f"{len(stored)} of {len(baselines)} baselines have answers stored by notebooks 04 and 07 for "
             "the same reader and k (reused, none read again)")
    if missing:
        one = len(missing) == 1
        text += (f"; {', '.join(missing)} {'has' if one else 'have'} none, so {'its' if one else 'their'} EM "
                 "is left empty (notebook 04 reads the runs in its pipeline_runs)")
    return text + "."
