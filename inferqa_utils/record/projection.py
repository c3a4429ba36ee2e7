"""How long a profile's run will take on this host, before it starts: measured rates × recorded tokens.

Hosts of one kind differ up to 2× in LLM rates, so a time measured elsewhere says little. A run of
a profile is recorded once on a reference host (:func:`reference_from_run`, written to
``inferqa_utils/record/reference_costs.json`` by ``benchmarks/run_cost.py --record``): per notebook its
seconds and, per model, the prompt tokens evaluated, the tokens generated and the seconds inside the
model, beside the reference host's rates. Before a run, :func:`host_rates` measures this host's rates
(:func:`measure_rates`: a 64-token prefill chunk after a cached 256-token prefix and one-token
decode steps, best of two; cached per host, llama.cpp build and model) and :func:`project` turns
the record into a projection per notebook:

    projected = Σ_models (evaluated / prefill rate + generated / decode rate) × efficiency
                + (reference seconds − reference model seconds) × slowdown

where *efficiency* is the notebook's model seconds over the same floor on the reference host (the
engine's overhead over the probe), and *slowdown* is the mean ratio of the reference host's prefill
rates to this host's (the time outside the models — retrieval, encoding, training — is taken to scale
like the models' arithmetic).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

#: the shipped record of each profile's run on its reference host
REFERENCE_FILE = Path(__file__).with_name("reference_costs.json")
#: environment variable naming another reference record (your own host's, say)
REFERENCE_ENV = "INFERQA_REFERENCE_COSTS"
#: environment variable overriding where measured host rates are cached
RATES_ENV = "INFERQA_HOST_RATES"
#: the probe's shape: tokens of the cached prefix, of the prefill chunk, decode steps, repeats (best of)
PROBE = {"prefix": 256, "chunk": 64, "steps": 16, "repeats": 2}


def measure_rates(model: str, prefix: int = PROBE["prefix"], chunk: int = PROBE["chunk"],
                  steps: int = PROBE["steps"], repeats: int = PROBE["repeats"]) -> dict[str, Any]:
    """Prefill tokens/s of a ``chunk``-token chunk after a cached ``prefix``, and decode tokens/s of
    one-token steps after it, with this process's llama.cpp build (best of ``repeats``; random
    tokens, greedy engine, nothing cached)."""
    from ..llm import load_llm

    llm = load_llm(model, use_cache=False, shared=False, n_ctx=max(1024, prefix + chunk + steps + 8))
    try:
        rng = np.random.default_rng(13)
        vocab = min(llm.n_vocab, 30000)
        base = [int(t) for t in rng.integers(1000, vocab, prefix)]
        best_pre = best_gen = 0.0
        for _ in range(repeats):
            llm.llm.n_tokens = 0
            llm._decode(base)
            extra = [int(t) for t in rng.integers(1000, vocab, chunk)]
            t0 = time.perf_counter()
            llm._decode(extra)
            best_pre = max(best_pre, chunk / (time.perf_counter() - t0))
            t0 = time.perf_counter()
            for t in rng.integers(1000, vocab, steps):
                llm._decode([int(t)])
            best_gen = max(best_gen, steps / (time.perf_counter() - t0))
    finally:
        llm.close()
    return {"prefill_tok_s": round(best_pre, 1), "decode_tok_s": round(best_gen, 1), **{
        k: v for k, v in (("prefix", prefix), ("chunk", chunk), ("steps", steps))}}


def _rates_file() -> Path:
    env = os.environ.get(RATES_ENV)
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "inferqa" / "host_rates.json"


def _host_key(model: str) -> str:
    """This host (name and boot), the llama.cpp build and the model file: rates measured under one
    key hold for them all."""
    from ..core import models

    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="utf-8").strip()
    except OSError:
        boot = ""
    try:
        import llama_cpp

        build = f"{llama_cpp.__version__}|{llama_cpp.llama_print_system_info().decode()}"
    except ImportError:  # pragma: no cover - the environment always has it
        build = ""
    try:
        identity = models.checksum(model)
    except models.ModelError:  # a model outside the registry (a server's, a test's): its name
        identity = model
    parts = [socket.gethostname(), boot, platform.machine(), build, identity, json.dumps(PROBE)]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:20]


def cached_host_rates(model_names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The rates of :func:`host_rates` already measured on this host with this build (nothing is
    measured): the models not measured yet are left out."""
    try:
        cache = json.loads(_rates_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    hits = {m: cache.get(_host_key(m)) for m in model_names} if isinstance(cache, dict) else {}
    return {m: h for m, h in hits.items()
            if isinstance(h, dict) and h.get("prefill_tok_s") and h.get("decode_tok_s")}


def host_rates(model_names: Sequence[str], log: Callable[[str], None] = print,
               measure: Callable[[str], dict[str, Any]] = measure_rates) -> dict[str, dict[str, Any]]:
    """This host's rates per model (:func:`measure_rates`), read from the cache when measured before
    on this host with this build; newly measured ones are added to it (atomically)."""
    from ..core.atomic import write_text_atomic

    path = _rates_file()
    try:
        cache = json.loads(path.read_text(encoding="utf-8"))
        cache = cache if isinstance(cache, dict) else {}
    except (OSError, ValueError):
        cache = {}
    out: dict[str, dict[str, Any]] = {}
    changed = False
    for m in model_names:
        key = _host_key(m)
        hit = cache.get(key)
        if isinstance(hit, dict) and hit.get("prefill_tok_s") and hit.get("decode_tok_s"):
            out[m] = hit
            continue
        t0 = time.perf_counter()
        rates = measure(m)
        rates["measured"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
        rates["probe_s"] = round(time.perf_counter() - t0, 1)
        log(f"[inferqa] measured {m} on this host in {rates['probe_s']:.0f} s: prefill "
            f"{rates['prefill_tok_s']} tok/s, decode {rates['decode_tok_s']} tok/s")
        out[m] = cache[key] = rates
        changed = True
    if changed:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(path, json.dumps(cache, indent=1) + "\n")
        except OSError:
            pass
    return out


def load_reference(path: str | Path | None = None) -> dict[str, Any]:
    """The reference records, ``{profile: record}``, of ``path``, else ``$INFERQA_REFERENCE_COSTS``,
    else the shipped :data:`REFERENCE_FILE` (``{}`` when the file is absent)."""
    p = Path(path or os.environ.get(REFERENCE_ENV) or REFERENCE_FILE)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError:
        return {}
    return data.get("profiles", {}) if isinstance(data, dict) else {}


def reference_from_run(manifest: Mapping[str, Any], cost_log: Sequence[Mapping[str, Any]],
                       rates: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """A profile's reference record from one complete run (its manifest and LLM cost log) and the
    rates measured on its host: per notebook its seconds and per model the tokens evaluated,
    generated and the seconds inside the model."""
    from ..llm.costs import per_stage
    from .manifest import machine_info

    per = per_stage(list(cost_log))
    notebooks: dict[str, Any] = {}
    for stem, secs in (manifest.get("timings_s") or {}).items():
        if stem == "total":
            continue
        llm = {m: {"evaluated": int(c["prompt_tokens"]), "generated": int(c["generated_tokens"]),
                   "seconds": round(float(c["seconds"]), 1)}
               for m, c in per.get(stem, {}).items() if c.get("model_calls")}
        notebooks[stem] = {"seconds": float(secs), "llm": llm}
    git = manifest.get("git") if isinstance(manifest.get("git"), dict) else {}
    return {
        "run": manifest.get("run_id"),
        "commit": (git or {}).get("commit"),
        "date": manifest.get("finished") or manifest.get("started"),
        "machine": machine_info(),
        "rates": {m: {"prefill_tok_s": r["prefill_tok_s"], "decode_tok_s": r["decode_tok_s"]}
                  for m, r in rates.items()},
        "notebooks": notebooks,
    }


def project(reference: Mapping[str, Any], rates: Mapping[str, Mapping[str, Any]],
            notebooks: Sequence[str] | None = None, replayed: bool = False) -> dict[str, float]:
    """Projected seconds per notebook stem on a host with ``rates`` (module docstring); notebooks
    the record lacks are left out. ``replayed``: a warm start from the profile's reference outputs,
    whose model calls are read from the LLM cache — only the time outside the models is projected."""
    ref_rates = reference.get("rates", {})
    ratios = [ref_rates[m]["prefill_tok_s"] / rates[m]["prefill_tok_s"]
              for m in ref_rates if m in rates and rates[m].get("prefill_tok_s")]
    slowdown = float(np.mean(ratios)) if ratios else 1.0
    out = {}
    for stem, nb in reference.get("notebooks", {}).items():
        if notebooks is not None and stem not in notebooks:
            continue
        ref_floor = host_floor = llm_s = 0.0
        for m, c in nb.get("llm", {}).items():
            if m not in ref_rates or m not in rates:
                continue
            r, h = ref_rates[m], rates[m]
            ref_floor += c["evaluated"] / r["prefill_tok_s"] + c["generated"] / r["decode_tok_s"]
            host_floor += c["evaluated"] / h["prefill_tok_s"] + c["generated"] / h["decode_tok_s"]
            llm_s += c["seconds"]
        efficiency = llm_s / ref_floor if ref_floor else 1.0
        other = max(0.0, nb["seconds"] - llm_s)
        out[stem] = round((0.0 if replayed else host_floor * efficiency) + other * slowdown, 1)
    return out


def models_of(reference: Mapping[str, Any]) -> list[str]:
    """The models whose rates a projection needs (those the reference run used)."""
    return sorted({m for nb in reference.get("notebooks", {}).values() for m in nb.get("llm", {})})


def minutes(seconds: float) -> str:
    """``"1 h 12 min"``, ``"14 min"``, ``"40 s"``."""
    s = round(seconds)
    if s < 120:
        return f"{s} s"
    h, m = divmod(round(s / 60), 60)
    return f"{h} h {m:02d} min" if h else f"{m} min"


def rate_comparison(reference: Mapping[str, Any], rates: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per model: this host's rates beside the reference host's, as ratios."""
    lines = []
    for m, r in sorted(reference.get("rates", {}).items()):
        h = rates.get(m)
        if not h:
            continue
        lines.append(
            f"{m}: prefill {h['prefill_tok_s']} tok/s, decode {h['decode_tok_s']} tok/s "
            f"({h['prefill_tok_s'] / r['prefill_tok_s']:.2f}× and "
            f"{h['decode_tok_s'] / r['decode_tok_s']:.2f}× "
            f"the reference host's {r['prefill_tok_s']} / {r['decode_tok_s']})")
    return lines


class Projection:
    """The projected run: announced before the first notebook, an ETA after each, and the
    projection against the actual seconds at the end (:meth:`summary`)."""

    def __init__(self, profile: str, reference: Mapping[str, Any] | None, rates: Mapping[str, Any],
                 stems: Sequence[str], replayed: bool = False) -> None:
        self.profile = profile
        self.reference = reference
        self.rates = dict(rates)
        self.replayed = replayed
        self.per_notebook = project(reference, rates, stems, replayed) if reference else {}
        self.stems = list(stems)
        self.actual: dict[str, float] = {}
        self.started = time.time()

    @property
    def total(self) -> float:
        return sum(self.per_notebook.values())

    def announce(self) -> list[str]:
        if not self.reference:
            return [f"[inferqa] no recorded run of profile {self.profile!r} to project its time from "
                    f"({REFERENCE_FILE.name}); the notebooks' times are printed as they finish"]
        ref = self.reference
        ref_total = sum(nb["seconds"] for s, nb in ref["notebooks"].items() if s in self.stems)
        lines = [f"[inferqa] this host: {line}" for line in rate_comparison(ref, self.rates)]
        ratios = [self.rates[m]["prefill_tok_s"] / r["prefill_tok_s"]
                  for m, r in ref.get("rates", {}).items() if m in self.rates]
        if ratios and float(np.mean(ratios)) < 0.85:
            lines.append(f"[inferqa] this host is slower than the reference host "
                         f"({float(np.mean(ratios)):.2f}× its prefill rate): expect a longer run")
        missing = [s for s in self.stems if s not in self.per_notebook]
        lines.append(
            f"[inferqa] projected for profile {self.profile}: {minutes(self.total)} of notebooks"
            + (" (a warm start: the model calls replayed, only the time outside the models)"
               if self.replayed else "")
            + (f" (+ {len(missing)} notebook(s) not in the record)" if missing else "")
            + f"; the reference host ({ref.get('machine', {}).get('cpus')} CPUs, "
            f"{ref.get('machine', {}).get('cpu_model')}, commit {str(ref.get('commit'))[:7]}, "
            f"{str(ref.get('date'))[:10]}) took {minutes(ref_total)}")
        lines.append("[inferqa] per notebook: " + ", ".join(
            f"{s[:2]} {minutes(v)}" for s, v in self.per_notebook.items() if s in self.stems))
        return lines

    def before(self, stem: str, index: int, of: int) -> str:
        p = self.per_notebook.get(stem)
        return f"[inferqa] {stem} ({index} of {of})" + (f": projected {minutes(p)}" if p is not None else "")

    def after(self, stem: str, seconds: float) -> str:
        self.actual[stem] = seconds
        p = self.per_notebook.get(stem)
        left = [s for s in self.stems if s not in self.actual]
        rest = sum(self.per_notebook.get(s, 0.0) for s in left)
        line = f"[inferqa] {stem} done in {seconds:.1f} s"
        if p is not None:
            line += f" (projected {p:.0f} s)"
        if left and self.per_notebook:
            eta = _dt.datetime.now() + _dt.timedelta(seconds=rest)
            line += f"; {len(left)} left, projected {minutes(rest)}, ETA {eta:%H:%M}"
        return line

    def summary(self) -> dict[str, Any]:
        """``{notebook: {projected, actual}}`` and the totals, for the manifest and the last lines."""
        rows = {s: {"projected": self.per_notebook.get(s), "actual": self.actual.get(s)} for s in self.stems}
        done = [s for s in self.stems if s in self.actual and s in self.per_notebook]
        return {"rates": self.rates, "notebooks": rows,
                "projected_s": round(sum(self.per_notebook.get(s, 0.0) for s in done), 1),
                "actual_s": round(sum(self.actual[s] for s in done), 1)}

    def closing(self) -> list[str]:
        s = self.summary()
        if not self.per_notebook or not s["actual_s"]:
            return []
        err = (s["actual_s"] - s["projected_s"]) / s["projected_s"] * 100 if s["projected_s"] else 0.0
        return [f"[inferqa] projected {minutes(s['projected_s'])}, took {minutes(s['actual_s'])} "
                f"({err:+.0f} %) for the notebooks projected; per notebook (projected / actual s): "
                + ", ".join(f"{k[:2]} {v['projected']:.0f}/{v['actual']:.0f}"
                            for k, v in s["notebooks"].items()
                            if v["projected"] is not None and v["actual"] is not None)]


def start(profile: str, stems: Sequence[str], log: Callable[[str], None] = print,
          reference_path: str | Path | None = None,
          measure: Callable[[str], dict[str, Any]] = measure_rates, replayed: bool = False) -> Projection:
    """The projection of a run of ``stems`` under ``profile``: this host's rates measured (cached)
    for the models of the profile's reference record, the projection printed (``replayed``: a warm
    start from the profile's own reference outputs, :func:`project`)."""
    ref = load_reference(reference_path).get(profile)
    rates = host_rates(models_of(ref), log, measure) if ref else {}
    proj = Projection(profile, ref, rates, stems, replayed)
    for line in proj.announce():
        log(line)
    return proj
