"""Measured numbers of the documentation pages, generated from the records under ``docs/records/``.

The contract, once:

* A **record** is one JSON file under ``docs/records/`` (``benchmarks/<script>.json``,
  ``runs/<name>.json``, ``releases/<dataset>.json``): ``what`` (one line), ``commit`` (the code
  measured; ``null`` when it was not recorded, then ``commit_note`` says so), ``date``
  (``YYYY-MM-DD``), ``machine`` (``cpus``, ``cpu_model``, ``ram_gb``, ``os``, ``python``;
  ``llm_rates`` ``{model: {prefill_tok_s, decode_tok_s}}`` when the numbers are LLM timings;
  ``load``, what else ran), ``values`` (the measured numbers), ``views`` (how a page shows them,
  below), optionally ``command``, ``commit_note``, ``from``, ``describes`` and
  ``still_valid_after``. ``from`` reads further values out of other JSON files of the repository
  (``{"file": PATH, "values": {NAME: [KEY, ...]}}`` or a list of them: a dataset release's manifest,
  the run records of ``inferqa_utils/record/reference_costs.json``, another record, a check record;
  a key ``"id=NAME"`` picks the item of a list whose ``id`` is ``NAME``), so a number the
  repository already records is not copied; a record read so is listed in the page's table of
  records beside the one that reads it. ``sum`` (``{NAME: [VALUE, ...]}``) adds values up after
  that, so a total is never typed beside its parts. A benchmark's ``--record PATH`` rewrites
  ``commit``, ``date``, ``machine`` and ``values`` and keeps the rest (:func:`write_record`).
* A **view** is ``{"text": TEMPLATE}`` (a string or a list of lines, filled by
  :meth:`str.format` from ``values``: ``{name}``, ``{name:,.1f}``, ``{rows[0][key]}``; a negative
  number is printed with "−", a missing one as "—"), ``{"table": {"rows": NAME, "columns":
  [[HEADER, CELL TEMPLATE], ...]}}`` (one Markdown row per item of ``values[NAME]``, each cell
  filled from the item and ``values``) or ``{"code": NAME}`` (the lines of ``values[NAME]`` as a
  fenced block). Besides ``values`` a template reads the record's ``machine``
  (``{machine[llm_rates][qwen2.5-coder-1.5b][prefill_tok_s]}``), ``date`` and ``record`` (its path,
  ``docs/records/runs/default.json``: a page names the record it quotes, never a commit); the format
  spec ``min`` prints seconds as whole minutes (``{total:min}``), so a minute count cannot go stale
  beside its seconds.
* A **page** (README.md, docs/*.md) marks a generated block with
  ``<!-- record: <path under docs/records> [view] -->`` … ``<!-- /record -->`` (view ``text`` when
  none is named), and once ``<!-- records -->`` … ``<!-- /records -->``: the table of every record
  the page's blocks quote, by its path, with its date, host and run conditions. The commit a record
  measured stays in the record: no page names it (:func:`page_commits` counts the commits the pages
  name, :func:`prose_commits` finds one written in prose).
* ``describes`` (paths of the repository) says which code a record measured: :func:`stale` reports
  a record whose described paths changed in a commit after ``commit`` (``git log
  <commit>..HEAD -- <paths>``), unless ``still_valid_after`` names a commit after which they did
  not change (set after reading those changes; a re-run with ``--record`` clears it).

A measurement's commit is named only in its record: :func:`prose_commits` lists each commit of this
clone that the prose of a page names outside its blocks, its table of records and its fenced code,
and :func:`page_commits` every distinct commit any part of the pages names (at most
:data:`MAX_PAGE_COMMITS`).

:func:`render_page` rewrites a page's blocks; :func:`update` (``python -m inferqa_utils docs``,
``make docs``) writes every page whose blocks changed; :func:`differences` names each block whose
committed text differs from its record (``tests/test_docs_records.py``). Nothing here runs a model.
The same command writes ``docs/results.md`` from the check records ``check_<profile>.json`` kept under
``docs/records`` when there are some (``inferqa_utils.__main__.docs_results_page``, dated by the newest
record, so a re-run writes the same page), and leaves it alone otherwise.
"""

