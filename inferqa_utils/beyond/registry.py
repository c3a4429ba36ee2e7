"""Whole methods by name: a method makes its own run over the corpus from the questions, as notebook
07's methods do (papers 001–003), replacing the retriever and reranker of a pipeline.

A method is a function ``run(inputs) -> Run``: ``inputs`` is a :class:`MethodInputs` (the built
dataset, the corpus, the split's questions, the depth ``k``, the profile's first-stage run, any
stored run of notebooks 02–05 by name, the hints of a passage, and the methods' LLM, loaded on
first use); it returns a :data:`~inferqa_utils.ir.trec.Run` — per question, up to ``k`` ``(passage id,
score)`` pairs, best first — over the corpus (:func:`checked_run`).

:func:`register_method` adds a name; a researcher's own method is named by an entry point of the
group ``inferqa.methods`` or a ``module:function`` spec (:mod:`inferqa_utils.core.plugins`).
:func:`run_method` computes a method's run once and caches it with its cost
(:func:`~inferqa_utils.beyond.common.cached_method`, keyed by the method's identity).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import stages
from ..core import plugins
from ..core.errors import PluginError, UnknownNameError
from ..ir.trec import Run
from .common import MethodResult, cached_method, method_key

if TYPE_CHECKING:
    from ..ir.datamodel import Dataset
    from ..llm.base import LLM


@dataclass
class MethodInputs:
    """What a method receives (module docstring). ``first_stage`` is the profile's ``first_stage``
    run (notebook 02) restricted to ``queries``; ``llm_name`` names the LLM :attr:`llm` loads."""

    dataset: Dataset
    corpus: dict[str, str]
    queries: dict[str, str]
    k: int = 100
    first_stage: Run | None = None
    llm_name: str | None = None
    _llm: LLM | None = field(default=None, repr=False)

    @property
    def llm(self) -> LLM:
        """The methods' LLM (the profile's ``beyond_model``), loaded on first use."""
        if self._llm is None:
            if not self.llm_name:
                raise ValueError("no LLM was named for the methods (beyond_model)")
            from ..llm import load_llm

            self._llm = load_llm(self.llm_name)
        return self._llm

    def load_run(self, name: str) -> Run:
        """A stored run of notebooks 02–05 (``bm25``, ``bm25+pointwise``, …) restricted to the
        questions (:func:`inferqa_utils.stages.load_run`: a missing run names its notebook)."""
        return stages.load_run(self.dataset.name, name, qids=list(self.queries), known_passages=self.corpus)

    def hints(self, pid: str) -> list[str]:
        """The hint sentences of a passage (the units a reading context is built from)."""
        return self.dataset.passage_sentences(pid, self.corpus)


#: a method: ``run(inputs) -> Run``
MethodRun = Callable[[MethodInputs], Run]


@dataclass(frozen=True)
class MethodSpec:
    """A named method: its ``run`` function, ``identity()`` (what decides its run besides its
    inputs, for the cache key) and a description."""

    name: str
    run: MethodRun
    identity: Callable[[], str]
    description: str = ""
    #: the plugged-in component behind the name (:mod:`inferqa_utils.core.plugins`), None for a registered one
    plugin: plugins.Plugin | None = None


#: registered methods by name (notebook 07's own methods run in notebook 07 with their parameters)
METHODS: dict[str, MethodSpec] = {}


def register_method(name: str, run: MethodRun, identity: Callable[[], str], description: str = "", *,
                    replace: bool = False) -> MethodSpec:
    """Register method ``name``; a name already registered → ``ValueError`` unless ``replace``."""
    if name in METHODS and not replace:
        raise ValueError(f"method {name!r} is already registered")
    METHODS[name] = MethodSpec(name, run, identity, description)
    return METHODS[name]


def plugin_method(plugin: plugins.Plugin) -> MethodSpec:
    """The spec of a plugged-in method (:mod:`inferqa_utils.core.plugins`), named by its spec."""
    return MethodSpec(plugin.spec, plugin.obj, plugin.identity, plugin.description, plugin)


def method_names() -> list[str]:
    """The registered names, then the entry points of ``inferqa.methods``."""
    return [*METHODS, *(n for n in plugins.names("method") if n not in METHODS)]


def method_spec(name: str) -> MethodSpec:
    """The method of a registered name, else of an entry point or ``module:function`` spec; another
    name → :class:`~inferqa_utils.core.errors.UnknownNameError` listing the valid ones."""
    if name in METHODS:
        return METHODS[name]
    plugin = plugins.find("method", name)
    if plugin is not None:
        return plugin_method(plugin)
    raise UnknownNameError(plugins.unknown_name("method", name, method_names(),
                                                "a module:function spec naming run(inputs)"))


def checked_run(what: str, run: Any, queries: Mapping[str, str], corpus: Mapping[str, str], k: int) -> Run:
    """``run`` as a :data:`~inferqa_utils.ir.trec.Run` of every question of ``queries`` (in their
    order; a question it lacks gets an empty list), each list cut at ``k`` and its scores made floats;
    a run that is not a mapping, names a question or passage that does not exist, or lists a
    passage twice → :class:`~inferqa_utils.core.errors.PluginError` naming ``what`` and the first fault."""
    if not isinstance(run, Mapping):
        raise PluginError(f"{what} returned {plugins.a_type(run)}; expected a run: question id → "
                          "[(passage id, score), …], best first")
    extra = [q for q in run if q not in queries]
    if extra:
        raise PluginError(f"{what} returned question {extra[0]!r}, not one of the {len(queries)} asked")
    out: Run = {}
    for qid in queries:
        items = []
        seen: set[str] = set()
        for entry in list(run.get(qid, ()))[:k]:
            try:
                pid, score = entry
                score = float(score)
            except (TypeError, ValueError):
                raise PluginError(f"{what}: question {qid!r} holds {entry!r}; expected (passage id, score) "
                                  "pairs") from None
            if pid not in corpus:
                raise PluginError(f"{what}: question {qid!r} ranks passage {pid!r}, not in the corpus")
            if pid in seen:
                raise PluginError(f"{what}: question {qid!r} ranks passage {pid!r} twice")
            seen.add(pid)
            items.append((str(pid), score))
        out[qid] = items
    return out


def run_method(spec: MethodSpec, inputs: MethodInputs, out_dir: str | Path | None, label: str | None = None,
               version: int = 1) -> MethodResult:
    """The method's run over ``inputs`` (checked, :func:`checked_run`), computed once and cached in
    ``out_dir`` as ``<label>.trec`` with its cost (:func:`~inferqa_utils.beyond.common.cached_method`;
    key: corpus, questions, first stage, ``k``, the method's identity and the LLM's name)."""
    label = label or spec.name
    key = method_key(label, inputs.corpus, inputs.queries, version, first=inputs.first_stage,
                     identity=spec.identity(), k=int(inputs.k), llm=inputs.llm_name)

    def compute() -> tuple[Run, dict[str, Any]]:
        run = checked_run(f"method {spec.name!r}", spec.run(inputs), inputs.queries, inputs.corpus, inputs.k)
        return run, {"method": spec.name, "description": spec.description}

    llms = [inputs._llm] if inputs._llm is not None else []
    return cached_method(label, out_dir, key, compute, len(inputs.queries), llms=llms)
