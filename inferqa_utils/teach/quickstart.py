"""Helpers for notebook 00 (quickstart): one question from hints to an answer, and the generated
sentence that closes each of its sections (:func:`hints_sentence`, :func:`passages_sentence`,
:func:`retrieval_sentence`, :func:`quickstart_sentence`)."""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from ..answering.judge import judge_answers
from ..answering.reader import read, read_closed_book
from ..construction.passages import build_passages
from ..ir.datamodel import Dataset, Passage, Question
from ..llm.base import LLM
from ..present.show import question_label
from ..retrieval import BM25sRetriever


def under_papermill() -> bool:
    """True when the notebook runs headless through our runner (no widgets then)."""
    return bool(os.environ.get("INFERQA_PROFILE"))


def pick_questions(ds: Dataset, must_include: str, max_questions: int | None) -> list[Question]:
    """The first ``max_questions`` questions, always including ``must_include``."""
    if must_include not in ds.questions:
        raise KeyError(
            f"question {must_include!r} is not in dataset {ds.name!r}; e.g. {list(ds.questions)[:5]}"
        )
    qs = list(ds)
    if max_questions is not None:
        qs = qs[:max_questions]
        if all(q.qid != must_include for q in qs):
            qs = [ds.questions[must_include], *qs[: max_questions - 1]]
    return qs


_STRENGTH = {"strong": 0, "medium": 1, "weak": 2}


def demo_hints(q: Question, n_hints: int) -> list[str]:
    """The ``n_hints`` hints used for passages: highest convergence first when known, else the
    author-marked strength (strong → weak), else source order."""
    idx = list(range(len(q.hints)))
    if all(h.convergence is not None for h in q.hints):
        idx.sort(key=lambda i: -q.hints[i].convergence)
    else:
        idx.sort(key=lambda i: _STRENGTH.get(q.hints[i].meta.get("strength", ""), 3))
    return [q.hints[i].text for i in idx[:n_hints]]


def demo_corpus(questions: list[Question], n_hints: int) -> dict[str, Passage]:
    """Subset-permutation passages of the ``n_hints`` best hints (:func:`demo_hints`) of every question."""
    out: dict[str, Passage] = {}
    for q in questions:
        for p in build_passages(q.qid, demo_hints(q, n_hints)):
            out[p.pid] = p
    return out


@dataclass
class QuickstartResult:
    """One question walked through retrieval and reading (:func:`run_quickstart`)."""

    question: Question
    retrieved: list[dict[str, Any]]
    answers: list[dict[str, Any]]


def right_and_other(q: Question, passages: dict[str, Passage]) -> tuple[Passage, Passage | None]:
    """The quickstart's right passage — the question's own passage with the most hints, in hint
    order (``…_111_012``) — and a wrong one: the first passage of another question with as many
    hints (None when no other question has one)."""
    own = [p for p in passages.values() if p.qid == q.qid]
    if not own:
        raise KeyError(f"no passage of {q.qid!r} among the {len(passages)} passages")
    full = max(own, key=lambda p: (p.n_hints, [-i for i in p.hint_ids]))
    other = next((p for p in passages.values() if p.qid != q.qid and p.n_hints == full.n_hints), None)
    return full, other


#: the steps :func:`run_quickstart` reports to its ``status`` callback, in order
QUICKSTART_STEPS = (
    "retrieving with BM25", "reading the passages", "answering closed-book", "judging the answers",
)


def run_quickstart(q: Question, passages: dict[str, Passage], retriever: BM25sRetriever, llm: LLM,
                   judge: LLM | None, top_k: int = 5,
                   status: Callable[[int, int, str], None] | None = None) -> QuickstartResult:
    """Retrieve with BM25, then read: closed book, the top-1 retrieved passage, the best own
    passage (all hints) and a passage of another question.

    ``status(step, n_steps, what)`` is called before each of :data:`QUICKSTART_STEPS` (``step``:
    its 0-based index) and once more with ``step == n_steps`` and ``"done"`` at the end, so a widget
    can show progress while the model works (answers come from the LLM cache when known)."""
    n = len(QUICKSTART_STEPS)

    def step(i: int, what: str) -> None:
        if status is not None:
            status(i, n, what)

    step(0, QUICKSTART_STEPS[0])
    hits = retriever.search_one(q.question, k=top_k)
    retrieved = [{"rank": r, "passage": pid, "own question": passages[pid].qid == q.qid,
                  "hints": passages[pid].n_hints, "score": round(s, 3), "text": passages[pid].text}
                 for r, (pid, s) in enumerate(hits, 1)]
    full, other = right_and_other(q, passages)
    settings = [("top-1 retrieved (BM25)", passages[hits[0][0]].text if hits else ""),
                (f"right passage ({full.n_hints} own hints)", full.text)]
    if other is not None:
        settings.append(("wrong passage (another question)", other.text))
    step(1, f"{QUICKSTART_STEPS[1]} ({len(settings)} contexts, {llm.name})")
    outs = read(llm, [q.question] * len(settings), [c for _, c in settings], progress=False)
    step(2, f"{QUICKSTART_STEPS[2]} ({llm.name})")
    closed = read_closed_book(llm, [q.question], progress=False)[0]
    names = ["closed book (no context)", *[s for s, _ in settings]]
    preds = [closed, *outs]
    step(3, f"{QUICKSTART_STEPS[3]} ({judge.name if judge is not None else 'strict EM only'})")
    js = judge_answers(judge, [q.question] * len(preds), [q.answers] * len(preds), [o.answer for o in preds],
                       progress=False)
    answers = [
        {"setting": n, "answer": o.answer, "raw reply": o.raw.strip()[:80], "EM": j.em, "judged": j.judged}
        for n, o, j in zip(names, preds, js, strict=True)
    ]
    step(n, "done")
    return QuickstartResult(q, retrieved, answers)


