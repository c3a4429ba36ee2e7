"""Answer-type-aware query expansion: BM25 over the question plus words typical of the hints that
describe an answer of the type the question asks for.

An inferential question's answer is never in the corpus; its passages are hints that describe the
answer without naming it (paper 000 §3). The question does say what *type* of thing it asks for,
and hints describing things of one type share words: a person was born, won, married, died; a
place lies by a river, borders a country. So each question's expected answer type is classified
with the compendium's rule-based TREC classifier (coarse Li & Roth class,
:func:`inferqa_utils.ir.qtype.classify_question`) and that type's words are added to its BM25 query.

Plugged in as the entry point ``answer-type-bm25`` of the group ``inferqa.retrievers``
(``pyproject.toml``), or as the spec ``inferqa_answer_type:make_retriever``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from inferqa_utils.ir.lexical import BM25sRetriever, bm25s_identity
from inferqa_utils.ir.qtype import classify_question

#: bump when the expansion changes: cached runs are then computed again
VERSION = 1

#: words typical of hints describing an answer of each coarse TREC type (written before any run)
TYPE_WORDS: dict[str, str] = {
    "HUM": "born died life career known famous married won award",
    "LOC": "located lies city country capital river border region north south",
    "NUM": "number year years total measured",
    "ENTY": "used made called type kind known",
    "ABBR": "stands short letters",
    "DESC": "",
}


def expand(question: str) -> str:
    """The question followed by the words of its expected answer type."""
    coarse = classify_question(question).split(":")[0]
    return f"{question} {TYPE_WORDS.get(coarse, '')}".strip()


def identity() -> str:
    """What decides this retriever's runs besides corpus, questions and k."""
    return f"answer-type expansion v{VERSION}; {bm25s_identity()}"


class AnswerTypeBM25:
    """bm25s BM25 (Lucene variant, k1 0.9, b 0.4) searching each question's expanded query."""

    name = "answer-type-bm25"

    def __init__(self, corpus: Mapping[str, str]) -> None:
        self.bm25 = BM25sRetriever(corpus)
        self.identity = identity()

    def search(self, queries: Mapping[str, str], k: int = 100) -> dict[str, list[tuple[str, float]]]:
        return self.bm25.search({qid: expand(text) for qid, text in queries.items()}, k)


def make_retriever(corpus: Mapping[str, str], index_dir: Path | None = None) -> AnswerTypeBM25:
    """BM25 with answer-type expansion over ``corpus`` (passage id → text); no index on disk."""
    return AnswerTypeBM25(corpus)


make_retriever.identity = identity  # type: ignore[attr-defined]
