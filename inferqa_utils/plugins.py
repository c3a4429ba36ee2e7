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
returns a :class:`Plugin`. Every failure is a :class:`~inferqa_utils.errors.PluginError` of one
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
  :data:`~inferqa_utils.trec.Run` over the corpus (as notebook 07's methods do).

A plugin's *identity* — what decides its output besides its inputs, which keys the cached runs —
is the callable's ``identity`` attribute when it has one (a string, or a function of no argument
returning one: library versions, model checksums, parameters) together with the sha256 of its
module's source, so that an edited plugin is computed again.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import importlib
import inspect
import re
import sys
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
    distribution that declares it (``name version``)."""

    kind: Kind
    spec: str
    target: str
    obj: Callable[..., Any]
    distribution: str | None = None

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
        spec); otherwise a :class:`~inferqa_utils.errors.PluginError` naming the spec, the ``call``
        (``target(…)`` as written in the message), what it returned and the ``signature`` expected."""
        if not callable(getattr(built, method, None)):
            raise PluginError(f"{self.kind.name} {self.spec!r}: {self.target}{call} returned {a_type(built)} "
                              f"without {signature}; {self.kind.expected}")
        with contextlib.suppress(AttributeError):
            built.name = self.spec
        return built

    def identity(self) -> str:
        """What decides the plugin's output: ``plugin <target>``, its distribution, its declared
        ``identity`` and the sha256 of its module's source (module docstring)."""
        parts = [f"plugin {self.target}"]
        if self.distribution:
            parts.append(self.distribution)
        declared = _declared_identity(self.obj)
        if declared:
            parts.append(declared)
        parts.append(f"source {source_sha256(self.obj)[:16]}")
        return "; ".join(parts)

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


def source_sha256(obj: Any) -> str:
    """sha256 of the source file of the module defining ``obj`` (``"unknown"`` without one)."""
    module = sys.modules.get(getattr(obj, "__module__", "") or "")
    file = getattr(module, "__file__", None)
    try:
        return hashlib.sha256(Path(file).read_bytes()).hexdigest() if file else "unknown"
    except OSError:
        return "unknown"


# ----------------------------------------------------------------------------- entry points


def entry_points(kind: str) -> dict[str, metadata.EntryPoint]:
    """The entry points of a kind's group in the installed distributions (first of a name wins)."""
    out: dict[str, metadata.EntryPoint] = {}
    for ep in metadata.entry_points(group=kind_of(kind).group):
        out.setdefault(ep.name, ep)
    return out


def names(kind: str) -> list[str]:
    """The entry-point names of a kind, sorted."""
    return sorted(entry_points(kind))


# ----------------------------------------------------------------------------- resolving


def _load_target(kind: Kind, spec: str, module_name: str, attr: str) -> Any:
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (module_name == missing or module_name.startswith(missing + ".")):
            raise _fail(kind, spec, f"no module named {missing!r} (install it, or put its folder on "
                                    "PYTHONPATH)") from None
        raise _fail(kind, spec, f"importing {module_name!r} failed: {exc}") from None
    except Exception as exc:  # a plugin's own import-time error, reported in one line
        raise _fail(kind, spec, f"importing {module_name!r} raised {type(exc).__name__}: {exc}") from None
    obj: Any = module
    done = module_name
    for part in attr.split("."):
        if not hasattr(obj, part):
            public = [n for n in dir(obj) if not n.startswith("_")]
            close = difflib.get_close_matches(part, public, n=3, cutoff=0.5)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise _fail(kind, spec, f"{done!r} has no attribute {part!r}{hint}")
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
    imported and checked (module docstring); :class:`~inferqa_utils.errors.PluginError` otherwise."""
    k = kind_of(kind)
    if not isinstance(spec, str) or not spec.strip():
        raise _fail(k, str(spec), "not a name")
    distribution = None
    m = TARGET.match(spec)
    if m:
        target = spec
        obj = _load_target(k, spec, m["module"], m["attr"])
    else:
        if ":" in spec:
            raise _fail(k, spec, "not of the form module:function (dotted Python names around one colon)")
        eps = entry_points(kind)
        ep = eps.get(spec)
        if ep is None:
            close = difflib.get_close_matches(spec, list(eps), n=3, cutoff=0.6)
            known = f"did you mean {', '.join(close)}?" if close else \
                f"entry points: {', '.join(sorted(eps)) or 'none installed'}"
            raise _fail(k, spec, f"no entry point named {spec!r} in group {k.group} ({known})")
        target = ep.value
        try:
            obj = ep.load()
        except Exception as exc:  # the plugin package's own import error
            raise _fail(k, spec, f"entry point {spec} = {ep.value} failed to load: {type(exc).__name__}: "
                                 f"{exc}") from None
        dist = getattr(ep, "dist", None)
        if dist is not None:
            distribution = f"{dist.metadata['Name']} {dist.version}"
    if not callable(obj):
        raise _fail(k, spec, f"{target} is {a_type(obj)}, not a callable")
    _check_signature(k, spec, obj)
    return Plugin(k, spec, target, obj, distribution)


def find(kind: str, spec: str) -> Plugin | None:
    """:func:`resolve` for a ``module:function`` spec or an entry-point name of the kind; ``None`` for
    any other name (the registry then tries its other sources and names the valid ones)."""
    if not isinstance(spec, str):
        return None
    if is_target(spec) or spec in entry_points(kind):
        return resolve(kind, spec)
    return None


def described(identity: str | Callable[[], str] | None = None,
              description: str | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator giving a component its ``identity`` (a string or a function of no argument) and
    ``description`` attributes (module docstring), e.g.
    ``@described(identity=lambda: f"v1 {bm25s_identity()}")``."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        if identity is not None:
            fn.identity = identity  # type: ignore[attr-defined]
        if description is not None:
            fn.description = description  # type: ignore[attr-defined]
        return fn

    return wrap
