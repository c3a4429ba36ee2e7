"""The parameters of a build and what a build returns (paper 000 §3).

:class:`BuildConfig` holds the parameters of one construction. Its :meth:`~BuildConfig.fingerprint`
and :meth:`~BuildConfig.label_key` hash them with the content of the source files: a build with
the same fingerprint is reused, the label key names the labeling checkpoint.

Notebook 01 and the profiles name three parameters differently from their fields (``build_source``,
``dataset_name``, ``build_max_questions``): :data:`NOTEBOOK_PARAMETER` is the one place that says
so. :meth:`BuildConfig.from_parameters` reads a configuration from those parameters (a profile's,
or the notebook's own by name; :func:`build_parameters` lists them), :func:`parameter_differences`
names a difference in those terms, and :meth:`BuildConfig.from_manifest` reads the parameters a
build's manifest records (by field name).
:class:`BuildResult` is what :func:`~inferqa_utils.construction.build.build_dataset` returns.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from .. import sources
from ..answering.guards import DEFAULT_GUARDS
from ..core.config import PATHS, SEED
from ..core.fingerprint import files_sha256
from .leakage import AGREEMENT_COLUMNS

if TYPE_CHECKING:
    from ..ir.datamodel import Dataset, Question
    from .labeling import QuestionLabels

#: bump when the labeling prompt, judge prompt or acceptance rule changes (names the checkpoint file)
LABELING_VERSION = 2

#: the labeling checkpoint's folder inside a build folder (carried across exports)
CHECKPOINT_DIR = "checkpoint"

#: notebook 01's parameter name for a :class:`BuildConfig` field where the two differ
NOTEBOOK_PARAMETER = {
    "source": "build_source",
    "name": "dataset_name",
    "max_questions": "build_max_questions",
}

#: fields left out of the fingerprint: where the build reads decisions and writes, and a threshold
#: that is only reported (no built question changes with them)
UNFINGERPRINTED = ("verification_file", "output_dir", "stored_leakage_threshold")

#: list fields for which :meth:`BuildConfig.from_parameters` reads an empty list as ``None``
_EMPTY_IS_NONE = ("parametric_models", "label_splits")


def notebook_parameter(field_name: str) -> str:
    """The name notebook 01 and the profiles give the :class:`BuildConfig` field ``field_name``."""
    return NOTEBOOK_PARAMETER.get(field_name, field_name)


def build_parameters() -> list[str]:
    """The names of the parameters that build a dataset: every :class:`BuildConfig` field's
    :func:`notebook_parameter`, in field order."""
    return [notebook_parameter(f.name) for f in fields(BuildConfig)]


@dataclass
class BuildConfig:
    """Parameters of one build (:meth:`from_parameters` reads them from notebook 01's ``parameters`` cell)."""

    source: str = "embedded"
    name: str = "embedded"
    max_questions: int | None = None
    k_hints: int = 5
    labelers: list[str] = field(default_factory=lambda: ["qwen2.5-coder-1.5b"])
    judge_model: str | None = "qwen2.5-coder-1.5b"
    convergence_model: str = "qwen2.5-coder-1.5b"
    n_candidates: int = 10  # distractors to generate when a source has no candidates
    max_candidates: int | None = None  # cap on candidates judged per hint (gold included); None = all
    convergence_method: str = "names"  # names | choice | pairwise (see construction.convergence)
    #: "hicos" (paper: a hint whose gold vote is 0 gets 0) or "true-hints" (the gold vote taken as 1:
    #: for sources whose hints are true by construction; applied to stored votes too) — convergence.RULES
    convergence_rule: str = "hicos"
    parametric_models: list[str] | None = None  # None → the labelers
    parametric_repeats: int = 3
    n_train: int | float | None = None
    n_test: int | float | None = None
    leakage_fuzzy_threshold: float = 90.0
    leakage_token_level: bool = True
    #: a hint whose stored ``answer_leakage`` (WikiHint scores every hint, in [0, 1]) reaches this
    #: counts as leaking in the agreement table beside our filter; 0.5 is the midpoint of the scale,
    #: the score is reported only (our filter, paper 000 §3.1.2, decides what is dropped), so the
    #: value changes no built question and is left out of the fingerprint. On the real WikiHint
    #: test file the score is a similarity that reaches 0.5 for 222 of 500 hints, our filter 6.
    stored_leakage_threshold: float = 0.5
    difficulty_top_n: int = 10
    difficulty_embedder: str | None = "minilm"
    #: splits whose own passages get LLM labels (None: every split); the others' own passages are label 1
    label_splits: list[str] | None = None
    #: LLM-judged convergence for "labelled" questions only (others: stored scores or source order) or "all"
    convergence_scope: str = "labelled"
    #: use convergence scores stored in the source (WikiHint, TriviaHG model hints, our embedded set)
    convergence_stored: bool = True
    #: the corpus holds the passages of every source question (beyond max_questions too), as in QUIT
    corpus_all_source: bool = True
    #: answer guards applied before the LLM judge (inferqa_utils.answering.guards)
    guards: list[str] = field(default_factory=lambda: list(DEFAULT_GUARDS))
    #: build only these source questions (ids; None: the first ``max_questions``) — a release's sample
    questions: list[str] | None = None
    #: {qid: split} taken as given instead of the seeded split draw (a release's splits); the
    #: parametric filter still runs and is reported beside it
    fixed_splits: dict[str, str] | None = None
    verification_file: str | None = None  # None → data/verification/<name>.json
    output_dir: str | None = None  # None → build/datasets/<name>
    seed: int = SEED

    @classmethod
    def from_parameters(cls, params: Mapping[str, Any] | None = None, /, **named: Any) -> BuildConfig:
        """The configuration notebook 01's parameters describe: a profile's parameters ``params``,
        or the notebook's own passed by name (``named``). Each field takes the value of its
        parameter (:func:`notebook_parameter`: ``build_source``, ``dataset_name``,
        ``build_max_questions``, else the field's own name); a field without one keeps its default.
        Every other name in ``params`` is ignored: a profile holds the parameters of every notebook,
        and ``source``, ``name`` or ``max_questions`` there belong to other notebooks; a name in
        ``named`` that is no field's parameter (:func:`build_parameters`) raises ``TypeError``.
        ``labelers``, ``parametric_models`` and ``label_splits`` are copied into new lists; an empty
        ``parametric_models`` or ``label_splits`` reads as ``None`` (the labelers; every split)::

            BuildConfig.from_parameters(build_source="embedded", dataset_name="embedded", k_hints=3)
        """
        unknown = sorted(set(named) - set(build_parameters()))
        if unknown:
            raise TypeError(f"no build parameter {', '.join(map(repr, unknown))}; "
                            f"the build parameters: {', '.join(build_parameters())}")
        params = {**(params or {}), **named}
        kw = {
            f.name: params[notebook_parameter(f.name)]
            for f in fields(cls)
            if notebook_parameter(f.name) in params
        }
        if kw.get("labelers") is not None:
            kw["labelers"] = list(kw["labelers"])
        for key in _EMPTY_IS_NONE:
            if key in kw:
                kw[key] = list(kw[key]) if kw[key] else None
        return cls(**kw)

    @classmethod
    def from_manifest(cls, parameters: Mapping[str, Any], **changes: Any) -> BuildConfig:
        """The configuration a build manifest's ``parameters`` record (by field name; a key that is
        no field is ignored), with the fields in ``changes`` set."""
        names = {f.name for f in fields(cls)}
        return cls(**{**{k: v for k, v in parameters.items() if k in names}, **changes})

    def source_sha256(self) -> str:
        """sha256 of the contents of the source's files on this machine
        (:func:`~inferqa_utils.sources.source_files`; names and folders play no part, so the same
        files give the same value everywhere); ``""`` when none is found (a hub source not
        downloaded yet). Each file is read once per process while it is unchanged."""
        return files_sha256(sources.source_files(self.source))

    def fingerprint(self, source_sha256: str | None = None) -> str:
        """Hash of everything that changes the built dataset: the parameters (not those in
        :data:`UNFINGERPRINTED`: the verification file, the output folder, the reported leakage
        threshold) and the content of the source files (``source_sha256``, as :meth:`source_sha256`
        computes it when not given: a build passes the value it computed once)."""
        d = asdict(self)
        for key in UNFINGERPRINTED:
            d.pop(key)
        d["source_sha256"] = self.source_sha256() if source_sha256 is None else source_sha256
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]

    def label_key(self, source_sha256: str | None = None) -> str:
        """Hash of what determines a question's passages and labels, the source files' content
        included (``source_sha256`` as in :meth:`fingerprint`); names the checkpoint file."""
        keys = (
            "source", "k_hints", "labelers", "judge_model", "convergence_model", "n_candidates",
            "max_candidates", "convergence_method", "convergence_rule", "convergence_scope",
            "convergence_stored", "guards", "leakage_fuzzy_threshold", "leakage_token_level",
        )
        d = {k: getattr(self, k) for k in keys} | {"labeling_version": LABELING_VERSION}
        d["source_sha256"] = self.source_sha256() if source_sha256 is None else source_sha256
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def out_dir(self) -> Path:
        """The build folder: ``output_dir``, else ``build/datasets/<name>``."""
        return Path(self.output_dir) if self.output_dir else PATHS.datasets / self.name

    @property
    def label_checkpoint(self) -> Path:
        """The labeling checkpoint of this configuration (JSONL, one finished question per line)."""
        return self.checkpoint_file()

    def checkpoint_file(self, source_sha256: str | None = None) -> Path:
        """:attr:`label_checkpoint` for source files with content hash ``source_sha256`` (as in
        :meth:`fingerprint`)."""
        return self.out_dir / CHECKPOINT_DIR / f"labels-{self.label_key(source_sha256)}.jsonl"

    @property
    def decisions_path(self) -> Path:
        """The verification decisions: ``verification_file``, else ``data/verification/<name>.json``."""
        return (
            Path(self.verification_file)
            if self.verification_file
            else PATHS.data / "verification" / f"{self.name}.json"
        )


