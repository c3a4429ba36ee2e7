"""Reference outputs (inferqa_utils.llm.reference_outputs): a real model's calls exported from its
cache, checked and installed into another cache, then replayed without a model call; a corrupted
byte, a foreign manifest and a tampered entry refused before anything is written."""

from __future__ import annotations

import gzip
import hashlib
import json
import sqlite3

import pytest

from inferqa_utils.core import models
from inferqa_utils.core.errors import DataFormatError
from inferqa_utils.llm import reference_outputs as ro
from inferqa_utils.llm.cache import GenerationCache
from inferqa_utils.llm.llamacpp import LlamaCppLLM, LlamaCppSettings

NAME = "smollm2-135m"
PROMPTS = [[{"role": "user", "content": "Name a colour."}], [{"role": "user", "content": "Name a fruit."}]]


def _llm(cache: GenerationCache) -> LlamaCppLLM:
    return LlamaCppLLM(NAME, models.fetch(NAME, log=lambda s: None), models.checksum(NAME), cache=cache,
                       settings=LlamaCppSettings(n_ctx=512, prefix_reuse=False))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """SmolLM2's two greedy replies, computed into cache A and exported with a manifest."""
    folder = tmp_path_factory.mktemp("outputs")
    cache = GenerationCache(folder / "a.sqlite")
    llm = _llm(cache)
    replies = llm.chat(PROMPTS, max_tokens=8, progress=False)
    assert llm.stats.model_calls == 2
    manifest = ro.export(cache, folder / "outputs.jsonl.gz", {"commit": "test"})
    return folder, replies, manifest


def test_exported_calls_are_replayed_without_a_model_call(exported, tmp_path):
    folder, replies, manifest = exported
    assert (manifest["entries"], manifest["ops"], manifest["commit"]) == (2, {"chat": 2}, "test")
    assert list(manifest["models"]) == [_llm(GenerationCache(tmp_path / "x.sqlite")).identity]
    cache = GenerationCache(tmp_path / "b.sqlite")
    assert ro.install(folder / "outputs.jsonl.gz", cache) == {"entries": 2, "added": 2, "present": 0}
    assert ro.install(folder / "outputs.jsonl.gz", cache) == {"entries": 2, "added": 0, "present": 2}
    llm = _llm(cache)
    assert llm.chat(PROMPTS, max_tokens=8, progress=False) == replies
    assert (llm.stats.model_calls, llm.stats.cache_hits) == (0, 2)
    # a prompt the code changed has another key: it misses and is computed
    assert llm.chat([[{"role": "user", "content": "Name an animal."}]], max_tokens=8, progress=False)
    assert llm.stats.model_calls == 1


