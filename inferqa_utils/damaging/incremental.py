"""Incremental inference and probe-based selection (paper 004 §4–7) for decoder LLM readers.

For a ranked list ``p_1..p_N`` the reader answers from the top-1, top-2, …, top-N passages; the
strict-EM bits give the **EM pattern** (judge-accepted answers give the SeEM pattern), from which
:mod:`inferqa_utils.damaging.patterns` derives AcEM@k, the passage types and the six probes.

**Context of prefix k.** ``union_norm`` of the hint sentences of ``p_1..p_k`` joined by one space
(paper 000 §5.4, hint level; a control-corpus reference is one unit), so the context of prefix k is the
context of prefix k − 1 plus the new sentences at its end (or the same text when ``p_k`` adds none).

**Why this is cheap with a decoder.** The reader prompt
  (:func:`inferqa_utils.answering.prompts.reader_messages`)
is the system turn, five few-shot turns, the rules, *then the context*, then the question. Prompt k
therefore shares every token up to the end of context k − 1 with prompt k − 1. The llama.cpp
engine keeps its KV cache between prompts and evaluates only the tokens after the longest common
prefix with the previous prompt (``prefix_reuse``); a batch runs in lexicographic token order
(``order_prompts``), i.e. a depth-first walk of the prompts' token trie, so the N prompts of one
question run back to back and each costs roughly its new sentences plus the question. Identical
contexts (a passage that adds no new sentence) are read once. Every reading and judgement goes
through the engine's disk cache, so a re-run makes no model call.

The paper's reader (FiD) is order-invariant; a decoder is not, so our patterns describe the
passages *in retrieval order*, and a probe's kept passages are read in their original rank order.
The paper pads probe inputs to 100 passages (FiD); we read the kept passages only.

The curves, intervals and type counts over these readings are in
:mod:`inferqa_utils.damaging.measures`; their tables, sentences and figure in
:mod:`inferqa_utils.damaging.summary`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..answering.reader import read
from ..answering.scoring import score_answers
from ..ir.runs import ranked_ids
from ..ir.textnorm import occurs_as_tokens
from ..ir.trec import Run
from ..reading.contexts import union_norm
from ..reading.setup import ReadingSetup
from .patterns import PROBE_KS, PROBES, em_pattern, passage_types, probe_keep

METRICS = ("em", "judged")
"""Pattern kinds: strict EM (``em``) and judge-accepted (``judged``: SeEM / SeAcEM, paper 004 §8.3)."""

METRIC_LABELS = {"em": ("EM", "AcEM"), "judged": ("SeEM", "SeAcEM")}
"""The names of each pattern kind's EM@k and AcEM@k in tables and figures."""


# ---------------------------------------------------------------- contexts


def prefix_contexts(passages: Sequence[Sequence[str]]) -> list[str]:
    """``[context@1, …, context@N]`` with ``context@k = " ".join(union_norm(passages[:k]))``.

    Built in one pass, identical to ``build_context(passages, k, "norm")`` for every k; each
    context starts with the previous one (string prefix), which is what makes KV reuse possible.
    """
    seen: set[str] = set()
    sents: list[str] = []
    out: list[str] = []
    for passage in passages:
        for s in union_norm([passage]):
            if s not in seen:
                seen.add(s)
                sents.append(s)
        out.append(" ".join(sents))
    return out


def subset_context(passages: Sequence[Sequence[str]], keep: Sequence[int]) -> str:
    """Context from the passages at 0-based ``keep`` positions, in rank order (a probe's input)."""
    return " ".join(union_norm([passages[i] for i in sorted(keep)]))


# ---------------------------------------------------------------- reading


def read_unique(setup: ReadingSetup, items: Sequence[tuple[str, str]],
                desc: str | None = None) -> dict[tuple[str, str], dict]:
    """Read each distinct ``(qid, context)`` once with ``setup.reader`` (one batch: cached,
    prefix-ordered; answers in ``setup.known`` reused) and score it with ``setup.judge``.

    Returns ``{(qid, context): {"answer", "em", "judged", "no_answer"}}``; each distinct
    ``(qid, answer)`` is judged once (strict EM, then the guards and the LLM judge where EM fails);
    the ``in_context`` guard is then applied per context (an answer copied from the context it was
    read from is not accepted).
    """
    ds, progress = setup.dataset, setup.progress
    unique = list(dict.fromkeys(items))
    if not unique:
        return {}
    outs = read(setup.reader, [ds.questions[q].question for q, _ in unique], [c for _, c in unique],
                desc=desc, progress=progress, known=setup.known)
    answers = {item: o.answer for item, o in zip(unique, outs, strict=True)}
    pairs = list(dict.fromkeys((q, a) for (q, _), a in answers.items()))
    scored = score_answers(ds, [q for q, _ in pairs], [a for _, a in pairs], setup.judge, progress=progress)
    verdict = {(q, a): r for (q, a), r in zip(pairs, scored[["em", "judged", "no_answer"]].to_dict("records"),
                                              strict=True)}
    out = {}
    for item, a in answers.items():
        v = dict(verdict[(item[0], a)])
        if v["judged"] and not v["em"] and occurs_as_tokens(a, item[1]):
            v["judged"] = False
        out[item] = {"answer": a, **v}
    return out


