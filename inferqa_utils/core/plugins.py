"""Components plugged in by name: a researcher's retriever, reranker, reader or whole method,
found through a Python entry point or a ``module:function`` spec, checked before any model loads.

Two routes name a component (``docs/your_method.md``):

* an **entry point** of an installed package, in the group of its kind (:data:`KINDS`)::

      [project.entry-points."inferqa.retrievers"]
      answer-type-bm25 = "inferqa_answer_type:make_retriever"

  after which the name (``answer-type-bm25``) is taken wherever a notebook takes a retriever;
* a **spec** ``package.module:function`` in a profile or ``-p`` (the module must be importable by
  the run: installed, or in a folder on ``PYTHONPATH``).

The registries (:mod:`inferqa_utils.retrieval.registry`, :mod:`inferqa_utils.rerank.registry`,
:mod:`inferqa_utils.reading.readers`, :mod:`inferqa_utils.beyond.registry`) ask here for a name they
do not hold (:func:`find`): their own names come first, then entry points, then ``module:function``.
:func:`resolve` imports the module (or loads the entry point), checks that the attribute exists,
is callable and accepts the arguments its kind is called with (:func:`inspect.signature`), and
returns a :class:`Plugin`. Every failure is a :class:`~inferqa_utils.core.errors.PluginError` of one
line naming the spec, the kind and the expected form; nothing is built and no model loads.

What each kind's callable is called with and returns (:class:`Kind`):

* retriever — ``build(corpus, index_dir)``: ``corpus`` maps passage id → text, ``index_dir`` is a
  folder it may keep an index in (or None); returns an object with ``search(queries, k) -> Run``
  (paper 000 §4);
* reranker — ``build()``, or ``build(llm=<LLM>)`` when it has a required ``llm`` parameter;
  returns a :class:`~inferqa_utils.rerank.base.Reranker` (paper 000 §5.3);
* reader — ``answer(llm, questions, contexts)``: the reader LLM, the questions and, per question,
  the context built from its run's top passages (Union_norm, paper 000 §5.4); returns one short
  answer per question (``NO ANSWER`` to abstain);
* method — ``run(inputs)``: a :class:`~inferqa_utils.beyond.registry.MethodInputs`; returns a
  :data:`~inferqa_utils.ir.trec.Run` over the corpus (as notebook 07's methods do).

An entry-point name that two installed distributions declare in one group is refused, naming both
(uninstall one, or name the callable as ``module:function``); a plugin whose import fails — a
dependency that is not installed, an exception its own code raises — is refused in one line naming
the spec, the entry point or module, and the missing module or the exception with where it was raised.

A plugin's *identity* — what decides its output besides its inputs, which keys the cached runs —
is the callable's ``identity`` attribute when it has one (a string, or a function of no argument
returning one: library versions, model checksums, parameters) together with the sha256 of its code
(:func:`source_sha256`): every module file (sources and compiled extensions; not ``__pycache__``)
under the top-level package of the module that defines the callable and of the module the spec
names, and, for an entry point, every module file its distribution's ``RECORD`` lists. Editing any
module of a plugin package, or of an installed plugin distribution, computes its runs again. What
lies outside — data files, models, a sibling top-level module of a one-module plugin that is not
installed — is for ``identity`` to name.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import importlib
import importlib.machinery
import importlib.util
import inspect
import os
import re
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from .errors import PluginError

_DOTTED = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
#: a ``module:function`` spec (dotted module path, colon, dotted attribute path)
TARGET = re.compile(rf"^(?P<module>{_DOTTED}):(?P<attr>{_DOTTED})$")


@dataclass(frozen=True)
class Kind:
    """One kind of component: its entry-point ``group``, how its callable is called (``call``,
    ``positional``: the arguments passed by position; ``llm_keyword``: ``llm=`` passed when the
    callable requires it) and what it returns."""

    name: str
    group: str
    call: str
    returns: str
    positional: tuple[str, ...] = ()
    llm_keyword: bool = False

    @property
    def expected(self) -> str:
        """The forms a spec of this kind takes, in words (the end of every error message)."""
        return (f"expected a {self.name} name, an entry point of group {self.group}, or module:function "
                f"naming {self.call} -> {self.returns}")


#: the four kinds of component, by name
KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("retriever", "inferqa.retrievers", "build(corpus, index_dir)", "an object with search(queries, k)",
         ("corpus", "index_dir")),
    Kind("reranker", "inferqa.rerankers", "build() or build(llm=...)", "a Reranker", llm_keyword=True),
    Kind("reader", "inferqa.readers", "answer(llm, questions, contexts)", "one answer per question",
         ("llm", "questions", "contexts")),
    Kind("method", "inferqa.methods", "run(inputs)", "a Run", ("inputs",)),
)}


def kind_of(kind: str) -> Kind:
    """The :class:`Kind` named ``kind`` (``ValueError`` for another name)."""
    try:
        return KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown component kind {kind!r}; kinds: {', '.join(KINDS)}") from None


def is_target(spec: Any) -> bool:
    """Whether ``spec`` has the ``module:function`` form."""
    return isinstance(spec, str) and TARGET.match(spec) is not None


def a_type(obj: Any) -> str:
    """``an int``, ``a dict``: the type of ``obj`` with its article, for messages."""
    name = type(obj).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def _one_line(text: Any) -> str:
    return " ".join(str(text).split())


def unknown_name(kind: str, name: str, known: list[str], forms: str) -> str:
    """``unknown <kind> 'x' (did you mean …?); <kind>s: a, b; or <forms>``: the message for a name
    no registry of ``kind`` holds, listing the ``known`` names."""
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    return f"unknown {kind} {name!r}{hint}; {kind}s: {', '.join(known) or 'none registered'}; or {forms}"


def _fail(kind: Kind, spec: str, problem: str) -> PluginError:
    return PluginError(f"{kind.name} {spec!r}: {_one_line(problem)}; {kind.expected}")


# ----------------------------------------------------------------------------- the plugin


@dataclass(frozen=True)
class Plugin:
    """A resolved component: its kind, the ``spec`` as written (an entry-point name or
    ``module:function``), the ``target`` it names, the callable and, for an entry point, the
    distribution that declares it (``name version``) with the module files its ``RECORD`` lists
    (``record``: name relative to the folder it is installed in, and path)."""

    kind: Kind
    spec: str
    target: str
    obj: Callable[..., Any]
    distribution: str | None = None
    record: tuple[tuple[str, Path], ...] = ()

    @property
    def description(self) -> str:
        """The callable's ``description`` attribute, else the first line of its docstring, else the target."""
        text = getattr(self.obj, "description", None)
        if isinstance(text, str) and text.strip():
            return _one_line(text)
        doc = inspect.getdoc(self.obj) or ""
        return _one_line(doc.strip().split("\n\n")[0]) if doc.strip() else self.target

    @property
    def needs_llm(self) -> bool:
        """Whether the callable has a required ``llm`` parameter (rerankers: it is then given one)."""
        try:
            p = inspect.signature(self.obj).parameters.get("llm")
        except (TypeError, ValueError):
            return False
        return p is not None and p.default is inspect.Parameter.empty

    def checked(self, built: Any, method: str, call: str, signature: str) -> Any:
        """``built`` (what the plugin's callable returned) once it has a callable ``method``, named
        by the spec when its ``name`` can be set (a read-only name: the run is still tagged with the
        spec); otherwise a :class:`~inferqa_utils.core.errors.PluginError` naming the spec, the ``call``
        (``target(…)`` as written in the message), what it returned and the ``signature`` expected."""
        if not callable(getattr(built, method, None)):
            raise PluginError(f"{self.kind.name} {self.spec!r}: {self.target}{call} returned {a_type(built)} "
                              f"without {signature}; {self.kind.expected}")
        with contextlib.suppress(AttributeError):
            built.name = self.spec
        return built

    def identity(self) -> str:
        """What decides the plugin's output: ``plugin <target>``, its distribution, its declared
        ``identity`` and the sha256 of its code — every module file of its package and of its
        distribution's ``RECORD``, read now (:func:`source_sha256`, module docstring)."""
        parts = [f"plugin {self.target}"]
        if self.distribution:
            parts.append(self.distribution)
        declared = _declared_identity(self.obj)
        if declared:
            parts.append(declared)
        parts.append(f"source {source_sha256(self.obj, self.module_name, self.record)[:16]}")
        return "; ".join(parts)

    @property
    def module_name(self) -> str:
        """The module the target names (``package.module`` of ``package.module:function``)."""
        return self.target.split(":", 1)[0]

    def code_files(self) -> dict[str, Path]:
        """The module files the identity hashes (:func:`code_files`), by name."""
        return code_files(self.obj, self.module_name, self.record)

    @property
    def origin(self) -> Path | None:
        """The folder the plugin's top-level module was imported from (an entry of ``sys.path``)."""
        module = sys.modules.get(getattr(self.obj, "__module__", "") or "")
        file = getattr(module, "__file__", None)
        if not file:
            return None
        # a.b.c in <root>/a/b/c.py, or a.b in <root>/a/b/__init__.py: <root> is that many folders up
        depth = len(module.__name__.split("."))  # type: ignore[union-attr]
        ups = depth if Path(file).name == "__init__.py" else depth - 1
        path = Path(file).resolve().parent
        for _ in range(ups):
            path = path.parent
        return path


