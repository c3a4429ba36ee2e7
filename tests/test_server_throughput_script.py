"""benchmarks/server_throughput.py: argument parsing, the llama-server command line, the
workload and the metrics parser (no server needed), its refusal without a binary, and — only where
``make llama-server`` has built the binary (never in CI) — an end-to-end run on the tiny model."""

import importlib.util
import sys
from pathlib import Path

import pytest

from inferqa_utils.answering.prompts import reader_messages
from inferqa_utils.core.config import PATHS

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "server_throughput.py"


def _load():
    spec = importlib.util.spec_from_file_location("server_throughput", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["server_throughput"] = mod  # dataclasses look their module up here
    spec.loader.exec_module(mod)
    return mod


bench = _load()


def test_arguments_defaults_and_checks():
    a = bench.parse_args([])
    assert (a.n, a.concurrency, a.slots, a.port, a.model) == (64, 8, 8, 0, "qwen2.5-coder-1.5b")
    assert a.binary == PATHS.build / "llama-server" / "bin" / "llama-server"
    a = bench.parse_args(["--n", "8", "--concurrency", "4", "--port", "8123", "--model", "smollm2-135m"])
    assert (a.n, a.concurrency, a.slots, a.port, a.model) == (8, 4, 4, 8123, "smollm2-135m")
    assert bench.parse_args(["--concurrency", "4", "--slots", "6"]).slots == 6
    for bad in (["--n", "0"], ["--concurrency", "0"], ["--port", "70000"], ["--slots", "0"]):
        with pytest.raises(SystemExit):
            bench.parse_args(bad)


def test_server_command_uses_only_the_options_the_version_has(tmp_path):
    args = dict(binary=Path("/x/llama-server"), model=Path("/m/q.gguf"), alias="q", port=8123, slots=8,
                ctx_per_slot=2048, threads=2, slot_dir=tmp_path)
    cmd = bench.server_command(**args, help_text="")
    assert cmd[:3] == ["/x/llama-server", "-m", "/m/q.gguf"]
    assert cmd[cmd.index("--host") + 1] == "127.0.0.1"
    assert cmd[cmd.index("-np") + 1] == "8" and cmd[cmd.index("-c") + 1] == str(8 * 2048)
    assert not {"--cont-batching", "--metrics", "--cache-ram", "--slot-save-path"} & set(cmd)
    full = bench.server_command(**args, help_text="-cb, --cont-batching --metrics -cram, --cache-ram N "
                                                  "--slot-save-path PATH")
    assert "--cont-batching" in full and "--metrics" in full
    assert full[full.index("--cache-ram") + 1] == "0"
    assert full[full.index("--slot-save-path") + 1] == str(tmp_path)


def test_parse_metrics():
    text = ("# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed\n"
            "# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total 1234\n"
            "llamacpp:n_decode_total 56\nllamacpp:prompt_tokens_seconds 97.5\nother 3\n")
    assert bench.parse_metrics(text) == {"prompt_tokens_total": 1234.0, "n_decode_total": 56.0,
                                         "prompt_tokens_seconds": 97.5}


def test_workload_is_real_reader_prompts_all_distinct():
    from inferqa_utils.sources import load_source

    ds = load_source("embedded")
    q = next(iter(ds.questions.values()))
    prompts = bench.workload(len(ds.questions) + 3, hints=3)
    assert prompts[0] == reader_messages(q.question, " ".join(h.strip() for h in q.hint_texts[:3]))
    # past the last question, the first question again with its hints rotated by one
    h = q.hint_texts[:3]
    assert prompts[len(ds.questions)] == reader_messages(
        q.question, " ".join(x.strip() for x in [h[1], h[2], h[0]])
    )
    keys = {repr(p) for p in prompts}
    assert len(keys) == len(prompts)


def test_explain_workload_asks_for_a_long_reply_over_the_same_passages():
    from inferqa_utils.sources import load_source

    q = next(iter(load_source("embedded").questions.values()))
    passage = " ".join(h.strip() for h in q.hint_texts[:3])
    reader = bench.workload(5, hints=3)
    explain = bench.workload(5, hints=3, kind="explain")
    assert len(explain) == 5 and len({repr(p) for p in explain}) == 5
    assert passage in reader[0][-1]["content"]
    e = explain[0]
    assert len(e) == 1 and e[0]["role"] == "user" and "about 80 words" in e[0]["content"]
    assert passage in e[0]["content"] and q.question in e[0]["content"]
    assert bench.parse_args(["--workload", "explain"]).workload == "explain"
    assert bench.parse_args([]).workload == "reader"
    with pytest.raises(SystemExit):
        bench.parse_args(["--workload", "poem"])
    with pytest.raises(bench.BenchmarkError):
        bench.workload(2, kind="poem")


def test_missing_binary_is_a_clear_error(tmp_path, capsys):
    rc = bench.main(["--binary", str(tmp_path / "no-llama-server"), "--n", "2"])
    assert rc == 2
    assert "make llama-server" in capsys.readouterr().err


@pytest.mark.slow
def test_end_to_end_on_the_tiny_model(capsys):
    """The whole benchmark against the real llama-server on SmolLM2 (81 s on the busy 2-core machine);
    the numbers are not checked."""
    if not bench.DEFAULT_BINARY.exists():
        pytest.skip(f"llama-server is not built ({bench.DEFAULT_BINARY} is absent): run `make llama-server` "
                    "(not part of make test / CI)")
    # one server thread: two OpenMP threads on a busy 2-core machine spin at every barrier (measured:
    # 143 s instead of 2 s to load SmolLM2 at a load average of 12); this is a functional test
    rc = bench.main(["--n", "4", "--concurrency", "2", "--model", "smollm2-135m", "--ctx-per-slot", "1536",
                     "--threads", "1"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "concurrency  1: 4 requests" in out and "concurrency  2: 4 requests" in out
    assert "identical raw answers:" in out and "RATIO concurrency 2 / 1:" in out
    assert "server stopped" in out
