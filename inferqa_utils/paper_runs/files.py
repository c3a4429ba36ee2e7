"""The layout of the paper authors' released result files and how to read one of them.

The release is the folder ``results/`` of the hub dataset ``JamshidJDMY/InferentialQA``; the
authors' scripts (repository ``DataScienceUIBK/InferentialQA``, folder ``results/``) open each file
with ``results/hf_auto_open.py``: the file ``x/y.json`` (or ``x/y.jsonl``) is stored on the hub as
``x/y.zsd`` — the suffix *replaced* by ``.zsd`` — a zstandard-compressed copy. So one stored name
(``index/test/retriever.zsd``) does not say whether it holds JSON or JSON lines; :data:`LAYOUT` does.

A local copy may hold, for each released path, any of: the plain file (``y.json`` / ``y.jsonl``,
what ``hf_auto_open`` and ``paper-runs fetch`` leave), the hub's ``y.zsd``, or ``y.json.zsd`` /
``y.json.zst`` (what ``zstd`` on the command line writes). A plain file wins over a compressed one,
as in ``hf_auto_open``.

:data:`LAYOUT` lists every file the importer reads (paper 000 §4–5; the script that reads each
one in the authors' repository is named in :attr:`Entry.script`). A path component in braces is a
name taken from the folder: ``{retriever}`` (bm25, dpr, colbert, contriever, bge), ``{reranker}``
(e.g. ``monot5-monot5-3b-msmarco-10k``), ``{n}`` (the number of positives of a fine-tuned model),
``{corpus}`` (``msmarco``, ``wiki``).

What each file holds (read from the authors' scripts):

* ``index/test/retriever.jsonl`` — one JSON line per test question: ``question``, ``answers`` (the
  answer pool), ``contexts``: the question's 325 passages ``{"id", "text", "label" (0/1/2),
  "rag_answers": {reader: answer}}`` with readers ``llama-32-1b``, ``gemma-3-4b``, ``qwen-3-8b``;
  passage ids ``{qid}_{mask}_{permutation}``. The Optimal setting reads it.
* ``retriever/<r>/retriever.json`` (r ∈ bm25, dpr, colbert, contriever, bge) — a JSON list aligned
  by position with the index: ``{"question", "answers", "ctxs": [{"id", "score", "text", ...}]}``.
* ``reranker/<x>/reranker.json`` — the oracle setting: reranker x orders the question's own
  passages, ``reranked_ctxs``; ``retriever_reranker/<r>/<x>/reranker.json`` — x over r's top 100,
  ``ctxs`` (first stage) and ``reranked_ctxs``. Rerankers x: ``lit5dist-LiT5-Distill-{base,large,xl}-v2``,
  ``monot5-monot5-{base,large,3b}-msmarco-10k``, ``rankgpt-{Llama-3.1-8B-Instruct,Qwen2.5-7B}``,
  ``rankt5-rankt5-{base,large,3b}``, ``upr-{gpt2-large,t0-3b,t5-large,t5-small}``.
* every ``.../rag.json`` beside a ranking — ``{"id", "answers", "predicted_answer": {reader:
  {"<id>_un_<k>" | "<id>_uf_<k>": answer}}}``, k ∈ {1, 3, 5}, ``un`` Union_norm, ``uf`` Union_freq.
* fine-tuned: ``ft_retriever/<dpr|colbert>/<N>_positive/{retriever,rag}.json``,
  ``ft_reranker/<N>_positive/{reranker,rag}.json`` (FT-MonoT5, oracle setting),
  ``retriever_ft_reranker/<r>/{retriever,rag}.json``, ``ft_retriever_reranker/<r>/<x>/…``,
  ``ft_retriever_ft_reranker/<r>/{reranker,rag}.json``.
* baselines: ``baselines/baseline.json`` (per question, by position, ``ctxs: {id: {"label"}}``, the
  MS MARCO and Wikipedia passages relabelled by the authors' LLM rule),
  ``baselines_retriever/<msmarco|wiki>/<r>/retriever.json`` and
  ``baselines_reranker/<msmarco|wiki>/<r>/<x>/reranker.json``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import DataFormatError
from ..core.textio import BOM, decode_utf8

#: suffixes of a zstandard-compressed file: the hub's ``.zsd`` and the ``zstd`` tool's ``.zst``
COMPRESSED = (".zsd", ".zst")
#: suffixes of a plain file
PLAIN = (".json", ".jsonl")
#: zstandard frame magic number (RFC 8878 §3.1.1), little-endian
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

# file kinds
INDEX, RANKING, RAG, BASELINE_LABELS = "index", "ranking", "rag", "baseline-labels"


@dataclass(frozen=True)
class Entry:
    """One released file pattern.

    ``path`` is the released path with ``{name}`` placeholders; ``kind`` what it holds
    (:data:`INDEX`, :data:`RANKING`, :data:`RAG`, :data:`BASELINE_LABELS`); ``ranked`` the key of the
    ranked passage list the authors' script reads (``ctxs`` or ``reranked_ctxs``); ``system`` the
    name our tables give the system (placeholders filled); ``setting`` ``pipeline`` (retriever,
    optionally + reranker), ``oracle`` (a reranker ordering the question's own passages) or
    ``baseline`` (retrieval from MS MARCO or Wikipedia); ``family`` groups the files of one
    comparison; ``script`` the authors' script that reads it."""

    path: str
    kind: str
    script: str
    ranked: str = ""
    system: str = ""
    setting: str = "pipeline"
    family: str = ""

    @property
    def regex(self) -> re.Pattern[str]:
        stem = self.path.rsplit(".", 1)[0]
        pattern = re.sub(r"\\\{(\w+)\\\}", lambda m: f"(?P<{m.group(1)}>[^/]+)", re.escape(stem))
        return re.compile(pattern)

    @property
    def jsonl(self) -> bool:
        return self.path.endswith(".jsonl")


#: every released file the importer reads (see the module docstring)
LAYOUT: tuple[Entry, ...] = (
    Entry("index/test/retriever.jsonl", INDEX, "results/rag/rag.py (also every script's load_index_file)"),
    Entry(
        "retriever/{retriever}/retriever.json", RANKING, "results/retriever/retriever.py", "ctxs",
        "{retriever}", family="retriever",
    ),
    Entry(
        "retriever/{retriever}/rag.json", RAG, "results/retriever/retriever_rag.py", system="{retriever}",
        family="retriever",
    ),
    Entry(
        "reranker/{reranker}/reranker.json", RANKING, "results/reranker/reranker.py", "reranked_ctxs",
        "oracle+{reranker}", "oracle", "oracle",
    ),
    Entry(
        "reranker/{reranker}/rag.json", RAG, "results/reranker/reranker_rag.py", system="oracle+{reranker}",
        setting="oracle", family="oracle",
    ),
    Entry(
        "retriever_reranker/{retriever}/{reranker}/reranker.json", RANKING,
        "results/retriever_reranker/retriever_reranker.py", "reranked_ctxs", "{retriever}+{reranker}",
        family="retriever_reranker",
    ),
    Entry(
        "retriever_reranker/{retriever}/{reranker}/rag.json", RAG,
        "results/retriever_reranker/retriever_reranker_rag.py", system="{retriever}+{reranker}",
        family="retriever_reranker",
    ),
    Entry(
        "ft_retriever/{retriever}/{n}_positive/retriever.json", RANKING, "results/ft_retriever/retriever.py",
        "ctxs", "FT-{retriever}-N{n}", family="ft_retriever",
    ),
    Entry(
        "ft_retriever/{retriever}/{n}_positive/rag.json", RAG, "results/ft_retriever/retriever_rag.py",
        system="FT-{retriever}-N{n}", family="ft_retriever",
    ),
    Entry(
        "ft_reranker/{n}_positive/reranker.json", RANKING, "results/ft_reranker/reranker.py", "reranked_ctxs",
        "oracle+FT-monot5-N{n}", "oracle", "ft_reranker",
    ),
    Entry(
        "ft_reranker/{n}_positive/rag.json", RAG, "results/ft_reranker/reranker_rag.py",
        system="oracle+FT-monot5-N{n}", setting="oracle", family="ft_reranker",
    ),
    Entry(
        "retriever_ft_reranker/{retriever}/retriever.json", RANKING,
        "results/retriever_ft_reranker/retriever_reranker.py", "ctxs", "{retriever}+FT-monot5",
        family="retriever_ft_reranker",
    ),
    Entry(
        "retriever_ft_reranker/{retriever}/rag.json", RAG,
        "results/retriever_ft_reranker/retriever_reranker_rag.py", system="{retriever}+FT-monot5",
        family="retriever_ft_reranker",
    ),
    Entry(
        "ft_retriever_reranker/{retriever}/{reranker}/reranker.json", RANKING,
        "results/ft_retriever_reranker/retriever_reranker.py", "reranked_ctxs", "FT-{retriever}+{reranker}",
        family="ft_retriever_reranker",
    ),
    Entry(
        "ft_retriever_reranker/{retriever}/{reranker}/rag.json", RAG,
        "results/ft_retriever_reranker/retriever_reranker_rag.py", system="FT-{retriever}+{reranker}",
        family="ft_retriever_reranker",
    ),
    Entry(
        "ft_retriever_ft_reranker/{retriever}/reranker.json", RANKING,
        "results/ft_retriever_ft_reranker/retriever_reranker.py", "ctxs", "FT-{retriever}+FT-monot5",
        family="ft_retriever_ft_reranker",
    ),
    Entry(
        "ft_retriever_ft_reranker/{retriever}/rag.json", RAG,
        "results/ft_retriever_ft_reranker/retriever_reranker_rag.py", system="FT-{retriever}+FT-monot5",
        family="ft_retriever_ft_reranker",
    ),
    Entry("baselines/baseline.json", BASELINE_LABELS, "results/baselines_retriever/retriever-msmarco.py"),
    Entry(
        "baselines_retriever/{corpus}/{retriever}/retriever.json", RANKING,
        "results/baselines_retriever/retriever-{msmarco,wiki}.py", "ctxs", "{retriever}", "baseline",
        "baselines_retriever",
    ),
    Entry(
        "baselines_reranker/{corpus}/{retriever}/{reranker}/reranker.json", RANKING,
        "results/baselines_reranker/retriever_reranker_{msmarco,wiki}.py", "reranked_ctxs",
        "{retriever}+{reranker}", "baseline", "baselines_reranker",
    ),
)

INDEX_PATH = LAYOUT[0].path


@dataclass(frozen=True)
class Found:
    """A released file found in a local copy: the layout ``entry``, the placeholder values
    ``names``, the ``released`` path (``entry.path`` filled in) and the ``file`` on disk."""

    entry: Entry
    names: dict[str, str]
    released: str
    file: Path

    @property
    def compressed(self) -> bool:
        return self.file.suffix in COMPRESSED

    @property
    def system(self) -> str:
        return self.entry.system.format(**self.names)


def released_stem(rel: str) -> str:
    """The released path without its suffixes: ``retriever/bge/retriever.zsd``,
    ``retriever/bge/retriever.json`` and ``retriever/bge/retriever.json.zst`` all give
    ``retriever/bge/retriever``."""
    for suffix in (*COMPRESSED, *PLAIN, *COMPRESSED):  # y.json.zsd: the compression suffix, then .json
        if rel.endswith(suffix):
            rel = rel[: -len(suffix)]
    return rel


def match(rel: str) -> tuple[Entry, dict[str, str]] | None:
    """The layout entry of a file path relative to the release folder, and its placeholder values."""
    stem = released_stem(rel)
    for entry in LAYOUT:
        m = entry.regex.fullmatch(stem)
        if m:
            return entry, m.groupdict()
    return None


def compressed_name(released: str) -> str:
    """The hub's stored name of a released path: the suffix replaced by ``.zsd`` (``hf_auto_open``)."""
    return released.rsplit(".", 1)[0] + ".zsd"


def scan(folder: Path) -> tuple[list[Found], list[str]]:
    """The released files under ``folder`` (:data:`LAYOUT`), one per released path (a plain file
    preferred over a compressed one), and the files that match no entry (relative paths)."""
    chosen: dict[str, Found] = {}
    unknown: list[str] = []
    for p in sorted(folder.rglob("*")):
        if not p.is_file() or p.name.startswith("."):
            continue
        rel = p.relative_to(folder).as_posix()
        if not rel.endswith((*COMPRESSED, *PLAIN)):
            unknown.append(rel)
            continue
        hit = match(rel)
        if hit is None:
            unknown.append(rel)
            continue
        entry, names = hit
        released = entry.path.format(**names)
        found = Found(entry, names, released, p)
        old = chosen.get(released)
        if old is None or (old.compressed and not found.compressed):
            chosen[released] = found
    return sorted(chosen.values(), key=lambda f: f.released), unknown


# ----------------------------------------------------------------------------- zstandard


def _zstd() -> Any:
    try:
        import zstandard
    except ImportError:  # pragma: no cover - depends on the environment
        raise DataFormatError(
            None,
            "reading a zstandard-compressed release file needs the zstandard package "
            "(pinned in requirements.txt: pip install zstandard)",
        ) from None
    return zstandard


def iter_decompressed(path: Path, chunk: int = 1 << 22) -> Iterator[bytes]:
    """The decompressed bytes of a zstandard file, in chunks. Every frame must be complete: a
    truncated file (a download cut short) or bytes that are not zstandard raise
    :class:`DataFormatError` naming the file and the byte offset. Several concatenated frames are
    read one after the other (what ``zstd`` writes for concatenated inputs)."""
    zstd = _zstd()
    dctx = zstd.ZstdDecompressor()
    offset = 0  # compressed bytes consumed by finished frames
    with open(path, "rb") as fh:
        head = fh.read(4)
        if head[:4] != ZSTD_MAGIC:
            raise DataFormatError(
                path,
                f"not a zstandard file: starts with {head!r}, expected the zstandard magic "
                f"number {ZSTD_MAGIC!r}",
                record="byte 0",
            )
        fh.seek(0)
        obj, fed, pending = dctx.decompressobj(), 0, b""
        while True:
            data = pending or fh.read(chunk)
            pending = b""
            if not data:
                break
            try:
                out = obj.decompress(data)
            except zstd.ZstdError as exc:
                raise DataFormatError(
                    path, f"corrupt zstandard data ({exc})", record=f"frame at byte {offset}"
                ) from None
            fed += len(data)
            if out:
                yield out
            if obj.eof:
                rest = obj.unused_data
                offset += fed - len(rest)
                fed = 0
                obj = dctx.decompressobj()
                pending = rest
        if fed or offset == 0:
            raise DataFormatError(
                path,
                "truncated zstandard file: the last frame is incomplete (download cut short? fetch it again)",
                record=f"frame at byte {offset}",
            )


def decompress_to(src: Path, dst: Path) -> int:
    """Decompress ``src`` into ``dst`` (written beside it, then renamed: an interrupted run
    leaves no half file); returns the decompressed size in bytes."""
    tmp = dst.with_name(f".{dst.name}.part")
    size = 0
    try:
        with open(tmp, "wb") as out:
            for block in iter_decompressed(src):
                out.write(block)
                size += len(block)
        tmp.replace(dst)
    finally:
        tmp.unlink(missing_ok=True)
    return size


def read_text(path: Path) -> str:
    """A release file's text: decompressed when it is a zstandard file (by suffix, or by its magic
    number), decoded as UTF-8 (a leading byte-order mark dropped)."""
    with open(path, "rb") as fh:
        head = fh.read(4)
    data = (
        b"".join(iter_decompressed(path))
        if path.suffix in COMPRESSED or head == ZSTD_MAGIC
        else path.read_bytes()
    )
    skip = len(BOM) if data.startswith(BOM) else 0
    return decode_utf8(path, data[skip:], offset=skip)


# ----------------------------------------------------------------------------- JSON records


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    return f"line {line}, column {pos - (text.rfind(chr(10), 0, pos) + 1) + 1}"


def iter_records(path: Path, jsonl: bool) -> Iterator[tuple[int, Any]]:
    """``(index, record)`` for each record of a release file: a JSON list (decoded one element at a
    time, so a large file is never held as one Python list) or JSON lines. Invalid JSON — a
    truncated file among others — raises :class:`DataFormatError` naming the file, the record and
    the line and column."""
    text = read_text(path)
    if jsonl:
        n = 0
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise DataFormatError(
                    path, f"invalid JSON on line {lineno}, column {e.colno}: {e.msg}", record=n
                ) from None
            yield n, rec
            n += 1
        return
    dec = json.JSONDecoder()
    i = _skip_ws(text, 0)
    if i >= len(text) or text[i] != "[":
        raise DataFormatError(
            path, f"expected a JSON list of records (the file starts with {text[i : i + 20]!r})"
        )
    i = _skip_ws(text, i + 1)
    n = 0
    if i < len(text) and text[i] == "]":
        return
    while True:
        try:
            rec, i = dec.raw_decode(text, i)
        except json.JSONDecodeError as e:
            raise DataFormatError(
                path, f"invalid JSON (truncated or corrupted?) at {_where(text, e.pos)}: {e.msg}", record=n
            ) from None
        yield n, rec
        n += 1
        i = _skip_ws(text, i)
        if i < len(text) and text[i] == ",":
            i = _skip_ws(text, i + 1)
            continue
        if i < len(text) and text[i] == "]":
            if text[i + 1 :].strip():
                raise DataFormatError(path, f"text after the end of the JSON list at {_where(text, i + 1)}")
            return
        raise DataFormatError(
            path,
            f"invalid JSON (truncated or corrupted?) at {_where(text, i)}: expected ',' or "
            "']' after a record",
            record=n,
        )


def _skip_ws(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in " \t\r\n":
        i += 1
    return i
