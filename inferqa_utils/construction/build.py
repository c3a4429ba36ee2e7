"""The dataset-construction pipeline (SPEC §3 steps 1–9) on any loaded source.

:func:`build_dataset` runs, in order: hint cleaning, the leakage filter, the hint-count check,
candidates and convergence (top-k hints), question type and difficulty, the parametric filter,
splits, subset-permutation passages, labeling (checkpointed per question), the verification
update, and the export (QUIT-shaped splits, ``corpus.jsonl``, TREC qrels, tables, manifest) to
``build/datasets/<name>/``. Every dropped question is recorded with its reason; nothing crashes
on a bad record. LLM replies are cached, so a re-run with unchanged inputs makes no model call.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..config import PATHS, SEED
from ..datamodel import Dataset, Hint, Passage, Question
from ..errors import InferQAError
from ..llm.base import LLM
from ..passages import build_passages
from ..textnorm import normalize_answer
from .convergence import (
    choice_hint_scores,
    convergence_from_scores,
    generate_candidates,
    gold_candidate,
    judge_hint_scores,
)
from .labeling import LabelCheckpoint, QuestionLabels, label_questions
from .leakage import LeakageFilter
from .parametric import parametric_answers, parametric_qids
from .qtype import classify_question
from .splits import make_splits
from .verification import load_decisions, update_labels


class BuildConflictError(InferQAError):
    """The output folder holds a build made with other parameters."""


@dataclass
class BuildConfig:
    """Parameters of one build (the notebook's ``parameters`` cell maps onto these)."""

    source: str = "embedded"
    name: str = "embedded"
    max_questions: int | None = None
    k_hints: int = 5
    labelers: list[str] = field(default_factory=lambda: ["qwen2.5-coder-0.5b"])
    judge_model: str | None = "qwen2.5-coder-0.5b"
    convergence_model: str = "qwen2.5-coder-0.5b"
    n_candidates: int = 10  # distractors to generate when a source has no candidates
    max_candidates: int | None = None  # cap on candidates judged per hint (gold included); None = all
    convergence_method: str = "choice"  # choice | pairwise (see construction.convergence)
    parametric_models: list[str] | None = None  # None → the labelers
    parametric_repeats: int = 3
    n_train: int | float | None = None
    n_test: int | float | None = None
    leakage_fuzzy_threshold: float = 90.0
    leakage_token_level: bool = True
    difficulty_top_n: int = 10
    difficulty_embedder: str | None = "minilm"
    verification_file: str | None = None  # None → data/verification/<name>.json
    output_dir: str | None = None  # None → build/datasets/<name>
    seed: int = SEED

    def fingerprint(self) -> str:
        """Hash of everything that changes the built dataset (not the verification file)."""
        d = asdict(self)
        d.pop("verification_file")
        d.pop("output_dir")
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]

    def label_key(self) -> str:
        """Hash of what determines a question's passages and labels (names its checkpoint file)."""
        keys = ("source", "k_hints", "labelers", "judge_model", "convergence_model", "n_candidates", "max_candidates",
                "convergence_method",
                "leakage_fuzzy_threshold", "leakage_token_level")
        d = {k: getattr(self, k) for k in keys}
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def out_dir(self) -> Path:
        return Path(self.output_dir) if self.output_dir else PATHS.datasets / self.name

    @property
    def decisions_path(self) -> Path:
        return Path(self.verification_file) if self.verification_file else PATHS.data / "verification" / f"{self.name}.json"


@dataclass
class BuildResult:
    config: BuildConfig
    dataset: Dataset
    questions: pd.DataFrame  # one row per source question: status, reason, types, difficulty
    hints: pd.DataFrame  # one row per hint: convergence, kept, drop reason
    parametric: pd.DataFrame
    difficulty: pd.DataFrame | None
    labels: dict[str, QuestionLabels]
    llm_stats: dict[str, dict[str, Any]]
    timings: dict[str, float]
    out_dir: Path
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def dropped(self) -> pd.DataFrame:
        return self.questions[self.questions["status"] == "dropped"]


