"""QUIT at full size on one laptop: load, index, search and evaluate 2.4 M passages.

Writes a release in the official QUIT shape (``train.json``/``dev.json``/``test.json`` with
``id``, ``question``, ``answers``, ``hints`` and ``subsets`` {mask: {permutation: {model: answer}}},
plus ``corpus/corpus.jsonl`` with ``id``, ``title`` = question id, ``contents``) of ``--questions``
questions × 325 passages (k = 5 hints: every ordering of every non-empty subset, 5 + 20 + 60 + 120
+ 120, built by :func:`inferqa_utils.construction.passages.build_passages`), streamed one question
at a time through the package's writer :func:`inferqa_utils.construction.file_formats.quit_records`; at the
default
7,401 questions that is QUIT's 2,405,325 passages, split 4,811 / 862 / 1,728 as the release is
(other sizes keep those proportions). Then, one line per step with wall-clock and CPU seconds (all
threads of the process) and the process's peak RSS *during that step* (Linux ``VmHWM``, reset
before each step through ``/proc/self/clear_refs``; the in-process JVM that pyjnius starts for
Lucene is counted) and the RSS it ends with, it measures the path notebook 02 runs under the
``paper`` profile:

1. **load** — :func:`inferqa_utils.sources.load_quit` on the release (what ``load_built`` and
   ``load_source("quit:…")`` call), then the corpus, test queries and qrels as
   :mod:`inferqa_utils.stages` derives them;
2. **index** — :func:`inferqa_utils.retrieval.registry.make_retriever` ``("bm25", …)``: Pyserini's
   Lucene ``IndexCollection`` (JsonCollection, 2 threads) over the corpus;
3. **search** — :func:`inferqa_utils.retrieval.registry.retrieve`: BM25 top-100 for every test
   question, written as a TREC run with its stamp;
4. **metrics** — :func:`inferqa_utils.retrieval.evaluation.metrics_table`
   (:mod:`inferqa_utils.measure.metrics`; notebook 02's main metrics) at relevance ≥ 1 and ≥ 2,
   qrels from the labels.

The data: hint text, questions and answers are real — TriviaHG ``validation_2024.json`` from the
shared data (the file the ``triviahg-validation`` source reads), first 5 distinct hints per
question in the source's order. It has 1,000 questions, so beyond 1,000 questions are **reused
with distinct ids** (``<Q_ID>-copy<r>``); copy r uses the r-th 5-subset of the question's hints
(lexicographic; copy 0 = the first 5), so copies share some hints and passages but not all (the
``write`` line counts the distinct passage texts).
**The labels are synthetic** (no LLM labelled anything): every own passage is 1 and those holding
the copy's first hint are 2 (261 of 325), written as the labelers' answers in ``subsets`` (the gold
answer for 2, ``NO ANSWER`` for 1) so the loader derives them as it does for the real release.
The metric values therefore mean nothing; the point is size, time and memory.

Target: ≤ 30 min and ≤ 12 GB peak on 2 cores at 7,401 questions.

    .venv/bin/python benchmarks/quit_scale.py [--questions 7401] [--out DIR] [--overwrite] [--keep]

``--out`` defaults to ``build/quit_scale`` (git-ignored); an existing non-empty folder is refused
unless ``--overwrite``. The release, index and run are deleted at the end unless ``--keep``. Run it
on a quiet machine: other jobs on the two cores change every time.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from inferqa_utils.construction.file_formats import quit_records
from inferqa_utils.construction.passages import build_passages, n_subset_permutations
from inferqa_utils.core.config import PATHS, SEED
from inferqa_utils.ir.datamodel import Dataset, Hint, Question
from inferqa_utils.record.benchmark_record import RECORD_HELP, record_measurement
from inferqa_utils.sources import load_quit, load_triviahg, shared_file
from inferqa_utils.sources.quit import LABELER_KEYS, READER_KEYS

SOURCE = "triviahg-validation"
K_HINTS = 5
#: the official release's split sizes (its dataset card): 7,401 questions, 2,405,325 passages
QUIT_SPLITS = {"train": 4811, "dev": 862, "test": 1728}
QUIT_QUESTIONS = sum(QUIT_SPLITS.values())
NO_ANSWER = "NO ANSWER"
DEPTH = 100
THRESHOLDS = (1, 2)
TARGET_SECONDS, TARGET_GB = 30 * 60, 12.0
SYNTHETIC_NOTE = ("labels are SYNTHETIC (scale test): 1 for every own passage, 2 for those holding the "
                  "question's first hint — the metric values mean nothing, only size, time and memory do")


# ------------------------------------------------------------------------------ memory

def _status_kb(field_name: str) -> int | None:
    try:
        text = Path("/proc/self/status").read_text()
    except OSError:
        return None
    m = re.search(rf"^{field_name}:\s+(\d+) kB", text, re.M)
    return int(m.group(1)) if m else None


def reset_peak_rss() -> bool:
    """Reset this process's peak RSS (``VmHWM``) to its current RSS; False where Linux refuses."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def peak_rss_gb() -> float:
    """Peak RSS of this process since the last :func:`reset_peak_rss` (since start otherwise), GB."""
    kb = _status_kb("VmHWM")
    if kb is None:  # not Linux: ru_maxrss (kB on Linux, bytes on macOS), never reset
        import resource

        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // (1024 if sys.platform == "darwin" else 1)
    return kb / 1024 ** 2


