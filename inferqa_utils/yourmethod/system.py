"""Your system in notebook 08: which components replace the built-in ones, and its run.

A *system* is a pipeline of paper 000 §4–5: a first stage (your retriever, your whole method, or
the profile's ``first_stage`` run of notebook 02), optionally your reranker over its top
``rerank_depth``, and a reader (yours, or the built-in few-shot reader of paper 000 A.4) over its
top ``read_k`` passages. :func:`plan` resolves the specs before anything is built (a wrong spec is
a one-line :class:`~inferqa_utils.core.errors.PluginError`); :func:`run_system` computes the run, each
step cached under ``build/runs/<dataset>/supporting/yours/`` (:func:`inferqa_utils.stages.yours_dir`)
with its cost, and :func:`read_system` reads it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import stages
from ..beyond.registry import MethodInputs, method_spec, run_method
from ..core import artifacts
from ..ir.trec import Run, read_run, write_run
from ..reading.readers import DEFAULT_READER, reader_spec
from ..reading.topk import read_runs
from ..rerank.registry import check_reranker, make_reranker, reranker_identity, reranker_spec
from ..rerank.stored import rerank_key
from ..retrieval.registry import retrieve, retriever_spec

if TYPE_CHECKING:
    import pandas as pd

    from ..ir.datamodel import Dataset
    from ..reading.setup import ReadingSetup

#: what notebook 08 shows when no component is plugged in
HOW_TO = """\
**No component is plugged in**, so the table below shows only the baselines your method will be
compared against. Plug one in by name: a registered name, an entry point of your installed package,
or a `module:function` spec (its folder on `PYTHONPATH`), e.g.

```bash
pip install -e examples/inferqa-answer-type-expansion   # the example plugin (a retriever)
python -m inferqa_utils run --only 08 -p your_retriever=answer-type-bm25
PYTHONPATH=path/to/folder python -m inferqa_utils run --only 08 -p your_reranker=my_module:make_reranker
```

`your_retriever`, `your_reranker`, `your_reader` and `your_method` take one spec each; the interfaces
(what each receives and returns) are in `docs/your_method.md`."""


def slug(name: str) -> str:
    """A file-name form of a system's name (letters, digits, ``.``, ``+``, ``-``; others → ``_``)."""
    return re.sub(r"[^\w.+-]+", "_", name).strip("_") or "yours"


@dataclass(frozen=True)
class YourSystem:
    """The components of your system (specs as written; None: the built-in one) and its ``name``
    in the tables (None when nothing is plugged in)."""

    retriever: str | None
    reranker: str | None
    reader: str | None
    method: str | None
    first_stage: str
    name: str | None

    @property
    def empty(self) -> bool:
        """Whether no component is plugged in."""
        return self.name is None

    @property
    def first(self) -> str:
        """What makes the first-stage run: the method, the retriever, or the ``first_stage`` run."""
        return self.method or self.retriever or self.first_stage

    def parts(self) -> list[tuple[str, str]]:
        """``(step, component)`` pairs, the built-in ones named as such."""
        first = (f"method {self.method}" if self.method else f"retriever {self.retriever}" if self.retriever
                 else f"{self.first_stage} (notebook 02's run)")
        return [("first stage", first), ("reranker", self.reranker or "none"),
                ("reader", self.reader or f"{DEFAULT_READER} (built-in)")]

    def describe(self) -> str:
        """One Markdown line: the system's name and its components."""
        if self.empty:
            return "No component plugged in."
        return f"**{self.name}**: " + "; ".join(f"{step}: `{what}`" for step, what in self.parts())


