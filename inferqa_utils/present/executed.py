"""The executed notebooks of a run, as shipped copies a code host renders before anyone runs anything.

A run of the notebooks (``python -m inferqa_utils run``) leaves its executed copies in its folder,
``<root>/build/executions/<run id>/`` (papermill's output, with every output and embedded figure),
beside its ``manifest.json`` and, once checked, ``results/check_<profile>.json``. :func:`export`
turns those copies into the shipped ones in ``docs/executed/``:

* **outputs kept, machine paths removed** — every string of the notebook (outputs, tracebacks,
  papermill's ``input_path`` / ``output_path``, cell and kernel metadata) goes through
  :func:`scrub_paths`: the run's checkout (``<root>``, read off the run folder's place) becomes
  ``.``, its parent folder ``..``, a home folder ``~``, a temporary folder ``<tmp>`` and an absolute
  Python interpreter its bare name; image payloads are left alone (they are binary);
* **figures at a modest resolution** — each ``image/png`` output is re-encoded (:func:`shrink_png`):
  at most :data:`MAX_WIDTH` px wide (aspect kept), 256 colours, optimized; a figure already that
  narrow keeps its bytes when the re-encoding would not be smaller;
* **one header cell** (tagged :data:`HEADER_TAG`) first in each notebook: the run, its commit and
  date, the machine and the LLM rates it measured before its first notebook, the run's check (OK /
  FAIL of the reproduction matrix, the findings' verdicts), and where the notebook's model outputs
  came from — computed in the run or replayed from the LLM cache, and whether the run started warm
  from a shipped outputs file (a replayed output never reads as a recomputation); links to the
  previous and next notebook, the index and ``../results.md``;
* ``README.md`` — the index: one row per notebook (its link, its first heading, its time, model
  outputs computed / replayed, its size) under the run's facts;
* the record ``docs/records/runs/executed_notebooks.json`` (:mod:`inferqa_utils.present.docs_blocks`'
  format): the run's full commit and ``describes: ["notebooks", "inferqa_utils"]``, so that the
  records' rule (``tests/test_docs_records.py``) fails once the notebooks or the package change
  after the run, with the sizes, the run id, its date, machine and rates.

A run whose notebooks did not all finish is refused (:class:`~inferqa_utils.core.errors.MissingInputError`:
the executed copies of the notebooks it names are missing or incomplete).
The same run gives byte-identical files wherever its folder lies (sorted JSON keys as nbformat
writes them, nothing of the export's own time or place); the folder is swapped in whole
(:func:`inferqa_utils.core.atomic.staged_dir`) and the record written atomically.

Which run to export is the command line's business (``python -m inferqa_utils executed export``:
the profile's newest complete run, found with :mod:`inferqa_utils.record.run_dirs`); this module,
a presentation layer below ``record``, reads the run folder it is given.

    >>> scrub_paths("wrote /srv/clone/build/x.csv (home /root/.cache, tmp /tmp/abc/f)",
    ...             path_rules(Path("/srv/clone")))
    'wrote ./build/x.csv (home ~/.cache, tmp <tmp>/abc/f)'
    >>> unfinished({"notebooks_selected": ["00_a.ipynb", "01_b.ipynb"],
    ...             "notebooks": {"00_a.ipynb": {"status": "ok"}, "01_b.ipynb": {"status": "failed"}}})
    ['01_b.ipynb']
"""

from __future__ import annotations

import base64
import datetime as _dt
import io
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.atomic import staged_dir, write_text_atomic
from ..core.config import PATHS
from ..core.errors import MissingInputError
from ..measure.verdict import BY_CONSTRUCTION, CONTRADICTED, HOLDS, INCONCLUSIVE
from .docs_blocks import RECORDS, rates_phrase
from .tables import markdown_table

#: where the shipped copies go, relative to the repository root
OUT = Path("docs") / "executed"
#: the record of the shipped copies, relative to the repository root
RECORD = RECORDS / "runs" / "executed_notebooks.json"
#: the tag (and cell id) of the header cell :func:`export` puts first in each notebook
HEADER_TAG = "inferqa-executed-header"
#: papermill's tag on the cell of parameters it injects
INJECTED_TAG = "injected-parameters"
#: the widest a shipped figure is, in pixels
MAX_WIDTH = 900
#: the colours of a re-encoded figure (a palette PNG; ``None`` keeps full colour)
COLORS = 256
#: the model whose rates a header names first (the reader and judge of the default profile)
MAIN_MODEL = "qwen2.5-coder-1.5b"
#: the command that writes the shipped copies
COMMAND = "python -m inferqa_utils executed export"
#: output payloads that are binary (base64), never scrubbed
BINARY = ("image/png", "image/jpeg", "image/gif", "image/webp")


