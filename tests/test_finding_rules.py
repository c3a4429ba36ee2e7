"""Every finding's rule can reach all three verdicts: each finding's real measure function reads small
hand-made result tables (written as the notebooks write them) built so that the finding *holds*, is
*contradicted* and is *inconclusive*. A measure that reads a and b the wrong way round turns holds into
contradicted; one that scores an unmeasured question 0, or counts the wrong units, changes the verdicts
here.

The recipes are per kind of rule: paired 0/1 outcomes by their discordant counts (n₁₀ for a, n₀₁ for b),
continuous per-question values by a shift and noise, shares of the questions ever answered right by
counts, each checked by hand against the rule (e.g. 15 discordant questions all won by a: exact sign
test p = 2·0.5¹⁵ = 6·10⁻⁵, holds; 6 against 5: p = 1, inconclusive).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from inferqa_utils import stages
from inferqa_utils.measure import verdict as vr
from inferqa_utils.verdicts import findings as fnd

HOLDS, CONTRA, INCON = vr.HOLDS, vr.CONTRADICTED, vr.INCONCLUSIVE
SUP, CON = stages.SUPPORTING, stages.CONTAINING
PARAMS = {
    "first_stage": "bm25",
    "reader_model": "reader-1",
    "labelers": ["labeler-1"],
    "reading_k": 3,
    "reading_union": "norm",
}


# ----------------------------------------------------------------------------- recipes: (a, b, extra)


def binary(n10: int, n01: int, n11: int = 0, n00: int = 0) -> tuple[np.ndarray, np.ndarray]:
    a = [1] * n10 + [0] * n01 + [1] * n11 + [0] * n00
    b = [0] * n10 + [1] * n01 + [1] * n11 + [0] * n00
    return np.array(a, float), np.array(b, float)


def continuous(
    n: int, shift: float, noise: float, seed: int = 0, base: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    b = np.clip(base + rng.normal(0, 0.1, n), 0, 1)
    a = np.clip(b + shift + rng.normal(0, noise, n), 0, 1)
    return a, b


#: per rule kind and verdict: (a, b) per unit
RECIPES: dict[str, dict[str, Callable[[], tuple[np.ndarray, np.ndarray]]]] = {
    "greater, 0/1": {
        HOLDS: lambda: binary(15, 0, n00=25),
        CONTRA: lambda: binary(0, 15, n00=25),
        INCON: lambda: binary(6, 5, n00=29),
    },
    "less, 0/1": {
        HOLDS: lambda: binary(0, 15, n00=25),
        CONTRA: lambda: binary(15, 0, n00=25),
        INCON: lambda: binary(6, 5, n00=29),
    },
    "greater, continuous": {
        HOLDS: lambda: continuous(40, 0.2, 0.05),
        CONTRA: lambda: continuous(40, -0.2, 0.05),
        INCON: lambda: continuous(40, 0.0, 0.2),
    },
    # |Δ| < 2.16 points: 10 + 10 discordant of 3,000 (Tango interval about ±0.37) holds; 200 of 20,000
    # lost (−1.0 [−1.14, −0.87]: inside the band but significantly below 0, so a and b read the wrong
    # way round would hold) contradicts; 5 + 6 of 40 (interval about ±15) straddles
    "adds little, 0/1": {
        HOLDS: lambda: binary(10, 10, n00=2980),
        CONTRA: lambda: binary(0, 200, n00=19800),
        INCON: lambda: binary(5, 6, n00=29),
    },
    # |Δ| < 1.22 points of nDCG: noise 0.02 over 2,000 questions holds; −0.6 ± 0.01 (inside the band, below
    # 0) contradicts; noise 0.05 over 40 straddles
    "adds little, continuous": {
        HOLDS: lambda: continuous(2000, 0.0, 0.02),
        CONTRA: lambda: continuous(2000, -0.006, 0.002, base=0.5),
        INCON: lambda: continuous(40, 0.0, 0.05),
    },
    # a − b > 35.70: 38 of 40 (95) holds, 10 of 200 (5, Tango upper bound about 9) contradicts, 15 of 40
    # (37.5) straddles
    "margin 35.70, 0/1": {
        HOLDS: lambda: binary(38, 0, n00=2),
        CONTRA: lambda: binary(10, 0, n00=190),
        INCON: lambda: binary(15, 0, n00=25),
    },
    # 0.4977 < a/b < 0.5592: 5,300 of 10,000 (0.53 ± 0.014) holds; 36 of 40 (0.9) contradicts; 11 of 20
    # (0.55 ± 0.2) straddles
    "ratio": {
        HOLDS: lambda: binary(0, 4700, 5300, 10000),
        CONTRA: lambda: binary(0, 4, 36, 0),
        INCON: lambda: binary(0, 9, 11, 0),
    },
}


# ------------------------------------------------------------------------- writers: tables of the notebooks


def _write(folder: Path, table: stages.Table, df: pd.DataFrame) -> None:
    df.to_csv(table.path("toy", "test", folder), index=False)


def _qids(n: int) -> list[str]:
    return [f"q{i:05d}" for i in range(n)]


def _results(folder: Path, **params: object) -> fnd.Results:
    return fnd.Results("toy", "test", {**PARAMS, **params}, folder, runs=folder / "runs")


def _runs(folder: Path, rankings: dict[str, dict[str, list[str]]]) -> None:
    out = folder / "runs" / "toy" / stages.Corpus.SUPPORTING
    out.mkdir(parents=True, exist_ok=True)
    for name, per_q in rankings.items():
        lines = [
            f"{q} Q0 {pid} {r + 1} {100 - r} x" for q, pids in per_q.items() for r, pid in enumerate(pids)
        ]
        (out / f"{name}.trec").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _moved_runs(folder: Path, a: str, b: str, qids: list[str], moved: int) -> None:
    """Runs ``a`` and ``b`` whose top-10 differ on the first ``moved`` questions."""
    base = {q: [f"{q}_p{j}" for j in range(10)] for q in qids}
    other = {q: (list(reversed(p)) if i < moved else p) for i, (q, p) in enumerate(base.items())}
    _runs(folder, {a: other, b: base})


def _answers(
    rows: dict[str, tuple[np.ndarray, str, str]], qids: list[str], moved: int = 0, union: str = "norm"
) -> pd.DataFrame:
    """04/05-shaped answers: system → (em per question, setting, reader); the first ``moved`` answers
    of every system but the last differ from the last's."""
    out = []
    last = list(rows)[-1]
    for system, (em, setting, reader) in rows.items():
        for i, (q, e) in enumerate(zip(qids, em, strict=True)):
            answer = f"{q}-{system}" if system != last and i < moved else f"{q}-same"
            out.append(
                {
                    "qid": q,
                    "answer": answer,
                    "em": bool(e),
                    "judged": bool(e),
                    "setting": setting,
                    "system": "every label ≥ 1 passage" if setting == "Optimal" else system,
                    "k": None if setting == "Optimal" else 3,
                    "union": None if setting == "Optimal" else union,
                    "reader": reader,
                }
            )
    return pd.DataFrame(out)