def _declared_identity(obj: Any) -> str:
    declared = getattr(obj, "identity", None)
    if isinstance(declared, str):
        return declared
    if callable(declared) and not isinstance(declared, type):
        try:
            inspect.signature(declared).bind()
        except (TypeError, ValueError):
            return ""
        value = declared()
        return value if isinstance(value, str) else str(value)
    return ""


#: suffixes of the files a package's code lives in: sources and compiled extension modules
#: (bytecode caches are left out: they change with the interpreter, not with the code)
CODE_SUFFIXES = tuple(importlib.machinery.SOURCE_SUFFIXES + importlib.machinery.EXTENSION_SUFFIXES)


def _is_code(name: str) -> bool:
    return name.endswith(CODE_SUFFIXES)


def _module_file(name: str) -> tuple[str | None, bool]:
    """``(file, is a package)`` of module ``name``: from the imported module, else from its import
    spec (a module dropped from ``sys.modules`` is hashed where it would be imported from now)."""
    module = sys.modules.get(name)
    if module is not None:
        return getattr(module, "__file__", None), getattr(module, "__path__", None) is not None
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None, False
    if spec is None or not spec.has_location:
        return None, False
    return spec.origin, spec.submodule_search_locations is not None


def _package_files(module_name: str) -> dict[str, Path]:
    """Every module file of the top-level package holding module ``module_name`` (imported), by
    name relative to the folder the package is imported from: the first module along the dotted
    name that has a file — a regular package (its folder, walked without ``__pycache__`` and
    hidden folders) or a one-module plugin (that file). A namespace package is skipped down to
    its regular package, so ``ns.plugin.x`` takes ``ns/plugin/``, not all of ``ns``."""
    parts = module_name.split(".")
    for depth in range(1, len(parts) + 1):
        file, is_package = _module_file(".".join(parts[:depth]))
        if not file:
            continue
        path = Path(file).absolute()
        if not is_package:  # a plain module: its own file only
            return {path.relative_to(path.parents[depth - 1]).as_posix(): path}
        root = path.parent
        base = root.parents[depth - 1]
        out: dict[str, Path] = {}
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
            for name in files:
                if _is_code(name):
                    full = Path(folder) / name
                    out[full.relative_to(base).as_posix()] = full
        return out
    return {}


