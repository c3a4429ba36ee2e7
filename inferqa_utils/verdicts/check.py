"""The reproduction matrix: expected numbers per profile, checked against the latest run.

In the manner of Pyserini's two-click reproductions (``pyserini/2cr/*.yaml``: each condition's
command beside its expected scores, printed OK / FAIL), ``inferqa_utils/verdicts/reproduction.yaml`` lists,
per profile, *conditions*: a result table by its key in the stage registry
(:data:`inferqa_utils.stages.TABLES`, which names the notebook that writes it and its file under
``results/`` for the profile's dataset and split), a row (column = value pairs), a column, the
expected value and a tolerance. :func:`check` reads the tables of one run of that profile, prints
one line per condition, then the papers' findings scored on the same run
(:mod:`inferqa_utils.verdicts.findings`),
and reports failure when a condition is off by more than its tolerance or its table/row is missing.

The run checked (:func:`checked_run`) is the one ``--run`` names, else the profile's newest run
that ended well (complete, or partial: ``--only``); its tables are read from its own folder,
``build/executions/<run id>/results/`` (:mod:`inferqa_utils.record.run_outputs`), and every line
names the run. A number counts only when the run accounts for its table: a table one of its
notebooks wrote, or one a partial run inherited from an earlier run (named as the run that wrote
it). A table written by a notebook that raised or was stopped, and a file none of the run's
notebooks wrote nor inherited (put there by hand), FAIL with a reason naming the table and the
run. When the newest run of the profile failed, was stopped or has not ended, a line says so and
names the notebooks it did not finish (:func:`newest_run_note`).

Expected values are recorded from a real run and changed only deliberately:
``python -m inferqa_utils check --profile NAME --update`` rewrites them from the current results
(the diff of ``reproduction.yaml`` then shows in review) and names, in the profile's
``recorded_from``, the runs they were read from (:func:`recorded_from`): per run its id, the commit
it ran at, the machine (hostname-free) and the conditions it gave. :func:`check` copies each
condition's source into the check record, so the results page can tell a check against the very run
the values were recorded from (OK by construction) from a check on an independent run.

With ``report=FILE.md`` :func:`check` also writes a machine-readable *check record* beside it,
``FILE.json`` (:func:`check_record`: profile, dataset, split, date, git commit, machine, the newest
run manifest's timings, the condition outcomes and the findings verdicts as records), which
:mod:`inferqa_utils.verdicts.results_page` gathers over profiles into ``docs/results.md``.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import stages
from ..core.config import PATHS, profile, root_relative, run_command
from ..core.errors import DataFormatError, UnknownNameError
from ..record.run_dirs import (
    RUN_DIR_RE,
    describe_outcome,
    llm_rates,
    run_manifests,
    run_order,
    run_outcome,
    unfinished_notebooks,
)
from ..record.run_outputs import origin

MATRIX = Path(__file__).with_name("reproduction.yaml")
#: version of the check record's layout (:func:`check_record`); readers refuse other versions
RECORD_SCHEMA = 3
#: verdict table column → check record key
_FINDING_KEYS = {
    "finding": "finding",
    "source": "source",
    "paper a": "paper_a",
    "paper b": "paper_b",
    "ours a": "ours_a",
    "ours b": "ours_b",
    "statistic": "statistic",
    "test": "test",
    "p": "p",
    "p (Holm)": "p_holm",
    "n": "n",
    "discordant": "discordant",
    "moved": "moved",
    "informative": "informative",
    "units needed": "units_needed",
    "questions needed": "questions_needed",
    "needed how": "needed_how",
    "rule": "rule",
    "margin from": "margin_from",
    "unadjusted": "unadjusted",
    "verdict": "verdict",
    "why": "why",
    "ours is": "ours_is",
}
#: record keys holding whole numbers (``None`` when not measured)
_INT_KEYS = ("n", "discordant", "moved", "informative", "units_needed", "questions_needed")
HEADER = """\
# Reproduction matrix (read by `python -m inferqa_utils check --profile NAME`; see
# inferqa_utils/verdicts/check.py).
# Per profile: conditions = table (a key of inferqa_utils.stages.TABLES, which names the notebook that
# writes it and its file under results/ for the profile's dataset and split), row (column: value
# pairs selecting one row), column, expected value, tolerance (absolute, in the column's unit).
# Expected values come from a real run; rewrite them only deliberately with
# `python -m inferqa_utils check --profile NAME --update` and review the diff.
# recorded_from (per profile): the runs the expected values were read from: run id (null when
# not named), commit, machine, and the condition ids it gave (omitted for the one source that gave
# every condition no other source names); --update writes it.
#
# Tolerance: greedy llama.cpp decoding, fixed seeds and stamped caches make a run reproduce exactly.
# llama-cpp-python is compiled for one fixed instruction set on every x86-64 machine
# (scripts/setup_env.sh: GGML_NATIVE=OFF, AVX2/FMA/F16C, no AVX-512), so the greedy tokens do not
# depend on the CPU the package was installed on; benchmarks/llama_builds.py compares a native
# build with it (identical logits and answers on the machine it was measured on). The tolerance
# (0.02) only absorbs the rounding of the CSVs, as Pyserini's 2CR does (isclose, abs_tol 2e-2).
# The dataset the default profile reads is a release (data/embedded/release): fixed data.
# A FAIL is a real difference to look at.
"""


@dataclass
class Condition:
    """One expected number: a cell (``row``, ``column``) of a result table."""

    id: str
    table: stages.Table
    row: dict[str, Any]
    column: str
    expected: float | None
    tolerance: float = 0.02
    #: the source its expected value was recorded from (an entry of the profile's ``recorded_from``:
    #: ``run``, ``commit``, ``machine``, …; ``None`` when the matrix names none)
    recorded_from: dict[str, Any] | None = None

    @property
    def notebook(self) -> stages.Stage:
        """The stage whose notebook writes the table."""
        return self.table.stage

    def file(self, dataset: str, split: str) -> str:
        return self.table.file(dataset, split)


@dataclass
class Outcome:
    condition: Condition
    status: str  # OK | FAIL
    got: float | None
    why: str = ""
    #: ``{"run_id", "profile"}`` of the run checked for the condition's notebook, and of the run that
    #: wrote its table (``None``: no such run / no record)
    run_checked: dict[str, Any] | None = None
    written_by: dict[str, Any] | None = None

    def line(self) -> str:
        c = self.condition
        exp = "—" if c.expected is None else f"{c.expected:g}"
        got = "—" if self.got is None else f"{self.got:g}"
        return (
            f"{self.status:4}  {c.notebook}  {c.id:44} expected {exp:>8}  got {got:>8}  (±{c.tolerance:g})"
            + (f"  {self.why}" if self.why else "")
        )


def load_matrix(path: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """``{profile: {"split": …, "conditions": [Condition…], "recorded_from": [source…]}}``, each
    condition with its source (:func:`condition_sources`); errors name the entry and field."""
    import yaml

    path = Path(path) if path is not None else MATRIX
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise DataFormatError(path, f"cannot read the reproduction matrix ({exc})") from None
    out: dict[str, dict[str, Any]] = {}
    for profile_name, spec in (raw.get("profiles") or {}).items():
        conds = []
        for n, e in enumerate((spec or {}).get("conditions") or [], 1):
            rec = f"profile {profile_name}, condition {n}" + (
                f" ({e.get('id')})" if isinstance(e, dict) else ""
            )
            if not isinstance(e, dict):
                raise DataFormatError(path, "a condition must be a mapping", record=rec)
            for key in ("id", "table", "row", "column"):
                if key not in e:
                    raise DataFormatError(path, f"missing {key!r}", record=rec, field=key)
            try:
                table = stages.table(str(e["table"]))
            except UnknownNameError as exc:
                raise DataFormatError(path, str(exc), record=rec, field="table") from None
            exp = e.get("expected")
            if exp is not None and not isinstance(exp, (int, float)):
                raise DataFormatError(path, f"expected must be a number or null, got {exp!r}", record=rec,
                                      field="expected")
            conds.append(Condition(str(e["id"]), table, dict(e["row"] or {}), str(e["column"]),
                                   None if exp is None else float(exp), float(e.get("tolerance", 0.02))))
        sources = (spec or {}).get("recorded_from") or []
        named = condition_sources(sources, [c.id for c in conds], path, str(profile_name))
        for c, source in zip(conds, named, strict=True):
            c.recorded_from = source
        out[str(profile_name)] = {"split": (spec or {}).get("split", "test"), "conditions": conds,
                                  "recorded_from": list(sources)}
    return out


def condition_sources(sources: Any, ids: Sequence[str], path: Path | None = None,
                      profile_name: str = "") -> list[dict[str, Any] | None]:
    """Per condition id, the entry of a profile's ``recorded_from`` that gave its expected value:
    the entry naming the id in its ``conditions``, else the one entry without ``conditions`` (every
    condition no other entry names), else ``None``. A :class:`DataFormatError` for a malformed
    list, an id no condition has, an id named twice, or two entries without ``conditions``."""
    where = Path(path) if path is not None else MATRIX
    rec = f"profile {profile_name}, recorded_from"
    if not isinstance(sources, list):
        raise DataFormatError(where, "recorded_from must be a list of runs", record=rec,
                              field="recorded_from")
    named: dict[str, dict[str, Any]] = {}
    rest: dict[str, Any] | None = None
    for n, s in enumerate(sources):
        if not isinstance(s, dict) or "run" not in s:
            raise DataFormatError(where, "each entry needs a 'run' (a run id, or null)", record=f"{rec}[{n}]",
                                  field="run")
        if "conditions" not in s:
            if rest is not None:
                raise DataFormatError(where, "only one entry may omit 'conditions'", record=f"{rec}[{n}]",
                                      field="conditions")
            rest = s
            continue
        for cid in s["conditions"] or []:
            if str(cid) not in ids:
                raise DataFormatError(where, f"no condition {cid!r} in the profile", record=f"{rec}[{n}]",
                                      field="conditions")
            if str(cid) in named:
                raise DataFormatError(where, f"condition {cid!r} is named by two runs", record=f"{rec}[{n}]",
                                      field="conditions")
            named[str(cid)] = s
    return [named.get(cid, rest) for cid in ids]


def source_entry(run_id: str | None, manifest: Mapping[str, Any] | None) -> dict[str, Any]:
    """An entry of ``recorded_from`` for the run ``run_id`` (its manifest gives the commit it ran
    at) on this machine (:func:`inferqa_utils.record.manifest.machine_info`, hostname-free)."""
    from ..record.manifest import machine_info

    git = (manifest or {}).get("git")
    git = git if isinstance(git, dict) else {}
    entry: dict[str, Any] = {"run": run_id, "commit": git.get("commit")}
    if git.get("dirty"):
        entry["dirty"] = True
    entry["machine"] = machine_info()
    return entry


def recorded_from(old: Sequence[Mapping[str, Any]], ids: Sequence[str],
                  set_by: Mapping[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The profile's ``recorded_from`` after an update: ``set_by`` maps each condition id whose
    value was rewritten to the entry of the run it was read from (:func:`source_entry`); the old
    entries keep the conditions not rewritten (an entry left with none is dropped). A run that gave
    every condition is one entry without ``conditions``."""
    fresh: dict[Any, dict[str, Any]] = {}
    for cid in ids:
        if cid in set_by:
            e = set_by[cid]
            fresh.setdefault(e["run"], {**e, "conditions": []})["conditions"].append(cid)
    if len(fresh) == 1 and len(set_by) == len(ids):
        return [{k: v for k, v in next(iter(fresh.values())).items() if k != "conditions"}]
    kept = []
    for e in old:
        if "conditions" not in e:
            if any(cid not in set_by for cid in ids):
                kept.append(dict(e))
            continue
        left = [cid for cid in e["conditions"] or [] if cid not in set_by]
        if left:
            kept.append({**e, "conditions": left})
    return [*kept, *fresh.values()]