def _per_question(
    systems: dict[str, np.ndarray],
    qids: list[str],
    measure: str,
    corpus: str | None = None,
    threshold: int | None = None,
) -> pd.DataFrame:
    rows = [
        {
            "system": s,
            "measure": measure,
            "qid": q,
            "value": float(v),
            **({"corpus": corpus} if corpus else {}),
            **({"threshold": threshold} if threshold is not None else {}),
        }
        for s, vals in systems.items()
        for q, v in zip(qids, vals, strict=True)
    ]
    return pd.DataFrame(rows)


def w_cross_corpus(folder: Path, a: np.ndarray, b: np.ndarray, matched: bool = False) -> fnd.Results:
    q = _qids(len(a))
    sfx = ", size-matched" if matched else ""
    pq = pd.concat(
        [
            _per_question({"e5-small": a}, q, "Hit@1", stages.CONTAINING_JUDGED + sfx, 2),
            _per_question({"bm25": b}, q, "Hit@1", stages.SUPPORTING_JUDGED + sfx, 2),
        ]
    )
    _write(folder, stages.RETRIEVAL_PER_QUESTION, pq)
    judgments = pd.DataFrame(
        {
            "corpus": stages.SUPPORTING_JUDGED,
            "qid": q,
            "pid": [f"{x}_p" for x in q],
            "answer": "x",
            "label": 2,
            "source": "labeling",
        }
    )
    _write(folder, stages.POOLED_JUDGMENTS, judgments)
    return _results(folder)


