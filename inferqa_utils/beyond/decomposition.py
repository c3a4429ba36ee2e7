"""Visconde-style decomposition (paper 001 §3; papers 001–003): decompose → retrieve → aggregate.

1. **Decompose.** A few-shot LLM splits the question into at most ``max_sub`` simpler
   sub-questions. The in-context examples are either the first ``n`` of a static bank
   (:data:`EXAMPLES`, our own wording; paper: five random StrategyQA decompositions) or the ``n``
   nearest bank questions by cosine similarity of MiniLM embeddings ("dynamic prompt", kNN as in
   Liu et al.; the most similar example is placed last, next to the test question). The reply is
   parsed robustly (:func:`parse_subquestions`); an unusable reply leaves only the question.
2. **Retrieve.** Each query — the original question (``include_original=True``) and each
   sub-question — gets its own BM25 top-``retrieve_depth`` list (paper: Pyserini BM25 top-1000),
   optionally reranked at depth ``rerank_depth`` (paper: monoT5-3B; here an LLM pointwise
   reranker or a bi-encoder, :func:`~inferqa_utils.beyond.common.make_method_reranker`).
3. **Pool** (:func:`pool_top_k`). The top-``k_per`` passages of every query list are pooled
   round-robin (query order, rank-major, duplicates dropped), then the rest of the lists follow in
   the same round-robin order, so the run also has a tail for the metrics. Scores are rank-based.
4. **Aggregate.** A chain-of-thought reader (:func:`read_cot`; paper Fig. 2): numbered documents
   (the top-k pooled passages), the question, then the model writes ``Evidence:`` before
   ``Answer:``; the final ``Answer:`` line is post-processed with the paper 000 §4 rules. The pooled
   run is also read with the ordinary short-answer reader (paper 000 A.4) by the notebook.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..answering.prompts import READER_FEWSHOT
from ..answering.reader import postprocess
from ..answering.scoring import score_answers
from ..ir.lexical import EmptyQueryError
from ..ir.runs import ids_to_run_list
from ..ir.trec import Run
from ..llm.embeddings import load_embedder
from ..retrieval.fusion import identity_of, interleave_lists
from .common import MethodResult, MethodSetup, cached_method, method_key, reranker_identity, split_sentences

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from ..llm.base import LLM, Messages
    from ..llm.embeddings import Embedder
    from ..reading.setup import ReadingSetup
    from ..rerank.base import Reranker

#: (question, sub-questions): our own decompositions of quiz questions whose entities appear in none
#: of our datasets' reader examples; they show the form only (no answers are given).
EXAMPLES: list[tuple[str, list[str]]] = [
    (
        "Which Austrian composer wrote the opera 'The Magic Flute' shortly before his death in Vienna in "
        "1791?",
        ["Who wrote the opera The Magic Flute?", "Which Austrian composer died in Vienna in 1791?"],
    ),
    (
        "Which Scottish engineer improved the steam engine with a separate condenser and gave his name to a "
        "unit of power?",
        [
            "Who added a separate condenser to the steam engine?",
            "Which unit of power is named after an engineer?",
        ],
    ),
    (
        "Which river flows through Baghdad and joins the Euphrates before reaching the Persian Gulf?",
        ["Which river flows through Baghdad?", "Which river joins the Euphrates near the Persian Gulf?"],
    ),
    (
        "Which Greek hero killed the Minotaur in the labyrinth of Crete with help from Ariadne?",
        ["Who killed the Minotaur in the labyrinth?", "Whom did Ariadne help on Crete?"],
    ),
    (
        "Which gas makes up about 78 percent of Earth's atmosphere and is used to keep crisps fresh in their "
        "bags?",
        ["Which gas makes up most of Earth's atmosphere?", "Which gas is used to fill bags of crisps?"],
    ),
    (
        "In which year did astronauts of the Apollo 11 mission first walk on the Moon?",
        [
            "When did the Apollo 11 mission land on the Moon?",
            "In which year did people first walk on the Moon?",
        ],
    ),
    (
        "What do you call a scientist who studies earthquakes and the waves they send through the Earth?",
        ["What is the study of earthquakes called?", "What is a scientist who studies seismic waves called?"],
    ),
    (
        "Which planet, the sixth from the Sun, is best known for its bright system of rings?",
        ["Which planet is the sixth from the Sun?", "Which planet has the brightest rings?"],
    ),
]

DECOMPOSE_SYSTEM = (
    "You break a quiz question into simpler search questions. Write at most {n} short "
    "sub-questions, one per line, numbered, each ending with a question mark. Never answer them."
)


def decompose_messages(
    question: str, examples: Sequence[tuple[str, Sequence[str]]], max_sub: int = 3
) -> Messages:
    """System instruction, the examples as prior chat turns, then the question."""
    msgs: Messages = [{"role": "system", "content": DECOMPOSE_SYSTEM.format(n=max_sub)}]
    for q, subs in examples:
        msgs.append({"role": "user", "content": f"Question: {q}\nSub-questions:"})
        msgs.append(
            {"role": "assistant", "content": "\n".join(f"{i}. {s}" for i, s in enumerate(subs[:max_sub], 1))}
        )
    msgs.append({"role": "user", "content": f"Question: {question.strip()}\nSub-questions:"})
    return msgs


_MARKER = re.compile(
    r"^\s*(?:[-*•>]+|\(?\d{1,2}\s*[.):]|\(?[a-h][.)]|(?:sub-?questions?|q)\s*\d*\s*[:.)-])\s*", re.I
)
_HEADER = re.compile(r"^\s*(?:sub-?questions?|questions?|answer|here are[^:]*)\s*:?\s*$", re.I)


def _key(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def parse_subquestions(reply: str, question: str = "", max_sub: int = 3) -> list[str]:
    """Sub-questions from an LLM reply, robust to numbering and formatting.

    Per line: leading list markers (``1.``, ``2)``, ``-``, ``*``, ``Q1:``, ``Sub-question 2:``, bold)
    are stripped and header lines (``Sub-questions:``) dropped; a line holding several questions is
    split after each ``?``. Segments ending in ``?`` are kept; if no line has a ``?``, the remaining
    lines of ≥ 3 words are used instead. Segments of < 3 words, duplicates (case/punctuation-
    insensitive) and copies of ``question`` are dropped; at most ``max_sub`` are returned, in
    reply order (possibly none).
    """
    if max_sub < 1:
        raise ValueError(f"max_sub must be ≥ 1, got {max_sub}")
    lines = []
    for raw in reply.replace("**", "").splitlines():
        line = raw.strip()
        for _ in range(2):
            line = _MARKER.sub("", line).strip()
        if line and not _HEADER.match(line):
            lines.append(line)
    with_q = [seg.strip() for line in lines for seg in re.findall(r"[^?]*\?", line) if seg.strip(" ?")]
    cands = with_q or [ln for ln in lines if len(ln.split()) >= 3]
    out: list[str] = []
    seen = {_key(question)} if question else set()
    for c in cands:
        c = _MARKER.sub("", " ".join(c.split())).strip()
        k = _key(c)
        if len(c.split()) < 3 or not k or k in seen:
            continue
        seen.add(k)
        out.append(c)
        if len(out) == max_sub:
            break
    return out


def knn_select(query_vec: np.ndarray, example_vecs: np.ndarray, k: int) -> list[int]:
    """Indices of the ``k`` examples most similar to the query (dot product of L2-normalised
    vectors = cosine), returned from the least to the most similar of them (the most similar is
    placed last, next to the test question); ties by example index."""
    import numpy as np

    if k < 0:
        raise ValueError(f"k must be ≥ 0, got {k}")
    sims = np.asarray(example_vecs, dtype=np.float64) @ np.asarray(query_vec, dtype=np.float64)
    best = sorted(range(len(sims)), key=lambda i: (-round(float(sims[i]), 9), i))[:k]
    return best[::-1]


def select_examples(questions: Sequence[str], n: int, selection: str = "static",
                    embedder: Embedder | None = None,
                    bank: Sequence[tuple[str, Sequence[str]]] = EXAMPLES) -> list[list[int]]:
    """Per question, the bank indices of its in-context examples: ``"static"`` → the first ``n``;
    ``"knn"`` → :func:`knn_select` on ``embedder`` (default MiniLM) question embeddings."""
    n = min(n, len(bank))
    if selection == "static":
        return [list(range(n)) for _ in questions]
    if selection != "knn":
        raise ValueError(f"selection must be 'static' or 'knn', got {selection!r}")
    if embedder is None:
        embedder = load_embedder("minilm")
    ev = embedder.encode([q for q, _ in bank], role="query", progress=False)
    qv = embedder.encode(list(questions), role="query", progress=False)
    return [knn_select(v, ev, n) for v in qv]


def decompose(llm: LLM, questions: Mapping[str, str], n_examples: int = 3, selection: str = "static",
              max_sub: int = 3, embedder: Embedder | None = None, max_tokens: int = 64,
              progress: bool = True) -> dict[str, dict[str, Any]]:
    """qid → ``{"subquestions": [...], "reply": raw LLM reply, "examples": [bank indices]}`` (one
    batched, cached chat call)."""
    qids = list(questions)
    picks = select_examples([questions[q] for q in qids], n_examples, selection, embedder)
    msgs = [decompose_messages(questions[q], [EXAMPLES[i] for i in pick], max_sub)
            for q, pick in zip(qids, picks, strict=True)]
    replies = llm.chat(msgs, max_tokens=max_tokens, desc=f"decompose ({llm.name})", progress=progress)
    return {q: {"subquestions": parse_subquestions(r, questions[q], max_sub), "reply": r, "examples": pick}
            for q, r, pick in zip(qids, replies, picks, strict=True)}


def pool_top_k(lists: Sequence[Sequence[str]], k_per: int, depth: int | None = None) -> list[str]:
    """Pool ranked lists: the top-``k_per`` of every list round-robin (list order, rank-major,
    duplicates dropped), then the rest of every list in the same round-robin order; cut at ``depth``.

    ``[[a, b, c, d], [b, e, f]]`` with ``k_per=2`` → head ``[a, b, e]`` (a from list 1, b from
    list 2, list 1's b is taken, e from list 2), tail ``[c, f, d]`` → ``[a, b, e, c, f, d]``.
    """
    if k_per < 1:
        raise ValueError(f"k_per must be ≥ 1, got {k_per}")
    big = sum(len(x) for x in lists) or 1
    head = interleave_lists([list(x[:k_per]) for x in lists], big)
    taken = set(head)
    tail = [p for p in interleave_lists([[p for p in x[k_per:] if p not in taken] for x in lists], big)]
    out = head + [p for p in tail if p not in taken]
    return out if depth is None else out[:depth]


def query_lists(question: str, subquestions: Sequence[str], include_original: bool = True) -> list[str]:
    """The queries searched for one question: the question first (``include_original``), then the
    sub-questions; the question alone when there are no sub-questions."""
    qs = ([question] if include_original else []) + list(subquestions)
    return qs or [question]


def _search_each(retriever: Any, queries: Mapping[str, str], k: int) -> Run:
    """Search query by query; a query with no searchable term gets an empty list."""
    out: Run = {}
    for key, text in queries.items():
        try:
            out.update(retriever.search({key: text}, k))
        except EmptyQueryError:
            out[key] = []
    return out


@dataclass(frozen=True)
class DecompositionParams:
    """The parameters of a decomposition run (module docstring; ``paper:`` the seed paper's value)."""

    #: in-context decomposition examples (paper: 5)
    n_examples: int = 3
    #: how they are chosen: ``"static"`` (the first of the bank) or ``"knn"`` (nearest bank questions)
    selection: str = "static"
    #: sub-questions kept per question
    max_sub: int = 3
    #: passages pooled per query list (paper StrategyQA: 5)
    k_per: int = 3
    #: BM25 depth per query (paper: 1000)
    retrieve_depth: int = 100
    #: passages reranked per query (when there is a reranker)
    rerank_depth: int = 10
    #: passages of the pooled run per question
    depth: int = 100
    #: whether the question itself is searched besides its sub-questions
    include_original: bool = True


def decomposition_run(questions: Mapping[str, str], subquestions: Mapping[str, Sequence[str]], retriever: Any,
                      corpus: Mapping[str, str], reranker: Reranker | None = None,
                      params: DecompositionParams = DecompositionParams()) -> Run:
    """The pooled run (steps 2–3 of the module docstring). ``retriever`` has ``search(queries, k)``
    (e.g. ``make_retriever("bm25s", corpus)``); ``params.k_per``, ``depth``, ``retrieve_depth``,
    ``rerank_depth`` and ``include_original`` apply."""
    k_per, depth, rerank_depth = params.k_per, params.depth, params.rerank_depth
    retrieve_depth, include_original = params.retrieve_depth, params.include_original
    flat: dict[str, str] = {}
    per_q: dict[str, list[str]] = {}
    for qid, text in questions.items():
        keys = []
        for i, s in enumerate(query_lists(text, subquestions.get(qid, ()), include_original)):
            key = f"{qid}\t{i}"
            flat[key] = s
            keys.append(key)
        per_q[qid] = keys
    first = _search_each(retriever, flat, retrieve_depth)
    if reranker is not None:
        first = reranker.rerank(flat, first, corpus, depth=rerank_depth)
    return {qid: ids_to_run_list(pool_top_k([[p for p, _ in first.get(k, [])] for k in keys], k_per, depth))
            for qid, keys in per_q.items()}


# ----------------------------------------------------------------------------- chain-of-thought reader

COT_SYSTEM = ("You answer quiz questions from numbered documents that describe the answer without naming it. "
              "First write 'Evidence:' and say in one or two sentences which clues point to the answer. Then "
              "write 'Answer:' followed by the exact short answer only (a name, a number, a word or a short "
              "phrase). If the documents are not enough, write 'Answer: NO ANSWER'.")

#: evidence paragraphs for two of the reader's few-shot entities (paper 000 A.4 examples in prompts.py)
_COT_EVIDENCE = {
    "Lake Baikal": (
        "[Document 1] places it in southern Siberia and calls it the deepest lake on Earth; "
        "[Document 2] adds a seal found only there and its great age. These clues describe Lake Baikal."
    ),
    "Sundial": (
        "[Document 1] says it tells the time from the Sun with a gnomon casting a shadow; [Document 2] "
        "says it fails at night and was used in antiquity. These clues describe a sundial."
    ),
}


def _documents(texts: Sequence[str]) -> str:
    return "\n".join(f"[Document {i}] {t.strip()}" for i, t in enumerate(texts, 1))


def cot_user_turn(question: str, documents: Sequence[str]) -> str:
    return f"{_documents(documents)}\n\nQuestion: {question.strip()}\nEvidence:"


def cot_messages(question: str, documents: Sequence[str]) -> Messages:
    """CoT prompt (paper 001 Fig. 2, our wording): two worked examples, then the documents and question."""
    msgs: Messages = [{"role": "system", "content": COT_SYSTEM}]
    for ctx, q, a in READER_FEWSHOT:
        if a not in _COT_EVIDENCE:
            continue
        sents = split_sentences(ctx)
        docs = [" ".join(sents[: len(sents) // 2 + 1]), " ".join(sents[len(sents) // 2 + 1:])]
        msgs.append({"role": "user", "content": cot_user_turn(q, docs)})
        msgs.append({"role": "assistant", "content": f"{_COT_EVIDENCE[a]}\nAnswer: {a}"})
    msgs.append({"role": "user", "content": cot_user_turn(question, documents)})
    return msgs


_ANSWER_LINE = re.compile(r"^\s*(?:final\s+)?answer\s*[:\-]\s*(.*)$", re.I)


def parse_cot(reply: str) -> tuple[str, str]:
    """``(evidence, short answer)`` from a CoT reply. The answer is the text of the last
    ``Answer:`` line (or the line after it when that is empty); without one, the last non-empty
    line. It is then post-processed with the paper 000 §4 rules
    (:func:`inferqa_utils.answering.reader.postprocess`)."""

    lines = [ln.replace("**", "").strip() for ln in reply.strip().splitlines()]
    idx, ans = None, ""
    for i, ln in enumerate(lines):
        m = _ANSWER_LINE.match(ln)
        if m:
            idx = i
            ans = m.group(1).strip() or next((x for x in lines[i + 1:] if x), "")
    if idx is None:
        body = [ln for ln in lines if ln]
        return " ".join(body[:-1]), postprocess(body[-1] if body else "")
    evidence = " ".join(ln for ln in lines[:idx] if ln)
    evidence = re.sub(r"^evidence\s*:\s*", "", evidence, flags=re.I)
    return evidence, postprocess(ans)


def read_cot(setup: ReadingSetup, run: Run, qids: Sequence[str], max_tokens: int = 128,
             system: str = "") -> pd.DataFrame:
    """Read each question's top-``setup.k`` passages of ``run`` (their text in ``setup.corpus``) with
    ``setup.reader`` as the CoT reader and score the answers (strict EM and judged by
    ``setup.judge``, :func:`inferqa_utils.answering.scoring.score_answers`). Columns as
    :func:`inferqa_utils.reading.topk.read_run` (``union = "docs"``) plus ``raw`` and ``evidence``."""

    llm, judge, ds, k, progress = setup.reader, setup.judge, setup.dataset, setup.k, setup.progress
    corpus = setup.corpus if setup.corpus is not None else {pid: p.text for pid, p in ds.passages.items()}
    qids = list(qids)
    docs = [[corpus[pid] for pid, _ in run.get(q, [])[:k]] for q in qids]
    msgs = [cot_messages(ds.questions[q].question, d) for q, d in zip(qids, docs, strict=True)]
    raws = llm.chat(msgs, max_tokens=max_tokens, desc=f"CoT read ({llm.name})", progress=progress)
    parsed = [parse_cot(r) for r in raws]
    df = score_answers(ds, qids, [a for _, a in parsed], judge, progress=progress)
    df["context_chars"] = [sum(len(t) for t in d) for d in docs]
    df["raw"] = raws
    df["evidence"] = [e for e, _ in parsed]
    return df.assign(setting="pipeline", system=system, k=k, union="docs", reader=f"{llm.name} (CoT)")


# ----------------------------------------------------------------------------- the notebook-07 entry point

VERSION = 1


def decomposition_method(name: str, setup: MethodSetup, llm: LLM, retriever: Any,
                         reranker: Reranker | None = None, **params: Any) -> MethodResult:
    """Decompose + retrieve + pool the questions of ``setup`` as one cached method run
    (:func:`~inferqa_utils.beyond.common.cached_method`; ``params``: the fields of
    :class:`DecompositionParams` by keyword, every one of them in the run's key); details: per
    question the sub-questions, the raw reply and the example indices."""

    p = DecompositionParams(**params)
    questions, corpus = setup.questions, setup.corpus
    key = method_key(
        name, corpus, questions, VERSION, llm=llm.identity,
        retriever=getattr(retriever, "name", "?"),
        retriever_identity=identity_of(retriever),
        reranker=reranker_identity(reranker),
        **asdict(p),
    )

    def compute() -> tuple[Run, dict[str, Any]]:
        details = decompose(llm, questions, p.n_examples, p.selection, p.max_sub, progress=setup.progress)
        run = decomposition_run(
            questions, {q: d["subquestions"] for q, d in details.items()}, retriever, corpus, reranker, p
        )
        return run, details

    return cached_method(name, setup.out_dir, key, compute, len(questions),
                         [llm, getattr(reranker, "llm", None)])
