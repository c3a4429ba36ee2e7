"""Server throughput: the same reader prompts through ``ServerLLM`` at 1 request in flight vs many.

Starts llama.cpp's own ``llama-server`` (built by ``make llama-server`` into
``build/llama-server/bin/``; see ``scripts/build_llama_server.sh``) on 127.0.0.1 with parallel
slots (``-np``, continuous batching, ``-c`` = slots × per-slot context) on a packaged GGUF, waits
for ``/health``, then sends the same N generation prompts — the few-shot reader prompt
(``reader_messages``, paper 000 A.4) over a real hint passage of each question of the embedded
dataset, greedy, ``max_tokens`` = the reader's 32 — through ``ServerLLM`` with concurrency 1 and
then with ``--concurrency``. No generation cache, and the server's slots are erased before each
run, so neither run reuses the other's work (within a run, llama-server's per-slot prompt cache
reuses the shared few-shot prefix, as it would in a real batch).

Prints requests/s and generated tokens/s for each run, the ratio, and how many raw and
post-processed answers are identical between the two runs (llama.cpp's kernels compute a batch
of several sequences in other splits than one sequence, which can flip a greedy token). The
server is always stopped (also on Ctrl-C or SIGTERM); exit status 2 when the binary or model is
missing, 1 when the server does not start or a request fails.

    make llama-server    # once: builds build/llama-server/bin/llama-server (not part of make test)
    .venv/bin/python benchmarks/server_throughput.py [--n 64] [--concurrency 8] [--model qwen2.5-coder-1.5b]

``--workload explain`` sends generation-heavy prompts instead (the same questions and passages,
asking for an explanation of about 80 words; use ``--max-tokens 96``): it separates what batching
does for token generation from what it cannot do for prompt evaluation, which dominates the reader
workload (about 110 new prompt tokens and 5 generated per request).

Target: >= 2x requests/s at 8 in flight vs 1 on 2 cores, the same answers.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inferqa_utils.answering.prompts import reader_messages
from inferqa_utils.answering.reader import MAX_NEW_TOKENS, postprocess
from inferqa_utils.core import models
from inferqa_utils.core.config import PATHS
from inferqa_utils.ir.datamodel import join_hints
from inferqa_utils.llm.base import Messages
from inferqa_utils.llm.http_settings import HTTPSettings
from inferqa_utils.llm.server import ServerError, ServerLLM
from inferqa_utils.record.benchmark_record import RECORD_HELP, record_measurement
from inferqa_utils.sources import load_source

#: where ``scripts/build_llama_server.sh`` puts the binary
DEFAULT_BINARY = PATHS.build / "llama-server" / "bin" / "llama-server"
DEFAULT_MODEL = "qwen2.5-coder-1.5b"
TARGET_RATIO = 2.0
WORKLOADS = ("reader", "explain")
#: the generation-heavy prompt of ``--workload explain`` (the reader's passage, a long answer)
EXPLAIN_PROMPT = ("Hints about an unknown answer: {passage}\n\nQuestion: {question}\n"
                  "Explain in about 80 words which answer the hints point to and why, citing the hints.")


class BenchmarkError(RuntimeError):
    """The server could not be started or the benchmark could not run; ``code`` is the exit status."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