def w_passage_lengths(folder: Path, a: np.ndarray, b: np.ndarray) -> fnd.Results:
    qa = [f"q{i % max(1, len(a) // 5):04d}" for i in range(len(a))]
    qb = [f"q{i % max(1, len(b) // 5):04d}" for i in range(len(b))]
    _write(
        folder,
        stages.PASSAGE_LENGTHS,
        pd.DataFrame(
            {
                "corpus": [SUP] * len(a) + [CON] * len(b),
                "pid": [f"p{i}" for i in range(len(a) + len(b))],
                "qid": qa + qb,
                "tokens": np.concatenate([a, b]),
            }
        ),
    )
    return _results(folder)


def w_dense(folder: Path, a: np.ndarray, b: np.ndarray) -> fnd.Results:
    q = _qids(len(a))
    _write(
        folder, stages.RETRIEVAL_PER_QUESTION, _per_question({"e5-small": a, "bm25": b}, q, "nDCG@10", SUP, 1)
    )
    return _results(folder)


def w_best_retriever(folder: Path, a: np.ndarray, b: np.ndarray) -> fnd.Results:
    q = _qids(len(a))
    sup = _per_question(
        {"bm25": np.ones(len(a)), "e5-small": np.zeros(len(a))}, q, "Hit@1", stages.SUPPORTING_JUDGED, 2
    )
    con = _per_question({"e5-small": a, "bm25": b}, q, "Hit@1", stages.CONTAINING_JUDGED, 2)
    _write(folder, stages.RETRIEVAL_PER_QUESTION, pd.concat([sup, con]))
    return _results(folder)


def w_reranker_em(folder: Path, a: np.ndarray, b: np.ndarray) -> fnd.Results:
    q = _qids(len(a))
    _write(
        folder,
        stages.READING_ANSWERS,
        _answers(
            {"bm25+pointwise": (a, "pipeline", "reader-1"), "bm25": (b, "pipeline", "reader-1")},
            q,
            moved=max(12, int(np.sum(a != b))),
        ),
    )
    return _results(folder)


def w_reranker_ndcg(folder: Path, a: np.ndarray, b: np.ndarray) -> fnd.Results:
    q = _qids(len(a))
    _write(
        folder, stages.RERANKING_PER_QUESTION, _per_question({"bm25+pointwise": a, "bm25": b}, q, "nDCG@10")
    )
    _moved_runs(folder, "bm25+pointwise", "bm25", q, moved=min(len(q), 30))
    return _results(folder)


def w_pointwise(folder: Path, a: np.ndarray, b: np.ndarray) -> fnd.Results:
    q = _qids(len(a))
    _write(
        folder,
        stages.RERANKING_PER_QUESTION,
        _per_question({"bm25+pointwise": a, "bm25+upr": b}, q, "nDCG@10"),
    )
    return _results(folder)


def w_reading(a_system: str, a_setting: str, b_system: str, b_setting: str) -> Callable[..., fnd.Results]:
    def write(folder: Path, a: np.ndarray, b: np.ndarray) -> fnd.Results:
        q = _qids(len(a))
        _write(
            folder,
            stages.READING_ANSWERS,
            _answers({a_system: (a, a_setting, "reader-1"), b_system: (b, b_setting, "reader-1")}, q),
        )
        return _results(folder)

    return write