def _matches(value: Any, wanted: Any) -> bool:
    if isinstance(wanted, (int, float)) and not isinstance(wanted, bool):
        try:
            return math.isclose(float(value), float(wanted))
        except (TypeError, ValueError):
            return False
    return str(value) == str(wanted)


def read_value(
    c: Condition, dataset: str, split: str, folder: Path | None = None
) -> tuple[float | None, str]:
    """The condition's number in the run's table, or ``(None, reason)``."""
    import pandas as pd

    path = (folder or PATHS.results) / c.file(dataset, split)
    if not path.exists():
        return None, f"{path.name} not found (run notebook {c.notebook})"
    t = pd.read_csv(path)
    if c.column not in t.columns:
        return None, f"no column {c.column!r} in {path.name}"
    sel = t
    for col, wanted in c.row.items():
        if col not in sel.columns:
            return None, f"no column {col!r} in {path.name}"
        sel = sel[[_matches(v, wanted) for v in sel[col]]]
    if len(sel) != 1:
        return None, f"{len(sel)} rows of {path.name} match {c.row}"
    v = sel[c.column].iloc[0]
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None, f"{c.column} = {v!r} is not a number"
    return v, ""


#: the run a check reads: its folder and its manifest
Run = tuple[Path, dict[str, Any]]


