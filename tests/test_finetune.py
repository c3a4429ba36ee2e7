"""Fine-tuning (paper 000 §5.2–5.3, A.2–A.3): the N-positives sampler, question-disjoint batches, and real
tiny training
runs of the MiniLM bi-encoder (interrupted → resumed → reused) and cross-encoder, reloaded by name."""

from __future__ import annotations

from dataclasses import replace

import pytest

from inferqa_utils.core import models
from inferqa_utils.finetune import (
    PAPER_EPOCHS,
    TrainConfig,
    epochs_for,
    positives_of,
    register,
    sample_examples,
    sample_summary,
)
from inferqa_utils.finetune.batching import plan_batches
from inferqa_utils.finetune.conditions import select_best, variant_name
from inferqa_utils.ir.datamodel import Dataset, Hint, Passage, Question

TOPICS = {
    "qa": (
        "Which iron tower stands in Paris?",
        [
            "The Eiffel Tower is an iron lattice tower in Paris.",
            "Gustave Eiffel's company built the Paris tower in 1889.",
            "The tower on the Champ de Mars in Paris is made of iron.",
        ],
    ),
    "qb": (
        "Which planet is called the Red Planet?",
        [
            "Mars looks red because of iron oxide dust.",
            "The red planet Mars has two moons, Phobos and Deimos.",
            "Mars is the fourth planet from the Sun.",
        ],
    ),
    "qc": (
        "Which bird cannot fly and lives in Antarctica?",
        [
            "Emperor penguins live on the ice of Antarctica.",
            "Penguins are flightless seabirds of the south.",
            "Penguins swim with flippers instead of flying.",
        ],
    ),
    "qd": (
        "Which instrument is played with a bow?",
        [
            "The violin is a string instrument played with a bow.",
            "A cello is bowed and held between the knees.", "Violinists draw the bow across four strings.",
        ],
    ),
}


def make_ds(n_per_question: int = 6) -> Dataset:
    """Four questions; passage i of a question has label 2 if i = 0, 0 if i = 1 (not answerable), else 1."""
    questions, passages, qrels = {}, {}, {}
    for qid, (text, hints) in TOPICS.items():
        questions[qid] = Question(qid, text, ["x"], [Hint(h) for h in hints])
        qrels[qid] = {}
        for i in range(n_per_question):
            pid = f"{qid}_p{i}"
            passages[pid] = Passage(pid, qid, (i % 3,), hints[i % 3] + f" ({i})")
            qrels[qid][pid] = 2 if i == 0 else (0 if i == 1 else 1)
    return Dataset(
        "tiny-ft", questions, passages, qrels, splits={"train": ["qa", "qb", "qc"], "test": ["qd"]}
    )


# --------------------------------------------------------------------------- sampler

@pytest.mark.parametrize("n", [1, 3, 5, 50])
def test_positives_negatives_and_counts(n):
    ds = make_ds()
    train = ds.splits["train"]
    ex = sample_examples(ds, train, n, negative_qids=train, seed=7)
    for qid in train:
        own = [e for e in ex if e.qid == qid]
        available = positives_of(ds.qrels[qid])  # label ≥ 1: 5 of the 6 passages
        assert len(available) == 5
        assert len(own) == min(n, 5)  # capped by the available positives, never repeated
        assert len({e.positive for e in own}) == len(own)
        assert {e.positive for e in own} <= set(available)
        assert all(ds.passages[e.positive].qid == qid and ds.qrels[qid][e.positive] >= 1 for e in own)
        # as many negatives, all distinct, none of the question's own passages, all from the pool
        negs = [e.negative for e in own]
        assert len(set(negs)) == len(negs) == len(own)
        assert all(ds.passages[p].qid != qid and ds.passages[p].qid in train for p in negs)
        assert all(e.negative_qid == ds.passages[e.negative].qid for e in own)
        assert all(ds.qrels[qid].get(p, 0) == 0 for p in negs)
    s = sample_summary(ex, train, n)
    assert s["positives"] == s["negatives"] == len(ex) and s["questions"] == 3
    assert s["capped questions"] == (3 if n > 5 else 0)