@dataclass
class Step:
    """One measured step: wall-clock seconds, peak RSS during the step (GB), details."""

    name: str
    seconds: float = 0.0
    #: CPU seconds of the whole process (every thread, the JVM's included) during the step
    cpu_seconds: float = 0.0
    peak_gb: float = 0.0
    #: RSS when the step ended (what the next step starts from), GB
    rss_gb: float = 0.0
    peak_reset: bool = True
    detail: str = ""

    def line(self) -> str:
        peak = (f"{self.peak_gb:6.2f} GB (after {self.rss_gb:5.2f})"
                + ("" if self.peak_reset else " (peak since start: no VmHWM reset)"))
        return (
            f"step {self.name:<8} {self.seconds:9.1f} s  (CPU {self.cpu_seconds:8.1f} s)   peak RSS {peak}   "
            f"{self.detail}"
        ).rstrip()


def measured(name: str, fn: Callable[[], Any], steps: list[Step], echo: bool = True) -> Any:
    """Run ``fn`` as step ``name``: time it and read the peak RSS it reached; append and print the line."""
    step = Step(name, peak_reset=reset_peak_rss())
    t0, c0 = time.perf_counter(), time.process_time()
    result = fn()
    step.seconds, step.cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
    step.peak_gb = peak_rss_gb()
    step.rss_gb = (_status_kb("VmRSS") or 0) / 1024 ** 2
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], str):
        result, step.detail = result
    steps.append(step)
    if echo:
        print(step.line(), flush=True)
    return result


def jvm_heap() -> str:
    """The in-process JVM's heap: peak used (sum of the heap pools' peaks), committed and maximum, GB."""
    try:
        from jnius import autoclass

        factory = autoclass("java.lang.management.ManagementFactory")
        pools = factory.getMemoryPoolMXBeans()
        peak = sum(pools.get(i).getPeakUsage().getUsed() for i in range(pools.size())
                   if pools.get(i).getType().toString() == "Heap memory")
        rt = autoclass("java.lang.Runtime").getRuntime()
        return (
            f"JVM heap peak {peak / 1e9:.2f} GB, committed {rt.totalMemory() / 1e9:.2f}, max "
            f"{rt.maxMemory() / 1e9:.2f}"
        )
    except Exception as exc:  # measurement only: never fail the benchmark over it
        return f"JVM heap unknown ({type(exc).__name__})"


# ------------------------------------------------------------------------------ the release

@dataclass
class Planned:
    """One question of the release: a source question, its copy number and the 5 hints it uses."""

    qid: str
    source: Question
    copy: int
    hints: list[str]


@dataclass
class ReleaseInfo:
    """What :func:`write_release` wrote."""

    folder: Path
    source_file: Path
    source_questions: int
    per_split: dict[str, int]
    passages: int
    reused: int
    label2: int
    distinct_texts: int
    bytes: dict[str, int] = field(default_factory=dict)

    @property
    def questions(self) -> int:
        return sum(self.per_split.values())


def split_sizes(n: int) -> dict[str, int]:
    """QUIT's train/dev/test proportions for ``n`` questions (exactly 4,811/862/1,728 at 7,401);
    at least one test question."""
    if n < 1:
        raise ValueError("need at least one question")
    test = max(1, round(n * QUIT_SPLITS["test"] / QUIT_QUESTIONS))
    dev = min(n - test, round(n * QUIT_SPLITS["dev"] / QUIT_QUESTIONS))
    return {"train": n - test - dev, "dev": dev, "test": test}


