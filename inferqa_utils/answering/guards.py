"""Guards before the answer judge: named rules that refuse an answer without asking the LLM.

A small LLM judge (paper 000 used GPT-Eval, §3.1.4, plus human verification, §3.2.3) says "Yes" to *related*
entities and *generic* phrases — exactly what a reader that copies from the question or from the
hints produces (Cthulhu → "R'lyeh", Naughty Dog → "Uncharted", "the character"). Every accepted
answer joins the question's answer pool (answer-pool expansion, paper 000 §3.2.2), so one wrong
"Yes" turns a wrong answer into a right one for every later strict EM. Each rule below refuses
an answer that failed strict EM *before* the judge is asked:

* ``in_question`` — the answer occurs in the question (as a token n-gram after normalisation,
  accents and number words kept: :func:`~inferqa_utils.ir.textnorm.occurs_as_tokens`).
  A question names context, never its answer.
* ``in_context`` — the answer occurs verbatim in the passage or context being read. QUIT's
  premise is that the answer is never written in the hints (the leakage filter guarantees it for
  the gold answers), so an answer copied from the context names something else.
* ``other_number`` — the gold answer is a number (a year, a count, a temperature) and the
  answer names other numbers ("0°C" for −40, "1960s" for 1969): a small judge accepts numbers
  that are "close" or related, and a number is right only when it is the same number.
* ``verbose`` — the answer is a sentence, not an answer: more than ``2·g + 4`` tokens where ``g``
  is the longest gold answer's token count, and no gold answer occurs in it ("The 63-year-old
  schoolteacher who went over in a wooden barrel" for Niagara Falls). The reader is asked for a
  short answer; a small closed-book model that rambles on about the question's topic is not
  answering it, however related its words are.
* ``generic`` — a category phrase, not a name: an optional determiner/possessive, then either a
  lone category noun ("the character", "an actor", "Band") or modifiers (lower-case words or
  nationality adjectives; one without a determiner, two with one) before a lower-case category
  noun ("Canadian actor", "the French king"; not "Mexican walking fish"). A capitalised head makes a name
  ("Trojan War", "Arctic Ocean").

A rule stands down when the gold answers themselves would trip it — a question that names its
own answer, a context that contains it (a leaking source), or a question whose answer *is* a
category ("What type of creature is a crappie?" → "Fish"); ``generic`` also stands down when
the gold is a common noun ("lexicographer": "dictionary writer" is then a fair paraphrase) — so a
rule can only refuse answers that differ in kind from the gold.

Gold answers and their aliases are never refused (strict EM decides before any rule), and the
rules are checked against real data (``benchmarks/judge_quality.py``, ``tests/test_answer_guards.py``)
so that they do not refuse true aliases ("Barcelona" for "FC Barcelona").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..ir.textnorm import SMALL_NUMBER_WORDS, answer_tokens, occurs_as_tokens

DETERMINERS = frozenset(
    [
        "a", "an", "the", "this", "that", "these", "those", "his", "her", "its", "their", "our", "your", "my",
        "some", "one", "another", "such",
    ]
)

#: head nouns that name a category, not an entity (singular; plurals are folded)
CATEGORY_NOUNS = frozenset(
    [
        "person", "people", "man", "woman", "men", "women", "boy", "girl", "child", "individual", "character",
        "figure", "protagonist", "narrator", "hero", "heroine", "villain", "player", "actor", "actress",
        "singer", "band", "group", "team", "club", "author", "writer", "poet", "novelist", "playwright",
        "artist", "painter", "sculptor", "composer", "musician", "rapper", "comedian", "director", "producer",
        "host", "scientist", "inventor", "explorer", "philosopher", "mathematician", "physicist", "chemist",
        "engineer", "king", "queen", "ruler", "emperor", "empress", "leader", "politician", "president",
        "minister", "general", "soldier", "saint", "god", "goddess", "deity", "creature", "monster", "animal",
        "beast", "plant", "tree", "flower", "species", "bird", "fish", "insect", "mammal", "reptile", "dog",
        "cat", "food", "dish", "drink", "fruit", "vegetable", "instrument", "sport", "game", "film", "movie",
        "book", "novel", "story", "poem", "song", "album", "record", "show", "series", "programme", "program",
        "company", "firm", "brand", "organisation", "organization", "element", "substance", "metal", "gas",
        "liquid", "chemical", "compound", "disease", "illness", "condition", "drug", "medicine", "year",
        "date", "number", "amount", "thing", "object", "item", "entity", "answer", "name", "term", "word",
        "language", "religion", "faith", "event", "war", "battle", "vehicle", "car", "ship", "boat", "plane",
        "aircraft", "building", "structure", "monument", "city", "town", "village", "capital", "country",
        "nation", "state", "province", "region", "place", "location", "area", "island", "river", "lake",
        "sea", "ocean", "mountain", "volcano", "desert", "planet", "star", "moon", "athlete", "footballer",
        "cricketer", "boxer", "city-state", "empire", "kingdom",
    ]
)

_DEMONYM = re.compile(r"^[A-Z][a-z]+(an|ian|ese|ish|i|ch|ean)$")
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")


def _plural_fold(w: str) -> str:
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("es") and w[:-2] in CATEGORY_NOUNS:
        return w[:-2]
    if w.endswith("s") and w[:-1] in CATEGORY_NOUNS:
        return w[:-1]
    if w == "men":
        return "man"
    if w == "women":
        return "woman"
    return w


def is_generic(answer: str) -> bool:
    """``[determiner] [modifiers] category-noun`` (see module docstring).

    Modifiers must be lower-case words or nationality adjectives ("Canadian"); a capitalised name
    ("Red Sea", "Pink Floyd") is never generic. Digits make an answer specific.
    """
    if any(c.isdigit() for c in answer):
        return False
    words = _WORD.findall(answer)
    if not words or len(words) > 4:
        return False
    determined = words[0].lower() in DETERMINERS
    if determined:
        words = words[1:]
    if not words or len(words) > (3 if determined else 2):
        return False
    *mods, head = words
    if _plural_fold(head.lower()) not in CATEGORY_NOUNS:
        return False
    if not mods:
        return True
    return head.islower() and all(m.islower() or _DEMONYM.match(m) for m in mods)


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NUMBER_WORDS = SMALL_NUMBER_WORDS


def numbers_in(text: str) -> frozenset[str]:
    """The numbers written in ``text`` (digits, thousands separators dropped; number words to twenty)."""
    nums = {m.replace(",", "") for m in _NUMBER.findall(text)}
    nums |= {_NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", text.lower()) if w in _NUMBER_WORDS}
    return frozenset(nums)


def other_number(answer: str, golds: Sequence[str]) -> bool:
    """The answer writes numbers in digits, some gold answer writes numbers, and no gold has the same
    ones (an answer that spells its number out, "nineteen sixty-nine", is left to the judge)."""
    mine = frozenset(m.replace(",", "") for m in _NUMBER.findall(answer))
    theirs = [numbers_in(g) for g in golds]
    return bool(mine) and any(theirs) and all(mine != t for t in theirs if t)


def verbose(answer: str, golds: Sequence[str]) -> bool:
    """More than ``2·g + 4`` tokens (``g``: the longest gold's token count) and no gold inside."""
    g = max((len(answer_tokens(x)) for x in golds), default=0)
    return (
        g > 0
        and len(answer_tokens(answer)) > 2 * g + 4
        and not any(occurs_as_tokens(x, answer) for x in golds)
    )


@dataclass(frozen=True)
class Guard:
    """A named rule: ``trips(answer, question, context)`` is True when the answer has the property;
    the rule refuses an answer that trips it unless a gold answer trips it too."""

    name: str
    trips: Callable[[str, str, str | None], bool]
    description: str

    #: compares the answer with the gold answers itself (no stand-down): ``against_golds(answer, golds)``
    against_golds: Callable[[str, Sequence[str]], bool] | None = None
    #: also stands down when a gold answer is a common noun (all lower-case: "lexicographer")
    common_noun_gold: bool = False

    def refuses(self, answer: str, question: str, context: str | None = None,
                golds: Sequence[str] = ()) -> bool:
        if self.against_golds is not None:
            return self.against_golds(answer, golds)
        if not self.trips(answer, question, context):
            return False
        if self.common_noun_gold and any(g.strip() and g.strip().islower() for g in golds):
            return False
        return not any(self.trips(g, question, context) for g in golds)


GUARDS: dict[str, Guard] = {
    g.name: g
    for g in (
        Guard(
            "other_number",
            lambda a, q, c: False,
            "the gold is a number and the answer names another",
            against_golds=other_number,
        ),
        Guard(
            "verbose",
            lambda a, q, c: False,
            "a sentence without the gold, not a short answer",
            against_golds=verbose,
        ),
        Guard(
            "generic", lambda a, q, c: is_generic(a), "a category phrase, not a name", common_noun_gold=True
        ),
        Guard("in_question", lambda a, q, c: occurs_as_tokens(a, q), "the answer occurs in the question"),
        Guard(
            "in_context",
            lambda a, q, c: bool(c) and occurs_as_tokens(a, c),
            "the answer occurs in the passage read",
        ),
    )
}

#: the guards applied by default wherever an LLM judge decides
DEFAULT_GUARDS: tuple[str, ...] = tuple(GUARDS)


def guard_answer(answer: str, question: str, context: str | None = None,
                 guards: Sequence[str] = DEFAULT_GUARDS, golds: Sequence[str] = ()) -> str | None:
    """The name of the first rule that refuses ``answer`` (given the question's gold answers), or None."""
    for name in guards:
        if name not in GUARDS:
            raise ValueError(f"unknown answer guard {name!r} (known: {', '.join(GUARDS)})")
        if GUARDS[name].refuses(answer, question, context, golds):
            return name
    return None
