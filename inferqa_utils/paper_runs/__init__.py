"""The paper's own runs: the authors' released per-question outputs, re-scored with intervals.

The authors of paper 000 (*Inferential Question Answering*, the QUIT benchmark) released their
outputs for the full test split (1,728 questions) as the folder ``results/`` of the hub dataset
``JamshidJDMY/InferentialQA``; their repository ``DataScienceUIBK/InferentialQA`` reads them with
the scripts in its own ``results/`` folder and prints point estimates. This subpackage reads the
same files and scores every finding with paired intervals, p-values, Holm and a verdict.

The released files, their layout and what each holds: :mod:`.files`. The authors' metrics:
relevant = label > 0; Hit@k and Recall@k skip questions without a relevant passage; MRR and nDCG
(gain 2^label − 1) average over all; EM is raw membership of the prediction in ``answers``.

Modules: :mod:`.files` (layout, zstandard, streaming JSON), :mod:`.load` (validation into typed
objects), :mod:`.fetch` (hub download), :mod:`.scoring` (per-question metrics, both EMs),
:mod:`.stats` (fast paired intervals and exact sign-flip p), :mod:`.findings` (the comparisons and
verdicts), :mod:`.contract` (the stage registry's tables an import writes), :mod:`.export` (TREC
runs, qrels, tables, the import's run record), :mod:`.staging` (an import's files written as one
set: staged, then renamed into place), :mod:`.importer` (``paper-runs import``), :mod:`.views` (what
notebook 09 shows), :mod:`.page` (the results page's section). ``docs/paper_runs.md`` is the user's
guide.
"""

from __future__ import annotations

from typing import Any

#: public names and the module that defines each (imported on first use: pandas, numpy and scipy
#: are not loaded by ``import inferqa_utils.paper_runs``)
_EXPORTS = {
    "load_release": "load", "Release": "load", "fetch": "fetch", "import_release": "importer",
    "score_release": "importer", "findings_table": "findings", "render_section": "page",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
