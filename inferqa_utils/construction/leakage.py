"""Answer-leakage filter (paper 000 §3.1.2).

The paper drops a question when a BEM answer-equivalence model finds a hint word or n-gram
equivalent to the answer. Here equivalence is decided by matching, per answer/alias:

1. *exact*: a hint n-gram equals the answer after SQuAD normalisation, accent folding,
   number-word folding ("seven" ≡ "7") and light plural folding ("mirrors" ≡ "mirror")
   (:func:`~inferqa_utils.ir.textnorm.canonical_tokens`);
2. *fuzzy*: a hint n-gram of the same length reaches ``fuzzy_threshold`` in
   :func:`rapidfuzz.fuzz.ratio` (only for answers of ≥ ``fuzzy_min_chars`` characters, so short
   answers never match by accident: "Rome" vs "home");
3. *token*: a distinctive token of a multi-word answer (≥ 4 characters, not a stop or generic
   word) occurs in the hint — "Leonardo" leaks "Leonardo da Vinci";
4. *embedding* (optional): cosine similarity between the answer and a hint n-gram ≥ a threshold,
   with any :class:`~inferqa_utils.llm.embeddings.Embedder`.

Every decision is returned as a :class:`Leak` naming the hint, the answer and the matching n-gram.

A source may store its own per-hint leakage score (WikiHint's ``answer_leakage``); the build
reports it beside this filter's per-hint decision (:meth:`LeakageFilter.per_hint`) in a table with
:data:`AGREEMENT_COLUMNS`, counted by :func:`leakage_disagreements`. The score never drops a hint.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..ir.textnorm import canonical_tokens

if TYPE_CHECKING:
    import pandas as pd

#: tokens of multi-word answers that are too generic to count as a leak on their own
GENERIC_TOKENS = frozenset(
    [
        "about", "after", "again", "also", "among", "around", "back", "band", "city", "club", "coast",
        "company", "country", "county", "empire", "family", "first", "from", "great", "group", "house",
        "island", "islands", "kingdom", "lake", "land", "last", "little", "major", "mount", "mountain",
        "national", "north", "east", "south", "west", "northern", "southern", "eastern", "western", "ocean",
        "river", "river's", "royal", "saint", "school", "state", "states", "street", "team", "that", "their",
        "there", "these", "this", "those", "through", "united", "university", "with", "world", "year",
        "years", "king", "queen", "lord", "lady", "prince", "princess", "river", "sea", "bay", "cape", "port",
        "fort", "new", "old", "century", "decade", "language", "syndrome", "tune", "song", "album", "film",
        "movie", "book", "novel", "play", "show", "game", "dance", "day", "war", "act", "law", "party",
        "award", "prize", "cup", "league", "park", "bridge", "tower", "castle", "hall", "church", "cathedral",
        "palace", "square", "road", "station", "airport", "canal", "theatre", "museum", "festival", "disease",
        "effect", "theory", "number", "system", "music", "style",
    ]
)
_STOP = frozenset(
    [
        "a", "an", "the", "of", "and", "or", "in", "on", "at", "to", "for", "by", "with", "from", "de", "da",
        "di", "del", "der", "van", "von", "la", "le",
    ]
)


def _ngrams(tokens: Sequence[str], n: int) -> list[str]:
    return [" ".join(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]


@dataclass(frozen=True)
class Leak:
    """A hint that names (an equivalent of) the answer."""

    hint_index: int
    hint: str
    answer: str
    ngram: str
    method: str  # exact | fuzzy | token | embedding
    score: float = 1.0


@dataclass
class LeakageFilter:
    """Configured leakage matcher; call :meth:`find` on a question's answers and hints."""

    fuzzy_threshold: float = 90.0
    fuzzy_min_chars: int = 6
    token_level: bool = True
    embedder: object | None = None
    embedding_threshold: float = 0.9

    def find(self, answers: Sequence[str], hints: Sequence[str]) -> list[Leak]:
        """All leaks of any answer in any hint (at most one per hint and answer)."""
        from rapidfuzz import fuzz

        leaks: list[Leak] = []
        for ai, answer in enumerate(answers):
            a_toks = canonical_tokens(answer)
            if not a_toks:
                continue
            a_str = " ".join(a_toks)
            n = len(a_toks)
            distinctive = [t for t in a_toks if len(t) >= 4 and t not in GENERIC_TOKENS and t not in _STOP
                           and not t.isdigit()] if n > 1 and self.token_level else []
            for hi, hint in enumerate(hints):
                h_toks = canonical_tokens(hint)
                grams = _ngrams(h_toks, n)
                leak = None
                if a_str in grams:
                    leak = Leak(hi, hint, answer, a_str, "exact")
                elif len(a_str) >= self.fuzzy_min_chars and grams:
                    best = max(grams, key=lambda g: fuzz.ratio(g, a_str))
                    score = fuzz.ratio(best, a_str)
                    if score >= self.fuzzy_threshold:
                        leak = Leak(hi, hint, answer, best, "fuzzy", round(score / 100, 3))
                if leak is None and distinctive:
                    hit = next((t for t in distinctive if t in h_toks), None)
                    if hit is not None:
                        leak = Leak(hi, hint, answer, hit, "token")
                if leak is not None:
                    leaks.append(leak)
            if self.embedder is not None and not any(lk.answer == answer for lk in leaks):
                leaks.extend(self._embedding_leaks(ai, answer, hints, n))
        return leaks

    def per_hint(self, answers: Sequence[str], hints: Sequence[str],
                 leaks: Sequence[Leak] | None = None) -> dict[int, Leak]:
        """``{hint index: its first leak}`` as if :meth:`find` ran on each hint alone.

        The lexical checks look at one hint at a time, so the hint indices of a whole-question
        :meth:`find` are exactly the per-hint decisions: pass its result as ``leaks`` to reuse it
        (no second pass). The embedding check runs for an answer only when no hint matched it
        lexically, which depends on the other hints; with an embedder every hint is checked alone.
        """
        if self.embedder is not None:
            out: dict[int, Leak] = {}
            for hi, hint in enumerate(hints):
                found = self.find(answers, [hint])
                if found:
                    lk = found[0]
                    out[hi] = Leak(hi, lk.hint, lk.answer, lk.ngram, lk.method, lk.score)
            return out
        if leaks is None:
            leaks = self.find(answers, hints)
        first: dict[int, Leak] = {}
        for lk in leaks:
            first.setdefault(lk.hint_index, lk)
        return first

    def _embedding_leaks(self, ai: int, answer: str, hints: Sequence[str], n: int) -> list[Leak]:
        grams_per_hint = [[g for g in _ngrams(re.findall(r"\w+", h), n)] for h in hints]
        flat = [(hi, g) for hi, gs in enumerate(grams_per_hint) for g in gs]
        if not flat:
            return []
        vecs = self.embedder.encode([g for _, g in flat], role="passage")  # type: ignore[attr-defined]
        a_vec = self.embedder.encode([answer], role="passage")[0]  # type: ignore[attr-defined]
        sims = vecs @ a_vec
        out: dict[int, Leak] = {}
        for (hi, g), s in zip(flat, sims, strict=True):
            if s >= self.embedding_threshold and (hi not in out or s > out[hi].score):
                out[hi] = Leak(hi, hints[hi], answer, g, "embedding", round(float(s), 3))
        return list(out.values())


#: columns of the per-hint agreement table between a stored leakage score and this filter
AGREEMENT_COLUMNS = ["qid", "hint", "text", "stored_leakage", "stored_leaks", "our_filter_leaks", "our_match",
                     "agree"]
#: its four cells (stored score ≥ threshold × our filter), as named in the build manifest
AGREEMENT_CELLS = ("stored only", "ours only", "both", "neither")


def leakage_disagreements(table: pd.DataFrame) -> dict[str, int]:
    """Counts of the four cells (:data:`AGREEMENT_CELLS`) of an agreement table; all zero when
    it is empty (the source stores no leakage score)."""
    if table.empty:
        return dict.fromkeys(AGREEMENT_CELLS, 0)
    s, o = table["stored_leaks"].astype(bool), table["our_filter_leaks"].astype(bool)
    return {"stored only": int((s & ~o).sum()), "ours only": int((~s & o).sum()),
            "both": int((s & o).sum()), "neither": int((~s & ~o).sum())}
