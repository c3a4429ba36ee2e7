"""The results page ``docs/results.md``: the check records of several profiles on one page.

``python -m inferqa_utils check --profile NAME --report results/check_NAME.md`` (``make run`` does
it) writes the check record ``results/check_NAME.json`` beside the report
(:func:`inferqa_utils.verdicts.check.check_record`). Runs of different profiles may live in different
clones, so :func:`collect` reads the ``check_*.json`` records of several folders (the newest record
of a profile wins) and :func:`render` writes one self-contained Markdown page:

* a *scoreboard*: one row per finding of ``inferqa_utils/measure/paper_numbers.yaml``, per main profile our
  statistic with its 95 % interval and the verdict, then one line per profile (verdict counts,
  the check record it comes from, what its notebook time measured);
* the forest plot of those estimates against each rule's region (:func:`write_forest`,
  :func:`inferqa_utils.present.figures.findings_forest`), written to ``figures/`` beside the page;
* a *Runs* table with one row per main profile asked for ("no record" when none exists), the
  notebook time labelled from empty caches, cached re-run or partly cached (:func:`cache_label`),
  and whether the reproduction matrix was recorded from the run checked, so that its OK is true by
  construction, or checked on an independent run (:func:`matrix_source`);
* one section per finding (its text, the paper's source and numbers, the rule) with one row per
  main profile;
* an appendix with the *sample runs* (:func:`is_sample`: too few questions to decide any finding,
  such as the smoke profile): their runs rows and their findings rows.

``python -m inferqa_utils results-page`` (``make results-page``) regenerates the page; nothing here
runs a notebook or a model.

A record is refused (:class:`~inferqa_utils.core.errors.DataFormatError`) when a condition it counts
as OK was read from a table another run wrote than the run it checked (the message names the
table and both runs; ``check`` FAILs such conditions, so only a record edited by hand or made
otherwise has one), or from a table with no run record, unless the check accepted those
(``check --allow-unrecorded``, shown in the *Runs* table).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import DataFormatError
from ..measure.paper import Finding, load_paper_numbers
from ..measure.verdict import ALPHA, BY_CONSTRUCTION, CONTRADICTED, HOLDS, INCONCLUSIVE, MIN_UNITS
from ..present.figures import ForestPoint, ForestRow
from ..present.tables import markdown_table, p_value_text
from .check import RECORD_SCHEMA
from .check import manifests_cache_use as check_cache_use

#: the profiles the page lists by default, in this order
DEFAULT_PROFILES = ("smoke", "default", "triviahg", "wikihint")
#: the check records a results folder holds
RECORD_GLOB = "check_*.json"
#: the verdicts a record may hold; the first three are counted
VERDICTS = (HOLDS, CONTRADICTED, INCONCLUSIVE, BY_CONSTRUCTION)
#: the papers ``paper_numbers.yaml`` cites by number ("paper 000 §5.1"), as the README lists them
PAPERS = {
    "000": "*Inferential Question Answering* (the QUIT benchmark), arXiv 2602.01239, 2026.",
    "004": "Oh et al.: *Detrimental Contexts in Open-Domain Question Answering*, 2023.",
}
_PAPER_RE = re.compile(r"\bpaper (\d{3})\b")
#: a record's statistic cell, e.g. ``diff 75.69 [63.19, 86.81]`` or ``ratio nan [nan, nan]``
_STAT_RE = re.compile(r"^(?P<kind>[a-z]+) (?P<value>\S+) \[(?P<lo>\S+), (?P<hi>\S+)\]$")
#: the scoreboard's verdict cells
VERDICT_CELLS = {HOLDS: "✓ **holds**", CONTRADICTED: "✗ **contradicted**", INCONCLUSIVE: "○ inconclusive",
                 BY_CONSTRUCTION: "≡ by construction"}
#: the forest plot's file name (``.png`` and ``.svg``) in the ``figures/`` folder beside the page
FIGURE_NAME = "results_forest"
_STATUSES = ("OK", "FAIL")


# ----------------------------------------------------------------------------- reading records

def _need(path: Path, obj: Mapping[str, Any], key: str, types: type | tuple[type, ...], where: str = "",
          nullable: bool = False) -> Any:
    """``obj[key]`` checked against ``types``; a :class:`DataFormatError` naming file and field if not."""
    name = f"{where}{key}"
    if key not in obj:
        raise DataFormatError(path, f"missing {name!r}", field=name)
    v = obj[key]
    if v is None and nullable:
        return v
    allowed = types if isinstance(types, tuple) else (types,)
    if not isinstance(v, allowed) or (isinstance(v, bool) and bool not in allowed):  # True is an int
        want = " or ".join(t.__name__ for t in allowed) + (" or null" if nullable else "")
        raise DataFormatError(path, f"expected {want}, got {type(v).__name__} ({v!r:.60})", field=name)
    return v


def load_record(path: str | Path) -> dict[str, Any]:
    """Read and validate one check record; errors (:class:`DataFormatError`) name the file and field."""
    path = Path(path)
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataFormatError(path, f"cannot read the check record ({exc})") from None
    except ValueError as exc:
        raise DataFormatError(path, f"invalid JSON ({exc})") from None
    if not isinstance(rec, dict):
        raise DataFormatError(path, f"a check record must be a JSON object, got {type(rec).__name__}")
    if _need(path, rec, "schema", int) != RECORD_SCHEMA:
        raise DataFormatError(path, f"schema {rec['schema']} is not the supported {RECORD_SCHEMA} "
                                    "(re-run `python -m inferqa_utils check --report`)", field="schema")
    for key in ("profile", "dataset", "split", "date"):
        _need(path, rec, key, str)
    try:
        _dt.datetime.fromisoformat(rec["date"])
    except ValueError:
        raise DataFormatError(path, f"not an ISO date: {rec['date']!r}", field="date") from None
    git = _need(path, rec, "git", dict)
    _need(path, git, "commit", str, "git.", nullable=True)
    _need(path, git, "dirty", bool, "git.", nullable=True)
    _need(path, rec, "machine", dict)
    run = _need(path, rec, "run", dict, nullable=True)
    if run is not None:
        _need(path, run, "total_s", (int, float), "run.", nullable=True)
    # written before check read runs from their own folders: tables with no run record accepted
    allow_unrecorded = bool(rec.get("allow_unrecorded"))
    for n, c in enumerate(_need(path, rec, "conditions", list)):
        where = f"conditions[{n}]."
        if not isinstance(c, dict):
            raise DataFormatError(path, "a condition must be an object", field=f"conditions[{n}]")
        _need(path, c, "id", str, where)
        if _need(path, c, "status", str, where) not in _STATUSES:
            raise DataFormatError(path, f"status {c['status']!r} is not one of {', '.join(_STATUSES)}",
                                  field=f"{where}status")
        _check_condition_run(path, c, where, allow_unrecorded)
        if "recorded_from" in c:  # absent in a record written before check copied it
            source = _need(path, c, "recorded_from", dict, where, nullable=True)
            if source is not None:
                _need(path, source, "run_id", str, f"{where}recorded_from.", nullable=True)
                _need(path, source, "commit", str, f"{where}recorded_from.", nullable=True)
    for n, f in enumerate(_need(path, rec, "findings", list, nullable=True) or []):
        where = f"findings[{n}]."
        if not isinstance(f, dict):
            raise DataFormatError(path, "a findings row must be an object", field=f"findings[{n}]")
        for key in ("id", "ours_a", "ours_b", "statistic", "why"):
            _need(path, f, key, str, where)
        if _need(path, f, "verdict", str, where) not in VERDICTS:
            raise DataFormatError(path, f"verdict {f['verdict']!r} is not one of {', '.join(VERDICTS)}",
                                  field=f"{where}verdict")
        _need(path, f, "p_holm", (int, float), where, nullable=True)
        if "informative" in f:
            _need(path, f, "informative", int, where, nullable=True)
    return rec


def _check_condition_run(path: Path, c: Mapping[str, Any], where: str, allow_unrecorded: bool) -> None:
    """An OK condition's table was written by the run checked, or inherited by it from the run named
    (module docstring)."""
    _need(path, c, "file", str, where)
    runs = {}
    for key in ("run_checked", "written_by"):
        run = runs[key] = _need(path, c, key, dict, where, nullable=True)
        if run is not None:
            _need(path, run, "run_id", str, f"{where}{key}.")
            _need(path, run, "profile", str, f"{where}{key}.", nullable=True)
    if c["status"] != "OK":
        return
    checked, written = runs["run_checked"], runs["written_by"]
    if written is None and not allow_unrecorded:
        raise DataFormatError(
            path,
            f"condition {c['id']!r} is OK, but its table {c['file']} has no run record "
            "(and the check did not accept unrecorded tables)",
            field=f"{where}written_by",
        )
    # an earlier run of the profile may have written it (a partial run inherits), never another profile's
    if written is not None and (checked is None or written.get("profile") != checked.get("profile")):
        raise DataFormatError(
            path,
            f"condition {c['id']!r} is OK, but table {c['file']} was written by {_describe_run(written)}, "
            f"not by the run checked, {_describe_run(checked)}",
            field=f"{where}written_by",
        )


def _describe_run(run: Mapping[str, Any] | None) -> str:
    """``run 20261124-080321-default (profile default)``."""
    return f"run {run.get('run_id')} (profile {run.get('profile')})" if run else "no run"


def results_folder(root: str | Path) -> Path:
    """A folder given with ``--from``: a clone's root (its ``results/`` is read) or a results folder."""
    root = Path(root)
    return root / "results" if (root / "results").is_dir() else root