# ----------------------------------------------------------------------------- machine paths

#: ``(pattern, replacement)``, applied in order by :func:`scrub_paths`
Rule = tuple[re.Pattern[str], str]

_EDGE = r"(?<![\w.~-])"  # a path starts here (not inside a word or another path)
_END = r"(?![\w.-])"  # ... and the folder's name ends here


def run_root(run_dir: Path) -> Path | None:
    """The checkout a run folder belongs to: ``<root>`` of ``<root>/build/executions/<run id>``;
    ``None`` for a folder elsewhere."""
    run_dir = Path(run_dir).absolute()
    if run_dir.parent.name == "executions" and run_dir.parent.parent.name == "build":
        return run_dir.parents[2]
    return None


def run_roots(run_dir: Path, manifest: Mapping[str, Any]) -> list[Path]:
    """The checkouts a run's paths may name: the one its folder lies in now (:func:`run_root`) and
    the one it ran in (its manifest's ``output`` of each notebook: ``<root>/build/executions/<id>/<nb>``),
    which differ when the folder was copied or moved after the run."""
    found = [run_root(run_dir)]
    per_nb = manifest.get("notebooks") if isinstance(manifest.get("notebooks"), dict) else {}
    for info in per_nb.values():
        output = info.get("output") if isinstance(info, Mapping) else None
        if isinstance(output, str) and output.startswith("/"):
            found.append(run_root(Path(output).parent))
    return list(dict.fromkeys(r for r in found if r is not None))


def path_rules(root: Path | Sequence[Path] | None, home: Path | None = None) -> list[Rule]:
    """The rules of :func:`scrub_paths` for a run of the checkout ``root`` (or of several, longest
    first): ``root`` → ``.``, its parent folder → ``..`` (a sibling such as ``../shared/data``), an
    absolute Python interpreter → its name, a home folder (``home``, ``/home/<user>``,
    ``/Users/<user>``, ``/root``) → ``~``, a temporary folder (``/tmp``, ``/var/tmp``, macOS's
    ``/var/folders/…/T``) → ``<tmp>``."""
    roots = [root] if isinstance(root, Path) else list(root or [])
    rules: list[Rule] = []
    names = dict.fromkeys(str(p) for r in roots for p in (r, r.resolve()))  # as given, and through links
    for r in sorted(names, key=len, reverse=True):
        rules.append((re.compile(_EDGE + re.escape(r) + _END), "."))
    rules.append((re.compile(_EDGE + r"/(?:[^\s'\"/]+/)*bin/(python[\d.]*)(?![\w/.-])"), r"\1"))
    parents = dict.fromkeys(str(r.parent) for r in roots if len(r.parts) > 2)
    for parent in sorted(parents, key=len, reverse=True):
        rules.append((re.compile(_EDGE + re.escape(parent) + r"(?=/)"), ".."))
    if home is not None and len(home.parts) > 1:
        rules.append((re.compile(_EDGE + re.escape(str(home)) + _END), "~"))
    rules += [
        (re.compile(_EDGE + r"/(?:home|Users)/[^\s'\"/]+" + _END), "~"),
        (re.compile(_EDGE + r"/root" + _END), "~"),
        (re.compile(_EDGE + r"/var/folders/[^\s'\"/]+/[^\s'\"/]+/T(?=/)"), "<tmp>"),
        (re.compile(_EDGE + r"(?:/private)?(?:/var)?/tmp(?=/)"), "<tmp>"),
    ]
    return rules


def scrub_paths(text: str, rules: Sequence[Rule]) -> str:
    """``text`` with this machine's paths replaced (:func:`path_rules`)."""
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text


def _scrub(node: Any, rules: Sequence[Rule]) -> Any:
    """Every string below ``node`` scrubbed (:func:`scrub_paths`), binary payloads (:data:`BINARY`) left."""
    if isinstance(node, str):
        return scrub_paths(node, rules)
    if isinstance(node, list):
        return [_scrub(v, rules) for v in node]
    if isinstance(node, dict):
        return {scrub_paths(k, rules): v if k in BINARY else _scrub(v, rules) for k, v in node.items()}
    return node


# ----------------------------------------------------------------------------- links

_LINK = re.compile(r"(\]\()([^)\s]+)(\))")