def show_quickstart(r: QuickstartResult) -> None:
    """Display one :class:`QuickstartResult` in the current output: the question, the retrieved
    passages (text left-aligned, wrapped, complete) and the answers per setting."""
    import pandas as pd
    from IPython.display import Markdown, display

    from ..present.show import show_table

    q = r.question
    display(Markdown(f"**{q.qid}: {q.question}** → `{q.answer}`"))
    if r.retrieved:
        show_table(
            pd.DataFrame(r.retrieved, columns=["rank", "passage", "own question", "hints", "score", "text"])
        )
    else:
        display(Markdown("_BM25 retrieved nothing: no word of the question occurs in a passage._"))
    show_table(pd.DataFrame(r.answers), wrap=("raw reply",))


def quickstart_picker(questions: Sequence[Question], value: str, passages: dict[str, Passage],
                      retriever: BM25sRetriever, llm: LLM, judge: LLM | None, top_k: int = 5,
                      first: QuickstartResult | None = None):
    """The interactive picker of notebook 00: a full-width question dropdown, a progress bar with a
    status line, and an output area that shows ``value``'s results at once (``first``, when the
    notebook already computed them, else computed now) and a new question's results after every
    change. Returns the ``ipywidgets.VBox``; its ``.run(qid)`` shows one question (as a change does)."""
    import ipywidgets as w

    picker = w.Dropdown(options=[(question_label(x), x.qid) for x in questions], value=value,
                        description="question", style={"description_width": "initial"},
                        layout=w.Layout(width="95%", max_width="70em"))
    bar = w.IntProgress(value=0, min=0, max=len(QUICKSTART_STEPS), layout=w.Layout(width="12em"))
    line = w.HTML()
    out = w.Output()
    by_id = {x.qid: x for x in questions}

    def status(i: int, n: int, what: str) -> None:
        bar.max, bar.value = n, i
        bar.bar_style = "success" if i >= n else "info"
        line.value = (f"<span class='inferqa-status'>{escape(what)}</span>" if i >= n else
                      f"<span class='inferqa-status'>step {i + 1}/{n}: {escape(what)}…</span>")

    def run(qid: str, result: QuickstartResult | None = None) -> QuickstartResult:
        picker.disabled = True
        t0 = time.perf_counter()
        try:
            given = result is not None
            if result is None:
                with out:
                    out.clear_output()
                result = run_quickstart(
                    by_id[qid], passages, retriever, llm, judge, top_k=top_k, status=status
                )
            with out:
                out.clear_output(wait=True)
                show_quickstart(result)
            how = "the results computed above" if given else f"in {time.perf_counter() - t0:.1f} s"
            status(len(QUICKSTART_STEPS), len(QUICKSTART_STEPS), f"{qid}: done — {how} (reader {llm.name})")
            return result
        finally:
            picker.disabled = False

    def on_change(change: dict[str, Any]) -> None:
        # a callback's exception would only reach JupyterLab's log console: show it here instead
        try:
            run(change["new"])
        except Exception as e:
            line.value = (f"<span class='inferqa-status' style='color:#b00020'>{escape(change['new'])}: "
                          f"{escape(type(e).__name__)}: {escape(str(e))}</span>")
            with out:
                traceback.print_exc()

    picker.observe(on_change, names="value")
    box = w.VBox([picker, w.HBox([bar, line]), out])
    box.add_class("inferqa-quickstart-picker")
    box.run = run  # type: ignore[attr-defined]
    if first is not None and first.question.qid != value:
        first = None
    run(value, first)
    return box


# ----------------------------------------------------------------------------- generated sentences

def shared_words(question: str, text: str) -> list[str]:
    """The words BM25 can match between ``question`` and ``text``: both tokenized as
    :class:`~inferqa_utils.retrieval.BM25sRetriever` indexes them (lower case, English stopwords
    removed), in the question's order."""
    import bm25s

    q, t = bm25s.tokenize([question, text], stopwords="en", return_ids=False, show_progress=False)
    return list(dict.fromkeys(w for w in q if w in set(t)))