def test_seeds_and_nested_samples():
    ds = make_ds(30)
    train = ds.splits["train"]
    a = sample_examples(ds, train, 5, seed=1)
    assert a == sample_examples(ds, train, 5, seed=1)  # fixed seed → same sample
    b = sample_examples(ds, train, 5, seed=2)
    assert [(e.positive, e.negative) for e in a] != [(e.positive, e.negative) for e in b]
    big = sample_examples(ds, train, 10, seed=1)  # N = 5 is a prefix of N = 10, per question
    for qid in train:
        assert [e.positive for e in a if e.qid == qid] == [e.positive for e in big if e.qid == qid][:5]
        assert [e.negative for e in a if e.qid == qid] == [e.negative for e in big if e.qid == qid][:5]


def test_negative_pool_and_hard_negatives():
    ds = make_ds()
    ex = sample_examples(ds, ["qa"], 3, negative_qids=["qd"], seed=3)  # pool: another split's questions
    assert all(e.negative_qid == "qd" for e in ex)
    run = {"qa": [("qa_p0", 9.0), ("qd_p4", 8.0), ("qb_p2", 7.0), ("qa_p3", 6.0), ("qd_p1", 5.0)]}
    hard = sample_examples(ds, ["qa"], 3, negative_qids=["qb", "qd"], hard_negative_run=run, seed=3)
    # the run's order, skipping the question's own passages; random fill-up after the run's 3 usable ones
    assert [e.negative for e in hard] == ["qd_p4", "qb_p2", "qd_p1"] and all(e.hard for e in hard)
    short = sample_examples(ds, ["qa"], 5, negative_qids=["qb", "qd"], hard_negative_run=run, seed=3)
    assert [e.hard for e in short] == [True, True, True, False, False]


def test_sampler_errors():
    ds = make_ds()
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="N must be an integer ≥ 1"):
            sample_examples(ds, ["qa"], bad)
    with pytest.raises(ValueError, match="no training questions"):
        sample_examples(ds, [], 1)
    with pytest.raises(ValueError, match="not in dataset"):
        sample_examples(ds, ["nope"], 1)
    with pytest.raises(ValueError, match="negative pool holds only 0"):
        sample_examples(ds, ["qa"], 1, negative_qids=["qa"])  # only the question's own passages
    ds.qrels = {q: {p: 0 for p in v} for q, v in ds.qrels.items()}
    with pytest.raises(ValueError, match="has a passage with label ≥ 1"):
        sample_examples(ds, ["qa", "qb"], 1)


def test_question_disjoint_batches():
    anchors = ["a"] * 5 + ["b"] * 5 + ["c"] * 5 + ["d"] * 5
    negs = ["b", "c", "d", "e", "e"] + ["a", "e", "e", "e", "e"] + ["e"] * 5 + ["a", "b", "e", "e", "e"]
    plan = plan_batches(anchors, negs, 3, seed=5)
    assert sorted(i for b in plan for i in b) == list(range(20))  # every row exactly once
    for b in plan:
        qs = [anchors[i] for i in b]
        assert len(b) <= 3 and len(set(qs)) == len(qs)  # one row per question
        assert not {negs[i] for i in b} & set(qs)  # no anchor's question owns an in-batch negative
    assert plan == plan_batches(anchors, negs, 3, seed=5) != plan_batches(anchors, negs, 3, seed=6)
    with pytest.raises(ValueError):
        plan_batches(anchors, negs, 0, seed=1)


def test_epochs_names_and_selection():
    assert (
        epochs_for(10, None) == PAPER_EPOCHS[10] == 2 and epochs_for(7, None) == 5 and epochs_for(1, 3) == 3.0
    )
    assert (
        variant_name("FT-MiniLM", 5) == "FT-MiniLM-N5" and variant_name("FT-X", 1, "hard") == "FT-X-N1-hard"
    )
    assert select_best({"a": 1.0, "b": 3.0, "c": 3.0}) == "b"
    with pytest.raises(ValueError):
        TrainConfig(epochs=0)


# --------------------------------------------------------------------------- real tiny training runs

