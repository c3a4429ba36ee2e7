"""Knowledge-aware diverse reranking (paper 002 §2.2; papers 001–003).

1. **Hybrid first stage**: sparse and dense lists interleaved — alternate, keep each list's order,
   drop duplicates (:func:`inferqa_utils.retrieval.fusion.interleave`; the ``hybrid`` run of
   notebook 02 is exactly this for bm25s + MiniLM).
2. **Initial rerank** of the top-``n_rank`` with the reranker ``M_rank`` (paper: Jina reranker;
   here an LLM pointwise reranker or a bi-encoder).
3. **Knowledge element declaration** (paper §2.2.2, Fig. 2): for each of the top-``n_know``
   documents of the initial rerank (paper: 5), one LLM call lists the knowledge elements the
   question needs (≤ ``max_elements``, paper: ≤ 4) and which of them the document gives
   (:func:`parse_knowledge_elements`). The document grounds the LLM's reading of the question.
4. **Summarisation** (paper §2.2.3, Fig. 3): another call keeps the ``n_elements`` = 2 most
   important, complete and non-redundant elements of all declared ones, as a JSON list
   (:func:`parse_json_list`); picks are matched back to declared elements (:func:`match_elements`,
   invented ones are dropped). Missing picks (and the ``"frequency"`` option) are filled with the
   elements declared most often (:func:`select_by_frequency`).
5. **Diverse rerank** (paper §2.2.4): the initial head is reranked once per selected element with
   the query ``question + " " + element``; the lists are interleaved (:func:`diverse_merge`) and the
   rest of the initial ranking follows. The paper then answers from the top-10.

Prompts are our own wording of the paper's (Figs. 2–3), shortened for small models: no free-form
"thoughts" section, one worked example for the declaration format.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..ir.runs import ids_to_run_list, ranked_ids
from ..ir.trec import Run
from ..retrieval.fusion import interleave_lists
from .common import MethodResult, MethodSetup, cached_method, method_key, reranker_identity

if TYPE_CHECKING:
    from ..llm.base import LLM, Messages
    from ..rerank.base import Reranker

DECLARE_SYSTEM = (
    "You analyse the knowledge a quiz question needs. Under 'Knowledge Elements:' write a numbered "
    "list of at most {n} pieces of knowledge needed to answer the question. Then under 'Given "
    "Knowledge:' write the numbers of the elements the document provides, or None."
)

_DECLARE_DEMO = (
    "What is the Japanese art of paper folding called?",
    "It is a craft practised with a single square sheet. Cutting and gluing are traditionally avoided.",
    "Knowledge Elements:\n1. Traditional Japanese crafts made with paper\n2. A craft that folds one square "
    "sheet "
    "without cutting or gluing\n3. The Japanese name of that craft\nGiven Knowledge:\n2",
)


def declare_messages(question: str, document: str, max_elements: int = 4) -> Messages:
    """The declaration prompt: one worked example, then the question and the document."""
    q, d, out = _DECLARE_DEMO
    return [{"role": "system", "content": DECLARE_SYSTEM.format(n=max_elements)},
            {"role": "user", "content": f"Question: {q}\nDocument: {d}"},
            {"role": "assistant", "content": out},
            {"role": "user", "content": f"Question: {question.strip()}\nDocument: {document.strip()}"}]


_ITEM = re.compile(r"^\s*(?:\d{1,2}\s*[.):]|[-*•])\s*(.+)$")
_ELEMENTS_HEAD = re.compile(r"^\s*#*\s*knowledge\s+elements?\s*:?\s*(.*)$", re.I)
_GIVEN_HEAD = re.compile(r"^\s*#*\s*given\s+knowledge\s*:?\s*(.*)$", re.I)
_OTHER_HEAD = re.compile(r"^\s*#*\s*(?:analysis[^:]*|thoughts[^:]*)\s*:\s*", re.I)


def _norm_key(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def parse_knowledge_elements(reply: str, max_elements: int | None = None) -> tuple[list[str], list[int]]:
    """``(elements, given)`` from a declaration reply.

    Elements are the numbered or bulleted lines after a ``Knowledge Elements:`` header (or, without
    that header, every list line before ``Given Knowledge:``), markers stripped, bold removed,
    duplicates dropped, at most ``max_elements``. ``given`` holds the numbers after ``Given
    Knowledge:`` (the reply's own numbering) mapped to 1-based positions in ``elements``; numbers
    that name no kept element are dropped (empty for ``None`` or no such section).
    """
    lines = [ln.replace("**", "").rstrip() for ln in reply.splitlines()]
    start = next((i for i, ln in enumerate(lines) if _ELEMENTS_HEAD.match(ln)), None)
    given_at = next((i for i, ln in enumerate(lines) if _GIVEN_HEAD.match(ln)), None)
    stop = given_at if given_at is not None else len(lines)
    section = lines[start + 1: stop] if start is not None and start < stop else lines[:stop]
    if start is not None:
        inline = _ELEMENTS_HEAD.match(lines[start]).group(1).strip()
        section = ([inline] if inline else []) + section
    raw: list[str] = []  # the reply's items in its own numbering (duplicates kept)
    for ln in section:
        if _OTHER_HEAD.match(ln):
            break
        m = _ITEM.match(ln)
        text = (m.group(1) if m else "").strip().rstrip(".;")
        if _norm_key(text):
            raw.append(text)
    index: dict[str, int] = {}  # normalised text → 1-based position in the de-duplicated list
    elements: list[str] = []
    for text in raw:
        if _norm_key(text) not in index:
            elements.append(text)
            index[_norm_key(text)] = len(elements)
    if max_elements is not None:
        elements = elements[:max_elements]
    given: list[int] = []
    if given_at is not None:
        tail = " ".join([_GIVEN_HEAD.match(lines[given_at]).group(1), *lines[given_at + 1: given_at + 3]])
        if not re.match(r"\s*none\b", tail, re.I):
            for tok in re.findall(r"\d+", tail):
                n = int(tok)
                if 1 <= n <= len(raw):
                    j = index[_norm_key(raw[n - 1])]
                    if j <= len(elements) and j not in given:
                        given.append(j)
    return elements, given


SUMMARIZE_SYSTEM = (
    "You choose search topics. From the knowledge elements listed, select the {n} most important, "
    "complete and non-redundant ones for searching a knowledge base to answer the question. Reply "
    "with a JSON list of {n} strings only."
)


def summarize_messages(question: str, elements: Sequence[str], n: int = 2) -> Messages:
    listing = "\n".join(f"- {e}" for e in elements)
    return [{"role": "system", "content": SUMMARIZE_SYSTEM.format(n=n)},
            {"role": "user", "content": f"Question: {question.strip()}\nKnowledge Elements:\n{listing}"}]


def parse_json_list(reply: str) -> list[str]:
    """A list of strings from a reply: the first ``[...]`` that parses as JSON (also inside a
    ```` ```json ```` fence); otherwise a ``["…", "…]`` list split at ``", "`` (a small model
    often drops the last closing quote); otherwise every double-quoted string; otherwise the list
    lines (numbered/bulleted). Items are stripped, non-strings and empties dropped."""
    text = reply.replace("“", '"').replace("”", '"')
    for m in re.finditer(r"\[[^\[\]]*\]", text, re.S):
        try:
            val = json.loads(m.group(0))
        except ValueError:
            continue
        if isinstance(val, list):
            items = [str(v).strip() for v in val if isinstance(v, (str, int, float)) and str(v).strip()]
            if items:
                return items
    for m in re.finditer(
        r"\[\s*\"([^\[\]]*)\]", text
    ):  # repair: a list whose last string lost its closing quote
        items = [x.strip().strip('"').strip() for x in re.split(r'"\s*,\s*"', m.group(1))]
        if any(items):
            return [x for x in items if x]
    quoted = [s.strip() for s in re.findall(r'"([^"\n]+)"', text) if s.strip()]
    if quoted:
        return quoted
    return [m.group(1).strip() for ln in text.splitlines() if (m := _ITEM.match(ln)) and m.group(1).strip()]


def match_elements(selected: Sequence[str], pool: Sequence[str]) -> list[str]:
    """The declared elements (``pool``) that the summariser's picks name: a pick matches the first
    pool element whose normalised words equal it or contain it (or are contained in it) as a whole
    word sequence; picks that name none (the LLM invented them) are dropped. Pool surface forms,
    in pick order, without duplicates."""
    keys = [(e, f" {_norm_key(e)} ") for e in pool]
    out: list[str] = []
    for s in selected:
        k = f" {_norm_key(s)} "
        if not k.strip():
            continue
        hit = next((e for e, ke in keys if ke == k), None) or next(
            (e for e, ke in keys if k in ke or ke in k), None
        )
        if hit is not None and hit not in out:
            out.append(hit)
    return out


def select_by_frequency(elements_per_doc: Sequence[Sequence[str]], n: int = 2) -> list[str]:
    """The ``n`` elements declared for the most documents (compared case/punctuation-insensitively;
    ties by first appearance), in their first surface form."""
    counts: Counter[str] = Counter()
    first: dict[str, tuple[int, str]] = {}
    for elements in elements_per_doc:
        for e in dict.fromkeys(elements):
            k = _norm_key(e)
            if not k:
                continue
            counts[k] += 1
            first.setdefault(k, (len(first), e))
    keys = sorted(counts, key=lambda k: (-counts[k], first[k][0]))
    return [first[k][1] for k in keys[:n]]


def diverse_merge(lists: Sequence[Sequence[str]], head: Sequence[str], tail: Sequence[str] = ()) -> list[str]:
    """Interleave the element-reranked lists (alternate, keep order, drop duplicates; paper 002
    §2.2.4), then any head passage they missed, then ``tail``. Without lists, ``head`` + ``tail``.

    ``[[b, a, c], [c, b, a]]`` over head ``[a, b, c]`` with tail ``[d]`` → ``[b, c, a, d]``."""
    merged = interleave_lists([list(x) for x in lists], max(1, sum(len(x) for x in lists))) if lists else []
    seen = set(merged)
    out = merged + [p for p in head if p not in seen]
    seen.update(out)
    return out + [p for p in tail if p not in seen]


@dataclass(frozen=True)
class KnowledgeParams:
    """The parameters of a knowledge-aware run (module docstring; ``paper:`` the seed paper's value)."""

    #: N_rank: passages of the first stage reranked, and reranked again per element
    n_rank: int = 10
    #: N_know: top documents of the initial rerank the LLM declares knowledge from (paper: 5)
    n_know: int = 2
    #: knowledge elements selected, one diverse rerank each (paper: 2)
    n_elements: int = 2
    #: elements declared per document at most (paper: 4)
    max_elements: int = 4
    #: how the elements are selected: ``"llm"`` (the summarisation prompt) or ``"frequency"``
    summarize: str = "llm"


def knowledge_aware_run(questions: Mapping[str, str], first: Run, corpus: Mapping[str, str], llm: LLM,
                        reranker: Reranker, params: KnowledgeParams = KnowledgeParams(), max_tokens: int = 80,
                        progress: bool = True) -> tuple[Run, dict[str, Any]]:
    """Steps 2–5 of the module docstring over ``first`` (the hybrid run). Returns the run and, per
    question, the declared elements per document, the ``given`` numbers and the selected elements."""
    n_rank, n_know, n_elements = params.n_rank, params.n_know, params.n_elements
    max_elements, summarize = params.max_elements, params.summarize
    if summarize not in ("llm", "frequency"):
        raise ValueError(f"summarize must be 'llm' or 'frequency', got {summarize!r}")
    if reranker is None:
        raise ValueError("knowledge-aware reranking needs a reranker (M_rank)")
    qids = [q for q in questions if q in first]
    initial = reranker.rerank(
        {q: questions[q] for q in qids}, {q: first[q] for q in qids}, corpus, depth=n_rank
    )
    # 3. declaration, one call per (question, top document)
    jobs = [(q, pid) for q in qids for pid in ranked_ids(initial, q, n_know)]
    replies = llm.chat([declare_messages(questions[q], corpus[pid], max_elements) for q, pid in jobs],
                       max_tokens=max_tokens, desc=f"declare knowledge ({llm.name})", progress=progress)
    details: dict[str, Any] = {q: {"documents": [], "selected": [], "summary_reply": None} for q in qids}
    for (q, pid), r in zip(jobs, replies, strict=True):
        els, given = parse_knowledge_elements(r, max_elements)
        details[q]["documents"].append({"pid": pid, "elements": els, "given": given, "reply": r})
    # 4. summarisation
    pool = {q: list(dict.fromkeys(e for d in details[q]["documents"] for e in d["elements"])) for q in qids}
    ask = [q for q in qids if summarize == "llm" and len(pool[q]) > n_elements]
    if ask:
        sums = llm.chat(
            [summarize_messages(questions[q], pool[q], n_elements) for q in ask],
            max_tokens=max_tokens,
            desc=f"select knowledge ({llm.name})",
            progress=progress,
        )
        for q, r in zip(ask, sums, strict=True):
            details[q]["summary_reply"] = r
            details[q]["selected"] = match_elements(parse_json_list(r), pool[q])[:n_elements]
    for q in qids:  # fewer than n_elements picked (or no LLM selection): fill with the most declared ones
        chosen = details[q]["selected"]
        for e in select_by_frequency([d["elements"] for d in details[q]["documents"]], len(pool[q])):
            if len(chosen) >= n_elements:
                break
            if e not in chosen:
                chosen.append(e)
    # 5. one rerank of the initial head per selected element, interleaved
    heads = {q: ranked_ids(initial, q, n_rank) for q in qids}
    aug_q, aug_run = {}, {}
    for q in qids:
        for i, e in enumerate(details[q]["selected"]):
            aug_q[f"{q}\t{i}"] = f"{questions[q].strip()} {e.strip()}"
            aug_run[f"{q}\t{i}"] = [(p, 0.0) for p in heads[q]]
    reranked = reranker.rerank(aug_q, aug_run, corpus, depth=None) if aug_q else {}
    out: Run = {}
    for q in qids:
        lists = [ranked_ids(reranked, f"{q}\t{i}") for i in range(len(details[q]["selected"]))]
        out[q] = ids_to_run_list(diverse_merge(lists, heads[q], ranked_ids(initial, q)[n_rank:]))
    return out, details


VERSION = 3


def knowledge_method(name: str, setup: MethodSetup, first: Run, llm: LLM, reranker: Reranker,
                     **params: Any) -> MethodResult:
    """:func:`knowledge_aware_run` over the questions of ``setup`` as one cached method run
    (:func:`~inferqa_utils.beyond.common.cached_method`; ``params``: the fields of
    :class:`KnowledgeParams` by keyword, every one of them in the run's key)."""

    p = KnowledgeParams(**params)
    questions, corpus = setup.questions, setup.corpus
    first = {q: first.get(q, []) for q in questions}
    key = method_key(
        name, corpus, questions, VERSION, first=first, llm=llm.identity,
        reranker=reranker_identity(reranker), **asdict(p),
    )
    return cached_method(name, setup.out_dir, key,
                         lambda: knowledge_aware_run(questions, first, corpus, llm, reranker, p,
                                                     progress=setup.progress),
                         len(questions), [llm, getattr(reranker, "llm", None)])