@dataclass
class BuildResult:
    """A finished build: the dataset, the tables that narrate each step, and the manifest of its export."""

    config: BuildConfig
    dataset: Dataset
    questions: pd.DataFrame  # one row per source question: status, reason, types, difficulty
    hints: pd.DataFrame  # one row per hint: convergence, kept, drop reason
    parametric: pd.DataFrame
    difficulty: pd.DataFrame | None
    labels: dict[str, QuestionLabels]
    llm_stats: dict[str, dict[str, Any]]
    timings: dict[str, float]
    out_dir: Path
    #: source questions whose passages are in the corpus but which were not built (label 0 everywhere)
    distractors: list[Question] = field(default_factory=list)
    #: one row per generated answer that entered an answer pool (and what became of it)
    expansions: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: one row per (question, answer) a guard refused before the judge
    refusals: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: one row per hint with a stored leakage score: that score beside our filter's decision
    #: (:func:`~inferqa_utils.construction.steps.leakage_agreement_rows`); empty when the source stores none
    leakage_agreement: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=AGREEMENT_COLUMNS))
    manifest: dict[str, Any] = field(default_factory=dict)
    #: per step: seconds and, per model, the LLM calls, tokens and seconds it took
    #: (:func:`~inferqa_utils.construction.steps.step_costs`)
    step_costs: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def dropped(self) -> pd.DataFrame:
        """The rows of :attr:`questions` the build dropped."""
        return self.questions[self.questions["status"] == "dropped"]


