"""The compendium's data model (paper 000 §1–2).

A *question* carries its hints (sentences that describe the answer without naming it), its
answer with aliases, candidate answers (for convergence, paper 000 §3.1.2), TREC type,
difficulty and an optional answer-containing reference passage (the control corpus of paper 000 §4, §5.1–5.2).
A *passage* is an ordered concatenation of some of a question's hints, identified QUIT-style
as ``{qid}_{subset_mask}_{permutation}`` (docs/data.md, *The QUIT release shape*). Labels (0/1/2) are TREC
qrels: ``{qid: {pid: label}}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Labels (paper 000 §1): 2 fully relevant, 1 partially relevant, 0 irrelevant.
LABEL_IRRELEVANT, LABEL_PARTIAL, LABEL_RELEVANT = 0, 1, 2


@dataclass
class Hint:
    """One hint sentence; ``convergence`` in [0, 1] when known (paper 000 §3.1.2)."""

    text: str
    convergence: float | None = None
    #: per-candidate judge scores {candidate: 0/1} when the source stores them
    scores: dict[str, int] | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Question:
    """A question with its hints and answers. ``answers[0]`` is the canonical gold answer."""

    qid: str
    question: str
    answers: list[str]
    hints: list[Hint]
    candidates: list[str] = field(default_factory=list)
    #: TREC coarse:fine type, e.g. ``HUM:ind``
    qtype: str | None = None
    difficulty: str | None = None
    #: answer-containing reference passage (TriviaHG ``Snippet``, our embedded references)
    reference: str | None = None
    source: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    #: further answer-containing reference passages (our embedded set has two per question)
    extra_references: list[str] = field(default_factory=list)

    @property
    def answer(self) -> str:
        return self.answers[0]

    @property
    def aliases(self) -> list[str]:
        return self.answers[1:]

    @property
    def coarse_type(self) -> str | None:
        return self.qtype.split(":", 1)[0] if self.qtype else None

    @property
    def hint_texts(self) -> list[str]:
        return [h.text for h in self.hints]

    @property
    def references(self) -> list[str]:
        """Every answer-containing reference passage: ``reference`` first, then the extra ones."""
        return [r for r in [self.reference, *self.extra_references] if r]


@dataclass(frozen=True, slots=True)
class Passage:
    """An ordered concatenation of hints of question ``qid`` (docs/data.md, *The QUIT release shape*).

    Slotted: QUIT holds 2.4 M of them, and a per-instance ``__dict__`` would cost ~100 bytes each."""

    pid: str
    qid: str
    #: indices into the question's (kept) hint list, in passage order
    hint_ids: tuple[int, ...]
    text: str

    @property
    def n_hints(self) -> int:
        return len(self.hint_ids)


def passage_id(qid: str, hint_ids: Sequence[int], n_hints: int) -> str:
    """``{qid}_{subset_mask}_{permutation}``; mask char i is 1 iff hint i is used."""
    mask = "".join("1" if i in hint_ids else "0" for i in range(n_hints))
    perm = "".join(str(i) for i in hint_ids)
    return f"{qid}_{mask}_{perm}"


def parse_passage_id(pid: str) -> tuple[str, str, tuple[int, ...]]:
    """Inverse of :func:`passage_id`: ``(qid, mask, hint_ids)``. The qid may contain ``_``."""
    try:
        qid, mask, perm = pid.rsplit("_", 2)
    except ValueError:
        raise ValueError(f"passage id {pid!r} is not of the form qid_mask_permutation") from None
    if not (mask and set(mask) <= {"0", "1"} and perm.isdigit()):
        raise ValueError(f"passage id {pid!r}: bad mask {mask!r} or permutation {perm!r}")
    hint_ids = tuple(int(c) for c in perm)
    if sorted(hint_ids) != [i for i, c in enumerate(mask) if c == "1"]:
        raise ValueError(f"passage id {pid!r}: permutation does not match the mask")
    return qid, mask, hint_ids


def join_hints(hints: Sequence[str], hint_ids: Iterable[int]) -> str:
    """Passage text: the hints in permutation order joined by one space (docs/data.md, *The QUIT release
    shape*)."""
    return " ".join(hints[i].strip() for i in hint_ids)


@dataclass
class Dataset:
    """A (possibly built) dataset: questions, passages, labels and splits."""

    name: str
    questions: dict[str, Question]
    passages: dict[str, Passage] = field(default_factory=dict)
    #: qrels: {qid: {pid: label}}; passages of other questions are implicitly 0
    qrels: dict[str, dict[str, int]] = field(default_factory=dict)
    splits: dict[str, list[str]] = field(default_factory=dict)
    #: generated answers per passage: {pid: {model: answer}}
    generations: dict[str, dict[str, str]] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.questions)

    def __iter__(self) -> Iterator[Question]:
        return iter(self.questions.values())

    def split(self, name: str) -> list[Question]:
        if name not in self.splits:
            raise KeyError(f"dataset {self.name!r} has no split {name!r} (has {sorted(self.splits)})")
        return [self.questions[q] for q in self.splits[name]]

    def passages_of(self, qid: str) -> list[Passage]:
        return [p for p in self.passages.values() if p.qid == qid]

    def passage_sentences(self, pid: str, corpus: Mapping[str, str] | None = None) -> list[str]:
        """The hints (sentences) of a passage, the units a reading context is built from (paper 000
        §5.4, hint level): for a built passage its question's hints in permutation order (a
        distractor question's hints come from ``meta["distractor_hints"]``; the passage text as one
        unit when they are not known); for any other entry of ``corpus`` (e.g. a control-corpus
        reference) its text as one unit. ``KeyError`` when ``pid`` is in neither."""
        p = self.passages.get(pid)
        if p is not None:
            hints = (self.questions[p.qid].hint_texts if p.qid in self.questions
                     else self.meta.get("distractor_hints", {}).get(p.qid))
            if hints is not None and all(i < len(hints) for i in p.hint_ids):
                return [hints[i].strip() for i in p.hint_ids]
            return [p.text]
        if corpus is not None and pid in corpus:
            return [corpus[pid]]
        raise KeyError(f"passage {pid!r} is neither in dataset {self.name!r} nor in the given corpus")

    def subset(self, qids: Iterable[str], name: str | None = None) -> Dataset:
        """A dataset restricted to ``qids`` (order kept), with their passages and labels."""
        keep = [q for q in qids if q in self.questions]
        ks = set(keep)
        return Dataset(
            name=name or self.name,
            questions={q: self.questions[q] for q in keep},
            passages={p: v for p, v in self.passages.items() if v.qid in ks},
            qrels={q: v for q, v in self.qrels.items() if q in ks},
            splits={s: [q for q in v if q in ks] for s, v in self.splits.items()},
            generations={p: g for p, g in self.generations.items() if p.rsplit("_", 2)[0] in ks},
            meta=dict(self.meta),
        )
