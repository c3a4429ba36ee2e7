"""Download the authors' released result files from the hub, decompress and verify them.

The files are the folder ``results/`` of the hub dataset ``JamshidJDMY/InferentialQA``, each
stored zstandard-compressed under the released path with its suffix replaced by ``.zsd``
(``results/hf_auto_open.py`` of ``DataScienceUIBK/InferentialQA``). :func:`fetch`:

1. checks (unless ``source`` is given) that the hub can be reached
   (:func:`inferqa_utils.core.hub.require_hub`: one TCP connection, ≤ 3 s) and fails at once with
   :class:`~inferqa_utils.core.errors.OfflineError` otherwise;
2. downloads the ``.zsd`` files the importer reads (:func:`default_patterns`, or ``include``
   glob patterns) with ``huggingface_hub.snapshot_download`` into ``<to>/download/`` — or, given
   ``source`` (a local folder laid out as the hub dataset, e.g. a copy of it on a machine without
   network), copies the files those patterns select from it, matched as ``snapshot_download``
   matches them, and contacts no hub (:func:`copy_local`);
3. decompresses each to its released name under ``<to>/results/`` (``retriever.zsd`` →
   ``retriever.json``, or ``.jsonl`` for the index; a truncated or corrupt file is an error naming
   it) and writes ``<to>/MANIFEST.json`` atomically (released path, stored name, sizes, sha256 of
   both; :func:`inferqa_utils.core.atomic.write_text_atomic`);
4. verifies the copy by loading it (:func:`inferqa_utils.paper_runs.load.load_release`: every
   shape and label checked), and removes ``<to>/download/`` unless ``keep_compressed``.

``python -m inferqa_utils paper-runs import <to>`` then reads ``<to>/results/``.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..core.atomic import write_text_atomic
from ..core.config import PATHS
from ..core.fingerprint import sha256_file
from ..core.hub import require_hub
from ..sources.quit import HUB_REPO
from . import files as F

#: where ``fetch`` writes by default (git-ignored)
DEFAULT_DIR = PATHS.cache / "paper-runs"
WHAT = f"The paper's released result files (hub dataset {HUB_REPO}, folder results/)"
HINT = (
    "Copy that folder to this machine (its .zsd files or the decompressed .json/.jsonl files) and read it "
    "with `python -m inferqa_utils paper-runs import DIR`."
)


def default_patterns() -> list[str]:
    """Glob patterns (``huggingface_hub``'s ``allow_patterns``) of the stored files the importer
    reads: each :data:`~inferqa_utils.paper_runs.files.LAYOUT` path, placeholders as ``*``, stored
    name ``.zsd``."""
    import re

    return ["results/" + re.sub(r"\{\w+\}", "*", F.compressed_name(e.path)) for e in F.LAYOUT]


def decompress_tree(src: Path, dst: Path, log: Callable[[str], Any] | None = None) -> list[dict[str, Any]]:
    """Decompress every ``.zsd``/``.zst`` file under ``src`` to its released name under ``dst``
    (:data:`~inferqa_utils.paper_runs.files.LAYOUT` decides ``.json`` or ``.jsonl``; a file the
    layout does not know becomes ``.json``, as the authors' ``download_results.py`` does); plain
    files are copied. Returns one manifest entry per file."""
    say = log or (lambda s: None)
    entries = []
    for p in sorted(src.rglob("*")):
        if not p.is_file() or p.name.startswith("."):
            continue
        rel = p.relative_to(src).as_posix()
        hit = F.match(rel)
        if hit is not None:
            released = hit[0].path.format(**hit[1])
        elif rel.endswith(F.COMPRESSED):
            released = F.released_stem(rel) + ".json"
        else:
            released = rel
        out = dst / released
        out.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith(F.COMPRESSED):
            size = F.decompress_to(p, out)
        else:
            shutil.copyfile(p, out)
            size = out.stat().st_size
        entries.append(
            {
                "released": released, "stored": rel, "stored_bytes": p.stat().st_size,
                "stored_sha256": sha256_file(p), "bytes": size, "sha256": sha256_file(out),
            }
        )
        say(f"[paper-runs] {rel} -> {released} ({size:,} bytes)")
    return entries


def copy_local(source: str | Path, patterns: Sequence[str], download: Path) -> list[str]:
    """Copy the files of ``source`` (a folder laid out as the hub dataset) that ``patterns`` select
    into ``download``, as ``snapshot_download`` would download them (the same pattern matching:
    ``huggingface_hub``'s ``filter_repo_objects``); returns their paths relative to ``source``."""
    from huggingface_hub.utils import filter_repo_objects

    source = Path(source)
    if not source.is_dir():
        from ..core.errors import DataFormatError

        raise DataFormatError(
            source, "no such folder: give the local copy of the hub dataset (it holds results/)"
        )
    names = sorted(p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file())
    chosen = list(filter_repo_objects(names, allow_patterns=list(patterns)))
    for name in chosen:
        (download / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, download / name)
    return chosen


def fetch(
    to: str | Path | None = None, include: Sequence[str] | None = None, keep_compressed: bool = False,
    verify: bool = True, log: Callable[[str], Any] = print, source: str | Path | None = None,
) -> Path:
    """Download, decompress and verify the released result files (module docstring); returns
    ``<to>/results``. Offline: :class:`~inferqa_utils.core.errors.OfflineError` within seconds. With
    ``source`` (a local folder laid out as the hub dataset) the files are copied from it instead
    of downloaded, and the hub is not contacted."""
    t0 = time.perf_counter()
    if source is None:
        require_hub(WHAT, HINT)
    to = Path(to) if to is not None else DEFAULT_DIR
    download = to / "download"
    patterns = list(include) if include else default_patterns()
    _obtain(patterns, download, source, log)
    src = download / "results"
    if not src.is_dir():
        from ..core.errors import DataFormatError

        raise DataFormatError(download, f"the download holds no results/ folder (patterns {patterns})")
    dst = to / "results"
    entries = decompress_tree(src, dst, log)
    write_text_atomic(
        to / "MANIFEST.json",
        json.dumps({"repo": HUB_REPO, "patterns": patterns, "files": entries}, indent=1) + "\n",
    )
    if verify:
        from .load import load_release

        rel = load_release(dst)
        log(
            f"[paper-runs] verified: {len(rel.questions)} questions, {len(rel.rankings)} rankings, "
            f"{len(rel.readings)} reader files, readers {', '.join(rel.readers)}"
        )
    if not keep_compressed:
        shutil.rmtree(download, ignore_errors=True)
    log(f"[paper-runs] {dst}: {len(entries)} files in {time.perf_counter() - t0:.1f} s")
    return dst


def _obtain(
    patterns: list[str], download: Path, source: str | Path | None, log: Callable[[str], Any]
) -> None:
    """Put the files ``patterns`` select into ``download``: from the hub, or from ``source``."""
    if source is not None:
        log(f"[paper-runs] copying {', '.join(patterns)} from {source} -> {download}")
        copy_local(source, patterns, download)
        return
    from huggingface_hub import snapshot_download

    log(f"[paper-runs] downloading {HUB_REPO} {', '.join(patterns)} -> {download}")
    snapshot_download(repo_id=HUB_REPO, repo_type="dataset", allow_patterns=patterns, local_dir=str(download))
