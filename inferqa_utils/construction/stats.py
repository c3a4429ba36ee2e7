"""Statistics and figures of a built dataset (paper Table 1 analogue, label/convergence plots)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pandas as pd

from ..ir.datamodel import Dataset
from .passages import n_subset_permutations

_TOKEN = re.compile(r"\w+|[^\w\s]")


def n_tokens(text: str) -> int:
    """Word and punctuation tokens (regex ``\\w+|[^\\w\\s]``), the unit of our mean passage lengths."""
    return len(_TOKEN.findall(text))


def label_counts(ds: Dataset, qids: list[str] | None = None) -> dict[int, int]:
    """Labels over (question, passage) pairs of the whole corpus: a question's own passages carry
    1/2 from the qrels, every other passage is 0 — each pair exactly one label."""
    qids = list(ds.questions) if qids is None else qids
    c: Counter[int] = Counter()
    n = len(ds.passages)
    for q in qids:
        own = ds.qrels.get(q, {})
        c.update(own.values())
        c[0] += n - len(own)
    return {lab: c.get(lab, 0) for lab in (0, 1, 2)}


def table1(ds: Dataset) -> pd.DataFrame:
    """Per split: questions, passages, label-2/1 passages (own), questions with a label-2 passage and
    mean passage length in tokens. Splits that were not LLM-labelled (``ds.meta["labelled_splits"]``)
    show no label counts; the ``corpus`` row counts every passage, distractor questions' included."""
    labelled = ds.meta.get("labelled_splits")
    by_q: dict[str, list] = {}
    for p in ds.passages.values():
        by_q.setdefault(p.qid, []).append(p)
    rows = []
    for split, qids in [*ds.splits.items(), ("corpus", None)]:
        ps = [p for q in qids for p in by_q.get(q, [])] if qids is not None else list(ds.passages.values())
        qids = list(ds.questions) if qids is None else qids
        is_labelled = split != "corpus" and (labelled is None or split in labelled)
        own = Counter(v for q in qids for v in ds.qrels.get(q, {}).values())
        with2 = sum(any(v == 2 for v in ds.qrels.get(q, {}).values()) for q in qids)
        rows.append(
            {
                "split": split,
                "questions": len(qids) if split != "corpus" else len(by_q),
                "passages": len(ps),
                "labelled": is_labelled if split != "corpus" else None,
                "label 2": own.get(2, 0) if is_labelled else None,
                "label 1": own.get(1, 0) if is_labelled else None,
                "label 2 share (%)": round(100 * own.get(2, 0) / max(1, len(ps)), 1) if is_labelled else None,
                "questions with label 2": with2 if is_labelled else None,
                "mean passage tokens": round(sum(n_tokens(p.text) for p in ps) / max(1, len(ps)), 2),
            }
        )
    return pd.DataFrame(rows).set_index("split")


def labels_by_hint_count(ds: Dataset) -> pd.DataFrame:
    """Own-passage labels by number of hints in the passage (counts and share of label 2), over the
    questions of the LLM-labelled splits."""
    labelled = ds.meta.get("labelled_splits")
    qids = {q for s, ids in ds.splits.items() if labelled is None or s in labelled for q in ids}
    rows = [{"hints": p.n_hints, "label": ds.qrels.get(p.qid, {}).get(p.pid)} for p in ds.passages.values()
            if p.qid in qids]
    df = pd.DataFrame(rows)
    tab = df.pivot_table(index="hints", columns="label", aggfunc="size", fill_value=0)
    tab.columns = [f"label {c}" for c in tab.columns]
    tab["label 2 share (%)"] = (100 * tab.get("label 2", 0) / tab.sum(axis=1)).round(1)
    return tab


def plot_labels_by_hints(ds: Dataset):
    import matplotlib.pyplot as plt

    tab = labels_by_hint_count(ds)
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    cols = [c for c in ("label 1", "label 2") if c in tab]
    tab[cols].plot.bar(stacked=True, ax=ax, color=["#f0ad4e", "#5cb85c"][: len(cols)])
    ax.set_xlabel("hints in the passage")
    ax.set_ylabel("passages")
    ax.set_title(f"{ds.name}: labels by number of hints")
    fig.tight_layout()
    return fig


def plot_convergence(hints: pd.DataFrame, name: str):
    """Histogram of hint convergence, kept (top-k) vs dropped."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    h = hints.dropna(subset=["convergence"])
    bins = [i / 20 for i in range(21)]
    for kept, color, lab in ((True, "#5cb85c", "kept (top-k)"), (False, "#d9534f", "dropped")):
        vals = h.loc[h["kept"] == kept, "convergence"].astype(float)
        if len(vals):
            ax.hist(vals, bins=bins, alpha=0.6, color=color, label=f"{lab} (n={len(vals)})")
    ax.set_xlabel("convergence")
    ax.set_ylabel("hints")
    ax.set_title(f"{name}: hint convergence")
    ax.legend()
    fig.tight_layout()
    return fig


def check_invariants(ds: Dataset, k_hints: int) -> dict[str, Any]:
    """The acceptance invariants: (built + distractor questions) × passages per question = corpus
    size; every passage belongs to exactly one question; every built question has exactly one
    label (1/2) per own passage; labels are in {1, 2}; the splits partition the built questions."""

    per_q = n_subset_permutations(k_hints)
    problems = []
    owners = {p.qid for p in ds.passages.values()}
    n_distractors = len(owners - set(ds.questions))
    if len(ds.passages) != (len(ds.questions) + n_distractors) * per_q:
        problems.append(f"corpus has {len(ds.passages)} passages, expected ({len(ds.questions)} built + "
                        f"{n_distractors} distractor questions) × {per_q}")
    own_of: dict[str, set[str]] = {}
    for p in ds.passages.values():
        own_of.setdefault(p.qid, set()).add(p.pid)
    for qid in ds.questions:
        own = own_of.get(qid, set())
        lab = ds.qrels.get(qid, {})
        if set(lab) != own:
            problems.append(f"{qid}: {len(own)} own passages but {len(lab)} labels")
        if any(v not in (1, 2) for v in lab.values()):
            problems.append(f"{qid}: own-passage label outside {{1, 2}}")
    split_q = [q for v in ds.splits.values() for q in v]
    if sorted(split_q) != sorted(ds.questions):
        problems.append("splits do not partition the questions")
    return {
        "ok": not problems,
        "problems": problems[:20],
        "passages_per_question": per_q,
        "questions": len(ds.questions),
        "distractor_questions": n_distractors,
        "corpus_size": len(ds.passages),
    }