def collect(folders: Iterable[str | Path], log: Any = print) -> dict[str, dict[str, Any]]:
    """``{profile: record}`` from the ``check_*.json`` records of the folders; when several folders
    hold a record of one profile, the newest (by its date) is kept and the others are named."""
    out: dict[str, dict[str, Any]] = {}
    origin: dict[str, Path] = {}
    seen: set[Path] = set()
    for folder in folders:
        folder = Path(folder)
        if folder.resolve() in seen:
            continue
        seen.add(folder.resolve())
        if not folder.is_dir():
            log(f"[results-page] {folder}: no such folder, skipped")
            continue
        for path in sorted(folder.glob(RECORD_GLOB)):
            rec = load_record(path)
            name = rec["profile"]
            if name in out:
                keep_new = _date(rec) > _date(out[name])
                older = origin[name] if keep_new else path
                log(f"[results-page] profile {name}: {older} is older than "
                    f"{path if keep_new else origin[name]}, ignored")
                if not keep_new:
                    continue
            out[name], origin[name] = rec, path
    for rec, path in ((out[name], origin[name]) for name in out):
        _add_cache_use(rec, path)
    return out


def _add_cache_use(rec: dict[str, Any], path: Path) -> None:
    """A record written before ``check`` counted model calls (no ``run.cache_use``) gets them from
    the run manifests it names, when the clone it came from still holds them; otherwise the page
    says the cache use is unknown."""
    run = rec.get("run")
    if not isinstance(run, dict) or "cache_use" in run or not isinstance(run.get("manifests"), list):
        return
    root = path.parent.parent if path.parent.name == "results" else path.parent
    names = [m for m in run["manifests"] if isinstance(m, str)]
    paths = [Path(m) if Path(m).is_absolute() else root / m for m in names]
    if paths and all(p.is_file() for p in paths):
        use = check_cache_use(
            paths, names
        )  # named as the record names them, not where this machine keeps them
        if use is not None:
            run["cache_use"] = use