def checked_run(profile_name: str, executions: Path | None = None, run_id: str | None = None) -> Run | None:
    """The run :func:`check` reads (module docstring): ``(folder, manifest)`` of the run ``run_id``
    of the profile, else of its newest run that ended well (outcome ``complete`` or ``partial``);
    ``None`` when there is none (an unknown ``run_id`` included)."""
    for path, m in run_manifests(profile_name, executions):
        if path.parent.name == run_id if run_id else run_outcome(m, profile_name) in ("complete", "partial"):
            return path.parent, m
    return None


def _profile_of(run: Run) -> str:
    """The profile of a run: its folder's name says it (``<stamp>-<profile>``)."""
    m = RUN_DIR_RE.match(run[0].name)
    params = run[1].get("parameters")
    return m["profile"] if m else str(params.get("profile") or "") if isinstance(params, Mapping) else ""


def table_refusal(run: Run, file: str) -> tuple[dict[str, Any] | None, str]:
    """Whether the run accounts for its table ``results/<file>`` (module docstring):
    ``(written_by, "")`` when it does, else ``(written_by or None, reason)``; ``written_by`` is
    ``{"run_id", "profile"}`` of the run that wrote it."""
    folder, m = run
    profile_name = _profile_of(run)
    found = origin(m, folder.name, f"results/{file}")
    if found is None:
        return None, (f"table {file} is in the folder of run {folder.name} but none of its notebooks "
                      "wrote it and the run did not inherit it: rerun its notebook")
    written = {"run_id": found["run_id"], "profile": profile_name}
    if found["status"] != "ok":
        nb = str(found["notebook"])
        return written, (f"table {file} was written by {nb} in run {folder.name}, which did not finish "
                         f"({found['status']}): rerun it ({run_command([nb[:2]], profile_name)})")
    return written, ""


def evaluate(conditions: Sequence[Condition], dataset: str, split: str, folder: Path | None = None,
             run: Run | None = None) -> list[Outcome]:
    """One outcome per condition, read from ``folder`` (default: the run's ``results/``, else
    ``results/``). With ``run`` (:func:`checked_run`) a number counts only when the run accounts for
    its table (:func:`table_refusal`)."""
    if folder is None and run is not None:
        folder = run[0] / "results"
    ref = None if run is None else {"run_id": run[0].name, "profile": _profile_of(run)}
    out = []
    for c in conditions:
        got, why = read_value(c, dataset, split, folder)
        written = None
        if got is not None and run is not None:
            written, refused = table_refusal(run, c.file(dataset, split))
            if refused:
                out.append(Outcome(c, "FAIL", got, refused, ref, written))
                continue
        if got is None:
            out.append(Outcome(c, "FAIL", None, why, ref, written))
        elif c.expected is None:
            out.append(Outcome(c, "FAIL", got, "no expected value recorded (--update)", ref, written))
        elif (math.isnan(got) and math.isnan(c.expected)) or abs(got - c.expected) <= c.tolerance + 1e-9:
            out.append(Outcome(c, "OK", got, "", ref, written))
        else:
            out.append(Outcome(c, "FAIL", got, f"off by {got - c.expected:+.2f}", ref, written))
    return out