def distinct_hints(q: Question) -> list[str]:
    """The question's non-empty hints, case-insensitive duplicates removed, source order kept."""
    seen: set[str] = set()
    out = []
    for h in q.hint_texts:
        key = h.strip().lower()
        if key and key not in seen:
            seen.add(key)
            out.append(h.strip())
    return out


def plan(source: list[Question], n: int) -> list[Planned]:
    """``n`` questions: source question ``i % len(usable)``, copy ``i // len(usable)`` with the
    copy-th 5-subset of its hints (lexicographic, cycling when a question has fewer subsets)."""
    usable = [(q, distinct_hints(q)) for q in source]
    usable = [(q, h) for q, h in usable if len(h) >= K_HINTS]
    if not usable:
        raise SystemExit(f"no source question has {K_HINTS} distinct hints")
    out = []
    for i in range(n):
        q, hints = usable[i % len(usable)]
        copy = i // len(usable)
        subsets = list(combinations(range(len(hints)), K_HINTS)) if copy else [tuple(range(K_HINTS))]
        chosen = subsets[copy % len(subsets)]
        out.append(
            Planned(q.qid if copy == 0 else f"{q.qid}-copy{copy}", q, copy, [hints[j] for j in chosen])
        )
    return out


def synthetic_label(hint_ids: tuple[int, ...]) -> int:
    """The scale test's stand-in label: 2 when the passage holds hint 0 (the copy's first hint), else 1."""
    return 2 if 0 in hint_ids else 1


def question_dataset(p: Planned) -> Dataset:
    """One question as a :class:`Dataset`: its 325 passages built by
    :func:`~inferqa_utils.construction.passages.build_passages` (ids ``{qid}_{mask}_{perm}``) and, per
    passage, an answer for each of the release's labeler and reader keys — the gold answer where the
    synthetic label is 2, ``NO ANSWER`` elsewhere — plus the labels themselves as qrels."""
    q = Question(p.qid, p.source.question, list(p.source.answers), [Hint(h) for h in p.hints],
                 qtype=p.source.qtype, difficulty=p.source.difficulty)
    ds = Dataset("quit-scale", {p.qid: q}, splits={"one": [p.qid]})
    for passage in build_passages(p.qid, p.hints):
        label = synthetic_label(passage.hint_ids)
        answer = q.answer if label == 2 else NO_ANSWER
        ds.passages[passage.pid] = passage
        ds.generations[passage.pid] = {m: answer for m in (*LABELER_KEYS, *READER_KEYS)}
        ds.qrels.setdefault(p.qid, {})[passage.pid] = label
    return ds


def write_release(folder: Path, n: int, source_file: Path | None = None, echo: bool = True) -> ReleaseInfo:
    """Write the QUIT-shaped release of ``n`` questions into ``folder`` (streamed: one record at a time)."""
    source_file = source_file or shared_file(SOURCE)
    src = list(load_triviahg(source_file, name=SOURCE))
    planned = plan(src, n)
    order = list(range(n))
    random.Random(SEED).shuffle(order)
    sizes = split_sizes(n)
    splits: dict[str, list[int]] = {}
    start = 0
    for split, size in sizes.items():
        splits[split] = sorted(order[start:start + size])
        start += size
    reused = sum(p.copy > 0 for p in planned)
    if echo:
        usable = len({p.source.qid for p in planned})
        print(
            f"source: {source_file} ({len(src)} TriviaHG questions; {usable} used, first {K_HINTS} distinct "
            "hints each)"
        )
        if reused:
            print(
                f"REUSED: {reused} of {n} questions are copies of source questions with distinct ids "
                f"(<Q_ID>-copy<r>, another 5-subset of the question's hints): TriviaHG has too few questions"
            )
        print(f"NOTE: {SYNTHETIC_NOTE}")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus").mkdir(exist_ok=True)
    n_passages = n_label2 = 0
    texts: set[int] = set()
    with open(folder / "corpus" / "corpus.jsonl", "w", encoding="utf-8") as corpus:
        for split, idx in splits.items():
            with open(folder / f"{split}.json", "w", encoding="utf-8") as fh:
                fh.write("[")
                for j, i in enumerate(idx):  # one question at a time, through the package's writer
                    one = question_dataset(planned[i])
                    (rec,) = quit_records(one, "one")
                    fh.write(("," if j else "") + "\n" + json.dumps(rec, ensure_ascii=False))
                    n_label2 += sum(v == 2 for v in one.qrels[planned[i].qid].values())
                    for passage in one.passages.values():
                        texts.add(hash(passage.text))
                        corpus.write(
                            json.dumps(
                                {"id": passage.pid, "title": passage.qid, "contents": passage.text},
                                ensure_ascii=False,
                            )
                            + "\n"
                        )
                        n_passages += 1
                fh.write("\n]\n")
    files = [*(folder / f"{s}.json" for s in splits), folder / "corpus" / "corpus.jsonl"]
    return ReleaseInfo(
        folder, source_file, len(src),
        {s: len(v) for s, v in splits.items()},
        n_passages, reused, n_label2, len(texts),
        {f.relative_to(folder).as_posix(): f.stat().st_size for f in files},
    )