def record_files(dist: metadata.Distribution | None) -> tuple[tuple[str, Path], ...]:
    """The module files a distribution's ``RECORD`` lists (name as recorded, installed path),
    without ``__pycache__`` entries; none for ``None`` or a distribution without a ``RECORD``."""
    if dist is None:
        return ()
    try:
        files = dist.files or []
    except Exception:  # an unreadable RECORD: the package's own files still count
        return ()
    out = []
    for f in files:
        name = f.as_posix() if hasattr(f, "as_posix") else str(f)
        if _is_code(name) and "__pycache__" not in name.split("/"):
            out.append((name, Path(f.locate())))
    return tuple(sorted(out))


def code_files(obj: Any, module_name: str | None = None,
               record: tuple[tuple[str, Path], ...] = ()) -> dict[str, Path]:
    """The module files that decide what ``obj`` does, by name: the ``record`` files of its
    distribution, and every module file of the top-level package of the module defining ``obj`` and
    of ``module_name`` (the module a spec names, when it re-exports ``obj`` from another package) —
    where a name is in both, the file the package was imported from."""
    out: dict[str, Path] = dict(record)
    for name in dict.fromkeys(n for n in (getattr(obj, "__module__", None), module_name) if n):
        out.update(_package_files(name))
    return out


def source_sha256(obj: Any, module_name: str | None = None,
                  record: tuple[tuple[str, Path], ...] = ()) -> str:
    """sha256 over the module files of :func:`code_files` (each file's name and the sha256 of its
    bytes, in name order), read now: an edited, added, removed or renamed module of the plugin's
    package changes it; ``"unknown"`` when there is no file (a built-in module)."""
    files = code_files(obj, module_name, record)
    if not files:
        return "unknown"
    h = hashlib.sha256()
    for name in sorted(files):
        try:
            digest = hashlib.sha256(files[name].read_bytes()).hexdigest()
        except OSError:
            digest = "unreadable"
        h.update(f"{name}\0{digest}\n".encode())
    return h.hexdigest()