@pytest.fixture
def registry(tmp_path, monkeypatch):
    """Model registry and run cache under tmp (the repository's registry is left alone)."""
    from inferqa_utils.llm import embeddings

    monkeypatch.setattr(models, "PATHS", models.PATHS.__class__(tmp_path))
    monkeypatch.setattr(embeddings, "PATHS", models.PATHS.__class__(tmp_path))
    monkeypatch.setattr(embeddings, "_EMBEDDERS", {})
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path


class _Interrupt(Exception):
    pass


def test_biencoder_interrupted_resumed_reused_and_retrieves(registry):
    from transformers import TrainerCallback

    from inferqa_utils.finetune import train_biencoder
    from inferqa_utils.finetune.job import TrainJob
    from inferqa_utils.retrieval.registry import retrieve

    class StopAfterFirstSave(TrainerCallback):
        def on_save(self, args, state, control, **kw):
            raise _Interrupt(f"interrupted after step {state.global_step}")

    ds = make_ds(3)
    train = ds.splits["train"]
    ex = sample_examples(ds, train, 2, negative_qids=[*train, "qd"], seed=1)
    cfg = TrainConfig(epochs=1, batch_size=3, learning_rate=5e-5, max_seq_length=32, checkpoint_steps=1,
                      freeze_embeddings=True)
    folder = registry / "models" / "FT-test-N2"
    job = TrainJob("FT-test-N2", folder, n_positives=2)
    with pytest.raises(_Interrupt):
        train_biencoder(ds, ex, job, cfg, progress=False, callbacks=[StopAfterFirstSave()],
                        log=lambda s: None)
    assert (folder / "checkpoints" / "checkpoint-1").is_dir() and not (folder / "model").exists()
    logs: list[str] = []
    cfg = replace(cfg, checkpoint_steps=100)  # the interval is not part of the fingerprint: still a resume
    m = train_biencoder(ds, ex, job, cfg, progress=False, log=logs.append)
    assert m.resumed_from == 1 and m.steps >= 2 and not m.cached and any("resuming" in s for s in logs)
    assert (folder / "model" / "modules.json").exists() and not (folder / "checkpoints").exists()
    again = train_biencoder(ds, ex, job, cfg, progress=False, log=lambda s: None)
    assert again.cached and again.steps == m.steps and again.loss == m.loss  # same fingerprint → no training

    register("FT-test", "sentence-transformers", m.path)
    corpus = {pid: p.text for pid, p in ds.passages.items()}
    queries = {q: ds.questions[q].question for q in ds.questions}
    run = retrieve("FT-test", corpus, queries, k=12)
    vanilla = retrieve("minilm", corpus, queries, k=12)
    for qid in queries:  # every question's own passages come first
        assert {p[:2] for p, _ in run[qid][:3]} == {qid}
    assert [s for _, s in run["qa"]] != pytest.approx([s for _, s in vanilla["qa"]])  # the weights changed


def test_cross_encoder_learns_and_loads_as_reranker(registry):
    from sentence_transformers import CrossEncoder

    from inferqa_utils.finetune import train_cross_encoder
    from inferqa_utils.finetune.job import TrainJob
    from inferqa_utils.finetune.training import seed_everything
    from inferqa_utils.rerank import make_reranker

    ds = make_ds(3)
    train = ds.splits["train"]
    ex = sample_examples(ds, train, 2, negative_qids=train, seed=1)
    pos_pairs = [(e.question, ds.passages[e.positive].text) for e in ex]
    neg_pairs = [(e.question, ds.passages[e.negative].text) for e in ex]
    cfg = TrainConfig(epochs=2, batch_size=4, learning_rate=3e-4, max_seq_length=48, warmup_ratio=0.0,
                      freeze_embeddings=True, checkpoint_steps=100)
    seed_everything(cfg.seed)  # the trainer's starting point: MiniLM + the same seeded fresh head
    start = CrossEncoder(str(models.fetch("minilm")), num_labels=1)
    gap0 = float(start.predict(pos_pairs).mean() - start.predict(neg_pairs).mean())
    job = TrainJob("FT-ce-N2", registry / "models" / "FT-ce-N2", n_positives=2)
    m = train_cross_encoder(ds, ex, job, cfg, progress=False, log=lambda s: None)
    assert m.steps == 6 and len(m.loss) == 6
    register("FT-ce", "cross-encoder", m.path)
    rr = make_reranker("FT-ce")  # reloaded from the registered folder
    pos, neg = rr.score_pairs(pos_pairs), rr.score_pairs(neg_pairs)
    gap = sum(pos) / len(pos) - sum(neg) / len(neg)
    assert abs(gap0) < 1e-3 < 0.005 < gap  # an untrained head cannot tell the pairs apart; 6 steps start to
    corpus = {pid: p.text for pid, p in ds.passages.items()}
    first = {"qa": [(pid, 1.0) for pid in sorted(corpus)]}
    out = rr.rerank({"qa": ds.questions["qa"].question}, first, corpus, depth=None)
    assert sorted(p for p, _ in out["qa"]) == sorted(corpus)
    assert [s for _, s in out["qa"]] == sorted((s for _, s in out["qa"]), reverse=True)


