"""The dataset-construction pipeline (paper 000 §3 steps 1–9) on any loaded source.

:func:`build_dataset` runs, in order: hint cleaning, the leakage filter, the hint-count check,
question type and difficulty, the parametric filter, splits, candidates and convergence (top-k
hints), subset-permutation passages, labeling (checkpointed per question), the verification
update, and the export (QUIT-shaped splits, ``corpus.jsonl``, TREC qrels, tables, manifest) to
``build/datasets/<name>/`` (replacing that folder atomically). Its parameters are a
:class:`~.build_config.BuildConfig`. The fingerprint of a build and the name of its label
checkpoint hash the parameters and the content of the source files; each checkpoint line, the
labeling inputs of its question. Every dropped question is recorded with its reason; nothing crashes
on a bad record. LLM replies are cached, so a re-run with unchanged inputs makes no model call.

Where the source stores a per-hint answer-leakage score (WikiHint), the build reports it beside
the decision of our own filter (paper 000 §3.1.2), which alone decides what is dropped:
:attr:`~.build_config.BuildResult.leakage_agreement`, ``leakage_agreement.csv`` and the manifest's
``leakage_disagreements`` counts.

As in QUIT, the corpus holds the passages of *every* usable source question: the first
``max_questions`` are built (filtered, split, possibly labelled), the rest are distractors whose
passages are label 0 for every built question. LLM time goes only where an analysis reads the
result: labels for the ``label_splits`` (the others' own passages are label 1, "own hints,
answerability not labelled"), LLM-judged convergence for those questions (the others use stored
scores or the source's hint order).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from .. import sources
from ..atomic import recover_dir
from ..datamodel import LABEL_PARTIAL, Dataset, Hint, Passage, Question
from ..embeddings import load_embedder
from ..errors import InferQAError
from ..llm import load_llm
from ..llm.base import LLM
from ..qtype import classify_question
from ..textnorm import normalize_answer
from .build_config import BuildConfig, BuildResult, matching_profiles, parameter_differences
from .convergence import RULES, convergence_from_scores, generate_candidates, gold_candidate, hint_scores
from .difficulty import reference_complexity
from .export_build import BuildConflictError, export_build, kept_entries, refuse_foreign_files
from .labeling import LabelCheckpoint, label_questions
from .leakage import AGREEMENT_COLUMNS, Leak, LeakageFilter
from .parametric import parametric_answers, parametric_qids
from .passages import build_passages
from .splits import make_splits
from .verification import expansion_table, load_decisions, refusal_table, update_labels


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
        rows.append({"qid": q.qid, "hint": index.get(id(h), i), "text": h.text, "stored_leakage": score,
                     "stored_leaks": stored, "our_filter_leaks": our,
                     "our_match": f"{lk.method}: {lk.ngram!r} ~ {lk.answer!r}" if lk else "", "agree": stored == our})
    return rows


def leakage_agreement_table(questions: Iterable[Question], leak: LeakageFilter | None = None,
                            threshold: float = 0.5) -> pd.DataFrame:
    """:func:`leakage_agreement_rows` over ``questions`` as step 1 of :func:`build_dataset` does it
    (cleaned hints; questions with an empty answer skipped), without building anything."""
    leak = leak or LeakageFilter()
    rows: list[dict[str, Any]] = []
    for q in questions:
        if normalize_answer(q.answer):
            rows += leakage_agreement_rows(q, clean_hints(q)[0], leak, threshold)
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


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

    def backends(self) -> dict[str, dict[str, Any]]:
        """Which backend served each model (server URL and served id included; no API key)."""
        return {n: m.describe() for n, m in self._llms.items()}


def build_dataset(cfg: BuildConfig, progress: bool = True, overwrite: bool = False,
                  llm_loader: Callable[[str], LLM] | None = None, log: Callable[[str], None] = print) -> BuildResult:
    """Run paper 000 §3 end to end for ``cfg`` and export to ``cfg.out_dir`` (see module docstring).

    An existing export made with other parameters or other source file contents is never
    overwritten silently: it raises :class:`BuildConflictError` unless ``overwrite=True`` (a folder
    holding other files than a build is never replaced). The export replaces ``cfg.out_dir`` as a
    whole and atomically, its labeling ``checkpoint/`` kept (:mod:`.export_build`).
    """

    out = cfg.out_dir
    recover_dir(out, kept_entries(cfg))  # a swap killed half-way: the old build (and its checkpoint) back
    refuse_foreign_files(out, cfg)
    t = time.perf_counter()
    src = sources.load_source(cfg.source)
    source_sha = cfg.source_sha256()  # once per build, after loading (a hub source's files are now local)
    _check_conflict(out, cfg, overwrite, log, source_sha)
    models = _Models(llm_loader or load_llm)
    timings: dict[str, float] = {}
    step_llm: dict[str, dict[str, dict[str, Any]]] = {}  # cumulative LLM counters after each step

    every = list(src)
    qs = every[: cfg.max_questions] if cfg.max_questions is not None else every
    if cfg.questions is not None:
        missing = set(cfg.questions) - {q.qid for q in every}
        if missing:
            raise InferQAError(f"questions {sorted(missing)[:5]} are not in the source {cfg.source!r}")
        wanted = set(cfg.questions)
        qs = [q for q in every if q.qid in wanted]
    built_ids = {q.qid for q in qs}
    qrows: dict[str, dict[str, Any]] = {}
    hrows: list[dict[str, Any]] = []
    arows: list[dict[str, Any]] = []  # stored leakage score beside our filter, per hint
    alive: list[Question] = []
    distractors: list[Question] = []  # source questions beyond max_questions: passages in the corpus only
    leak = LeakageFilter(fuzzy_threshold=cfg.leakage_fuzzy_threshold, token_level=cfg.leakage_token_level)

    def drop(qid: str, reason: str, detail: str = "") -> None:
        qrows[qid].update(status="dropped", reason=reason, detail=detail)

    # 1. hint cleaning + leakage filter (a stored leakage score reported beside it) + hint count
    #    (every source question: distractors too)
    for q in every if cfg.corpus_all_source else qs:
        built = q.qid in built_ids
        qrows[q.qid] = {"qid": q.qid, "question": q.question, "answer": q.answer, "n_hints": len(q.hints),
                        "answer_note": _answer_note(q.answer), "source_type": q.qtype,
                        "source_difficulty": q.difficulty, "status": "kept" if built else "corpus only",
                        "reason": "" if built else f"beyond the first {cfg.max_questions} questions", "detail": ""}
        hints, bad = clean_hints(q)
        for i, why in bad:
            hrows.append({"qid": q.qid, "hint": i, "text": q.hints[i].text, "convergence": None,
                          "kept": False, "reason": why})
        if not normalize_answer(q.answer):
            drop(q.qid, "empty answer")
            continue
        leaks = leak.find(q.answers, [h.text for h in hints])
        arows += leakage_agreement_rows(q, hints, leak, cfg.stored_leakage_threshold, leaks)
        if leaks:
            lk = leaks[0]
            drop(q.qid, "answer leakage", f"hint {lk.hint_index} matches {lk.answer!r} via {lk.method} "
                                          f"({lk.ngram!r}): {lk.hint}")
            continue
        if len(hints) < cfg.k_hints:
            drop(q.qid, f"fewer than {cfg.k_hints} hints", f"{len(hints)} usable hints")
            continue
        q.hints = hints
        (alive if built else distractors).append(q)
    timings["leakage"] = time.perf_counter() - t
    step_llm["leakage"] = models.stats()

    # 2. question type + difficulty
    t = time.perf_counter()
    for q in qs:
        qrows[q.qid]["rule_type"] = classify_question(q.question)
    difficulty = None
    embed_backends: dict[str, dict[str, Any]] = {}  # the manifest's "embed_backends"
    refs = {f"{q.qid}#{i}": text for q in every for i, text in enumerate(q.references)}
    if refs and alive:
        emb = None
        if cfg.difficulty_embedder:
            emb = load_embedder(cfg.difficulty_embedder)
            embed_backends[cfg.difficulty_embedder] = emb.describe()
        difficulty = reference_complexity(alive, refs, top_n=cfg.difficulty_top_n, embedder=emb)
        for _, r in difficulty.iterrows():
            qrows[r["qid"]]["ref_difficulty"] = r["difficulty"]
    for q in alive:
        q.meta["rule_type"] = qrows[q.qid]["rule_type"]
        q.qtype = q.qtype or qrows[q.qid]["rule_type"]
        if q.difficulty is None and "ref_difficulty" in qrows[q.qid]:
            q.difficulty = qrows[q.qid]["ref_difficulty"]
    timings["type_difficulty"] = time.perf_counter() - t
    step_llm["type_difficulty"] = models.stats()

    # 3. parametric filter (every closed-book model, judged in one batch)
    t = time.perf_counter()
    judge = models(cfg.judge_model) if cfg.judge_model else None
    par_models = [models(m) for m in (cfg.parametric_models or cfg.labelers)]
    par = parametric_answers(par_models, judge, alive, repeats=cfg.parametric_repeats, progress=progress,
                             guards=cfg.guards)
    parametric = parametric_qids(par)
    timings["parametric"] = time.perf_counter() - t
    step_llm["parametric"] = models.stats()

    # 4. splits
    if cfg.fixed_splits is not None:
        splits = {sp: [q.qid for q in alive if cfg.fixed_splits.get(q.qid) == sp]
                  for sp in dict.fromkeys(cfg.fixed_splits.values())}
        unused = [q.qid for q in alive if q.qid not in cfg.fixed_splits]
    else:
        splits, unused = make_splits([q.qid for q in alive], parametric, cfg.n_train, cfg.n_test, cfg.seed)
    for qid in unused:
        drop(qid, "parametric, train split full" if cfg.fixed_splits is None else "in no given split")
    for sp, ids in splits.items():
        for qid in ids:
            qrows[qid]["split"] = sp
            qrows[qid]["parametric"] = qid in parametric
    label_splits = list(splits) if cfg.label_splits is None else [sp for sp in cfg.label_splits if sp in splits]
    labelled_ids = {qid for sp in label_splits for qid in splits[sp]}
    in_split = [q for q in alive if qrows[q.qid].get("split")]

    # 5. candidates + convergence → top-k hints: LLM-judged where it decides something (the labelled
    #    questions, or every question with convergence_scope="all"), else stored scores or source order
    t = time.perf_counter()
    if not cfg.convergence_stored:  # ignore the source's scores: recompute in scope, source order elsewhere
        for q in [*in_split, *distractors]:
            for h in q.hints:
                h.convergence = None
    if cfg.convergence_scope not in ("labelled", "all"):
        raise ValueError(f"convergence_scope must be 'labelled' or 'all', not {cfg.convergence_scope!r}")
    scope = in_split if cfg.convergence_scope == "all" else [q for q in in_split if q.qid in labelled_ids]
    need_llm = [q for q in scope if not all(h.convergence is not None for h in q.hints)]
    need_cand = [q for q in need_llm if gold_candidate(q.candidates, q.answers) is None]
    if need_cand:
        llm = models(cfg.convergence_model)
        gen = generate_candidates(llm, [q.question for q in need_cand], [q.answers for q in need_cand],
                                  n=cfg.n_candidates, progress=progress)
        for q, c in zip(need_cand, gen, strict=True):
            q.meta["candidates_source"] = "generated" if q.candidates == [] else "source + gold"
            q.candidates = c if not q.candidates else [*q.candidates, q.answer]
    if cfg.convergence_rule not in RULES:
        raise ValueError(f"convergence_rule must be one of {', '.join(RULES)}, not {cfg.convergence_rule!r}")
    if cfg.convergence_rule != "hicos":  # stored votes under another rule (stored values are HICOS)
        for q in [*in_split, *distractors]:
            gold = gold_candidate(q.candidates, q.answers)
            for h in q.hints:
                if h.scores and gold in h.scores and h.convergence is not None:
                    h.convergence = convergence_from_scores(h.scores, gold, cfg.convergence_rule)
    llm_ids = {q.qid for q in need_llm}
    conv_bar = _bar(progress, len(need_llm), "convergence")
    for q in [*in_split, *distractors]:
        row = qrows[q.qid]
        if q.qid in llm_ids:
            gold = gold_candidate(q.candidates, q.answers)
            cands = limit_candidates(q.candidates, gold, cfg.max_candidates, cfg.seed)
            scores = hint_scores(cfg.convergence_method, models(cfg.convergence_model), q.question, q.hint_texts,
                                 cands, seed=cfg.seed, progress=False)
            for h, sc in zip(q.hints, scores, strict=True):
                h.scores, h.convergence = sc, convergence_from_scores(sc, gold, cfg.convergence_rule)
            row["convergence_from"] = f"computed ({cfg.convergence_model}, {cfg.convergence_method}, {len(cands)} candidates)"
            if conv_bar is not None:
                conv_bar.update(1)
        elif all(h.convergence is not None for h in q.hints):
            row["convergence_from"] = "stored"
        else:
            row["convergence_from"] = "none: source order"
        if all(h.convergence is not None for h in q.hints):
            order = sorted(range(len(q.hints)), key=lambda i: -q.hints[i].convergence)
            why = f"not in top-{cfg.k_hints} convergence"
        else:
            order = list(range(len(q.hints)))
            why = f"not among the first {cfg.k_hints} hints (source order)"
        top = set(order[: cfg.k_hints])
        for i, h in enumerate(q.hints):
            hrows.append({"qid": q.qid, "hint": i, "text": h.text, "convergence": h.convergence, "kept": i in top,
                          "reason": "" if i in top else why})
        q.hints = [q.hints[i] for i in sorted(top)]
    if conv_bar is not None:
        conv_bar.close()
    timings["convergence"] = time.perf_counter() - t
    step_llm["convergence"] = models.stats()

    # 6. passages: the built questions' and every distractor question's (label 0 for every built question)
    passages: dict[str, Passage] = {}
    by_q: dict[str, list[Passage]] = {}
    for q in [*in_split, *distractors]:
        by_q[q.qid] = build_passages(q.qid, q.hint_texts)
        passages.update((p.pid, p) for p in by_q[q.qid])

    # 7. labeling (checkpointed) of the questions an analysis reads; the others' own passages are 1
    t = time.perf_counter()
    labelers = [models(m) for m in cfg.labelers]
    ckpt = LabelCheckpoint(cfg.checkpoint_file(source_sha))
    to_label = [q for q in in_split if q.qid in labelled_ids]
    labels = label_questions(to_label, by_q.__getitem__, labelers, judge, ckpt, progress=progress, guards=cfg.guards,
                             log=log)
    timings["labeling"] = time.perf_counter() - t
    step_llm["labeling"] = models.stats()

    # 8. verification + label update
    decisions = load_decisions(cfg.decisions_path)
    updates = {}
    for q in in_split:
        if q.qid not in labels:
            qrows[q.qid]["labelled"] = False
            continue
        upd = update_labels(q, q.hint_texts, labels[q.qid], decisions.get(q.qid, {}), leak)
        updates[q.qid] = upd
        qrows[q.qid].update(labelled=True, pool_size=len(upd.pool), rejected_by_person=len(upd.rejected_by_person),
                            rejected_by_leakage=len(upd.rejected_by_leakage), downgraded=upd.downgraded)
        q.meta["gold_answers"] = list(q.answers)
        q.answers = upd.pool
    for q in distractors:
        q.meta["gold_answers"] = list(q.answers)

    qrels = {q.qid: (dict(labels[q.qid].labels) if q.qid in labels else {p.pid: LABEL_PARTIAL for p in by_q[q.qid]})
             for q in in_split}
    ds = Dataset(
        name=cfg.name, questions={q.qid: q for q in in_split}, passages=passages, qrels=qrels, splits=splits,
        generations={pid: g for q in in_split if q.qid in labels for pid, g in labels[q.qid].generations.items()},
        meta={"source": cfg.source, "k_hints": cfg.k_hints, "fingerprint": cfg.fingerprint(source_sha),
              "source_sha256": source_sha,
              "labelled_splits": label_splits, "distractor_questions": len(distractors),
              "distractor_hints": {q.qid: q.hint_texts for q in distractors}})
    qdf = pd.DataFrame(list(qrows.values()))
    hdf = pd.DataFrame(hrows)
    split_of = {qid: sp for sp, ids in splits.items() for qid in ids}
    res = BuildResult(cfg, ds, qdf, hdf, par, difficulty, labels, models.stats(), timings, out, distractors,
                      step_costs=step_costs(timings, step_llm),
                      expansions=expansion_table(ds.questions, labels, updates, split_of),
                      refusals=refusal_table(labels, split_of),
                      leakage_agreement=pd.DataFrame(arows, columns=AGREEMENT_COLUMNS))

    res.manifest = export_build(res, models.identities(), models.backends(), embed_backends)
    log(f"built {cfg.name!r}: {len(in_split)} questions ({len(to_label)} labelled: {', '.join(label_splits) or 'none'}), "
        f"{len(passages)} passages ({len(distractors)} distractor questions) → {out}")
    return res


def step_costs(timings: dict[str, float], cumulative: dict[str, dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """``{step: {"seconds": s, "llm": {model: {calls, cache_hits, prompt_tokens, prompt_tokens_total,
    generated_tokens, seconds}}}}`` from the LLM counters recorded after each step (cumulative over
    the build, in step order): each step's share is the difference to the previous step."""
    keys = ("model_calls", "cache_hits", "prompt_tokens", "prompt_tokens_total", "generated_tokens", "seconds")
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