def _date(rec: Mapping[str, Any]) -> _dt.datetime:
    d = _dt.datetime.fromisoformat(rec["date"])
    return d if d.tzinfo else d.replace(tzinfo=_dt.UTC)


# ----------------------------------------------------------------------------- rendering

def _when(rec: Mapping[str, Any]) -> str:
    return _date(rec).astimezone(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def record_name(rec: Mapping[str, Any]) -> str:
    """The check record by its file name, ``check_<profile>.json``: the page names the record, and
    the record holds the commits (the page names none)."""
    return f"`check_{rec['profile']}.json`"


def _commit_cell(rec: Mapping[str, Any]) -> str:
    """The check record the row comes from, and what it says of the code without naming a commit:
    whether the check ran at another commit than the notebooks, with uncommitted changes, or at a
    commit not recorded."""
    text = record_name(rec)
    git = rec.get("git") or {}
    run_git = (rec.get("run") or {}).get("git")
    notes = []
    if not git.get("commit"):
        notes.append("commit not recorded")
    elif git.get("dirty"):
        notes.append("checked with uncommitted changes")
    if isinstance(run_git, dict) and run_git.get("commit"):
        if run_git.get("commit") != git.get("commit"):
            notes.append("the notebooks ran at another commit than the check")
        if run_git.get("dirty") and run_git.get("dirty") != git.get("dirty"):
            notes.append("the notebooks ran with uncommitted changes")
    return f"{text} ({'; '.join(notes)})" if notes else text


def _machine(m: Mapping[str, Any]) -> str:
    """``2 CPUs (AMD EPYC, x86_64), 23.5 GB RAM, Linux 6.1, Python 3.11.7`` from what is known."""
    parts = []
    cpu = ", ".join(str(x) for x in (m.get("cpu_model"), m.get("machine")) if x)
    if m.get("cpus"):
        parts.append(f"{m['cpus']} CPU{'s' * (m['cpus'] != 1)}" + (f" ({cpu})" if cpu else ""))
    elif cpu:
        parts.append(cpu)
    if m.get("ram_gb"):
        parts.append(f"{m['ram_gb']:g} GB RAM")
    parts += [str(m[k]) if k == "os" else f"Python {m[k]}" for k in ("os", "python") if m.get(k)]
    return ", ".join(parts) or "unknown"


def _duration(run: Mapping[str, Any] | None) -> str:
    """``4,778 s (80 min), 8 notebooks`` with the run's status when it did not finish well."""
    if not run or run.get("total_s") is None:
        return "no run manifest"
    s = float(run["total_s"])
    text = f"{s:,.0f} s" + (f" ({s / 60:.0f} min)" if s >= 120 else "")
    n = len(run.get("notebooks_s") or {})
    if n:
        text += f", {n} notebook{'s' * (n != 1)}"
    runs = len(run.get("manifests") or [])
    if runs > 1:
        text += f" from {runs} runs"
    elif run.get("status") not in (None, "ok"):
        text += f", {run['status']}"
    return text


def _conditions(rec: Mapping[str, Any]) -> str:
    ok = sum(c["status"] == "OK" for c in rec["conditions"])
    text = f"{ok} OK, {len(rec['conditions']) - ok} FAIL"
    if rec.get("notebooks"):
        text += f" (notebooks {', '.join(map(str, rec['notebooks']))} only)"
    if rec.get("allow_unrecorded"):
        text += "; tables with no run record accepted"
    source = matrix_source(rec)
    return f"{text}; {source}" if source else text


def matrix_source(rec: Mapping[str, Any]) -> str:
    """Whether the record's conditions were checked on the run their expected values were recorded
    from (each condition's ``recorded_from``, which ``check`` copies from ``reproduction.yaml``,
    against its ``run_checked``): ``matrix recorded from this run (OK by construction)``,
    ``checked on an independent run (recorded from 2 other runs)`` — the runs, and their commits,
    are named in ``reproduction.yaml`` and in the check record, not on the page —, the counts of
    each when they are mixed, and which conditions name no source (a matrix that does not name
    it, or a record written before ``check`` copied it); ``""`` without conditions."""
    conds = rec["conditions"]
    same, independent, unnamed = [], [], []
    for c in conds:
        src = c.get("recorded_from")
        run = c.get("run_checked")
        if not isinstance(src, dict) or not src.get("run_id"):
            unnamed.append(c)
        elif isinstance(run, dict) and str(run.get("run_id")) == str(src["run_id"]):
            same.append(c)
        else:
            independent.append(c)
    if not conds:
        return ""
    parts = []
    if independent:
        runs = len({str(c["recorded_from"]["run_id"]) for c in independent})
        text = f"checked on an independent run (recorded from {runs} other run{'s' * (runs != 1)})"
        parts.append(text if len(independent) == len(conds) else f"{len(independent)} of {len(conds)} {text}")
    if same:
        parts.append("matrix recorded from this run (OK by construction)" if len(same) == len(conds)
                     else f"{len(same)} of {len(conds)} recorded from this run (OK by construction)")
    if unnamed:
        parts.append("the run the matrix was recorded from is not named" if len(unnamed) == len(conds)
                     else f"{len(unnamed)} of {len(conds)} from a run the matrix does not name")
    return "; ".join(parts)


def _runs_checked(rec: Mapping[str, Any]) -> str:
    """The run ids the conditions were checked against, in order of first appearance."""
    ids = dict.fromkeys(str(c["run_checked"]["run_id"]) for c in rec["conditions"] if c.get("run_checked"))
    return ", ".join(f"`{i}`" for i in ids) or "—"


def _verdicts(rec: Mapping[str, Any]) -> str:
    """``3 holds, 1 contradicted, 20 inconclusive (4 by construction, not counted)``."""
    if rec["findings"] is None:
        return "not scored"
    counts = {v: sum(f["verdict"] == v for f in rec["findings"]) for v in VERDICTS}
    text = ", ".join(f"{counts[v]} {v}" for v in (HOLDS, CONTRADICTED, INCONCLUSIVE))
    built = counts[BY_CONSTRUCTION]
    return text + (f" ({built} by construction, not counted)" if built else "")


def counted(rec: Mapping[str, Any]) -> int:
    """The findings a record counts (those by construction apart)."""
    return sum(f["verdict"] != BY_CONSTRUCTION for f in rec["findings"] or [])


def _value(label: str, v: float | None) -> str:
    return f"{label}: " + ("stated in words" if v is None else f"{v:g}")


# ----------------------------------------------------------------------------- times and caches

def _started_empty(use: Mapping[str, Any]) -> bool:
    """Whether a run began with empty caches: as its manifest recorded (every cache 0 bytes), or,
    for a manifest that predates that record, when it was the first run in its clone."""
    start = use.get("caches_at_start")
    if isinstance(start, dict):
        return all(not v for v in start.values())
    return use.get("first_run_in_folder") is True


def cache_label(run: Mapping[str, Any] | None) -> str:
    """What the notebook time measured: *from empty caches* (every run timed began with empty
    caches), a *cached re-run* (its notebooks made no model call: every LLM answer came from the
    cache), *partly cached* (model calls, and caches not empty at the start), a *warm start* (a
    run that began by installing a reference-outputs file into the LLM cache: its numbers replay
    those outputs), or *cache use unknown* (a record or manifest from before these counts)."""
    use = (run or {}).get("cache_use")
    if not use or any(u.get("model_calls") is None for u in use):
        return "cache use unknown"
    calls, hits = (sum(int(u.get(k) or 0) for u in use) for k in ("model_calls", "cache_hits"))
    warm = sorted({str(u["warm"].get("file")) for u in use if isinstance(u.get("warm"), dict)})
    if warm:
        return (f"warm start from {', '.join(warm)}: a replay of shipped model outputs, not a recomputation "
                f"({calls:,} model calls, {hits:,} answers replayed)")
    if calls == 0:
        return "no LLM prompts" if hits == 0 else f"cached re-run (0 model calls, {hits:,} cache hits)"
    if all(_started_empty(u) for u in use):
        return f"from empty caches ({calls:,} model calls)"
    return f"partly cached ({calls:,} model calls, {hits:,} cache hits)"


def rates_text(run: Mapping[str, Any] | None) -> str:
    """``host LLM prefill / decode tok/s: qwen2.5-coder-1.5b 74.1 / 26.3, …`` from the rates the run
    measured before its first notebook (``""`` when its record has none)."""
    from ..present.docs_blocks import rates_phrase

    rates = (run or {}).get("llm_rates") or {}
    return f"host {rates_phrase(rates)}" if rates else ""


def _time_cell(run: Mapping[str, Any] | None) -> str:
    text = _duration(run)
    if not run or run.get("total_s") is None:
        return text
    return "; ".join(t for t in (text, cache_label(run), rates_text(run)) if t)


# ----------------------------------------------------------------------------- main and sample runs

def questions(rec: Mapping[str, Any]) -> float | None:
    """The median number of units (questions; passages or pairs for a few findings) the record's
    findings were measured on, ``None`` when none was measured."""
    ns = sorted(int(f["n"]) for f in rec["findings"] or [] if isinstance(f.get("n"), int) and f["n"] > 0)
    if not ns:
        return None
    mid = len(ns) // 2
    return float(ns[mid]) if len(ns) % 2 else (ns[mid - 1] + ns[mid]) / 2


def is_sample(rec: Mapping[str, Any]) -> bool:
    """A *sample run*: its findings were measured on a median of fewer than
    :data:`~inferqa_utils.measure.verdict.MIN_UNITS` units, so they are inconclusive by design (a format
    check such as the smoke profile, not a measurement). The page shows it in its appendix."""
    n = questions(rec)
    return n is not None and n < MIN_UNITS


def split_profiles(
    records: Mapping[str, Mapping[str, Any]], profiles: Sequence[str]
) -> tuple[list[str], list[str]]:
    """``(main, sample)``: the profiles asked for whose record is not a sample run (with those
    that have no record), and those whose record is one (:func:`is_sample`)."""
    sample = [p for p in profiles if p in records and is_sample(records[p])]
    return [p for p in profiles if p not in sample], sample


# ----------------------------------------------------------------------------- findings

@dataclass(frozen=True)
class Section:
    """One finding of the page: its text, source, paper numbers, rule and, when it is in
    ``paper_numbers.yaml``, its statistic, region (:meth:`inferqa_utils.measure.paper.Finding.region`) and
    the further value its rule tests (0 for "not significantly < 0")."""

    id: str
    text: str
    source: str
    paper_a: str
    paper_b: str
    rule: str
    ours: str
    paper_short: str
    kind: str = "diff"
    region: tuple[float, float] | None = None
    marks: tuple[float, ...] = ()
    margin_source: str = ""


def _paper_short(a: float | None, b: float | None) -> str:
    """The paper's a vs b in a scoreboard cell ("words": stated in words)."""
    if a is None and b is None:
        return "in words"
    return " vs ".join("words" if v is None else f"{v:g}" for v in (a, b))


def _sections(findings: Sequence[Finding], records: Mapping[str, Mapping[str, Any]],
              profiles: Sequence[str]) -> list[Section]:
    """The findings of ``paper_numbers.yaml``, then those only a record scored (from its own text)."""
    out = [
        Section(
            f.id, f.finding, f.source, _value(f.a_label, f.a_value), _value(f.b_label, f.b_value), f.rule(),
            f.ours, _paper_short(f.a_value, f.b_value), f.statistic,
            f.region()[:2],
            (0.0,) if f.relation == "adds little" else (),
            f.margin_source,
        )
        for f in findings
    ]
    known = {f.id for f in findings}
    for p in profiles:
        for row in (records[p]["findings"] or []) if p in records else []:
            if row["id"] not in known:
                known.add(row["id"])
                parsed = parse_statistic(row["statistic"])
                out.append(Section(row["id"], row.get("finding", row["id"]), row.get("source", ""),
                                   row.get("paper_a", ""), row.get("paper_b", ""), row.get("rule", ""),
                                   row.get("ours_is", ""), "see below", parsed[0] if parsed else "diff"))
    return out


def parse_statistic(text: str) -> tuple[str, float, float, float] | None:
    """``(kind, value, lo, hi)`` of a record's statistic cell (``"diff 75.69 [63.19, 86.81]"``;
    NaN where undefined), ``None`` when there is none ("—")."""
    m = _STAT_RE.match(text.strip())
    try:
        return None if m is None else (m["kind"], *(float(m[k]) for k in ("value", "lo", "hi")))
    except ValueError:
        return None


def _signed(v: float, digits: int) -> str:
    text = f"{abs(v):.{digits}f}"
    if float(text) == 0:
        return text
    return ("+" if v > 0 else "−") + text


def stat_cell(text: str) -> str:
    """The statistic with its interval, short: ``+75.7 [63.2, 86.8]`` for a difference (points,
    signed, one decimal), ``0.58 [0.39, 0.77]`` for a ratio or relative difference; "—" when not
    measured, "undefined" when the statistic is (a division by zero)."""
    parsed = parse_statistic(text)
    if parsed is None:
        return "—"
    kind, value, lo, hi = parsed
    if math.isnan(value):
        return "undefined"
    if kind == "diff":
        return f"{_signed(value, 1)} [{_signed(lo, 1)}, {_signed(hi, 1)}]".replace("[+", "[").replace(
            ", +", ", "
        )
    bounds = "undefined" if math.isnan(lo) or math.isnan(hi) else f"{lo:.2f}, {hi:.2f}"
    return f"{value:.2f} [{bounds}]"


def verdict_cell(verdict: str | None) -> str:
    """✓ **holds**, ✗ **contradicted**, ○ inconclusive, ≡ by construction; "—" when the finding was not
    scored."""
    return VERDICT_CELLS.get(verdict or "", "—")


def _short_rule(rule: str) -> str:
    """The rule in a scoreboard cell: ``a − b > 35.7``, ``|a − b| < 2.16, not < 0``,
    ``0.4977 < a/b < 0.5592``."""
    for old, new in (
        ("abs(a - b)", "|a − b|"),
        (" and not significantly < 0", ", not < 0"),
        (" - ", " − "),
        (">=", "≥"),
        ("<=", "≤"),
    ):
        rule = rule.replace(old, new)
    return rule


def _by_id(rec: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]]:
    return {row["id"]: row for row in (rec or {}).get("findings") or []}


