"""Class in a box (notebook 00, last section): try your own question, explore a question's hints,
and three predict-then-run exercises.

* :func:`try_your_own` — a question, a few hints and the answer typed by the user become
  subset-permutation passages (:func:`~inferqa_utils.construction.passages.build_passages`, paper
  000 §3.2.1) added to the quickstart corpus; BM25 (:class:`~inferqa_utils.retrieval.BM25sRetriever`)
  searches it and the reader answers closed book, from the top-1 passage, from the right passage
  and from another question's passage (:func:`~inferqa_utils.teach.quickstart.run_quickstart`), judged
  by strict EM and the LLM judge.
* :func:`read_hint_subset` / :func:`explore_hints` — pick some of a question's hints (in an order):
  the passage they make and the reader's answer; in JupyterLab an ipywidgets explorer, headless
  (papermill) one reading of the given subset.
* :func:`read_contexts` with :func:`single_hint_contexts`, :func:`order_contexts` and
  :func:`distractor_contexts` — the readings behind the exercises, :func:`show_readings` their
  table and generated sentence.

Every reading goes through the cached engine, so a re-run makes no model call; ipywidgets and
IPython are imported when something is displayed.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from itertools import permutations
from typing import TYPE_CHECKING, Any

from ..answering.judge import judge_answers
from ..answering.reader import read
from ..construction.leakage import LeakageFilter
from ..construction.passages import build_passages
from ..ir.datamodel import Hint, Passage, Question, join_hints
from .quickstart import (
    QuickstartResult,
    quickstart_sentence,
    retrieval_sentence,
    run_quickstart,
    show_quickstart,
)

if TYPE_CHECKING:
    import pandas as pd

    from ..llm.base import LLM

#: the id of a question typed in by the user (its passages are ``mine_<mask>_<permutation>``)
OWN_QID = "mine"
#: at most this many hints: k hints give Σ C(k, j)·j! passages (5 → 325, 6 → 1,956)
MAX_OWN_HINTS = 5


@dataclass
class OwnQuestion:
    """A question typed in by the user, walked through the quickstart (:func:`try_your_own`)."""

    result: QuickstartResult
    #: hints that name the answer or an alias (notebook 01's leakage filter): ``(hint index, matched text)``
    leaks: list[tuple[int, str]] = field(default_factory=list)
    n_passages: int = 0

    def finding(self) -> str:
        """The generated sentence: retrieval, then the reader per setting (and a leakage warning)."""
        warn = ("" if not self.leaks else "Careful: " + "; ".join(f"hint {i} names the answer (“{t}”)"
                                                                   for i, t in self.leaks)
                + " — the reader may copy it instead of inferring. ")
        return warn + retrieval_sentence(self.result) + " " + quickstart_sentence(self.result)

    def show(self) -> None:
        """Display the retrieved passages, the answers per setting and :meth:`finding`."""
        from ..present.show import show_found

        show_quickstart(self.result)
        show_found(self.finding())


def own_question(question: str, hints: Sequence[str], answer: str, aliases: Sequence[str] = ()) -> Question:
    """A :class:`~inferqa_utils.ir.datamodel.Question` (id :data:`OWN_QID`) from typed text; empty hints are
    dropped, and 1 to :data:`MAX_OWN_HINTS` hints are required."""
    texts = [h.strip() for h in hints if h and h.strip()]
    if not question.strip() or not answer.strip():
        raise ValueError("type a question and its answer")
    if not 1 <= len(texts) <= MAX_OWN_HINTS:
        raise ValueError(
            f"give 1 to {MAX_OWN_HINTS} hints (got {len(texts)}): k hints make Σ C(k, j)·j! passages"
        )
    return Question(OWN_QID, question.strip(), [answer.strip(), *(a.strip() for a in aliases if a.strip())],
                    [Hint(t) for t in texts], source="typed in")


def try_your_own(question: str, hints: Sequence[str], answer: str, reader: LLM, judge: LLM | None = None,
                 corpus: Mapping[str, Passage] | None = None, aliases: Sequence[str] = (), top_k: int = 3,
                 show: bool = True) -> OwnQuestion:
    """Your question through the pipeline of notebook 00: its hints become every subset-permutation
    passage (paper 000 §3.2.1) added to ``corpus`` (other questions' passages, e.g. the quickstart's);
    BM25 searches the whole; the reader answers closed book, from the top-1 passage, from the
    passage of all your hints in your order and from another question's passage; strict EM and
    the judge (``judge=None``: EM only) decide. With ``show`` the tables and the generated sentence
    are displayed. Hints that name the answer are reported (:attr:`OwnQuestion.leaks`), not removed."""
    from ..retrieval import BM25sRetriever

    q = own_question(question, hints, answer, aliases)
    own = {p.pid: p for p in build_passages(q.qid, q.hint_texts)}
    passages = {**{pid: p for pid, p in (corpus or {}).items() if p.qid != q.qid}, **own}
    retriever = BM25sRetriever({pid: p.text for pid, p in passages.items()})
    leaks = [(x.hint_index, x.ngram) for x in LeakageFilter().find(q.answers, q.hint_texts)]
    res = OwnQuestion(run_quickstart(q, passages, retriever, reader, judge, top_k=top_k), leaks, len(own))
    if show:
        res.show()
    return res


# ----------------------------------------------------------------------------- readings of chosen contexts

def read_contexts(
    q: Question, contexts: Mapping[str, str], reader: LLM, judge: LLM | None = None
) -> pd.DataFrame:
    """The reader's answer to ``q`` from each context (``{label: text}``, one batch), judged by strict
    EM and the LLM judge: one row per context with ``context``, ``passage``, ``answer``, ``EM``,
    ``judged``."""
    import pandas as pd

    labels, texts = list(contexts), list(contexts.values())
    outs = read(reader, [q.question] * len(texts), texts, progress=False)
    js = judge_answers(judge, [q.question] * len(texts), [q.answers] * len(texts), [o.answer for o in outs],
                       progress=False, contexts=texts)
    return pd.DataFrame([{"context": lab, "passage": t, "answer": o.answer, "EM": j.em, "judged": j.judged}
                         for lab, t, o, j in zip(labels, texts, outs, js, strict=True)])


def readings_sentence(table: pd.DataFrame, q: Question) -> str:
    """Which contexts led the reader to ``q``'s answer (judged), and what it answered otherwise."""
    if table.empty:
        return "Nothing was read."
    right = table[table["judged"].astype(bool)]
    wrong = table[~table["judged"].astype(bool)]
    text = f"{len(right)} of {len(table)} contexts lead the reader to “{q.answer}”"
    if len(right) and len(wrong):
        text += f" ({', '.join(right['context'])})"
    if len(wrong):
        answers = ", ".join(f"“{a}”" for a in dict.fromkeys(wrong["answer"]))
        text += f"; the others give {answers}"
    return text + "."


