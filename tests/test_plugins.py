"""Components plugged in by name (inferqa_utils.core.plugins) and notebook 08's comparison table.

A plugin module written to a temporary folder stands for a researcher's own code: its callables
are resolved as ``module:function`` specs by every registry (retriever, reranker, reader, method);
wrong specs are refused in one line by the registries and by ``run`` before any notebook starts,
importing nothing but the plugin and measuring nothing. Plugin packages and installed
distributions (a ``*.dist-info`` folder with ``METADATA``, ``entry_points.txt`` and ``RECORD``, as
pip leaves it) are written to temporary folders on ``sys.path``: a missing dependency, an
exception at import, an entry point that fails to load and one name declared by two
distributions are each refused in one line; editing any module of a plugin package changes its
identity and computes its run again. The example plugin (``examples/inferqa-answer-type-expansion``)
is installed with pip into a temporary folder and found through its entry point. The last test
runs notebook 08 on the smoke build with the example plugin (slow: real tiny models via papermill).
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import json
import shutil
import site
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest
from isolated_root import CHECKOUT
from tiny_corpus import CORPUS

from inferqa_utils import stages
from inferqa_utils.__main__ import main
from inferqa_utils.beyond import registry as methods
from inferqa_utils.construction.passages import build_passages
from inferqa_utils.construction.store import load_built
from inferqa_utils.core import artifacts, config, plugins
from inferqa_utils.core.config import PATHS
from inferqa_utils.core.errors import MissingInputError, PluginError, UnknownNameError
from inferqa_utils.ir.datamodel import Dataset, Hint, Question
from inferqa_utils.ir.trec import read_run, write_run
from inferqa_utils.llm.base import LLMStats
from inferqa_utils.reading import readers, topk
from inferqa_utils.reading.setup import ReadingSetup
from inferqa_utils.rerank import registry as rerankers
from inferqa_utils.retrieval import registry as retrievers
from inferqa_utils.run import runner
from inferqa_utils.run.notebook_params import check_components
from inferqa_utils.yourmethod import compare as cmp
from inferqa_utils.yourmethod import system as ym

EXAMPLE = CHECKOUT / "examples" / "inferqa-answer-type-expansion"
QUERIES = {"q1": "Which tower stands in Paris?", "q2": "Which planet is a gas giant?"}

PLUGIN = '''
"""A researcher's plugin module, as the tests write it."""
from inferqa_utils.rerank.base import Reranker
from inferqa_utils.ir.runs import ids_to_run_list

VALUE = 3


class WordOverlap:
    """Passages sharing a word with the question, in corpus order."""

    def __init__(self, corpus):
        self.corpus = dict(corpus)
        self.identity = "word-overlap v1"

    def search(self, queries, k=100):
        out = {}
        for qid, text in queries.items():
            words = {w.strip("?.,").lower() for w in text.split() if len(w) > 3}
            hits = [p for p, t in self.corpus.items() if words & {w.strip("?.,'").lower() for w in t.split()}]
            out[qid] = ids_to_run_list(hits[:k])
        return out


def make_retriever(corpus, index_dir=None):
    """Word overlap with the question."""
    return WordOverlap(corpus)


make_retriever.identity = "word-overlap v1"


def one_argument(corpus):
    return WordOverlap(corpus)


def no_search(corpus, index_dir=None):
    return object()


class Reverse(Reranker):
    name = "reverse"

    def _rerank_heads(self, queries, heads, corpus):
        return {q: [(p, float(i)) for i, p in enumerate(h)][::-1] for q, h in heads.items()}


def make_reranker():
    """Reverses the head."""
    return Reverse()


def make_llm_reranker(llm, window=2):
    rr = Reverse()
    rr.llm, rr.window = llm, window
    return rr


def needs_options(depth_hint):
    return Reverse()


def first_word(llm, questions, contexts):
    """The first word of the context, upper-cased."""
    return [c.split()[0].strip(".").upper() if c else "NO ANSWER" for c in contexts]


def too_few(llm, questions, contexts):
    return []


def first_passages(inputs):
    """Every question gets the corpus's first two passages."""
    first = list(inputs.corpus)[:2]
    return {q: [(p, 2.0 - i) for i, p in enumerate(first)] for q in inputs.queries}


def unknown_passage(inputs):
    return {q: [("nowhere", 1.0)] for q in inputs.queries}
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """The name of a plugin module in a folder on ``sys.path`` (removed from ``sys.modules`` after)."""
    name = f"my_plugin_{abs(hash(tmp_path)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield name
    sys.modules.pop(name, None)


def _one_line(text: str) -> str:
    assert "\n" not in text and "Traceback" not in text, text
    return text


@pytest.fixture
def tag(tmp_path) -> str:
    """A suffix making this test's module names its own (modules stay cached by name)."""
    return f"{abs(hash(tmp_path)) % 10**8}"


@pytest.fixture
def site_dir(tmp_path, monkeypatch):
    """A folder on ``sys.path`` standing for site-packages: the test writes plugin packages and
    distributions' ``*.dist-info`` folders into it (:func:`_write`, :func:`_distribution`). No
    bytecode is written (an edited module is read again, whatever its size and time stamp); the
    modules imported from it are dropped from ``sys.modules`` after."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.syspath_prepend(str(root))
    yield root
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(root)):
            sys.modules.pop(name, None)
    importlib.invalidate_caches()


def _write(root: Path, files: dict[str, str]) -> None:
    """Write ``files`` (path under ``root`` → text, dedented) and make the import system see them."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    importlib.invalidate_caches()


def _distribution(
    root: Path,
    name: str,
    version: str,
    entry_points: dict[str, dict[str, str]],
    modules: tuple[str, ...] = (),
) -> Path:
    """An installed distribution in ``root`` as pip leaves one: ``<name>-<version>.dist-info`` with
    ``METADATA``, ``entry_points.txt`` (group → entry-point name → value) and a ``RECORD`` listing
    ``modules`` (paths under ``root``) and its own files."""
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    groups = "".join(
        f"[{g}]\n" + "".join(f"{n} = {v}\n" for n, v in eps.items()) + "\n" for g, eps in entry_points.items()
    )
    record = [*modules, *(f"{info.name}/{f}" for f in ("METADATA", "entry_points.txt", "RECORD"))]
    _write(
        root,
        {
            f"{info.name}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
            f"{info.name}/entry_points.txt": groups,
            f"{info.name}/RECORD": "".join(f"{r},,\n" for r in record),
        },
    )
    return info


