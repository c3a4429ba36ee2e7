"""The paper's own runs: the authors' released per-question outputs, re-scored with intervals.

The authors of paper 000 (*Inferential Question Answering*, the QUIT benchmark) released their
outputs for the full test split (1,728 questions) as the folder ``results/`` of the hub dataset
``JamshidJDMY/InferentialQA``; their repository ``DataScienceUIBK/InferentialQA`` reads them with
the scripts in its own ``results/`` folder and prints point estimates. This subpackage reads the
same files and scores every finding with paired intervals, p-values, Holm and a verdict.

The released shapes (read from the authors' scripts; :mod:`.files` lists every path):

* ``index/test/retriever.jsonl`` — one JSON line per test question: ``question``, ``answers`` (the
  answer pool), ``contexts``: the question's 325 passages ``{"id", "text", "label" (0/1/2),
  "rag_answers": {reader: answer}}`` with readers ``llama-32-1b``, ``gemma-3-4b``, ``qwen-3-8b``;
  passage ids ``{qid}_{mask}_{permutation}``. The Optimal setting reads it.
* ``retriever/<r>/retriever.json`` (r ∈ bm25, dpr, colbert, contriever, bge) — a JSON list aligned
  by position with the index: ``{"question", "answers", "ctxs": [{"id", "score", "text", ...}]}``.
* ``reranker/<x>/reranker.json`` — the oracle setting: reranker x orders the question's own
  passages, ``reranked_ctxs``; ``retriever_reranker/<r>/<x>/reranker.json`` — x over r's top 100,
  ``ctxs`` (first stage) and ``reranked_ctxs``. Rerankers x: ``lit5dist-LiT5-Distill-{base,large,xl}-v2``,
  ``monot5-monot5-{base,large,3b}-msmarco-10k``, ``rankgpt-{Llama-3.1-8B-Instruct,Qwen2.5-7B}``,
  ``rankt5-rankt5-{base,large,3b}``, ``upr-{gpt2-large,t0-3b,t5-large,t5-small}``.
* every ``.../rag.json`` beside a ranking — ``{"id", "answers", "predicted_answer": {reader:
  {"<id>_un_<k>" | "<id>_uf_<k>": answer}}}``, k ∈ {1, 3, 5}, ``un`` Union_norm, ``uf`` Union_freq.
* fine-tuned: ``ft_retriever/<dpr|colbert>/<N>_positive/{retriever,rag}.json``,
  ``ft_reranker/<N>_positive/{reranker,rag}.json`` (FT-MonoT5, oracle setting),
  ``retriever_ft_reranker/<r>/{retriever,rag}.json``, ``ft_retriever_reranker/<r>/<x>/…``,
  ``ft_retriever_ft_reranker/<r>/{reranker,rag}.json``.
* baselines: ``baselines/baseline.json`` (per question, by position, ``ctxs: {id: {"label"}}``, the
  MS MARCO and Wikipedia passages relabelled by the authors' LLM rule),
  ``baselines_retriever/<msmarco|wiki>/<r>/retriever.json`` and
  ``baselines_reranker/<msmarco|wiki>/<r>/<x>/reranker.json``.

On the hub each file ``p.json``/``p.jsonl`` is stored zstandard-compressed as ``p.zsd``
(``results/hf_auto_open.py``). Their metrics: relevant = label > 0; Hit@k and Recall@k skip
questions without a relevant passage; MRR and nDCG (gain 2^label − 1) average over all; EM is raw
membership of the prediction in ``answers``.

Modules: :mod:`.files` (layout, zstandard, streaming JSON), :mod:`.load` (validation into typed
objects), :mod:`.fetch` (hub download), :mod:`.scoring` (per-question metrics, both EMs),
:mod:`.stats` (fast paired intervals and exact sign-flip p), :mod:`.findings` (the comparisons and
verdicts), :mod:`.contract` (the stage registry's tables and the verdict rule shared with the
notebooks), :mod:`.export` (TREC runs, qrels, tables, the import's run record), :mod:`.staging`
(an import's files written as one set: staged, then renamed into place), :mod:`.importer`
(``paper-runs import``), :mod:`.views` (what notebook 09 shows), :mod:`.page` (the results page's
section). ``docs/paper_runs.md`` is the user's guide.
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