def relink(text: str, shipped: Sequence[str] = ()) -> str:
    """The relative Markdown links of ``text``, written for ``notebooks/``, rewritten for
    ``docs/executed/``: a link to a notebook shipped beside it (``shipped``) points at that copy,
    any other relative link at the same file of the repository; absolute links, anchors and URLs
    are left.

    >>> relink("[glossary](../docs/glossary.md#em), [next](02_retrieval.ipynb), [web](https://x.org/a)",
    ...        ["02_retrieval.ipynb"])
    '[glossary](../glossary.md#em), [next](02_retrieval.ipynb), [web](https://x.org/a)'
    """
    import posixpath

    def one(m: re.Match[str]) -> str:
        target = m[2]
        if re.match(r"^(?:[a-zA-Z][\w+.-]*:|#|/|<)", target):
            return m[0]
        path, hash_, anchor = target.partition("#")
        repo = posixpath.normpath(posixpath.join("notebooks", path))
        if repo.startswith("../"):
            return m[0]
        if posixpath.dirname(repo) == "notebooks" and posixpath.basename(repo) in shipped:
            new = posixpath.basename(repo)
        else:
            new = posixpath.relpath(repo, OUT.as_posix())
        return f"{m[1]}{new}{hash_}{anchor}{m[3]}"

    return _LINK.sub(one, text)


