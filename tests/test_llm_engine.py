"""The LLM engine on the real tiny model (SmolLM2-135M): greedy generation, scoring, cache,
resume, prefix reuse."""

import numpy as np
import pytest

from inferqa_utils.answering.prompts import reader_messages
from inferqa_utils.llm import GenerationCache, load_llm

pytestmark = pytest.mark.slow

QS = [("It is a reflective surface. It is found in bathrooms.", "What object shows your reflection?"),
      ("It is the largest planet. It has a great red spot.", "Which planet is it?"),
      ("It barks. It is man's best friend.", "Which animal is it?"),
      ("It is the largest planet. It has a great red spot. It has many moons.", "Which planet is it?"),
      ("It is frozen water.", "What is it?")]


@pytest.fixture(scope="module")
def tiny():
    return load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048)


def _batch():
    return [reader_messages(q, c) for c, q in QS]


def test_greedy_is_deterministic_and_prefix_reuse_changes_cost_not_answers(tmp_path):
    a = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048, prefix_reuse=True)
    b = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048, prefix_reuse=False)
    out_a, out_b = a.chat(_batch(), progress=False), b.chat(_batch(), progress=False)
    # evaluating a suffix in another batch split changes llama.cpp's logits in the last bits,
    # which can (rarely) flip a greedy token; most answers must agree
    assert sum(x == y for x, y in zip(out_a, out_b, strict=True)) >= 4
    b.reset_stats()
    assert b.chat(_batch(), progress=False) == out_b  # same mode, same order: bit-identical
    assert a.stats.prompt_tokens_total == b.stats.prompt_tokens_total
    assert b.stats.prompt_tokens == b.stats.prompt_tokens_total  # naive: everything evaluated
    assert a.stats.prompt_tokens < 0.5 * b.stats.prompt_tokens  # shared few-shot prefix reused


def test_second_run_makes_zero_model_calls_and_interrupted_batch_resumes(tmp_path):
    cache = GenerationCache(tmp_path / "c.sqlite")
    llm = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048)
    llm.cache = cache
    first = llm.chat(_batch()[:3], progress=False)  # an "interrupted" run: 3 of 5 done
    assert llm.stats.model_calls == 3
    llm.reset_stats()
    full = llm.chat(_batch(), progress=False)
    assert llm.stats.model_calls == 2 and llm.stats.cache_hits == 3 and full[:3] == first
    llm.reset_stats()
    again = llm.chat(_batch(), progress=False)
    assert llm.stats.model_calls == 0 and again == full
    # the cache is on disk: a new engine instance also makes no call
    other = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048)
    other.cache = GenerationCache(tmp_path / "c.sqlite")
    assert other.chat(_batch(), progress=False) == full and other.stats.model_calls == 0
    # a different decoding parameter is a different key
    other.chat(_batch()[:1], max_tokens=5, progress=False)
    assert other.stats.model_calls == 1


def _lsm(row, tok):
    m = row.max()
    return float(row[tok] - m - np.log(np.exp(row - m).sum()))


def test_score_matches_a_full_logits_pass(tiny):
    """score() == Σ log-softmax read from one all-logits evaluation of prompt + continuation;
    token-by-token evaluation agrees up to llama.cpp's single-token vs batch kernel noise."""
    msgs = _batch()[0]
    cont = "A mirror on the wall"
    got = tiny.score([msgs], [cont], progress=False)[0][0]
    toks = tiny.tokenize(tiny.render(msgs))
    ctoks = tiny.tokenize(cont, prompt=False)
    tiny.llm.n_tokens = 0
    rows = tiny._decode(toks + ctoks[:-1], all_logits=True)[len(toks) - 1:]
    ref = sum(_lsm(r, t) for r, t in zip(rows, ctoks, strict=True))
    assert got == pytest.approx(ref, abs=1e-4)
    tiny.llm.n_tokens = 0
    logits = tiny._decode(toks)[-1]
    seq = 0.0
    for t in ctoks:
        seq += _lsm(logits, t)
        logits = tiny._decode([t])[-1]
    assert got == pytest.approx(seq, abs=0.15 * len(ctoks))


def test_score_prefers_the_greedy_continuation(tiny):
    msgs = _batch()[1]
    greedy = tiny.chat([msgs], max_tokens=4, progress=False)[0]
    s = tiny.score([msgs], [greedy.split()[0], "Banana"], progress=False)[0]
    assert s[0] > s[1]
    per_item = tiny.score([msgs, msgs], [["Yes"], ["No", "Yes"]], progress=False)
    assert len(per_item[0]) == 1 and len(per_item[1]) == 2 and per_item[0][0] == pytest.approx(per_item[1][1])


def test_prompt_longer_than_context_is_a_clear_error():
    llm = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=256)
    with pytest.raises(ValueError, match="exceeds n_ctx=256"):
        llm.chat([reader_messages("q?", "word " * 400)], progress=False)