def _link(fid: str) -> str:
    """The finding's name linking to its section (the anchor GitHub gives ``### `id```)."""
    return f"[`{fid}`](#{re.sub(r'[^a-z0-9_-]', '', fid.lower())})"


def _scoreboard(
    sections: Sequence[Section], records: Mapping[str, Mapping[str, Any]], shown: Sequence[str]
) -> list[str]:
    """One row per finding: the paper's a vs b, the rule, and per profile ours and the verdict."""
    header = ["finding", "paper (a vs b)", "rule"]
    for p in shown:
        header += [f"{p}: ours [95 % interval]", f"{p}: verdict"]
    rows = []
    for sec in sections:
        row = [_link(sec.id), sec.paper_short, _short_rule(sec.rule)]
        for p in shown:
            found = _by_id(records[p]).get(sec.id)
            row += (
                [stat_cell(found["statistic"]), verdict_cell(found["verdict"])]
                if found
                else ["—", "not scored"]
            )
        rows.append(row)
    return markdown_table(header, rows)


def _checked_at(rec: Mapping[str, Any]) -> str:
    """``Record `check_default.json``` with what it says of the code (:func:`_commit_cell`)."""
    return f"Record {_commit_cell(rec)}"


def _summary(p: str, rec: Mapping[str, Any] | None) -> str:
    """One line per profile: its verdict counts, commit(s), and its notebook time with what it measured."""
    if rec is None:
        return f"- **{p}**: no check record."
    run = rec.get("run")
    text = (
        f"- **{p}** (`{rec['dataset']}`): {_verdicts(rec)} of {counted(rec)} findings. "
        f"{_checked_at(rec)}"
    )
    matrix = f" Reproduction matrix: {_conditions(rec)}." if rec["conditions"] else ""
    if not run or run.get("total_s") is None:
        return f"{text}; no run manifest.{matrix}"
    runs = len(run.get("manifests") or []) or 1
    return (
        f"{text}; {_duration({**run, 'manifests': []})} from {runs} run{'s' * (runs != 1)}, "
        f"{cache_label(run)}.{matrix}"
    )


