"""How long the class-in-a-box cells of notebook 00 take uncached, for the class plan (docs/teaching.md).

Runs, with a new empty LLM reply cache, what the cells of notebook 00 section 6 run on the default
question: *try your own question* with a question the release does not hold, the hint explorer on
one new subset, and the three exercises; prints the seconds of each.

    .venv/bin/python benchmarks/class_times.py
"""
import os
import tempfile
import time

os.environ["INFERQA_LLM_CACHE"] = os.path.join(tempfile.mkdtemp(), "cache.sqlite")
from inferqa_utils import load_source
from inferqa_utils.llm import load_llm
from inferqa_utils.teach.classroom import (
    distractor_contexts,
    explore_hints,
    order_contexts,
    read_contexts,
    single_hint_contexts,
    try_your_own,
)
from inferqa_utils.teach.quickstart import demo_corpus, demo_hints, pick_questions, right_and_other

ds = load_source("embedded")
questions = pick_questions(ds, "emb_hum_24", None)
passages = demo_corpus(questions, 3)
reader = load_llm("qwen2.5-coder-1.5b")
judge = reader
q = ds.questions["emb_hum_24"]
reader.chat([[{"role": "user", "content": "warm up"}]], max_tokens=1, progress=False)  # page the weights in


def t(label, fn):
    t0 = time.perf_counter()
    out = fn()
    print(f"{label}: {time.perf_counter() - t0:.1f} s", flush=True)
    return out


t(
    "6.1 try your own (new question)",
    lambda: try_your_own(
        "Which metal is liquid at room temperature and was once used in thermometers?",
        [
            "It is the only metal that is liquid at room temperature.",
            "Its chemical symbol comes from the Latin hydrargyrum.",
            "It was used in old thermometers and barometers.",
        ],
        "Mercury", reader, judge, corpus=passages, show=False,
    ),
)
t(
    "6.2 explorer, one new subset (hints 0 and 1)",
    lambda: explore_hints(q, reader, judge, subset=[0, 1], interactive=False),
)
t("6.3 exercise 1", lambda: read_contexts(q, single_hint_contexts(demo_hints(q, 3)), reader, judge))
t("6.3 exercise 2", lambda: read_contexts(q, order_contexts(demo_hints(q, 3)), reader, judge))
right, other = right_and_other(q, passages)
t(
    "6.3 exercise 3",
    lambda: read_contexts(q, distractor_contexts(right.text, other and other.text), reader, judge),
)