#: a plugin retriever whose order of the corpus comes from a helper module of its package
ORDERED_RETRIEVER = '''
    """Ranks the whole corpus in the order its package's helper gives."""
    from inferqa_utils.ir.runs import ids_to_run_list

    from ..helpers import order


    class InOrder:
        def __init__(self, corpus):
            self.ids = list(corpus)

        def search(self, queries, k=100):
            return {qid: ids_to_run_list(order(self.ids)[:k]) for qid in queries}


    def make_retriever(corpus, index_dir=None):
        return InOrder(corpus)
'''


# ----------------------------------------------------------------------------- resolving specs


def test_a_good_spec_resolves_to_the_callable_with_its_identity(plugin, tmp_path):
    p = plugins.resolve("retriever", f"{plugin}:make_retriever")
    assert p.kind.name == "retriever" and p.target == f"{plugin}:make_retriever" and p.distribution is None
    assert p.description == "Word overlap with the question."
    ident = p.identity()
    assert ident.startswith(f"plugin {plugin}:make_retriever; word-overlap v1; source ")
    assert p.origin == tmp_path.resolve()
    (tmp_path / f"{plugin}.py").write_text(PLUGIN + "\n# edited\n", encoding="utf-8")
    assert p.identity() != ident  # an edited plugin's runs are computed again
    assert plugins.find("retriever", "bm25") is None  # not a spec, not an entry point
    assert plugins.is_target("a.b:c.d") and not plugins.is_target("dense:e5-small")


@pytest.mark.parametrize(
    ("kind", "attr", "words"),
    [
        (
            "retriever",
            None,
            "no module named 'no_such_module_xyz' (install it, or put its folder on PYTHONPATH)",
        ),
        ("retriever", "make_retreiver", "has no attribute 'make_retreiver' (did you mean make_retriever"),
        ("retriever", "VALUE", ":VALUE is an int, not a callable"),
        (
            "retriever",
            "one_argument",
            "one_argument(corpus) cannot be called as build(corpus, index_dir) "
            "(too many positional arguments)",
        ),
        ("reader", "make_retriever", "cannot be called as answer(llm, questions, contexts)"),
        ("method", "first_word", "cannot be called as run(inputs)"),
        (
            "reranker",
            "needs_options",
            "needs_options(depth_hint) has required parameter(s) depth_hint, but it "
            "is called as build() or build(llm=...)",
        ),
        ("retriever", "", "no entry point named 'answer-type-bm2' in group inferqa.retrievers"),
        ("reranker", ":", "not of the form module:function"),
    ],
)
def test_a_wrong_spec_is_one_line_naming_spec_kind_and_form_and_comes_at_once(
    plugin, kind, attr, words, tmp_path, tag
):
    """At once: resolving imports the plugin's module and nothing else — not another installed
    plugin (a bystander distribution declares an entry point in every group), not a model library."""
    bystander = f"iq_bystander_{tag}"
    _write(tmp_path, {f"{bystander}.py": "def make(*args, **kwargs):\n    return None\n"})
    _distribution(
        tmp_path,
        "bystander-plugin",
        "1.0",
        {k.group: {"bystander": f"{bystander}:make"} for k in plugins.KINDS.values()},
        (f"{bystander}.py",),
    )
    spec = (
        "no_such_module_xyz:make"
        if attr is None
        else "answer-type-bm2"
        if attr == ""
        else f"{plugin}:a:b"
        if attr == ":"
        else f"{plugin}:{attr}"
    )
    assert "bystander" in plugins.names(kind)
    before = set(sys.modules)
    with pytest.raises(PluginError) as exc:
        plugins.resolve(kind, spec)
    imported = set(sys.modules) - before
    text = _one_line(str(exc.value))
    assert text.startswith(f"{kind} {spec!r}: ") and words in text, text
    assert (
        f"; expected a {kind} name, an entry point of group inferqa.{kind}s, or module:function naming "
        in text
    )
    assert imported <= {plugin}, f"refusing {spec!r} imported {sorted(imported - {plugin})}"
    sys.modules.pop(bystander, None)


@pytest.fixture
def no_notebook_runs(monkeypatch):
    """papermill's ``execute_notebook`` failing the test: nothing may run. Returns the calls made to
    what a run does before its first notebook and after its checks — measuring this host's LLM
    rates (the projection) and recording the LLM backends — which a refused run must not reach."""
    import papermill

    from inferqa_utils.record import projection

    monkeypatch.setenv(config.PROFILE_ENV, "")
    calls: list[str] = []

    def execute_notebook(*args, **kwargs):
        raise AssertionError(f"a notebook ran: {args[:1]}")

    def measured(*args, **kwargs):
        calls.append("projection.start")
        return None

    def backends(*args, **kwargs):
        calls.append("llm_backends")
        return {}

    monkeypatch.setattr(papermill, "execute_notebook", execute_notebook)
    monkeypatch.setattr(projection, "start", measured)
    monkeypatch.setattr(runner, "llm_backends", backends)
    return calls