def test_kv_snapshot_restores_a_prompt_family_after_another_evicted_it():
    """Reader, judge, reader: the second reader prompt restores the saved reader prefix instead of
    evaluating it again, and answers exactly as in an uninterrupted reader batch."""
    from inferqa_utils.answering.prompts import judge_messages

    r1, r2 = reader_messages(QS[0][1], QS[0][0]), reader_messages(QS[2][1], QS[2][0])
    judge = judge_messages("What object shows your reflection?", ["Mirror"], "a window")
    plain = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048)
    a1 = plain.chat([r1], progress=False)[0]
    t0 = plain.stats.prompt_tokens
    a2 = plain.chat([r2], progress=False)[0]
    suffix_tokens = plain.stats.prompt_tokens - t0  # r2 after r1: only what differs from r1
    snap = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048)
    b1 = snap.chat([r1], progress=False)[0]
    snap.chat([judge], progress=False)  # evicts the reader prefix from the KV cache
    t1 = snap.stats.prompt_tokens
    b2 = snap.chat([r2], progress=False)[0]
    assert [b1, b2] == [a1, a2]
    assert snap.stats.kv_snapshots >= 1 and snap.stats.kv_restores == 1
    assert snap.stats.prompt_tokens - t1 == suffix_tokens < 0.3 * len(snap.tokenize(snap.render(r2)))


def test_default_cache_follows_the_environment(tmp_path, monkeypatch):
    """INFERQA_LLM_CACHE is read at call time: a store opened earlier in the process is not reused
    for another path (tests and runs that point the cache elsewhere get their own store)."""
    from inferqa_utils.llm import default_cache

    before = default_cache()
    monkeypatch.setenv("INFERQA_LLM_CACHE", str(tmp_path / "c.sqlite"))
    after = default_cache()
    assert after.path == (tmp_path / "c.sqlite").resolve() and after is not before
    assert default_cache() is after  # one open store per path


def test_several_continuations_are_scored_in_one_decode_like_one_by_one(tiny):
    """Multi-token continuations of one prompt share its KV cells, one sequence each, in one
    decode; each log-probability equals the one-continuation score up to batch-kernel rounding."""
    msgs = _batch()[1]
    conts = ["Jupiter", "The planet Saturn", "Mars", "A big red dot", "Neptune is far"]
    together = tiny.score([msgs], [conts], progress=False)[0]
    alone = [tiny.score([msgs], [[c]], progress=False)[0][0] for c in conts]
    assert together == pytest.approx(alone, abs=0.1)
    assert sorted(range(len(conts)), key=lambda i: together[i]) == sorted(
        range(len(conts)), key=lambda i: alone[i]
    )
    # the prompt's own sequence is untouched: generation after scoring equals generation before
    before = tiny.chat([msgs], max_tokens=6, progress=False)
    tiny.score([msgs], [conts], progress=False)
    assert tiny.chat([msgs], max_tokens=6, progress=False) == before


def test_duplicate_prompts_in_a_batch_run_once():
    llm = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048)
    out = llm.chat([_batch()[0], _batch()[1], _batch()[0]], progress=False)
    assert out[0] == out[2] and llm.stats.model_calls == 2 and llm.stats.cache_hits == 1


def test_a_reply_stops_once_it_is_decided():
    """``until`` ends generation at the first token whose text decides the reply (for a judge:
    "yes"/"no"); the reply is then a prefix of the unconstrained one, cut right after the decision."""
    from inferqa_utils.llm.base import decided

    assert (
        decided(" **Yes**, it is", ("yes", "no"))
        and decided("No.", ("yes", "no"))
        and not decided("Maybe", ("no",))
    )
    llm = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048)
    msgs = _batch()[2]
    full = llm.chat([msgs], max_tokens=6, progress=False)[0]
    first = full.strip().split()[0].lower()
    short = llm.chat([msgs], max_tokens=6, until=(first,), progress=False)[0]
    assert full.startswith(short) and len(short) < len(full) and short.strip().lower().startswith(first)


def test_a_few_shot_prefix_persisted_by_one_engine_is_restored_by_the_next(tmp_path):
    """A family switch saves the family's stable prefix (the few-shot turns, ≥ 256 tokens) to disk;
    a new engine (another notebook's process) restores it instead of evaluating it again."""
    from inferqa_utils.answering.prompts import judge_messages

    judge = judge_messages("What object shows your reflection?", ["Mirror"], "a window")
    first = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048, kv_dir=tmp_path)
    first.chat(_batch()[:2], progress=False)  # two reader prompts: the stable prefix is known
    first.chat([judge], progress=False)  # family switch: the reader prefix is saved and persisted
    assert len(list(tmp_path.rglob("*.kv"))) == 1
    second = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048, kv_dir=tmp_path)
    answer = second.chat([_batch()[3]], progress=False)
    assert second.stats.kv_restores == 1
    n = len(second.tokenize(second.render(_batch()[3])))
    assert second.stats.prompt_tokens < 0.3 * n
    plain = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048)
    assert plain.chat([_batch()[3]], progress=False) == answer
