"""What a notebook run spent, per notebook and per analysis, beside this host's floor.

Reads a run folder (``build/executions/<stamp>-<profile>``, default: the newest run of
``--profile``), or several run folders of one profile that ran its notebooks between them (e.g.
``run --only 00 01 02 03 04`` then ``run --only 05 06 07 08 09``; each notebook counts from the
last folder given that ran it): its manifest's notebook seconds, its LLM cost log
``llm_costs.jsonl`` (one line per batch of prompts, :mod:`inferqa_utils.llm.costs`) and its ledger log
``analyses.jsonl`` (:mod:`inferqa_utils.record.ledger`). Per notebook it prints the LLM calls (cache
misses), the prompt tokens evaluated and reused (prefix reuse, KV snapshots), the tokens generated,
the seconds inside the models, the notebook's seconds, and the **floor**: the evaluated and
generated tokens divided by this host's prefill and decode rates
(:func:`inferqa_utils.record.projection.measure_rates`, cached per host and build). ``seconds / floor``
shows what is left: time outside the models (retrieval, encoding, training, Python) and engine
overhead.

Then the **ledger**: per analysis of each notebook, its seconds and tokens, the findings it feeds
with the informative units each verdict rests on (scored on the results the run wrote), and
seconds per informative unit. ``--record`` writes the run, with this host's rates, as the profile's
reference record (``inferqa_utils/record/reference_costs.json``) that ``python -m inferqa_utils run``
projects from.

    .venv/bin/python benchmarks/run_cost.py [RUN_DIR ...] [--profile default] [--rates FILE] [--record]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from inferqa_utils.core.config import PATHS, profile
from inferqa_utils.llm.costs import COST_LOG_NAME, per_stage, read_log
from inferqa_utils.record.ledger import ledger_rows, ledger_text
from inferqa_utils.record.projection import REFERENCE_FILE, host_rates, reference_from_run
from inferqa_utils.record.run_dirs import latest_run_manifest


def table(run_dir: Path, rates: dict[str, dict]) -> list[dict]:
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    costs = per_stage(read_log(run_dir / COST_LOG_NAME))
    rows = []
    for stage, seconds in (manifest.get("timings_s") or {}).items():
        if stage == "total":
            continue
        per_model = costs.get(stage, {})
        row = {
            "notebook": stage[:2],
            "seconds": seconds,
            "llm_s": 0.0,
            "calls": 0,
            "cache_hits": 0,
            "evaluated": 0,
            "reused": 0,
            "generated": 0,
            "floor_s": 0.0,
        }
        for model, c in per_model.items():
            row["llm_s"] += c["seconds"]
            row["calls"] += int(c["model_calls"])
            row["cache_hits"] += int(c["cache_hits"])
            row["evaluated"] += int(c["prompt_tokens"])
            row["reused"] += int(c["prompt_tokens_total"] - c["prompt_tokens"])
            row["generated"] += int(c["generated_tokens"])
            r = rates.get(model)
            if r:
                row["floor_s"] += (
                    c["prompt_tokens"] / r["prefill_tok_s"] + c["generated_tokens"] / r["decode_tok_s"]
                )
        rows.append(row)
    return rows


def verdicts_of(manifest: dict) -> tuple[dict, dict]:
    """``(informative units, verdicts)`` per finding, scored on the results the run wrote."""
    from inferqa_utils.verdicts import findings

    params = {**profile(manifest["parameters"]["profile"]), **manifest["parameters"]}
    t = findings.verdict_table(findings.Results(params["dataset_name"], params.get("split", "test"),
                                                {**params, "reading_k": params.get("read_k", 3)}))
    informative = {str(f): (None if v is None or v != v else int(v)) for f, v in t["informative"].items()}
    return informative, {str(f): str(v) for f, v in t["verdict"].items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dirs", nargs="*", default=[], metavar="RUN_DIR")
    ap.add_argument("--profile", default="default")
    ap.add_argument(
        "--rates", default=None, help="JSON of measured rates {model: {prefill_tok_s, decode_tok_s}}"
    )
    ap.add_argument("--no-ledger", action="store_true", help="per notebook only (no findings scored)")
    ap.add_argument("--record", action="store_true",
                    help=f"write the run as the profile's reference record ({REFERENCE_FILE.name})")
    a = ap.parse_args()
    if a.run_dirs:
        run_dirs = [Path(d) for d in a.run_dirs]
    else:
        found = latest_run_manifest(a.profile, PATHS.executions)
        if found is None:
            print(f"no run of profile {a.profile!r} under {PATHS.executions}")
            return 1
        run_dirs = [found[0].parent]
    manifests = [json.loads((d / "manifest.json").read_text(encoding="utf-8")) for d in run_dirs]
    profiles = {m["parameters"]["profile"] for m in manifests}
    if len(profiles) > 1:
        print(f"the run folders belong to different profiles: {', '.join(sorted(profiles))}")
        return 1
    # each notebook from the last folder that ran it
    stems = {stem: i for i, m in enumerate(manifests)
             for stem in (m.get("timings_s") or {}) if stem != "total"}
    owner = {stem[:2]: i for stem, i in stems.items()}  # by notebook number
    logs = [[r for r in read_log(d / COST_LOG_NAME) if owner.get(str(r.get("stage", ""))[:2]) in (None, i)]
            for i, d in enumerate(run_dirs)]
    log = [r for per_run in logs for r in per_run]
    models = sorted({m for per in per_stage(log).values() for m in per})
    if not models:
        print(
            f"{', '.join(map(str, run_dirs))}: no LLM cost log ({COST_LOG_NAME}); runs made by this "
            "version of the runner have one"
        )
        return 1
    rates = json.loads(Path(a.rates).read_text(encoding="utf-8")) if a.rates else host_rates(models)
    for m in models:
        r = rates[m]
        print(f"rates {m}: prefill {r['prefill_tok_s']} tok/s, decode {r['decode_tok_s']} tok/s")
    rows = [r for i, d in enumerate(run_dirs) for r in table(d, rates) if owner.get(r["notebook"]) == i]
    print(f"\nrun{'s' * (len(run_dirs) > 1)} {', '.join(map(str, run_dirs))}")
    head = (
        f"{'nb':>3} {'seconds':>8} {'LLM s':>8} {'calls':>7} {'cached':>7} {'evaluated':>10} {'reused':>10} "
        f"{'generated':>9} {'floor s':>8} {'s/floor':>8}"
    )
    print(head)
    tot = {
        k: 0.0
        for k in ("seconds", "llm_s", "calls", "cache_hits", "evaluated", "reused", "generated", "floor_s")
    }
    for r in rows:
        for k in tot:
            tot[k] += r[k]
        ratio = f"{r['seconds'] / r['floor_s']:.2f}" if r["floor_s"] else "—"
        print(
            f"{r['notebook']:>3} {r['seconds']:>8.1f} {r['llm_s']:>8.1f} {r['calls']:>7} "
            f"{r['cache_hits']:>7} "
            f"{r['evaluated']:>10} {r['reused']:>10} {r['generated']:>9} {r['floor_s']:>8.1f} {ratio:>8}"
        )
    ratio = f"{tot['seconds'] / tot['floor_s']:.2f}" if tot["floor_s"] else "—"
    print(
        f"{'all':>3} {tot['seconds']:>8.1f} {tot['llm_s']:>8.1f} {int(tot['calls']):>7} "
        f"{int(tot['cache_hits']):>7} "
        f"{int(tot['evaluated']):>10} {int(tot['reused']):>10} {int(tot['generated']):>9} "
        f"{tot['floor_s']:>8.1f} "
        f"{ratio:>8}"
    )
    if not a.no_ledger:
        informative, verdicts = verdicts_of(manifests[-1])
        print("\nledger: seconds per analysis, the findings it feeds with their informative units, "
              "seconds per informative unit")
        ledger = [r for i, d in enumerate(run_dirs) for r in ledger_rows(d, informative, verdicts)
                  if owner.get(r["notebook"]) == i]
        for line in ledger_text(ledger):
            print(line)
    if a.record:
        bad = [f"{d.name}: {m.get('status')!r}"
               for d, m in zip(run_dirs, manifests, strict=True) if m.get("status") != "ok"]
        if bad:
            print(f"not recorded: a run's status is not 'ok' ({'; '.join(bad)})")
            return 1
        merged = {**manifests[-1],
                  "timings_s": {stem: manifests[i]["timings_s"][stem] for stem, i in stems.items()},
                  "run_id": " + ".join(str(m.get("run_id")) for m in manifests)}
        data = json.loads(REFERENCE_FILE.read_text(encoding="utf-8")) if REFERENCE_FILE.exists() else {}
        data.setdefault("profiles", {})[merged["parameters"]["profile"]] = reference_from_run(
            merged, log, {m: rates[m] for m in models})
        REFERENCE_FILE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"recorded as the reference of profile {merged['parameters']['profile']!r}: {REFERENCE_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
