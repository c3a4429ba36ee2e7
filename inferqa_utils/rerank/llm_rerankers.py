"""LLM rerankers (paper 000 §5.3): pointwise yes/no, query likelihood (UPR), listwise (RankGPT).

No monoT5/RankT5/LiT5 weights are available offline (docs/models.md), so the three reranking
families of the paper are realised with the packaged instruction-tuned GGUF LLMs through the
engine of :mod:`inferqa_utils.llm` (greedy, cached, prompts run in prefix-sharing order).
Prompts are in our own words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from .base import PairwiseScoreReranker, Reranker

if TYPE_CHECKING:
    from ..llm.base import LLM, Messages

# --------------------------------------------------------------------------- pointwise (monoT5-style)

POINTWISE_QUESTION = "Is the document relevant to the query? Answer Yes or No."


def pointwise_messages(query: str, passage: str) -> Messages:
    """The pointwise prompt. The query comes first so that all candidates of one query share the
    prompt prefix (system turn + query) and the engine reuses its KV cache across them."""
    return [
        {
            "role": "user",
            "content": f"Query: {query.strip()}\nDocument: {passage.strip()}\n{POINTWISE_QUESTION}",
        }
    ]


class PointwiseLLMReranker(PairwiseScoreReranker):
    """monoT5-style pointwise relevance with an instruction LLM (paper 000 §5.3).

    Score: ``s(q, d) = log P("Yes" | prompt(q, d)) − log P("No" | prompt(q, d))``, i.e. the
    log-odds of the two answers, which ranks exactly like monoT5's softmax over its two
    target tokens (``P(true) / (P(true) + P(false))`` is monotone in the log-odds). Computed with
    ``llm.score(batch, ["Yes", "No"])``, all pairs of all questions in one batch.

    Prompt layout ``Query: … / Document: … / Is the document relevant to the query? Answer Yes or
    No.``: the query is put *before* the document so that every candidate of one query shares the
    prompt prefix and the KV cache is reused (the engine runs prompts in prefix-sharing order).
    """

    name = "pointwise"

    def __init__(self, llm: LLM, progress: bool = True) -> None:
        self.llm = llm
        self.progress = progress

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        batch = [pointwise_messages(q, d) for q, d in pairs]
        out = self.llm.score(batch, ["Yes", "No"], desc=f"{self.llm.name} pointwise", progress=self.progress)
        return [yes - no for yes, no in out]


# --------------------------------------------------------------------------- query likelihood (UPR)

UPR_INSTRUCTION = "Please write a question based on this passage."


def upr_messages(passage: str) -> Messages:
    """The UPR prompt: the passage, then the instruction; the question is the scored reply."""
    return [{"role": "user", "content": f"Passage: {passage.strip()}\n{UPR_INSTRUCTION}"}]


class QueryLikelihoodReranker(PairwiseScoreReranker):
    """Unsupervised Passage Reranker (UPR; Sachan et al. 2022; paper 000 §5.3).

    Score: the mean log-likelihood of the question tokens given the passage,
    ``s(q, d) = (1/|q|) · Σ_t log P(q_t | q_<t, "Passage: d / Please write a question based on
    this passage.")``, computed with ``llm.score(batch, [[q] per item])`` (the question is the
    start of the assistant reply). ``|q|`` is the question's token count when the LLM can
    count tokens (``LlamaCppLLM.count_tokens``), otherwise its number of whitespace words. The
    normalisation does not change the order of one question's candidates (same question, same
    ``|q|``); it only makes scores comparable across questions.

    Needs multi-token continuation scoring: the in-process llama.cpp backend, or a server that
    returns prompt log-probabilities (``/v1/completions`` echo + logprobs: vLLM, llama_cpp.server
    with ``--logits_all true``; see :mod:`inferqa_utils.llm.server`). The passage comes first, so prompts of
    one query share only the system turn; there is little KV reuse.
    """

    name = "upr"

    def __init__(self, llm: LLM, normalize: bool = True, progress: bool = True) -> None:
        self.llm = llm
        self.normalize = normalize
        self.progress = progress
        self._n_tok: dict[str, int] = {}

    def n_tokens(self, question: str) -> int:
        """|q|: tokens of the question as a reply continuation (words if the LLM cannot count)."""
        n = self._n_tok.get(question)
        if n is None:
            counter = getattr(self.llm, "count_tokens", None)
            n = counter(question.strip()) if callable(counter) else len(question.split())
            self._n_tok[question] = n = max(1, int(n))
        return n

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        batch = [upr_messages(d) for _, d in pairs]
        conts = [[q.strip()] for q, _ in pairs]
        out = self.llm.score(batch, conts, desc=f"{self.llm.name} upr", progress=self.progress)
        return [
            lp[0] / (self.n_tokens(q) if self.normalize else 1) for (q, _), lp in zip(pairs, out, strict=True)
        ]


# --------------------------------------------------------------------------- listwise (RankGPT)

LISTWISE_SYSTEM = "You are a search assistant. You order passages by how well they answer a search query."

_BRACKETED = re.compile(r"\[\s*(\d+)\s*\]")
_NUMBER = re.compile(r"\d+")


def parse_permutation(text: str, n: int) -> list[int]:
    """Parse an LLM ordering such as ``"[3] > [1] > [2]"`` into a 0-based permutation of ``range(n)``.

    Identifiers are 1-based in the text. Bracketed numbers are used when present, otherwise any
    integers (``"3 > 1 > 2"``, ``"3, 1, 2"``). Out-of-range and repeated identifiers are ignored;
    identifiers the reply omits are appended in their original order (RankGPT's repair rule).
    """
    if n <= 0:
        return []
    found = _BRACKETED.findall(text) or _NUMBER.findall(text)
    seen: set[int] = set()
    order: list[int] = []
    for tok in found:
        i = int(tok) - 1
        if 0 <= i < n and i not in seen:
            seen.add(i)
            order.append(i)
    order.extend(i for i in range(n) if i not in seen)
    return order


def sliding_windows(n: int, window: int = 20, step: int = 10) -> list[tuple[int, int]]:
    """RankGPT windows ``[start, end)`` over a list of ``n`` items, from the bottom to the top.

    The first window is ``(n − window, n)``; each next one moves up by ``step``; the last one
    starts at 0 (it is shorter than ``window`` when ``n − window`` is not a multiple of ``step``,
    so that the top of the list is always covered — RankGPT's loop would skip it). With
    ``step < window`` the best ``window − step`` items of each window are carried into the next,
    so the overall top ``window − step`` bubble up to the head of the list.
    ``n = 100, window = 20, step = 10`` → (80, 100), (70, 90), …, (0, 20).
    """
    if window <= 0 or step <= 0:
        raise ValueError(f"window and step must be positive, got window={window}, step={step}")
    if n <= 0:
        return []
    out: list[tuple[int, int]] = []
    end = n
    while True:
        start = max(0, end - window)
        out.append((start, end))
        if start == 0:
            return out
        end -= step


def _truncate(text: str, max_words: int | None) -> str:
    words = text.split()
    if max_words is None or len(words) <= max_words:
        return " ".join(words)
    return " ".join(words[:max_words]) + " …"


def listwise_messages(query: str, passages: Sequence[str], max_words: int | None = 100) -> Messages:
    """The listwise prompt: the query, the numbered passages ``[1]..[w]``, the query again and the
    output format. The query leads so that the windows of one query share a prefix."""
    w = len(passages)
    lines = [f"Query: {query.strip()}",
             f"Here are {w} passages, each marked with a number in square brackets.", ""]
    lines += [f"[{i}] {_truncate(p, max_words)}" for i, p in enumerate(passages, 1)]
    lines += ["", f"Query: {query.strip()}",
              f"Order all {w} passages from the most to the least relevant to the query. Reply with the "
              "numbers only, in the form [2] > [1] > [3], without any explanation."]
    return [{"role": "system", "content": LISTWISE_SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


class ListwiseLLMReranker(Reranker):
    """RankGPT-style listwise reranking with sliding windows (Sun et al. 2023; paper 000 §5.3).

    The head (top-``depth``) is reordered window by window from the bottom up
    (:func:`sliding_windows`, default ``window=20, step=10``): for each window the LLM sees the
    numbered passages and replies with an ordering ``[i] > [j] > …`` (greedy ``llm.chat``),
    parsed by :func:`parse_permutation`, and the window's items are rearranged accordingly. The
    final score of the passage at head position ``r`` (0-based) is ``len(head) − r``: a rank, not
    a calibrated relevance. Windows depend on the previous ones, so each query's windows run
    sequentially (one chat call each). Passages are cut to ``max_words`` words in the prompt.
    """

    name = "listwise"

    def __init__(self, llm: LLM, window: int = 20, step: int = 10, max_words: int | None = 100,
                 max_tokens: int | None = None) -> None:
        sliding_windows(1, window, step)  # validate
        self.llm = llm
        self.window = window
        self.step = step
        self.max_words = max_words
        self.max_tokens = max_tokens
        #: raw replies of the last call, (qid, start, end, reply) — for inspection
        self.replies: list[tuple[str, int, int, str]] = []

    def _budget(self, w: int) -> int:
        # "[12] > " is ≤ 6 tokens with digit-wise tokenisers
        return self.max_tokens or 6 * w + 8

    def rank_window(self, query: str, passages: Sequence[str]) -> tuple[list[int], str]:
        """One window: (0-based permutation, best first; the raw reply)."""
        if len(passages) <= 1:
            return list(range(len(passages))), ""
        msgs = listwise_messages(query, passages, self.max_words)
        reply = self.llm.chat([msgs], max_tokens=self._budget(len(passages)), progress=False)[0]
        return parse_permutation(reply, len(passages)), reply

    def rerank_list(self, query: str, pids: Sequence[str], corpus: Mapping[str, str],
                    qid: str = "") -> list[str]:
        """The pids reordered by sliding windows, bottom to top."""
        order = list(pids)
        for start, end in sliding_windows(len(order), self.window, self.step):
            win = order[start:end]
            perm, reply = self.rank_window(query, [corpus[p] for p in win])
            self.replies.append((qid, start, end, reply))
            order[start:end] = [win[i] for i in perm]
        return order

    def _rerank_heads(self, queries: Mapping[str, str], heads: Mapping[str, list[str]],
                      corpus: Mapping[str, str]) -> dict[str, list[tuple[str, float]]]:
        self.replies = []
        out = {}
        for qid, head in heads.items():
            order = self.rerank_list(queries[qid], head, corpus, qid)
            out[qid] = [(pid, float(len(order) - r)) for r, pid in enumerate(order)]
        return out