def _answer_note(answer: str) -> str:
    notes = []
    if normalize_answer(answer).replace(" ", "").isdigit():
        notes.append("number")
    if any(not c.isalnum() and not c.isspace() for c in answer):
        notes.append("punctuation")
    if not answer.isascii():
        notes.append("non-ascii")
    return ",".join(notes)


def clean_hints(q: Question) -> tuple[list[Hint], list[tuple[int, str]]]:
    """Hints with empty and duplicate (normalised) ones removed; returns (kept, [(index, reason)])."""
    kept, dropped, seen = [], [], set()
    for i, h in enumerate(q.hints):
        key = " ".join(re.sub(r"[^\w\s]", " ", (h.text or "").lower()).split())
        if not key:
            dropped.append((i, "empty hint"))
        elif key in seen:
            dropped.append((i, "duplicate hint"))
        else:
            seen.add(key)
            kept.append(h)
    return kept, dropped


class _Models:
    """Loads each named LLM once per build."""

    def __init__(self, loader: Callable[[str], LLM]) -> None:
        self._loader = loader
        self._llms: dict[str, LLM] = {}
        self._base: dict[str, dict[str, Any]] = {}

    def __call__(self, name: str) -> LLM:
        if name not in self._llms:
            self._llms[name] = self._loader(name)
            # shared engines keep counting across builds: remember where this build started
            self._base[name] = self._llms[name].stats.as_dict()
        return self._llms[name]

    def stats(self) -> dict[str, dict[str, Any]]:
        """LLM counters of this build only."""
        return {n: {k: round(v - self._base[n][k], 3) for k, v in m.stats.as_dict().items()}
                for n, m in self._llms.items()}

    def identities(self) -> dict[str, str]:
        return {n: m.identity for n, m in self._llms.items()}