@pytest.mark.parametrize(
    ("only", "param", "words"),
    [
        (
            "08",
            "your_retriever=no_such_module_xyz:make",
            "error: your_retriever=no_such_module_xyz:make (-p): retriever 'no_such_module_xyz:make': no "
            "module named 'no_such_module_xyz' (install it, or put its folder on PYTHONPATH); expected a "
            "retriever name, an entry point of group inferqa.retrievers, or module:function naming "
            "build(corpus, index_dir)",
        ),
        (
            "08",
            "your_reader=few-shots",
            "error: your_reader=few-shots (-p): unknown reader 'few-shots' (did you mean few-shot",
        ),
        ("08", "your_reranker=pointwse", "unknown reranker 'pointwse' (did you mean pointwise"),
        ("08", "your_method=answer-type", "unknown method 'answer-type'"),
        (
            "02",
            "retrievers=[bm25,no_such_module_xyz:make]",
            "error: retrievers=no_such_module_xyz:make (-p): retriever 'no_such_module_xyz:make': no module",
        ),
    ],
)
def test_run_refuses_a_wrong_spec_in_one_line_before_any_notebook(
    only, param, words, capsys, no_notebook_runs
):
    executions = sorted(PATHS.executions.glob("*")) if PATHS.executions.is_dir() else []
    assert main(["run", "--profile", "smoke", "--only", only, "-p", param]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err, err
    assert (sorted(PATHS.executions.glob("*")) if PATHS.executions.is_dir() else []) == executions
    assert no_notebook_runs == [], f"refused only after {no_notebook_runs}"


def test_notebook_08_before_a_finished_run_is_refused_in_one_line_naming_what_is_missing(
    capsys, no_notebook_runs
):
    """``run --only 08`` where no run stored the built dataset and the baselines' runs: one line
    naming what is missing, the notebook that writes each and the commands that make them, before
    the projection or any notebook. Break: without the check the run starts (the host's rates
    measured, a kernel started) and notebook 08 fails inside it on the first missing file only."""
    name = "never-built-08"
    executions = sorted(PATHS.executions.glob("*")) if PATHS.executions.is_dir() else []
    args = ["run", "--profile", "smoke", "--only", "08", "-p", f"dataset_name={name}",
            "-p", "your_retriever=bm25s"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err == (
        "error: notebook 08 compares your method with what a finished run stored, and this is missing: "
        f"the built dataset '{name}' (notebook 01_dataset_construction); "
        "e5-small, bm25, bm25s, minilm, hybrid, rrf (notebook 02_retrieval); "
        "e5-small+pointwise, e5-small+upr, e5-small+listwise (notebook 03_reranking); "
        "run `make run PROFILE=smoke` first, or python -m inferqa_utils run --profile smoke --only 01 02 03"
    ), err
    assert (sorted(PATHS.executions.glob("*")) if PATHS.executions.is_dir() else []) == executions
    assert no_notebook_runs == [], f"refused only after {no_notebook_runs}"


def test_notebook_08_s_stored_inputs_are_those_a_finished_run_writes_and_this_run_does_not():
    name = "partly-run-08"
    folder = stages.run_dir(name, stages.Corpus.SUPPORTING)
    built = PATHS.datasets / name
    try:
        built.mkdir(parents=True, exist_ok=True)
        (built / "manifest.json").write_text("{}", encoding="utf-8")
        folder.mkdir(parents=True, exist_ok=True)
        for run in ("bm25", "e5-small"):
            (folder / f"{run}.trec").write_text("q1 Q0 p 1 1.0 x\n", encoding="utf-8")
        args = (name, ["bm25", "e5-small"], "bm25", ["pointwise"])
        assert cmp.missing_stored(*args) == {"03_reranking": ["bm25+pointwise"]}
        assert cmp.missing_stored(*args, running={"03_reranking", "08_your_method"}) == {}
        with pytest.raises(MissingInputError) as exc:
            cmp.require_stored(*args, profile_name="default")
        assert str(exc.value).endswith(
            "bm25+pointwise (notebook 03_reranking); "
            "run `make run` first, or python -m inferqa_utils run --only 03"
        )
        (folder / "bm25+pointwise.trec").write_text("q1 Q0 p 1 1.0 x\n", encoding="utf-8")
        cmp.require_stored(*args)  # everything there: nothing raised
    finally:
        shutil.rmtree(PATHS.runs / name, ignore_errors=True)
        shutil.rmtree(built, ignore_errors=True)


#: libraries that load models or start a JVM: a refused spec must not have imported any
MODEL_LIBRARIES = (
    "torch",
    "transformers",
    "sentence_transformers",
    "llama_cpp",
    "pyserini",
    "jnius",
    "faiss",
    "bm25s",
    "vllm",
)


def test_a_wrong_spec_from_the_command_line_is_refused_before_any_model_library_loads():
    """The whole command, a fresh interpreter included: ``python -m inferqa_utils run -p …``, its
    imports listed by ``-X importtime`` (on stderr, before the error line)."""
    env = {"PYTHONPATH": str(CHECKOUT), "INFERQA_ROOT": str(PATHS.root), "PATH": "/usr/bin:/bin"}
    t0 = time.perf_counter()
    r = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "inferqa_utils",
            "run",
            "--only",
            "08",
            "-p",
            "your_retriever=no_such_module_xyz:make",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=PATHS.root,
        timeout=120,
    )
    seconds = time.perf_counter() - t0
    lines = r.stderr.splitlines()
    imported = {line.rsplit("|", 1)[-1].strip() for line in lines if line.startswith("import time:")}
    error = [line for line in lines if not line.startswith("import time:")]
    assert r.returncode == 2 and len(error) == 1, error
    assert error[0].startswith("error: your_retriever=no_such_module_xyz:make (-p)"), error
    assert "inferqa_utils.core.plugins" in imported  # the listing was read
    loaded = sorted({m for m in imported if m.split(".")[0] in MODEL_LIBRARIES})
    assert not loaded, f"refused only after importing {loaded}"
    print(
        f"wrong spec refused by the command ({len(imported)} modules imported, {seconds:.2f} s): {error[0]}"
    )


def test_check_components_says_where_a_spec_came_from_and_where_its_module_is(plugin, tmp_path):
    good = {
        "your_retriever": f"{plugin}:make_retriever",
        "retrievers": ["bm25", f"{plugin}:make_retriever"],
        "rerankers": ["pointwise", "dense:e5-small", f"{plugin}:make_reranker"],
        "your_reader": None,
    }
    assert check_components(good, profile_name="smoke") == [tmp_path.resolve()]
    with pytest.raises(
        PluginError, match=r"^your_reader=nope:x \(profile smoke\): reader 'nope:x': no module"
    ):
        check_components({"your_reader": "nope:x"}, profile_name="smoke")
    # parameters the run's notebooks do not declare are not checked; built-in names in lists are not either
    assert (
        check_components({"your_reader": "nope:x", "retrievers": ["FT-anything"]}, declared=["retrievers"])
        == []
    )
    assert runner._kernel_path([tmp_path]).startswith(str(tmp_path))
    assert runner._kernel_path([Path(p) for p in site.getsitepackages()]) is None  # looked in anyway


# ----------------------------------------------------------------------------- plugins that do not load


RETRIEVER_EXPECTED = plugins.KINDS["retriever"].expected


def test_a_plugin_whose_dependency_is_missing_is_refused_naming_the_module_and_the_dependency(site_dir, tag):
    """The common case: the plugin package imports a library this environment lacks. The message
    names the spec, the plugin's module, the file and line of the import and the missing module —
    not "no module named" the plugin, which is there."""
    pkg = f"iq_needs_dep_{tag}"
    _write(
        site_dir,
        {
            f"{pkg}/__init__.py": "from .retriever import make_retriever\n",
            f"{pkg}/retriever.py": """
            import no_such_dependency_xyz


            def make_retriever(corpus, index_dir=None):
                return no_such_dependency_xyz.Index(corpus)
        """,
        },
    )
    spec = f"{pkg}:make_retriever"
    with pytest.raises(PluginError) as exc:
        plugins.resolve("retriever", spec)
    assert _one_line(str(exc.value)) == (
        f"retriever {spec!r}: importing {pkg!r} failed at {site_dir / pkg / 'retriever.py'}, line 1: "
        "it needs module 'no_such_dependency_xyz', which is not installed (install the package that "
        "provides it); "
        f"{RETRIEVER_EXPECTED}"
    )
    # the run's check before any notebook says the same, with where the spec came from
    with pytest.raises(PluginError) as exc:
        check_components({"your_retriever": spec}, profile_name="smoke")
    assert str(exc.value).startswith(
        f"your_retriever={spec} (profile smoke): retriever {spec!r}: importing {pkg!r} failed at "
    ) and "needs module 'no_such_dependency_xyz'" in str(exc.value)
    # a module of the plugin's own package missing is said so (not "not installed")
    _write(site_dir, {f"{pkg}/__init__.py": "from .gone import make_retriever\n"})
    sys.modules.pop(pkg, None)
    with pytest.raises(
        PluginError,
        match=rf"importing '{pkg}' failed at .*__init__\.py, line 1: its package "
        rf"has no module '{pkg}\.gone'; expected a retriever name",
    ):
        plugins.resolve("retriever", spec)


def test_a_plugin_raising_at_import_is_refused_naming_the_exception_and_where(site_dir, tag):
    pkg, bad = f"iq_raises_{tag}", f"iq_syntax_{tag}"
    _write(
        site_dir,
        {
            f"{pkg}/__init__.py": """
            from .device import DEVICE


            def make_retriever(corpus, index_dir=None):
                return None
        """,
            f"{pkg}/device.py": """
            \"\"\"Picks the device.\"\"\"

            DEVICE = {"cuda": 0}["gpu"]
        """,
            f"{bad}.py": "def make_retriever(corpus, index_dir=None:\n    return None\n",
        },
    )
    with pytest.raises(PluginError) as exc:
        plugins.resolve("retriever", f"{pkg}:make_retriever")
    assert _one_line(str(exc.value)) == (
        f"retriever '{pkg}:make_retriever': importing {pkg!r} raised KeyError at "
        f"{site_dir / pkg / 'device.py'}, line 3: 'gpu'; {RETRIEVER_EXPECTED}"
    )
    with pytest.raises(PluginError) as exc:
        plugins.resolve("method", f"{bad}:make_retriever")
    assert _one_line(str(exc.value)).startswith(
        f"method '{bad}:make_retriever': importing {bad!r} raised SyntaxError at "
        f"{site_dir / f'{bad}.py'}, line 1: "
    )


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (
            "{pkg}.needs_dep:make_retriever",
            "importing '{pkg}.needs_dep' failed at {site}/{pkg}/needs_dep.py, line 1: it needs module "
            "'no_such_dependency_xyz', which is not installed (install the package that provides it)",
        ),
        (
            "{pkg}.raises:make_retriever",
            "importing '{pkg}.raises' raised RuntimeError at {site}/{pkg}/raises.py, line 1: no GPU here",
        ),
        ("{pkg}:make_retreiver", "'{pkg}' has no attribute 'make_retreiver' (did you mean make_retriever?)"),
        (
            "{pkg}.gone:make_retriever",
            "no module named '{pkg}.gone' (install it, or put its folder on PYTHONPATH)",
        ),
    ],
)
def test_an_entry_point_failing_to_load_names_the_entry_point_its_distribution_and_the_problem(
    site_dir, tag, value, problem
):
    """An installed plugin (entry point of a distribution) that does not load, found by its name
    through the retriever registry, as a notebook does."""
    pkg = f"iq_broken_{tag}"
    _write(
        site_dir,
        {
            f"{pkg}/__init__.py": "def make_retriever(corpus, index_dir=None):\n    return None\n",
            f"{pkg}/needs_dep.py": "import no_such_dependency_xyz\n",
            f"{pkg}/raises.py": "raise RuntimeError('no GPU here')\n",
        },
    )
    value = value.format(pkg=pkg)
    _distribution(
        site_dir,
        "broken-plugin",
        "0.3",
        {"inferqa.retrievers": {"broken-bm25": value}},
        (f"{pkg}/__init__.py", f"{pkg}/needs_dep.py", f"{pkg}/raises.py"),
    )
    assert "broken-bm25" in retrievers.retriever_names()  # listed without being loaded
    with pytest.raises(PluginError) as exc:
        retrievers.retriever_spec("broken-bm25")
    assert _one_line(str(exc.value)) == (
        f"retriever 'broken-bm25': entry point broken-bm25 = {value} (broken-plugin 0.3) failed to load: "
        f"{problem.format(pkg=pkg, site=site_dir)}; {RETRIEVER_EXPECTED}"
    )