# ------------------------------------------------------------------------------ the measured path

@dataclass
class PipelineResult:
    """What the measured steps produced (for printing and for the tests)."""

    steps: list[Step]
    n_passages: int
    n_indexed: int
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    run: dict[str, list[tuple[str, float]]]
    run_path: Path
    tables: dict[int, Any]


def run_pipeline(release: Path, work: Path, depth: int = DEPTH, echo: bool = True) -> PipelineResult:
    """Load → index → search → metrics on ``release`` as notebook 02 does; index and run under ``work``."""
    from inferqa_utils import stages
    from inferqa_utils.core import artifacts
    from inferqa_utils.measure.metrics import DEFAULT_METRICS
    from inferqa_utils.retrieval import evaluation as ev
    from inferqa_utils.retrieval.registry import make_retriever, retrieve

    steps: list[Step] = []

    def load():
        ds = load_quit(release, name="quit-scale")
        corpus = stages.corpus_of(ds)
        queries = stages.queries_of(ds, "test")
        qrels = {q: ds.qrels[q] for q in queries}
        labels = sum(len(v) for v in ds.qrels.values())
        return (ds, corpus, queries, qrels), (
            f"{len(ds)} questions, {len(corpus):,} passages, {labels:,} labels, {len(queries)} test queries"
        )

    ds, corpus, queries, qrels = measured("load", load, steps, echo)

    def index():
        r = make_retriever("bm25", corpus, index_dir=work / "index")
        n = int(r.searcher.num_docs)
        built = f"built in {r.build_seconds:.1f} s: JSONL + IndexCollection" if r.rebuilt else "reused"
        return r, f"{n:,} documents in Lucene ({built}, {r.threads} threads); {jvm_heap()}"

    retriever = measured("index", index, steps, echo)
    run_path = work / "runs" / "bm25.trec"

    def search():
        run = retrieve("bm25", corpus, queries, k=depth, run_path=run_path, retriever=retriever)
        lines = sum(len(v) for v in run.values())
        seconds = artifacts.Cost.of(artifacts.read_stamp(run_path)).seconds
        return run, (f"top-{depth} for {len(run)} test queries, {lines:,} run lines "
                     f"(searching {float('nan') if seconds is None else seconds:.1f} s)")

    run = measured("search", search, steps, echo)

    def metrics():
        tables = {t: ev.metrics_table({"bm25": run}, qrels, t) for t in THRESHOLDS}
        return tables, f"{len(DEFAULT_METRICS)} metrics × thresholds {list(THRESHOLDS)}"

    tables = measured("metrics", metrics, steps, echo)
    n_indexed = int(retriever.searcher.num_docs)
    retriever.close()
    del ds
    return PipelineResult(steps, len(corpus), n_indexed, queries, qrels, run, run_path, tables)


# ------------------------------------------------------------------------------ CLI

