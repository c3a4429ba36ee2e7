"""Notebook parameters read without papermill, and ``-p NAME=VALUE`` overrides checked against them.

A notebook's ``parameters`` cell (the code cell tagged ``parameters``) holds one
``name = value  # comment`` line per parameter. :func:`declared_parameters` reads it with
:mod:`json` and :mod:`ast` — no papermill, no kernel: milliseconds per notebook — and gives the
same names as papermill's ``inspect_notebook`` (tests/test_cli.py compares them).

:func:`check_overrides` refuses an override before any notebook runs, with a
:class:`~inferqa_utils.core.errors.ParameterError` of one line:

* a name that no notebook of the run declares — naming the similar names the run's notebooks
  declare (:func:`difflib.get_close_matches`) and the notebooks that declare them, or the
  notebooks left out of the run (``--only``) that declare the name itself;
* a value of a type the parameter does not take. The types a parameter takes are those of the
  values the compendium knows for it: each declaring notebook's default, every profile's value,
  and ``None`` (YAML ``null``) when a declaring notebook's comment mentions ``None``
  (``# cap (None: all)``). A parameter known only as ``None`` takes any value. A list takes lists
  whose items are of the types of the known lists' items (any items when those are all empty).
  An integer is taken where a float is; a string YAML did not read as a number though it is one
  (``1e-5``: YAML 1.1 wants ``1.0e-5``) becomes a float where numbers and no strings are taken.

:func:`check_components` refuses, in one line too, a component spec the run's notebooks take
(:data:`COMPONENT_PARAMETERS`: notebook 08's ``your_*`` and the ``module:function`` values of the
retriever and reranker lists) that its registry cannot resolve — an unknown name, a module that
does not import, a missing attribute, a callable of the wrong signature
(:mod:`inferqa_utils.core.plugins`) — building nothing, with the function of the stage's registry
that looks a spec of its kind up (:func:`component_resolvers`).
"""

from __future__ import annotations

import ast
import difflib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import DataFormatError, ParameterError

if TYPE_CHECKING:
    from ..core.plugins import Plugin

#: how a value's type is named in messages, with its article
_KIND_TEXT = {"boolean": "true or false", "integer": "an integer", "number": "a number", "string": "a string",
              "list": "a list", "mapping": "a mapping", "null": "null"}
_PLURAL = {
    "null": "nulls",
    "boolean": "booleans",
    "integer": "integers",
    "number": "numbers",
    "string": "strings",
    "list": "lists",
    "mapping": "mappings",
}
_FLOAT = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
_NONE_WORD = re.compile(r"\bNone\b")


@dataclass(frozen=True)
class Declared:
    """One parameter of a notebook's parameters cell."""

    notebook: str
    name: str
    default: Any
    #: whether the default is a Python literal (its type known)
    literal: bool
    comment: str

    @property
    def none_ok(self) -> bool:
        """Whether the notebook says the parameter takes ``None`` (default or comment)."""
        return (self.literal and self.default is None) or bool(_NONE_WORD.search(self.comment))

    def source(self) -> str:
        """``name = default`` as the notebook writes it (literal defaults)."""
        return f"{self.name} = {self.default!r}" if self.literal else self.name


def parameters_cell(path: str | Path) -> str | None:
    """The source of the notebook's cell tagged ``parameters`` (``None`` when it has none)."""
    path = Path(path)
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DataFormatError(path, f"cannot read the notebook ({exc})") from None
    for cell in nb.get("cells", []) if isinstance(nb, dict) else []:
        if cell.get("cell_type") == "code" and "parameters" in (cell.get("metadata") or {}).get("tags", []):
            src = cell.get("source", "")
            return "".join(src) if isinstance(src, list) else str(src)
    return None