def test_two_distributions_declaring_one_name_is_an_error_naming_both(site_dir, tag):
    """No distribution wins: which is found first depends on ``sys.path``. Neither plugin is
    imported; the name is listed once; each callable stays reachable as module:function."""
    alpha, beta = f"iq_alpha_{tag}", f"iq_beta_{tag}"
    _write(site_dir, {f"{alpha}.py": PLUGIN, f"{beta}.py": PLUGIN})
    _distribution(
        site_dir,
        "alpha-plugin",
        "1.0",
        {"inferqa.retrievers": {"overlap": f"{alpha}:make_retriever"}},
        (f"{alpha}.py",),
    )
    _distribution(
        site_dir,
        "beta-plugin",
        "2.0",
        {
            "inferqa.retrievers": {"overlap": f"{beta}:make_retriever"},
            "inferqa.rerankers": {"beta-reverse": f"{beta}:make_reranker"},
        },
        (f"{beta}.py",),
    )
    assert plugins.names("retriever").count("overlap") == 1
    for resolve in (
        lambda: plugins.resolve("retriever", "overlap"),
        lambda: retrievers.retriever_spec("overlap"),
    ):
        with pytest.raises(PluginError) as exc:
            resolve()
        assert _one_line(str(exc.value)) == (
            "retriever 'overlap': entry point 'overlap' of group inferqa.retrievers is declared by 2 "
            f"distributions: alpha-plugin 1.0 (overlap = {alpha}:make_retriever); beta-plugin 2.0 (overlap = "
            f"{beta}:make_retriever) (uninstall all but one, or name the callable as module:function); "
            f"{RETRIEVER_EXPECTED}"
        )
    assert alpha not in sys.modules and beta not in sys.modules
    mine = plugins.resolve("retriever", f"{beta}:make_retriever")
    assert mine.obj is sys.modules[beta].make_retriever and mine.distribution is None
    # a name one distribution declares resolves, naming it
    reverse = plugins.resolve("reranker", "beta-reverse")
    assert reverse.distribution == "beta-plugin 2.0" and reverse.target == f"{beta}:make_reranker"