def forest_data(records: Mapping[str, Mapping[str, Any]], profiles: Sequence[str], sections: Sequence[Section]
                ) -> tuple[list[ForestRow], list[ForestPoint]]:
    """The rows (every finding) and points (every profile's parsed statistic) of the forest plot."""
    rows = [ForestRow(sec.id, sec.kind, sec.region, sec.marks) for sec in sections]
    points = []
    for p in profiles:
        for fid, row in _by_id(records.get(p)).items():
            parsed = parse_statistic(row["statistic"])
            if parsed is not None:
                points.append(ForestPoint(fid, p, *parsed[1:], row["verdict"]))
    return rows, points


# ----------------------------------------------------------------------------- the page

#: the command that writes docs/results.md from the check records shipped under docs/records/checks
DOCS_COMMAND = "python -m inferqa_utils docs"


def _header(command: str, generated: _dt.datetime) -> list[str]:
    shipped = command == DOCS_COMMAND
    where = ("records under `docs/records/checks`, copies of the `results/check_<profile>.json`"
             if shipped else "records `results/check_<profile>.json`,")
    return [
        "# Results",
        "",
        f"*Generated by `{command}` on {generated.astimezone(_dt.UTC):%Y-%m-%d %H:%M} UTC from the check "
        f"{where} which `python -m inferqa_utils check --profile <profile> "
        "--report results/check_<profile>.md` writes (`make run` does it at the end of a run). Do not edit "
        f"by hand: `make {'docs' if shipped else 'results-page'}` regenerates this page.*",
        "",
        "The claims of the source papers, each scored on our runs from per-question data: a statistic of two "
        "of our quantities *a* and *b* with its 95 % interval, which **holds** when the statistic lies "
        "significantly inside the region the claim's rule states, is **contradicted** when it lies "
        "significantly outside, and is **inconclusive** otherwise — an interval touching an edge, from "
        "either side, decides nothing. Paired 0/1 outcomes are tested on their discordant questions "
        "(exact sign test; Tango's score test at a margin), other statistics by a seeded bootstrap; "
        "a verdict rests on at least "
        f"{MIN_UNITS} discordant questions (or, for an equivalence claim, {MIN_UNITS} questions the "
        "intervention moved), and each verdict is the one left after Holm's adjustment over the findings "
        f"one profile tests (α = {ALPHA:g}), the unadjusted one beside it. A comparison that cannot come "
        "out otherwise is marked **by construction**, with the reason, and not counted. Every margin "
        "comes from a paper, which the finding's section names. Only directions and the papers' own "
        "margins are compared, never absolute numbers: our corpora, models and question counts are far "
        "smaller.",
        "",
    ]