def plan(retriever: str | None = None, reranker: str | None = None, reader: str | None = None,
         method: str | None = None, name: str | None = None, first_stage: str = "bm25",
         baselines: Collection[str] = ()) -> YourSystem:
    """Resolve the specs (registered name, entry point or ``module:function``) without building
    anything — a wrong one raises a one-line :class:`~inferqa_utils.core.errors.PluginError` or
    :class:`~inferqa_utils.core.errors.UnknownNameError` — and name the system: ``name``, else
    ``<first stage>[+<reranker>][ · <reader>]``, with `` (yours)`` added when that is a baseline's
    name. A retriever and a method together are refused (a method makes the first stage)."""
    retriever, reranker, reader, method = (_spec(v) for v in (retriever, reranker, reader, method))
    if retriever and method:
        raise ValueError(f"your_retriever ({retriever}) and your_method ({method}) both make the first "
                         "stage: give one of them")
    if retriever:
        retriever_spec(retriever)
    if method:
        method_spec(method)
    if reranker:
        check_reranker(reranker)
    if reader:
        reader_spec(reader)
    if not any((retriever, reranker, reader, method)):
        return YourSystem(None, None, None, None, first_stage, None)
    if name is None:
        name = stages.reranked_name(method or retriever or first_stage, reranker) if reranker \
            else (method or retriever or first_stage)
        if reader and reader != DEFAULT_READER:
            name = f"{name} · {reader}"
        if name in baselines:
            name = f"{name} (yours)"
    elif name in baselines:
        raise ValueError(f"your_name {name!r} is the name of a baseline: choose another")
    return YourSystem(retriever, reranker, reader, method, first_stage, name)


def _spec(value: Any) -> str | None:
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
        return None
    return str(value).strip()


@dataclass
class YourRun:
    """Your system's run and what each step cost: ``steps`` rows (step, component, seconds in this
    run, seconds when it was computed, whether it was read back from its cache)."""

    name: str
    run: Run
    steps: list[dict[str, Any]] = field(default_factory=list)

    def add(self, step: str, component: str, seconds: float, computed: float | None, cached: bool) -> None:
        self.steps.append({"step": step, "component": component, "seconds": round(seconds, 2),
                           "seconds when computed": None if computed is None else round(computed, 2),
                           "cached": cached})


def run_system(system: YourSystem, ds: Dataset, corpus: Mapping[str, str], queries: Mapping[str, str],
               *, run_depth: int = 100, rerank_depth: int = 30, reranker_model: str | None = None,
               methods_model: str | None = None) -> YourRun | None:
    """Your system's ranked run over ``queries`` (``run_depth`` passages each), None when nothing is
    plugged in: your method (:func:`~inferqa_utils.beyond.registry.run_method`, given the profile's
    first-stage run and ``methods_model``), your retriever
    (:func:`~inferqa_utils.retrieval.registry.retrieve`) or the profile's ``first_stage`` run of
    notebook 02 as it is stored, then your reranker over its top ``rerank_depth`` (given
    ``reranker_model`` when it needs an LLM). Each computed run is cached in
    :func:`~inferqa_utils.stages.yours_dir` with a stamp keyed by the component's identity: a
    re-run with unchanged inputs reads it back."""
    if system.empty:
        return None
    folder = stages.yours_dir(ds.name)
    corpus, queries = dict(corpus), dict(queries)
    first_run = None if system.retriever else stages.load_run(ds.name, system.first_stage, qids=list(queries),
                                                               known_passages=corpus)
    out = YourRun(str(system.name), {})
    t0 = time.perf_counter()
    if system.method:
        spec = method_spec(system.method)
        inputs = MethodInputs(ds, corpus, queries, run_depth, first_run, methods_model)
        done = run_method(spec, inputs, folder, label=slug(system.method))
        first = done.run
        out.add("method", system.method, time.perf_counter() - t0, done.seconds, done.cached)
    elif system.retriever:
        path = stages.run_dir_file(folder, slug(system.retriever))
        before = _file_id(path)
        index = stages.index_dir(ds.name, stages.Corpus.SUPPORTING, slug(system.retriever))  # notebook 02's
        first = retrieve(system.retriever, corpus, queries, k=run_depth, run_path=path, index_dir=index)
        stamp = artifacts.read_stamp(path) or {}
        out.add("retriever", system.retriever, time.perf_counter() - t0, artifacts.Cost.of(stamp).seconds,
                before is not None and _file_id(path) == before)
    else:
        first = dict(first_run or {})
        out.add("first stage", f"{system.first_stage} (notebook 02)", time.perf_counter() - t0, None, True)
    run = first
    if system.reranker:
        run = _rerank(system.reranker, first, corpus, queries, rerank_depth, reranker_model, folder,
                      slug(out.name), out)
    out.run = run
    return out


