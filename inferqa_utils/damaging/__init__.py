"""Stage 06 — damaging passages (paper 004; notebook ``06_damaging_passages``).

* :mod:`.patterns` — EM patterns, AcEM@k, passage types (IZ/DP/DN/SP/SN) and the six probes;
* :mod:`.incremental` — incremental inference with a decoder LLM, probe re-reading, curves and
  intervals;
* :mod:`.ser` — the Stability Error Ratio with random vs BM25 negatives.
"""
