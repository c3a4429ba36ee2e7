"""Tables that narrate a build in notebook 01, and the generated sentence that closes each of its
sections (every number computed from the build's tables or the dataset notebooks 02–07 read)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..ir.qtype import classifier_accuracy
from ..present.sentences import ci, share
from .convergence import RULES, convergence_from_scores, gold_candidate
from .passages import n_subset_permutations

if TYPE_CHECKING:
    from ..ir.datamodel import Dataset, Question
    from .build_config import BuildResult


def dropped_table(res: BuildResult) -> pd.DataFrame:
    cols = ["qid", "question", "answer", "reason", "detail"]
    return res.dropped[cols].reset_index(drop=True)


def drop_reasons(res: BuildResult) -> pd.DataFrame:
    q = res.questions
    out = q["reason"].where(q["status"] == "dropped", "kept").value_counts().rename_axis("outcome")
    return out.rename("questions").to_frame()


def parametric_summary(res: BuildResult) -> pd.DataFrame:
    """Closed-book accuracy (%) per model and repeat, and the share of questions some model knew."""
    df = res.parametric
    if df.empty:
        return pd.DataFrame()
    tab = (df.groupby(["model", "repeat"])[["em", "correct"]].mean() * 100).round(1)
    tab.columns = ["EM (%)", "judged correct (%)"]
    return tab


def parametric_by_model(res: BuildResult) -> pd.DataFrame:
    """Per closed-book model: questions it answers (strict EM / judged, any repeat), answers the
    guards refused, and the questions only this model knows; last row: parametric by any model."""
    df = res.parametric
    if df.empty:
        return pd.DataFrame()
    per_q = df.groupby(["model", "qid"])[["em", "correct"]].any()
    knew = per_q["correct"].unstack("model", fill_value=False)
    rows = []
    for m, g in per_q.groupby(level="model"):
        only = (
            int((knew[m] & ~knew.drop(columns=m).any(axis=1)).sum())
            if knew.shape[1] > 1
            else int(knew[m].sum())
        )
        rows.append(
            {
                "model": m,
                "questions": len(g),
                "EM": int(g["em"].sum()),
                "judged correct": int(g["correct"].sum()),
                "judged correct (%)": round(100 * g["correct"].mean(), 1),
                "refused by a guard": int(df.loc[df["model"] == m, "guard"].notna().sum())
                if "guard" in df
                else 0,
                "only this model": only,
            }
        )
    n = knew.shape[0]
    rows.append(
        {
            "model": "any (parametric)",
            "questions": n,
            "EM": int(per_q["em"].groupby(level="qid").any().sum()),
            "judged correct": int(knew.any(axis=1).sum()),
            "judged correct (%)": round(100 * knew.any(axis=1).mean(), 1),
        }
    )
    return pd.DataFrame(rows).set_index("model")


def pool_expansions(res: BuildResult) -> pd.DataFrame:
    """Answers the judge admitted to answer pools (not gold matches), with the labeler and fate."""
    return res.expansions


def guard_refusals(res: BuildResult) -> pd.DataFrame:
    """Counts of labeling answers refused by each guard before the judge, with examples."""
    r = res.refusals
    if r.empty:
        return pd.DataFrame(columns=["answers", "passages", "examples"])
    return r.groupby("rule").agg(answers=("answer", "size"), passages=("passages", "sum"),
                                 examples=("answer", lambda a: ", ".join(list(dict.fromkeys(a))[:6])))


def repeat_agreement(res: BuildResult) -> pd.DataFrame:
    """How often the answers of different repeats (prompt variants) differ, per model."""
    df = res.parametric
    if df.empty or df["repeat"].nunique() < 2:
        return pd.DataFrame({"note": ["one repeat: greedy decoding makes identical repeats redundant"]})
    g = df.groupby(["model", "qid"])["answer"].nunique()
    return (
        (g.gt(1).groupby("model").mean() * 100)
        .round(1)
        .rename("questions whose answer changes (%)")
        .to_frame()
    )


def type_accuracy(res: BuildResult) -> dict:
    """Our rule-based TREC classifier against the source's labels (where the source has them)."""
    return type_accuracy_of(res.questions)