def provenance(records: Mapping[str, Mapping[str, Any]], shown: Sequence[str]) -> str:
    """Where the numbers of the ``shown`` profiles come from: how many run manifests each profile's
    notebook tables span and whether a single one was a complete run (:func:`runs_phrase`), and the
    check record that holds them and their commits (:func:`record_name`); one sentence, which says
    so when every profile comes from one complete run."""
    parts, single = [], True
    for p in shown:
        runs = runs_phrase(records[p].get("run") or {})
        single = single and runs == "one complete run"
        parts.append(f"**{p}** from {runs} (record {record_name(records[p])})")
    names = f"{', '.join(shown[:-1])} and {shown[-1]}" if len(shown) > 1 else shown[0]
    where = " (the records `check_<profile>.json`, which hold the commits)"
    if single:
        each = "one complete run of its notebooks" if len(shown) == 1 else "one complete run each"
        return f"*The numbers of {names} come from {each}{where}.*"
    return (f"*The numbers of {names} do not all come from one complete run: "
            + "; ".join(parts) + ".*")


def runs_phrase(run: Mapping[str, Any]) -> str:
    """The runs a check record's ``run`` (:func:`inferqa_utils.verdicts.check.check_record`) took its numbers
    from: ``one complete run`` only when the record says the run was complete (one run, the newest,
    that finished every notebook of the profile); ``one run (failed in 03_reranking.ipynb)``,
    ``one run (partial: notebook 02 only)``, ``one run (completeness not recorded)`` for a record
    written before completeness was, ``3 runs``, ``no run manifest``."""
    if not run:
        return "no run manifest"
    manifests = run.get("manifests")
    n = len(manifests) if isinstance(manifests, list) else 1
    if n == 0:
        return "no run that finished a notebook"
    if n > 1:
        return f"{n} runs"
    if run.get("complete") is True:
        return "one complete run"
    outcomes = run.get("outcomes")
    why = str(outcomes[0]) if isinstance(outcomes, list) and outcomes else "completeness not recorded"
    if why == "complete":  # its numbers' run finished, but a newer run of the profile did not
        why = f"complete; the newest run: {run.get('newest_outcome') or 'outcome not recorded'}"
    return f"one run ({why})"


def _scoreboard_part(
    sections: Sequence[Section],
    records: Mapping[str, Mapping[str, Any]],
    main: Sequence[str],
    figure: str | None,
) -> list[str]:
    shown = [p for p in main if p in records]
    lines = ["## Scoreboard", ""]
    if shown:
        lines += [
            *_scoreboard(sections, records, shown),
            "",
            '*Paper*: the paper\'s numbers for *a* and *b* ("words": stated in words). *Ours*: the statistic '
            "the rule names (a − b in points on a 0–100 scale, a / b, or |a − b| / b) with its 95 % "
            "interval. "
            "Each finding's section below gives its source, our *a* and *b*, p (Holm) and why.",
            "",
        ]
    else:
        lines += ["No main profile has a check record.", ""]
    lines += [_summary(p, records.get(p)) for p in main] + [""]
    if figure and shown:
        svg = figure.rsplit(".", 1)[0] + ".svg"
        lines += [
            f"![Forest plot: each finding's statistic with its 95 % interval per profile]({figure})",
            "",
            "*Each row is a finding, each point one profile's statistic with its 95 % interval (bar); the "
            "marker gives the verdict (filled circle holds, cross contradicted, open circle inconclusive, "
            "open square by construction). The green band is the region the finding's rule states and the "
            "dashed lines are its edges: a finding holds when its whole bar lies strictly inside the band "
            "and Holm's adjustment keeps it, is contradicted when the bar lies strictly outside (for "
            "\"|a − b| < m, not < 0\" also when it lies wholly below the dotted 0) and Holm keeps it, and "
            "is inconclusive otherwise, or when too few discordant questions left it undecided whatever the "
            "bar. "
            "Differences, ratios and relative differences have their own panels, as their "
            f"scales differ. Also as [SVG]({svg}).*",
            "",
        ]
    return lines