def _relink_cells(nb: Any, shipped: Sequence[str]) -> None:
    """:func:`relink` over the Markdown cells and the Markdown outputs of ``nb``, in place."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = relink(cell.source, shipped)
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if isinstance(data.get("text/markdown"), str):
                data["text/markdown"] = relink(data["text/markdown"], shipped)


# ----------------------------------------------------------------------------- figures

def png_size(data: bytes) -> tuple[int, int]:
    """``(width, height)`` of a PNG, read off its header."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def shrink_png(data: bytes, max_width: int = MAX_WIDTH, colors: int | None = COLORS) -> bytes:
    """``data`` re-encoded with Pillow: at most ``max_width`` px wide (aspect kept, Lanczos),
    ``colors`` colours (median cut, no dithering; an image with transparency keeps it), optimized.
    A figure already that narrow keeps its bytes when the re-encoding is not smaller."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        im.load()
        width = im.width
        img = im.convert("RGBA")
    opaque = img.getchannel("A").getextrema()[0] == 255
    if opaque:
        img = img.convert("RGB")
    if img.width > max_width:
        img = img.resize((max_width, max(1, round(img.height * max_width / img.width))),
                         Image.Resampling.LANCZOS)
    if colors:
        method = Image.Quantize.MEDIANCUT if opaque else Image.Quantize.FASTOCTREE
        img = img.quantize(colors, method=method, dither=Image.Dither.NONE)
    buf = io.BytesIO()
    img.save(buf, "PNG", optimize=True)
    out = buf.getvalue()
    return data if width <= max_width and len(data) <= len(out) else out


# ----------------------------------------------------------------------------- the run's facts

def unfinished(manifest: Mapping[str, Any]) -> list[str]:
    """The notebooks (file names) a run selected but did not finish: the rule of
    :func:`inferqa_utils.record.run_dirs.unfinished_notebooks` (which names them by number), read
    here off the manifest itself (this module sits below ``record``)."""
    per_nb = manifest.get("notebooks") if isinstance(manifest.get("notebooks"), dict) else {}
    selected = manifest.get("notebooks_selected")
    if not isinstance(selected, list):
        selected = list(per_nb)
    done = {n for n, info in per_nb.items() if isinstance(info, dict) and info.get("status") == "ok"}
    return [str(n) for n in selected if n not in done]


def _find_key(node: Any, key: str) -> Any:
    """The first value under ``key`` anywhere in ``node`` (depth first), or ``None``."""
    if isinstance(node, Mapping):
        if key in node:
            return node[key]
        node = list(node.values())
    if isinstance(node, list):
        for v in node:
            found = _find_key(v, key)
            if found is not None:
                return found
    return None


def llm_rates(manifest: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """``{model: {prefill_tok_s, decode_tok_s}}`` the run measured on its host before its first
    notebook (the manifest's ``projection.rates``, else the first ``rates`` it holds), the main
    model (:data:`MAIN_MODEL`) first; ``{}`` when it measured none."""
    projection = manifest.get("projection")
    rates = projection.get("rates") if isinstance(projection, Mapping) else None
    if not isinstance(rates, Mapping):
        rates = _find_key(manifest, "rates")
    if not isinstance(rates, Mapping):
        return {}
    keys = ("prefill_tok_s", "decode_tok_s")
    out = {str(m): {k: float(r[k]) for k in keys} for m, r in rates.items()
           if isinstance(r, Mapping) and all(isinstance(r.get(k), int | float) for k in keys)}
    return dict(sorted(out.items(), key=lambda kv: (kv[0] != MAIN_MODEL, kv[0])))


@dataclass(frozen=True)
class Outputs:
    """The model outputs of a notebook (or a run): LLM prompts, computed by a model call or
    replayed from the LLM cache, per model."""

    prompts: int = 0
    computed: int = 0
    replayed: int = 0
    per_model: tuple[tuple[str, int, int], ...] = ()

    @classmethod
    def of(cls, costs: Any) -> Outputs:
        """From a manifest's ``llm_costs[<notebook>]``: ``{model: {prompts, model_calls, cache_hits}}``."""
        rows = []
        for model, c in sorted((costs or {}).items()) if isinstance(costs, Mapping) else []:
            if isinstance(c, Mapping):
                rows.append((str(model), int(c.get("model_calls") or 0), int(c.get("cache_hits") or 0),
                             int(c.get("prompts") or 0)))
        return cls(prompts=sum(r[3] for r in rows), computed=sum(r[1] for r in rows),
                   replayed=sum(r[2] for r in rows), per_model=tuple(r[:3] for r in rows))

    def __add__(self, other: Outputs) -> Outputs:
        return Outputs(self.prompts + other.prompts, self.computed + other.computed,
                       self.replayed + other.replayed)


@dataclass(frozen=True)
class RunFacts:
    """What the headers, the index and the record say of a run."""

    run_id: str
    profile: str
    commit: str | None
    dirty: bool
    started: _dt.datetime | None
    finished: _dt.datetime | None
    machine: dict[str, Any]
    rates: dict[str, dict[str, float]]
    check: dict[str, Any] | None
    warm: dict[str, Any] | None
    caches_at_start: dict[str, Any] | None
    outputs: dict[str, Outputs]
    seconds: dict[str, float]

    @property
    def date(self) -> str:
        return self.started.date().isoformat() if self.started else "date not recorded"

    @property
    def total(self) -> Outputs:
        out = Outputs()
        for o in self.outputs.values():
            out = out + o
        return out


def _when(text: Any) -> _dt.datetime | None:
    try:
        d = _dt.datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return (d if d.tzinfo else d.replace(tzinfo=_dt.UTC)).astimezone(_dt.UTC)


def _check_summary(run_dir: Path, profile: str) -> dict[str, Any] | None:
    """The counts of the run's check record ``results/check_<profile>.json``, or ``None``."""
    path = run_dir / "results" / f"check_{profile}.json"
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(rec, dict):
        return None
    conditions = [c for c in rec.get("conditions") or [] if isinstance(c, Mapping)]
    findings = rec.get("findings")
    verdicts = [f.get("verdict") for f in findings or [] if isinstance(f, Mapping)]
    checked = rec.get("run_checked") if isinstance(rec.get("run_checked"), Mapping) else {}
    return {
        "ok": sum(c.get("status") == "OK" for c in conditions),
        "fail": sum(c.get("status") == "FAIL" for c in conditions),
        "findings_scored": findings is not None,
        "holds": verdicts.count(HOLDS), "contradicted": verdicts.count(CONTRADICTED),
        "inconclusive": verdicts.count(INCONCLUSIVE), "by_construction": verdicts.count(BY_CONSTRUCTION),
        "run_checked": checked.get("run_id"),
        "machine": rec.get("machine") if isinstance(rec.get("machine"), Mapping) else {},
    }


def _machine(manifest: Mapping[str, Any], check: Mapping[str, Any] | None) -> dict[str, Any]:
    """The run's machine as the records describe one (``cpus``, ``cpu_model``, ``ram_gb``, ``os``
    — the system's name, its kernel's version left out — ``python``): what the manifest's
    ``platform`` says, completed from the check record's ``machine`` (taken on the same host)."""
    platform = manifest.get("platform") if isinstance(manifest.get("platform"), Mapping) else {}
    checked = (check or {}).get("machine") or {}
    out: dict[str, Any] = {}
    for key in ("cpus", "cpu_model", "ram_gb"):
        value = platform.get(key, checked.get(key))
        if value is not None:
            out[key] = value
    system = platform.get("os") or platform.get("system") or checked.get("os")
    if system:
        out["os"] = str(system).split(" ")[0]
    python = platform.get("python") or checked.get("python")
    if python:
        out["python"] = str(python)
    return out


def run_facts(run_dir: Path, manifest: Mapping[str, Any]) -> RunFacts:
    """The facts of the run in ``run_dir`` with ``manifest``."""
    params = manifest.get("parameters") if isinstance(manifest.get("parameters"), Mapping) else {}
    run_id = str(manifest.get("run_id") or Path(run_dir).name)
    profile = str(params.get("profile") or run_id.rsplit("-", 1)[-1])
    git = manifest.get("git") if isinstance(manifest.get("git"), Mapping) else {}
    check = _check_summary(Path(run_dir), profile)
    costs = manifest.get("llm_costs") if isinstance(manifest.get("llm_costs"), Mapping) else {}
    timings = manifest.get("timings_s") if isinstance(manifest.get("timings_s"), Mapping) else {}
    warm = manifest.get("warm")
    caches = manifest.get("caches_at_start")
    return RunFacts(
        run_id=run_id, profile=profile, commit=git.get("commit"), dirty=bool(git.get("dirty")),
        started=_when(manifest.get("started")), finished=_when(manifest.get("finished")),
        machine=_machine(manifest, check), rates=llm_rates(manifest), check=check,
        warm=dict(warm) if isinstance(warm, Mapping) and warm else None,
        caches_at_start=dict(caches) if isinstance(caches, Mapping) else None,
        outputs={str(k): Outputs.of(v) for k, v in costs.items()},
        seconds={str(k): float(v) for k, v in timings.items() if isinstance(v, int | float)},
    )


# ----------------------------------------------------------------------------- the texts

def _hardware(machine: Mapping[str, Any]) -> str:
    parts = [" ".join(p for p in [f"{machine['cpus']} cores" if machine.get("cpus") else "",
                                  str(machine.get("cpu_model") or "")] if p),
             f"{machine['ram_gb']:g} GB RAM" if machine.get("ram_gb") else "",
             str(machine.get("os") or ""), f"Python {machine['python']}" if machine.get("python") else ""]
    return ", ".join(p for p in parts if p) or "machine not recorded"


def _run_line(f: RunFacts) -> str:
    when = f.date
    if f.started and f.finished:
        same_day = f.finished.date() == f.started.date()
        end = f"{f.finished:%H:%M}" if same_day else f"{f.finished:%Y-%m-%d %H:%M}"
        when = f"{f.started:%Y-%m-%d %H:%M}–{end} UTC"
    commit = f"commit `{f.commit[:7]}`" if f.commit else "commit not recorded"
    if f.dirty:
        commit += " with uncommitted changes"
    return f"`{f.run_id}` (profile `{f.profile}`), {when}, {commit}"


def _machine_line(f: RunFacts) -> str:
    rates = (f"; LLM rates it measured before the first notebook — {rates_phrase(f.rates)[4:]}"
             if f.rates else "; LLM rates not measured")
    return _hardware(f.machine) + rates


def _check_line(f: RunFacts) -> str:
    c = f.check
    if c is None:
        return f"no check record in the run's folder (`results/check_{f.profile}.json`)"
    text = f"{c['ok']} OK / {c['fail']} FAIL of the reproduction matrix"
    if c["findings_scored"]:
        built = f" ({c['by_construction']} by construction)" if c["by_construction"] else ""
        text += (f"; findings: {c['holds']} holds, {c['contradicted']} contradicted, {c['inconclusive']} "
                 f"inconclusive{built}")
    if c["run_checked"] and c["run_checked"] != f.run_id:
        text += f" (the record checked run `{c['run_checked']}`)"
    return text


def _outputs_text(o: Outputs) -> str:
    """What a notebook's model outputs were: computed in the run, replayed from the cache."""
    if o.prompts == 0 and o.computed == 0 and o.replayed == 0:
        return "no LLM prompt recorded in the run's cost log"
    if o.computed == 0:
        text = f"{o.replayed:,} LLM outputs, each replayed from the LLM cache — none computed in this run"
    elif o.replayed == 0:
        text = f"{o.computed:,} LLM outputs, every one computed by a model call in this run"
    else:
        text = (f"{o.computed + o.replayed:,} LLM outputs: {o.computed:,} computed by a model call in this "
                f"run, {o.replayed:,} replayed from the LLM cache")
    if len(o.per_model) > 1:
        text += " (computed / replayed: " + ", ".join(f"{m} {c:,} / {r:,}" for m, c, r in o.per_model) + ")"
    return text


def _source_line(f: RunFacts) -> str:
    """Where the run's replayed outputs came from, and the run's totals."""
    t = f.total
    totals = f"whole run: {t.computed:,} model calls computed, {t.replayed:,} outputs replayed"
    w = f.warm
    if w:
        added = f"{int(w['added']):,} added, {int(w.get('present') or 0):,} already there" \
            if isinstance(w.get("added"), int) else "counts not recorded"
        entries = f"{int(w['entries']):,} model outputs" if isinstance(w.get("entries"), int) \
            else "model outputs"
        return (f"the run started **warm**: before its first notebook it installed the {entries} of the "
                f"shipped outputs file `{w.get('file') or 'unnamed'}` into the LLM cache ({added}), so a "
                f"replayed output is that file's, not a recomputation on this machine; {totals}")
    llm = (f.caches_at_start or {}).get("llm")
    if isinstance(llm, int | float) and llm > 0:
        return (f"the run started with {llm / 1e6:.1f} MB in the LLM cache (no warm start): a replayed "
                f"output was computed by an earlier run on that machine, not in this one; {totals}")
    if f.caches_at_start is not None:
        return (f"the run started from empty caches (no warm start): a replayed output was computed "
                f"earlier in this same run; {totals}")
    return f"what the LLM cache held at the start was not recorded; {totals}"


def _stem(name: str) -> str:
    return name[:-6] if name.endswith(".ipynb") else name


def header_text(f: RunFacts, name: str, previous: str | None, following: str | None,
                max_width: int = MAX_WIDTH) -> str:
    """The Markdown of the header cell of the shipped copy ``name`` (module docstring)."""
    o = f.outputs.get(_stem(name), Outputs())
    seconds = f.seconds.get(_stem(name))
    took = f"; this notebook took {seconds:,.1f} s" if seconds is not None else ""
    nav = [f"[← {_stem(previous)}]({previous})" if previous else "← first notebook",
           "[index](README.md)", "[results](../results.md)",
           f"[{_stem(following)} →]({following})" if following else "last notebook →"]
    replayed = "" if not o.replayed else (
        f" Its model outputs were {'partly' if o.computed else 'all'} **replayed**, not recomputed.")
    return "\n".join([
        f"**Executed copy** of [`notebooks/{name}`](../../notebooks/{name}), as run `{f.run_id}` left it: "
        f"outputs and figures kept (figures downscaled to at most {max_width} px), machine paths "
        f"removed; opening it runs nothing.{replayed}",
        "",
        f"- **Run:** {_run_line(f)}{took}.",
        f"- **Machine:** {_machine_line(f)}.",
        f"- **Check of this run:** {_check_line(f)}.",
        f"- **Model outputs of this notebook:** {_outputs_text(o)}.",
        f"- **Where replayed outputs come from:** {_source_line(f)}.",
        "",
        " · ".join(nav),
        "",
        "---",
    ])


def first_heading(nb: Any) -> str:
    """The first Markdown heading of a notebook (its header cell skipped), without the ``#``."""
    for cell in nb.cells:
        if cell.cell_type != "markdown" or HEADER_TAG in cell.get("metadata", {}).get("tags", []):
            continue
        for line in cell.source.splitlines():
            if line.lstrip().startswith("#"):
                return line.lstrip().lstrip("#").strip()
    return ""


# ----------------------------------------------------------------------------- one notebook

@dataclass(frozen=True)
class NotebookExport:
    """One shipped copy: its name, heading, bytes before / after, figures' bytes before / after."""

    name: str
    heading: str
    bytes_before: int
    bytes_after: int
    png_before: int
    png_after: int
    images: int


def _shrink_outputs(nb: Any, max_width: int) -> tuple[int, int, int]:
    """Re-encode every ``image/png`` output of ``nb`` in place; ``(bytes before, after, images)``."""
    before = after = images = 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/png" not in data:
                continue
            raw = base64.b64decode(data["image/png"])
            new = shrink_png(raw, max_width)
            encoded = base64.b64encode(new).decode("ascii")
            data["image/png"] = encoded + ("\n" if str(data["image/png"]).endswith("\n") else "")
            meta = out.get("metadata", {}).get("image/png")
            width, height = png_size(new)
            shown = meta.get("width") if isinstance(meta, dict) else None
            if isinstance(meta, dict) and isinstance(shown, int | float) and shown > width:
                meta["width"], meta["height"] = width, height
            before, after, images = before + len(raw), after + len(new), images + 1
    return before, after, images


def export_notebook(path: Path, facts: RunFacts, rules: Sequence[Rule], previous: str | None,
                    following: str | None, max_width: int = MAX_WIDTH,
                    shipped: Sequence[str] = ()) -> tuple[str, NotebookExport]:
    """The shipped copy of the executed notebook ``path`` as text, and its sizes; ``shipped`` names
    the notebooks shipped beside it (for :func:`relink`)."""
    import nbformat

    raw = path.read_bytes()
    nb = nbformat.reads(raw.decode("utf-8"), as_version=4)
    nb.cells = [c for c in nb.cells if HEADER_TAG not in c.get("metadata", {}).get("tags", [])]
    png_before, png_after, images = _shrink_outputs(nb, max_width)
    nb = nbformat.from_dict(_scrub(nb, rules))
    _relink_cells(nb, shipped)
    head = nbformat.v4.new_markdown_cell(header_text(facts, path.name, previous, following, max_width),
                                         metadata={"tags": [HEADER_TAG]}, id=HEADER_TAG)
    nb.cells.insert(0, head)
    nbformat.validate(nb)
    text = nbformat.writes(nb, version=4)
    text = text if text.endswith("\n") else text + "\n"
    return text, NotebookExport(path.name, first_heading(nb), len(raw), len(text.encode("utf-8")),
                                png_before, png_after, images)


# ----------------------------------------------------------------------------- the index and the record

def index_text(f: RunFacts, shipped: Sequence[NotebookExport]) -> str:
    """``docs/executed/README.md``: the run's facts, then one row per shipped notebook."""
    rows = []
    for n in shipped:
        o = f.outputs.get(_stem(n.name), Outputs())
        seconds = f.seconds.get(_stem(n.name))
        rows.append([f"[{_stem(n.name)}]({n.name})", n.heading,
                     "—" if seconds is None else f"{seconds:,.1f} s",
                     "—" if not (o.computed or o.replayed) else f"{o.computed:,} / {o.replayed:,}",
                     f"{n.bytes_after / 1000:,.0f} kB"])
    total = sum(n.bytes_after for n in shipped)
    before = sum(n.png_before for n in shipped)
    after = sum(n.png_after for n in shipped)
    return "\n".join([
        "# Executed notebooks",
        "",
        f"The notebooks of [`notebooks/`](../../notebooks) as run `{f.run_id}` executed them, outputs and "
        "figures included, so that they can be read without running anything. Written by "
        f"`{COMMAND}` from the run's folder; not edited by hand. Each notebook opens with a header "
        "cell saying where its numbers and model outputs came from.",
        "",
        f"- **Run:** {_run_line(f)}.",
        f"- **Machine:** {_machine_line(f)}.",
        f"- **Check of this run:** {_check_line(f)} ([results](../results.md)).",
        f"- **Model outputs:** {_source_line(f)}.",
        f"- **Size:** {len(shipped)} notebooks, {total:,} bytes; their {sum(n.images for n in shipped)} "
        f"figures re-encoded from {before:,} to {after:,} bytes (at most {MAX_WIDTH} px wide).",
        f"- **Record:** [`{RECORD.as_posix()}`](../records/runs/{RECORD.name}) (the run's commit; the "
        "records' rule flags these copies once the notebooks or the package change after it).",
        "",
        *markdown_table(["notebook", "what it shows", "time", "LLM outputs computed / replayed", "size"],
                        rows),
        "",
    ])


def record_content(f: RunFacts, shipped: Sequence[NotebookExport], readme_bytes: int,
                   old: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The record of the shipped copies, in :func:`inferqa_utils.present.docs_blocks.write_record`'s
    format and key order; the ``views`` of the record already there (``old``) are kept."""
    t = f.total
    c = f.check or {}
    machine = dict(f.machine)
    if f.rates:
        machine["llm_rates"] = f.rates
    warm = f"warm start from {f.warm.get('file')}" if f.warm else "no warm start"
    machine["load"] = (f"the run's own host; {warm}; {t.computed:,} model calls computed, "
                       f"{t.replayed:,} outputs replayed")
    values = {
        "run_id": f.run_id, "profile": f.profile,
        "started": f.started.isoformat() if f.started else None,
        "finished": f.finished.isoformat() if f.finished else None,
        "notebooks_count": len(shipped), "files": len(shipped) + 1,
        "bytes": sum(n.bytes_after for n in shipped) + readme_bytes,
        "notebook_bytes_before": sum(n.bytes_before for n in shipped),
        "notebook_bytes_after": sum(n.bytes_after for n in shipped),
        "png_bytes_before": sum(n.png_before for n in shipped),
        "png_bytes_after": sum(n.png_after for n in shipped),
        "images": sum(n.images for n in shipped), "max_width": MAX_WIDTH,
        "conditions_ok": c.get("ok"), "conditions_fail": c.get("fail"),
        "findings_holds": c.get("holds"), "findings_contradicted": c.get("contradicted"),
        "findings_inconclusive": c.get("inconclusive"), "findings_by_construction": c.get("by_construction"),
        "model_calls": t.computed, "cache_hits": t.replayed,
        "warm_file": f.warm.get("file") if f.warm else None,
        "warm_entries": f.warm.get("entries") if f.warm else None,
        "notebooks": [{"name": n.name, "bytes_before": n.bytes_before, "bytes": n.bytes_after,
                       "png_bytes_before": n.png_before, "png_bytes_after": n.png_after, "images": n.images,
                       "seconds": f.seconds.get(_stem(n.name)),
                       "model_calls": f.outputs.get(_stem(n.name), Outputs()).computed,
                       "cache_hits": f.outputs.get(_stem(n.name), Outputs()).replayed} for n in shipped],
    }
    views = {
        "text": {"text": [
            "The executed notebooks in `docs/executed/` are those of run `{run_id}` ({date}): "
            "{notebooks_count} notebooks, {bytes:,} bytes in all, their {images} figures re-encoded from "
            "{png_bytes_before:,} to {png_bytes_after:,} bytes; the run's check: {conditions_ok} OK / "
            "{conditions_fail} FAIL; model outputs: {model_calls:,} computed, {cache_hits:,} replayed "
            "(record `{record}`)."]},
        "table": {"table": {"rows": "notebooks", "columns": [
            ["notebook", "{name}"], ["time (s)", "{seconds:,.1f}"], ["computed", "{model_calls:,}"],
            ["replayed", "{cache_hits:,}"], ["bytes", "{bytes:,}"]]}},
    }
    rec = {
        "what": "the executed notebooks shipped in docs/executed (outputs kept, figures downscaled)",
        "command": COMMAND,
        "commit": f.commit,
        "commit_note": "with uncommitted changes" if f.dirty else None,
        "date": f.date if f.started else None,
        "machine": machine,
        "describes": ["notebooks", "inferqa_utils"],
        "values": values,
        "views": {**views, **((old or {}).get("views") or {})},
    }
    return {k: v for k, v in rec.items() if v not in (None, [])}


# ----------------------------------------------------------------------------- export

@dataclass
class ExportResult:
    """What :func:`export` wrote."""

    run_id: str
    out_dir: Path
    record: Path | None
    notebooks: list[NotebookExport] = field(default_factory=list)
    readme_bytes: int = 0

    @property
    def files(self) -> int:
        return len(self.notebooks) + 1

    @property
    def bytes(self) -> int:
        return sum(n.bytes_after for n in self.notebooks) + self.readme_bytes

    @property
    def png_before(self) -> int:
        return sum(n.png_before for n in self.notebooks)

    @property
    def png_after(self) -> int:
        return sum(n.png_after for n in self.notebooks)


def _under_root(path: str | Path, root: Path | None) -> Path:
    path = Path(path)
    return path if path.is_absolute() else (root or PATHS.root) / path


def export(run_dir: str | Path, out_dir: str | Path = OUT, *, record: str | Path | None = RECORD,
           max_width: int = MAX_WIDTH, root: Path | None = None,
           log: Callable[[str], None] = lambda _line: None) -> ExportResult:
    """Write the shipped copies of the executed notebooks of the run in ``run_dir`` into
    ``out_dir`` (module docstring), with ``README.md``, and the record ``record`` (``None``: none).
    Relative paths are taken from ``root`` (default the repository's). ``out_dir`` is replaced as a
    whole. Raises :class:`~inferqa_utils.core.errors.MissingInputError` for a run whose notebooks did not
    all finish (naming them), or without a readable manifest."""
    run_dir = Path(run_dir)
    try:
        manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MissingInputError(f"{run_dir}: no readable run manifest ({exc})") from None
    left = unfinished(manifest)
    if left:
        raise MissingInputError(
            f"run {run_dir.name} did not finish {', '.join(left)} (status {manifest.get('status')!r}): "
            "export the executed notebooks of a run whose every notebook finished")
    per_nb = manifest.get("notebooks") if isinstance(manifest.get("notebooks"), dict) else {}
    names = sorted(n for n, info in per_nb.items() if isinstance(info, dict) and info.get("status") == "ok")
    if not names:
        raise MissingInputError(f"run {run_dir.name}: its manifest records no finished notebook")
    missing = [n for n in names if not (run_dir / n).is_file()]
    if missing:
        raise MissingInputError(f"run {run_dir.name}: the executed copies of {', '.join(missing)} "
                                 "are missing")
    facts = run_facts(run_dir, manifest)
    rules = path_rules(run_roots(run_dir, manifest), Path.home())
    out_dir = _under_root(out_dir, root)
    result = ExportResult(facts.run_id, out_dir, None)
    texts: dict[str, str] = {}
    for i, name in enumerate(names):
        previous = names[i - 1] if i else None
        following = names[i + 1] if i + 1 < len(names) else None
        text, stats = export_notebook(run_dir / name, facts, rules, previous, following, max_width, names)
        texts[name] = text
        result.notebooks.append(stats)
        log(f"[executed] {name}: {stats.bytes_before:,} → {stats.bytes_after:,} bytes; {stats.images} "
            f"figure(s) {stats.png_before:,} → {stats.png_after:,} bytes")
    readme = index_text(facts, result.notebooks)
    result.readme_bytes = len(readme.encode("utf-8"))
    with staged_dir(out_dir) as tmp:
        for name, text in texts.items():
            (tmp / name).write_text(text, encoding="utf-8")
        (tmp / "README.md").write_text(readme, encoding="utf-8")
    if record is not None:
        path = _under_root(record, root)
        try:
            old = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
        except ValueError:
            old = None
        rec = record_content(facts, result.notebooks, result.readme_bytes, old)
        write_text_atomic(path, json.dumps(rec, indent=1, ensure_ascii=False) + "\n")
        result.record = path
    return result
