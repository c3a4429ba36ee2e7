"""The embedded default dataset meets the foundation issue's requirements."""

from collections import Counter

from inferqa_utils.sources import load_embedded
from inferqa_utils.textnorm import normalize_answer


def test_embedded_dataset_shape():
    ds = load_embedded()
    assert len(ds) >= 60
    types = Counter(q.coarse_type for q in ds)
    assert set(types) >= {"HUM", "LOC", "ENTY", "NUM", "ABBR"}, types
    for q in ds:
        assert len(q.hints) >= 6, q.qid
        assert len(q.candidates) == 11 and q.candidates[-1] == q.answer, q.qid
        assert q.qtype and ":" in q.qtype, q.qid
        assert q.difficulty in {"Easy", "Medium", "Hard"}, q.qid
        strengths = {h.meta.get("strength") for h in q.hints}
        assert {"weak", "strong"} <= strengths, q.qid


def test_reference_passages_contain_the_answer_and_hints_do_not():
    ds = load_embedded()
    for q in ds:
        ref = f" {normalize_answer(q.reference)} "
        assert any(f" {normalize_answer(a)} " in ref for a in q.answers), q.qid
        for h in q.hints:
            text = f" {normalize_answer(h.text)} "
            for a in q.answers:
                assert f" {normalize_answer(a)} " not in text, (q.qid, a, h.text)
