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


def measured_command(argv: Sequence[str]) -> str:
    """The command a record names: ``.venv/bin/python`` and the script with the options that shape
    the measurement — without ``--record PATH`` and without any option whose value is a path of
    this machine (an absolute path: a working folder, a cache), which say nothing of the numbers.

    >>> measured_command(["benchmarks/quit_scale.py", "--out", "/scratch/q", "--questions", "100",
    ...                   "--record", "docs/records/benchmarks/quit_scale.json"])
    '.venv/bin/python benchmarks/quit_scale.py --questions 100'
    """
    kept: list[str] = []
    args = list(argv[1:])
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if name == "--record" or (eq and Path(value).is_absolute()):
            i += 1 if eq else 2
            continue
        if arg.startswith("--") and i + 1 < len(args) and Path(args[i + 1]).is_absolute():
            i += 2
            continue
        kept.append(arg)
        i += 1
    return " ".join([".venv/bin/python", str(argv[0]), *kept])


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
    command = measured_command(sys.argv)
    out = write_record(path, values, what=what, commit=git["commit"],
                       commit_note="with uncommitted changes" if git["dirty"] else None,
                       date=_dt.datetime.now(_dt.UTC).date().isoformat(), machine=machine,
                       command=command, describes=[script])
    print(f"recorded in {out}: `make docs` (python -m inferqa_utils docs) rewrites the pages that quote it")
    return out
