"""End-to-end construction on real data with the smoke settings (SmolLM2-135M), plus resume."""

from __future__ import annotations

import pytest

from inferqa_utils.construction.build import BuildConflictError, build_dataset
from inferqa_utils.construction.build_config import BuildConfig
from inferqa_utils.construction.labeling import LabelCheckpoint, label_questions
from inferqa_utils.construction.passages import build_passages, n_subset_permutations
from inferqa_utils.construction.store import load_built
from inferqa_utils.ir.datamodel import Hint, Question
from inferqa_utils.ir.textnorm import exact_match
from inferqa_utils.llm import load_llm
from inferqa_utils.sources import load_source

TINY = "smollm2-135m"


def _smoke(source: str, out, n: int = 4, **kw) -> BuildConfig:
    kw = {"corpus_all_source": False, **kw}
    return BuildConfig(
        source=source,
        name=f"test-{source}",
        max_questions=n,
        k_hints=3,
        labelers=[TINY],
        judge_model=TINY,
        convergence_model=TINY,
        parametric_models=[TINY],
        parametric_repeats=1,
        difficulty_embedder=None,
        output_dir=str(out),
        verification_file=str(out / "v.json"),
        **kw,
    )


def _check(res, k: int = 3) -> None:
    ds, m = res.dataset, res.manifest
    assert m["invariants"]["ok"], m["invariants"]["problems"]
    per_q = n_subset_permutations(k)
    assert len(ds.passages) == len(ds.questions) * per_q == m["counts"]["passages"]
    labels = m["counts"]["labels"]
    # each (question, passage) pair has exactly one label
    assert sum(labels.values()) == len(ds.questions) * len(ds.passages)
    assert labels["1"] + labels["2"] == len(ds.passages)
    kept_or_dropped = len(ds.questions) + len(res.dropped)
    assert kept_or_dropped == m["counts"]["source_questions"]
    # the labels follow the labelers' answers: a passage is 2 only if one of its answers is in the
    # final pool, and it is 2 whenever one of them matches a gold answer (never rejected)
    for q in ds:
        gold = q.meta.get("gold_answers") or q.answers
        for pid, label in ds.qrels[q.qid].items():
            said = list(ds.generations.get(pid, {}).values())
            assert label in (1, 2)
            assert label == 1 or any(exact_match(a, q.answers) for a in said), (pid, said, q.answers)
            assert label == 2 or not any(exact_match(a, gold) for a in said), (pid, said, gold)


@pytest.mark.shared_data
def test_build_from_copilot_uses_stored_convergence(shared_data, tmp_path):
    res = build_dataset(_smoke("triviahg-copilot", tmp_path, n=3), progress=False, log=print)
    _check(res)
    assert set(res.questions.loc[res.questions["status"] == "kept", "convergence_from"]) == {"stored"}
    kept = res.hints[res.hints["kept"]]
    assert kept["convergence"].notna().all()
    back = load_built_from(tmp_path, res)
    assert back.qrels == res.dataset.qrels
    print("copilot labels:", res.manifest["counts"]["labels"], res.manifest["counts"]["dropped_by_reason"])


@pytest.mark.shared_data
def test_build_from_validation_sample_computes_convergence(shared_data, tmp_path):
    res = build_dataset(_smoke("triviahg-validation", tmp_path, n=3), progress=False, log=print)
    _check(res)
    kept = res.questions[res.questions["status"] == "kept"]
    assert all(str(c).startswith("computed") for c in kept["convergence_from"])
    # TriviaHG validation has no candidates: they were generated (gold last)
    assert all(q.candidates and q.candidates[-1] == q.answer for q in res.dataset)
    print("validation labels:", res.manifest["counts"]["labels"], res.manifest["counts"]["dropped_by_reason"])


def test_corpus_holds_every_source_question_and_only_label_splits_are_labelled(tmp_path):
    """Distractor questions (beyond max_questions) put their passages in the corpus (label 0 for every
    built question); only the test split is LLM-labelled; convergence is computed for the labelled
    questions only (stored scores ignored here), the others keep the source's hint order."""

    cfg = _smoke(
        "embedded", tmp_path, n=8, corpus_all_source=True, label_splits=["test"], convergence_stored=False
    )
    res = build_dataset(cfg, progress=False, log=print)
    ds, m = res.dataset, res.manifest
    assert m["invariants"]["ok"], m["invariants"]["problems"]
    n_source = len(load_source("embedded"))
    n_distractors = m["counts"]["distractor_questions"]
    assert n_distractors == len(res.distractors) >= n_source - 8 - len(res.dropped)
    assert len(ds.passages) == (len(ds.questions) + n_distractors) * 15
    test = set(ds.splits["test"])
    assert test and m["labelled_splits"] == ["test"]
    for qid in ds.questions:
        own = {p.pid for p in ds.passages_of(qid)}
        assert set(ds.qrels[qid]) == own  # distractor passages are never in a built question's qrels
        if qid in test:
            assert all(ds.generations.get(pid) for pid in own)  # read by the labeler
        else:
            assert set(ds.qrels[qid].values()) == {1} and not any(ds.generations.get(pid) for pid in own)
    conv = res.questions.set_index("qid")["convergence_from"]
    assert all(str(conv[q]).startswith("computed") for q in test)
    assert all(conv[q] == "none: source order" for q in ds.questions if q not in test)
    assert all(conv[q.qid] == "none: source order" for q in res.distractors)
    t1 = m["table1"]
    assert t1["corpus"]["passages"] == len(ds.passages) and t1["train"]["label 2"] is None
    back = load_built_from(tmp_path, res)
    assert set(back.passages) == set(ds.passages) and back.qrels == ds.qrels
    d = res.distractors[0]
    pid = next(p for p in back.passages if back.passages[p].qid == d.qid and back.passages[p].n_hints == 2)
    assert back.passage_sentences(pid) == [d.hint_texts[i] for i in back.passages[pid].hint_ids]
    assert (tmp_path / "pool_expansions.csv").exists() and (tmp_path / "guard_refusals.csv").exists()