# ---------------------------------------------------------------------------------------- inputs
def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line (see ``--help``)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=64, help="prompts per run (default 64)")
    ap.add_argument("--record", metavar="PATH",
                    help=RECORD_HELP + "; this run is one row of its table, beside the rows of other runs "
                    "the record holds from the same commit")
    ap.add_argument("--concurrency", type=int, default=8,
                    help="requests in flight in the concurrent run (default 8); the other run uses 1")
    ap.add_argument("--slots", type=int, default=None,
                    help="llama-server parallel slots, -np (default: --concurrency)")
    ap.add_argument("--model", default=DEFAULT_MODEL,
                    help=f"a registered GGUF model name (packaged models live in {PATHS.models}) or a path "
                         f"to a .gguf file (default {DEFAULT_MODEL})")
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    ap.add_argument(
        "--binary", type=Path, default=DEFAULT_BINARY,
        help=f"the llama-server executable (default {DEFAULT_BINARY}, built by make llama-server)",
    )
    ap.add_argument(
        "--threads", type=int, default=os.cpu_count() or 1, help="server CPU threads (default: all)"
    )
    ap.add_argument("--ctx-per-slot", type=int, default=2048,
                    help="context tokens per slot; the server gets -c slots x this (default 2048)")
    ap.add_argument(
        "--hints", type=int, default=5, help="hints per passage (default 5, a question's full passage)"
    )
    ap.add_argument("--max-tokens", type=int, default=MAX_NEW_TOKENS,
                    help=f"generated tokens per request (default {MAX_NEW_TOKENS}, the reader's)")
    ap.add_argument(
        "--workload", choices=WORKLOADS, default="reader",
        help="reader: the few-shot reader prompt (short answers, prompt-bound); explain: the same "
        "question and passage, asking for an ~80-word explanation (generation-bound; pair it "
        "with --max-tokens 96)",
    )
    ap.add_argument(
        "--source", default="embedded", help="dataset of the questions and hints (default embedded)"
    )
    ap.add_argument("--startup-timeout", type=float, default=300.0,
                    help="seconds to wait for /health (default 300)")
    ap.add_argument("--server-log", type=Path, default=None,
                    help="write the server's output here (default: a temporary file, shown on failure)")
    args = ap.parse_args(argv)
    if args.n < 1 or args.concurrency < 1 or args.threads < 1 or args.hints < 1 or args.max_tokens < 1:
        ap.error("--n, --concurrency, --threads, --hints and --max-tokens must be >= 1")
    if args.slots is None:
        args.slots = args.concurrency
    if args.slots < 1:
        ap.error("--slots must be >= 1")
    if not 0 <= args.port < 65536:
        ap.error("--port must be in 0..65535")
    return args


def resolve_model(spec: str) -> tuple[Path, str]:
    """``(gguf path, served alias)`` of a registered model name or a path to a GGUF file."""
    p = Path(spec).expanduser()
    if p.suffix == ".gguf" or p.exists():
        if not p.is_file():
            raise BenchmarkError(f"model file {p} does not exist", code=2)
        return p, p.stem
    try:
        path = models.fetch(spec, log=lambda s: None)
    except Exception as e:  # unknown name, missing package, checksum mismatch
        raise BenchmarkError(f"model {spec!r}: {e}", code=2) from None
    if path.suffix != ".gguf":
        raise BenchmarkError(f"model {spec!r} is not a GGUF file ({path}); llama-server needs one", code=2)
    return path, spec