# ----------------------------------------------------------------------------- entry points


def declarations(kind: str) -> dict[str, list[metadata.EntryPoint]]:
    """Every entry point of a kind's group in the installed distributions, by name: a name that more
    than one distribution declares has one entry point per distribution (:func:`resolve` refuses it)."""
    out: dict[str, list[metadata.EntryPoint]] = {}
    for ep in metadata.entry_points(group=kind_of(kind).group):
        out.setdefault(ep.name, []).append(ep)
    return out


def names(kind: str) -> list[str]:
    """The entry-point names of a kind, sorted."""
    return sorted(declarations(kind))


def distribution_of(ep: metadata.EntryPoint) -> str:
    """``name version`` of the distribution declaring ``ep`` (``an unnamed distribution`` without one)."""
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "an unnamed distribution"
    return f"{dist.metadata['Name']} {dist.version}"


def _conflict(kind: Kind, spec: str, eps: list[metadata.EntryPoint]) -> PluginError | None:
    """The error for an entry-point name declared by more than one distribution, naming each (with
    what it points at), else None. No distribution wins: which one is found first depends on the
    order of ``sys.path``, so a run could silently use one plugin and report the other."""
    dists = {distribution_of(ep) for ep in eps}
    if len(dists) < 2:
        return None
    declared = sorted({f"{distribution_of(ep)} ({ep.name} = {ep.value})" for ep in eps})
    return _fail(kind, spec, f"entry point {spec!r} of group {kind.group} is declared by {len(dists)} "
                             f"distributions: {'; '.join(declared)} (uninstall all but one, or name the "
                             "callable as module:function)")


# ----------------------------------------------------------------------------- resolving