def show_readings(table: pd.DataFrame, q: Question) -> None:
    """Display :func:`read_contexts`'s table (passages wrapped, complete) and :func:`readings_sentence`."""
    from ..present.show import show_found, show_table

    show_table(table, wrap=("passage",))
    show_found(readings_sentence(table, q))


def single_hint_contexts(hints: Sequence[str]) -> dict[str, str]:
    """One context per hint alone: ``{"hint 0": text, …}``."""
    return {f"hint {i}": h for i, h in enumerate(hints)}


def order_contexts(hints: Sequence[str], limit: int = 6) -> dict[str, str]:
    """The hints in every order (at most ``limit`` orders): ``{"order 0 1 2": passage, …}``."""
    out = {}
    for perm in permutations(range(len(hints))):
        if len(out) >= limit:
            break
        out[f"order {' '.join(map(str, perm))}"] = join_hints(hints, perm)
    return out


def distractor_contexts(right: str, other: str | None) -> dict[str, str]:
    """The right passage alone, then followed and preceded by another question's passage (only the
    right passage when there is no other)."""
    if not other:
        return {"right passage": right}
    return {"right passage": right, "right, then another question's passage": f"{right} {other}",
            "another question's passage, then right": f"{other} {right}"}


# ----------------------------------------------------------------------------- the hint explorer

def read_hint_subset(
    q: Question, hint_ids: Sequence[int], reader: LLM, judge: LLM | None = None
) -> dict[str, Any]:
    """The passage of ``q``'s hints ``hint_ids`` in that order
    (:func:`~inferqa_utils.ir.datamodel.join_hints`,
    a QUIT passage when the hints are kept ones) and the reader's judged answer from it."""
    ids = [int(i) for i in hint_ids]
    if not ids or any(not 0 <= i < len(q.hints) for i in ids) or len(set(ids)) != len(ids):
        raise ValueError(f"pick distinct hints among 0…{len(q.hints) - 1}, got {list(hint_ids)}")
    row = read_contexts(q, {f"hints {' '.join(map(str, ids))}": join_hints(q.hint_texts, ids)}, reader,
                        judge).iloc[0].to_dict()
    return {"hints": ids, **row}


