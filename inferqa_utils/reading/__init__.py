"""Stage 04 — reading: retrieved passages → an LLM answer (notebook ``04_reading``).

* :mod:`.setup` — :class:`~.setup.ReadingSetup`: reader, judge, dataset, corpus, reused answers and
  context size, passed to every reading;
* :mod:`.contexts` — Union_norm / Union_freq contexts at hint level (QUIT paper §5.4);
* :mod:`.topk` — reading a run's top-k passages as one context and scoring the answers (shared
  with notebooks 05, 07 and 08);
* :mod:`.readers` — readers by name: the built-in few-shot reader, a zero-shot one, and a
  researcher's own (entry point ``inferqa.readers`` or ``module:function``);
* :mod:`.conditions` — notebook 04's settings (oracle, Optimal with reused answers), the Union_freq
  grid search and the EM tables;
* :mod:`.summary` — Table 8 / Fig. 5 / Fig. 6 shapes and the paper's reading numbers.
"""
