"""The embedded dataset (v2) stays valid: shape, type balance, no leaking hint, no duplicate,
two answer-containing references per question, stored convergence up to date."""

import json
import subprocess
import sys
from collections import Counter

import pytest
from isolated_root import CHECKOUT

from inferqa_utils.construction.leakage import LeakageFilter
from inferqa_utils.core.config import PATHS
from inferqa_utils.ir.textnorm import normalize_answer
from inferqa_utils.sources import load_embedded


@pytest.fixture(scope="module")
def ds():
    return load_embedded()


def test_size_and_type_balance(ds):
    assert len(ds) >= 256
    types = Counter(q.coarse_type for q in ds)
    assert set(types) >= {"HUM", "LOC", "ENTY", "NUM", "ABBR"}, types
    # balanced over the coarse classes: none below 8 % or above 30 % of the set
    assert all(0.08 <= n / len(ds) <= 0.30 for n in types.values()), types


def test_record_shape(ds):
    for q in ds:
        assert 6 <= len(q.hints) <= 8, q.qid
        assert len(q.candidates) == 11 and q.candidates[-1] == q.answer, q.qid
        assert len({normalize_answer(c) for c in q.candidates}) == 11, q.qid
        assert not any(
            normalize_answer(c) in {normalize_answer(a) for a in q.answers} for c in q.candidates[:-1]
        ), q.qid
        assert q.qtype and ":" in q.qtype, q.qid
        assert q.difficulty in {"Easy", "Medium", "Hard"}, q.qid
        strengths = {h.meta.get("strength") for h in q.hints}
        assert {"weak", "strong"} <= strengths <= {"weak", "medium", "strong"}, q.qid


def test_no_duplicates(ds):
    qs = Counter(normalize_answer(q.question) for q in ds)
    assert max(qs.values()) == 1, [k for k, v in qs.items() if v > 1]
    answers = Counter(normalize_answer(q.answer) for q in ds)
    assert max(answers.values()) == 1, [k for k, v in answers.items() if v > 1]
    ids = [q.qid for q in ds]
    assert len(ids) == len(set(ids))


def test_no_hint_leaks_the_answer_and_the_question_does_not_name_it(ds):
    leak = LeakageFilter()  # the build's own filter: every question survives it
    leaks = [(q.qid, lk.answer, lk.method, lk.hint) for q in ds for lk in leak.find(q.answers, q.hint_texts)]
    assert leaks == []
    for q in ds:
        text = f" {normalize_answer(q.question)} "
        assert not any(f" {normalize_answer(a)} " in text for a in q.answers), q.qid


def test_two_references_that_name_the_answer(ds):
    for q in ds:
        refs = q.references
        assert len(refs) >= 2 and len(set(refs)) == len(refs), q.qid
        for ref in refs:
            text = f" {normalize_answer(ref)} "
            assert any(f" {normalize_answer(a)} " in text for a in q.answers), (q.qid, ref)


def test_stored_convergence_is_up_to_date():
    """Every hint carries the convergence measured by scripts/score_embedded_convergence.py for its
    current text and candidates (the script's --check)."""
    r = subprocess.run(
        [sys.executable, str(CHECKOUT / "scripts" / "score_embedded_convergence.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    raw = json.loads(PATHS.embedded_dataset.read_text(encoding="utf-8"))
    assert all(0 <= h["metrics"]["convergence"] <= 1 for rec in raw for h in rec["hints"])


def test_loader_reads_stored_convergence(ds):
    assert all(h.convergence is not None for q in ds for h in q.hints)
