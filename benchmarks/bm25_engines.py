"""bm25s vs Pyserini (Lucene) BM25 on the same corpus and queries, in one process (paper 000 §4, §5.1–5.2,
§10).

Both engines use BM25 with k1 = 0.9, b = 0.4 (Pyserini's defaults; bm25s with ``method="lucene"``),
through the project's retrievers (:class:`~inferqa_utils.ir.lexical.BM25sRetriever`,
:class:`~inferqa_utils.retrieval.pyserini_bm25.PyseriniBM25Retriever`). They differ in analysis:
Lucene's English analyzer stems (Porter) and uses Lucene's stopword list; bm25s lower-cases, drops
its English stopwords and does not stem. Lucene also stores document lengths lossily (1-byte norms).

Workload: the TriviaHG validation questions from ``../shared/data`` (the embedded 64-question
dataset when that is absent); passages = the subset-permutations of each question's first 3 hints
(15 per question, :func:`inferqa_utils.construction.passages.build_passages`; 1,000 questions → 15,000
passages); queries = the questions. Permutations of the same hints have the same bag of words, so
BM25 gives them *equal* scores: top-k lists contain many ties whose order is arbitrary (bm25s and
Lucene break them differently). Reported:

* indexing time (bm25s: tokenize + index in memory; Lucene: write JSONL + ``IndexCollection`` into
  a fresh temporary folder; the JVM start + pyserini import is reported separately);
* queries/s for all queries at depth ``--depth`` (after a 10-query warm-up; Lucene with 1 and 2
  search threads, bm25s as the retriever runs it: one query at a time, 1 thread);
* top-10 overlap, mean |A ∩ B| / 10, strict and tie-aware (a passage of A's top 10 counts when B
  scores it at least as high as B's 10th passage; both directions averaged);
* top-1 agreement, strict (same passage first) and tie-aware (the sets of passages tied at the top
  score intersect);
* a diagnostic: the same agreement for bm25s scoring Lucene-analyzed tokens, which separates
  differences of analysis (stemming, stopwords) from differences of scoring.

Timings are wall-clock on a shared 2-core machine: compare the engines within one run.

    .venv/bin/python benchmarks/bm25_engines.py [--questions 1000] [--hints 3] [--depth 100] [--source NAME] \
        [--record PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import tempfile
import time
from collections.abc import Mapping
from importlib import metadata
from typing import Any

from inferqa_utils.construction.passages import build_passages
from inferqa_utils.core.config import PATHS
from inferqa_utils.ir.lexical import EmptyQueryError
from inferqa_utils.ir.trec import Run
from inferqa_utils.record.benchmark_record import RECORD_HELP, record_measurement
from inferqa_utils.sources import load_source

REL_TOL = 1e-6  # scores within this relative distance count as tied


def workload(source: str, n_questions: int, n_hints: int) -> tuple[dict[str, str], dict[str, str]]:
    """(corpus, queries): subset-permutation passages of the first ``n_hints`` hints; the questions."""
    ds = load_source(source)
    questions = [q for q in ds if q.hint_texts][:n_questions]
    corpus = {p.pid: p.text for q in questions for p in build_passages(q.qid, q.hint_texts[:n_hints])}
    return corpus, {q.qid: q.question for q in questions}


def search_timed(retriever: Any, queries: Mapping[str, str], k: int) -> tuple[Run, float, list[str]]:
    """Run of all searchable queries, seconds, and the ids of queries skipped as empty."""
    skipped: list[str] = []
    with contextlib.suppress(EmptyQueryError):
        retriever.search(dict(list(queries.items())[:10]), k)  # warm-up
    t0 = time.perf_counter()
    try:
        run = retriever.search(queries, k)
    except EmptyQueryError:
        for qid, text in queries.items():
            try:
                retriever.search({qid: text}, 1)
            except EmptyQueryError:
                skipped.append(qid)
        kept = {q: t for q, t in queries.items() if q not in skipped}
        t0 = time.perf_counter()
        run = retriever.search(kept, k)
    return run, time.perf_counter() - t0, skipped


def _tied_at_least(hits: list[tuple[str, float]], threshold: float) -> set[str]:
    return {d for d, s in hits if s >= threshold - REL_TOL * abs(threshold)}


def compare(a: Run, b: Run, qids: list[str], n: int = 10) -> dict[str, float]:
    strict_n = tie_n = strict_1 = tie_1 = 0.0
    short = 0
    for q in qids:
        ha, hb = a.get(q, []), b.get(q, [])
        ta, tb = [d for d, _ in ha[:n]], [d for d, _ in hb[:n]]
        short += len(ta) < n or len(tb) < n
        strict_n += len(set(ta) & set(tb)) / n
        if ta and tb:
            a_ext = _tied_at_least(ha, ha[:n][-1][1])
            b_ext = _tied_at_least(hb, hb[:n][-1][1])
            tie_n += (len(set(ta) & b_ext) + len(set(tb) & a_ext)) / (2 * n)
            strict_1 += ta[0] == tb[0]
            tie_1 += bool(_tied_at_least(ha, ha[0][1]) & _tied_at_least(hb, hb[0][1]))
    m = max(1, len(qids))
    return {"overlap": strict_n / m, "overlap_ties": tie_n / m, "top1": strict_1 / m, "top1_ties": tie_1 / m,
            "short": short}


def bm25s_on_lucene_tokens(corpus: Mapping[str, str], queries: Mapping[str, str], k: int) -> Run:
    """Diagnostic: bm25s scoring on the tokens of Lucene's English analyzer (isolates analysis
    differences from scoring differences). Needs the JVM (pyserini imported)."""
    import bm25s
    from pyserini.analysis import Analyzer, get_lucene_analyzer

    logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs the index build at DEBUG
    analyzer = Analyzer(get_lucene_analyzer())
    ids = list(corpus)
    vocab: dict[str, int] = {}
    doc_tokens = [[vocab.setdefault(w, len(vocab)) for w in analyzer.analyze(corpus[d])] for d in ids]
    model = bm25s.BM25(method="lucene", k1=0.9, b=0.4)
    model.index(bm25s.tokenization.Tokenized(ids=doc_tokens, vocab=vocab), show_progress=False)
    run: Run = {}
    for qid, text in queries.items():
        terms = [vocab[w] for w in analyzer.analyze(text) if w in vocab]
        if not terms:
            run[qid] = []
            continue
        docs, scores = model.retrieve([terms], k=min(k, len(ids)), show_progress=False, n_threads=1)
        run[qid] = [(ids[int(d)], float(x)) for d, x in zip(docs[0], scores[0], strict=True) if float(x) > 0]
    return run


def top1_tied_share(run: Run, qids: list[str]) -> float:
    """Share of queries whose best score is shared by more than one passage."""
    return sum(len(_tied_at_least(run[q], run[q][0][1])) > 1 for q in qids if run.get(q)) / max(1, len(qids))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=1000, help="first N questions (corpus and queries)")
    ap.add_argument("--hints", type=int, default=3, help="hints per question (3 → 15 passages each)")
    ap.add_argument(
        "--depth", type=int, default=100,
        help="hits retrieved per query (top-100 as in paper 000 §4, §5.1–5.2)",
    )
    ap.add_argument(
        "--source", default=None, help="dataset (default: triviahg-validation if shared data, else embedded)"
    )
    ap.add_argument("--record", metavar="PATH", help=RECORD_HELP)
    args = ap.parse_args()

    source = args.source or ("triviahg-validation" if PATHS.shared_data() else "embedded")
    corpus, queries = workload(source, args.questions, args.hints)
    print(f"workload: {source}, {len(queries)} questions, {len(corpus)} passages "
          f"(subset-permutations of the first {args.hints} hints), depth {args.depth}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")

    from inferqa_utils.ir.lexical import BM25sRetriever
    from inferqa_utils.retrieval.pyserini_bm25 import PyseriniBM25Retriever, _lucene

    t0 = time.perf_counter()
    import bm25s  # noqa: F401  (import time is not indexing time)

    t_import_bm25s = time.perf_counter() - t0
    t0 = time.perf_counter()
    sparse = BM25sRetriever(corpus)
    t_index_bm25s = time.perf_counter() - t0
    run_s, sec_s, skip_s = search_timed(sparse, queries, args.depth)

    t0 = time.perf_counter()
    _lucene()  # ensure_java + JVM start + pyserini import
    t_jvm = time.perf_counter() - t0
    with tempfile.TemporaryDirectory(prefix="bm25-bench-") as tmp:
        t0 = time.perf_counter()
        lucene = PyseriniBM25Retriever(corpus, tmp, threads=2)
        t_index_lucene = time.perf_counter() - t0
        lucene.threads = 1
        run_l1, sec_l1, skip_l = search_timed(lucene, queries, args.depth)
        lucene.threads = 2
        run_l, sec_l, _ = search_timed(lucene, queries, args.depth)
        lucene.close()

    qids = [q for q in queries if q not in set(skip_s) | set(skip_l)]
    n_s, n_l = len(queries) - len(skip_s), len(queries) - len(skip_l)
    print(f"\n{'engine':<28}{'import/JVM s':>13}{'index s':>10}{'queries/s':>11}")
    print(f"{'bm25s ' + metadata.version('bm25s'):<28}{t_import_bm25s:>13.2f}{t_index_bm25s:>10.2f}"
          f"{n_s / sec_s:>11.0f}")
    print(f"{'pyserini ' + metadata.version('pyserini') + ' (1 thread)':<28}{t_jvm:>13.2f}"
          f"{lucene.build_seconds:>10.2f}{n_l / sec_l1:>11.0f}")
    print(f"{'pyserini (2 threads)':<28}{'':>13}{'':>10}{n_l / sec_l:>11.0f}")
    print(f"(Lucene index: {lucene.build_seconds:.2f} s IndexCollection, {t_index_lucene:.2f} s with opening "
          f"the searcher; index built with 2 threads)")
    if skip_s or skip_l:
        print(f"skipped as empty: bm25s {len(skip_s)}, pyserini {len(skip_l)} queries")

    c = compare(run_s, run_l, qids)
    print(f"\nagreement over {len(qids)} queries (A = bm25s, B = pyserini):")
    print(f"  top-10 overlap mean |A∩B|/10: {c['overlap']:.3f} strict, {c['overlap_ties']:.3f} tie-aware "
          f"({c['short']} queries with < 10 hits in an engine)")
    print(f"  top-1 agreement: {c['top1']:.3f} strict, {c['top1_ties']:.3f} tie-aware")
    print(f"  queries whose top score is tied: bm25s {top1_tied_share(run_s, qids):.3f}, "
          f"pyserini {top1_tied_share(run_l, qids):.3f}")
    c2 = compare(bm25s_on_lucene_tokens(corpus, {q: queries[q] for q in qids}, args.depth), run_l, qids)
    print(f"  diagnostic, bm25s scoring on Lucene-analyzed tokens vs pyserini: top-10 overlap "
          f"{c2['overlap']:.3f} strict, {c2['overlap_ties']:.3f} tie-aware; top-1 {c2['top1']:.3f} strict, "
          f"{c2['top1_ties']:.3f} tie-aware")
    same = sum([d for d, _ in run_l1.get(q, [])] == [d for d, _ in run_l.get(q, [])] for q in qids)
    print(f"  pyserini 1 vs 2 threads: identical rankings for {same}/{len(qids)} queries")
    if args.record:
        record_measurement(args.record, {
            "questions": len(queries), "passages": len(corpus),
            "import_bm25s": round(t_import_bm25s, 2), "import_pyserini": round(t_jvm, 2),
            "index_bm25s": round(t_index_bm25s, 2), "index_pyserini": round(lucene.build_seconds, 2),
            "qps_bm25s": round(n_s / sec_s), "qps_pyserini": round(n_l / sec_l1),
            "qps_pyserini_2threads": round(n_l / sec_l),
            "overlap10": round(c["overlap"], 3), "overlap10_ties": round(c["overlap_ties"], 3),
            "top1": round(c["top1"], 3), "top1_ties": round(c["top1_ties"], 3),
            "lucene_overlap10": round(c2["overlap"], 3),
            "lucene_overlap10_ties": round(c2["overlap_ties"], 3),
        }, what="benchmarks/bm25_engines.py: bm25s vs Pyserini", script="benchmarks/bm25_engines.py")


if __name__ == "__main__":
    main()
