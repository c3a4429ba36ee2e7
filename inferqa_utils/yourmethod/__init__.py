"""Stage 08 — your method (notebook ``08_your_method``): a researcher's components, plugged in by
name, against every baseline the earlier notebooks stored, in one table of paired tests.

* :mod:`.system` — which components replace the built-in ones (:func:`~.system.plan`: specs resolved
  before anything loads), your system's run (:func:`~.system.run_system`, each step cached with its
  cost) and its reading (:func:`~.system.read_system`);
* :mod:`.compare` — the stored baselines (runs of notebooks 02, 03 and 07; answers of 04 and 07,
  none recomputed), the table (every system's nDCG@10, Hit@10 and EM with intervals; yours −
  each baseline with its paired interval, p and Holm), its sentence and its figure.

The components themselves are found by :mod:`inferqa_utils.core.plugins` (entry points and
``module:function`` specs) through the registries of each kind; ``docs/your_method.md`` says what
each interface receives and returns. The paper has no such table: it is ours.
"""
