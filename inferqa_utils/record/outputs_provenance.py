"""Where the entries of a reference-outputs file come from, for its manifest
(:func:`inferqa_utils.llm.reference_outputs.export`): the runs of this checkout that computed them."""

from __future__ import annotations

import hashlib
from typing import Any

from ..core.config import PATHS, profile
from ..llm.reference_outputs import model_names_by_identity
from .manifest import git_commit, machine_info
from .run_dirs import llm_rates, run_manifests


def provenance(profile_name: str) -> dict[str, Any]:
    """What an export's manifest says of where its entries come from: the commit and date of the
    export, the machine, the models (name → sha256 identity), the dataset and the sha256 of its
    release manifest (the release the calls were computed on), and ``computed_by``: every run of the
    profile in this checkout that made model calls (run id, commit, model calls, the LLM rates it
    measured, the outputs file it started warm from), oldest first — the runs whose host computed
    the entries (the others were replayed from a cache)."""
    import datetime as dt

    dataset = str(profile(profile_name)["dataset_name"])
    release = PATHS.data / dataset / "release" / "manifest.json"
    runs = []
    for path, m in reversed(run_manifests(profile_name)):
        costs = m.get("llm_costs") if isinstance(m.get("llm_costs"), dict) else {}
        calls = sum(int(c.get("model_calls") or 0) for per in costs.values() if isinstance(per, dict)
                    for c in per.values() if isinstance(c, dict))
        if calls:
            runs.append({"run_id": path.parent.name, "commit": (m.get("git") or {}).get("commit"),
                         "model_calls": calls, "llm_rates": llm_rates(m),
                         "warm": (m.get("warm") or {}).get("file")})
    return {"profile": profile_name, "dataset": dataset,
            "release_manifest_sha256": hashlib.sha256(release.read_bytes()).hexdigest()
            if release.is_file() else None,
            "model_names": {name: identity for identity, name in sorted(model_names_by_identity().items())},
            "computed_by": runs, "commit": git_commit(),
            "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "machine": machine_info()}