def type_accuracy_of(questions: pd.DataFrame) -> dict:
    """:func:`type_accuracy` of a question table (columns ``question``, ``source_type``)."""
    if questions.empty or "source_type" not in questions:
        return {"n": 0}
    q = questions.dropna(subset=["source_type"])
    q = q[q["source_type"].astype(str).str.contains(":")]
    pairs = list(zip(q["question"], q["source_type"], strict=True))
    if not pairs:
        return {"n": 0}
    return classifier_accuracy(pairs)


def difficulty_agreement(res: BuildResult) -> pd.DataFrame | None:
    """Cross-table of the reference-based difficulty against the source's label."""
    return difficulty_agreement_of(res.difficulty)


def difficulty_agreement_of(d: pd.DataFrame | None) -> pd.DataFrame | None:
    """:func:`difficulty_agreement` of a difficulty table (columns ``source_difficulty``, ``difficulty``)."""
    if d is None or d.empty or "source_difficulty" not in d or d["source_difficulty"].isna().all():
        return None
    return pd.crosstab(
        d["source_difficulty"], d["difficulty"], rownames=["source"], colnames=["reference-based"]
    )


def leakage_agreement(res: BuildResult) -> pd.DataFrame:
    """Hints counted by the source's stored answer-leakage score (≥ the build's
    ``stored_leakage_threshold``) against our leakage filter (paper 000 §3.1.2), which alone
    drops questions: a 2×2 table, or a one-row note when the source stores no such score."""
    return leakage_crosstab(res.leakage_agreement, res.config.stored_leakage_threshold)