def _where(exc: BaseException) -> str:
    """`` at <file>, line <n>``: where an import-time exception was raised — the innermost frame
    outside the import machinery and this module (a syntax error: its own file and line); empty
    when there is none (the module itself was not found)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f" at {exc.filename}, line {exc.lineno}"
    machinery = Path(importlib.__file__).resolve().parent
    here = Path(__file__).resolve()
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        file = frame.filename
        if file.startswith("<"):
            continue
        path = Path(file).resolve()
        if path == here or path.parent == machinery:
            continue
        return f" at {file}, line {frame.lineno}"
    return ""


def _import_problem(module_name: str, exc: BaseException) -> str:
    """Why importing ``module_name`` failed, in words: the module itself not found, a module of its
    own package not found, a dependency that is not installed (named), or the exception its code
    raised — the last three with where it happened (:func:`_where`)."""
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        missing = exc.name
        if module_name == missing or module_name.startswith(missing + "."):
            return f"no module named {missing!r} (install it, or put its folder on PYTHONPATH)"
        if missing.split(".")[0] == module_name.split(".")[0]:
            return f"importing {module_name!r} failed{_where(exc)}: its package has no module {missing!r}"
        return (f"importing {module_name!r} failed{_where(exc)}: it needs module {missing!r}, which is not "
                "installed (install the package that provides it)")
    detail = exc.msg if isinstance(exc, SyntaxError) and exc.msg else exc  # where is said already
    return f"importing {module_name!r} raised {type(exc).__name__}{_where(exc)}: {detail}"


def _load_target(kind: Kind, spec: str, module_name: str, attr: str | None, via: str = "") -> Any:
    """The object ``module_name:attr`` names (the module itself without ``attr``), imported;
    otherwise a :class:`PluginError` naming the spec, ``via`` (the entry point it came through) and
    the problem (:func:`_import_problem`, or the attribute missing with the closest names)."""
    prefix = f"{via} failed to load: " if via else ""
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # a missing module or dependency, or the plugin's own import-time error
        raise _fail(kind, spec, prefix + _import_problem(module_name, exc)) from None
    obj: Any = module
    done = module_name
    for part in attr.split(".") if attr else []:
        if not hasattr(obj, part):
            public = [n for n in dir(obj) if not n.startswith("_")]
            close = difflib.get_close_matches(part, public, n=3, cutoff=0.5)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise _fail(kind, spec, f"{prefix}{done!r} has no attribute {part!r}{hint}")
        obj = getattr(obj, part)
        done = f"{done}.{part}" if done != module_name else f"{module_name}:{part}"
    return obj


def _check_signature(kind: Kind, spec: str, obj: Any) -> None:
    """The callable accepts the arguments its kind passes (:class:`Kind`), else :class:`PluginError`."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):  # no signature to read (a C function): accepted as it is
        return
    shown = f"{spec}{sig}"
    if kind.llm_keyword:
        required = [p.name for p in sig.parameters.values() if p.name != "llm" and p.default is p.empty
                    and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if required:
            raise _fail(kind, spec, f"{shown} has required parameter(s) {', '.join(required)}, but it is "
                                    f"called as {kind.call}")
        llm = sig.parameters.get("llm")
        if llm is not None and llm.kind is llm.POSITIONAL_ONLY:
            raise _fail(kind, spec, f"{shown}: llm must be a keyword parameter")
        return
    try:
        sig.bind(*kind.positional)
    except TypeError as exc:
        raise _fail(kind, spec, f"{shown} cannot be called as {kind.call} ({exc})") from None


def resolve(kind: str, spec: str) -> Plugin:
    """The component ``spec`` names — ``module:function``, else an entry point of the kind's group —
    imported and checked (module docstring); :class:`~inferqa_utils.core.errors.PluginError` otherwise."""
    k = kind_of(kind)
    if not isinstance(spec, str) or not spec.strip():
        raise _fail(k, str(spec), "not a name")
    distribution = None
    record: tuple[tuple[str, Path], ...] = ()
    m = TARGET.match(spec)
    if m:
        target = spec
        obj = _load_target(k, spec, m["module"], m["attr"])
    else:
        if ":" in spec:
            raise _fail(k, spec, "not of the form module:function (dotted Python names around one colon)")
        eps = declarations(kind)
        found = eps.get(spec)
        if not found:
            close = difflib.get_close_matches(spec, list(eps), n=3, cutoff=0.6)
            known = f"did you mean {', '.join(close)}?" if close else \
                f"entry points: {', '.join(sorted(eps)) or 'none installed'}"
            raise _fail(k, spec, f"no entry point named {spec!r} in group {k.group} ({known})")
        conflict = _conflict(k, spec, found)
        if conflict is not None:
            raise conflict
        ep = found[0]
        dist = getattr(ep, "dist", None)
        distribution = distribution_of(ep) if dist is not None else None
        via = f"entry point {spec} = {ep.value} ({distribution_of(ep)})"
        try:
            module_name, attr = ep.module, ep.attr
        except AttributeError:  # a value the entry-point syntax does not parse
            raise _fail(k, spec, f"{via} is not of the form module:function") from None
        target = f"{module_name}:{attr}" if attr else module_name
        obj = _load_target(k, spec, module_name, attr, via)
        record = record_files(dist)
    if not callable(obj):
        raise _fail(k, spec, f"{target} is {a_type(obj)}, not a callable")
    _check_signature(k, spec, obj)
    return Plugin(k, spec, target, obj, distribution, record)


def find(kind: str, spec: str) -> Plugin | None:
    """:func:`resolve` for a ``module:function`` spec or an entry-point name of the kind; ``None`` for
    any other name (the registry then tries its other sources and names the valid ones)."""
    if not isinstance(spec, str):
        return None
    if is_target(spec) or spec in declarations(kind):
        return resolve(kind, spec)
    return None