def _check_conflict(out: Path, cfg: BuildConfig, overwrite: bool, log: Callable[[str], None] = print,
                    source_sha256: str | None = None) -> None:
    """Refuse to overwrite a build made with other parameters or other source file contents
    (unless ``overwrite``): the error names each difference and the profile that made the existing
    build. A build with the same fingerprint is reused (said in one line: the checkpoint and LLM
    cache make it cheap). ``source_sha256``: the source files' content hash (computed when None)."""
    m = out / "manifest.json"
    if not m.exists():
        return
    try:
        old = json.loads(m.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        old = {}
    fp = old.get("fingerprint")
    here_sha = cfg.source_sha256() if source_sha256 is None else source_sha256
    made = ", ".join(f"`make run PROFILE={p}`" for p in matching_profiles(fp, old.get("source_sha256", ""))) \
        or "another parameter set"
    if fp == cfg.fingerprint(here_sha):
        log(f"{out} holds a build with these parameters ({made}): reusing it — labelled questions come from "
            "the checkpoint, LLM replies from the cache")
        return
    if overwrite:
        log(f"replacing the build in {out} (made by {made}): overwrite=True")
        return
    diffs = parameter_differences(old.get("parameters") or {}, cfg)
    there_sha = old.get("source_sha256")
    if there_sha != here_sha:
        diffs.append(f"content of the source files of {cfg.source!r}: sha256 {str(there_sha or 'not recorded')[:12]} "
                     f"there → {here_sha[:12] or 'no file found'} here")
    listed = "; ".join(diffs[:8]) + (f"; and {len(diffs) - 8} more" if len(diffs) > 8 else "")
    raise BuildConflictError(
        f"{out} holds a build with other parameters or source files (fingerprint {fp} ≠ "
        f"{cfg.fingerprint(here_sha)}; made by {made}). "
        f"Differences: {listed or 'none recorded (an older manifest)'}. To show that build, set these parameters "
        "back (a notebook's defaults are the default profile's: scripts/sync_notebook_parameters.py); to keep "
        "both, choose another dataset_name; to replace it, pass overwrite=True")