from __future__ import annotations

import json
import re
import string
from collections import ChainMap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .tables import MISSING, markdown_table

#: the records' folder, relative to the repository root
RECORDS = Path("docs") / "records"
#: the pages that may hold generated blocks, relative to the repository root (glob patterns)
PAGES = ("README.md", "docs/*.md")
#: a generated block: the record, the view, the generated text
BLOCK = re.compile(r"<!-- record: (?P<record>\S+)(?: (?P<view>\S+))? -->\n(?P<body>.*?)<!-- /record -->",
                   re.DOTALL)
#: the page's table of records
HEADER = re.compile(r"<!-- records -->\n(?P<body>.*?)<!-- /records -->", re.DOTALL)
REQUIRED = ("what", "commit", "date", "machine", "views")
#: the label of a page's table of records among its blocks
HEADER_LABEL = "table of records"


class RecordError(ValueError):
    """A record that cannot be read or rendered; the message names the record (and the view)."""


@dataclass(frozen=True)
class Difference:
    """A generated block of a committed page that differs from what its record renders."""

    page: str
    block: str
    record: str
    view: str
    committed: str
    rendered: str

    def __str__(self) -> str:
        if self.block == HEADER_LABEL:
            return f"{self.page}: the table of records differs from the records the page quotes"
        where = f"block {self.block} (record {self.record}, view {self.view})"
        return f"{self.page}: {where} differs from its record"


@dataclass(frozen=True)
class Stale:
    """A record checked against the code it describes: ``status`` is ``stale`` (changed after it),
    ``valid`` or ``unknown`` (no git, or its commit is not in this clone's history)."""

    record: str
    status: str
    message: str


# ----------------------------------------------------------------------------- records