def workload(n: int, hints: int = 5, source: str = "embedded", kind: str = "reader") -> list[Messages]:
    """``n`` reader prompts: prompt i reads question i mod Q of ``source`` over a passage of its
    first ``hints`` hints; past Q questions, round r rotates the hint order by r (another real
    subset-permutation passage), so no two prompts are the same while Q × hints allows.
    ``kind="explain"``: the same question and passage in :data:`EXPLAIN_PROMPT` (a long reply)."""
    if kind not in WORKLOADS:
        raise BenchmarkError(f"unknown workload {kind!r}; one of {', '.join(WORKLOADS)}", code=2)
    ds = load_source(source)
    qs = [q for q in ds.questions.values() if q.hints]
    if not qs:
        raise BenchmarkError(f"dataset {source!r} has no question with hints", code=2)
    out: list[Messages] = []
    for i in range(n):
        q = qs[i % len(qs)]
        texts = q.hint_texts[:hints]
        r = (i // len(qs)) % len(texts)
        order = list(range(r, len(texts))) + list(range(r))
        passage = join_hints(texts, order)
        out.append(reader_messages(q.question, passage) if kind == "reader" else
                   [{"role": "user", "content": EXPLAIN_PROMPT.format(passage=passage, question=q.question)}])
    return out


# ---------------------------------------------------------------------------------------- server
def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_help(binary: Path) -> str:
    """``llama-server --help`` (its options differ between llama.cpp versions)."""
    try:
        r = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BenchmarkError(f"cannot run {binary}: {e}", code=2) from None
    return r.stdout + r.stderr


def server_command(binary: Path, model: Path, alias: str, port: int, slots: int, ctx_per_slot: int,
                   threads: int, slot_dir: Path | None = None, help_text: str = "") -> list[str]:
    """The llama-server command line for this benchmark.

    127.0.0.1; ``slots`` parallel slots sharing ``-c slots × ctx_per_slot`` context tokens;
    continuous batching. Options that only some llama.cpp versions have are added when
    ``help_text`` (``llama-server --help``) lists them: ``--cont-batching`` (on by default where it
    exists), ``--metrics`` (prompt tokens evaluated per run), ``--cache-ram 0`` (no host-memory
    prompt cache, which could serve the second run the first run's prompts) and
    ``--slot-save-path slot_dir`` (enables the ``/slots`` erase action between runs)."""
    cmd = [str(binary), "-m", str(model), "--alias", alias, "--host", "127.0.0.1", "--port", str(port),
           "-np", str(slots), "-c", str(slots * ctx_per_slot), "-t", str(threads)]
    if "--cont-batching" in help_text:
        cmd.append("--cont-batching")
    if "--metrics" in help_text:
        cmd.append("--metrics")
    if "--cache-ram" in help_text:
        cmd += ["--cache-ram", "0"]
    if slot_dir is not None and "--slot-save-path" in help_text:
        cmd += ["--slot-save-path", str(slot_dir)]
    return cmd


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the server gets SIGKILL if this process dies without stopping it (e.g. SIGKILL)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def log_tail(path: Path, lines: int = 25) -> str:
    """The last ``lines`` lines of the server log."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no server log)"


def wait_health(base_url: str, proc: subprocess.Popen, timeout: float, log: Path) -> float:
    """Poll ``GET /health`` until 200 (503 while the model loads); seconds waited. A
    :class:`BenchmarkError` when the process exits or ``timeout`` passes first."""
    import httpx

    t0 = time.perf_counter()
    while True:
        if proc.poll() is not None:
            raise BenchmarkError(f"llama-server exited with status {proc.returncode} before it was healthy; "
                                 f"its log ({log}):\n{log_tail(log)}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(base_url + "/health", timeout=2).status_code == 200:
                return time.perf_counter() - t0
        if time.perf_counter() - t0 > timeout:
            raise BenchmarkError(
                f"llama-server not healthy after {timeout:.0f} s; its log ({log}):\n{log_tail(log)}"
            )
        time.sleep(0.25)


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL after 15 s."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


@contextlib.contextmanager
def running_server(cmd: list[str], port: int, log: Path, timeout: float) -> Iterator[str]:
    """Start ``cmd``, wait for health, yield its base URL; the server is stopped on exit, always."""
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT,
                                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
    try:
        base_url = f"http://127.0.0.1:{port}"
        waited = wait_health(base_url, proc, timeout, log)
        print(f"server healthy after {waited:.1f} s (pid {proc.pid}, log {log})", flush=True)
        yield base_url
    finally:
        stop(proc)
        print(f"server stopped (exit status {proc.returncode})", flush=True)


def erase_slots(base_url: str, slots: int) -> bool:
    """Empty every slot's KV cache (``POST /slots/{id}?action=erase``); False if unsupported."""
    import httpx

    ok = True
    for i in range(slots):
        try:
            r = httpx.post(f"{base_url}/slots/{i}", params={"action": "erase"}, timeout=30)
            ok = ok and r.status_code == 200
        except httpx.HTTPError:
            ok = False
    return ok


def server_metrics(base_url: str) -> dict[str, float]:
    """The ``llamacpp:*`` counters of ``GET /metrics`` (empty when the server has no metrics)."""
    import httpx

    try:
        r = httpx.get(base_url + "/metrics", timeout=30)
    except httpx.HTTPError:
        return {}
    if r.status_code != 200:
        return {}
    return parse_metrics(r.text)


def parse_metrics(text: str) -> dict[str, float]:
    """``{name: value}`` of the ``llamacpp:<name> <value>`` lines of a Prometheus text page."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("llamacpp:"):
            name, _, value = line[len("llamacpp:"):].partition(" ")
            with contextlib.suppress(ValueError):
                out[name] = float(value.split()[0])
    return out


def server_version(binary: Path) -> str:
    """The first line of ``llama-server --version`` that names the version."""
    try:
        r = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    lines = [ln.strip() for ln in (r.stdout + r.stderr).splitlines() if "version" in ln.lower()]
    return lines[0] if lines else "unknown"


# ---------------------------------------------------------------------------------------- runs
@dataclass
class RunResult:
    """One pass over the workload."""

    concurrency: int
    answers: list[str]
    seconds: float
    generated_tokens: int
    prompt_tokens: int
    retries: int
    #: differences of the server's ``/metrics`` counters over the run (empty without metrics)
    server: dict[str, float] = field(default_factory=dict)

    @property
    def requests_per_s(self) -> float:
        return len(self.answers) / self.seconds

    @property
    def tokens_per_s(self) -> float:
        return self.generated_tokens / self.seconds


def run_once(
    base_url: str, alias: str, prompts: list[Messages], concurrency: int, max_tokens: int
) -> RunResult:
    """Send every prompt through a fresh ``ServerLLM`` without generation cache; a
    :class:`BenchmarkError` when a request fails."""
    llm = ServerLLM(alias, HTTPSettings(base_url, concurrency=concurrency, timeout=600.0), cache=None)
    before = server_metrics(base_url)
    try:
        t0 = time.perf_counter()
        answers = llm.chat(prompts, max_tokens=max_tokens, progress=False)
        dt = time.perf_counter() - t0
    except ServerError as e:
        raise BenchmarkError(f"a request failed at concurrency {concurrency}: {e}") from None
    finally:
        llm.close()
    after = server_metrics(base_url)
    s = llm.stats
    if s.model_calls != len(prompts) or s.cache_hits:
        raise BenchmarkError(f"expected {len(prompts)} model calls and no cache hit, got {s.model_calls} and "
                             f"{s.cache_hits}")
    server = {k: after[k] - before.get(k, 0.0) for k in after if k.endswith("_total")}
    return RunResult(concurrency, answers, dt, s.generated_tokens, s.prompt_tokens, s.retries, server)


def prime_slots(base_url: str, alias: str, prompts: list[Messages], max_tokens: int) -> None:
    """Empty every slot, then run one prompt per slot at once (each lands in its own idle slot),
    so each run starts with every slot holding the shared few-shot prefix: the steady state of a
    long batch, the same for both runs. Not timed. ``prompts`` are not among the measured ones."""
    if not erase_slots(base_url, len(prompts)):
        print("warning: this llama-server cannot erase slots (/slots?action=erase); runs start from the "
              "previous run's slot state", flush=True)
    run_once(base_url, alias, prompts, len(prompts), max_tokens)


def describe_run(r: RunResult, n: int) -> str:
    """One line per run: requests/s, tokens/s, and the server's view when it has metrics."""
    line = (f"concurrency {r.concurrency:>2}: {n} requests in {r.seconds:7.1f} s = {r.requests_per_s:6.3f} "
            f"requests/s, {r.tokens_per_s:6.1f} generated tokens/s ({r.generated_tokens / n:.1f} generated, "
            f"{r.prompt_tokens / n:.0f} prompt tokens per request; {r.retries} retries)")
    m = r.server
    if m:
        line += (
            f"\n                server: {m.get('prompt_tokens_total', 0) / n:.0f} prompt tokens evaluated "
            "and "
            f"{m.get('prompt_tokens_cached_total', 0) / n:.0f} reused from a slot's cache per request, "
            f"{m.get('n_decode_total', 0):.0f} llama_decode calls"
        )
    return line


def compare(a: RunResult, b: RunResult) -> dict[str, Any]:
    """Ratio of requests/s (b over a) and identical raw / post-processed answers."""
    return {"ratio": b.requests_per_s / a.requests_per_s,
            "identical_raw": sum(x == y for x, y in zip(a.answers, b.answers, strict=True)),
            "identical_answers": sum(postprocess(x) == postprocess(y)
                                     for x, y in zip(a.answers, b.answers, strict=True)),
            "n": len(a.answers)}


def _sigterm(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; the exit status."""
    args = parse_args(argv)
    previous = signal.signal(signal.SIGTERM, _sigterm)  # so the finally blocks stop the server
    try:
        return _main(args)
    except BenchmarkError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)


def _main(args: argparse.Namespace) -> int:
    binary: Path = args.binary
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        raise BenchmarkError(f"no llama-server executable at {binary}; build it with `make llama-server` "
                             "(scripts/build_llama_server.sh) or pass --binary", code=2)
    model, alias = resolve_model(args.model)
    everything = workload(args.n + args.slots, args.hints, args.source, args.workload)
    prompts, primers = everything[:args.n], everything[args.n:]
    port = args.port or free_port()
    with tempfile.TemporaryDirectory(prefix="inferqa-llama-server-") as tmp:
        log = args.server_log or Path(tmp) / "server.log"
        slot_dir = Path(tmp) / "slots"
        slot_dir.mkdir()
        cmd = server_command(
            binary, model, alias, port, args.slots, args.ctx_per_slot, args.threads, slot_dir,
            server_help(binary),
        )
        print(f"llama-server {server_version(binary)}: {model.name} as {alias!r}, {args.slots} slots, "
              f"-c {args.slots * args.ctx_per_slot}, {args.threads} threads, port {port}")
        print(
            f"workload: {len(prompts)} {args.workload} prompts ({args.source}, up to {args.hints}-hint "
            "passages), "
            f"greedy, max_tokens {args.max_tokens}; no generation cache; before each run the slots are "
            f"emptied and primed with {len(primers)} other {args.workload} prompts (untimed)"
        )
        print("command: " + " ".join(cmd), flush=True)
        results: list[RunResult] = []
        with running_server(cmd, port, log, args.startup_timeout) as url:
            for c in (1, args.concurrency):
                prime_slots(url, alias, primers, args.max_tokens)
                r = run_once(url, alias, prompts, c, args.max_tokens)
                results.append(r)
                print(describe_run(r, len(prompts)), flush=True)
    seq, par = results
    cmp = compare(seq, par)
    print(f"identical raw answers: {cmp['identical_raw']}/{cmp['n']}; identical post-processed answers: "
          f"{cmp['identical_answers']}/{cmp['n']}")
    print(f"RATIO concurrency {args.concurrency} / 1: {cmp['ratio']:.2f}x requests/s "
          f"(target >= {TARGET_RATIO:g}x: {'met' if cmp['ratio'] >= TARGET_RATIO else 'NOT met'})")
    if args.record:
        write_record(args, seq, par, cmp)
    return 0


def write_record(args: argparse.Namespace, seq: RunResult, par: RunResult, cmp: dict[str, Any]) -> None:
    """This run as one row of the record ``args.record`` (the table of docs/benchmarks.md): the rows of
    other models or workloads are kept when the record was measured at the same commit."""
    import json

    from inferqa_utils.record.manifest import git_commit

    n = len(seq.answers)
    workload = "reader" if args.workload == "reader" else f"{args.workload}, `--max-tokens {args.max_tokens}`"
    evaluated = seq.server.get("prompt_tokens_total")
    row = {"model": args.model, "workload": workload, "requests": n,
           "prompt_tokens": round(evaluated / n) if evaluated is not None else None,
           "generated": round(seq.generated_tokens / n, 1),
           "rps_1": round(seq.requests_per_s, 3), "rps_8": round(par.requests_per_s, 3),
           "tok_s_1": round(seq.tokens_per_s, 1), "tok_s_8": round(par.tokens_per_s, 1),
           "ratio": round(cmp["ratio"], 2), "decode_1": seq.server.get("n_decode_total"),
           "decode_8": par.server.get("n_decode_total"), "raw_identical": cmp["identical_raw"],
           "post_identical": cmp["identical_answers"]}
    path = Path(args.record)
    old = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    same_code = old.get("commit") and old.get("commit") == git_commit()["commit"]
    rows = [r for r in (old.get("values", {}).get("rows", []) if same_code else [])
            if (r.get("model"), r.get("workload")) != (args.model, workload)]
    record_measurement(path, {"slots": args.slots, "threads": args.threads, "rows": [*rows, row]},
                       what=f"benchmarks/server_throughput.py: 1 vs {args.concurrency} requests in flight",
                       script="benchmarks/server_throughput.py")


if __name__ == "__main__":
    sys.exit(main())