def test_a_corrupted_byte_or_a_foreign_manifest_is_refused_before_anything_is_written(exported, tmp_path):
    folder, _replies, manifest = exported
    data = bytearray((folder / "outputs.jsonl.gz").read_bytes())
    data[len(data) // 2] ^= 0x01
    bad = tmp_path / "outputs.jsonl.gz"
    bad.write_bytes(bytes(data))
    ro.manifest_path(bad).write_text(ro.manifest_path(folder / "outputs.jsonl.gz").read_text())
    cache = GenerationCache(tmp_path / "c.sqlite")
    with pytest.raises(DataFormatError, match="is corrupted or is not the one the manifest describes") as err:
        ro.install(bad, cache)
    assert err.value.file == str(bad) and err.value.field == "sha256"
    assert len(cache) == 0
    ro.manifest_path(bad).write_text(json.dumps({**manifest, "kind": "something else"}))
    with pytest.raises(DataFormatError, match="not a manifest of reference outputs"):
        ro.load(bad)


def test_a_tampered_entry_is_named_by_its_line(exported, tmp_path):
    """The second entry's request changed (another prompt under the first prompt's key), the file's
    sha256 put in its manifest: the entry is refused by its line, nothing installed."""
    folder, _replies, manifest = exported
    lines = gzip.decompress((folder / "outputs.jsonl.gz").read_bytes()).decode().splitlines()
    second = json.loads(lines[1])
    second["request"] = second["request"].replace("Name a", "Name one")
    lines[1] = json.dumps(second)
    out = tmp_path / "outputs.jsonl.gz"
    out.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    ro.manifest_path(out).write_text(json.dumps({**manifest, "sha256": digest}))
    cache = GenerationCache(tmp_path / "d.sqlite")
    with pytest.raises(DataFormatError, match="its key is not the sha256 of its request") as err:
        ro.install(out, cache)
    assert err.value.record == "line 2" and len(cache) == 0


def test_a_cache_written_before_requests_is_migrated_and_its_rows_left_out(tmp_path):
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE cache (key TEXT PRIMARY KEY, model TEXT, op TEXT, value TEXT)")
    db.execute("INSERT INTO cache VALUES ('k', 'm', 'chat', '\"v\"')")
    db.commit()
    db.close()
    cache = GenerationCache(path)
    assert cache.get("k") == "v"
    manifest = ro.export(cache, tmp_path / "o.jsonl.gz")
    assert (manifest["entries"], manifest["left_out_without_request"]) == (0, 1)


def test_the_command_line_exports_installs_and_refuses_a_corrupted_warm_start(exported, tmp_path, monkeypatch,
                                                                               capsys):
    """``outputs export`` writes the LLM cache's outputs (``$INFERQA_LLM_CACHE``) with a manifest naming
    the commit and machine; ``outputs install`` adds them to another cache; ``run --warm`` with a
    corrupted file stops with one error line naming the file, before any run folder is made."""
    from inferqa_utils.__main__ import main
    from inferqa_utils.core.config import PATHS

    folder, _replies, _manifest = exported
    monkeypatch.setenv("INFERQA_LLM_CACHE", str(folder / "a.sqlite"))
    out = tmp_path / "cli.jsonl.gz"
    assert main(["outputs", "export", str(out)]) == 0
    written = json.loads(ro.manifest_path(out).read_text())
    assert written["entries"] == 2 and "commit" in written["commit"] and written["machine"]["cpus"] >= 1
    assert out.read_bytes() == (folder / "outputs.jsonl.gz").read_bytes()  # same rows, same bytes
    monkeypatch.setenv("INFERQA_LLM_CACHE", str(tmp_path / "other.sqlite"))
    assert main(["outputs", "install", str(out)]) == 0
    assert "2 entries checked; 2 added, 0 already in the LLM cache" in capsys.readouterr().out
    data = bytearray(out.read_bytes())
    data[-5] ^= 0xFF
    out.write_bytes(bytes(data))
    before = sorted(PATHS.executions.glob("*")) if PATHS.executions.is_dir() else []
    assert main(["run", "--profile", "smoke", "--only", "00", "--no-projection", "--warm", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: file {out}, field 'sha256': sha256 ") and "is corrupted" in err
    assert (sorted(PATHS.executions.glob("*")) if PATHS.executions.is_dir() else []) == before


def test_a_result_cached_without_its_request_gains_it_when_read(exported, tmp_path):
    """Cache rows written before requests were stored (request NULL) are left out of an export until
    a run reads them: the cache hit stores the request, and the export then holds them, checked."""
    folder, replies, _manifest = exported
    rows = GenerationCache(folder / "a.sqlite").rows()
    old = GenerationCache(tmp_path / "old.sqlite")
    assert old.put_many((k, m, op, v, None) for k, m, op, v, _r in rows) == 2
    assert ro.export(old, tmp_path / "none.jsonl.gz")["entries"] == 0
    llm = _llm(old)
    assert llm.chat(PROMPTS, max_tokens=8, progress=False) == replies and llm.stats.model_calls == 0
    manifest = ro.export(old, tmp_path / "filled.jsonl.gz")
    assert (manifest["entries"], manifest["left_out_without_request"]) == (2, 0)
    assert ro.load(tmp_path / "filled.jsonl.gz")[0]["entries"] == 2


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """SmolLM2's greedy replies and yes/no scores, computed into a cache and exported."""
    folder = tmp_path_factory.mktemp("scored")
    cache = GenerationCache(folder / "s.sqlite")
    llm = _llm(cache)
    llm.chat(PROMPTS, max_tokens=8, progress=False)
    llm.score(PROMPTS, ["Yes", "No"], progress=False)
    ro.export(cache, folder / "scored.jsonl.gz")
    return folder, cache


def test_verify_recomputes_a_sample_and_names_an_output_that_differs(scored, tmp_path):
    """The exported calls recomputed on this host agree (chat identical, scores within the
    tolerance); an output changed before export — a file consistent with its manifest, but not what
    the model returns — is named by its key, with both values."""
    folder, cache = scored
    lines: list[str] = []
    got = ro.verify(folder / "scored.jsonl.gz", 10, 13, log=lines.append)
    assert (got["sampled"], got["agree"], got["differ"]) == (4, 4, 0)
    assert got["by_model"] == {NAME: 4} and got["max_score_difference"] <= ro.SCORE_TOLERANCE
    assert lines[0].startswith("[verify] 4 of 4 entries of scored.jsonl.gz (seed 13)")
    assert "4 of 4 agree" in lines[-1]
    rows = list(cache.rows())
    chat = next(r for r in rows if r[2] == "chat")
    wrong = GenerationCache(tmp_path / "wrong.sqlite")
    wrong.put_many((k, m, op, json.dumps("not what the model says") if k == chat[0] else v, r)
                   for k, m, op, v, r in rows)
    ro.export(wrong, tmp_path / "wrong.jsonl.gz")
    got = ro.verify(tmp_path / "wrong.jsonl.gz", 10, 13, log=lines.append)
    assert (got["agree"], got["differ"]) == (3, 1)
    differs = got["disagreements"][0]
    assert differs["key"] == chat[0] and differs["shipped"] == "not what the model says"


def test_a_sample_keeps_every_model_and_operation(scored):
    folder, _cache = scored
    _m, entries = ro.load(folder / "scored.jsonl.gz")
    assert sorted((e["op"]) for e in ro.sample(entries, 2, 13)) == ["chat", "score"]
    assert ro.sample(entries, 2, 13) == ro.sample(entries, 2, 13)  # seeded
    assert len(ro.sample(entries, 99, 13)) == 4


def test_the_shipped_reference_outputs_load_and_replay_on_this_host():
    """The default profile's shipped outputs (data/embedded/reference_outputs.jsonl.gz): checked
    against their manifest, computed on the shipped release, and a seeded sample of the cheapest
    calls — qwen2.5-coder-0.5b's yes/no scores and SmolLM2's replies — recomputed here agree."""
    from isolated_root import CHECKOUT

    from inferqa_utils.core.config import SEED
    from inferqa_utils.llm import load_llm

    path = ro.shipped_path("embedded", CHECKOUT)
    assert path.is_file(), f"{path} ships beside the default release (`inferqa_utils outputs export`)"
    manifest, entries = ro.load(path)
    release = CHECKOUT / "data" / "embedded" / "release" / "manifest.json"
    assert manifest["release_manifest_sha256"] == hashlib.sha256(release.read_bytes()).hexdigest(), (
        "the shipped outputs were computed on another release than data/embedded/release: export them again")
    names = ro.model_names_by_identity()
    cheap = [e for e in entries if (names.get(e["model"]), e["op"]) in
             {("qwen2.5-coder-0.5b", "score"), ("smollm2-135m", "chat")}]
    for e in ro.sample(cheap, 3, SEED):
        llm = load_llm(names[e["model"]], backend="llamacpp", use_cache=False, prefix_reuse=False,
                       shared=False)
        ok, diff = ro.agree(e["op"], e["value"], llm.recompute(json.loads(e["request"])))
        llm.close()
        assert ok, f"{path.name} entry {e['key']} ({names[e['model']]} {e['op']}) differs here ({diff})"


def test_a_run_that_computed_its_outputs_is_compared_with_the_shipped_file_at_no_cost(scored, tmp_path):
    """compare_cache: the calls a file and a cache share, compared without a model call; a cache
    value that is not the file's is named by its key."""
    folder, cache = scored
    got = ro.compare_cache(folder / "scored.jsonl.gz", cache)
    assert (got["entries"], got["shared"], got["identical"], got["agree"], got["differ"]) == (4, 4, 4, 4, [])
    rows = list(cache.rows())
    score = next(r for r in rows if r[2] == "score")
    other = GenerationCache(tmp_path / "other.sqlite")
    kept = [*[r for r in rows if r[0] != score[0]][:2], score]
    other.put_many((k, m, op, json.dumps([0.0, -9.0]) if k == score[0] else v, r) for k, m, op, v, r in kept)
    got = ro.compare_cache(folder / "scored.jsonl.gz", other)
    assert (got["shared"], got["identical"], got["differ"]) == (3, 2, [score[0]])


def test_a_reply_is_measured_against_this_hosts_greedy_path(scored):
    """greedy_gap: 0 for the model's own greedy reply (forced token by token, ending where it ended),
    nats for a reply it would not give — what tells a near tie from another output."""
    from inferqa_utils.llm.cache import request_blob

    _folder, _cache = scored
    llm = _llm(None)
    reply = llm.chat(PROMPTS[:1], max_tokens=8, progress=False)[0]
    request = json.loads(request_blob(llm.identity, llm.render(PROMPTS[0]), "chat",
                                      {"max_tokens": 8, "stop": [], "decoding": "greedy"}))
    assert llm.recompute(request) == reply
    assert llm.greedy_gap(request, reply) == 0.0
    junk = "Photosynthesis of zebras happens at dawn beside the lake"  # ≥ 8 tokens: no end step
    assert len(llm.tokenize(junk, prompt=False)) >= 8
    assert llm.greedy_gap(request, junk) > ro.SCORE_TOLERANCE