def w_union(folder: Path, a: np.ndarray, b: np.ndarray) -> fnd.Results:
    q = _qids(len(a))
    both = pd.concat(
        [
            _answers({"oracle+pointwise": (a, "oracle", "reader-1")}, q, union="freq"),
            _answers({"oracle+pointwise": (b, "oracle", "reader-1")}, q, union="norm"),
        ]
    )
    _write(folder, stages.READING_ANSWERS, both)
    return _results(folder)


def w_hint_passages(folder: Path, a: np.ndarray, b: np.ndarray) -> fnd.Results:
    qa, qb = [f"q{i % max(1, len(a) // 2):04d}" for i in range(len(a))], [f"q{i:04d}" for i in range(len(b))]
    rows = [
        {"source": "Optimal: correct passages", "reader": "reader-1", "qid": q, "n_hints": 3 if v else 1}
        for q, v in zip(qa, a, strict=True)
    ] + [
        {"source": "bm25", "reader": "", "qid": q, "n_hints": 3 if v else 2}
        for q, v in zip(qb, b, strict=True)
    ]
    _write(folder, stages.HINT_PASSAGES, pd.DataFrame(rows))
    return _results(folder)


def w_cot(folder: Path, a: np.ndarray, b: np.ndarray) -> fnd.Results:
    q = _qids(len(a))
    rows = [
        {"system": s, "qid": x, "em": bool(v)}
        for s, vals in (("decomposition", a), ("decomposition + CoT reader", b))
        for x, v in zip(q, vals, strict=True)
    ]
    _write(folder, stages.BEYOND_ANSWERS, pd.DataFrame(rows))
    return _results(folder)


def w_ft_retriever(folder: Path, a: np.ndarray, b: np.ndarray) -> fnd.Results:
    q = _qids(len(a))
    _write(folder, stages.FT_PER_QUESTION, _per_question({"FT-MiniLM-N5": a, "minilm": b}, q, "nDCG@10"))
    _moved_runs(folder, "FT-MiniLM-N5", "minilm", q, moved=min(len(q), 30))
    return _results(folder)


def w_positives(folder: Path, a: np.ndarray, b: np.ndarray) -> fnd.Results:
    q = _qids(len(a))
    _write(
        folder,
        stages.FT_PER_QUESTION,
        _per_question({"FT-MiniLM-N5": a, "FT-MiniLM-N1": b, "minilm": b}, q, "nDCG@10"),
    )
    return _results(folder)


def w_ft_reranker(folder: Path, a: np.ndarray, b: np.ndarray) -> fnd.Results:
    q = _qids(len(a))
    _write(folder, stages.FT_ANSWERS, _answers({"bm25+FT-CrossEncoder": (a, "pipeline", "reader-1")}, q))
    _write(folder, stages.READING_ANSWERS, _answers({"bm25+pointwise": (b, "pipeline", "reader-1")}, q))
    return _results(folder)


def w_ft_pipeline(folder: Path, a: np.ndarray, b: np.ndarray) -> fnd.Results:
    q = _qids(len(a))
    _write(
        folder,
        stages.FT_ANSWERS,
        _answers(
            {
                "FT-MiniLM+FT-CrossEncoder": (a, "pipeline", "reader-1"),
                "minilm": (b, "pipeline", "reader-1"),
                "bm25": (np.zeros(len(b)), "pipeline", "reader-1"),
            },
            q,
        ),
    )
    return _results(folder)


def _patterns(rows: list[tuple[str, str]], corpus: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "system": "bm25",
            "qid": [q for q, _ in rows],
            "em_pattern": [p for _, p in rows],
            "judged_pattern": [p for _, p in rows],
            "corpus": corpus,
        }
    )