# ----------------------------------------------------------------------------- the registries


def test_a_plugged_in_retriever_works_like_a_registered_one(plugin, tmp_path):
    spec = f"{plugin}:make_retriever"
    found = retrievers.retriever_spec(spec)
    assert found.plugin is not None and found.name == spec
    r = retrievers.make_retriever(spec, CORPUS)
    assert r.name == spec and r.search(QUERIES, 3)["q1"][0][0] in ("p0", "p6")
    run = retrievers.retrieve(spec, CORPUS, QUERIES, 3, tmp_path / "run.trec")
    stamp = artifacts.read_stamp(tmp_path / "run.trec")
    assert stamp["params"]["identity"] == found.plugin.identity() and run["q2"] == [("p8", 1.0)]
    assert retrievers.retriever_names()[:6] == ["bm25", "bm25s", "minilm", "e5-small", "hybrid", "rrf"]
    with pytest.raises(PluginError, match="returned an object without search"):
        retrievers.make_retriever(f"{plugin}:no_search", CORPUS)
    with pytest.raises(ValueError, match=r"unknown retriever 'nope'.*or a module:function spec"):
        retrievers.retriever_spec("nope")


class StandInLLM:
    name = "stand-in"
    identity = "stand-in-llm"

    def __init__(self, replies: list[str] | None = None) -> None:
        self.replies = replies
        self.prompts: list = []
        self.stats = LLMStats()

    def chat(self, batch, max_tokens=None, desc="", progress=True, until=None):
        self.prompts += batch
        self.stats.model_calls += len(batch)
        return list(self.replies or ["Answer: mirror."] * len(batch))[: len(batch)]


def test_a_plugged_in_reranker_is_given_the_llm_when_it_requires_one(plugin, monkeypatch):
    plain, with_llm = f"{plugin}:make_reranker", f"{plugin}:make_llm_reranker"
    spec = rerankers.reranker_spec(plain)
    assert spec.kind == "plugin" and not spec.needs_llm and rerankers.reranker_spec(with_llm).needs_llm
    run = {"q1": [("p0", 3.0), ("p6", 2.0), ("p1", 1.0)]}
    assert [p for p, _ in rerankers.make_reranker(plain).rerank(QUERIES, run, CORPUS, depth=2)["q1"]] == [
        "p6",
        "p0",
        "p1",
    ]
    with pytest.raises(ValueError, match="needs an LLM"):
        rerankers.make_reranker(with_llm)
    llm = StandInLLM()
    built = rerankers.make_reranker(with_llm, llm=llm, window=5)
    assert built.llm is llm and built.window == 5 and built.name == with_llm
    ident = rerankers.reranker_identity(rerankers.reranker_spec(with_llm), llm)
    assert ident.startswith(f"plugin {with_llm}; ") and ident.endswith("; llm stand-in-llm")
    assert rerankers.reranker_identity(rerankers.RERANKERS["pointwise"], llm) == "stand-in-llm"  # unchanged
    with pytest.raises(UnknownNameError, match=r"unknown reranker 'pointwse' \(did you mean pointwise"):
        rerankers.check_reranker("pointwse")
    monkeypatch.setattr(rerankers, "RERANKERS", dict(rerankers.RERANKERS))
    rerankers.register_reranker(
        "mine", lambda name, llm, **kw: rerankers.make_reranker(plain), "custom", needs_llm=True
    )
    assert rerankers.reranker_spec("MINE").needs_llm and rerankers.reranker_spec("MINE").kind == "custom"
    with pytest.raises(ValueError, match="already registered"):
        rerankers.register_reranker("upr", lambda name, llm: None)


def _dataset() -> Dataset:
    hints = ["Mirrors reflect light.", "It hangs on walls."]
    q = Question("q1", "What object shows your face?", ["mirror"], [Hint(h) for h in hints])
    q2 = Question("q2", "Which planet is red?", ["Mars"], [Hint("Mars is red."), Hint("It is fourth.")])
    passages = {p.pid: p for p in build_passages("q1", hints)}
    passages |= {p.pid: p for p in build_passages("q2", q2.hint_texts)}
    qrels = {
        "q1": {pid: 2 if pid == "q1_10_0" else 1 for pid in passages if pid.startswith("q1")},
        "q2": {pid: 1 for pid in passages if pid.startswith("q2")},
    }
    return Dataset("plugins-test", {"q1": q, "q2": q2}, passages, qrels, {"test": ["q1", "q2"]}, {})


def test_readers_by_name_and_a_plugged_in_reader_in_read_runs(plugin):
    assert list(readers.READERS) == ["few-shot", "zero-shot"] and readers.DEFAULT_READER == "few-shot"
    llm = StandInLLM(["Final answer: Mars.", "He is a man who was born there"])
    answers = readers.reader_spec("zero-shot")(llm, ["Which planet?", "Who?"], ["It is red.", "Born."])
    assert answers == ["Mars", "NO ANSWER"]  # the built-in post-processing
    assert "Answer:" in llm.prompts[0][-1]["content"] and len(llm.prompts[0]) == 2  # no few-shot turns
    ds = _dataset()
    run = {"q1": [("q1_10_0", 2.0)], "q2": [("q2_01_1", 1.0)]}
    spec = readers.reader_spec(f"{plugin}:first_word")
    df = topk.read_runs(ReadingSetup(StandInLLM(), None, ds, progress=False), {"sys": run}, ["q1", "q2"],
                        ks=(1,), unions=("norm",), strategy=spec)
    assert list(df["answer"]) == ["MIRRORS", "IT"] and set(df["reader"]) == {
        f"stand-in · {plugin}:first_word"
    }
    with pytest.raises(PluginError, match=r"returned a list of 0 \(empty\) for 2 questions"):
        readers.reader_spec(f"{plugin}:too_few")(llm, ["a", "b"], ["c", "d"])
    with pytest.raises(UnknownNameError, match=r"unknown reader 'fewshot' \(did you mean few-shot"):
        readers.reader_spec("fewshot")


def test_a_plugged_in_method_runs_once_and_is_checked(plugin, tmp_path):
    ds = _dataset()
    corpus = stages.corpus_of(ds)
    inputs = methods.MethodInputs(ds, corpus, {"q1": "What object?", "q2": "Which planet?"}, k=1)
    spec = methods.method_spec(f"{plugin}:first_passages")
    first = methods.run_method(spec, inputs, tmp_path, label="mine")
    top = next(iter(corpus))
    assert first.run == {"q1": [(top, 2.0)], "q2": [(top, 2.0)]} and not first.cached
    assert methods.run_method(spec, inputs, tmp_path, label="mine").cached
    with pytest.raises(PluginError, match=r"ranks passage 'nowhere', not in the corpus"):
        methods.run_method(methods.method_spec(f"{plugin}:unknown_passage"), inputs, None)
    with pytest.raises(PluginError, match="returned a list; expected a run"):
        methods.checked_run("method 'x'", [], inputs.queries, corpus, 10)
    with pytest.raises(ValueError, match="no LLM was named"):
        _ = inputs.llm