def _file_id(path: Path) -> tuple[int, int] | None:
    """``(inode, mtime in ns)`` of a stored run, ``None`` when absent: a run written again (atomically,
    a new file) has another, even within the second its stamp's time is written to."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def _rerank(name: str, first: Run, corpus: dict[str, str], queries: dict[str, str], depth: int,
            llm_name: str | None, folder: Any, label: str, out: YourRun) -> Run:
    """Your reranker over ``first`` (cached: key :func:`~inferqa_utils.rerank.stored.rerank_key`
    with the reranker's identity, :func:`~inferqa_utils.rerank.registry.reranker_identity`)."""
    t0 = time.perf_counter()
    spec = reranker_spec(name)
    llm = None
    if spec is not None and spec.needs_llm:
        if not llm_name:
            raise ValueError(f"reranker {name!r} needs an LLM: set reranker_model")
        from ..llm import load_llm

        llm = load_llm(llm_name)
    kw = dict(spec.quiet) if spec is not None else {}
    path = stages.run_dir_file(folder, f"{label}.reranked")
    key = rerank_key(name, reranker_identity(spec, llm), queries, first, corpus, depth, **kw)
    rr: list[Any] = []

    def setup() -> None:
        rr.append(make_reranker(name, llm=llm, **kw))

    def load(p: Any) -> Run | None:
        found = read_run(p, known_docids=set(corpus))
        return {q: found.get(q, []) for q in queries}

    done = artifacts.cached(path, key, lambda: rr[0].rerank(queries, first, corpus, depth=depth),
                            n_queries=len(queries), llms=[llm] if llm is not None else [], setup=setup,
                            load=load, save=lambda r, tmp: write_run(r, tmp, tag=slug(name)))
    out.add("reranker", name, time.perf_counter() - t0, done.cost.seconds, done.reused)
    return done.value


def read_system(system: YourSystem, your_run: YourRun | None, setup: ReadingSetup | None,
                qids: Sequence[str]) -> pd.DataFrame:
    """Per-question answers of your system: its run's top-``setup.k`` passages (their hints in
    ``setup.corpus``) as one Union_norm context (paper 000 §5.4), read by your reader or the built-in
    one with ``setup.reader`` (strict EM; no judge; answers in ``setup.known`` reused), one row per
    question (:func:`~inferqa_utils.reading.topk.read_runs`); no row when nothing is plugged in
    (``your_run`` or ``setup`` is ``None``)."""
    import pandas as pd

    if your_run is None or setup is None:
        return pd.DataFrame(columns=["system", "qid", "answer", "em", "no_answer", "k", "union", "reader"])
    t0 = time.perf_counter()
    strategy = reader_spec(system.reader) if system.reader else None
    calls = setup.reader.stats.model_calls
    df = read_runs(replace(setup, judge=None, progress=False), {your_run.name: your_run.run}, list(qids),
                   unions=("norm",), strategy=strategy)
    your_run.add("reader", system.reader or DEFAULT_READER, time.perf_counter() - t0, None,
                 setup.reader.stats.model_calls == calls)
    return df


def steps_table(your_run: YourRun | None) -> pd.DataFrame:
    """What each step of your system cost (:class:`YourRun`), one row per step."""
    import pandas as pd

    return pd.DataFrame(your_run.steps if your_run is not None else [],
                        columns=["step", "component", "seconds", "seconds when computed", "cached"])


def run_sentence(your_run: YourRun | None, n_questions: int) -> str:
    """The sentence of your system's run: each step, whether it was computed now or read back from
    its cache, and its time."""
    if your_run is None:
        return "Nothing is plugged in, so nothing was computed: the table shows the baselines alone."
    parts = []
    for s in your_run.steps:
        if s["step"] == "first stage":
            parts.append(f"the first stage is {s['component']}, read as stored")
        elif s["cached"]:
            was = s["seconds when computed"]
            parts.append(f"the {s['step']} {s['component']} was read back from its cache"
                         + (f" (computed in {was:.1f} s when it was first run)" if was is not None else ""))
        else:
            parts.append(f"the {s['step']} {s['component']} ran in {s['seconds']:.1f} s "
                         f"({s['seconds'] / max(1, n_questions):.3f} s per question)")
    return f"**{your_run.name}** on {n_questions} questions: " + "; ".join(parts) + "."
