"""The two answer-occurrence checks of :mod:`inferqa_utils.ir.textnorm`, hand-checked where they differ.

``occurs_as_tokens`` (answer guards) keeps accents and number words; ``occurs_folded`` (leakage
filter, reference complexity, control-corpus qrels, SER negatives) folds both. Punctuation, hyphens,
articles and plurals are treated alike by both.
"""

from __future__ import annotations

import pytest

from inferqa_utils.ir.textnorm import (
    answer_tokens,
    any_occurs_folded,
    canonical_tokens,
    occurs_as_tokens,
    occurs_folded,
)


@pytest.mark.parametrize(("answer", "text", "strict", "folded"), [
    # accents: kept by the strict check, folded by the other (either direction)
    ("Zurich", "He moved to Zürich in 1900.", False, True),
    ("Zürich", "He moved to Zurich in 1900.", False, True),
    ("Zürich", "He moved to Zürich in 1900.", True, True),
    # number words: written as digits only by the folded check
    ("7", "The Seven Wonders of the World", False, True),
    ("seven", "the 7 wonders", False, True),
    ("twenty", "twenty-one pilots", True, True),  # "twenty" ≡ "20" on both sides when folded
    # characters without an ASCII form: the strict check keeps them, folding drops them
    ("40C", "It freezes at 40°C.", False, True),
    ("Москва", "The capital is Москва.", True, False),  # a non-Latin answer has no folded tokens
    # punctuation, hyphens, articles, plurals: alike
    ("Jay-Z", "Jay Z sang it", True, True),
    ("R’lyeh", "the sunken city of R'lyeh", True, True),
    ("U.S.", "the US army", True, True),
    ("The Beatles", "beatles fans", True, True),
    ("mirrors", "a Mirror on the wall", True, True),
    # whole tokens only, and never an empty answer
    ("Rome", "Where is the home of the Pope?", False, False),
    ("Paris", "Parisian cafés", False, False),
    ("", "anything", False, False),
    ("!!", "!! anything", False, False),
])
def test_strict_and_folded_occurrence(answer, text, strict, folded):
    assert occurs_as_tokens(answer, text) is strict
    assert occurs_folded(answer, text) is folded
    assert any_occurs_folded([answer], text) is folded


def test_tokens_of_each_check():
    assert answer_tokens("The Seven Wonders!") == ["seven", "wonder"]
    assert canonical_tokens("The Seven Wonders!") == ["7", "wonder"]
    assert answer_tokens("Café-Society") == ["café", "society"]
    assert canonical_tokens("Café-Society") == ["cafe", "society"]
    assert answer_tokens("40°C") == ["40°c"] and canonical_tokens("40°C") == ["40c"]
    assert canonical_tokens("Москва") == [] and answer_tokens("Москва") == ["москва"]


def test_any_occurs_folded_over_aliases():
    assert any_occurs_folded(["Lutetia", "Paris"], "The Eiffel Tower is in Paris.")
    assert not any_occurs_folded(["Lutetia", "Rome"], "The Eiffel Tower is in Paris.")
    assert not any_occurs_folded([], "The Eiffel Tower is in Paris.")
    assert not any_occurs_folded(["", "the"], "The Eiffel Tower")  # answers without tokens never occur