def build_dataset(cfg: BuildConfig, progress: bool = True, overwrite: bool = False,
                  llm_loader: Callable[[str], LLM] | None = None, log: Callable[[str], None] = print) -> BuildResult:
    """Run SPEC §3 end to end for ``cfg`` and export to ``cfg.out_dir`` (see module docstring).

    An existing export made with other parameters is never overwritten silently: it raises
    :class:`BuildConflictError` unless ``overwrite=True``.
    """
    from .. import sources
    from ..llm import load_llm

    out = cfg.out_dir
    _check_conflict(out, cfg, overwrite)
    models = _Models(llm_loader or load_llm)
    timings: dict[str, float] = {}
    t = time.perf_counter()

    src = sources.load_source(cfg.source)
    qs = list(src)[: cfg.max_questions] if cfg.max_questions is not None else list(src)
    qrows: dict[str, dict[str, Any]] = {}
    hrows: list[dict[str, Any]] = []
    alive: list[Question] = []
    leak = LeakageFilter(fuzzy_threshold=cfg.leakage_fuzzy_threshold, token_level=cfg.leakage_token_level)

    def drop(qid: str, reason: str, detail: str = "") -> None:
        qrows[qid].update(status="dropped", reason=reason, detail=detail)

    # 1. hint cleaning + leakage filter + hint count
    for q in qs:
        qrows[q.qid] = {"qid": q.qid, "question": q.question, "answer": q.answer, "n_hints": len(q.hints),
                        "answer_note": _answer_note(q.answer), "source_type": q.qtype,
                        "source_difficulty": q.difficulty, "status": "kept", "reason": "", "detail": ""}
        hints, bad = clean_hints(q)
        for i, why in bad:
            hrows.append({"qid": q.qid, "hint": i, "text": q.hints[i].text, "convergence": None,
                          "kept": False, "reason": why})
        if not normalize_answer(q.answer):
            drop(q.qid, "empty answer")
            continue
        leaks = leak.find(q.answers, [h.text for h in hints])
        if leaks:
            lk = leaks[0]
            drop(q.qid, "answer leakage", f"hint {lk.hint_index} matches {lk.answer!r} via {lk.method} "
                                          f"({lk.ngram!r}): {lk.hint}")
            continue
        if len(hints) < cfg.k_hints:
            drop(q.qid, f"fewer than {cfg.k_hints} hints", f"{len(hints)} usable hints")
            continue
        q.hints = hints
        alive.append(q)
    timings["leakage"] = time.perf_counter() - t

    # 2. candidates + convergence → top-k hints
    t = time.perf_counter()
    need_cand = [q for q in alive if not all(h.convergence is not None for h in q.hints)
                 and gold_candidate(q.candidates, q.answers) is None]
    if need_cand:
        llm = models(cfg.convergence_model)
        gen = generate_candidates(llm, [q.question for q in need_cand], [q.answers for q in need_cand],
                                  n=cfg.n_candidates, progress=progress)
        for q, c in zip(need_cand, gen, strict=True):
            q.meta["candidates_source"] = "generated" if q.candidates == [] else "source + gold"
            q.candidates = c if not q.candidates else [*q.candidates, q.answer]
    conv_bar = _bar(progress, len(alive), "convergence")
    for q in alive:
        qrows[q.qid]["convergence_from"] = "stored"
        if not all(h.convergence is not None for h in q.hints):
            gold = gold_candidate(q.candidates, q.answers)
            cands = limit_candidates(q.candidates, gold, cfg.max_candidates, cfg.seed)
            if cfg.convergence_method == "choice":
                scores = choice_hint_scores(models(cfg.convergence_model), q.question, q.hint_texts, cands,
                                            seed=cfg.seed, progress=False)
            elif cfg.convergence_method == "pairwise":
                scores = judge_hint_scores(models(cfg.convergence_model), q.question, q.hint_texts, cands,
                                           progress=False)
            else:
                raise ValueError(f"convergence_method must be 'choice' or 'pairwise', not {cfg.convergence_method!r}")
            for h, s in zip(q.hints, scores, strict=True):
                h.scores, h.convergence = s, convergence_from_scores(s, gold)
            qrows[q.qid]["convergence_from"] = f"computed ({cfg.convergence_model}, {cfg.convergence_method}, {len(cands)} candidates)"
        order = sorted(range(len(q.hints)), key=lambda i: -q.hints[i].convergence)
        top = set(order[: cfg.k_hints])
        for i, h in enumerate(q.hints):
            hrows.append({"qid": q.qid, "hint": i, "text": h.text, "convergence": h.convergence, "kept": i in top,
                          "reason": "" if i in top else f"not in top-{cfg.k_hints} convergence"})
        q.hints = [q.hints[i] for i in sorted(top)]
        if conv_bar is not None:
            conv_bar.update(1)
    if conv_bar is not None:
        conv_bar.close()
    timings["convergence"] = time.perf_counter() - t

    # 3. question type + difficulty
    t = time.perf_counter()
    for q in qs:
        qrows[q.qid]["rule_type"] = classify_question(q.question)
    difficulty = None
    refs = {q.qid: q.reference for q in qs if q.reference}
    if refs and alive:
        from .difficulty import reference_complexity

        emb = None
        if cfg.difficulty_embedder:
            from ..embeddings import load_embedder

            emb = load_embedder(cfg.difficulty_embedder)
        difficulty = reference_complexity(alive, refs, top_n=cfg.difficulty_top_n, embedder=emb)
        for _, r in difficulty.iterrows():
            qrows[r["qid"]]["ref_difficulty"] = r["difficulty"]
    for q in alive:
        q.meta["rule_type"] = qrows[q.qid]["rule_type"]
        q.qtype = q.qtype or qrows[q.qid]["rule_type"]
        if q.difficulty is None and "ref_difficulty" in qrows[q.qid]:
            q.difficulty = qrows[q.qid]["ref_difficulty"]
    timings["type_difficulty"] = time.perf_counter() - t

    # 4. parametric filter
    t = time.perf_counter()
    judge = models(cfg.judge_model) if cfg.judge_model else None
    par_models = [models(m) for m in (cfg.parametric_models or cfg.labelers)]
    par = parametric_answers(par_models, judge, alive, repeats=cfg.parametric_repeats, progress=progress)
    parametric = parametric_qids(par)
    timings["parametric"] = time.perf_counter() - t

    # 5. splits
    splits, unused = make_splits([q.qid for q in alive], parametric, cfg.n_train, cfg.n_test, cfg.seed)
    for qid in unused:
        drop(qid, "parametric, train split full")
    for s, ids in splits.items():
        for qid in ids:
            qrows[qid]["split"] = s
            qrows[qid]["parametric"] = qid in parametric

    # 6. passages
    in_split = [q for q in alive if qrows[q.qid].get("split")]
    passages: dict[str, Passage] = {}
    by_q: dict[str, list[Passage]] = {}
    for q in in_split:
        by_q[q.qid] = build_passages(q.qid, q.hint_texts)
        passages.update((p.pid, p) for p in by_q[q.qid])

    # 7. labeling (checkpointed)
    t = time.perf_counter()
    labelers = [models(m) for m in cfg.labelers]
    ckpt = LabelCheckpoint(out / "checkpoint" / f"labels-{cfg.label_key()}.jsonl")
    labels = label_questions(in_split, by_q.__getitem__, labelers, judge, ckpt, progress=progress)
    timings["labeling"] = time.perf_counter() - t

    # 8. verification + label update
    decisions = load_decisions(cfg.decisions_path)
    for q in in_split:
        upd = update_labels(q, q.hint_texts, labels[q.qid], decisions.get(q.qid, {}), leak)
        qrows[q.qid].update(pool_size=len(upd.pool), rejected_by_person=len(upd.rejected_by_person),
                            rejected_by_leakage=len(upd.rejected_by_leakage), downgraded=upd.downgraded)
        q.meta["gold_answers"] = list(q.answers)
        q.answers = upd.pool

    ds = Dataset(
        name=cfg.name, questions={q.qid: q for q in in_split}, passages=passages,
        qrels={q.qid: dict(labels[q.qid].labels) for q in in_split}, splits=splits,
        generations={pid: g for q in in_split for pid, g in labels[q.qid].generations.items()},
        meta={"source": cfg.source, "k_hints": cfg.k_hints, "fingerprint": cfg.fingerprint()})
    qdf = pd.DataFrame(list(qrows.values()))
    hdf = pd.DataFrame(hrows)
    res = BuildResult(cfg, ds, qdf, hdf, par, difficulty, labels, models.stats(), timings, out)
    from .export_build import export_build

    res.manifest = export_build(res, models.identities())
    log(f"built {cfg.name!r}: {len(in_split)} questions, {len(passages)} passages → {out}")
    return res


def limit_candidates(candidates: list[str], gold: str, cap: int | None, seed: int) -> list[str]:
    """At most ``cap`` candidates: a seeded sample of the distractors, then the gold answer (last)."""
    import random

    distractors = [c for c in candidates if c != gold]
    if cap is not None and len(distractors) > cap - 1:
        keep = set(random.Random(f"{seed}:{gold}").sample(range(len(distractors)), max(0, cap - 1)))
        distractors = [c for i, c in enumerate(distractors) if i in keep]
    return [*distractors, gold]


def _bar(progress: bool, total: int, desc: str):
    if not progress or total < 2:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="question")


def _check_conflict(out: Path, cfg: BuildConfig, overwrite: bool) -> None:
    m = out / "manifest.json"
    if not m.exists() or overwrite:
        return
    try:
        old = json.loads(m.read_text(encoding="utf-8")).get("fingerprint")
    except json.JSONDecodeError:
        old = None
    if old != cfg.fingerprint():
        raise BuildConflictError(
            f"{out} holds a build with other parameters (fingerprint {old} ≠ {cfg.fingerprint()}); "
            "choose another dataset name or pass overwrite=True")
