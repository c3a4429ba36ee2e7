"""Stage 06 — damaging passages (paper 004; notebook ``06_damaging_passages``).

* :mod:`.patterns` — EM patterns, AcEM@k, passage types (IZ/DP/DN/SP/SN) and the six probes;
* :mod:`.incremental` — incremental inference with a decoder LLM and the probes' re-reading;
* :mod:`.measures` — EM@k / AcEM@k and Probe@k curves, passage-type counts and the damaging effect,
  with intervals;
* :mod:`.ser` — the Stability Error Ratio with random vs BM25 negatives;
* :mod:`.summary` — Table 6 and corpus-comparison shapes, the EM/AcEM figure, the generated
  sentences and the inputs of the generic figures.
"""
