"""Answer normalisation and exact match (paper 000 §4, SQuAD-style)."""

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
