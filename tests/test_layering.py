"""The package's stage layering: no stage imports a later stage, no stage imports another stage's
``conditions`` module, and no import cycles between modules (function-local imports included —
they hide cycles, they do not remove them)."""

from __future__ import annotations

import ast
from pathlib import Path

import inferqa_utils

PKG = Path(inferqa_utils.__file__).parent

#: layer of each top-level module / subpackage, bottom up: the foundations (``core``), the shared
#: vocabulary of retrieval and of measuring and showing a number (``ir``, ``measure``, ``present``),
#: the model engines and the sources, a run's own records (``record``), the answering layer, the stages in
#: notebook order (08, your method, reads the stored outputs of 02–07), the paper's own runs, the
#: runner and the teaching helpers, and last what reads every stage (``verdicts``) and the command line
LAYERS: dict[str, int] = {
    "__init__": 0,
    "core": 0,
    "ir": 1,
    "measure": 1,
    "present": 1,
    "llm": 2,
    "sources": 2,
    "record": 3,
    "answering": 4,
    "construction": 5,
    "stages": 5,
    "retrieval": 6,
    "rerank": 7,
    "reading": 8,
    "finetune": 9,
    "damaging": 10,
    "beyond": 11,
    "yourmethod": 12,
    "paper_runs": 13,
    "run": 13,
    "teach": 13,
    "verdicts": 14,
    "__main__": 15,
}


def _module(path: Path) -> str:
    rel = path.relative_to(PKG).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1] or ["__init__"]
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Package modules imported anywhere in the file (absolute dotted names under the package)."""
    mod = _module(path)
    is_pkg = path.name == "__init__.py"
    here = mod.split(".") if is_pkg else mod.split(".")[:-1]
    if mod == "__init__":
        here = []
    out: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                 and ast.unparse(block.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
                 for stmt in block.body for n in ast.walk(stmt)}  # annotations only: no runtime import
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
                target = ".".join([*base, *(node.module.split(".") if node.module else [])])
            elif node.module and node.module.startswith("inferqa_utils"):
                target = node.module[len("inferqa_utils"):].lstrip(".")
            else:
                continue
            names = [a.name for a in node.names]
            for n in names:  # `from . import stages` imports a module
                sub = f"{target}.{n}" if target else n
                out.add(sub if (PKG / Path(*sub.split("."))).with_suffix(".py").exists()
                        or (PKG / Path(*sub.split("."))).is_dir() else target)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("inferqa_utils."):
                    out.add(a.name[len("inferqa_utils."):])
    return {t for t in out if t}


def _graph() -> dict[str, set[str]]:
    return {_module(p): {t for t in _imports(p) if t != _module(p)} for p in PKG.rglob("*.py")}


def _layer(mod: str) -> int:
    top = mod.split(".")[0]
    assert top in LAYERS, f"module {mod!r} has no layer: add its top-level name to LAYERS"
    return LAYERS[top]


def test_no_stage_imports_a_later_stage():
    bad = sorted(f"{m} (layer {_layer(m)}) imports {t} (layer {_layer(t)})"
                 for m, targets in _graph().items() for t in targets if _layer(t) > _layer(m))
    assert not bad, "\n".join(bad)


def _is_conditions_of_another_stage(mod: str, target: str) -> bool:
    """``target`` is a stage's ``conditions`` module (a notebook's tables and runs) and ``mod`` is a
    module of a layer below the top (not one of the modules that read every stage) outside that
    stage's package."""
    parts = target.split(".")
    return len(parts) == 2 and parts[1] == "conditions" and parts[0] != mod.split(".")[0] \
        and _layer(mod) < LAYERS["run"]


def test_no_stage_imports_another_stages_conditions():
    """What several stages share lives in a foundation module, ``answering`` or a stage's own
    non-experiment modules (e.g. ``rerank.registry``), never in the notebook code of one stage."""
    bad = sorted(f"{m} imports {t}" for m, targets in _graph().items() for t in targets
                 if _is_conditions_of_another_stage(m, t))
    assert not bad, "\n".join(bad)


def test_the_conditions_rule_hand_checked():
    assert _is_conditions_of_another_stage("beyond.comparison", "reading.conditions")
    assert _is_conditions_of_another_stage("finetune.conditions", "rerank.conditions")
    assert not _is_conditions_of_another_stage("reading.summary", "reading.conditions")  # its own stage
    assert not _is_conditions_of_another_stage("verdicts.check", "retrieval.conditions")  # reads every stage
    assert not _is_conditions_of_another_stage("beyond.comparison", "reading.topk")


def test_no_import_cycles_between_modules():
    graph = _graph()
    # a package's __init__ re-exporting its own modules is not a cycle of the stage graph
    edges = {m: {t for t in ts if t in graph and not (t.startswith(m + ".") and "." not in t[len(m) + 1:])}
             for m, ts in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_layering_test_sees_function_local_imports(tmp_path):
    """Guard against a parser that misses imports inside functions (they hid cycles before)."""
    p = PKG / "construction" / "difficulty.py"
    assert "ir.lexical" in _imports(p)


def test_every_imported_name_exists():
    """Every ``from … import name`` inside the package — function-local ones included, which only
    run when a notebook reaches them — names something its module still has (a moved or removed
    helper breaks here, not in the middle of a run)."""
    import importlib

    missing = []
    for p in PKG.rglob("*.py"):
        mod = "inferqa_utils" + ("." + _module(p) if _module(p) != "__init__" else "")
        pkg = mod if p.name == "__init__.py" else mod.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not (
                node.level or (node.module or "").startswith("inferqa_utils")
            ):
                continue
            target = importlib.util.resolve_name("." * node.level + (node.module or ""), pkg) if node.level \
                else node.module
            m = importlib.import_module(target)
            for a in node.names:
                if a.name == "*" or hasattr(m, a.name):
                    continue
                try:
                    importlib.import_module(f"{target}.{a.name}")
                except ImportError:
                    missing.append(f"{mod}: from {target} import {a.name}")
    assert not missing, "\n".join(missing)
