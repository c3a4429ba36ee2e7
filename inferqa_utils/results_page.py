"""The results page ``docs/results.md``: the check records of several profiles on one page.

``python -m inferqa_utils check --profile NAME --report results/check_NAME.md`` (``make run`` does
it) writes the check record ``results/check_NAME.json`` beside the report
(:func:`inferqa_utils.check.check_record`). Runs of different profiles may live in different
clones, so :func:`collect` reads the ``check_*.json`` records of several folders (the newest record
of a profile wins) and :func:`render` writes one self-contained Markdown page: a *Runs* table with
one row per profile asked for ("not run" when no record exists), then one section per finding of
``inferqa_utils/paper_numbers.yaml`` (its text, the paper's source and numbers, the rule) with one
row per profile that was run. ``python -m inferqa_utils results-page`` (``make results-page``)
regenerates the page; nothing here runs a notebook or a model.

A record is refused (:class:`~inferqa_utils.errors.DataFormatError`) when a condition it counts
as OK was read from a table another run wrote than the run it checked (the message names the
table and both runs; ``check`` FAILs such conditions, so only a record edited by hand or made
otherwise has one), or from a table with no run record, unless the check accepted those
(``check --allow-unrecorded``, shown in the *Runs* table).
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .check import RECORD_SCHEMA
from .errors import DataFormatError
from .findings import CONTRADICTED, HOLDS, INCONCLUSIVE
from .paper import Finding, load_paper_numbers
from .provenance import describe_run

#: the profiles the page lists by default, in this order
DEFAULT_PROFILES = ("smoke", "default", "triviahg", "wikihint")
#: the check records a results folder holds
RECORD_GLOB = "check_*.json"
VERDICTS = (HOLDS, CONTRADICTED, INCONCLUSIVE)
#: the papers ``paper_numbers.yaml`` cites by number ("paper 000 §5.1"), as the README lists them
PAPERS = {
    "000": "*Inferential Question Answering* (the QUIT benchmark), arXiv 2602.01239, 2026.",
    "004": "Oh et al.: *Detrimental Contexts in Open-Domain Question Answering*, 2023.",
}
_PAPER_RE = re.compile(r"\bpaper (\d{3})\b")
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
    allow_unrecorded = _need(path, rec, "allow_unrecorded", bool)
    for n, c in enumerate(_need(path, rec, "conditions", list)):
        where = f"conditions[{n}]."
        if not isinstance(c, dict):
            raise DataFormatError(path, "a condition must be an object", field=f"conditions[{n}]")
        _need(path, c, "id", str, where)
        if _need(path, c, "status", str, where) not in _STATUSES:
            raise DataFormatError(path, f"status {c['status']!r} is not one of {', '.join(_STATUSES)}",
                                  field=f"{where}status")
        _check_condition_run(path, c, where, allow_unrecorded)
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
    return rec


def _check_condition_run(path: Path, c: Mapping[str, Any], where: str, allow_unrecorded: bool) -> None:
    """An OK condition's table was written by the run checked for it (module docstring)."""
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
        raise DataFormatError(path, f"condition {c['id']!r} is OK, but its table {c['file']} has no run record "
                                    "(and the check did not accept unrecorded tables)", field=f"{where}written_by")
    if written is not None and (checked is None or written["run_id"] != checked["run_id"]):
        raise DataFormatError(path, f"condition {c['id']!r} is OK, but table {c['file']} was written by "
                                    f"{describe_run(written)}, not by the run checked, {describe_run(checked)}",
                              field=f"{where}written_by")


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
    return out


def _date(rec: Mapping[str, Any]) -> _dt.datetime:
    d = _dt.datetime.fromisoformat(rec["date"])
    return d if d.tzinfo else d.replace(tzinfo=_dt.UTC)


# ----------------------------------------------------------------------------- rendering

def cell(v: Any) -> str:
    """A Markdown table cell: pipes escaped, line breaks flattened, empty → "—"."""
    text = "—" if v is None or v == "" else str(v)
    return " ".join(text.split()).replace("|", "\\|")


def _row(cells: Sequence[Any]) -> str:
    return "| " + " | ".join(cell(c) for c in cells) + " |"


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    return [_row(header), "|" + "---|" * len(header), *(_row(r) for r in rows)]