def prepare_out(out: Path, overwrite: bool) -> None:
    """Refuse a non-empty ``out`` unless ``overwrite``; never delete the repository or a parent of it."""
    out = out.resolve()
    if out.exists() and any(out.iterdir()):
        if not overwrite:
            raise SystemExit(
                f"{out} exists and is not empty: pass --overwrite to replace it, or --out another folder"
            )
        if out == PATHS.root.resolve() or out in PATHS.root.resolve().parents or (out / ".git").exists():
            raise SystemExit(f"refusing to delete {out}: it is (or holds) a repository")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=QUIT_QUESTIONS,
                    help=f"questions in the release (default {QUIT_QUESTIONS:,}: QUIT's size)")
    ap.add_argument("--out", type=Path, default=PATHS.build / "quit_scale",
                    help="working folder for the release, index and run (default build/quit_scale)")
    ap.add_argument("--overwrite", action="store_true", help="replace a non-empty --out")
    ap.add_argument("--keep", action="store_true", help="keep the release, index and run afterwards")
    ap.add_argument("--record", metavar="PATH", help=RECORD_HELP)
    args = ap.parse_args(argv)
    if args.questions < 1:
        ap.error("--questions must be ≥ 1")
    prepare_out(args.out, args.overwrite)
    release = args.out / "release"
    n_expected = args.questions * n_subset_permutations(K_HINTS)
    print(f"quit_scale: {args.questions:,} questions × {n_subset_permutations(K_HINTS)} passages = "
          f"{n_expected:,} passages into {args.out}")

    steps: list[Step] = []
    info = measured("write", lambda: write_release(release, args.questions), steps, echo=False)
    steps[-1].detail = (
        f"{info.questions:,} questions ({', '.join(f'{s} {n:,}' for s, n in info.per_split.items())}), "
        f"{info.passages:,} passages ({info.distinct_texts:,} distinct texts), "
        f"{info.label2:,} label 2; " + ", ".join(f"{f} {b / 1e6:,.0f} MB" for f, b in info.bytes.items())
    )
    print(steps[-1].line(), flush=True)
    res = run_pipeline(release, args.out)
    steps += res.steps

    total = sum(s.seconds for s in steps)
    measured_total = sum(s.seconds for s in res.steps)
    peak = max(s.peak_gb for s in steps)
    cpu = sum(s.cpu_seconds for s in steps)
    print(f"total    {total:9.1f} s  (CPU {cpu:8.1f} s)   peak RSS {peak:6.2f} GB                "
          f"(load+index+search+metrics {measured_total:.1f} s)")
    ok_time, ok_mem = total <= TARGET_SECONDS, peak <= TARGET_GB
    scale = (
        ""
        if args.questions == QUIT_QUESTIONS
        else f" (at {args.questions:,} of QUIT's {QUIT_QUESTIONS:,} questions)"
    )
    print(
        f"target ≤ {TARGET_SECONDS // 60} min and ≤ {TARGET_GB:g} GB: time {'met' if ok_time else 'MISSED'}, "
        f"memory {'met' if ok_mem else 'MISSED'}{scale}"
    )
    problems = []
    if res.n_passages != n_expected or res.n_indexed != n_expected:
        problems.append(
            f"expected {n_expected:,} passages, loaded {res.n_passages:,}, indexed {res.n_indexed:,}"
        )
    missing = [q for q in res.queries if not res.run.get(q)]
    if missing:
        problems.append(f"{len(missing)} test queries without a run line (first: {missing[0]})")
    print(f"\nBM25 top-{DEPTH} on the {len(res.queries):,} test questions, metrics in % — {SYNTHETIC_NOTE}")
    for t, table in res.tables.items():
        print(f"relevant = label ≥ {t}:")
        print(table.to_string())
    if not args.keep:
        shutil.rmtree(args.out, ignore_errors=True)
        print(f"removed {args.out} (--keep keeps it)")
    for p in problems:
        print(f"PROBLEM: {p}")
    if args.record and not problems:
        rows = [{"step": s.name, "what": s.detail, "wall": round(s.seconds, 1),
                 "cpu": round(s.cpu_seconds, 1), "rss_gb": round(s.peak_gb, 2)} for s in steps]
        rows.append({"step": "**total**", "what": "", "wall": round(total, 1), "cpu": round(cpu, 1),
                     "rss_gb": round(peak, 2)})
        record_measurement(args.record, {
            "questions": args.questions, "rows": rows, "verdict": "met" if ok_time and ok_mem else "missed",
            "total_min": round(total / 60, 1), "peak_gb": round(peak, 1),
            "without_write_s": round(measured_total, 1),
        }, what="benchmarks/quit_scale.py at full size" if not scale else f"benchmarks/quit_scale.py{scale}",
            script="benchmarks/quit_scale.py")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