def w_damage(corpus: str = SUP, **params: object) -> Callable[..., fnd.Results]:
    """Patterns whose questions ever answered right are the units: a = 1, b = EM@N ("11" kept, "10"
    damaged), plus 5 questions never answered right ("00"), which must not count."""

    def write(folder: Path, a: np.ndarray, b: np.ndarray) -> fnd.Results:
        q = _qids(len(a) + 5)
        pats = ["1" + ("1" if v else "0") for v in b] + ["00"] * 5
        _write(folder, stages.PATTERNS, _patterns(list(zip(q, pats, strict=True)), corpus))
        return _results(folder, **params)

    return write


def w_damage_by_corpus(folder: Path, a: np.ndarray, b: np.ndarray) -> fnd.Results:
    """a and b: damaged (1) or kept (0) per question ever answered right on each corpus."""
    q = _qids(len(a))
    sup = [(x, "10" if v else "11") for x, v in zip(q, a, strict=True)]
    con = [(x, "10" if v else "11") for x, v in zip(q, b, strict=True)]
    _write(folder, stages.PATTERNS, pd.concat([_patterns(sup, SUP), _patterns(con, CON)]))
    return _results(folder)


def w_probe3(corpus: str = SUP, k: int = 4) -> Callable[..., fnd.Results]:
    """Probe-3 readings at k: a = P3 correct, b = EM@k, every question keeping a non-prefix set ("1 3"),
    plus 5 questions keeping a prefix ("1 2"), which must be left out."""

    def write(folder: Path, a: np.ndarray, b: np.ndarray) -> fnd.Results:
        q = _qids(len(a) + 5)
        pats = [("101" + "0" * (k - 4) + ("1" if v else "0")) for v in b] + ["11" + "0" * (k - 2)] * 5
        kept = ["1 3"] * len(a) + ["1 2"] * 5
        correct = list(a.astype(bool)) + [True] * 5
        _write(folder, stages.PATTERNS, _patterns(list(zip(q, pats, strict=True)), corpus))
        _write(
            folder,
            stages.PROBE_READINGS,
            pd.DataFrame(
                {
                    "system": "bm25",
                    "qid": q,
                    "metric": "em",
                    "k": k,
                    "probe": "P3",
                    "n_kept": 2,
                    "kept": kept,
                    "answer": "x",
                    "correct": correct,
                    "corpus": corpus,
                }
            ),
        )
        return _results(folder)

    return write


def w_ser(corpus: str = SUP) -> Callable[..., fnd.Results]:
    def write(folder: Path, a: np.ndarray, b: np.ndarray) -> fnd.Results:
        q = _qids(len(a))
        rows = [
            {
                "kind": kind,
                "qid": x,
                "sample": 0,
                "m": m,
                "changed": bool(v) if m == 4 else False,
                "corpus": corpus,
            }
            for kind, vals in (("BM25", a), ("random", b))
            for x, v in zip(q, vals, strict=True)
            for m in (1, 4)
        ]
        _write(folder, stages.SER_READINGS, pd.DataFrame(rows))
        return _results(folder)

    return write


def w_ser_rises(folder: Path, a: np.ndarray, b: np.ndarray) -> fnd.Results:
    q = _qids(len(a))
    rows = [
        {"kind": "BM25", "qid": x, "sample": 0, "m": m, "changed": bool(v), "corpus": SUP}
        for m, vals in ((4, a), (1, b))
        for x, v in zip(q, vals, strict=True)
    ]
    _write(folder, stages.SER_READINGS, pd.DataFrame(rows))
    return _results(folder)


