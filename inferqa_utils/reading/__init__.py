"""Stage 04 — reading: retrieved passages → an LLM answer (notebook ``04_reading``).

* :mod:`.contexts` — Union_norm / Union_freq contexts at hint level (QUIT paper §5.4);
* :mod:`.experiments` — reading a run at top-k, the oracle and Optimal settings, EM tables;
* :mod:`.report` — Table 8 / Fig. 5 / Fig. 6 shapes and the paper's reading numbers.
"""