def load_record(path: str | Path, root: str | Path = ".") -> dict[str, Any]:
    """The record at ``path`` (absolute, or relative to ``root/docs/records``), with the values of
    its ``from`` file merged into ``values``."""
    root = Path(root)
    path = Path(path) if Path(path).is_absolute() else root / RECORDS / path
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RecordError(f"{path}: cannot be read as a record ({exc})") from exc
    missing = [k for k in REQUIRED if k not in rec]
    if not isinstance(rec, dict) or missing:
        raise RecordError(f"{path}: a record needs {', '.join(REQUIRED)}; missing {', '.join(missing)}")
    values = dict(rec.get("values") or {})
    for source in _sources(rec):
        src_path = root / source["file"]
        try:
            src = json.loads(src_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise RecordError(f"{path}: its 'from' file {source['file']} cannot be read ({exc})") from exc
        for name, keys in source["values"].items():
            node = src
            for key in keys:
                try:
                    node = _step(node, key)
                except (KeyError, IndexError, TypeError) as exc:
                    raise RecordError(f"{path}: {source['file']} has no {keys!r} (value {name!r})") from exc
            values[name] = node
    for name, parts in (rec.get("sum") or {}).items():
        try:
            values[name] = round(sum(float(values[k]) for k in parts), 6)
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordError(f"{path}: cannot add up {parts!r} (sum {name!r}: {exc})") from exc
    rec["values"] = values
    return rec


def _step(node: Any, key: Any) -> Any:
    """``node[key]``; on a list, ``"FIELD=VALUE"`` picks the one item whose ``FIELD`` is ``VALUE``
    (a finding of a check record by its id, whatever its position)."""
    if isinstance(node, list) and isinstance(key, str) and "=" in key:
        field, _, wanted = key.partition("=")
        found = [item for item in node if isinstance(item, Mapping) and str(item.get(field)) == wanted]
        if len(found) != 1:
            raise KeyError(f"{len(found)} items with {key}")
        return found[0]
    return node[key]


def _sources(rec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The record's ``from`` entries (one or a list)."""
    source = rec.get("from") or []
    return [source] if isinstance(source, dict) else list(source)


def write_record(path: str | Path, values: Mapping[str, Any], *, what: str, commit: str | None, date: str,
                 machine: Mapping[str, Any], command: str | None = None, commit_note: str | None = None,
                 describes: Iterable[str] = ()) -> Path:
    """Write a measurement as the record ``path``: ``commit``, ``date``, ``machine`` and ``values``
    from this run; the ``views``, ``from`` and ``sum`` (and ``describes``, when the file names some)
    of the record already there are kept, ``still_valid_after`` is dropped (the record is new)."""
    path = Path(path)
    old: dict[str, Any] = {}
    if path.exists():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            old = {}
    rec = {
        "what": old.get("what") or what,
        "command": command or old.get("command"),
        "commit": commit,
        "commit_note": commit_note,
        "date": date,
        "machine": dict(machine),
        "describes": old.get("describes") or list(describes),
        "values": dict(values),
        "from": old.get("from"),
        "sum": old.get("sum"),
        "views": old.get("views") or {},
    }
    rec = {k: v for k, v in rec.items() if v not in (None, [])}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rec, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


class _Formatter(string.Formatter):
    """:meth:`str.format` with "—" for a missing value and "−" for a negative number."""

    def format_field(self, value: Any, format_spec: str) -> str:
        if value is None:
            return MISSING
        if format_spec == "min":  # seconds as whole minutes
            return f"{float(value) / 60:,.0f}"
        text = format(value, format_spec)
        return text.replace("-", "−") if isinstance(value, int | float) else text


_FORMAT = _Formatter()


def _fill(template: str | list[str], values: Mapping[str, Any], where: str) -> str:
    text = "\n".join(template) if isinstance(template, list) else template
    try:
        return _FORMAT.vformat(text, (), values)
    except (KeyError, IndexError, ValueError, TypeError) as exc:
        raise RecordError(f"{where}: cannot fill {text[:60]!r}… ({type(exc).__name__}: {exc})") from exc


def render_view(rec: Mapping[str, Any], view: str, where: str = "record", name: str | None = None) -> str:
    """The Markdown of view ``view`` of the record ``rec`` (module docstring); ``name`` is its path
    under ``docs/records``, which a template reads as ``{record}``."""
    spec = rec["views"].get(view)
    if spec is None:
        raise RecordError(f"{where}: no view {view!r} (views: {', '.join(rec['views']) or 'none'})")
    where = f"{where}, view {view}"
    own = {"machine": rec.get("machine") or {}, "date": rec.get("date")}
    if name is not None:
        own["record"] = (RECORDS / name).as_posix()
    values = ChainMap(dict(rec["values"]), own)
    if "text" in spec:
        return _fill(spec["text"], values, where)
    if "table" in spec:
        table = spec["table"]
        rows = values.get(table["rows"])
        if not isinstance(rows, list):
            raise RecordError(f"{where}: values[{table['rows']!r}] is not a list of rows")
        header = [h for h, _ in table["columns"]]
        body = [[_fill(cell, ChainMap(row, values), where) for _, cell in table["columns"]] for row in rows]
        return "\n".join(markdown_table(header, body))
    if "code" in spec:
        lines = values.get(spec["code"])
        if not isinstance(lines, list):
            raise RecordError(f"{where}: values[{spec['code']!r}] is not a list of lines")
        return "\n".join(["```", *map(str, lines), "```"])
    raise RecordError(f"{where}: a view is one of text, table, code")


def _hardware(machine: Mapping[str, Any]) -> str:
    """``2 cores AMD EPYC, 23.5 GB RAM, Linux, Python 3.11.7`` (what the machine description has)."""
    parts = [f"{machine['cpus']} cores" if machine.get("cpus") else None, machine.get("cpu_model")]
    text = " ".join(str(p) for p in parts if p)
    system = str(machine.get("os") or "").split(" ")[0]  # the kernel's version is left out
    rest = [f"{machine['ram_gb']:g} GB RAM" if machine.get("ram_gb") else None, system,
            f"Python {machine['python']}" if machine.get("python") else None]
    return ", ".join(str(p) for p in [text, *rest] if p)


def rates_phrase(rates: Mapping[str, Mapping[str, float]]) -> str:
    """``LLM prefill / decode tok/s: qwen2.5-coder-1.5b 74.1 / 26.3, …`` of ``{model: {prefill_tok_s,
    decode_tok_s}}``."""
    return "LLM prefill / decode tok/s: " + ", ".join(
        f"{m} {r['prefill_tok_s']:g} / {r['decode_tok_s']:g}" for m, r in rates.items())


def _conditions(machine: Mapping[str, Any]) -> str:
    """The LLM rates (when the record has them) and what else ran."""
    parts = []
    rates = machine.get("llm_rates") or {}
    if "llm_rates" in machine and not rates:
        parts.append("LLM rates not recorded")
    if rates:
        parts.append(rates_phrase(rates))
    if machine.get("load"):
        parts.append(str(machine["load"]))
    return "; ".join(parts) or MISSING


def _code_text(rec: Mapping[str, Any]) -> str | None:
    """What the record says of the code beyond its commit (``commit_note``), or that it names no
    commit; ``None`` when it names one and nothing more. The commit itself stays in the record."""
    if not rec.get("commit"):
        return "commit not recorded" + (f" ({rec['commit_note']})" if rec.get("commit_note") else "")
    return f"code: the record's commit {rec['commit_note']}" if rec.get("commit_note") else None


def header(records: Iterable[tuple[str, Mapping[str, Any]]], page: str) -> str:
    """The page's table of records: each record the page quotes, by its path (linked), with what it
    measured, its date and its run conditions (what the record says of its code beyond the commit,
    the host's LLM rates, other load); the hardware all records share is named once, above the
    table, else per row. Hosts of one kind differ in their LLM rates, so the rates are per record.
    No commit is shown: the record holds it. ``page`` is the page's path relative to the root, for
    the links."""
    import os

    records = list(records)
    folder = Path(page).parent
    hardware = {_hardware(rec["machine"]) for _name, rec in records}
    shared = hardware.pop() if len(hardware) == 1 else None
    columns = ["record", "what", "date", *([] if shared else ["machine"]), "conditions"]
    rows = []
    for name, rec in records:
        path = (RECORDS / name).as_posix()
        link = Path(os.path.relpath(RECORDS / name, folder)).as_posix()
        conditions = _conditions(rec["machine"])
        code = _code_text(rec)
        if code:
            conditions = code if conditions == MISSING else f"{code}; {conditions}"
        rows.append([f"[`{path}`]({link})", str(rec["what"]), str(rec["date"]),
                     *([] if shared else [_hardware(rec["machine"])]), conditions])
    hosts = (f" on hosts of one kind ({shared}), which differ in their LLM rates" if shared
             else " on the hosts the table names")
    return "\n".join([
        "*The measured numbers on this page are generated from these records (`make docs` rewrites them; "
        f"a benchmark's `--record` re-measures one), measured{hosts}. Each record holds the commit it "
        "measured; the page names the record.*",
        "",
        *markdown_table(columns, rows),
    ])


# ----------------------------------------------------------------------------- pages

def render_page(text: str, page: str, root: str | Path = ".") -> str:
    """``text`` (the page ``page``, relative to ``root``) with every block and its table of records
    generated from the records."""
    root = Path(root)
    used: dict[str, dict[str, Any]] = {}

    def block(m: re.Match[str]) -> str:
        name, view = m["record"], m["view"] or "text"
        if name not in used:
            used[name] = load_record(name, root)
        body = render_view(used[name], view, f"{page}: record {name}", name)
        opening = f"<!-- record: {m['record']}{' ' + m['view'] if m['view'] else ''} -->"
        return f"{opening}\n\n{body}\n\n<!-- /record -->"

    out = BLOCK.sub(block, text)
    if used and HEADER.search(out):
        listed: dict[str, dict[str, Any]] = {}
        for name, rec in used.items():
            listed[name] = rec
            for source in _sources(rec):  # records a record reads from, listed after it
                file = Path(source["file"])
                # a check record (``check_<profile>.json``) is the results page's, not a record
                if file.parts[: len(RECORDS.parts)] == RECORDS.parts and not file.name.startswith("check_"):
                    inner = file.relative_to(RECORDS).as_posix()
                    listed.setdefault(inner, load_record(inner, root))
        table = header(listed.items(), page)
        out = HEADER.sub(lambda _m: f"<!-- records -->\n\n{table}\n\n<!-- /records -->", out, count=1)
    return out


def pages(root: str | Path = ".") -> list[Path]:
    """The pages of ``root`` that hold a generated block."""
    root = Path(root)
    found = sorted({p for pattern in PAGES for p in root.glob(pattern) if p.is_file()})
    return [p for p in found if "<!-- record: " in p.read_text(encoding="utf-8")]


def update(root: str | Path = ".", log: Any = print) -> list[Path]:
    """Rewrite every page of ``root`` whose generated blocks differ from their records; returns the
    pages written."""
    root = Path(root)
    written = []
    for path in pages(root):
        text = path.read_text(encoding="utf-8")
        new = render_page(text, path.relative_to(root).as_posix(), root)
        if new != text:
            path.write_text(new, encoding="utf-8")
            written.append(path)
        log(f"[docs] {path.relative_to(root).as_posix()}: {'rewritten' if new != text else 'up to date'}")
    return written


def _blocks(text: str) -> list[tuple[str, str, str, str]]:
    """``(label, record, view, text)`` of the table of records and each generated block (numbered
    from 1 in page order)."""
    found = enumerate(BLOCK.finditer(text), start=1)
    out = [(str(n), m["record"], m["view"] or "text", m[0]) for n, m in found]
    head = HEADER.search(text)
    return [*((HEADER_LABEL, "every record of the page", "", head[0]) for _ in [head] if head), *out]


def differences(root: str | Path = ".") -> list[Difference]:
    """Every generated block (and table of records) of ``root``'s pages whose committed text differs
    from what its record renders."""
    root = Path(root)
    found = []
    for path in pages(root):
        page = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        committed, rendered = _blocks(text), _blocks(render_page(text, page, root))
        for (label, record, view, old), (*_same, new) in zip(committed, rendered, strict=True):
            if old != new:
                found.append(Difference(page, label, record, view, old, new))
    return found


def record_paths(root: str | Path = ".") -> list[Path]:
    """The record files under ``root/docs/records`` (check records of the results page excluded)."""
    folder = Path(root) / RECORDS
    return sorted(p for p in folder.rglob("*.json") if not p.name.startswith("check_"))


# ----------------------------------------------------------------------------- staleness

def _git(root: Path, *args: str) -> str | None:
    import subprocess

    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def stale(root: str | Path = ".") -> list[Stale]:
    """Each record that names the code it ``describes``, checked against the history of that code
    (module docstring)."""
    root = Path(root)
    out = []
    for path in record_paths(root):
        name = path.relative_to(root / RECORDS).as_posix()
        rec = json.loads(path.read_text(encoding="utf-8"))
        paths = rec.get("describes") or []
        if not paths:
            continue
        since = rec.get("still_valid_after") or rec.get("commit")
        if not since:
            out.append(Stale(name, "unknown", f"{name}: describes {', '.join(paths)} but names no commit"))
            continue
        if _git(root, "cat-file", "-e", f"{since}^{{commit}}") is None:
            out.append(Stale(name, "unknown", f"{name}: commit {since[:7]} is not in this clone's history "
                                              "(a shallow clone?), or git is unavailable"))
            continue
        log = _git(root, "log", "--format=%h %cs %s", f"{since}..HEAD", "--", *paths)
        if log is None:
            out.append(Stale(name, "unknown", f"{name}: git log failed"))
        elif log.strip():
            out.append(Stale(name, "stale", (
                f"{name} measured {', '.join(paths)} at {since[:7]}; they changed after it:\n  "
                + "\n  ".join(log.strip().splitlines())
                + "\n  re-run the benchmark with --record, or, when these changes leave its numbers as "
                  f"they are, add \"still_valid_after\": \"<the newest of these commits>\" to {name}")))
        else:
            out.append(Stale(name, "valid", f"{name}: {', '.join(paths)} unchanged since {since[:7]}"))
    return out


# ----------------------------------------------------------------------------- commits in prose

#: a hexadecimal word that may be a commit: 7 to 40 hex digits, at least one of them a letter
HEX_WORD = re.compile(r"(?<![\w/.-])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w/-])")
FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
#: pages generated as a whole (their commits come from the check records they are made of)
GENERATED_PAGES = ("docs/results.md",)


def prose_commits(root: str | Path = ".") -> list[str] | None:
    """``page:line: hash`` for each commit of this repository named in the prose of README.md and
    docs/*.md — outside the generated blocks, the tables of records and fenced code, where a
    measurement's commit belongs in its record. ``None`` when git cannot tell (no git, not a clone).
    A hexadecimal word git does not know as a commit of this clone (llama.cpp's commit, a checksum)
    is not reported."""
    root = Path(root)
    if _git(root, "rev-parse", "HEAD") is None:
        return None
    found: list[tuple[str, int, str]] = []
    for path in sorted({p for pattern in PAGES for p in root.glob(pattern) if p.is_file()}):
        page = path.relative_to(root).as_posix()
        if page in GENERATED_PAGES:
            continue
        text = path.read_text(encoding="utf-8")
        for pattern in (BLOCK, HEADER, FENCE):  # blank out, keeping line numbers
            text = pattern.sub(lambda m: "\n" * m[0].count("\n"), text)
        for number, line in enumerate(text.splitlines(), start=1):
            found += [(page, number, m[0]) for m in HEX_WORD.finditer(line)]
    if not found:
        return []
    import subprocess

    words = sorted({word for *_, word in found})
    try:
        done = subprocess.run(["git", "cat-file", "--batch-check"], cwd=root, capture_output=True, text=True,
                              input="".join(f"{w}^{{commit}}\n" for w in words), timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    commits = {w for w, answer in zip(words, done.stdout.splitlines(), strict=False) if " commit " in answer}
    return [f"{page}:{number}: {word}" for page, number, word in found if word in commits]


#: every word of 7 to 40 hexadecimal digits, as ``grep -ohE '\b[0-9a-f]{7,40}\b'`` finds them
HEX_ANY = re.compile(r"\b[0-9a-f]{7,40}\b")
#: the most distinct commits README.md and docs/*.md together may name (a page names the record it
#: quotes; the record holds the commit)
MAX_PAGE_COMMITS = 8


def page_commits(root: str | Path = ".") -> list[str] | None:
    """The distinct commits of this clone that README.md and docs/*.md name anywhere — prose,
    generated blocks, tables of records, fenced code and generated pages alike — as the hexadecimal
    words git resolves to a commit, sorted. ``None`` when git cannot tell (no git, not a clone).
    A hexadecimal word that is no commit here (a count, a date, llama.cpp's commit) is left out."""
    import subprocess

    root = Path(root)
    if _git(root, "rev-parse", "HEAD") is None:
        return None
    words: set[str] = set()
    for path in sorted({p for pattern in PAGES for p in root.glob(pattern) if p.is_file()}):
        words.update(HEX_ANY.findall(path.read_text(encoding="utf-8")))
    if not words:
        return []
    ordered = sorted(words)
    try:
        done = subprocess.run(["git", "cat-file", "--batch-check"], cwd=root, capture_output=True, text=True,
                              input="".join(f"{w}^{{commit}}\n" for w in ordered), timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return [w for w, answer in zip(ordered, done.stdout.splitlines(), strict=False) if " commit " in answer]