#: per finding: its writer and the recipes that drive it; damage shares have their own recipes
SHARE = {
    HOLDS: lambda: (np.ones(20), np.array([0.0] * 10 + [1.0] * 10)),  # 10 of 20 lost: CP [27, 73] > 6.95
    CONTRA: lambda: (np.ones(300), np.array([0.0] * 3 + [1.0] * 297)),  # 3 of 300: CP upper 2.9 < 6.95
    INCON: lambda: (np.ones(12), np.array([0.0] + [1.0] * 11)),
}  # 1 of 12: CP [0.2, 38.5]
BY_CORPUS = {
    HOLDS: lambda: binary(15, 0, n00=5),
    CONTRA: lambda: binary(0, 15, n00=5),
    INCON: lambda: binary(5, 5, n00=10),
}
CASES: dict[
    str, tuple[Callable[..., fnd.Results], dict[str, Callable[[], tuple[np.ndarray, np.ndarray]]]]
] = {
    "containing_beats_supporting": (w_cross_corpus, RECIPES["greater, 0/1"]),
    "containing_beats_supporting_size_matched": (
        lambda f, a, b: w_cross_corpus(f, a, b, matched=True),
        RECIPES["greater, 0/1"],
    ),
    "similar_passage_length": (
        w_passage_lengths,
        {
            HOLDS: lambda: tuple(50.0 + np.random.default_rng(i).normal(0, 5, 2000) for i in (1, 2)),
            CONTRA: lambda: (
                np.full(200, 70.0) + np.arange(200) % 3,
                np.full(200, 50.0) + np.arange(200) % 3,
            ),
            INCON: lambda: (np.array([51.5, 60.0, 43.0] * 10), np.array([50.0, 58.0, 42.0] * 10)),
        },
    ),
    "dense_beats_bm25": (w_dense, RECIPES["greater, continuous"]),
    "best_retriever_differs": (w_best_retriever, RECIPES["greater, 0/1"]),
    "rerankers_marginal": (w_reranker_em, RECIPES["adds little, 0/1"]),
    "rerankers_marginal_ranking": (w_reranker_ndcg, RECIPES["adds little, continuous"]),
    "pointwise_best_reranker": (w_pointwise, RECIPES["greater, continuous"]),
    "optimal_far_above_pipeline": (
        w_reading("Optimal", "Optimal", "bm25", "pipeline"),
        RECIPES["margin 35.70, 0/1"],
    ),
    "oracle_half_of_optimal": (
        w_reading("oracle+pointwise", "oracle", "Optimal", "Optimal"),
        RECIPES["ratio"],
    ),
    "pipeline_below_oracle": (
        w_reading("oracle+pointwise", "oracle", "bm25", "pipeline"),
        RECIPES["greater, 0/1"],
    ),
    "union_freq_beats_norm": (w_union, RECIPES["greater, 0/1"]),
    "full_passages_under_optimal": (w_hint_passages, RECIPES["greater, 0/1"]),
    "general_reader_beats_reasoning": (w_cot, RECIPES["greater, 0/1"]),
    "finetuning_small_gains": (w_ft_retriever, RECIPES["adds little, continuous"]),
    "more_positives_help": (w_positives, RECIPES["greater, continuous"]),
    "ft_reranker_oracle_only": (w_ft_reranker, RECIPES["less, 0/1"]),
    "ft_pipeline_best": (w_ft_pipeline, RECIPES["greater, 0/1"]),
    "damaging_passages": (w_damage(), SHARE),
    "damaging_passages_containing": (w_damage(CON), SHARE),
    "damage_remains_under_seem": (w_damage(SUP, judge_readings=True), SHARE),
    "damaging_larger_when_supporting": (w_damage_by_corpus, BY_CORPUS),
    "probe3_recovers": (w_probe3(), RECIPES["greater, 0/1"]),
    "probe3_recovers_containing": (w_probe3(CON), RECIPES["greater, 0/1"]),
    "probe3_at_5": (w_probe3(SUP, k=5), RECIPES["greater, 0/1"]),
    "ser_bm25_above_random": (w_ser(), RECIPES["greater, 0/1"]),
    "ser_bm25_above_random_containing": (w_ser(CON), RECIPES["greater, 0/1"]),
    "ser_rises_with_negatives": (w_ser_rises, RECIPES["greater, 0/1"]),
}


def test_every_finding_has_a_case():
    assert set(CASES) == {f.id for f in fnd.load_paper_numbers()}


