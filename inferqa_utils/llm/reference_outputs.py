"""Reference outputs: what a run's model calls returned, as one file another clone can check and reuse.

:func:`export` writes the rows of an LLM cache (:class:`~inferqa_utils.llm.cache.GenerationCache`)
that carry their request — the call's canonical JSON: model identity with its checksum, prompt,
operation, decoding parameters (:func:`~inferqa_utils.llm.cache.request_blob`) — as gzip-compressed
JSON lines sorted by key, one ``{"key", "model", "op", "request", "value"}`` per call, and beside
it ``<file>.manifest.json``: the file's sha256, its entry count per model and operation, and what
the caller adds (commit, date, machine, the host's LLM rates). Rows without a request (a cache
written before requests were stored) cannot be checked and are left out (counted in the manifest).

:func:`load` refuses, before anything is written, a file whose sha256 is not the manifest's
(corrupted, or another file than the manifest describes) and an entry whose key is not the sha256
of its request or whose model is not its request's, naming the file and the entry (its line).
:func:`install` adds the entries a cache does not hold yet; a later run then replays them: greedy
decoding with one llama.cpp build gives the same tokens on every host of a kind, and a prompt the
code changed has another key, so it misses and is computed.

    >>> from inferqa_utils.llm.cache import key_of, request_blob
    >>> r = request_blob("m@sha256:ab", [{"role": "user", "content": "hi"}], "chat", {"max_tokens": 4})
    >>> entry_problem({"key": key_of(r), "model": "m@sha256:ab", "op": "chat", "request": r, "value": "x"})
    ''
    >>> entry_problem({"key": "0" * 64, "model": "m@sha256:ab", "op": "chat", "request": r, "value": "x"})
    'its key is not the sha256 of its request'
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.atomic import write_bytes_atomic, write_text_atomic
from ..core.errors import DataFormatError
from .cache import GenerationCache, key_of

KIND = "inferqa-reference-outputs"
SCHEMA = 1
FIELDS = ("key", "model", "op", "request", "value")


def manifest_path(path: str | Path) -> Path:
    """``<file>.manifest.json`` beside the outputs file."""
    path = Path(path)
    return path.with_name(path.name + ".manifest.json")


def export(cache: GenerationCache, out: str | Path, about: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Write the cache's rows that carry a request to ``out`` (gzip JSON lines, sorted by key,
    byte-identical for identical rows) and its manifest; returns the manifest."""
    rows = cache.rows()
    kept = [r for r in rows if r[4]]
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz:
        for key, model, op, value, request in kept:
            line = json.dumps({"key": key, "model": model, "op": op, "request": request,
                               "value": json.loads(value)}, ensure_ascii=False, separators=(",", ":"))
            gz.write(line.encode("utf-8") + b"\n")
    data = buf.getvalue()
    out = write_bytes_atomic(out, data)
    manifest = {
        "kind": KIND, "schema": SCHEMA, "file": out.name, "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data), "entries": len(kept), "left_out_without_request": len(rows) - len(kept),
        "models": dict(sorted(Counter(r[1] for r in kept).items())),
        "ops": dict(sorted(Counter(r[2] for r in kept).items())),
        **dict(about or {}),
    }
    write_text_atomic(manifest_path(out), json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    return manifest


def entry_problem(entry: Mapping[str, Any]) -> str:
    """Why an entry cannot be trusted (``""`` when it can): a missing field, a key that is not the
    sha256 of the request, a model or operation that is not the request's."""
    missing = [f for f in FIELDS if f not in entry]
    if missing:
        return f"no field {missing[0]!r}"
    if not isinstance(entry["request"], str) or key_of(entry["request"]) != entry["key"]:
        return "its key is not the sha256 of its request"
    try:
        request = json.loads(entry["request"])
    except ValueError:
        return "its request is not JSON"
    if request.get("model") != entry["model"] or request.get("op") != entry["op"]:
        return "its model or operation is not its request's"
    return ""


def load_manifest(path: str | Path) -> dict[str, Any]:
    """The manifest of an outputs file (``<file>.manifest.json``), refused when it is not one."""
    path = Path(path)
    mpath = manifest_path(path)
    try:
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataFormatError(mpath, f"cannot read the manifest of {path.name} ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("kind") != KIND or manifest.get("schema") != SCHEMA:
        raise DataFormatError(mpath, f"not a manifest of reference outputs (kind {KIND!r}, schema {SCHEMA})")
    return manifest


def load(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The manifest and the entries of an outputs file, every check of the module docstring passed
    (:class:`~inferqa_utils.core.errors.DataFormatError` naming the file, the entry and the field
    otherwise)."""
    path = Path(path)
    manifest = load_manifest(path)
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != manifest.get("sha256"):
        raise DataFormatError(path, f"sha256 {digest} is not the manifest's {manifest.get('sha256')}: "
                                    "the file is corrupted or is not the one the manifest describes",
                              field="sha256")
    try:
        lines = gzip.decompress(data).decode("utf-8").splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise DataFormatError(path, f"not gzip-compressed JSON lines ({exc})") from None
    entries = []
    for n, line in enumerate(lines, 1):
        try:
            entry = json.loads(line)
        except ValueError as exc:
            raise DataFormatError(path, f"not JSON ({exc})", record=f"line {n}") from None
        problem = entry_problem(entry) if isinstance(entry, dict) else "not an object"
        if problem:
            raise DataFormatError(path, problem, record=f"line {n}", field="key")
        entries.append(entry)
    if len(entries) != manifest.get("entries"):
        raise DataFormatError(path, f"{len(entries)} entries, the manifest says {manifest.get('entries')}",
                              field="entries")
    return manifest, entries


def install(path: str | Path, cache: GenerationCache) -> dict[str, int]:
    """Add the outputs file's entries the cache does not hold (all checked first, :func:`load`);
    returns ``{"entries", "added", "present"}``."""
    _manifest, entries = load(path)
    added = cache.put_many((e["key"], e["model"], e["op"], json.dumps(e["value"], ensure_ascii=False),
                            e["request"]) for e in entries)
    return {"entries": len(entries), "added": added, "present": len(entries) - added}


#: a recomputed score (log-probabilities of given continuations) agrees when it puts the same
#: continuation first — what the pipeline decides from it — and each log-probability is within this
#: many nats of the shipped one. Exact equality is not to be had: in a run, llama.cpp evaluates a
#: prompt after a prefix it reused from its KV cache, and its CPU kernels sum in another order for
#: another batch shape, which moves a log-probability by up to a few tenths of a nat (measured on the
#: default run's outputs: qwen2.5-coder-0.5b yes/no scores median 0.005, largest 0.065 of 30;
#: qwen2.5-coder-1.5b 11-way scores median 0.18, largest 0.33 of 8), while another model or prompt moves
#: them by nats. The same numerics can, rarely, turn a near tie between two tokens the other way,
#: and a greedy reply then goes on differently: a reply agrees when it is identical, or when the
#: shipped reply, forced token by token, is on this host's greedy path up to steps at which its token
#: is within this many nats of the most likely one (:meth:`LlamaCppLLM.greedy_gap
#: <inferqa_utils.llm.llamacpp.LlamaCppLLM.greedy_gap>`); such near ties are counted apart.
SCORE_TOLERANCE = 0.5


def shipped_path(dataset: str, root: str | Path | None = None) -> Path:
    """Where a dataset's reference outputs ship: ``data/<dataset>/reference_outputs.jsonl.gz``,
    beside the dataset release (``data/<dataset>/release``) they were computed on."""
    from ..core.config import PATHS

    return Path(root if root is not None else PATHS.root) / "data" / dataset / "reference_outputs.jsonl.gz"


def sample(entries: list[dict[str, Any]], n: int, seed: int) -> list[dict[str, Any]]:
    """A seeded sample of ``n`` entries, stratified by (model, operation): every stratum gets one
    entry when ``n`` allows, the rest in proportion to the strata's sizes (largest remainders);
    within a stratum, a seeded uniform draw. Returned grouped by model (one model load each).

    >>> es = [{"key": str(i), "model": "a" if i < 8 else "b", "op": "chat"} for i in range(10)]
    >>> [e["model"] for e in sample(es, 4, 13)]
    ['a', 'a', 'a', 'b']
    """
    import random

    strata: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for e in sorted(entries, key=lambda e: e["key"]):
        strata.setdefault((e["model"], e["op"]), []).append(e)
    n = max(0, min(n, len(entries)))
    take = dict.fromkeys(strata, 0)
    if n >= len(strata):
        take = dict.fromkeys(strata, 1)
    left = n - sum(take.values())
    if left > 0:
        room = {k: len(v) - take[k] for k, v in strata.items()}
        total = sum(room.values())
        exact = {k: left * room[k] / total for k in strata}
        for k in strata:
            take[k] += int(exact[k])
        rest = n - sum(take.values())
        for k in sorted(strata, key=lambda k: (-(exact[k] - int(exact[k])), k))[:rest]:
            take[k] += 1
    elif n < len(strata):
        for k in sorted(strata, key=lambda k: (-len(strata[k]), k))[:n]:
            take[k] = 1
    rng = random.Random(seed)
    out = []
    for k in sorted(strata):
        out += rng.sample(strata[k], take[k])
    return out


def model_names_by_identity() -> dict[str, str]:
    """The registry's GGUF models by the identity that keys their outputs (their sha256)."""
    from ..core import models

    out = {}
    for name in models.all_names():
        spec = models.get_spec(name)
        if spec.kind == "gguf" and spec.sha256:
            out[spec.sha256] = name
    return out


def agree(op: str, shipped: Any, got: Any, tolerance: float = SCORE_TOLERANCE) -> tuple[bool, float | None]:
    """Whether a recomputed value agrees with the shipped one: identical text for ``chat``; for
    ``score``, as many log-probabilities, the same one highest and each within ``tolerance``
    (:data:`SCORE_TOLERANCE`); the largest difference is returned for a score.

    >>> agree("chat", "Paris", "Paris"), agree("score", [-0.5, -1.0], [-0.53, -1.0])
    ((True, None), (True, 0.030000000000000027))
    >>> agree("score", [-0.5, -0.6], [-0.7, -0.6])[0]
    False
    """
    if op != "score":
        return shipped == got, None
    if not isinstance(shipped, list) or not isinstance(got, list) or len(shipped) != len(got) or not got:
        return False, None
    diff = max(abs(float(a) - float(b)) for a, b in zip(shipped, got, strict=True))
    first = max(range(len(got)), key=got.__getitem__)
    same_first = first == max(range(len(shipped)), key=shipped.__getitem__)
    return same_first and diff <= tolerance, diff


def verify(path: str | Path, n: int, seed: int, log: Any = print,
           rates: Mapping[str, Mapping[str, float]] | None = None) -> dict[str, Any]:
    """Recompute a seeded sample of ``n`` entries of an outputs file on this host (:func:`sample`;
    the file checked first, :func:`load`) with the registry's models in process, without the cache,
    and compare (:func:`agree`). ``rates`` (per model name, ``prefill_tok_s``/``decode_tok_s``, e.g.
    the rates a run measured) give the ETA printed before the first call; after each call the ETA
    is re-estimated from the seconds per prompt token so far. Returns the counts, the time, the
    largest score difference and every disagreement (key, model, op, shipped, got)."""
    import time

    from . import load_llm

    manifest, entries = load(path)
    picked = sample(entries, n, seed)
    names = model_names_by_identity()
    unknown = sorted({e["model"] for e in picked if e["model"] not in names})
    if unknown:
        raise DataFormatError(Path(path), "entries of models the registry does not know: "
                              f"{', '.join(unknown)}", field="model")
    chars = [len(json.loads(e["request"])["prompt"]) for e in picked]
    eta = None
    if rates and all(names[e["model"]] in rates for e in picked):
        # about 4 characters per token for these models' tokenizers on English text: the prompt
        # prefilled, a reply as long as the shipped one decoded
        eta = sum(c / 4 / float(rates[names[e["model"]]]["prefill_tok_s"])
                  + (len(e["value"]) / 4 / float(rates[names[e["model"]]]["decode_tok_s"])
                     if isinstance(e["value"], str) else 0.0)
                  for c, e in zip(chars, picked, strict=True))
    by_model = Counter(names[e["model"]] for e in picked)
    log(f"[verify] {len(picked)} of {len(entries)} entries of {Path(path).name} (seed {seed}): "
        + ", ".join(f"{m} {k}" for m, k in sorted(by_model.items()))
        + (f"; ETA {eta:.0f} s at this host's measured LLM rates" if eta is not None else ""))
    t0 = time.perf_counter()
    done_chars = 0
    agreed, disagreements, max_diff, near_ties = 0, [], 0.0, 0
    models: dict[str, Any] = {}
    load_s = 0.0
    for i, (e, c) in enumerate(zip(picked, chars, strict=True), 1):
        name = names[e["model"]]
        if name not in models:
            t = time.perf_counter()
            # every prompt evaluated whole (no prefix reused): the result does not depend on the sample
            models[name] = load_llm(name, backend="llamacpp", use_cache=False, shared=False,
                                    prefix_reuse=False)
            load_s += time.perf_counter() - t
        request = json.loads(e["request"])
        got = models[name].recompute(request)
        ok, diff = agree(e["op"], e["value"], got)
        if not ok and e["op"] == "chat" and isinstance(e["value"], str):
            # another reply: is the shipped one this model's greedy path up to near ties?
            diff = models[name].greedy_gap(request, e["value"])
            ok = diff <= SCORE_TOLERANCE
            near_ties += ok
        if diff is not None and e["op"] == "score":
            max_diff = max(max_diff, diff)
        if ok:
            agreed += 1
        else:
            disagreements.append({"key": e["key"], "model": name, "op": e["op"], "shipped": e["value"],
                                  "got": got})
        done_chars += c
        spent = time.perf_counter() - t0
        left = spent / done_chars * (sum(chars) - done_chars) if done_chars else 0.0
        tie = e["op"] == "chat" and got != e["value"]
        log(f"[verify] {i}/{len(picked)} {name} {e['op']}: {'agrees' if ok else 'DIFFERS'}"
            + (f" (largest score difference {diff:.2g})" if diff is not None and not tie else "")
            + (f" (here {got!r}; the shipped {e['value']!r} is at most {diff:.2g} nats below this host's "
               "greedy choice at any of its steps)" if tie else "")
            + f"; {spent:.0f} s, ETA {left:.0f} s")
    for llm in models.values():
        llm.close()
    seconds = time.perf_counter() - t0
    log(f"[verify] {agreed} of {len(picked)} agree (chat: identical text, or, {near_ties} here, the shipped "
        f"reply on this host's greedy path up to near ties within {SCORE_TOLERANCE:g} nats; score: the same "
        f"continuation first, each within {SCORE_TOLERANCE:g} nats, largest difference {max_diff:.2g}); "
        f"{seconds:.1f} s ({load_s:.1f} s loading models)")
    return {"file": Path(path).name, "sha256": manifest["sha256"], "entries": len(entries),
            "sampled": len(picked), "seed": seed, "agree": agreed, "near_ties": near_ties,
            "differ": len(disagreements),
            "seconds": round(seconds, 1), "load_seconds": round(load_s, 1), "max_score_difference": max_diff,
            "score_tolerance": SCORE_TOLERANCE,
            "by_model": dict(sorted(by_model.items())), "disagreements": disagreements}


def compare_cache(path: str | Path, cache: GenerationCache) -> dict[str, Any]:
    """The entries of an outputs file that a cache also holds, compared (:func:`agree`): a run that
    began from an empty cache and no warm start computed every row of its cache itself, so this
    checks the shipped outputs against a whole run at no cost. Returns ``shared``, ``identical``
    (the same JSON value), ``agree``, ``differ`` (their keys) and the largest score difference."""
    _manifest, entries = load(path)
    held = cache.get_many([e["key"] for e in entries])
    shared = identical = agreed = 0
    differ: list[str] = []
    max_diff = 0.0
    for e in entries:
        if e["key"] not in held:
            continue
        shared += 1
        got = held[e["key"]]
        identical += got == e["value"]
        ok, diff = agree(e["op"], e["value"], got)
        agreed += ok
        max_diff = max(max_diff, diff or 0.0)
        if not ok:
            differ.append(e["key"])
    return {"file": Path(path).name, "entries": len(entries), "shared": shared, "identical": identical,
            "agree": agreed, "differ": differ, "max_score_difference": max_diff}
