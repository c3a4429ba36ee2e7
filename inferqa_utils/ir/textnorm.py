"""Answer normalisation and answer matching (paper 000 §4, SQuAD-style): one home for every way
the package decides that an answer "is" or "occurs in" a text.

* :func:`exact_match` — strict EM: the SQuAD-normalised prediction equals a normalised answer;
* :func:`occurs_as_tokens` — the answer occurs in a text as a token n-gram of
  :func:`answer_tokens` (SQuAD normalisation, hyphens split, plurals folded; accents and number
  words kept: ``"Zurich"`` does not occur in ``"Zürich"``, ``"7"`` not in ``"seven"``). The answer
  guards use it (an answer named in the question or the context read);
* :func:`occurs_folded` / :func:`any_occurs_folded` — the same n-gram test on
  :func:`canonical_tokens`, which also fold accents and write number words as digits
  (``"Zurich"`` occurs in ``"Zürich"``, ``"7"`` in ``"The Seven Wonders"``). Folding drops every
  character without an ASCII form, so a non-Latin answer (``"Москва"``) never occurs and a
  degree sign vanishes (``"40C"`` occurs in ``"40°C"``). The leakage filter (paper 000 §3.1.2),
  reference complexity (§3.1.3), the answer-containing control corpus (§4, §5.1) and SER's
  negatives (paper 004 §3) use it.

Both n-gram tests ask whether ``" " + " ".join(tokens(answer)) + " "`` is a substring of
``" " + " ".join(tokens(text)) + " "``: a whole-token match ("Rome" does not occur in "home"),
never true for an answer without tokens.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation) | {"‘", "’", "“", "”", "–", "—", "…"}


def normalize_answer(s: str) -> str:
    """SQuAD normalisation: lower-case, drop punctuation and articles, collapse spaces.

    Unicode is NFKC-normalised first; accents are kept (``"Zürich"`` ≠ ``"Zurich"`` strictly).
    """
    s = unicodedata.normalize("NFKC", s).lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def fold_accents(s: str) -> str:
    """ASCII-fold accents: ``"Zürich"`` → ``"Zurich"`` (used for fuzzy matching only)."""
    return unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode()


def exact_match(prediction: str, answers: Iterable[str]) -> bool:
    """Strict EM: the normalised prediction equals a normalised answer of the pool."""
    p = normalize_answer(prediction)
    return bool(p) and any(p == normalize_answer(a) for a in answers)


def singular(tok: str) -> str:
    """A crude English singular of one normalised token (``cities`` → ``city``, ``boxes`` → ``box``,
    ``hints`` → ``hint``; ``glass``, ``bus``, ``axis`` unchanged)."""
    if len(tok) > 4 and tok.endswith("ies"):
        return tok[:-3] + "y"
    if len(tok) > 4 and tok.endswith(("ches", "shes", "sses", "xes")):
        return tok[:-2]
    if len(tok) > 3 and tok.endswith("s") and not tok.endswith(("ss", "us", "is")):
        return tok[:-1]
    return tok


#: "zero" … "twenty" → "0" … "20"
SMALL_NUMBER_WORDS: dict[str, str] = {w: str(i) for i, w in enumerate([
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
])}
#: number words written as digits by :func:`canonical_tokens` (the leakage filter's table)
NUMBER_WORDS: dict[str, str] = {
    **SMALL_NUMBER_WORDS, "thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70",
    "eighty": "80", "ninety": "90", "hundred": "100", "thousand": "1000",
}


def answer_tokens(text: str) -> list[str]:
    """Strict tokens: SQuAD-normalised (hyphens split first) with plurals folded by :func:`singular`;
    accents and number words are kept (``"Ísland"`` is not ``"island"``, ``"seven"`` not ``"7"``)."""
    return [singular(t) for t in normalize_answer(text.replace("-", " ")).split()]


def canonical_tokens(text: str) -> list[str]:
    """Folded tokens: SQuAD normalisation after hyphen splitting and accent folding
    (:func:`fold_accents`), number words → digits (:data:`NUMBER_WORDS`), then :func:`singular`."""
    norm = normalize_answer(fold_accents(text.replace("-", " ")))
    return [singular(NUMBER_WORDS.get(t, t)) for t in norm.split()]


def _padded(tokens: Iterable[str]) -> str:
    return f" {' '.join(tokens)} "


def occurs_as_tokens(answer: str, text: str) -> bool:
    """Strict occurrence: :func:`answer_tokens` of ``answer`` form a contiguous n-gram of those of
    ``text`` (accents and number words must match as written; see the module docstring)."""
    a = answer_tokens(answer)
    return bool(a) and _padded(a) in _padded(answer_tokens(text))


def occurs_folded(answer: str, text: str) -> bool:
    """Folded occurrence: :func:`canonical_tokens` of ``answer`` form a contiguous n-gram of those of
    ``text`` (accents folded, number words as digits; see the module docstring)."""
    return any_occurs_folded((answer,), text)


def any_occurs_folded(answers: Iterable[str], text: str) -> bool:
    """:func:`occurs_folded` for any of ``answers`` (an answer and its aliases); ``text`` is
    tokenised once, so scanning a corpus costs one tokenisation per passage."""
    joined = _padded(canonical_tokens(text))
    return any(a_t and _padded(a_t) in joined for a_t in (canonical_tokens(a) for a in answers))