@pytest.mark.parametrize("verdict", [HOLDS, CONTRA, INCON])
@pytest.mark.parametrize("fid", sorted(CASES))
def test_each_rule_reaches_each_verdict(tmp_path, fid, verdict):
    """The finding's measure on tables made to give ``verdict`` gives it (module docstring)."""
    write, recipes = CASES[fid]
    a, b = recipes[verdict]()
    results = write(tmp_path, a, b)
    finding = next(f for f in fnd.load_paper_numbers() if f.id == fid)
    s = fnd.score(finding, results)
    assert s.verdict == verdict, f"{fid}: {s.verdict} ({s.why}); statistic {s.stat}"
    if verdict != INCON:
        assert s.p_value is not None and s.p_value < vr.ALPHA


def test_optimal_is_by_construction_when_the_reader_labelled(tmp_path):
    """Read by the model that labelled the passages, Optimal is the share of questions with a passage
    labelled 2: the two Optimal findings are by construction, shown but not counted."""
    a, b = RECIPES["margin 35.70, 0/1"][HOLDS]()
    results = w_reading("Optimal", "Optimal", "bm25", "pipeline")(tmp_path, a, b)
    results.params = {**results.params, "labelers": ["reader-1"], "optimal_readers": ["qwen2.5-coder-0.5b"]}
    by_id = {f.id: f for f in fnd.load_paper_numbers()}
    s = fnd.score(by_id["optimal_far_above_pipeline"], results)
    assert (
        s.verdict == vr.BY_CONSTRUCTION and "labelling reads" in s.why and "answers worse with hints" in s.why
    )
    assert s.stat.value == pytest.approx(95.0) and not s.tested
    table = fnd.verdict_table(results, [by_id["optimal_far_above_pipeline"], by_id["pipeline_below_oracle"]])
    assert "1 by construction, not counted" in fnd.verdict_counts(table)


def test_optimal_is_read_by_a_second_reader_when_the_main_one_labelled(tmp_path):
    """The main reader labelled the passages, a second reader (not a labeler) read Optimal and the
    pipeline: the Optimal findings are scored on the second reader's answers (95 vs 0 there), not
    by construction."""
    q = _qids(40)
    a, b = RECIPES["margin 35.70, 0/1"][HOLDS]()
    answers = pd.concat(
        [
            _answers(
                {
                    "Optimal": (np.ones(40), "Optimal", "reader-1"),
                    "bm25": (np.ones(40), "pipeline", "reader-1"),
                },
                q,
            ),
            _answers({"Optimal": (a, "Optimal", "reader-2"), "bm25": (b, "pipeline", "reader-2")}, q),
        ]
    )
    _write(tmp_path, stages.READING_ANSWERS, answers)
    results = _results(
        tmp_path, labelers=["reader-1"], optimal_readers=["reader-2"], reader_models=["reader-1", "reader-2"]
    )
    s = fnd.score(next(f for f in fnd.load_paper_numbers() if f.id == "optimal_far_above_pipeline"), results)
    assert s.verdict == HOLDS and s.stat.value == pytest.approx(95.0) and "reader-2" in s.why


def test_probe3_leaves_out_the_prefix_questions(tmp_path):
    a, b = RECIPES["greater, 0/1"][HOLDS]()
    s = fnd.m_probe3_vs_em(w_probe3()(tmp_path, a, b))
    assert len(s.a) == 40 and s.read == 45 and "5 of 45 questions left out" in s.note


def test_probe3_is_by_construction_when_every_kept_set_is_a_prefix(tmp_path):
    """Only prefix questions ("1 2"): Probe 3 re-reads prefixes already read on every question, so it
    cannot come out otherwise: by construction, with the numbers shown."""
    a, b = RECIPES["greater, 0/1"][HOLDS]()
    results = w_probe3()(tmp_path, a, b)
    probes = pd.read_csv(stages.PROBE_READINGS.path("toy", "test", tmp_path))
    probes.assign(kept="1 2").to_csv(stages.PROBE_READINGS.path("toy", "test", tmp_path), index=False)
    s = fnd.score(next(f for f in fnd.load_paper_numbers() if f.id == "probe3_recovers"), results)
    assert s.verdict == vr.BY_CONSTRUCTION and "keeps a prefix already read" in s.why and s.n == 45