def update(profile_name: str, path: str | Path | None = None, folder: Path | None = None,
           executions: Path | None = None, run_id: str | None = None) -> list[Outcome]:
    """Rewrite the profile's expected values from the run checked (:func:`checked_run`; deliberate,
    reviewed); a value whose table that run does not account for (module docstring) is left as it
    was (FAIL)."""
    import yaml

    path = Path(path) if path is not None else MATRIX
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    spec = raw["profiles"][profile_name]
    conditions = load_matrix(path)[profile_name]["conditions"]
    dataset = profile(profile_name)["dataset_name"]
    split, run = spec.get("split", "test"), checked_run(profile_name, executions, run_id)
    manifests = {p.parent.name: m for p, m in run_manifests(profile_name, executions)}
    outcomes, set_by, entries = [], {}, {}
    if folder is None and run is not None:
        folder = run[0] / "results"
    for entry, c in zip(spec["conditions"], conditions, strict=True):
        got, why = read_value(c, dataset, split, folder)
        written = None
        if got is not None and run is not None:
            written, why = table_refusal(run, c.file(dataset, split))
            got = None if why else got
        if got is not None:
            entry["expected"] = round(got, 4)
            source = (written or {}).get("run_id")
            if source not in entries:
                entries[source] = source_entry(source, manifests.get(str(source)))
            set_by[c.id] = entries[source]
        outcomes.append(Outcome(c, "SET" if got is not None else "FAIL", got, why))
    sources = recorded_from(spec.get("recorded_from") or [], [c.id for c in conditions], set_by)
    # recorded_from before the conditions, so the diff shows it at the top of the profile
    rest = {k: v for k, v in spec.items() if k not in ("recorded_from", "conditions")}
    raw["profiles"][profile_name] = {**rest, **({"recorded_from": sources} if sources else {}),
                                     "conditions": spec["conditions"]}
    path.write_text(
        HEADER + yaml.safe_dump(raw, sort_keys=False, allow_unicode=True, width=120), encoding="utf-8"
    )
    return outcomes


def check(profile_name: str, notebooks: Sequence[str] | None = None, report: str | Path | None = None,
          findings_table: bool = True, folder: Path | None = None, path: str | Path | None = None,
          log: Any = print, executions: Path | None = None, run_id: str | None = None,
          against: str | Path | None = None) -> int:
    """Print OK / FAIL per condition of the profile (only ``notebooks`` when given) and the findings
    verdicts; with ``report`` write a Markdown report and, beside it, the check record
    (:func:`record_path`; run timings from the newest manifest under ``executions``, default
    ``build/executions``). The run read is ``run_id``, else the profile's newest run that ended
    well (:func:`checked_run`); a condition whose table that run does not account for FAILs (module
    docstring). With ``against`` (an earlier
    check record) the findings whose verdict changed are listed (:func:`verdict_changes`). Returns
    the number of FAILs."""

    matrix = load_matrix(path)
    params = profile(profile_name)  # an unknown profile is a KeyError
    if profile_name not in matrix:  # e.g. wikihint: its numbers depend on the file the user brings
        log(f"[check] no expected numbers recorded for profile {profile_name!r} in {path or MATRIX} "
            f"(profiles with conditions: {', '.join(matrix)}); scoring the findings only")
    spec = matrix.get(profile_name, {"split": params.get("split", "test"), "conditions": []})
    dataset, split = params["dataset_name"], spec["split"]
    conds = [c for c in spec["conditions"] if not notebooks or c.notebook in notebooks]
    run = checked_run(profile_name, executions, run_id)
    if folder is None:
        folder = run[0] / "results" if run is not None else PATHS.results
    outcomes = evaluate(conds, dataset, split, folder, run)
    log(f"[check] profile {profile_name}: dataset {dataset}, split {split}, {len(conds)} condition(s), "
        f"results in {root_relative(folder)}")
    log(f"[check] run checked: {_run_line(run, profile_name)}")
    if run is not None:
        log(model_outputs_line(run[1]))
        shipped = against_shipped(run[1], dataset)
        if shipped is not None:
            log(shipped["line"])
    note = newest_run_note(profile_name, executions)
    if note:
        log(note)
    for o in outcomes:
        log(o.line())
    fails = sum(o.status == "FAIL" for o in outcomes)
    log(f"[check] {len(outcomes) - fails} OK, {fails} FAIL")
    if outcomes:
        n = source_counts(outcomes)
        log(f"[check] expected values recorded from the run checked: {n['same']} (OK by construction); "
            f"from another run: {n['independent']}; from a run the matrix does not name: {n['unnamed']}")
    verdicts = None
    decidability: list[dict[str, Any]] = []
    if findings_table:
        from . import findings as fnd

        verdicts = fnd.verdict_table(
            fnd.Results(dataset, split, {**params, "reading_k": params.get("read_k", 3)}, folder)
        )
        log(f"[check] findings on this run: {fnd.verdict_counts(verdicts)}; verdicts after Holm's adjustment "
            f"over the {int(verdicts['p (Holm)'].notna().sum())} findings tested")
        for fid, r in verdicts.iterrows():
            log(f"  {r['verdict']:15} {fid:34} a {r['ours a']:>24}  b {r['ours b']:>24}  "
                f"{r['statistic']:>30}  p {_p(r['p'])}  p(Holm) {_p(r['p (Holm)'])}  [{r['rule']}]")
            log(f"  {'':15} {'':34} {r['test']}; {r['why']}")
        for ns in fnd.not_scored():
            log(f"  {'not scored':15} {ns.id:34} {ns.why}")
    if against is not None and verdicts is not None:
        before = json.loads(Path(against).read_text(encoding="utf-8"))
        changes = verdict_changes(before.get("findings") or [], verdicts)
        log(f"[check] verdicts against {against} ({str((before.get('git') or {}).get('commit', ''))[:7]}, "
            f"{before.get('date', '')[:10]}): {len(changes)} changed")
        for c in changes:
            log(f"  {c['id']:36} {c['before']:>15} ({c['informative_before']}) → {c['after']} "
                f"({c['informative_after']})")
    ledger_rows = run_ledger(profile_name, verdicts, executions) if verdicts is not None else []
    if ledger_rows:
        from ..record.ledger import ledger_text

        log("[check] the run's ledger: seconds per analysis, the units the verdicts of the findings it feeds "
            "rest on")
        for line in ledger_text(ledger_rows):
            log(f"  {line}")
    if verdicts is not None:
        from .decidability import decidability_rows, decidability_text

        found = run_manifests(profile_name, executions)
        decidability = decidability_rows(profile_name, verdicts, ledger_rows,
                                         llm_rates(found[0][1]) if found else None)
        log("[check] decidability: per finding the units its verdict rests on, the units and questions a "
            "decision would need at the observed effect, and the cheapest shipped profile or data that has "
            "them")
        for line in decidability_text(decidability):
            log(f"  {line}")
    if report:
        Path(report).write_text(
            markdown_report(profile_name, dataset, split, outcomes, verdicts, ledger_rows, decidability),
            encoding="utf-8",
        )
        log(f"[check] report written to {report}")
        rec = record_path(report)
        record = check_record(profile_name, dataset, split, outcomes, verdicts, notebooks, executions,
                              run, ledger_rows, decidability)
        rec.write_text(
            json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8"
        )
        log(f"[check] record written to {rec}")
    return fails