def _runs_table(records: Mapping[str, Mapping[str, Any]], profiles: Sequence[str]) -> list[str]:
    runs = []
    for p in profiles:
        r = records.get(p)
        if r is None:
            runs.append([p, "no record", "—", "—", "—", "—", "—", "—", "—", "—"])
        else:
            runs.append(
                [
                    p,
                    f"`{r['dataset']}`",
                    r["split"], _when(r), _commit_cell(r),
                    _machine(r["machine"]),
                    _time_cell(r.get("run")),
                    _conditions(r), _verdicts(r), _runs_checked(r),
                ]
            )
    return markdown_table(["profile", "dataset", "split", "checked", "record", "machine", "notebook time",
                   "conditions", "findings", "runs checked"], runs)


_RUNS_NOTE = (
    "Each profile runs the notebooks on its own data and models ([README, "
    "*Profiles*](../README.md#profiles)). "
    "A *condition* is one expected number of the reproduction matrix "
    "(`inferqa_utils/verdicts/reproduction.yaml`), "
    "OK when the run reproduces it within its tolerance, read from a table the run checked wrote (*runs "
    "checked*: the run folders `build/executions/<run>` whose tables the conditions read), and whether "
    "the matrix's expected values were *recorded from this run* — the run `check --update` read them "
    "from, so that OK is true by construction — or the conditions were *checked on an independent run* "
    "(the runs the values were recorded from are named in `reproduction.yaml`). *Record*: the check record "
    "the row comes from, which holds the commit the check ran at and the one the notebooks ran at (the "
    "cell says when they differ). *Notebook time*: the sum "
    "of the notebooks' times, each from the newest run that finished it, and what it measured: *from empty "
    "caches* (each run timed began with empty LLM, embedding, index and run caches, as its manifest "
    "records, or, for a manifest from before that record, it was the first run in its clone), a *cached "
    "re-run* (the notebooks made no model call: every LLM answer came from the cache), *partly cached* "
    "(model calls, and caches not empty at the start), a *warm start* (the run began by installing a "
    "reference-outputs file into the LLM cache: a replay of those outputs, not a recomputation), or *cache "
    "use unknown* (the record predates these "
    "counts and its run manifests are not at hand); then the LLM rates the run measured on its host "
    "before its first notebook, on which the time depends: hosts of one kind differ in them."
)

_FINDINGS_NOTE = (
    "Per finding: its text and source, the paper's numbers, the rule and where its margin comes from, "
    "and one row per profile: our *a* and *b* (means with their 95 % intervals), the statistic "
    "(a − b, a / b or |a − b| / b) with its 95 % interval and the test that gave it, *p* — the p-value "
    "of the verdict's test — and *p (Holm)*, adjusted over the findings the profile tests, the units "
    "measured and, in brackets, those the verdict rests on (for a paired difference the discordant "
    "units, whose two sides differ: only they move a paired test; for an equivalence claim the units "
    "the intervention moved), the verdict before Holm's adjustment, the verdict and why."
)


def _finding_section(
    sec: Section, records: Mapping[str, Mapping[str, Any]], shown: Sequence[str]
) -> list[str]:
    lines = [f"### `{sec.id}`", "", sec.text, "",
             f"Source: {sec.source}. Paper: *a* = {sec.paper_a}; *b* = {sec.paper_b}. Rule: {sec.rule}"
             + (f" (margin: {sec.margin_source.rstrip('.')})" if sec.margin_source else "") + "."
             + (f" Ours: {sec.ours.rstrip('.')}." if sec.ours else ""), ""]
    if not shown:
        return [*lines, "No main profile has a check record.", ""]
    rows = []
    for p in shown:
        row = _by_id(records[p]).get(sec.id)
        if row is None:
            rows.append([p, "—", "—", "—", "—", "—", "—", "—", "—", "not scored", ""])
        else:
            rows.append([p, row["ours_a"], row["ours_b"], row["statistic"], row.get("test") or "—",
                         p_value_text(row.get("p")), p_value_text(row.get("p_holm")), _units(row),
                         row.get("unadjusted") or "—", f"**{row['verdict']}**", row["why"]])
    return [
        *lines,
        *markdown_table(
            ["profile", "ours a", "ours b", "statistic [95 % interval]", "test", "p", "p (Holm)",
             "n (rests on)", "before Holm", "verdict", "why"],
            rows,
        ),
        "",
    ]


def _units(row: Mapping[str, Any]) -> str:
    """``n (rests on)`` of a findings row: the units measured and those the verdict rests on (for a
    paired difference the discordant units; for an equivalence claim the units moved); ``—`` when
    not measured."""
    n, informative = row.get("n"), row.get("informative")
    if not isinstance(n, int) or n <= 0:
        return "—"
    return f"{n} ({informative})" if isinstance(informative, int) else str(n)


_DECIDABILITY_NOTE = (
    "Per finding and profile: the units its verdict rests on now, the units and questions a decision "
    "would need at the effect observed (80 % power at α = 0.05 divided by the findings the profile tests: "
    "the exact sign test's power for paired 0/1 outcomes against 0, a normal approximation otherwise, "
    "`inferqa_utils/measure/decidability.py`), and the cheapest shipped profile or data that reads that "
    "many questions, with its time projected from the run's ledger here and on the slow reference host "
    "(`inferqa_utils/verdicts/decidability.py`); for a finding this run decided, the units are those a "
    "replication would need at its effect. A finding whose estimate sits on its rule's edge has no effect "
    "to detect."
)


def _decidability(records: Mapping[str, Mapping[str, Any]], shown: Sequence[str]) -> list[str]:
    from .decidability import decidability_markdown

    lines = ["## Decidability", "", _DECIDABILITY_NOTE, ""]
    for p in shown:
        rows = records[p].get("decidability") or []
        lines += [f"### {p}", ""]
        lines += [*decidability_markdown(rows), ""] if rows else ["No decidability rows in this record.", ""]
    return lines


