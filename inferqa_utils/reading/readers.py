"""Readers by name (paper 000 §5.4, A.4): how a question and the context built from its run's top
passages become a short answer.

A reader is a function ``answer(llm, questions, contexts) -> list[str]``: the reader LLM (the
profile's ``reader_model``; a reader may use it or a model of its own), the questions and, per
question, its context (the hint sentences of its run's top-``k`` passages joined by Union_norm or
Union_freq, :func:`inferqa_utils.reading.topk.contexts_from_run`); it returns one short answer per
question, ``NO ANSWER`` to abstain (an empty answer counts as ``NO ANSWER``). The whole batch comes
at once so that an LLM reader sends one batch to the engine (cached, prompts ordered for prefix
reuse).

Names (:data:`READERS`):

* ``few-shot`` (:data:`DEFAULT_READER`) — the reader of every notebook: system instruction, five
  few-shot examples, context before the question (paper 000 A.4;
  :func:`inferqa_utils.answering.reader.read`), answers post-processed;
* ``zero-shot`` — the same instruction and rules without the examples (:func:`prompt_reader`).

:func:`register_reader` adds a name; a researcher's own reader is named by an entry point of the
group ``inferqa.readers`` or a ``module:function`` spec (:mod:`inferqa_utils.core.plugins`). A new
prompting strategy is one function ``messages(question, context) -> Messages`` turned into a
reader by :func:`prompt_reader`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..answering.prompts import READER_RULES, READER_SYSTEM
from ..answering.reader import MAX_NEW_TOKENS, KnownAnswers, postprocess, read
from ..core import plugins
from ..core.errors import PluginError, UnknownNameError

if TYPE_CHECKING:
    from ..llm.base import LLM, Messages

#: a reader: ``answer(llm, questions, contexts)`` → one short answer per question
Answer = Callable[..., list[str]]

#: the reader every notebook uses
DEFAULT_READER = "few-shot"


@dataclass(frozen=True)
class ReaderSpec:
    """A named reader: its ``answer`` function, what decides its answers besides the LLM and the
    inputs (``identity()``), a description, and whether it reuses known answers (``known``: the
    built-in reader takes the build's own readings of identical prompts, ``KnownAnswers``)."""

    name: str
    answer: Answer
    identity: Callable[[], str]
    description: str = ""
    takes_known: bool = False
    #: the plugged-in component behind the name (:mod:`inferqa_utils.core.plugins`), None for a registered one
    plugin: plugins.Plugin | None = None

    def __call__(self, llm: LLM, questions: Sequence[str], contexts: Sequence[str],
                 known: KnownAnswers | None = None) -> list[str]:
        """The reader's answers, checked: one string per question."""
        if len(questions) != len(contexts):
            raise ValueError(f"{len(questions)} questions for {len(contexts)} contexts")
        out = (self.answer(llm, questions, contexts, known=known) if self.takes_known
               else self.answer(llm, questions, contexts))
        if not isinstance(out, list | tuple) or len(out) != len(questions) or \
                not all(isinstance(a, str) for a in out):
            raise PluginError(f"reader {self.name!r} returned {_shape(out)} for {len(questions)} questions; "
                              "expected one string per question")
        return [a.strip() or "NO ANSWER" for a in out]


def _shape(value: Any) -> str:
    if isinstance(value, list | tuple):
        kinds = sorted({type(v).__name__ for v in value})
        return f"{plugins.a_type(value)} of {len(value)} ({', '.join(kinds) or 'empty'})"
    return plugins.a_type(value)


READERS: dict[str, ReaderSpec] = {}


def register_reader(name: str, answer: Answer, identity: Callable[[], str], description: str = "", *,
                    takes_known: bool = False, replace: bool = False) -> ReaderSpec:
    """Register reader ``name`` (module docstring); a name already registered → ``ValueError``
    unless ``replace``."""
    if name in READERS and not replace:
        raise ValueError(f"reader {name!r} is already registered")
    READERS[name] = ReaderSpec(name, answer, identity, description, takes_known)
    return READERS[name]


def plugin_reader(plugin: plugins.Plugin) -> ReaderSpec:
    """The spec of a plugged-in reader (:mod:`inferqa_utils.core.plugins`), named by its spec."""
    return ReaderSpec(plugin.spec, plugin.obj, plugin.identity, plugin.description, plugin=plugin)


def reader_names() -> list[str]:
    """The registered names, then the entry points of ``inferqa.readers``."""
    return [*READERS, *(n for n in plugins.names("reader") if n not in READERS)]


def reader_spec(name: str) -> ReaderSpec:
    """The reader of a registered name, else of an entry point or ``module:function`` spec
    (:func:`plugin_reader`); another name → :class:`~inferqa_utils.core.errors.UnknownNameError` listing
    the valid ones."""
    if name in READERS:
        return READERS[name]
    plugin = plugins.find("reader", name)
    if plugin is not None:
        return plugin_reader(plugin)
    forms = "a module:function spec naming answer(llm, questions, contexts)"
    raise UnknownNameError(plugins.unknown_name("reader", name, reader_names(), forms))


def prompt_reader(messages: Callable[[str, str], Messages], max_tokens: int = MAX_NEW_TOKENS) -> Answer:
    """A reader from a prompting strategy: ``messages(question, context)`` gives each question's
    chat prompt; the LLM answers the batch greedily (cached, prefix-ordered) and every reply is
    post-processed as the built-in reader's (:func:`~inferqa_utils.answering.reader.postprocess`:
    last line, stray quotes and full sentences → ``NO ANSWER``)."""

    def answer(llm: LLM, questions: Sequence[str], contexts: Sequence[str]) -> list[str]:
        prompts = [messages(q, c) for q, c in zip(questions, contexts, strict=True)]
        if not prompts:
            return []
        raws = llm.chat(prompts, max_tokens=max_tokens, desc=f"read ({llm.name})", progress=False)
        return [postprocess(r) for r in raws]

    return answer


def _few_shot(llm: LLM, questions: Sequence[str], contexts: Sequence[str],
              known: KnownAnswers | None = None) -> list[str]:
    return [o.answer for o in read(llm, questions, contexts, known=known, progress=False)]


def zero_shot_messages(question: str, context: str) -> Messages:
    """The reader's instruction and rules, then the context and the question, without examples."""
    return [{"role": "system", "content": READER_SYSTEM},
            {"role": "user", "content": f"{READER_RULES}\n\nContext: {context.strip()}\n"
                                        f"Question: {question.strip()}\nAnswer:"}]


register_reader(DEFAULT_READER, _few_shot, lambda: "few-shot reader (paper 000 A.4), context first",
                "five few-shot examples, context before the question (paper 000 A.4)", takes_known=True)
register_reader("zero-shot", prompt_reader(zero_shot_messages), lambda: "zero-shot reader, context first",
                "the few-shot reader's instruction and rules without its examples")