def no_run_message(profile_name: str, notebooks: Sequence[str] | None = None,
                   executions: Path | None = None) -> str | None:
    """One line saying the profile has no run to check — no run manifest, no run that ended well, or
    (with ``notebooks``) a run checked that neither finished nor inherited those notebooks' tables —
    and the command that makes one; ``None`` when there is a run (:func:`checked_run`)."""

    folder = executions or PATHS.executions
    wanted = [str(nb)[:2] for nb in notebooks or []]
    command = f"make one with: {run_command(wanted, profile_name)}" if wanted else \
        f"make one with: python -m inferqa_utils run --profile {profile_name}"
    manifests = run_manifests(profile_name, executions)
    if not manifests:
        return (
            f"no run of profile {profile_name} to check (no {folder / ('*-' + profile_name)}/manifest.json); "
            f"{command}"
        )
    run = checked_run(profile_name, executions)
    newest = f"newest run: {manifests[0][0].parent.name}, {manifests[0][1].get('status', 'no status')}"
    if run is None:
        return f"no run of profile {profile_name} ended well ({newest}); {command}"
    finished = {str(nb)[:2] for nb in _finished_notebooks(run[1])}
    if wanted and not run[1].get("inherited") and not any(nn in finished for nn in wanted):
        return (f"no run of profile {profile_name} finished notebook{'s' * (len(wanted) > 1)} "
                f"{', '.join(wanted)} ({newest}); {command}")
    return None


def newest_run_note(profile_name: str, executions: Path | None = None) -> str | None:
    """One line when the newest run of the profile did not end well — it failed, was stopped, or
    has not ended — naming the notebooks it did not finish, whose tables count only from a run that
    finished them; ``None`` otherwise (no run; a complete or partial one)."""

    found = run_manifests(profile_name, executions)
    if not found or run_outcome(found[0][1], profile_name) not in ("failed", "interrupted", "running"):
        return None
    path, m = found[0]
    missing = unfinished_notebooks(m)
    text = f"[check] newest run {path.parent.name}: {describe_outcome(m, profile_name)}"
    if not missing:
        return text
    return (f"{text}; notebook{'s' * (len(missing) != 1)} {', '.join(missing)} did not finish in it: "
            "their tables count only from a run that finished them")


def _run_line(run: Run | None, profile_name: str) -> str:
    """``<run id> (complete, commit abc1234)``, or that the profile has no run that ended well."""
    if run is None:
        return f"no run of profile {profile_name} ended well"
    folder, m = run
    commit = str((m.get("git") or {}).get("commit") or "")[:7] if isinstance(m.get("git"), dict) else ""
    inherited = m.get("inherited") or {}
    return (f"{folder.name} ({describe_outcome(m, profile_name)}" + (f", commit {commit}" if commit else "")
            + (f"; {len(inherited)} file(s) inherited from {', '.join(sorted(set(inherited.values())))}"
               if inherited else "") + ")")


def record_path(report: str | Path) -> Path:
    """Where the check record of a report goes: beside it, ``FILE.md`` → ``FILE.json``."""
    return Path(report).with_suffix(".json")


