"""Model/dataset hub access that fails fast and clearly when there is no network (docs/models.md).

On a machine without network, ``huggingface_hub`` retries for ~70 s before failing. We check
reachability first (one TCP connect with a short timeout) and honour ``HF_HUB_OFFLINE=1``.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from .errors import OfflineError

HUB_HOST = os.environ.get("INFERQA_HUB_HOST", "huggingface.co")
HUB_PORT = int(os.environ.get("INFERQA_HUB_PORT", "443"))


def hub_reachable(host: str | None = None, port: int | None = None, timeout: float = 3.0) -> bool:
    """True if a TCP connection to the hub (default :data:`HUB_HOST`:``HUB_PORT``, read at call
    time) can be opened within ``timeout`` seconds."""
    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("", "0", "false", "False"):
        return False
    try:
        with socket.create_connection((host or HUB_HOST, port or HUB_PORT), timeout=timeout):
            return True
    except OSError:
        return False


def require_hub(what: str, hint: str = "") -> None:
    """Raise :class:`OfflineError` at once (≤ ~3 s) when the hub cannot be reached."""
    if not hub_reachable():
        msg = (f"{what} must be downloaded from the Hugging Face hub ({HUB_HOST}), which is not reachable "
               f"from this machine (or HF_HUB_OFFLINE is set).")
        raise OfflineError(msg + (" " + hint if hint else ""))


def download(repo_id: str, filename: str, repo_type: str = "model", cache_dir: Path | None = None) -> Path:
    """Download one file from the hub (after a fast reachability check)."""
    require_hub(f"{repo_type} file {repo_id}/{filename}",
                "Copy the file to this machine and pass its local path instead.")
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise OfflineError("huggingface_hub is not installed; `pip install huggingface_hub`") from e
    return Path(hf_hub_download(repo_id=repo_id, filename=filename, repo_type=repo_type,
                                cache_dir=str(cache_dir) if cache_dir else None))
