"""The project root a test session runs in: a folder outside the checkout (``INFERQA_ROOT``).

``inferqa_utils.core.config`` anchors every path at ``INFERQA_ROOT``, read once at import, so
tests/conftest.py calls :func:`isolate` before anything imports ``inferqa_utils``. What tests and
the notebooks they run write then goes to the test root, never into the checkout:

* ``notebooks/`` and ``data/`` are copies of the checkout's (fresh each session; papermill runs a
  notebook with its folder as working directory, so a stray file lands in the copy);
* ``results/``, ``figures/``, ``build/`` are the test root's own folders;
* ``.cache/models/`` is the test root's own folder holding a symlink to each file and folder of the
  checkout's ``.cache/models`` (the joined packaged models, ~1.6 GB, fetched by ``make test``
  before pytest): no model is joined twice, while the registry of fine-tuned models
  (``local_models.json``, naming checkpoints under the test root's ``build/``) stays the test
  root's own;
* ``.cache/hub`` (when the checkout has one) is a symlink to the checkout's download cache;
* the caches whose entries are keyed by content and that a test run may keep for the next one
  live in the checkout's ``.cache/tests/``: the LLM generation cache
  (``INFERQA_LLM_CACHE`` = ``.cache/tests/llm/cache.sqlite``, unless the variable is set) and the
  embedding vectors (``.cache/embeddings`` → ``.cache/tests/embeddings``). They are apart from
  ``make run``'s own caches, so a test run never changes what a run reads, and keep a developer's
  second ``make test`` fast; CI starts from a fresh clone and fills them once.

The shared TriviaHG data stays the checkout's (``INFERQA_SHARED_DATA`` = ``../shared/data`` beside
the checkout, unless set), as the root's parent is no longer the checkout's.

The root is a new temporary folder, removed at the end of a session that passed (kept, and named,
when tests failed). ``INFERQA_TEST_ROOT=DIR`` chooses a folder that is kept instead, e.g. to
reuse a smoke build across sessions (``INFERQA_TEST_ROOT=/tmp/iq pytest -m browser``).

This module imports nothing from ``inferqa_utils``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import MutableMapping
from pathlib import Path

#: the checkout these tests belong to (the package under test is imported from here)
CHECKOUT = Path(__file__).resolve().parents[1]
#: a chosen test root, kept after the session
TEST_ROOT_ENV = "INFERQA_TEST_ROOT"
#: folders a run reads, copied from the checkout
COPIED = ("notebooks", "data")
#: folders a run writes, the test root's own
OWN = ("results", "figures", "build")


def shared_cache(checkout: Path = CHECKOUT) -> Path:
    """The checkout's folder of caches shared by test sessions (``.cache/tests``)."""
    return checkout / ".cache" / "tests"


def make_root(root: Path, checkout: Path = CHECKOUT) -> Path:
    """Lay out ``root`` as the module docstring says (an existing root is refreshed); returns it."""
    root.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        shutil.rmtree(root / name, ignore_errors=True)
        shutil.copytree(checkout / name, root / name, symlinks=True)
    for name in OWN:
        (root / name).mkdir(exist_ok=True)
    cache = root / ".cache"
    _link_entries(checkout / ".cache" / "models", cache / "models", skip={"local_models.json"})
    if (checkout / ".cache" / "hub").is_dir():
        _link(cache / "hub", checkout / ".cache" / "hub")
    embeddings = shared_cache(checkout) / "embeddings"
    embeddings.mkdir(parents=True, exist_ok=True)
    _link(cache / "embeddings", embeddings)
    return root


def _link(link: Path, target: Path) -> None:
    """``link`` → ``target``, replacing an older link of that name."""
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink():
        link.unlink()
    link.symlink_to(target, target_is_directory=target.is_dir())


def _link_entries(source: Path, folder: Path, skip: set[str]) -> None:
    """``folder`` with a symlink to each entry of ``source`` (when it exists) but ``skip``."""
    folder.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        for entry in source.iterdir():
            if entry.name not in skip and not (folder / entry.name).exists():
                _link(folder / entry.name, entry)


def isolate(environ: MutableMapping[str, str] = os.environ) -> tuple[Path, bool]:
    """Make a test root and point ``INFERQA_ROOT`` at it in ``environ`` (and, unless set,
    ``INFERQA_LLM_CACHE`` at the tests' generation cache and ``INFERQA_SHARED_DATA`` at the
    checkout's ``../shared/data`` when it exists); returns ``(root, chosen)``, ``chosen`` when it
    came from ``INFERQA_TEST_ROOT`` (then it is never removed)."""
    chosen = environ.get(TEST_ROOT_ENV)
    root = Path(chosen) if chosen else Path(tempfile.mkdtemp(prefix="inferqa-tests-"))
    root = make_root(root.resolve())
    environ["INFERQA_ROOT"] = str(root)
    environ.setdefault("INFERQA_LLM_CACHE", str(shared_cache() / "llm" / "cache.sqlite"))
    shared = CHECKOUT.parent / "shared" / "data"
    if shared.is_dir():
        environ.setdefault("INFERQA_SHARED_DATA", str(shared))
    return root, bool(chosen)


def inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` (resolved) is ``folder`` or under it."""
    path, folder = Path(path).resolve(), Path(folder).resolve()
    return path == folder or folder in path.parents