def _number(v: Any) -> float | None:
    """A JSON-safe number: ``None`` for missing, NaN or non-numeric values."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) or math.isinf(f) else f


def _finished_notebooks(m: dict[str, Any]) -> dict[str, float]:
    """``{notebook stem: seconds}`` of the timed notebooks whose per-notebook record in a run
    manifest (``notebooks["<stem>.ipynb"]``) has ``status == "ok"``."""
    timings = m.get("timings_s") if isinstance(m.get("timings_s"), dict) else {}
    per_nb = m.get("notebooks") if isinstance(m.get("notebooks"), dict) else {}
    out = {}
    for stem, secs in timings.items():
        info = per_nb.get(f"{stem}.ipynb")
        ok = isinstance(info, dict) and info.get("status") == "ok"
        if stem != "total" and ok and _number(secs) is not None:
            out[str(stem)] = _number(secs)
    return out


def _allocate(
    found: Sequence[tuple[Path, dict[str, Any]]],
) -> list[tuple[Path, dict[str, Any], dict[str, float]]]:
    """Per run manifest (newest first), the notebooks whose time it supplies: those it finished
    that no newer manifest finished (:func:`_finished_notebooks`); manifests supplying none are left out."""
    taken: set[str] = set()
    out = []
    for path, m in found:
        fresh = {k: v for k, v in _finished_notebooks(m).items() if k not in taken}
        if fresh:
            taken.update(fresh)
            out.append((path, m, fresh))
    return out




def _llm_use(m: dict[str, Any], stems: Sequence[str]) -> tuple[int | None, int | None]:
    """``(model calls, cache hits)`` of the LLM batches of the notebooks ``stems`` in a run manifest
    (its ``llm_costs``; a notebook with no entry asked no LLM); ``(None, None)`` when the manifest
    has no ``llm_costs``."""
    costs = m.get("llm_costs")
    if not isinstance(costs, dict):
        return None, None
    calls = hits = 0
    for stem in stems:
        per_model = costs.get(stem)
        for counters in (per_model.values() if isinstance(per_model, dict) else ()):
            if isinstance(counters, dict):
                calls += int(_number(counters.get("model_calls")) or 0)
                hits += int(_number(counters.get("cache_hits")) or 0)
    return calls, hits


def model_outputs(m: Mapping[str, Any]) -> dict[str, Any]:
    """How a run got its model outputs: ``computed`` (calls the model made on the run's host),
    ``replayed`` (answers read from the LLM cache, filled before the run or earlier in it) and
    ``warm`` (the reference-outputs file installed before it began, with the entries it added;
    ``None`` for a run that did not start warm)."""
    calls, hits = _llm_use(dict(m), [str(k) for k in (m.get("llm_costs") or {})])
    warm = m.get("warm")
    return {"computed": calls, "replayed": hits, "warm": warm if isinstance(warm, dict) else None}


def against_shipped(m: Mapping[str, Any], dataset: str) -> dict[str, Any] | None:
    """A run that computed its model outputs itself — it began with an empty LLM cache
    (``caches_at_start``) and did not start warm — compared with the dataset's shipped reference
    outputs (:func:`inferqa_utils.llm.reference_outputs.compare_cache`: every call the two share, at
    no model cost), with a ``line`` to print; ``None`` for another run or when none ship."""
    from ..llm import default_cache
    from ..llm import reference_outputs as ro

    start = m.get("caches_at_start")
    path = ro.shipped_path(dataset)
    if m.get("warm") or not isinstance(start, Mapping) or start.get("llm") or not path.is_file():
        return None
    got = ro.compare_cache(path, default_cache())
    got["line"] = (f"[check] the run's own model outputs against the shipped {got['file']}: "
                   f"{got['shared']:,} of its {got['entries']:,} calls also made here, "
                   f"{got['agree']:,} agree "
                   f"({got['identical']:,} identical; largest score difference "
                   f"{got['max_score_difference']:.2g}), {len(got['differ']):,} differ")
    return got


def model_outputs_line(m: Mapping[str, Any]) -> str:
    """``[check] model outputs: …`` for the run checked (:func:`model_outputs`)."""
    use = model_outputs(m)
    if use["computed"] is None:
        return "[check] model outputs: not counted in this run's manifest"
    text = (f"[check] model outputs: {use['computed']:,} computed on the run's host, {use['replayed']:,} "
            "replayed from the LLM cache")
    if use["warm"]:
        w = use["warm"]
        text += (f" (a warm start: {w.get('added', 0):,} of {w.get('entries', 0):,} outputs of "
                 f"{w.get('file')} installed before it began: its numbers replay that file's model "
                 "outputs, they do not recompute them)")
    return text


def _first_run_in_folder(manifest: Path) -> bool:
    """Whether no run folder of any profile beside the manifest's run folder began before it (the
    caches of a fresh clone are empty at its first run)."""

    own = run_order(manifest.parent.name)
    if own is None:
        return False
    for d in manifest.parent.parent.iterdir():
        other = run_order(d.name)
        if other is not None and not d.is_symlink() and other < own:
            return False
    return True


def cache_use(allocated: Sequence[tuple[Path, dict[str, Any], dict[str, float]]],
              names: Mapping[Path, str] | None = None) -> list[dict[str, Any]]:
    """Per manifest of :func:`_allocate`: its path (as ``names`` gives it, else relative to the
    checkout), its notebooks, their LLM model calls and cache hits (``None`` when the manifest
    predates the counts), the caches' sizes when the run began (``caches_at_start``,
    :func:`inferqa_utils.record.run_dirs.cache_sizes`; ``None`` in older manifests) and whether it was the
    first run in its folder of runs."""
    out = []
    for path, m, notebooks in allocated:
        calls, hits = _llm_use(m, list(notebooks))
        start = m.get("caches_at_start")
        out.append(
            {
                "manifest": (names or {}).get(path, root_relative(path)),
                "notebooks": sorted(notebooks),
                "model_calls": calls,
                "cache_hits": hits,
                "caches_at_start": start if isinstance(start, dict) else None,
                "first_run_in_folder": _first_run_in_folder(path),
                "warm": m.get("warm") if isinstance(m.get("warm"), dict) else None,
            }
        )
    return out


def manifests_cache_use(
    paths: Sequence[Path], names: Sequence[str] | None = None
) -> list[dict[str, Any]] | None:
    """:func:`cache_use` of run manifests given by path, newest first (a check record's
    ``run.manifests``), each named by ``names`` (default: the path); ``None`` when one cannot be read."""
    found = []
    for path in paths:
        try:
            content = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(content, dict):
            return None
        found.append((Path(path), content))
    shown = dict(zip((p for p, _m in found), names if names is not None else map(str, paths), strict=True))
    return cache_use(_allocate(found), shown)


def _run_summary(profile_name: str, executions: Path | None) -> dict[str, Any] | None:
    """The profile's notebook times: each notebook's time from the newest run manifest in which it
    finished (a profile run one notebook at a time, or resumed after an interruption, spans several
    manifests); ``total_s`` is their sum; ``cache_use`` says, per manifest used, how many model
    calls its notebooks made and what the caches held when it began (:func:`cache_use`).
    ``complete`` is true only when one run, the newest, supplies every time and finished every
    notebook of the profile; ``outcomes`` says in words how each manifest used ended and
    ``newest_outcome`` how the newest did (:func:`inferqa_utils.record.run_dirs.describe_outcome`). ``None``
    when there is no manifest."""

    found = run_manifests(profile_name, executions)
    if not found:
        return None
    allocated = _allocate(found)
    notebooks = {stem: secs for _path, _m, fresh in allocated for stem, secs in fresh.items()}
    path, m = found[0]
    git = m.get("git") if isinstance(m.get("git"), dict) else None
    total = round(sum(notebooks.values()), 1) if notebooks else None
    # complete: every number from one run, the newest, in which every notebook of the profile finished
    complete = len(allocated) == 1 and allocated[0][0] == path and run_outcome(m, profile_name) == "complete"
    return {
        "manifest": root_relative(path),
        "manifests": [root_relative(p) for p, _m, _f in allocated],
        "complete": complete,
        "outcomes": [describe_outcome(c, profile_name) for _p, c, _f in allocated],
        "newest_outcome": describe_outcome(m, profile_name),
        "started": m.get("started"),
        "finished": m.get("finished"),
        "status": m.get("status"),
        "total_s": total,
        "notebooks_s": dict(sorted(notebooks.items())),
        "git": git,
        "cache_use": cache_use(allocated),
        "llm_rates": llm_rates(m),
    }


def verdict_changes(before: Sequence[Mapping[str, Any]], verdicts: Any) -> list[dict[str, Any]]:
    """The findings whose verdict in ``verdicts`` (:func:`inferqa_utils.verdicts.findings.verdict_table`)
    differs from an earlier check record's ``findings`` rows, each with the informative units it
    rested on before and rests on now (a finding absent on one side counts as ``"absent"``)."""
    old = {str(r.get("id")): r for r in before}
    out = []
    for fid in [*old, *(str(f) for f in verdicts.index if str(f) not in old)]:
        now = verdicts.loc[fid] if fid in verdicts.index else None
        was = old.get(fid)
        a, b = (was or {}).get("verdict", "absent"), "absent" if now is None else str(now["verdict"])
        if a != b:
            out.append({"id": fid, "before": a, "after": b,
                        "informative_before": (was or {}).get("informative"),
                        "informative_after": None if now is None or _number(now["informative"]) is None
                        else int(now["informative"])})
    return out


def run_ledger(profile_name: str, verdicts: Any, executions: Path | None = None) -> list[dict[str, Any]]:
    """The ledger (:func:`inferqa_utils.record.ledger.ledger_rows`) of the runs whose notebook times the
    check reports (per notebook, the newest run manifest in which it finished), with the
    informative units and verdicts of ``verdicts`` (:func:`inferqa_utils.verdicts.findings.verdict_table`)."""
    from ..record.ledger import ledger_rows

    informative = {str(f): (None if _number(v) is None else int(v))
                   for f, v in verdicts["informative"].items()}
    decided = {str(f): str(v) for f, v in verdicts["verdict"].items()}
    rows: list[dict[str, Any]] = []
    for path, _m, fresh in _allocate(run_manifests(profile_name, executions)):
        numbers = {stem[:2] for stem in fresh}
        rows += [r for r in ledger_rows(path.parent, informative, decided) if r["notebook"] in numbers]
    return sorted(rows, key=lambda r: r["notebook"])


def check_record(profile_name: str, dataset: str, split: str, outcomes: Sequence[Outcome], verdicts: Any,
                 notebooks: Sequence[str] | None = None, executions: Path | None = None,
                 run: Run | None = None,
                 ledger: Sequence[dict[str, Any]] | None = None,
                 decidability: Sequence[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The machine-readable record of one check (JSON-safe): profile, dataset, split, date (UTC),
    git commit and dirty flag at check time, the machine (:func:`inferqa_utils.record.manifest.machine_info`),
    the newest run manifest of the profile (``run``: total and per-notebook seconds, status, its
    commit, the model calls and cache state of the runs timed, the LLM rates it measured; ``None`` when no
    run folder exists), the notebooks filter, the run checked (``run_checked``: its id, outcome and
    commit), the condition outcomes (each with its table's file, the run checked and the run that
    wrote the table), the findings verdict table as records
    (``None`` when findings were not scored), the run's ledger (:func:`run_ledger`; ``[]`` when the run
    folders hold no ledger log) and the decidability rows
    (:func:`inferqa_utils.verdicts.decidability.decidability_rows`)."""
    from ..record.manifest import git_commit, machine_info

    conditions = [{"id": o.condition.id, "notebook": o.condition.notebook, "table": o.condition.table.key,
                   "file": o.condition.file(dataset, split), "column": o.condition.column, "status": o.status,
                   "expected": _number(o.condition.expected), "got": _number(o.got),
                   "tolerance": o.condition.tolerance, "why": o.why, "run_checked": o.run_checked,
                   "written_by": o.written_by, "recorded_from": _source(o.condition.recorded_from)}
                  for o in outcomes]
    rows = None
    if verdicts is not None:
        rows = []
        for fid, r in verdicts.iterrows():
            row: dict[str, Any] = {"id": str(fid)}
            for col, key in _FINDING_KEYS.items():
                v = r.get(col)
                if key in ("p", "p_holm"):
                    row[key] = _number(v)
                elif key in _INT_KEYS:
                    row[key] = None if _number(v) is None else int(v)
                else:
                    row[key] = "" if v is None else str(v)
            rows.append(row)
    return {
        "schema": RECORD_SCHEMA,
        "kind": "inferqa-check",
        "profile": profile_name,
        "dataset": dataset,
        "split": split,
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "git": git_commit(),
        "machine": machine_info(),
        "run": _run_summary(profile_name, executions),
        "notebooks": list(notebooks) if notebooks else None,
        "run_checked": None if run is None else {
            "run_id": run[0].name, "outcome": run_outcome(run[1], profile_name), "git": run[1].get("git"),
            "model_outputs": model_outputs(run[1]), "against_shipped": against_shipped(run[1], dataset)},
        "conditions": conditions,
        "findings": rows,
        "ledger": list(ledger or []),
        "decidability": list(decidability or []),
    }


