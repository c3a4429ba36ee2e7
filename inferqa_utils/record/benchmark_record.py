"""A benchmark's measurement written as a record of ``docs/records`` (a script's ``--record PATH``).

:func:`record_measurement` stamps the values a benchmark measured with this clone's commit, today's
date and this machine (its LLM rates when the numbers are LLM timings, and the load average), and
writes them with :func:`inferqa_utils.present.docs_blocks.write_record`, which keeps the record's
views: ``make docs`` then rewrites the pages that quote it. The record format is described there.
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: the help of a benchmark's ``--record PATH`` option
RECORD_HELP = ("also write the measurement as this record of docs/records (e.g. "
               "docs/records/benchmarks/NAME.json), keeping its views; `make docs` rewrites the pages that "
               "quote it")


def record_measurement(path: str | Path, values: Mapping[str, Any], *, what: str, script: str,
                       llm_models: Sequence[str] = (), load: str | None = None) -> Path:
    """Write ``values`` as the record ``path`` (see the module docstring); ``script`` is the
    benchmark's path relative to the repository root (the code the record ``describes``),
    ``llm_models`` the models whose prefill / decode rates on this host go with the numbers
    (:func:`inferqa_utils.record.projection.host_rates`), ``load`` what else ran (default: the
    load average at the end of the run)."""
    from ..present.docs_blocks import write_record
    from .manifest import git_commit, machine_info

    machine: dict[str, Any] = machine_info()
    if llm_models:
        from .projection import host_rates

        rates = host_rates(list(llm_models))
        machine["llm_rates"] = {m: {"prefill_tok_s": rates[m]["prefill_tok_s"],
                                    "decode_tok_s": rates[m]["decode_tok_s"]} for m in llm_models}
    machine["load"] = load or f"load average {os.getloadavg()[0]:.1f} at the end of the run"
    git = git_commit()
    command = " ".join([Path(sys.executable).name, *sys.argv])
    out = write_record(path, values, what=what, commit=git["commit"],
                       commit_note="with uncommitted changes" if git["dirty"] else None,
                       date=_dt.datetime.now(_dt.UTC).date().isoformat(), machine=machine,
                       command=command, describes=[script])
    print(f"recorded in {out}: `make docs` (python -m inferqa_utils docs) rewrites the pages that quote it")
    return out