# ----------------------------------------------------------------------------- the example plugin


@pytest.fixture(scope="module")
def example_installed(tmp_path_factory) -> Path:
    """The example plugin installed by pip (no dependencies, offline) into a temporary folder."""
    target = tmp_path_factory.mktemp("example-target")
    source = tmp_path_factory.mktemp("example-source") / EXAMPLE.name
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("*.egg-info", "build", "__pycache__"))
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--quiet",
            "--target",
            str(target),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return target


def test_the_example_plugin_is_found_by_its_entry_point(example_installed, monkeypatch):
    monkeypatch.syspath_prepend(str(example_installed))
    importlib.invalidate_caches()
    try:
        eps = importlib.metadata.entry_points(group="inferqa.retrievers")
        assert {ep.name: ep.value for ep in eps}["answer-type-bm25"] == "inferqa_answer_type:make_retriever"
        assert (
            "answer-type-bm25" in plugins.names("retriever")
            and "answer-type-bm25" in retrievers.retriever_names()
        )
        spec = retrievers.retriever_spec("answer-type-bm25")
        assert spec.plugin.distribution == "inferqa-answer-type-expansion 0.1.0"
        assert spec.plugin.origin == example_installed.resolve()
        assert "answer-type expansion v1; bm25s" in spec.identity()
        r = retrievers.make_retriever("answer-type-bm25", CORPUS)
        run = r.search({"q": "Which city is the capital of France?"}, 3)
        assert r.name == "answer-type-bm25" and run["q"][0][0] == "p6"
        module = sys.modules["inferqa_answer_type"]
        assert module.expand("Who painted the Mona Lisa?").endswith(module.TYPE_WORDS["HUM"])
    finally:
        sys.modules.pop("inferqa_answer_type", None)


def test_the_example_plugin_is_small():
    lines = (EXAMPLE / "inferqa_answer_type.py").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 80, len(lines)


# ----------------------------------------------------------------------------- notebook 08's table


def test_plan_names_your_system_and_refuses_what_cannot_be_built(plugin):
    empty = ym.plan(None, "none", None, None, None, "bm25", ["bm25"])
    assert empty.empty and empty.name is None and "No component" in empty.describe()
    assert ym.plan("bm25s", baselines=["bm25s"]).name == "bm25s (yours)"
    s = ym.plan(None, f"{plugin}:make_reranker", "zero-shot", first_stage="e5-small")
    assert s.name == f"e5-small+{plugin}:make_reranker · zero-shot" and s.first == "e5-small"
    assert ym.plan(f"{plugin}:make_retriever", name="mine").name == "mine"
    with pytest.raises(ValueError, match="both make the first stage"):
        ym.plan(f"{plugin}:make_retriever", method=f"{plugin}:first_passages")
    with pytest.raises(ValueError, match="name of a baseline"):
        ym.plan("bm25s", name="bm25", baselines=["bm25"])
    with pytest.raises(PluginError, match="no module named"):
        ym.plan(None, None, "no_such_module_xyz:answer")
    assert ym.slug("a:b · c/d") == "a_b_c_d"


def _scores() -> pd.DataFrame:
    """Six questions: yours = base on nDCG@10; on EM yours is right on 5, base on none and has no
    answer for q5 (a paired comparison then uses 5 questions); 'other' has no EM at all."""
    rows = []
    for i in range(6):
        q = f"q{i}"
        rows += [
            ("yours", "nDCG@10", q, 0.5),
            ("base", "nDCG@10", q, 0.5),
            ("other", "nDCG@10", q, i / 10),
            ("yours", "Hit@10", q, float("nan") if i else 1.0),
            ("base", "Hit@10", q, float("nan") if i else 0.0),
            ("other", "Hit@10", q, float("nan") if i else 1.0),
            ("yours", "EM", q, 1.0 if i else 0.0),
            *([("base", "EM", q, 0.0)] if i < 5 else []),
        ]
    return pd.DataFrame(rows, columns=["system", "metric", "qid", "value"])


def test_the_table_gives_paired_differences_with_intervals_p_and_holm():
    table = cmp.compare(_scores(), {"base": "retriever", "other": "reranker"}, "yours")
    assert list(table.columns) == cmp.COLUMNS
    t = table.set_index(["metric", "system"])
    assert (
        list(t.index.get_level_values(1)[:3]) == ["yours", "base", "other"]
        and t.at[("EM", "yours"), "kind"] == "yours"
    )
    same = t.loc[("nDCG@10", "base")]
    assert (same["Δ"], same["Δ_lo"], same["Δ_hi"], same["p"], same["p_holm"]) == (0.0, 0.0, 0.0, 1.0, 1.0)
    em = t.loc[("EM", "base")]
    assert (em["value"], em["Δ"], em["n"]) == (0.0, 80.0, 5) and 0 < em["Δ_lo"] <= em["Δ"] <= em["Δ_hi"]
    assert em["p"] == 0.125  # exact sign-flip test over the 4 discordant questions: 2 of the 2^4 flips
    # Holm over the table's comparisons: nDCG (2), Hit (2), EM (1: 'other' has no answers)
    tested = table[table["p"].notna()]
    assert len(tested) == 5 and table.loc[table["system"] == "other", "Δ"].notna().sum() == 2
    # sorted p: other's nDCG 0.0625 (5 discordant) → 5 · 0.0625; EM 0.125 → max(0.3125, 4 · 0.125)
    assert t.at[("nDCG@10", "other"), "p_holm"] == 0.3125 and em["p_holm"] == 0.5 and em["sig"] == ""
    assert t.at[("Hit@10", "base"), "n"] == 1 and t.at[("EM", "other"), "n"] == 0
    shown = cmp.display_table(table)
    assert shown.loc[("EM", "base"), "Δ yours − baseline [95 % CI]"].startswith("80.00 [")
    assert shown.loc[("EM", "other"), "mean % [95 % CI]"] == "—"
    text = cmp.finding(table, "yours", 6, "test", 2)
    assert (
        text.startswith("**yours** against 2 baselines on 6 test questions") and "Hit@10 (label ≥ 2)" in text
    )
    alone = cmp.compare(_scores().query("system != 'yours'"), {"base": "retriever", "other": "reranker"})
    assert alone["Δ"].isna().all() and alone["sig"].eq("").all()
    assert cmp.finding(alone, None, 6).startswith("No component is plugged in")
    assert cmp.figure(table, "yours", "t") is not None and cmp.figure(alone, None, "t") is not None