def load_built_from(folder, res):
    import inferqa_utils.construction.store as store

    orig = store.built_dir
    store.built_dir = lambda name: folder
    try:
        return load_built(res.config.name)
    finally:
        store.built_dir = orig


def test_rebuild_makes_no_model_call_and_conflicts_are_refused(tmp_path):
    cfg = _smoke("embedded", tmp_path, n=3)
    build_dataset(cfg, progress=False, log=print)
    lines: list[str] = []
    again = build_dataset(cfg, progress=False, log=lines.append)
    assert all(s["model_calls"] == 0 for s in again.llm_stats.values()), again.llm_stats
    assert "holds a build with these parameters" in lines[0] and "reusing it" in lines[0], lines
    other = _smoke("embedded", tmp_path, n=2)
    # the error names each differing parameter as notebook 01 spells it, and what to do
    with pytest.raises(BuildConflictError, match="other parameters") as err:
        build_dataset(other, progress=False, log=print)
    assert "build_max_questions: 3 there → 2 here" in str(err.value)
    assert "dataset_name" in str(err.value) and "overwrite=True" in str(err.value)


class _Scripted:
    """Labeler and judge without a model. As labeler it answers "Venice" when its context holds the
    canals hint, "La Serenissima" when it holds the nickname hint only, "Rome" otherwise; as judge
    it accepts "La Serenissima" and nothing else."""

    name = "scripted"

    def chat(self, batch, max_tokens=None, desc="", progress=True, until=None):
        return [self._reply(m[-1]["content"]) for m in batch]

    @staticmethod
    def _reply(turn: str) -> str:
        if "Proposed answer:" in turn:
            return "Yes" if turn.endswith("Proposed answer: La Serenissima") else "No"
        return "Venice" if "canals" in turn else "La Serenissima" if "nickname" in turn else "Rome"


def test_labels_are_2_exactly_where_a_labeler_answer_is_accepted(tmp_path):
    """Of the 15 passages of three hints, the 11 holding the canals hint get the gold by EM, the 3
    holding the nickname hint without it an answer the judge accepts, the one holding only "It lies
    in Italy." a rejected answer: 14 passages labelled 2, that one 1."""
    q = Question("q1", "Which city?", ["Venice"],
                 [Hint("It has canals instead of streets."), Hint("Its nickname is the Most Serene."),
                  Hint("It lies in Italy.")])
    passages = build_passages("q1", q.hint_texts)
    llm = _Scripted()
    res = label_questions(
        [q], {"q1": passages}.__getitem__, [llm], llm, LabelCheckpoint(tmp_path / "l.jsonl"), progress=False
    )["q1"]
    assert {pid for pid, label in res.labels.items() if label == 1} == {"q1_001_2"}
    assert set(res.labels.values()) == {1, 2} and len(res.labels) == 15
    assert res.admitted == {"Venice": {"by": "em", "labelers": ["scripted"], "passages": 11},
                            "La Serenissima": {"by": "judge", "labelers": ["scripted"], "passages": 3}}
    assert res.accepted["q1_001_2"] == [] and res.generations["q1_001_2"] == {"scripted": "Rome"}
    assert res.pool(q.answers) == ["Venice", "La Serenissima"]


def test_interrupted_labeling_resumes_from_the_checkpoint(tmp_path):
    ds = load_source("embedded")
    qs = list(ds)[:2]
    by_q = {q.qid: build_passages(q.qid, q.hint_texts[:2]) for q in qs}
    llm = load_llm(TINY, use_cache=False, shared=False)
    ck = LabelCheckpoint(tmp_path / "labels.jsonl")
    first = label_questions(qs[:1], by_q.__getitem__, [llm], None, ck, progress=False)  # then "interrupted"
    llm.reset_stats()
    both = label_questions(qs, by_q.__getitem__, [llm], None, ck, progress=False)
    assert llm.stats.model_calls == len(by_q[qs[1].qid])  # only the unfinished question was read
    assert both[qs[0].qid].labels == first[qs[0].qid].labels and set(both) == {q.qid for q in qs}