def declared_parameters(path: str | Path) -> dict[str, Declared]:
    """``{name: Declared}`` of the notebook's parameters cell, in its order (``{}`` without one)."""
    path = Path(path)
    src = parameters_cell(path)
    if src is None:
        return {}
    try:
        tree = ast.parse(src)
    except SyntaxError as exc:
        raise DataFormatError(path, f"the parameters cell is not valid Python ({exc.msg})",
                              record=f"line {exc.lineno}") from None
    lines = src.splitlines()
    out: dict[str, Declared] = {}
    for node in tree.body:
        target, value = _assignment(node)
        if target is None or value is None:
            continue
        try:
            default, literal = ast.literal_eval(value), True
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            default, literal = None, False
        out[target] = Declared(path.stem, target, default, literal, _comment(lines[node.end_lineno - 1],
                                                                            node.end_col_offset))
    return out


def _assignment(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    """``(name, value)`` of ``name = value`` or ``name: T = value``; ``(None, None)`` otherwise."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return node.target.id, node.value
    return None, None


def _comment(line: str, end_col: int | None) -> str:
    """The comment after a statement that ends at byte column ``end_col`` of ``line``."""
    rest = line.encode("utf-8")[end_col or 0:].decode("utf-8", errors="replace")
    return rest.split("#", 1)[1].strip() if "#" in rest else ""


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "list"
    if isinstance(value, dict):
        return "mapping"
    return type(value).__name__


@dataclass(frozen=True)
class Known:
    """What the compendium knows of one parameter: the declarations of it and the profiles' values."""

    name: str
    declared: tuple[Declared, ...]
    #: ``(profile, value)`` of every profile that sets the parameter
    profile_values: tuple[tuple[str, Any], ...] = ()

    @property
    def values(self) -> list[Any]:
        return [d.default for d in self.declared if d.literal] + [v for _, v in self.profile_values]

    @property
    def none_ok(self) -> bool:
        return any(d.none_ok for d in self.declared) or any(v is None for v in self.values)

    def kinds(self) -> set[str]:
        """The types the parameter takes (``null`` included when it takes ``None``)."""
        return {_kind(v) for v in self.values} | ({"null"} if self.none_ok else set())

    def items(self) -> list[Any]:
        """The items of the parameter's known list values."""
        return [x for v in self.values if isinstance(v, list | tuple) for x in v]

    def expected(self) -> str:
        """``an integer or null``, ``a list of strings``: the types it takes, in words."""
        order = list(_KIND_TEXT)
        kinds = sorted(self.kinds(), key=lambda k: order.index(k) if k in order else len(order))
        words = []
        for k in kinds:
            item_kinds = sorted({_kind(x) for x in self.items()})
            if k == "list" and item_kinds:
                words.append("a list of " + " or ".join(_PLURAL.get(i, i) for i in item_kinds))
            else:
                words.append(_KIND_TEXT.get(k, k))
        return " or ".join(words)

    def where(self) -> str:
        """``n_test = 48 in 01_dataset_construction``: a declaration showing a type, as evidence;
        a profile's value besides when every default is ``None``."""
        shown = [d for d in self.declared if d.literal]
        d = next((d for d in shown if d.default is not None), shown[0] if shown else None)
        text = f"{d.source()} in {d.notebook}" if d else f"declared in {self.declared[0].notebook}"
        if d is None or d.default is None:
            set_by = next(((p, v) for p, v in self.profile_values if v is not None), None)
            if set_by:
                text += f"; profile {set_by[0]}: {_shown(set_by[1])}"
        return text


def fit(value: Any, known: Sequence[Any], none_ok: bool) -> tuple[bool, Any]:
    """Whether ``value`` is of a type of the ``known`` values (``None`` allowed when ``none_ok``)
    and the value to pass (the module docstring's coercions)."""
    kinds = {_kind(v) for v in known} | ({"null"} if none_ok else set())
    if kinds <= {"null"}:
        return True, value
    k = _kind(value)
    if k == "list" and "list" in kinds:
        items = [x for v in known if isinstance(v, list | tuple) for x in v]
        if not items:
            return True, value
        fitted = [fit(x, items, False) for x in value]
        return all(ok for ok, _ in fitted), [x for _, x in fitted]
    if k in kinds:
        return True, value
    if k == "integer" and "number" in kinds:
        return True, value
    if k == "string" and kinds & {"number", "integer"} and _FLOAT.match(value.strip()):
        return "number" in kinds, float(value)
    return False, value


def _shown(value: Any) -> str:
    """A value as typed after ``-p NAME=``: YAML-like (``abc``, ``null``, ``[1, "x"]``)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _notebooks_text(stems: Sequence[str]) -> str:
    """``01_dataset_construction`` for one notebook, ``notebooks 00, 01, 04`` for several."""
    stems = sorted(set(stems))
    return stems[0] if len(stems) == 1 else "notebooks " + ", ".join(s[:2] for s in stems)


def known_parameters(notebooks: Sequence[Path],
                     profiles: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Known]:
    """``{name: Known}`` of every parameter the ``notebooks`` declare, with the values the
    ``profiles`` (``{profile: its resolved values}``) give it."""
    declared: dict[str, list[Declared]] = {}
    for nb in notebooks:
        for name, d in declared_parameters(nb).items():
            declared.setdefault(name, []).append(d)
    values = {
        name: tuple((n, p[name]) for n, p in (profiles or {}).items() if name in p) for name in declared
    }
    return {name: Known(name, tuple(ds), values[name]) for name, ds in declared.items()}


def unknown_name_message(name: str, value: Any, known: Mapping[str, Known], others: Mapping[str, Known],
                         scope: str = "") -> str:
    """The one line refusing ``-p name=value`` that no notebook of the run declares."""
    head = f"-p {name}={_shown(value)}: no notebook of this run{scope} declares {name}"
    if name in others:
        stems = sorted({d.notebook for d in others[name].declared})
        return (f"{head}; {_notebooks_text(stems)} {'does' if len(stems) == 1 else 'do'} "
                f"(add {' '.join(s[:2] for s in stems)} to --only)")
    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
    if not close:
        return f"{head}, nor a similar name"
    return head + "; did you mean " + " or ".join(
        f"{c} ({_notebooks_text([d.notebook for d in known[c].declared])})" for c in close) + "?"


def check_overrides(
    overrides: Mapping[str, Any] | None,
    notebooks: Sequence[Path],
    others: Sequence[Path] = (),
    profiles: Mapping[str, Mapping[str, Any]] | None = None,
    scope: str = "",
) -> dict[str, Any]:
    """The overrides checked against the parameters the ``notebooks`` of a run declare (the module
    docstring), values coerced; :class:`~inferqa_utils.core.errors.ParameterError` for the first one
    refused. ``others``: the notebooks left out of the run (their names are pointed to); ``scope``:
    how the run was narrowed (`` (--only 01)``), for the message."""
    out: dict[str, Any] = {}
    if not overrides:
        return out
    known = known_parameters(notebooks, profiles)
    for name, value in overrides.items():
        if name not in known:
            raise ParameterError(unknown_name_message(name, value, known, known_parameters(others), scope))
        k = known[name]
        ok, fitted = fit(value, k.values, k.none_ok)
        if not ok:
            raise ParameterError(f"-p {name}={_shown(value)}: expected {k.expected()} ({k.where()}), "
                                 f"got {_KIND_TEXT.get(_kind(value), _kind(value))}" + _item_note(value, k))
        out[name] = fitted
    return out


def _item_note(value: Any, known: Known) -> str:
    """`` (item 'x')``: the first list item of a refused list value that does not fit."""
    if not isinstance(value, list | tuple) or "list" not in known.kinds():
        return ""
    bad = next((x for x in value if not fit(x, known.items(), False)[0]), None)
    return "" if bad is None else f" holding {_KIND_TEXT.get(_kind(bad), _kind(bad))} ({_shown(bad)})"


# ----------------------------------------------------------------------------- component specs

#: notebook parameters that name components (:mod:`inferqa_utils.core.plugins`): ``(kind, every value)``
#: — notebook 08's ``your_*`` parameters are resolved whatever their value (a name must be a
#: registered one or an entry point); the others' values only when they are ``module:function``
#: specs (their built-in names are the notebooks' own business)
COMPONENT_PARAMETERS: dict[str, tuple[str, bool]] = {
    "your_retriever": ("retriever", True), "your_reranker": ("reranker", True),
    "your_reader": ("reader", True), "your_method": ("method", True),
    "retrievers": ("retriever", False), "baseline_retrievers": ("retriever", False),
    "damaging_retrievers": ("retriever", False), "pool_retrievers": ("retriever", False),
    "rerankers": ("reranker", False), "oracle_rerankers": ("reranker", False),
}


def component_resolvers() -> dict[str, Callable[[str], Any]]:
    """``{kind: resolve}`` for each kind of component (:data:`inferqa_utils.core.plugins.KINDS`):
    the function of its stage's registry that looks a spec up, building nothing — it returns the
    registry's entry for the spec (a plugged-in component's entry holds its
    :class:`~inferqa_utils.core.plugins.Plugin` as ``plugin``) or raises (an unknown name: a
    ``ValueError``, ``KeyError`` or project error listing the valid names; a wrong plugin spec: a
    :class:`~inferqa_utils.core.errors.PluginError`). The registries are imported when a spec is
    first checked."""
    from ..beyond.registry import method_spec
    from ..reading.readers import reader_spec
    from ..rerank.registry import check_reranker
    from ..retrieval.registry import retriever_spec

    return {"retriever": retriever_spec, "reranker": check_reranker, "reader": reader_spec,
            "method": method_spec}


def check_component(kind: str, spec: str) -> Plugin | None:
    """Refuse a spec the registry of ``kind`` cannot resolve, building nothing (for a plugged-in
    component its module is imported and its callable's signature checked,
    :func:`inferqa_utils.core.plugins.resolve`); returns the plugin behind it, None for a built-in name."""
    resolve = component_resolvers().get(kind)
    if resolve is None:
        raise ValueError(f"unknown component kind {kind!r}")
    return getattr(resolve(spec), "plugin", None)


def check_components(params: Mapping[str, Any], declared: Sequence[str] | None = None,
                     overridden: Sequence[str] = (), profile_name: str | None = None) -> list[Path]:
    """Check every component spec of a run's parameters (:data:`COMPONENT_PARAMETERS`; only those
    the run's notebooks declare when ``declared`` is given) before any notebook runs: the first one
    refused raises a :class:`~inferqa_utils.core.errors.PluginError` of one line naming the parameter,
    where its value came from (``-p`` for the ``overridden`` names, else the profile), the spec,
    the kind and the expected form. Returns the folders the plugged-in modules were imported from,
    for the kernels' ``PYTHONPATH``."""
    from ..core.errors import InferQAError, PluginError

    origins: list[Path] = []
    for name, value in params.items():
        if name not in COMPONENT_PARAMETERS or (declared is not None and name not in declared):
            continue
        kind, every = COMPONENT_PARAMETERS[name]
        for spec in value if isinstance(value, list | tuple) else [value]:
            if not isinstance(spec, str) or (not every and ":" not in spec) or spec.lower() == "none":
                continue
            where = "-p" if name in overridden else f"profile {profile_name}" if profile_name else "profile"
            try:
                found = check_component(kind, spec)
            except PluginError as exc:
                raise PluginError(f"{name}={spec} ({where}): {exc}") from None
            except (KeyError, ValueError, InferQAError) as exc:  # an unknown name, listing the valid ones
                text = exc.args[0] if type(exc) is KeyError and exc.args else exc
                raise PluginError(f"{name}={spec} ({where}): {' '.join(str(text).split())}") from None
            if found is not None and found.origin is not None and found.origin not in origins:
                origins.append(found.origin)
    return origins