def _when(rec: Mapping[str, Any]) -> str:
    return _date(rec).astimezone(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _commit(git: Mapping[str, Any] | None) -> str:
    if not git or not git.get("commit"):
        return "unknown"
    return f"`{git['commit'][:7]}`" + (" (uncommitted changes)" if git.get("dirty") else "")


def _commit_cell(rec: Mapping[str, Any]) -> str:
    """The commit the check ran at, and the run's commit when it differs."""
    text = _commit(rec["git"])
    run_git = (rec.get("run") or {}).get("git")
    if isinstance(run_git, dict) and run_git.get("commit") and (
            run_git.get("commit") != rec["git"].get("commit") or run_git.get("dirty") != rec["git"].get("dirty")):
        text += f"; notebooks run at {_commit(run_git)}"
    return text


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
    return text


def _runs_checked(rec: Mapping[str, Any]) -> str:
    """The run ids the conditions were checked against, in order of first appearance."""
    ids = dict.fromkeys(str(c["run_checked"]["run_id"]) for c in rec["conditions"] if c.get("run_checked"))
    return ", ".join(f"`{i}`" for i in ids) or "—"


def _verdicts(rec: Mapping[str, Any]) -> str:
    if rec["findings"] is None:
        return "not scored"
    counts = {v: sum(f["verdict"] == v for f in rec["findings"]) for v in VERDICTS}
    return ", ".join(f"{n} {v}" for v, n in counts.items())


def _p(v: float | None) -> str:
    return "—" if v is None else f"{v:.4f}"


def _value(label: str, v: float | None) -> str:
    return f"{label}: " + ("stated in words" if v is None else f"{v:g}")


def render(records: Mapping[str, Mapping[str, Any]], profiles: Sequence[str] = DEFAULT_PROFILES,
           command: str = "python -m inferqa_utils results-page", generated: _dt.datetime | None = None,
           findings: Sequence[Finding] | None = None) -> str:
    """The Markdown page for the records of ``profiles`` (``{profile: record}``, see :func:`collect`);
    ``findings`` default to ``paper_numbers.yaml``. Findings a record scored that the file no longer
    lists get a section from the record's own text."""
    findings = list(findings) if findings is not None else load_paper_numbers()
    generated = generated or _dt.datetime.now(_dt.UTC)
    ran = [p for p in profiles if p in records]
    lines = ["# Results", "",
             f"*Generated by `{command}` on {generated.astimezone(_dt.UTC):%Y-%m-%d %H:%M} UTC from the check "
             "records `results/check_<profile>.json`, which `python -m inferqa_utils check --profile <profile> "
             "--report results/check_<profile>.md` writes (`make run` does it at the end of a run). Do not edit "
             "by hand: `make results-page` regenerates this page.*", "",
             "Each profile runs the notebooks on its own data and models ([README, *Profiles*](../README.md#profiles)). "
             "A *condition* "
             "is one expected number of the reproduction matrix (`inferqa_utils/reproduction.yaml`), OK when "
             "the run reproduces it within its tolerance, read from a table the run checked wrote (*runs checked*: the "
             "run folders `build/executions/<run>` whose tables the conditions read). A *finding* is a claim of the papers, scored on the "
             "run from two of our per-question quantities *a* and *b*: the statistic (a − b, a / b or "
             "|a − b| / b) comes with its seeded 95 % bootstrap interval; the finding **holds** when the "
             "interval lies inside the region its rule states, is **contradicted** when it lies outside, and "
             "is **inconclusive** when it straddles a boundary or an input is missing or constant. p (Holm) "
             "is the p-value of mean(a) = mean(b), Holm-adjusted over the findings of one profile. Only "
             "directions and size classes are compared with the papers, never absolute numbers: our "
             "corpora, models and question counts are far smaller.", "",
             "## Runs", ""]
    runs = []
    for p in profiles:
        r = records.get(p)
        if r is None:
            runs.append([p, "not run", "—", "—", "—", "—", "—", "—", "—", "—"])
        else:
            runs.append([p, f"`{r['dataset']}`", r["split"], _when(r), _commit_cell(r), _machine(r["machine"]),
                         _duration(r.get("run")), _conditions(r), _verdicts(r), _runs_checked(r)])
    lines += _table(["profile", "dataset", "split", "checked", "commit", "machine", "notebook time",
                     "conditions", "findings", "runs checked"], runs)
    lines += ["", "## Findings", ""]
    known = {f.id for f in findings}
    extra: dict[str, Mapping[str, Any]] = {}
    for p in ran:
        for row in records[p]["findings"] or []:
            if row["id"] not in known:
                extra.setdefault(row["id"], row)
    sections = [(f.id, f.finding, f.source, _value(f.a_label, f.a_value), _value(f.b_label, f.b_value),
                 f.rule(), f.ours) for f in findings]
    sections += [(fid, row.get("finding", fid), row.get("source", ""), row.get("paper_a", ""),
                  row.get("paper_b", ""), row.get("rule", ""), row.get("ours_is", "")) for fid, row in extra.items()]
    for fid, text, source, paper_a, paper_b, rule, ours in sections:
        lines += [f"### `{fid}`", "", text, "",
                  f"Source: {source}. Paper: *a* = {paper_a}; *b* = {paper_b}. Rule: {rule}."
                  + (f" Ours: {ours.rstrip('.')}." if ours else ""), ""]
        if not ran:
            lines += ["No profile has been run.", ""]
            continue
        rows = []
        for p in ran:
            by_id = {row["id"]: row for row in records[p]["findings"] or []}
            row = by_id.get(fid)
            if row is None:
                rows.append([p, "—", "—", "—", "—", "not scored", ""])
            else:
                rows.append([p, row["ours_a"], row["ours_b"], row["statistic"], _p(row.get("p_holm")),
                             f"**{row['verdict']}**", row["why"]])
        lines += [*_table(["profile", "ours a", "ours b", "statistic [95 % interval]", "p (Holm)", "verdict",
                           "why"], rows), ""]
    cited = sorted({m for _fid, _t, source, *_ in sections for m in _PAPER_RE.findall(source)})
    if cited:
        lines += ["## Papers", ""]
        lines += [f"- **{n}** — {PAPERS.get(n, '(reference not listed)')}" for n in cited]
    return "\n".join(lines).rstrip("\n") + "\n"


def write_page(out: str | Path, profiles: Sequence[str] = DEFAULT_PROFILES, folders: Iterable[str | Path] = (),
               command: str = "python -m inferqa_utils results-page", log: Any = print) -> Path:
    """Collect the records of ``folders``, render the page for ``profiles`` and write it to ``out``."""
    records = collect(folders, log=log)
    ignored = sorted(set(records) - set(profiles))
    if ignored:
        log(f"[results-page] records of profiles not asked for, ignored: {', '.join(ignored)}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(records, profiles, command), encoding="utf-8")
    ran = [p for p in profiles if p in records]
    log(f"[results-page] {out}: {len(ran)} of {len(profiles)} profile(s) run"
        + (f" ({', '.join(ran)})" if ran else ""))
    return out
