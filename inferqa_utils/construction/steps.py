"""The steps of a build (paper 000 §3), each one function that
:func:`~inferqa_utils.construction.build.build_dataset` calls in order.

A build in progress is a :class:`BuildRun`: its parameters, the models it has loaded, the content
hash of its source files, and the :class:`Ledger` of what happened to every source question and
hint (the rows of ``questions.csv``, ``hints.csv`` and ``leakage_agreement.csv``). Each step takes
the run and the questions it works on and returns what it made:

1. :func:`screen_questions` — hint cleaning, the leakage filter, the hint-count check (§3.1.2);
2. :func:`type_and_difficulty` — question type and reference-based difficulty (§3.1.3);
3. :func:`parametric_filter` — closed-book answers of every parametric model (§3.1.4);
4. :func:`assign_splits` — train from the parametric pool, dev/test from the rest (§3.1.4);
5. :func:`select_hints` — candidates, convergence and each question's top-k hints (§3.1.2);
6. :func:`make_passages` — subset-permutation passages (§3.2.1);
7. :func:`label_passages` — labeling, checkpointed per question (§3.2.2);
8. :func:`apply_verification` — the human decisions applied to the answer pools (§3.2.3–3.2.4);
9. :func:`assemble_result` — the dataset and the tables the export writes.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..core.errors import InferQAError
from ..ir.datamodel import LABEL_PARTIAL, Dataset, Hint, Passage, Question
from ..ir.qtype import classify_question
from ..ir.textnorm import normalize_answer
from ..llm.base import LLM
from ..llm.embeddings import load_embedder
from .build_config import BuildConfig, BuildResult
from .convergence import RULES, convergence_from_scores, generate_candidates, gold_candidate, hint_scores
from .difficulty import reference_complexity
from .labeling import LabelCheckpoint, QuestionLabels, label_questions
from .leakage import AGREEMENT_COLUMNS, Leak, LeakageFilter
from .parametric import parametric_answers, parametric_qids
from .passages import build_passages
from .splits import make_splits
from .verification import LabelUpdate, expansion_table, load_decisions, refusal_table, update_labels


# ------------------------------------------------------------------------------ the build's state
class BuildModels:
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

    def backends(self) -> dict[str, dict[str, Any]]:
        """Which backend served each model (server URL and served id included; no API key)."""
        return {n: m.describe() for n, m in self._llms.items()}


@dataclass
class Ledger:
    """What a build records about every source question and hint it looked at."""

    #: one row of ``questions.csv`` per source question (qid → row), in source order
    questions: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: one row of ``hints.csv`` per hint: convergence, kept, and why not
    hints: list[dict[str, Any]] = field(default_factory=list)
    #: a stored leakage score beside our filter, per hint (:func:`leakage_agreement_rows`)
    leakage: list[dict[str, Any]] = field(default_factory=list)

    def drop(self, qid: str, reason: str, detail: str = "") -> None:
        """Record that question ``qid`` leaves the build, and why."""
        self.questions[qid].update(status="dropped", reason=reason, detail=detail)


@dataclass
class BuildRun:
    """A build in progress: what every step reads (parameters, models, source hash) and records."""

    cfg: BuildConfig
    models: BuildModels
    #: content hash of the source files, computed once per build
    source_sha256: str
    progress: bool = True
    log: Callable[[str], None] = print
    ledger: Ledger = field(default_factory=Ledger)
    #: seconds per timed step, in step order
    timings: dict[str, float] = field(default_factory=dict)
    #: the build's LLM counters after each timed step (cumulative; :func:`step_costs` takes differences)
    step_llm: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    leak: LeakageFilter = field(init=False)

    def __post_init__(self) -> None:
        self.leak = LeakageFilter(fuzzy_threshold=self.cfg.leakage_fuzzy_threshold,
                                  token_level=self.cfg.leakage_token_level)

    @contextmanager
    def timed(self, step: str, start: float | None = None) -> Iterator[None]:
        """Record the seconds of ``step`` (from ``start`` when given, else from now) and the LLM
        counters after it."""
        t = time.perf_counter() if start is None else start
        yield
        self.timings[step] = time.perf_counter() - t
        self.step_llm[step] = self.models.stats()


@dataclass
class SplitPlan:
    """The splits of a build (:func:`assign_splits`) and which of their questions get LLM labels."""

    #: split → question ids
    splits: dict[str, list[str]]
    #: the splits whose own passages get LLM labels
    label_splits: list[str]
    #: the ids of the questions in those splits
    labelled_ids: set[str]
    #: the built questions that are in a split, in source order
    questions: list[Question]

    @property
    def to_label(self) -> list[Question]:
        """The questions whose passages get LLM labels, in source order."""
        return [q for q in self.questions if q.qid in self.labelled_ids]


# ------------------------------------------------------------------------ 1. cleaning and leakage
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


def leakage_agreement_rows(q: Question, hints: list[Hint], leak: LeakageFilter, threshold: float,
                           leaks: list[Leak] | None = None) -> list[dict[str, Any]]:
    """Per hint of ``hints`` (``q``'s cleaned hints) with a stored ``answer_leakage`` score: that
    score, whether it reaches ``threshold``, and whether our filter (paper 000 §3.1.2) finds a leak
    in that hint alone (:meth:`LeakageFilter.per_hint`; ``leaks``, the question's :meth:`find` over
    ``hints``, is reused). ``hint`` is the hint's index in ``q.hints`` (the source order).
    """
    scored = [i for i, h in enumerate(hints) if h.meta.get("answer_leakage") is not None]
    if not scored:
        return []
    ours = leak.per_hint(q.answers, [h.text for h in hints], leaks)
    index = {id(h): i for i, h in enumerate(q.hints)}
    rows = []
    for i in scored:
        h, lk = hints[i], ours.get(i)
        score = float(h.meta["answer_leakage"])
        stored, our = score >= threshold, lk is not None
        rows.append(
            {
                "qid": q.qid,
                "hint": index.get(id(h), i),
                "text": h.text,
                "stored_leakage": score,
                "stored_leaks": stored,
                "our_filter_leaks": our,
                "our_match": f"{lk.method}: {lk.ngram!r} ~ {lk.answer!r}" if lk else "",
                "agree": stored == our,
            }
        )
    return rows


def leakage_agreement_table(questions: Iterable[Question], leak: LeakageFilter | None = None,
                            threshold: float = 0.5) -> pd.DataFrame:
    """:func:`leakage_agreement_rows` over ``questions`` as :func:`screen_questions` does it
    (cleaned hints; questions with an empty answer skipped), without building anything."""
    leak = leak or LeakageFilter()
    rows: list[dict[str, Any]] = []
    for q in questions:
        if normalize_answer(q.answer):
            rows += leakage_agreement_rows(q, clean_hints(q)[0], leak, threshold)
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


def select_questions(cfg: BuildConfig, every: list[Question]) -> list[Question]:
    """The source questions to build: ``cfg.questions`` when given (an :class:`InferQAError` names
    ids the source lacks), else the first ``cfg.max_questions`` (all when ``None``)."""
    qs = every[: cfg.max_questions] if cfg.max_questions is not None else every
    if cfg.questions is not None:
        missing = set(cfg.questions) - {q.qid for q in every}
        if missing:
            raise InferQAError(f"questions {sorted(missing)[:5]} are not in the source {cfg.source!r}")
        wanted = set(cfg.questions)
        qs = [q for q in every if q.qid in wanted]
    return qs


def screen_questions(run: BuildRun, questions: list[Question],
                     built_ids: set[str]) -> tuple[list[Question], list[Question]]:
    """Step 1 (paper 000 §3.1.2): per question, record its row, remove empty and duplicate hints,
    drop it for an empty answer, answer leakage (a stored leakage score is recorded beside our
    filter) or fewer than k hints left. Returns the surviving built questions (``built_ids``) and
    the surviving others, whose passages join the corpus as distractors; their hints are the cleaned ones."""
    cfg, ledger = run.cfg, run.ledger
    alive: list[Question] = []
    distractors: list[Question] = []
    for q in questions:
        built = q.qid in built_ids
        ledger.questions[q.qid] = {
            "qid": q.qid, "question": q.question, "answer": q.answer, "n_hints": len(q.hints),
            "answer_note": _answer_note(q.answer), "source_type": q.qtype, "source_difficulty": q.difficulty,
            "status": "kept" if built else "corpus only",
            "reason": "" if built else f"beyond the first {cfg.max_questions} questions", "detail": ""}
        hints, bad = clean_hints(q)
        for i, why in bad:
            ledger.hints.append({"qid": q.qid, "hint": i, "text": q.hints[i].text, "convergence": None,
                                 "kept": False, "reason": why})
        if not normalize_answer(q.answer):
            ledger.drop(q.qid, "empty answer")
            continue
        leaks = run.leak.find(q.answers, [h.text for h in hints])
        ledger.leakage += leakage_agreement_rows(q, hints, run.leak, cfg.stored_leakage_threshold, leaks)
        if leaks:
            lk = leaks[0]
            ledger.drop(
                q.qid,
                "answer leakage",
                f"hint {lk.hint_index} matches {lk.answer!r} via {lk.method} ({lk.ngram!r}): {lk.hint}",
            )
            continue
        if len(hints) < cfg.k_hints:
            ledger.drop(q.qid, f"fewer than {cfg.k_hints} hints", f"{len(hints)} usable hints")
            continue
        q.hints = hints
        (alive if built else distractors).append(q)
    return alive, distractors


# ------------------------------------------------------------------- 2. question type, difficulty
def type_and_difficulty(run: BuildRun, chosen: list[Question], alive: list[Question],
                        every: list[Question]) -> tuple[pd.DataFrame | None, dict[str, dict[str, Any]]]:
    """Step 2 (paper 000 §3.1.3): the rule-based TREC type of every chosen question and the
    reference-based difficulty of the surviving ones (``alive``; BM25 over the references of
    ``every`` source question, weighted by the embedder's similarity when one is set); each
    surviving question gets the rule type where the source has none, and the reference difficulty
    where it has no difficulty. Returns the difficulty table (``None`` without references) and
    which backend encoded for each embedding model (the manifest's ``embed_backends``)."""
    cfg, rows = run.cfg, run.ledger.questions
    for q in chosen:
        rows[q.qid]["rule_type"] = classify_question(q.question)
    difficulty = None
    embed_backends: dict[str, dict[str, Any]] = {}
    refs = {f"{q.qid}#{i}": text for q in every for i, text in enumerate(q.references)}
    if refs and alive:
        emb = None
        if cfg.difficulty_embedder:
            emb = load_embedder(cfg.difficulty_embedder)
            embed_backends[cfg.difficulty_embedder] = emb.describe()
        difficulty = reference_complexity(alive, refs, top_n=cfg.difficulty_top_n, embedder=emb)
        for _, r in difficulty.iterrows():
            rows[r["qid"]]["ref_difficulty"] = r["difficulty"]
    for q in alive:
        q.meta["rule_type"] = rows[q.qid]["rule_type"]
        q.qtype = q.qtype or rows[q.qid]["rule_type"]
        if q.difficulty is None and "ref_difficulty" in rows[q.qid]:
            q.difficulty = rows[q.qid]["ref_difficulty"]
    return difficulty, embed_backends


# ------------------------------------------------------------------------ 3–4. parametric, splits
def parametric_filter(run: BuildRun, alive: list[Question]) -> tuple[pd.DataFrame, set[str]]:
    """Step 3 (paper 000 §3.1.4): every closed-book model (``parametric_models``, else the
    labelers) answers each surviving question, judged in one batch behind the answer guards.
    Returns one row per answer and the ids of the questions some model answered."""
    cfg = run.cfg
    judge = run.models(cfg.judge_model) if cfg.judge_model else None
    par_models = [run.models(m) for m in (cfg.parametric_models or cfg.labelers)]
    par = parametric_answers(par_models, judge, alive, repeats=cfg.parametric_repeats, progress=run.progress,
                             guards=cfg.guards)
    return par, parametric_qids(par)


def assign_splits(run: BuildRun, alive: list[Question], parametric: set[str]) -> SplitPlan:
    """Step 4 (paper 000 §3.1.4): the seeded split draw — train from the parametric pool, dev and
    test from the rest — or ``fixed_splits`` as given; a question left out of every split is
    dropped. Each question's row records its split and whether it is parametric."""
    cfg, ledger = run.cfg, run.ledger
    if cfg.fixed_splits is not None:
        splits = {sp: [q.qid for q in alive if cfg.fixed_splits.get(q.qid) == sp]
                  for sp in dict.fromkeys(cfg.fixed_splits.values())}
        unused = [q.qid for q in alive if q.qid not in cfg.fixed_splits]
    else:
        splits, unused = make_splits([q.qid for q in alive], parametric, cfg.n_train, cfg.n_test, cfg.seed)
    for qid in unused:
        ledger.drop(qid, "parametric, train split full" if cfg.fixed_splits is None else "in no given split")
    for sp, ids in splits.items():
        for qid in ids:
            ledger.questions[qid]["split"] = sp
            ledger.questions[qid]["parametric"] = qid in parametric
    label_splits = (
        list(splits) if cfg.label_splits is None else [sp for sp in cfg.label_splits if sp in splits]
    )
    labelled_ids = {qid for sp in label_splits for qid in splits[sp]}
    in_split = [q for q in alive if ledger.questions[q.qid].get("split")]
    return SplitPlan(splits, label_splits, labelled_ids, in_split)


# -------------------------------------------------------------------- 5. convergence, top-k hints
def _scored(q: Question) -> bool:
    return all(h.convergence is not None for h in q.hints)


def _convergence_scope(cfg: BuildConfig, plan: SplitPlan) -> list[Question]:
    """The questions whose convergence the LLM may judge: the labelled ones, or all in a split."""
    if cfg.convergence_scope not in ("labelled", "all"):
        raise ValueError(f"convergence_scope must be 'labelled' or 'all', not {cfg.convergence_scope!r}")
    if cfg.convergence_scope == "all":
        return plan.questions
    return [q for q in plan.questions if q.qid in plan.labelled_ids]


def _complete_candidates(run: BuildRun, questions: list[Question]) -> None:
    """Give ``questions`` (whose candidates lack the gold answer) candidates to judge hints against:
    ``n_candidates`` generated ones when the source has none, else the source's plus the gold answer."""
    if not questions:
        return
    cfg = run.cfg
    llm = run.models(cfg.convergence_model)
    gen = generate_candidates(llm, [q.question for q in questions], [q.answers for q in questions],
                              n=cfg.n_candidates, progress=run.progress)
    for q, c in zip(questions, gen, strict=True):
        q.meta["candidates_source"] = "generated" if q.candidates == [] else "source + gold"
        q.candidates = c if not q.candidates else [*q.candidates, q.answer]


def _rescore_stored_votes(questions: list[Question], rule: str) -> None:
    """Stored convergence recomputed from the stored per-candidate votes under ``rule`` (stored
    values are HICOS)."""
    for q in questions:
        gold = gold_candidate(q.candidates, q.answers)
        for h in q.hints:
            if h.scores and gold in h.scores and h.convergence is not None:
                h.convergence = convergence_from_scores(h.scores, gold, rule)


def limit_candidates(candidates: list[str], gold: str, cap: int | None, seed: int) -> list[str]:
    """At most ``cap`` candidates: a seeded sample of the distractors, then the gold answer (last)."""
    import random

    distractors = [c for c in candidates if c != gold]
    if cap is not None and len(distractors) > cap - 1:
        keep = set(random.Random(f"{seed}:{gold}").sample(range(len(distractors)), max(0, cap - 1)))
        distractors = [c for i, c in enumerate(distractors) if i in keep]
    return [*distractors, gold]


def _judge_convergence(run: BuildRun, q: Question) -> str:
    """Each hint of ``q`` scored against its candidates by the convergence model; returns where the
    convergence came from (the ``convergence_from`` column)."""
    cfg = run.cfg
    gold = gold_candidate(q.candidates, q.answers)
    cands = limit_candidates(q.candidates, gold, cfg.max_candidates, cfg.seed)
    scores = hint_scores(cfg.convergence_method, run.models(cfg.convergence_model), q.question, q.hint_texts,
                         cands, seed=cfg.seed, progress=False)
    for h, sc in zip(q.hints, scores, strict=True):
        h.scores, h.convergence = sc, convergence_from_scores(sc, gold, cfg.convergence_rule)
    return f"computed ({cfg.convergence_model}, {cfg.convergence_method}, {len(cands)} candidates)"


def _keep_top_hints(q: Question, k: int, ledger: Ledger) -> None:
    """Keep ``q``'s k hints of highest convergence (the first k, in source order, when some hint
    has none), in source order; one ``hints.csv`` row per hint."""
    if _scored(q):
        order = sorted(range(len(q.hints)), key=lambda i: -q.hints[i].convergence)
        why = f"not in top-{k} convergence"
    else:
        order = list(range(len(q.hints)))
        why = f"not among the first {k} hints (source order)"
    top = set(order[:k])
    for i, h in enumerate(q.hints):
        ledger.hints.append(
            {
                "qid": q.qid,
                "hint": i,
                "text": h.text,
                "convergence": h.convergence,
                "kept": i in top,
                "reason": "" if i in top else why,
            }
        )
    q.hints = [q.hints[i] for i in sorted(top)]


def select_hints(run: BuildRun, plan: SplitPlan, distractors: list[Question]) -> None:
    """Step 5 (paper 000 §3.1.2): convergence of every hint of the split and distractor questions,
    then each one's top-k hints. The LLM judges convergence where it decides something (the
    labelled questions, or all with ``convergence_scope="all"``) and a hint lacks a score; the
    others keep stored scores (re-read under ``convergence_rule``) or the source's hint order.
    ``convergence_stored=False`` ignores every stored score."""
    cfg = run.cfg
    questions = [*plan.questions, *distractors]
    if not cfg.convergence_stored:  # ignore the source's scores: recompute in scope, source order elsewhere
        for q in questions:
            for h in q.hints:
                h.convergence = None
    need_llm = [q for q in _convergence_scope(cfg, plan) if not _scored(q)]
    _complete_candidates(run, [q for q in need_llm if gold_candidate(q.candidates, q.answers) is None])
    if cfg.convergence_rule not in RULES:
        raise ValueError(f"convergence_rule must be one of {', '.join(RULES)}, not {cfg.convergence_rule!r}")
    if cfg.convergence_rule != "hicos":  # stored votes under another rule (stored values are HICOS)
        _rescore_stored_votes(questions, cfg.convergence_rule)
    llm_ids = {q.qid for q in need_llm}
    bar = _bar(run.progress, len(need_llm), "convergence")
    for q in questions:
        row = run.ledger.questions[q.qid]
        if q.qid in llm_ids:
            row["convergence_from"] = _judge_convergence(run, q)
            if bar is not None:
                bar.update(1)
        else:
            row["convergence_from"] = "stored" if _scored(q) else "none: source order"
        _keep_top_hints(q, cfg.k_hints, run.ledger)
    if bar is not None:
        bar.close()


def _bar(progress: bool, total: int, desc: str) -> Any:
    """A progress bar over ``total`` questions (``None`` without progress or for fewer than 2)."""
    if not progress or total < 2:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="question")


# ------------------------------------------------------------------- 6–8. passages, labels, checks
def make_passages(questions: list[Question]) -> tuple[dict[str, Passage], dict[str, list[Passage]]]:
    """Step 6 (paper 000 §3.2.1): every subset-permutation of each question's kept hints — the
    built questions' and the distractors' (label 0 for every built question). Returns the corpus
    (pid → passage) and each question's own passages."""
    passages: dict[str, Passage] = {}
    by_q: dict[str, list[Passage]] = {}
    for q in questions:
        by_q[q.qid] = build_passages(q.qid, q.hint_texts)
        passages.update((p.pid, p) for p in by_q[q.qid])
    return passages, by_q


def label_passages(
    run: BuildRun, plan: SplitPlan, by_q: dict[str, list[Passage]]
) -> dict[str, QuestionLabels]:
    """Step 7 (paper 000 §3.2.2): the labelers read every own passage of the questions an analysis
    reads (:attr:`SplitPlan.to_label`), the judge decides behind the answer guards; each finished
    question goes to the label checkpoint, and a question already there is read from it."""
    cfg = run.cfg
    judge = run.models(cfg.judge_model) if cfg.judge_model else None
    labelers = [run.models(m) for m in cfg.labelers]
    ckpt = LabelCheckpoint(cfg.checkpoint_file(run.source_sha256))
    return label_questions(plan.to_label, by_q.__getitem__, labelers, judge, ckpt, progress=run.progress,
                           guards=cfg.guards, log=run.log)


def apply_verification(run: BuildRun, questions: list[Question], distractors: list[Question],
                       labels: dict[str, QuestionLabels]) -> dict[str, LabelUpdate]:
    """Step 8 (paper 000 §3.2.3–3.2.4): each labelled question's answer pool after the person's
    decisions and the leakage filter (labels 2 → 1 where no accepted answer remains); its gold
    answers are kept in ``meta["gold_answers"]`` (the distractors' too). Returns the update per question."""
    decisions = load_decisions(run.cfg.decisions_path)
    rows = run.ledger.questions
    updates = {}
    for q in questions:
        if q.qid not in labels:
            rows[q.qid]["labelled"] = False
            continue
        upd = update_labels(q, q.hint_texts, labels[q.qid], decisions.get(q.qid, {}), run.leak)
        updates[q.qid] = upd
        rows[q.qid].update(
            labelled=True,
            pool_size=len(upd.pool),
            rejected_by_person=len(upd.rejected_by_person),
            rejected_by_leakage=len(upd.rejected_by_leakage),
            downgraded=upd.downgraded,
        )
        q.meta["gold_answers"] = list(q.answers)
        q.answers = upd.pool
    for q in distractors:
        q.meta["gold_answers"] = list(q.answers)
    return updates


# ------------------------------------------------------------------------------- 9. the result
def assemble_result(run: BuildRun, plan: SplitPlan, distractors: list[Question], passages: dict[str, Passage],
                    by_q: dict[str, list[Passage]], labels: dict[str, QuestionLabels],
                    updates: dict[str, LabelUpdate], par: pd.DataFrame,
                    difficulty: pd.DataFrame | None) -> BuildResult:
    """The built dataset (labelled questions' qrels from their labels, the others' own passages
    label 1) and the :class:`BuildResult` whose tables the export writes (§3.2.4, Table 1)."""
    cfg, in_split = run.cfg, plan.questions
    qrels = {
        q.qid: (
            dict(labels[q.qid].labels) if q.qid in labels else {p.pid: LABEL_PARTIAL for p in by_q[q.qid]}
        )
        for q in in_split
    }
    ds = Dataset(
        name=cfg.name,
        questions={q.qid: q for q in in_split},
        passages=passages, qrels=qrels, splits=plan.splits,
        generations={
            pid: g for q in in_split if q.qid in labels for pid, g in labels[q.qid].generations.items()
        },
        meta={
            "source": cfg.source,
            "k_hints": cfg.k_hints,
            "fingerprint": cfg.fingerprint(run.source_sha256),
            "source_sha256": run.source_sha256,
            "labelled_splits": plan.label_splits,
            "distractor_questions": len(distractors),
            "distractor_hints": {q.qid: q.hint_texts for q in distractors},
        },
    )
    qdf = pd.DataFrame(list(run.ledger.questions.values()))
    hdf = pd.DataFrame(run.ledger.hints)
    split_of = {qid: sp for sp, ids in plan.splits.items() for qid in ids}
    return BuildResult(
        cfg, ds, qdf, hdf, par, difficulty, labels, run.models.stats(), run.timings, cfg.out_dir, distractors,
        step_costs=step_costs(run.timings, run.step_llm),
        expansions=expansion_table(ds.questions, labels, updates, split_of),
        refusals=refusal_table(labels, split_of),
        leakage_agreement=pd.DataFrame(run.ledger.leakage, columns=AGREEMENT_COLUMNS),
    )


def step_costs(
    timings: dict[str, float], cumulative: dict[str, dict[str, dict[str, Any]]]
) -> dict[str, dict[str, Any]]:
    """``{step: {"seconds": s, "llm": {model: {calls, cache_hits, prompt_tokens, prompt_tokens_total,
    generated_tokens, seconds}}}}`` from the LLM counters recorded after each step (cumulative over
    the build, in step order): each step's share is the difference to the previous step."""
    keys = (
        "model_calls", "cache_hits", "prompt_tokens", "prompt_tokens_total", "generated_tokens", "seconds",
    )
    out: dict[str, dict[str, Any]] = {}
    prev: dict[str, dict[str, Any]] = {}
    for step, now in cumulative.items():
        llm = {}
        for m, c in now.items():
            d = {k: round(c.get(k, 0) - prev.get(m, {}).get(k, 0), 3) for k in keys}
            if any(d.values()):
                llm[m] = d
        out[step] = {"seconds": round(timings.get(step, 0.0), 2), "llm": llm}
        prev = now
    return out