def profile_build_config(profile_name: str) -> BuildConfig:
    """The :class:`BuildConfig` notebook 01 makes under profile ``profile_name``
    (:meth:`BuildConfig.from_parameters` of its parameters; fields no profile sets keep their defaults)."""
    from ..core.config import profile

    return BuildConfig.from_parameters(profile(profile_name))


def parameter_differences(existing: Mapping[str, Any], cfg: BuildConfig) -> list[str]:
    """``name: there → here`` for every fingerprinted parameter of ``cfg`` that differs from the
    ``parameters`` of an existing build's manifest (names as notebook 01's parameters cell spells them)."""
    here = asdict(cfg)
    out = []
    for k in sorted(here):
        if k in UNFINGERPRINTED or (k in existing and existing[k] == here[k]):
            continue
        there = existing.get(k, "(not recorded)")
        out.append(f"{notebook_parameter(k)}: {there!r} there → {here[k]!r} here")
    return out


def matching_profiles(fingerprint: str | None, source_sha256: str | None = None) -> list[str]:
    """Profiles whose notebook-01 parameters give a build with this fingerprint (who made it), for
    source files with content hash ``source_sha256`` (that build's, as its manifest records it;
    ``None``: each profile's source as it is on this machine)."""
    from ..core.config import profile_names

    out = []
    for name in profile_names():
        try:
            if profile_build_config(name).fingerprint(source_sha256) == fingerprint:
                out.append(name)
        except (KeyError, TypeError, ValueError):
            continue
    return out
