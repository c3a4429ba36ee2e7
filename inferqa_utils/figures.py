"""Figure helpers: every figure of the compendium is written to ``figures/<name>.png``."""

from __future__ import annotations

from pathlib import Path

from .config import PATHS


def save_figure(fig, name: str, folder: Path | None = None) -> Path:
    """Write ``fig`` as ``<folder or figures/>/<name>.png`` (stable names; 120 dpi) and return the path."""
    folder = folder or PATHS.figures
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    fig.savefig(path, dpi=120, bbox_inches="tight")
    return path
