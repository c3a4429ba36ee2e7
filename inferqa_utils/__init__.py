"""inferqa_utils — the package behind the InferQA compendium's notebooks.

Importing the package is cheap: heavy libraries (torch, pyserini, llama_cpp, papermill,
pandas) are imported inside the functions that need them. Commonly used names are exposed
lazily below.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "PATHS": "core.config", "SEED": "core.config", "set_seeds": "core.config", "profile": "core.config",
    "require_input": "core.config",
    "Dataset": "ir.datamodel", "Question": "ir.datamodel", "Hint": "ir.datamodel", "Passage": "ir.datamodel",
    "load_source": "sources", "load_embedded": "sources", "load_triviahg": "sources",
    "load_wikihint": "sources", "load_quit": "sources",
    "DataFormatError": "core.errors", "MissingInputError": "core.errors", "OfflineError": "core.errors",
    "Manifest": "record.manifest",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'inferqa_utils' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