def subset_sentence(row: Mapping[str, Any], q: Question) -> str:
    """One sentence on a :func:`read_hint_subset` reading."""
    n = len(row["hints"])
    verdict = "right" if row["judged"] else f"wrong (the answer is “{q.answer}”)"
    return (
        f"From {n} of {q.qid}'s {len(q.hints)} hints ({', '.join(map(str, row['hints']))}) the reader "
        "answers "
        f"“{row['answer']}” — {verdict}."
    )


def hint_explorer(q: Question, reader: LLM, judge: LLM | None = None, initial: Sequence[int] = (0,)):
    """An ipywidgets explorer: one checkbox per hint of ``q`` (the hint's whole text beside it, wrapped),
    a *reverse order* switch and a *read* button; the passage of the ticked hints (in list order, or reversed)
    goes to the reader and the answer, strict EM and the judge's verdict appear with a status line.
    ``initial`` is
    ticked and read at once. Returns the ``VBox``; its ``.run(ids)`` reads a subset as a click does."""
    import ipywidgets as w
    import pandas as pd
    from IPython.display import Markdown, display

    from ..present.show import found_text, show_table

    boxes = [w.Checkbox(value=i in initial, description="", indent=False, layout=w.Layout(width="2em"))
             for i in range(len(q.hints))]
    rows = [w.HBox([b, w.HTML(f"<span class='inferqa-hint'>{i}: {escape(h.text)}</span>",
                              layout=w.Layout(width="90%", max_width="66em"))])
            for i, (b, h) in enumerate(zip(boxes, q.hints, strict=True))]
    reverse = w.Checkbox(
        value=False, description="reverse order", indent=False, layout=w.Layout(width="12em")
    )
    button = w.Button(description="read", button_style="info", layout=w.Layout(width="8em"))
    line = w.HTML()
    out = w.Output()

    def run(ids: Sequence[int]) -> dict[str, Any] | None:
        button.disabled = True
        t0 = time.perf_counter()
        line.value = f"<span class='inferqa-status'>reading hints {escape(' '.join(map(str, ids)))}…</span>"
        try:
            row = read_hint_subset(q, ids, reader, judge)
        except Exception as e:  # shown in the widget, not only in JupyterLab's log console
            line.value = (f"<span class='inferqa-status' style='color:#b00020'>{escape(type(e).__name__)}: "
                          f"{escape(str(e))}</span>")
            with out:
                traceback.print_exc()
            return None
        finally:
            button.disabled = False
        with out:
            out.clear_output(wait=True)
            show_table(pd.DataFrame([row])[["hints", "passage", "answer", "EM", "judged"]], wrap=("passage",))
            display(Markdown(found_text(subset_sentence(row, q))))
        line.value = (f"<span class='inferqa-status'>done in {time.perf_counter() - t0:.1f} s "
                      f"(reader {escape(reader.name)}; answers it gave before come from the cache)</span>")
        return row

    def on_click(_b: Any) -> None:
        ids = [i for i, b in enumerate(boxes) if b.value]
        run(ids[::-1] if reverse.value else ids)

    button.on_click(on_click)
    box = w.VBox([w.HTML(f"<b>{escape(q.qid)}: {escape(q.question)}</b> — tick hints, then <i>read</i>"),
                  *rows, w.HBox([reverse, button, line]), out])
    box.add_class("inferqa-hint-explorer")
    box.run = run  # type: ignore[attr-defined]
    if initial:
        run(list(initial))
    return box


def explore_hints(q: Question, reader: LLM, judge: LLM | None = None, subset: Sequence[int] = (0,),
                  interactive: bool = True) -> dict[str, Any] | None:
    """Notebook 00's explorer cell: the :func:`hint_explorer` widget when ``interactive``
    (JupyterLab), else the reading of ``subset`` shown as a table and a sentence (papermill runs
    the same code without a widget). Returns the headless reading, else None."""
    from IPython.display import display

    if interactive:
        display(hint_explorer(q, reader, judge, initial=subset))
        return None
    import pandas as pd

    from ..present.show import show_found, show_table

    row = read_hint_subset(q, subset, reader, judge)
    show_table(pd.DataFrame([row])[["hints", "passage", "answer", "EM", "judged"]], wrap=("passage",))
    show_found(subset_sentence(row, q))
    return row