# --------------------------------------------------------------------------- cached runs of notebook 05

class _Reverse:
    """A reranker that reverses each list (stands in for a fine-tuned cross-encoder)."""

    def rerank(self, queries, run, corpus, depth=None):
        return {q: [(p, float(i + 1)) for i, (p, _) in enumerate(run[q])][::-1] for q in queries}


def test_cached_rerank_reads_back_and_recomputes_a_stale_schema(tmp_path, monkeypatch):
    import json

    from inferqa_utils.core import artifacts
    from inferqa_utils.finetune import conditions as fx
    from inferqa_utils.rerank.stored import RERANK_SCHEMA, rerank_key

    loaded = []
    monkeypatch.setattr(fx, "make_reranker", lambda name: loaded.append(name) or _Reverse())
    monkeypatch.setattr(fx.models, "checksum", lambda name: f"sha-{name}")
    corpus, queries = {"a": "x", "b": "y"}, {"q": "?"}
    first = {"q": [("a", 2.0), ("b", 1.0)]}
    path = tmp_path / "bm25+FT-CE.trec"
    run, cost = fx.cached_rerank("FT-CE", queries, first, corpus, 10, path)
    assert [p for p, _ in run["q"]] == ["b", "a"] and loaded == ["FT-CE"]
    stamp = artifacts.read_stamp(path)
    assert {k: stamp[k] for k in ("kind", "schema", "inputs", "params")} == rerank_key(
        "FT-CE", "sha-FT-CE", queries, first, corpus, 10)
    assert cost == round(stamp["cost"]["seconds_per_query"], 3) and stamp["cost"]["llm"] == {}
    stamp["cost"] = artifacts.Cost(4.0, 1).record()
    artifacts.stamp_path(path).write_text(json.dumps(stamp))
    again, cost = fx.cached_rerank("FT-CE", queries, first, corpus, 10, path)
    assert again == run and cost == 4.0 and loaded == ["FT-CE"]  # read back: the model was not loaded
    artifacts.stamp_path(path).write_text(json.dumps({**stamp, "schema": RERANK_SCHEMA - 1}))
    fx.cached_rerank("FT-CE", queries, first, corpus, 10, path)
    assert loaded == ["FT-CE", "FT-CE"] and artifacts.read_stamp(path)["schema"] == RERANK_SCHEMA


def test_alias_run_is_stamped_with_the_aliased_models_identity(tmp_path):
    import json

    from inferqa_utils.core import artifacts
    from inferqa_utils.finetune.conditions import alias_run
    from inferqa_utils.retrieval.registry import retriever_identity

    run = {"q": [("a", 1.0)]}
    path = tmp_path / "minilm.trec"
    assert alias_run("minilm", run, {"a": "x"}, {"q": "?"}, 5, path) == run
    params = json.loads(artifacts.stamp_path(path).read_text())["params"]
    assert params == {"identity": retriever_identity("minilm"), "k": 5, "retriever": "minilm"}