def _not_scored() -> list[str]:
    from ..measure.paper import load_not_scored

    items = load_not_scored()
    if not items:
        return []
    return ["## Claims not scored", "",
            "Claims of the papers that the notebooks compute or discuss but that our data cannot score, "
            "and why.", "", *[f"- `{n.id}` — {n.finding} ({n.source}): {n.why}." for n in items], ""]


def _appendix(
    sections: Sequence[Section], records: Mapping[str, Mapping[str, Any]], sample: Sequence[str]
) -> list[str]:
    """The sample runs: their runs rows and one table of their findings rows."""
    sizes = "; ".join(f"{p}: a median of {questions(records[p]):g} per finding" for p in sample)
    lines = [
        "## Appendix: sample runs",
        "",
        f"Runs of a handful of questions ({sizes}) that check the notebooks end to end. A finding needs at "
        "least "
        f"{MIN_UNITS} questions (passages, pairs) to be decided, so these runs leave their findings "
        "inconclusive "
        "by design; they are kept apart from the tables above.", "", "### Sample runs", "",
        *_runs_table(records, sample),
        "", "### Sample findings", "",
    ]
    rows = []
    for sec in sections:
        for p in sample:
            row = _by_id(records[p]).get(sec.id)
            rows.append(
                [
                    _link(sec.id),
                    p,
                    *(
                        (
                            row["statistic"], p_value_text(row.get("p_holm")), f"**{row['verdict']}**",
                            row["why"],
                        )
                        if row
                        else ("—", "—", "not scored", "")
                    ),
                ]
            )
    return [
        *lines,
        *markdown_table(
            ["finding", "profile", "statistic [95 % interval]", "p (Holm)", "verdict", "why"], rows
        ),
        "",
    ]


def render(records: Mapping[str, Mapping[str, Any]], profiles: Sequence[str] = DEFAULT_PROFILES,
           command: str = "python -m inferqa_utils results-page", generated: _dt.datetime | None = None,
           findings: Sequence[Finding] | None = None, figure: str | None = None, extra: str = "") -> str:
    """The Markdown page for the records of ``profiles`` (``{profile: record}``, see :func:`collect`):
    the scoreboard (one row per finding, a column group per main profile) with a line per profile,
    the forest plot ``figure`` (a path relative to the page; none when ``None``), the runs table,
    one section per finding, an appendix with the sample runs (:func:`split_profiles`), then ``extra``
    (Markdown: the section on the paper's own runs, :func:`inferqa_utils.paper_runs.page.section_for`).
    ``findings`` default to ``paper_numbers.yaml``; findings a record scored that the file no longer
    lists get a section from the record's own text."""
    findings = list(findings) if findings is not None else load_paper_numbers()
    main, sample = split_profiles(records, profiles)
    shown = [p for p in main if p in records]
    sections = _sections(findings, records, [*shown, *sample])
    lines = [
        *_header(command, generated or _dt.datetime.now(_dt.UTC)),
        *([provenance(records, shown), ""] if shown else []),
        *_scoreboard_part(sections, records, main, figure),
        "## Runs", "", _RUNS_NOTE, "",
        *_runs_table(records, main),
        "", "## Findings", "", _FINDINGS_NOTE, "",
    ]
    for sec in sections:
        lines += _finding_section(sec, records, shown)
    lines += _not_scored()
    if shown:
        lines += _decidability(records, shown)
    if sample:
        lines += _appendix(sections, records, sample)
    if extra:
        lines += [extra.rstrip("\n"), ""]
    cited = sorted({m for sec in sections for m in _PAPER_RE.findall(sec.source)})
    if cited:
        lines += ["## Papers", ""]
        lines += [f"- **{n}** — {PAPERS.get(n, '(reference not listed)')}" for n in cited]
    return "\n".join(lines).rstrip("\n") + "\n"


def write_forest(records: Mapping[str, Mapping[str, Any]], profiles: Sequence[str], folder: Path,
                 findings: Sequence[Finding] | None = None) -> tuple[Path, list[ForestPoint]] | None:
    """Draw the forest plot of the main profiles' findings to ``folder/results_forest.png`` (and
    ``.svg``); returns its path and the points drawn, ``None`` when no main profile has a record."""
    from ..present.figures import findings_forest

    findings = list(findings) if findings is not None else load_paper_numbers()
    main, _sample = split_profiles(records, profiles)
    shown = [p for p in main if p in records]
    if not shown:
        return None
    rows, points = forest_data(records, shown, _sections(findings, records, shown))
    out = Path(folder) / f"{FIGURE_NAME}.png"
    return out, findings_forest(rows, points, shown, out)


def write_page(
    out: str | Path,
    profiles: Sequence[str] = DEFAULT_PROFILES,
    folders: Iterable[str | Path] = (),
    command: str = "python -m inferqa_utils results-page",
    log: Any = print,
    generated: _dt.datetime | None = None,
) -> Path:
    """Collect the records of ``folders``, draw the forest plot into ``figures/`` beside ``out``,
    render the page for ``profiles`` and write it to ``out`` (dated ``generated``, by default now)."""
    folders = list(folders)
    records = collect(folders, log=log)
    ignored = sorted(set(records) - set(profiles))
    if ignored:
        log(f"[results-page] records of profiles not asked for, ignored: {', '.join(ignored)}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    drawn = write_forest(records, profiles, out.parent / "figures")
    figure = None
    if drawn is not None:
        figure = drawn[0].relative_to(out.parent).as_posix()
        log(f"[results-page] {drawn[0]}: forest plot of {len(drawn[1])} estimate(s)")
    from ..paper_runs.page import section_for

    page = render(records, profiles, command, generated=generated, figure=figure, extra=section_for(folders))
    out.write_text(page, encoding="utf-8")
    ran = [p for p in profiles if p in records]
    log(f"[results-page] {out}: {len(ran)} of {len(profiles)} profile(s) with a record"
        + (f" ({', '.join(ran)})" if ran else ""))
    return out