def incremental_inference(setup: ReadingSetup, run: Run, qids: Sequence[str], n: int,
                          system: str = "") -> pd.DataFrame:
    """paper 004 incremental inference: read every question with its top-1 … top-N passages
    (their hints in ``setup.corpus``; read and scored by :func:`read_unique`).

    One row per (question, k = 1..N): ``qid, k, pid`` (the k-th passage; empty when the run has
    only m < k passages for the question — reading "the top-k" then reads all m, so EM@k = EM@m
    and every pattern has length N), ``answer, em, judged, no_answer``, ``adds`` (whether ``p_k``
    added a sentence to the context), ``context_chars`` and ``system``. All prefixes of all
    questions are read in one batch; identical contexts once.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"N (passages per question) must be an integer >= 1, got {n!r}")
    qids = list(qids)
    if not qids:
        raise ValueError("no questions to analyse")
    rows, items = [], []
    for qid in qids:
        pids = ranked_ids(run, qid, n)
        ctxs = prefix_contexts([setup.dataset.passage_sentences(pid, setup.corpus) for pid in pids]) or [""]
        for k in range(1, n + 1):
            ctx = ctxs[min(k, len(ctxs)) - 1]
            rows.append({"qid": qid, "k": k, "pid": pids[k - 1] if k <= len(pids) else "",
                         "adds": k <= len(pids) and (k == 1 or ctx != ctxs[k - 2]),
                         "context_chars": len(ctx), "_ctx": ctx})
            items.append((qid, ctx))
    res = read_unique(setup, items, desc=f"incremental {system} N={n}".strip())
    df = pd.DataFrame(rows)
    scored = pd.DataFrame([res[(r["qid"], r["_ctx"])] for r in rows])
    df = pd.concat([df.drop(columns="_ctx"), scored], axis=1)
    df["system"] = system
    return df[["system", "qid", "k", "pid", "answer", "em", "judged", "no_answer", "adds", "context_chars"]]


def real_types(pattern: str, n_passages: int) -> list[str]:
    """Types (paper 004) of the positions that hold a passage (the first ``n_passages``); padded
    positions of a short ranked list are not passages and are not counted."""
    return passage_types(pattern)[:n_passages]


def patterns_of(inc: pd.DataFrame, metric: str = "em") -> dict[str, str]:
    """Per question, the EM pattern (``metric="em"``) or the SeEM pattern (``"judged"``) in k order."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; expected one of {METRICS}")
    return {qid: em_pattern(g.sort_values("k")[metric].astype(bool).tolist())
            for qid, g in inc.groupby("qid", sort=False)}


def pattern_table(inc: pd.DataFrame) -> pd.DataFrame:
    """One row per (system, question): the strict and judged patterns and their passage types."""
    rows = []
    for (system, qid), g in inc.groupby(["system", "qid"], sort=False):
        g = g.sort_values("k")
        pe = em_pattern(g["em"].astype(bool).tolist())
        pj = em_pattern(g["judged"].astype(bool).tolist())
        m = int((g["pid"] != "").sum())
        rows.append(
            {
                "system": system,
                "qid": qid,
                "em_pattern": pe,
                "judged_pattern": pj,
                "em_types": " ".join(real_types(pe, m)),
                "passages": m,
                "n_contexts": int(g["adds"].sum()),
            }
        )
    return pd.DataFrame(rows)


def probe_inference(setup: ReadingSetup, run: Run, inc: pd.DataFrame, ks: Sequence[int] = PROBE_KS,
                    probes: Sequence[str] = tuple(PROBES), metrics: Sequence[str] = METRICS) -> pd.DataFrame:
    """Probe@k (paper 004 §6.1): re-read the passages each probe keeps among the top-k (their hints
    in ``setup.corpus``; read and scored by :func:`read_unique`).

    ``inc`` is one system's :func:`incremental_inference` frame. For each question, metric (its EM
    or SeEM pattern), k in ``ks`` (those ≤ N, and N itself) and probe:
    ``keep = probe_keep(pattern, probe, k)`` (retrieved passages only); the kept passages are read
    in rank order and scored with that metric. Distinct contexts are read once (an all-zero prefix
    keeps everything, i.e. re-reads prefix k — a cache hit). One row per (qid, metric, k, probe):
    ``n_kept``, ``kept`` (1-based ranks), ``answer``, ``correct`` (the probe's score under ``metric``).
    """
    if inc["system"].nunique() > 1:
        raise ValueError(f"probe_inference takes one system's readings, got {sorted(inc['system'].unique())}")
    system = inc["system"].iloc[0] if len(inc) else ""
    n = int(inc["k"].max()) if len(inc) else 0
    ks = sorted({k for k in ks if 1 <= k <= n} | ({n} if n else set()))
    rows, items = [], []
    for metric in metrics:
        pats = patterns_of(inc, metric)
        for qid, pat in pats.items():
            sents = [setup.dataset.passage_sentences(pid, setup.corpus) for pid in ranked_ids(run, qid, n)]
            for k in ks:
                for probe in probes:
                    keep = [i for i in probe_keep(pat, probe, k) if i < len(sents)]
                    ctx = subset_context(sents, keep)
                    rows.append(
                        {
                            "system": system,
                            "qid": qid,
                            "metric": metric,
                            "k": k,
                            "probe": probe,
                            "n_kept": len(keep),
                            "kept": " ".join(str(i + 1) for i in keep),
                            "_ctx": ctx,
                        }
                    )
                    items.append((qid, ctx))
    res = read_unique(setup, items, desc=f"probes {system}".strip())
    for r in rows:
        out = res[(r["qid"], r.pop("_ctx"))]
        r["answer"] = out["answer"]
        r["correct"] = bool(out[r["metric"]])
    return pd.DataFrame(rows, columns=["system", "qid", "metric", "k", "probe", "n_kept", "kept", "answer",
                                       "correct"])
