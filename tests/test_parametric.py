"""Parametric filter (paper 000 §3.4): a question is parametric when any closed-book answer is
correct; the judge is asked only for questions that strict EM has not decided already."""

from __future__ import annotations

import dataclasses

from inferqa_utils.answering.reader import read_closed_book
from inferqa_utils.construction.parametric import parametric_answers, parametric_qids
from inferqa_utils.llm import load_llm
from inferqa_utils.sources import load_embedded


def test_judge_only_where_em_has_not_decided():
    ds = load_embedded()
    q1, q2, q3 = list(ds.questions.values())[:3]
    model = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048)
    own = read_closed_book(model, [q1.question], progress=False)[0].answer
    assert own.strip(), "SmolLM2 gave no closed-book answer to build the EM-decided question from"
    decided = dataclasses.replace(q1, answers=[own])  # gold = the model's own answer: EM at repeat 0
    judge = load_llm("smollm2-135m", use_cache=False, shared=False, n_ctx=2048)
    df = parametric_answers([model], judge, [decided, q2, q3], repeats=2, progress=False)
    assert len(df) == 6
    first = df[(df["qid"] == decided.qid) & (df["repeat"] == 0)].iloc[0]
    assert bool(first["em"]) and bool(first["correct"])
    assert decided.qid in parametric_qids(df)
    # the decided question's rows never reach the judge: correct equals EM there, no guard ran
    rows = df[df["qid"] == decided.qid]
    assert (rows["correct"] == rows["em"]).all() and rows["guard"].isna().all()
    # the other questions' non-EM answers are judged unless a guard refused them: one judge call each
    open_rows = df[(df["qid"] != decided.qid) & ~df["em"].astype(bool)]
    asked = int(open_rows["guard"].isna().sum())
    # (a prompt repeated inside one batch runs once; its repeats count as cache hits)
    assert judge.stats.model_calls + judge.stats.cache_hits == asked
    assert judge.stats.model_calls == len(
        {(r.qid, r.answer) for r in open_rows[open_rows["guard"].isna()].itertuples()}
    )
