"""Answering a question with an LLM and judging the answer — the shared layer below the stages.

The labelers of dataset construction (01), the readers of every later stage (04–07) and the
answer judge all use these modules, so they sit below every stage:

* :mod:`.prompts` — the reader, closed-book and judge prompts (QUIT paper §4.3, Appendix prompts);
* :mod:`.reader` — short answers from an LLM, with or without context, post-processed;
* :mod:`.judge` — exact match first, then the answer guards, then the LLM judge;
* :mod:`.guards` — rule-based guards that refuse a judge's "Yes" for entities named in the
  question, generic phrases and rival answers;
* :mod:`.judge_quality` — the judge's measured agreement (recorded in ``judge_quality.json``).
"""