def test_damage_share_counts_only_the_questions_ever_answered_right(tmp_path):
    a, b = SHARE[HOLDS]()
    s = fnd.m_damage_share(w_damage()(tmp_path, a, b))
    assert (len(s.a), s.read, s.a_at_least_b) == (20, 25, True)
    assert "of 20 questions answered right at some k ≤ N (25 read), 10 are wrong at N" in s.note


def test_unmeasured_questions_are_dropped_not_scored_zero(tmp_path):
    """A question the pipeline did not read (missing row) is dropped from both sides: 15 questions won
    by a and 25 ties, plus 20 questions a alone has — still 15 discordant of 40, not 35 of 60."""
    a, b = binary(15, 0, n00=25)
    q = _qids(60)
    answers = _answers(
        {
            "oracle+pointwise": (np.concatenate([a, np.ones(20)]), "oracle", "reader-1"),
            "bm25": (np.concatenate([b, np.zeros(20)]), "pipeline", "reader-1"),
        },
        q,
    )
    answers = answers[~((answers["system"] == "bm25") & answers["qid"].isin(q[40:]))]
    _write(tmp_path, stages.READING_ANSWERS, answers)
    s = fnd.m_oracle_vs_pipeline(_results(tmp_path))
    assert (len(s.a), s.discordant) == (40, 15)


def test_cross_corpus_authors_convention_skips_supporting_questions_without_a_relevant_passage(tmp_path):
    """12 questions: the containing side hits 11, the supporting side 6; only 8 supporting questions
    have a relevant passage (2 of the hits among them): authors' convention pairs those 8."""
    q = _qids(12)
    pq = pd.concat(
        [
            _per_question(
                {"e5-small": np.array([1.0] * 11 + [0.0])}, q, "Hit@1", stages.CONTAINING_JUDGED, 2
            ),
            _per_question({"bm25": np.array([1.0] * 6 + [0.0] * 6)}, q, "Hit@1", stages.SUPPORTING_JUDGED, 2),
        ]
    )
    _write(tmp_path, stages.RETRIEVAL_PER_QUESTION, pq)
    relevant = q[4:]
    _write(
        tmp_path,
        stages.POOLED_JUDGMENTS,
        pd.DataFrame(
            {
                "corpus": stages.SUPPORTING_JUDGED,
                "qid": relevant,
                "pid": "p",
                "answer": "x",
                "label": 2,
                "source": "r",
            }
        ),
    )
    s = fnd.m_cross_corpus_hit(_results(tmp_path))
    assert len(s.a) == 8 and s.b.sum() == 2 and "ours, every one of 12 counting: 91.67 vs 50.00" in s.note


def test_passage_lengths_are_resampled_by_question(tmp_path):
    a, b = RECIPES["greater, continuous"][HOLDS]()
    s = fnd.m_passage_lengths(w_passage_lengths(tmp_path, a * 100, b * 100))
    assert s.a_groups is not None and s.groups == 8 and "resampled by question (8 questions)" in s.note


def test_damage_by_corpus_is_normalised_by_the_questions_ever_right(tmp_path):
    """Supporting: 4 questions damaged ("10") and 6 never right ("00"): 4 of 4 ever right are lost,
    100 %. Containing: 4 damaged and 6 kept ("11"): 4 of 10, 40 %. The difference is 60 points (not
    the 0 of 4/10 − 4/10 over every question read)."""
    q = _qids(10)
    sup = [(x, "10" if i < 4 else "00") for i, x in enumerate(q)]
    con = [(x, "10" if i < 4 else "11") for i, x in enumerate(q)]
    _write(tmp_path, stages.PATTERNS, pd.concat([_patterns(sup, SUP), _patterns(con, CON)]))
    s = fnd.m_damaging_by_corpus(_results(tmp_path))
    assert vr.statistic_value(s, "diff") * 100 == pytest.approx(60.0)
    assert "(4 of 4) vs answer-containing (4 of 10)" in s.note