def test_the_baselines_are_read_as_stored(monkeypatch):
    ds = _dataset()
    name, corpus = ds.name, stages.corpus_of(ds)
    folder = stages.run_dir(name, stages.Corpus.SUPPORTING)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "bm25.trec").write_text(
            "q1 Q0 q1_10_0 1 2.0 bm25\nq2 Q0 q2_10_0 1 1.0 bm25\n", encoding="utf-8"
        )
        (folder / "bm25+pointwise.trec").write_text("q1 Q0 q1_01_1 1 2.0 x\n", encoding="utf-8")
        PATHS.results.mkdir(parents=True, exist_ok=True)
        answers = pd.DataFrame(
            {
                "setting": ["pipeline"] * 4 + ["Optimal"],  # notebook 04's Optimal rows have no k
                "system": ["bm25", "bm25", "bm25", "bm25+pointwise", "Optimal"],
                "k": [1, 3, 3, 3, None],
                "union": ["norm"] * 4 + [None],
                "reader": "m",
                "qid": ["q1", "q1", "q2", "q1", "q1"],
                "answer": ["x", "mirror", "Venus", "glass", "mirror"],
                "em": [False, True, False, False, True],
            }
        )
        answers.to_csv(stages.READING_ANSWERS.path(name, "test"), index=False)
        kinds = cmp.baseline_names(["bm25"], "bm25", ["pointwise"])
        assert kinds == {"bm25": "retriever", "bm25+pointwise": "reranker"}
        runs, kinds = cmp.baselines(name, kinds, ["q1", "q2"], corpus)
        assert runs["bm25+pointwise"] == {"q1": [("q1_01_1", 2.0)], "q2": []}
        stored = cmp.stored_answers(name, "test", "m", 3, list(runs), ["q1", "q2"])
        assert stored.sort_values(["system", "qid"])[["system", "qid", "em"]].values.tolist() == [
            ["bm25", "q1", True],
            ["bm25", "q2", False],
            ["bm25+pointwise", "q1", False],
        ]
        assert cmp.beyond_methods(name, "test") == []  # notebook 07 has not run
        scores = cmp.per_question(runs, stored, ds.qrels, ["q1", "q2"], hit_label=2)
        hit = scores[(scores["metric"] == "Hit@10") & (scores["system"] == "bm25")].set_index("qid")["value"]
        assert hit["q1"] == 1.0 and pd.isna(hit["q2"])  # q2 has no label-2 passage: not counted
        with pytest.raises(Exception, match="notebook 02_retrieval"):
            cmp.baselines(name, {"e5-small": "retriever"}, ["q1"], corpus)
    finally:
        shutil.rmtree(PATHS.runs / name, ignore_errors=True)
        stages.READING_ANSWERS.path(name, "test").unlink(missing_ok=True)


def test_your_system_runs_once_and_is_read_back(plugin):
    ds = _dataset()
    corpus, queries = stages.corpus_of(ds), stages.queries_of(ds, "test")
    folder = stages.run_dir(ds.name, stages.Corpus.SUPPORTING)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "bm25.trec").write_text(
            "q1 Q0 q1_10_0 1 2.0 bm25\nq1 Q0 q1_01_1 2 1.0 bm25\n", encoding="utf-8"
        )
        system = ym.plan(f"{plugin}:make_retriever", f"{plugin}:make_reranker", name="mine")
        first = ym.run_system(system, ds, corpus, queries, run_depth=5, rerank_depth=2)
        assert [s["step"] for s in first.steps] == ["retriever", "reranker"]
        assert not any(s["cached"] for s in first.steps)
        again = ym.run_system(system, ds, corpus, queries, run_depth=5, rerank_depth=2)
        assert all(s["cached"] for s in again.steps) and again.run == first.run
        assert "read back from its cache" in ym.run_sentence(again, 2)
        only_reranker = ym.run_system(
            ym.plan(None, f"{plugin}:make_reranker"), ds, corpus, queries, rerank_depth=2
        )
        assert [p for p, _ in only_reranker.run["q1"]] == ["q1_01_1", "q1_10_0"]  # bm25's head reversed
        assert ym.run_system(ym.plan(), ds, corpus, queries) is None
        df = ym.read_system(ym.plan(f"{plugin}:make_retriever", reader=f"{plugin}:first_word"), first,
                            ReadingSetup(StandInLLM(), None, ds, corpus, k=1), list(queries))
        assert len(df) == 2 and ym.steps_table(first)["step"].tolist()[-1] == "reader"
    finally:
        shutil.rmtree(PATHS.runs / ds.name, ignore_errors=True)


# ----------------------------------------------------------------------------- plugin identity


def test_editing_a_helper_module_of_a_plugin_package_changes_its_identity_and_recomputes_its_run(
    site_dir, tag
):
    """The callable lives in ``pkg/search/retriever.py``; the order it ranks by comes from
    ``pkg/helpers.py``. Editing the helper changes the identity, and notebook 08's run of the
    retriever (cached while nothing changed) is computed again with the edited helper."""
    pkg = f"iq_ordered_{tag}"
    _write(
        site_dir,
        {
            f"{pkg}/__init__.py": '"""A plugin package."""\n',
            f"{pkg}/helpers.py": "def order(ids):\n    return list(ids)\n",
            f"{pkg}/search/__init__.py": "",
            f"{pkg}/search/retriever.py": ORDERED_RETRIEVER,
        },
    )
    spec = f"{pkg}.search.retriever:make_retriever"
    plugin = plugins.resolve("retriever", spec)
    assert sorted(plugin.code_files()) == [
        f"{pkg}/__init__.py",
        f"{pkg}/helpers.py",
        f"{pkg}/search/__init__.py",
        f"{pkg}/search/retriever.py",
    ]
    first_identity = plugin.identity()
    (site_dir / pkg / "__pycache__").mkdir()
    (site_dir / pkg / "__pycache__" / "helpers.cpython-311.pyc").write_bytes(b"not code")
    assert plugin.identity() == first_identity  # bytecode caches are not the plugin's code

    ds = dataclasses.replace(_dataset(), name=f"plugins-identity-{tag}")
    corpus, queries = stages.corpus_of(ds), stages.queries_of(ds, "test")
    in_order, reversed_order = list(corpus)[:5], list(reversed(corpus))[:5]
    assert in_order != reversed_order
    run_file = stages.run_dir_file(stages.yours_dir(ds.name), ym.slug(spec))
    system = ym.plan(spec, name="mine")
    try:
        first = ym.run_system(system, ds, corpus, queries, run_depth=5)
        assert not first.steps[0]["cached"] and [p for p, _ in first.run["q1"]] == in_order
        again = ym.run_system(system, ds, corpus, queries, run_depth=5)
        assert again.steps[0]["cached"] and again.run == first.run  # nothing changed: read back
        assert artifacts.read_stamp(run_file)["params"]["identity"] == first_identity

        _write(
            site_dir,
            {f"{pkg}/helpers.py": "def order(ids):\n    return list(reversed(ids))  # newest first\n"},
        )
        for name in [n for n in sys.modules if n == pkg or n.startswith(f"{pkg}.")]:
            del sys.modules[name]  # the next import reads the edited package, as a new kernel does
        edited_identity = plugin.identity()
        assert edited_identity != first_identity
        assert retrievers.retriever_identity(spec) == edited_identity
        edited = ym.run_system(system, ds, corpus, queries, run_depth=5)
        assert [p for p, _ in edited.run["q1"]] == reversed_order, (
            "the cached run of the old helper was reused"
        )
        assert artifacts.read_stamp(run_file)["params"]["identity"] == edited_identity

        _write(site_dir, {f"{pkg}/search/extra.py": "WEIGHT = 1\n"})  # a module added to the package
        assert plugin.identity() not in (first_identity, edited_identity)
    finally:
        shutil.rmtree(PATHS.runs / ds.name, ignore_errors=True)


