"""The paper's own runs at full question count: time and memory of ``paper-runs import``.

Writes a synthetic release in the authors' exact shapes (``results/`` of the hub dataset
JamshidJDMY/InferentialQA, :mod:`inferqa_utils.paper_runs.files`): the index of ``--questions``
questions × 325 passages (labels drawn 0/1/2, three readers' single-passage answers), the five
retrievers' top ``--ctxs`` lists, ``--rerankers`` rerankers over BGE and as oracles, and a
``rag.json`` per system with the three readers' answers at Union_norm/freq, k = 1, 3, 5 — the
index and the rankings zstandard-compressed as on the hub (``.zsd``). Then it times
:func:`inferqa_utils.paper_runs.importer.import_release` into a temporary root and prints the
wall-clock seconds, the process's peak RSS and the rows written.

The answers are drawn at random (a reader is right with probability 0.1–0.6 per system, in a
random letter case 10 % of the time, so raw and normalised EM disagree); the numbers mean nothing,
the point is size, time and memory. The full release has 5 retrievers, 15 rerankers over each of
them and as oracles, and the fine-tuned systems: about 140 rag files; ``--rerankers 15`` writes
35 of them.

    .venv/bin/python benchmarks/paper_runs_scale.py [--questions 1728] [--rerankers 15] [--ctxs 100] \
        [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import tempfile
import time
from pathlib import Path

import zstandard

from inferqa_utils.paper_runs.importer import import_release
from inferqa_utils.record.benchmark_record import RECORD_HELP, record_measurement

READERS = ("llama-32-1b", "gemma-3-4b", "qwen-3-8b")
RETRIEVERS = ("bm25", "dpr", "colbert", "contriever", "bge")
RERANKERS = (
    tuple(f"monot5-monot5-{s}-msmarco-10k" for s in ("base", "large", "3b"))
    + tuple(f"rankt5-rankt5-{s}" for s in ("base", "large", "3b"))
    + tuple(f"lit5dist-LiT5-Distill-{s}-v2" for s in ("base", "large", "xl"))
    + (
        "rankgpt-Llama-3.1-8B-Instruct", "rankgpt-Qwen2.5-7B", "upr-gpt2-large", "upr-t0-3b", "upr-t5-large",
        "upr-t5-small",
    )
)
MASKS = [format(m, "05b") for m in range(1, 32)]


def pool(qid: str) -> list[str]:
    """The 325 passage ids of a question: every ordering of every non-empty subset of 5 hints."""
    from itertools import permutations

    out = []
    for mask in MASKS:
        idx = [str(i) for i, c in enumerate(mask) if c == "1"]
        out += [f"{qid}_{mask}_{''.join(p)}" for p in permutations(idx)]
    return out


def write(path: Path, text: str, compress: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if compress:
        path.with_suffix(".zsd").write_bytes(zstandard.ZstdCompressor(level=3).compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")


def make_release(root: Path, n: int, n_rerankers: int, depth: int, seed: int = 42) -> None:
    rng = random.Random(seed)
    qids = [f"quit_test_{i}" for i in range(n)]
    gold = [f"Answer {i}" for i in range(n)]
    pools = [pool(q) for q in qids]
    lines = []
    for q, g, p in zip(qids, gold, pools, strict=True):
        ctxs = [
            {
                "id": pid, "text": "Hint.", "label": rng.choice((0, 1, 1, 2)),
                "rag_answers": {r: (g if rng.random() < 0.5 else "NO ANSWER") for r in READERS},
            }
            for pid in p
        ]
        lines.append(json.dumps({"question": f"{q}?", "answers": [g], "contexts": ctxs}))
    write(root / "index/test/retriever.jsonl", "\n".join(lines) + "\n", True)

    def ranking(lists: list[list[str]], first: list[list[str]] | None = None) -> str:
        recs = []
        for i, ids in enumerate(lists):
            rec = {
                "question": f"{qids[i]}?", "answers": [gold[i]],
                "ctxs": [
                    {"id": x, "score": float(depth - j)} for j, x in enumerate(first[i] if first else ids)
                ],
            }
            if first:
                rec["reranked_ctxs"] = [{"id": x, "score": float(depth - j)} for j, x in enumerate(ids)]
            recs.append(rec)
        return json.dumps(recs)

    def rag() -> str:
        p_right = rng.uniform(0.1, 0.6)

        def answer(i: int) -> str:
            if rng.random() >= p_right:
                return "NO ANSWER"
            return gold[i].lower() if rng.random() < 0.1 else gold[i]

        return json.dumps(
            [
                {
                    "id": q, "answers": [gold[i]],
                    "predicted_answer": {
                        r: {f"{q}_{u}_{k}": answer(i) for u in ("un", "uf") for k in (1, 3, 5)}
                        for r in READERS
                    },
                }
                for i, q in enumerate(qids)
            ]
        )

    def retrieved(i: int) -> list[str]:
        own = rng.sample(pools[i], depth // 2)
        other = [rng.choice(pools[rng.randrange(n)]) for _ in range(depth)]
        return list(dict.fromkeys(own + other))[:depth]

    first = {r: [retrieved(i) for i in range(n)] for r in RETRIEVERS}
    for r in RETRIEVERS:
        write(root / f"retriever/{r}/retriever.json", ranking(first[r]), True)
        write(root / f"retriever/{r}/rag.json", rag(), False)
    for x in RERANKERS[:n_rerankers]:
        reranked = [rng.sample(ids, len(ids)) for ids in first["bge"]]
        write(root / f"retriever_reranker/bge/{x}/reranker.json", ranking(reranked, first["bge"]), True)
        write(root / f"retriever_reranker/bge/{x}/rag.json", rag(), False)
        write(
            root / f"reranker/{x}/reranker.json", ranking([rng.sample(p, len(p)) for p in pools], pools), True
        )
        write(root / f"reranker/{x}/rag.json", rag(), False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=1728)
    ap.add_argument("--rerankers", type=int, default=15)
    ap.add_argument("--ctxs", type=int, default=100)
    ap.add_argument(
        "--out", type=Path, default=None, help="where to write the release (default: a temporary folder)"
    )
    ap.add_argument("--record", metavar="PATH", help=RECORD_HELP)
    args = ap.parse_args()
    base = args.out or Path(tempfile.mkdtemp(prefix="paper-runs-scale-"))
    t0 = time.perf_counter()
    make_release(base / "release", args.questions, args.rerankers, args.ctxs)
    size = sum(p.stat().st_size for p in (base / "release").rglob("*") if p.is_file())
    write_s = time.perf_counter() - t0
    print(f"[scale] release written: {size / 1e6:.0f} MB in {write_s:.0f} s")
    usage = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    done = import_release(base / "release", root=base / "root", log=lambda s: None)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu_s = after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(
        f"[scale] import: {seconds:.0f} s, peak RSS {peak:.1f} GB; {len(done.release.questions)} questions, "
        f"{len(done.release.rankings)} rankings, {len(done.release.readings)} rag files, "
        f"{len(done.tables.answers):,} answers, {len(done.tables.findings):,} comparisons"
    )
    if args.record:
        record_measurement(args.record, {
            "questions": args.questions, "cpu_share_pct": round(100 * cpu_s / seconds),
            "release_mb": round(size / 1e6), "write_s": round(write_s), "answers": len(done.tables.answers),
            "comparisons": len(done.tables.findings), "import_s": round(seconds),
            "peak_rss_gb": round(peak, 1),
        }, what="benchmarks/paper_runs_scale.py: paper-runs import at full question count",
            script="benchmarks/paper_runs_scale.py")
    if args.out is None:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
