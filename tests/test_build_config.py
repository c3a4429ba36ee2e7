"""A build's parameters: notebook 01's parameter names read onto the fields in one place, the
names a difference is reported in, a manifest's parameters read back, and the hashed values a
build is found by."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from inferqa_utils.construction.build_config import (
    BuildConfig,
    build_parameters,
    notebook_parameter,
    parameter_differences,
    profile_build_config,
)
from inferqa_utils.core.config import profile_names


def test_from_parameters_reads_the_notebook_names_onto_the_fields():
    labelers = ("a", "b")
    splits = ["test"]
    cfg = BuildConfig.from_parameters(
        {
            "build_source": "quit",
            "dataset_name": "mine",
            "build_max_questions": 7,
            "k_hints": 4,
            "labelers": labelers,
            "label_splits": splits,
            "parametric_models": [],
            "n_test": 0.5,
            # a profile's parameters of other notebooks, spelt like three fields: not read
            "source": "wikihint",
            "name": "other",
            "max_questions": 99,
            "reader_model": "x",
            "release": "embedded",
        }
    )
    assert (cfg.source, cfg.name, cfg.max_questions, cfg.k_hints, cfg.n_test) == ("quit", "mine", 7, 4, 0.5)
    assert cfg.labelers == ["a", "b"] and isinstance(cfg.labelers, list)
    assert cfg.label_splits == ["test"] and cfg.label_splits is not splits  # a copy
    assert cfg.parametric_models is None  # an empty list reads as "the labelers"
    untouched = {
        k: v
        for k, v in asdict(cfg).items()
        if k not in ("source", "name", "max_questions", "k_hints", "labelers", "label_splits", "n_test")
    }
    assert untouched == {k: v for k, v in asdict(BuildConfig()).items() if k in untouched}


def test_from_parameters_ignores_a_misspelt_or_unknown_parameter():
    """A name that is no field's parameter changes nothing (a profile holds every notebook's)."""
    cfg = BuildConfig.from_parameters(
        {"build_sorce": "quit", "k_hint": 9, "dataset": "x", "label_splits": None}
    )
    assert cfg == BuildConfig()
    assert BuildConfig.from_parameters({}) == BuildConfig()


def test_from_parameters_by_name_reads_as_the_mapping_and_refuses_a_misspelt_name():
    """Notebook 01 passes its build parameters by name: the same configuration as the mapping of
    those names; a name no field has (a typo) is refused rather than silently left out."""
    cfg = BuildConfig.from_parameters(build_source="quit", dataset_name="mine", k_hints=4, label_splits=[])
    assert cfg == BuildConfig.from_parameters(
        {"build_source": "quit", "dataset_name": "mine", "k_hints": 4, "label_splits": []}
    )
    assert (cfg.source, cfg.name, cfg.k_hints, cfg.label_splits) == ("quit", "mine", 4, None)
    assert BuildConfig.from_parameters({"k_hints": 4, "n_test": 9}, k_hints=2).k_hints == 2  # by name wins
    with pytest.raises(TypeError, match="'k_hint'"):
        BuildConfig.from_parameters(k_hint=4)
    with pytest.raises(TypeError, match="'source'"):  # the field's name, not its parameter's
        BuildConfig.from_parameters(source="quit")


def test_build_parameters_are_the_fields_under_their_notebook_names():
    names = build_parameters()
    assert names[:4] == ["build_source", "dataset_name", "build_max_questions", "k_hints"]
    assert len(names) == len(asdict(BuildConfig())) and "seed" in names and "source" not in names


def test_notebook_names_of_the_fields():
    assert [notebook_parameter(f) for f in ("source", "name", "max_questions", "k_hints", "seed")] == \
        ["build_source", "dataset_name", "build_max_questions", "k_hints", "seed"]


def test_the_smoke_profiles_build_config_hand_checked():
    cfg = profile_build_config("smoke")
    assert (cfg.source, cfg.name, cfg.max_questions, cfg.k_hints) == ("embedded", "embedded-smoke", 4, 3)
    assert cfg.labelers == cfg.parametric_models == ["smollm2-135m"]
    assert (cfg.judge_model, cfg.convergence_model) == ("smollm2-135m", "smollm2-135m")
    assert cfg.label_splits is None and cfg.n_test is None and cfg.parametric_repeats == 1
    assert cfg.corpus_all_source is False and cfg.convergence_stored is False
    assert cfg.convergence_rule == "true-hints"


def test_parameter_differences_name_the_notebook_parameters():
    there = asdict(BuildConfig())
    here = BuildConfig(source="quit", max_questions=3, k_hints=4, output_dir="elsewhere",
                       stored_leakage_threshold=0.9)
    assert parameter_differences(there, here) == [
        "k_hints: 5 there → 4 here", "build_max_questions: None there → 3 here",
        "build_source: 'embedded' there → 'quit' here",
    ]
    assert parameter_differences({k: v for k, v in there.items() if k != "seed"}, BuildConfig()) == [
        "seed: '(not recorded)' there → 13 here"]


def test_from_manifest_reads_the_recorded_parameters_back():
    for name in profile_names():
        cfg = profile_build_config(name)
        assert BuildConfig.from_manifest({**asdict(cfg), "not_a_field": 1}) == cfg
    moved = BuildConfig.from_manifest(asdict(BuildConfig(name="n")), output_dir="/x")
    assert (moved.name, moved.output_dir) == ("n", "/x")


def test_the_hashed_values_of_the_default_config_are_pinned():
    """The fingerprint finds a build and the label key names its checkpoint: changing either
    forces a full rebuild and relabelling, so a change here must be deliberate."""
    cfg = BuildConfig(output_dir="/out")
    assert cfg.fingerprint("x" * 64) == "738b1c683e1d328c"
    assert cfg.label_key("x" * 64) == "c15ff1502e4b9cb8"
    assert cfg.checkpoint_file("x" * 64).as_posix() == "/out/checkpoint/labels-c15ff1502e4b9cb8.jsonl"
    assert BuildConfig(output_dir="/elsewhere", verification_file="v.json",
                       stored_leakage_threshold=0.9).fingerprint("x" * 64) == "738b1c683e1d328c"