def _source(entry: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A condition's ``recorded_from`` entry in the check record: the run id, commit, dirty flag
    and machine (``None``: the matrix names no source)."""
    if entry is None:
        return None
    machine = entry.get("machine")
    return {"run_id": None if entry.get("run") is None else str(entry["run"]),
            "commit": None if entry.get("commit") is None else str(entry["commit"]),
            "dirty": bool(entry.get("dirty", False)),
            "machine": dict(machine) if isinstance(machine, dict) else None}


def source_counts(outcomes: Sequence[Outcome]) -> dict[str, int]:
    """How many conditions were recorded from the run checked for them (``same``: their OK is true
    by construction), from another run (``independent``) or from a source the matrix does not name
    (``unnamed``)."""
    out = {"same": 0, "independent": 0, "unnamed": 0}
    for o in outcomes:
        src = o.condition.recorded_from
        if src is None or src.get("run") is None:
            out["unnamed"] += 1
        elif o.run_checked is not None and str(src["run"]) == str(o.run_checked.get("run_id")):
            out["same"] += 1
        else:
            out["independent"] += 1
    return out


def _p(v: Any) -> str:
    try:
        return "—" if v is None or math.isnan(float(v)) else f"{float(v):.4f}"
    except (TypeError, ValueError):
        return "—"


def markdown_report(
    profile_name: str, dataset: str, split: str, outcomes: Sequence[Outcome], verdicts: Any,
    ledger: Sequence[dict[str, Any]] | None = None, decidability: Sequence[dict[str, Any]] | None = None,
) -> str:
    lines = [
        f"# Reproduction check: profile `{profile_name}`",
        "",
        f"Dataset `{dataset}`, split `{split}`. Generated by `python -m inferqa_utils check --profile "
        f"{profile_name} --report`.",
        "", "## Conditions", "", "| status | notebook | condition | expected | got | tolerance | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        c = o.condition
        lines.append(
            f"| {o.status} | {c.notebook} | {c.id} | {c.expected if c.expected is not None else '—'} | "
            f"{'—' if o.got is None else f'{o.got:g}'} | ±{c.tolerance:g} | {o.why} |"
        )
    if verdicts is not None:
        from .findings import not_scored

        lines += [
            "", "## Findings", "",
            "Verdicts after Holm's adjustment over the findings tested; *p*: the p of the verdict's test "
            "before the adjustment.", "",
            "| finding | paper a | paper b | ours a | ours b | statistic | test | p | p (Holm) | rule | "
            "before Holm | verdict | why |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for _fid, r in verdicts.iterrows():
            cells = [r["finding"], r["paper a"], r["paper b"], r["ours a"], r["ours b"], r["statistic"],
                     r["test"], _p(r["p"]), _p(r["p (Holm)"]), r["rule"], r["unadjusted"],
                     f"**{r['verdict']}**", r["why"]]
            lines.append("| " + " | ".join(str(x).replace("|", "\\|") for x in cells) + " |")
        lines += ["", "Not scored:", ""] + [f"- `{n.id}` ({n.source}): {n.why}" for n in not_scored()]
    if decidability:
        from .decidability import decidability_markdown

        lines += ["", "## Decidability", "", *decidability_markdown(list(decidability))]
    if ledger:
        from ..record.ledger import ledger_markdown

        lines += ["", "## Ledger", "",
                  "Per analysis of the run: its seconds, what it spent in the models, the findings it feeds "
                  "with the units each verdict rests on, and seconds per unit.", "",
                  *ledger_markdown(list(ledger))]
    return "\n".join(lines) + "\n"