def test_an_installed_plugin_s_identity_covers_every_module_its_record_lists(site_dir, tag):
    """A one-module entry point whose distribution installs a second top-level module beside it
    (``py-modules = [main, util]``): the ``RECORD`` names both, and editing the second changes the
    identity, while a file the ``RECORD`` does not name as a module does not."""
    main_mod, util_mod = f"iq_main_{tag}", f"iq_util_{tag}"
    _write(
        site_dir,
        {
            f"{main_mod}.py": f"from {util_mod} import order\n\n\n"
            "def make_retriever(corpus, index_dir=None):\n    return order(corpus)\n",
            f"{util_mod}.py": "def order(ids):\n    return list(ids)\n",
        },
    )
    _distribution(
        site_dir,
        "two-modules",
        "1.0",
        {"inferqa.retrievers": {"two-modules": f"{main_mod}:make_retriever"}},
        (f"{main_mod}.py", f"{util_mod}.py"),
    )
    plugin = retrievers.retriever_spec("two-modules").plugin
    assert plugin.distribution == "two-modules 1.0"
    assert sorted(plugin.code_files()) == sorted([f"{main_mod}.py", f"{util_mod}.py"])
    before = plugin.identity()
    assert before.startswith(f"plugin {main_mod}:make_retriever; two-modules 1.0; source ")
    (site_dir / "two_modules-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: two-modules\nVersion: 1.0\nSummary: edited\n", encoding="utf-8"
    )
    assert plugin.identity() == before
    _write(site_dir, {f"{util_mod}.py": "def order(ids):\n    return sorted(ids)\n"})
    assert plugin.identity() != before


# ----------------------------------------------------------------------------- notebook 08 end to end


@pytest.mark.slow
def test_notebook_08_runs_the_example_plugin_on_the_smoke_build(
    smoke_outputs, example_installed, monkeypatch, tmp_path
):
    """The example plugin, installed, found by its entry point in the notebook's kernel, against every
    baseline of the smoke run (notebooks 02–07 there already): one table, your rows first. Your run
    is the example's — bm25s searching each question expanded with its answer type's words, which
    ranks differently from bm25s on the bare question — and your nDCG@10 row is that run's."""
    from inferqa_utils.ir.lexical import BM25sRetriever
    from inferqa_utils.measure.metrics import per_query

    monkeypatch.setenv("PYTHONPATH", f"{example_installed}:{CHECKOUT}")
    monkeypatch.syspath_prepend(str(example_installed))  # the run's own check of the spec
    importlib.invalidate_caches()
    try:
        m = runner.run_notebooks(
            "smoke", only=["08"], overrides={"your_retriever": "answer-type-bm25"}, log=print
        )
        assert m.extra["status"] == "ok"
        # what the example computes, computed here from its own expansion and bm25s
        params = config.profile("smoke")
        ds = load_built(smoke_outputs)
        corpus = stages.corpus_of(ds)
        queries = stages.queries_of(ds, params.get("split", "test"))
        if params.get("max_questions") is not None:
            queries = dict(list(queries.items())[: params["max_questions"]])
        depth = params.get("run_depth", 100)
        expand = importlib.import_module("inferqa_answer_type").expand
        bm25 = BM25sRetriever(corpus)
        write_run(bm25.search({q: expand(t) for q, t in queries.items()}, depth), tmp_path / "expanded.trec")
        write_run(bm25.search(queries, depth), tmp_path / "plain.trec")
    finally:
        sys.modules.pop("inferqa_answer_type", None)

    def ranked(run):
        return {q: [p for p, _ in run.get(q, [])] for q in queries}

    expanded, plain = read_run(tmp_path / "expanded.trec"), read_run(tmp_path / "plain.trec")
    assert ranked(expanded) != ranked(plain), "the expansion changes no ranking: the check below is void"
    yours = read_run(stages.run_dir_file(stages.yours_dir(smoke_outputs), ym.slug("answer-type-bm25")))
    assert ranked(yours) == ranked(expanded)

    run_results = Path(m.extra["notebooks"]["08_your_method.ipynb"]["output"]).parent / "results"
    table = pd.read_csv(stages.YOURS_COMPARED.path(smoke_outputs, "test", run_results))
    assert list(table.columns) == cmp.COLUMNS
    mine = table[table["kind"] == "yours"]
    assert set(mine["system"]) == {"answer-type-bm25"} and set(mine["metric"]) == set(cmp.METRICS)
    ndcg = per_query(expanded, {q: ds.qrels.get(q, {}) for q in queries}, 1, ["nDCG@10"])["nDCG@10"].dropna()
    row = mine.set_index("metric").loc["nDCG@10"]
    assert row["n"] == len(ndcg) and row["value"] == pytest.approx(100 * ndcg.mean(), abs=1e-9)
    assert table.loc[table["kind"] != "yours", "p_holm"].notna().any()
    executed = json.loads(Path(m.extra["notebooks"]["08_your_method.ipynb"]["output"]).read_text())
    assert "answer-type-bm25" in json.dumps(executed["cells"])