def leakage_crosstab(table: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """The 2×2 crosstab of :func:`leakage_agreement` for an agreement table (both levels always shown)."""
    if table.empty:
        return pd.DataFrame({"note": ["the source stores no per-hint answer-leakage score"]})
    levels = ["leaks", "does not leak"]

    def name(b: pd.Series) -> pd.Series:
        return b.astype(bool).map({True: levels[0], False: levels[1]})

    tab = pd.crosstab(name(table["stored_leaks"]), name(table["our_filter_leaks"]))
    tab = tab.reindex(index=levels, columns=levels, fill_value=0)
    tab.index.name, tab.columns.name = f"stored score ≥ {threshold:g}", "our filter"
    return tab


def passages_per_k() -> pd.DataFrame:
    """Σ_{j=1..k} C(k, j)·j! for k = 1..5 (paper 000 §3.2.1)."""
    return pd.DataFrame({"hints k": range(1, 6), "passages": [n_subset_permutations(k) for k in range(1, 6)]})


def labeling_throughput(res: BuildResult) -> pd.DataFrame:
    """Readings (passages × labelers) labeled in this run and their rate, judge calls included."""
    n_read = sum(len(r.generations) * len(res.config.labelers) for r in res.labels.values())
    secs = res.timings.get("labeling", 0.0)
    rows = [{"labelers": ", ".join(res.config.labelers), "judge": res.config.judge_model,
             "passages": sum(len(r.generations) for r in res.labels.values()), "readings": n_read,
             "seconds (this run)": round(secs, 1),
             "readings/s": round(n_read / secs, 2) if secs > 0.5 else None}]
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- the dataset's own tables

@dataclass
class BuiltTables:
    """The construction tables of a built dataset (or an installed release, under
    ``construction/``): one row per source question (fate, split, parametric, pool), per hint
    (convergence, kept), per closed-book answer and per question's difficulty."""

    questions: pd.DataFrame
    hints: pd.DataFrame
    parametric: pd.DataFrame
    difficulty: pd.DataFrame


def built_tables(ds: Dataset) -> BuiltTables:
    """:class:`BuiltTables` of a dataset loaded with :func:`~inferqa_utils.construction.store.load_built`,
    a build or an installed release (empty frames for a table the folder lacks)."""
    from .store import construction_table

    folder = Path(ds.meta.get("folder", ""))

    def read(name: str) -> pd.DataFrame:
        path = construction_table(folder, f"{name}.csv")
        return pd.read_csv(path) if path.exists() else pd.DataFrame()

    return BuiltTables(read("questions"), read("hints"), read("parametric"), read("difficulty"))


def _split_counts(ds: Dataset) -> str:
    return ", ".join(f"{s} {len(v)}" for s, v in ds.splits.items())


def build_sentence(ds: Dataset, res: BuildResult, release: str | None) -> str:
    """What notebooks 02–07 will read and where it came from: the release (with its code commit and
    date) checked file by file, or the build made here; and what this run computed."""
    built = ds.meta.get("built") or {}
    counts = built.get("counts") or {}
    what = (f"Notebooks 02–07 read `{ds.name}`: {len(ds.questions)} questions ({_split_counts(ds)}), "
            f"{len(ds.passages):,} passages")
    secs = sum(float(v) for v in res.timings.values())
    if release:
        rel = built.get("release") or {}
        commit = ((rel.get("code") or {}).get("commit") or "")[:7]
        made = str(rel.get("created", ""))[:10]
        rebuilt = sum(res.questions["status"] == "kept") if len(res.questions) else 0
        return (
            f"{what}, installed from the release `{release}`"
            + (f" (made by code commit {commit} on {made})" if commit else "")
            + f" after every file's checksum was verified. This run rebuilt {rebuilt} of its test questions "
            f"from the source through every step in {secs:.0f} s."
        )
    return (f"{what}, built here from `{res.config.source}` in {secs:.0f} s "
            f"({counts.get('source_questions', len(res.questions))} source questions).")


def leakage_sentence(questions: pd.DataFrame, scope: str = "source questions") -> str:
    """How many questions the leakage filter (paper 000 §3.1.2) and the too-few-hints rule dropped,
    with the reasons, over one construction table (:class:`BuiltTables` or a build's)."""
    if questions.empty:
        return "No question table to report."
    n = len(questions)
    dropped = questions[questions["status"] == "dropped"]
    if dropped.empty:
        return (f"All {n} {scope} passed the leakage filter: no hint names its answer or an alias, and every "
                "question has enough hints.")
    reasons = dropped["reason"].fillna("?").value_counts()
    return (f"{share(len(dropped), n, scope)} were dropped — "
            + ", ".join(f"{v} {k}" for k, v in reasons.items()) + f"; {n - len(dropped)} remain.")


def convergence_rules(questions: Sequence[Question], k: int) -> pd.DataFrame:
    """Both convergence rules (:data:`~inferqa_utils.construction.convergence.RULES`) on the stored
    judge votes of ``questions`` (hints with ``scores`` only): one row per hint with the gold vote,
    the convergence under ``hicos`` and ``true-hints``
    (:func:`~inferqa_utils.construction.convergence.convergence_from_scores`) and whether each rule keeps the
    hint among its question's top ``k`` (convergence descending,
    ties in source order, as the build selects)."""
    rows = []
    for q in questions:
        gold = gold_candidate(q.candidates, q.answers)
        if gold is None or not q.hints or not all(h.scores and gold in h.scores for h in q.hints):
            continue
        per_rule = {r: [convergence_from_scores(h.scores, gold, r) for h in q.hints] for r in RULES}
        kept = {r: set(sorted(range(len(v)), key=lambda i, v=v: -v[i])[:k]) for r, v in per_rule.items()}
        for i, h in enumerate(q.hints):
            rows.append(
                {
                    "qid": q.qid,
                    "hint": i,
                    "text": h.text,
                    "strength": h.meta.get("strength", ""),
                    "gold vote": int(h.scores[gold]),
                    "candidates": len(h.scores),
                    **{r: per_rule[r][i] for r in RULES},
                    **{f"kept ({r})": i in kept[r] for r in RULES},
                }
            )
    return pd.DataFrame(rows)


def source_convergence_rules(source: str, k: int) -> pd.DataFrame:
    """:func:`convergence_rules` of a hint source (a :func:`~inferqa_utils.sources.load_source` spec).
    The QUIT release stores each hint's convergence but no per-candidate votes, so it is not loaded
    (an empty table); nor is a shared source that is not on this machine (a dataset read from its
    release needs no source)."""
    from ..sources import load_source, source_absent

    if str(source).split(":", 1)[0] == "quit" or source_absent(source):
        return pd.DataFrame()
    return convergence_rules(list(load_source(source)), k)


def convergence_sentence(rules: pd.DataFrame, rule: str, k: int, source: str | None = None) -> str:
    """What the rule of this build changes (:func:`convergence_rules`): how many hints the judge
    said do not fit their own answer, what a 0 means under each rule, and for how many questions
    the two rules keep different top-``k`` hints."""
    if rules.empty:
        from ..sources import source_absent

        why = (
            f"The source `{source}` is not on this machine (set INFERQA_SHARED_DATA), so its stored judge "
            "votes cannot be compared under the two rules"
            if source_absent(source)
            else "The source stores no per-candidate judge votes, so the rules cannot be compared here"
        )
        return f"{why}; this build used `{rule}`."
    n = len(rules)
    zero = int((rules["gold vote"] == 0).sum())
    n_q = rules["qid"].nunique()
    differ = int(rules.groupby("qid").apply(lambda g: (g["kept (hicos)"] != g["kept (true-hints)"]).any(),
                                            include_groups=False).sum())
    floor = 1 / rules["candidates"].max()
    text = (
        f"{share(zero, n, 'hints')} with stored judge votes have a gold vote of 0 (the judge said the hint "
        "does not fit its own answer)."
    )
    text += (
        f" Under `hicos` each of them scores 0 and falls to the bottom of its question's ranking; under "
        f"`true-hints` no hint scores 0 — the lowest value, about {floor:.2f}, means the judge accepted "
        "every "
        f"distractor too. The two rules keep different top-{k} hints for {share(differ, n_q)}."
    )
    kept = rules[rules[f"kept ({rule})"]] if f"kept ({rule})" in rules else rules.iloc[0:0]
    if len(kept):
        text += (
            f" This build uses `{rule}`: on the stored votes it keeps hints of mean convergence "
            f"{kept[rule].mean():.2f}, {int((kept['gold vote'] == 0).sum())} of them with a gold vote of 0."
        )
    return text


def types_sentence(acc: Mapping[str, Any], agreement: pd.DataFrame | None) -> str:
    """The rule-based TREC classifier against the source's labels (:func:`type_accuracy`) and the
    reference-based difficulty against the source's (:func:`difficulty_agreement`)."""
    parts = []
    if acc.get("n"):
        parts.append(
            f"The rule-based classifier agrees with the source's type on {100 * acc['coarse_accuracy']:.1f} "
            "% "
            f"(coarse) and {100 * acc['fine_accuracy']:.1f} % (fine) of {acc['n']} questions"
        )
    else:
        parts.append("The source has no type labels to compare with")
    if agreement is not None and len(agreement):
        same = sum(int(agreement.at[r, r]) for r in agreement.index if r in agreement.columns)
        total = int(agreement.to_numpy().sum())
        parts.append(f"the reference-based difficulty matches the source's label for {share(same, total)}")
    return "; ".join(parts) + "."


def parametric_sentence(parametric: pd.DataFrame, scope: str = "questions") -> str:
    """How many questions some closed-book model answers (paper 000 §3.1.4), per model."""
    if parametric.empty:
        return "No closed-book answers in this table."
    correct = parametric.assign(correct=parametric["correct"].astype(str).str.lower().isin(["true", "1"]))
    per_q = correct.groupby("qid")["correct"].any()
    per_model = correct.groupby(["model", "qid"])["correct"].any().groupby(level="model").sum()
    models = ", ".join(f"{m} {int(v)}" for m, v in per_model.sort_values(ascending=False).items())
    return (
        f"{share(int(per_q.sum()), len(per_q), scope)} are parametric: some closed-book model answered them "
        f"({models}). They can only go to train; dev and test come from the other {int((~per_q).sum())}."
    )


def splits_sentence(ds: Dataset, questions: pd.DataFrame) -> str:
    """The split sizes and whether any dev/test question is parametric (it must not be)."""
    text = f"Splits: {_split_counts(ds)}."
    if "parametric" in questions and "split" in questions:
        flags = questions["parametric"].astype(str).str.lower().isin(["true", "1"])
        leak = int((flags & questions["split"].isin(["dev", "test"])).sum())
        train_par = int((flags & (questions["split"] == "train")).sum())
        text += (f" {train_par} of the {len(ds.splits.get('train', []))} train questions are parametric; "
                 f"{leak} dev or test question{'s are' if leak != 1 else ' is'} — "
                 + ("as the paper requires." if leak == 0 else "the evaluation splits are not clean."))
    return text


def passages_sentence(ds: Dataset, k: int) -> str:
    """Passages per question Σ_{j=1..k} C(k, j)·j! and the corpus size it gives."""
    per_q = n_subset_permutations(k)
    owners = len({p.qid for p in ds.passages.values()})
    return (
        f"With k = {k} hints every question has {per_q} passages; the corpus holds {len(ds.passages):,} = "
        f"{owners} questions × {per_q} (QUIT: k = 5, {n_subset_permutations(5)} per question)."
    )


def labels_sentence(ds: Dataset, by_hints: pd.DataFrame) -> str:
    """Label-2 passages and questions in the labelled splits, and how the label-2 share grows with
    the passage's number of hints (:func:`~inferqa_utils.construction.stats.labels_by_hint_count`)."""
    labelled = ds.meta.get("labelled_splits") or list(ds.splits)
    qids = [q for s in labelled for q in ds.splits.get(s, [])]
    labels = [v for q in qids for v in ds.qrels.get(q, {}).values()]
    n2 = sum(v == 2 for v in labels)
    with2 = sum(any(v == 2 for v in ds.qrels.get(q, {}).values()) for q in qids)
    text = (f"In the labelled split{'s' if len(labelled) > 1 else ''} ({', '.join(labelled)}), "
            f"{share(n2, len(labels), 'own passages')} are label 2, for {share(with2, len(qids))}")
    if len(by_hints) and "label 2 share (%)" in by_hints:
        shares = ", ".join(
            f"{v:.1f} % with {h} hint{'s' if h > 1 else ''}" for h, v in by_hints["label 2 share (%)"].items()
        )
        text += f"; the label-2 share is {shares}"
    return text + "."


def verification_sentence(questions: pd.DataFrame) -> str:
    """The answer pools of the labelled questions and what verification and the leakage re-check
    removed (columns ``pool_size``, ``rejected_by_person``, ``rejected_by_leakage``, ``downgraded``)."""
    q = questions.dropna(subset=["pool_size"]) if "pool_size" in questions else questions.iloc[0:0]
    if q.empty:
        return "No labelled question has an answer pool to verify."
    pools, person, leak, down = (int(q[c].fillna(0).sum()) for c in ("pool_size", "rejected_by_person",
                                                                     "rejected_by_leakage", "downgraded"))
    return (
        f"The {len(q)} labelled questions' answer pools hold {pools} answers; a person rejected {person}, "
        "the "
        f"leakage re-check removed {leak}, and {down} passages went from label 2 to 1 as a result."
    )


def table1_sentence(t1: pd.DataFrame, paper_tokens: float | None = None) -> str:
    """Table 1 in one sentence: questions and passages per split, label 2 in the labelled ones, and
    the mean passage length beside the paper's QUIT length."""
    parts = []
    for split, r in t1.iterrows():
        if split == "corpus":
            continue
        extra = (
            f", {int(r['label 2'])} label 2"
            if r.get("labelled") and r.get("label 2") == r.get("label 2")
            else ""
        )
        parts.append(f"{split} {int(r['questions'])} questions / {int(r['passages']):,} passages{extra}")
    tokens = float(t1.loc["corpus", "mean passage tokens"]) if "corpus" in t1.index else float("nan")
    text = "; ".join(parts) + f". A passage has {tokens:.1f} tokens on average"
    return text + (f" (QUIT: {paper_tokens:g}, paper 000 §5.1)." if paper_tokens else ".")


def agreement_sentence(summary: pd.DataFrame) -> str:
    """The rebuilt sample against the release (:func:`~inferqa_utils.construction.release.agreement`):
    passage agreement and Cohen's κ with their intervals, and how many questions kept the same
    hints and answer pool."""
    s = summary.set_index("measure")
    if "passage agreement (%)" not in s.index:
        return "No passage could be compared (no rebuilt passage has the same text as a released one)."
    a, kap = s.loc["passage agreement (%)"], s.loc["Cohen's kappa"]
    text = (
        f"On {int(a['questions'])} rebuilt questions, {int(a['n'])} passages were compared: "
        f"{a['value']:.1f} % [{a['lo']:.1f}, {a['hi']:.1f}] have the same label as in the release, Cohen's κ "
        f"{ci(kap['value'], kap['lo'], kap['hi'], 2)}."
    )
    said = {"questions with the same kept hints": "kept the same hints",
            "questions with the same answer pool": "have the same answer pool"}
    parts = [
        f"{int(s.loc[m, 'value'])} of {int(s.loc[m, 'n'])} {verb}" for m, verb in said.items() if m in s.index
    ]
    return text + (f" Questions: {'; '.join(parts)}." if parts else "")