def hints_sentence(q: Question, n_hints: int) -> str:
    """How many hints the question has, which ones the passages use (with their convergence when
    known) and whether any hint names the answer or an alias (the leakage filter of notebook 01)."""
    from ..construction.leakage import LeakageFilter

    used = demo_hints(q, n_hints)
    conv = {h.text: h.convergence for h in q.hints}
    by = ("highest convergence" if all(h.convergence is not None for h in q.hints) else
          "author-marked strength" if any(h.meta.get("strength") for h in q.hints) else "source order")
    vals = ", ".join(f"{conv[t]:.2f}" for t in used if conv.get(t) is not None)
    leaks = LeakageFilter().find(q.answers, q.hint_texts)
    leak_text = ("none of the hints names the answer or an alias (notebook 01's leakage filter finds nothing)"
                 if not leaks else f"{len({x.hint_index for x in leaks})} hint(s) name the answer: "
                 + "; ".join(f"“{x.ngram}” in hint {x.hint_index}" for x in leaks[:3]))
    return (f"{q.qid} has {len(q.hints)} hints; the passages use the {len(used)} with the {by}"
            + (f" ({vals})" if vals and by == "highest convergence" else "") + f"; {leak_text}.")


def passages_sentence(q: Question, passages: dict[str, Passage]) -> str:
    """The question's own passages by number of hints and the size of the corpus BM25 searches."""
    from collections import Counter

    own = [p for p in passages.values() if p.qid == q.qid]
    sizes = Counter(p.n_hints for p in own)
    owners = len({p.qid for p in passages.values()})
    by_size = ", ".join(f"{v} with {k} hint{'s' if k > 1 else ''}" for k, v in sorted(sizes.items()))
    return (f"{q.qid} has {len(own)} passages ({by_size}); BM25 searches {len(passages):,} passages of "
            f"{owners} questions, so {len(passages) - len(own):,} of them belong to other questions.")


def retrieval_sentence(r: QuickstartResult) -> str:
    """Where BM25 put the question's own passages in the shown top k, and which words of the question
    its top-1 passage shares (BM25 matches words, and hints rarely repeat the question's words)."""
    q = r.question
    if not r.retrieved:
        return "BM25 retrieved nothing: no word of the question occurs in any passage."
    own = [x["rank"] for x in r.retrieved if x["own question"]]
    top = r.retrieved[0]
    words = shared_words(q.question, top["text"])
    whose = "one of this question's own passages" if top["own question"] else "a passage of another question"
    where = (
        f"{len(own)} of the top {len(r.retrieved)} are this question's own "
        f"(rank{'s' if len(own) > 1 else ''} "
        f"{', '.join(map(str, own))})"
        if own
        else f"none of the top {len(r.retrieved)} is this question's own"
    )
    return (
        f"BM25's top-1 is {whose} ({top['passage']}); it shares the word{'s' if len(words) != 1 else ''} "
        f"{', '.join(f'“{w}”' for w in words) or 'none'} with the question. {where[0].upper()}{where[1:]}."
    )


def _setting(r: QuickstartResult, prefix: str) -> dict[str, Any] | None:
    return next((a for a in r.answers if str(a["setting"]).startswith(prefix)), None)


def quickstart_sentence(r: QuickstartResult) -> str:
    """The lesson of notebook 00 in the reader's own answers: closed book, with the right passage,
    with another question's passage and with BM25's top-1 — right or wrong (judged: strict EM or
    the LLM judge) — and what that says about where the answer comes from."""

    def said(a: dict[str, Any] | None) -> str:
        if a is None:
            return "—"
        return f"“{a['answer']}” ({'right' if a['judged'] else 'wrong'})"

    closed, top1 = _setting(r, "closed book"), _setting(r, "top-1")
    right, wrong = _setting(r, "right passage"), _setting(r, "wrong passage")
    text = (
        f"Closed book the reader answers {said(closed)}; with the question's own passage {said(right)}; with "
        f"another question's passage {said(wrong)}; with BM25's top-1 passage {said(top1)}."
    )
    c, g, w = (bool(a and a["judged"]) for a in (closed, right, wrong))
    if c:
        text += (
            " The reader knew the answer without any passage, so this question cannot show what passages add "
            "— "
            "pick one it does not know (notebook 01 keeps such questions out of dev and test)."
        )
    elif g and not w:
        text += (
            " The answer comes from the hints, not from the reader's memory: only the right passage leads to "
            "it. "
            "Finding such a passage is the retriever's job: from BM25's top-1 the reader is "
            + ("right." if top1 and top1["judged"] else "wrong.")
        )
    elif not g:
        text += (
            " Even the right passage does not lead this reader to the answer: its hints are not enough for "
            "it."
        )
    else:
        text += " Another question's passage also gave the right answer: the reader may have guessed."
    return text
