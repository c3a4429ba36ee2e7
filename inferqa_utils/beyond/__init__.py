"""Beyond the paper (notebook 07): the other seed paradigms (papers 001–003) and a method of our own.

Every method produces a TREC-style :data:`~inferqa_utils.ir.trec.Run` (qid → [(pid, score)], best
first) over the built dataset's corpus, so it is scored by :func:`inferqa_utils.measure.metrics.evaluate`
and read by :func:`inferqa_utils.reading.topk.read_runs` exactly like the retrievers of notebook 02 and
the rerankers of notebook 03.

* :mod:`.decomposition` — Visconde (paper 001): few-shot LLM question decomposition, BM25 (+
  rerank) per sub-question, pooling of the top-k per sub-question, a chain-of-thought reader;
* :mod:`.knowledge` — knowledge-aware diverse reranking (paper 002): hybrid interleaved first
  stage, initial rerank, LLM-declared knowledge elements, two element-augmented reranks interleaved;
* :mod:`.disentangled` — DisentangledQA's retriever (paper 003): multi-view topic queries
  (entities, nouns, n-grams), topic words masked out, masked dense retrieval over hints;
* :mod:`.candidates` — ours: candidate-support retrieval (the reader proposes answers from the
  first-stage pool; passages are scored by how strongly they support the consensus candidates);
* :mod:`.common` — shared plumbing (:class:`~.common.MethodSetup`: the questions, corpus and cache
  folder every method run is given; the method's reranker, cached method runs);
* :mod:`.registry` — methods by name: a researcher's own (entry point ``inferqa.methods`` or
  ``module:function``, ``run(inputs) -> Run``), run and cached for notebook 08;
* :mod:`.comparison` — the report's systems, their reading, the one report table and its figure
  (the papers' findings are scored by :mod:`inferqa_utils.verdicts.findings`).

Heavy libraries are imported inside functions; importing this package is cheap.
"""
