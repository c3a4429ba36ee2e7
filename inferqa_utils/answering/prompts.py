"""Prompts for the reader (paper 000 A.4) and the answer judge (paper 000 §4), in our own words.

The five few-shot examples describe entities that appear in none of the datasets we use
(checked against the embedded set and the TriviaHG files): Ada Lovelace, Mount Kilimanjaro,
the sundial, origami and Lake Baikal.
"""

from __future__ import annotations

from ..llm.base import Messages

NO_ANSWER = "NO ANSWER"

READER_SYSTEM = ("You solve quiz questions from clues. Reply with the exact short answer only: a name, a "
                 "number, a word or a short phrase. Never reply with a full sentence.")

READER_RULES = ("Rules:\n"
                "- Give the answer in a few words.\n"
                f"- If the context is not enough to identify the answer, reply exactly: {NO_ANSWER}\n"
                "- No apologies, no explanations, no reasoning.")

#: (context of ~5 hints, question, short answer)
READER_FEWSHOT: list[tuple[str, str, str]] = [
    (
        "She was the daughter of a famous Romantic poet. She worked with the inventor of the Analytical "
        "Engine. "
        "Her notes on that machine included a method for computing Bernoulli numbers. Many regard her as the "
        "first "
        "computer programmer. A programming language commissioned by the US Department of Defense bears her "
        "name.", "Which 19th-century mathematician wrote what is often called the first computer program?",
        "Ada Lovelace",
    ),
    (
        "It is a dormant volcano with three cones. It stands in northeastern Tanzania, close to the border "
        "with "
        "Kenya. Its summit is the highest point in Africa. Climbers can reach the top without technical "
        "equipment. Glaciers near its peak have been shrinking for a century.",
        "What is the tallest mountain on the African continent?", "Mount Kilimanjaro",
    ),
    (
        "It tells the time using the position of the Sun. A raised edge called a gnomon casts a shadow on a "
        "marked plate. It does not work at night or under heavy cloud. Ancient Egyptians and Babylonians "
        "used early "
        "forms of it. Many are still found in gardens as ornaments.",
        "Which ancient instrument shows the hour by a shadow?", "Sundial",
    ),
    (
        "It is a craft practised with a single square sheet. Cutting and gluing are traditionally avoided. "
        "Its name "
        "comes from Japanese words for folding and paper. A well-known model is the crane, linked to wishes "
        "for "
        "peace. Engineers borrow its techniques to pack solar panels for space.",
        "What is the Japanese art of paper folding called?", "Origami",
    ),
    (
        "It lies in southern Siberia. It is the deepest lake on Earth, more than 1,600 metres at its deepest "
        "point. "
        "It holds roughly a fifth of the world's unfrozen fresh surface water. A freshwater seal lives only "
        "there. "
        "It is thought to be the oldest lake in the world.",
        "Which Russian lake is the deepest in the world?", "Lake Baikal",
    ),
]


#: reader prompt layouts: the context before the question (paper 000 A.4), or the question first
LAYOUTS = ("context-first", "question-first")
#: the layout every reading and labelling uses
READER_LAYOUT = "context-first"


def reader_user_turn(context: str, question: str, layout: str = READER_LAYOUT) -> str:
    if layout == "question-first":
        return f"{READER_RULES}\n\nQuestion: {question.strip()}\nContext: {context.strip()}\nAnswer:"
    if layout != "context-first":
        raise ValueError(f"reader layout must be one of {', '.join(LAYOUTS)}, not {layout!r}")
    return f"{READER_RULES}\n\nContext: {context.strip()}\nQuestion: {question.strip()}\nAnswer:"


def reader_messages(
    question: str, context: str, fewshot: bool = True, layout: str = READER_LAYOUT
) -> Messages:
    """System instruction, five few-shot turns, then the user turn, all in ``layout``. With the
    context before the question (paper 000 A.4), prompts of one question that share a hint prefix
    share a token prefix; with the question first, they also share the question, and only the
    context and the closing ``Answer:`` differ (``benchmarks/prompt_layout.py`` compares the two)."""
    msgs: Messages = [{"role": "system", "content": READER_SYSTEM}]
    if fewshot:
        for ctx, q, a in READER_FEWSHOT:
            msgs.append({"role": "user", "content": reader_user_turn(ctx, q, layout)})
            msgs.append({"role": "assistant", "content": a})
    msgs.append({"role": "user", "content": reader_user_turn(context, question, layout)})
    return msgs


CLOSED_BOOK_RULES = ("Rules:\n"
                     "- Give the answer in a few words.\n"
                     f"- If you do not know the answer, reply exactly: {NO_ANSWER}\n"
                     "- No apologies, no explanations, no reasoning.")


def closed_book_messages(question: str, rotation: int = 0) -> Messages:
    """The reader without context (parametric-answerability filter, paper 000 §3.1.4).

    ``rotation`` r starts the few-shot examples at example r (mod 5): the prompt variant used for
    repeat r of the filter, since greedy repeats of one prompt are identical."""
    msgs: Messages = [{"role": "system", "content": READER_SYSTEM}]
    r = rotation % len(READER_FEWSHOT)
    for _, q, a in READER_FEWSHOT[r:] + READER_FEWSHOT[:r]:
        msgs.append({"role": "user", "content": f"{CLOSED_BOOK_RULES}\n\nQuestion: {q}\nAnswer:"})
        msgs.append({"role": "assistant", "content": a})
    msgs.append({"role": "user", "content": f"{CLOSED_BOOK_RULES}\n\nQuestion: {question.strip()}\nAnswer:"})
    return msgs


JUDGE_SYSTEM = "You check answers to quiz questions. Reply with Yes or No only."


JUDGE_INSTRUCTION = (
    "Does the proposed answer name the same thing as a correct answer (different wording, spelling "
    "or level of detail is fine)? Reply Yes or No."
)


def judge_messages(question: str, gold: list[str], candidate: str) -> Messages:
    """Judge prompt (paper 000 §4). The proposed answer comes last, so the judgements of one question's
    candidates share the prompt prefix (instruction, question, correct answers) and the KV cache."""
    golds = " | ".join(gold)
    return [
        {"role": "system", "content": JUDGE_SYSTEM},
        {"role": "user", "content": (
            f"{JUDGE_INSTRUCTION}\n\nQuestion: {question.strip()}\nCorrect answer(s): {golds}\n"
            f"Proposed answer: {candidate.strip()}")},
    ]
