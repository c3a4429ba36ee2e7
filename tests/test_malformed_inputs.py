"""Every malformed input is refused with a DataFormatError naming file, record (or line) and field.

One row per input: a short name, the files written to a fresh folder, the loader call and the
fragments the message must hold. Each loader must raise before anything is written (the folder
holds the same files afterwards) and before anything is returned.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from inferqa_utils.construction.verification import load_decisions
from inferqa_utils.core.config import load_profiles
from inferqa_utils.core.errors import DataFormatError
from inferqa_utils.ir.trec import read_qrels, read_run
from inferqa_utils.sources import load_quit, load_source, load_triviahg, load_wikihint

NAN, INF = float("nan"), float("inf")


@dataclass(frozen=True)
class Case:
    """One malformed input: ``files`` (name → text or bytes) written to a folder, ``load`` called
    with that folder, ``expect`` the fragments of the error message."""

    name: str
    files: dict[str, str | bytes]
    load: Callable[[Path], Any]
    expect: tuple[str, ...]


def _json(obj: Any) -> str:
    """JSON as Python writes it: NaN and Infinity stay bare constants, as in a hand-edited file."""
    return json.dumps(obj)


def _jsonl(*objs: Any) -> str:
    return "".join(json.dumps(o) + "\n" for o in objs)


# ---------------------------------------------------------------------------------------- TriviaHG

def _trivia(**over: Any) -> dict[str, Any]:
    rec = {"Q_ID": "Q_1", "Question": "Which fruit?", "Hints": ["It is red.", "It grows on trees."],
           "ExactAnswer": ["Apple"], "Candidates_Answers": ["Pear", "Apple"],
           "Scores": [{"Pear": 0, "Apple": 1}, {"Pear": 1, "Apple": 1}], "Convergence": [1.0, 0.5]}
    return rec | over


def _triviahg(rec_or_text: dict[str, Any] | str | bytes) -> dict[str, str | bytes]:
    return {"t.json": rec_or_text if isinstance(rec_or_text, str | bytes) else _json([rec_or_text])}


def _load_t(d: Path) -> Any:
    return load_triviahg(d / "t.json")


TRIVIAHG = [
    Case(
        "triviahg convergence NaN",
        _triviahg(_trivia(Convergence=[NAN, 0.5])),
        _load_t,
        ("t.json", "record 0 (Q_1)", "field 'Convergence[0]'", "finite"),
    ),
    Case(
        "triviahg convergence Infinity",
        _triviahg(_trivia(Convergence=[1.0, INF])),
        _load_t,
        ("t.json", "record 0 (Q_1)", "field 'Convergence[1]'", "finite"),
    ),
    Case(
        "triviahg convergence 7",
        _triviahg(_trivia(Convergence=[7, 0.5])),
        _load_t,
        ("t.json", "record 0 (Q_1)", "field 'Convergence[0]'", "outside [0.0, 1.0]"),
    ),
    Case(
        "triviahg convergence -3",
        _triviahg(_trivia(Convergence=[1.0, -3])),
        _load_t,
        ("t.json", "record 0 (Q_1)", "field 'Convergence[1]'", "outside [0.0, 1.0]"),
    ),
    Case(
        "triviahg Scores vote 0.7",
        _triviahg(_trivia(Scores=[{"Pear": 0.7, "Apple": 1}, {"Pear": 1, "Apple": 1}])),
        _load_t,
        ("t.json", "record 0 (Q_1)", "field 'Scores[0].Pear'", "must be 0 or 1, got 0.7"),
    ),
    Case(
        "triviahg Scores vote 2",
        _triviahg(_trivia(Scores=[{"Pear": 0, "Apple": 1}, {"Pear": 1, "Apple": 2}])),
        _load_t,
        ("t.json", "record 0 (Q_1)", "field 'Scores[1].Apple'", "must be 0 or 1, got 2"),
    ),
    Case(
        "triviahg Scores vote Infinity",
        _triviahg(_trivia(Scores=[{"Pear": INF, "Apple": 1}, {"Apple": 1}])),
        _load_t,
        ("t.json", "record 0 (Q_1)", "field 'Scores[0].Pear'", "must be 0 or 1, got inf"),
    ),
    Case(
        "triviahg id with a trailing space",
        _triviahg(_trivia(Q_ID="Q_1 ")),
        _load_t,
        ("t.json", "record 0 (Q_1 )", "field 'Q_ID'", "contains whitespace"),
    ),
    Case(
        "triviahg id with inner whitespace",
        _triviahg(_trivia(Q_ID="Q 1")),
        _load_t,
        ("t.json", "record 0 (Q 1)", "field 'Q_ID'", "contains whitespace"),
    ),
    Case("triviahg empty list", _triviahg("[]"), _load_t, ("t.json", "holds no record")),
    Case(
        "triviahg not UTF-8",
        _triviahg('[{"Q_ID": "Q_1", "Question": "Caf\xe9?"}]'.encode("latin-1")),
        _load_t,
        ("t.json", "line 1", "not UTF-8", "byte 0xe9 at byte offset 33"),
    ),
    Case(
        "triviahg source [] through load_source",
        _triviahg("[]"),
        lambda d: load_source(f"triviahg:{d / 't.json'}"),
        ("t.json", "holds no record"),
    ),
]


# ---------------------------------------------------------------------------------------- WikiHint

def _hint(text: str, rank: Any = None, **metrics: Any) -> dict[str, Any]:
    return {
        "hint": text,
        **({"rank": rank} if rank is not None else {}),
        **({"metrics": metrics} if metrics else {}),
    }


def _wiki(*hints: dict[str, Any], rid: str = "w_1", **over: Any) -> dict[str, Any]:
    hints = hints or (
        _hint("It has canals.", "1", convergence=0.5),
        _hint("It is in Italy.", "2", convergence=0.9),
    )
    return {"id": rid, "question": {"question": "Which city?"}, "answer": {"answer": "Venice"},
            "hints": list(hints)} | over


def _load_w(d: Path) -> Any:
    return load_wikihint(d / "w.json")


WIKIHINT = [
    Case(
        "wikihint convergence NaN",
        {"w.json": _json([_wiki(_hint("a", "1", convergence=NAN))])},
        _load_w,
        ("w.json", "record 0 (w_1)", "field 'hints[0].metrics.convergence'", "finite"),
    ),
    Case(
        "wikihint convergence 7",
        {"w.json": _json([_wiki(_hint("a", "1"), _hint("b", "2", convergence=7))])},
        _load_w,
        ("w.json", "record 0 (w_1)", "field 'hints[1].metrics.convergence'", "outside [0.0, 1.0]"),
    ),
    Case(
        "wikihint duplicate rank",
        {"w.json": _json([_wiki(_hint("a", "1"), _hint("b", "1"))])},
        _load_w,
        ("w.json", "record 0 (w_1)", "field 'hints[1].rank'", "also the rank of hints[0]"),
    ),
    Case(
        "wikihint rank '1.5'",
        {"w.json": _json([_wiki(_hint("a", "1.5"), _hint("b", "2"))])},
        _load_w,
        ("w.json", "record 0 (w_1)", "field 'hints[0].rank'", "expected an integer, got '1.5'"),
    ),
    Case(
        "wikihint rank 1.5",
        {"w.json": _json([_wiki(_hint("a", 2), _hint("b", 1.5))])},
        _load_w,
        ("w.json", "record 0 (w_1)", "field 'hints[1].rank'", "expected an integer, got 1.5"),
    ),
    Case(
        "wikihint metrics not an object",
        {"w.json": _json([_wiki({"hint": "a", "metrics": [0.5]})])},
        _load_w,
        ("w.json", "record 0 (w_1)", "field 'hints[0].metrics'", "expected dict, got list"),
    ),
    Case(
        "wikihint vote 2",
        {"w.json": _json([_wiki(_hint("a", scores={"Venice": 2, "Rome": 0}))])},
        _load_w,
        ("w.json", "record 0 (w_1)", "field 'hints[0].metrics.scores.Venice'", "must be 0 or 1"),
    ),
    Case(
        "wikihint id with whitespace",
        {"w.json": _json([_wiki(rid="w 1")])},
        _load_w,
        ("w.json", "record 0 (w 1)", "field 'id'", "contains whitespace"),
    ),
    Case("wikihint empty list", {"w.json": "[]"}, _load_w, ("w.json", "holds no record")),
    Case(
        "wikihint JSONL not UTF-8 on line 2",
        {"w.json": _jsonl(_wiki()).encode() + b'{"id": "w_\xff"}\n'},
        _load_w,
        ("w.json", "line 2", "not UTF-8", "byte 0xff"),
    ),
]


# ---------------------------------------------------------------------------------------- QUIT

def _quit(
    qid: str = "Q_1", hints: list[Any] | None = None, subsets: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {"id": qid, "question": "Which fruit?", "answers": ["Apple"],
            "hints": hints or [{"hint": "It is red."}, {"hint": "It grows on trees."}],
            "subsets": subsets if subsets is not None else
            {"10": {"0": {"gemma-3-1b": "Apple"}}, "01": {"1": {"gemma-3-1b": "pear"}},
             "11": {"01": {"gemma-3-1b": "Apple"}, "10": {"gemma-3-1b": "plum"}}}}


def _corpus(*lines: dict[str, Any] | bytes) -> bytes:
    return b"".join(x if isinstance(x, bytes) else (json.dumps(x) + "\n").encode() for x in lines)


def _load_q(d: Path) -> Any:
    return load_quit(d)


QUIT = [
    Case(
        "quit generation not a string",
        {"dev.json": _json([_quit(subsets={"10": {"0": {"gemma-3-1b": 3}}})])},
        _load_q,
        ("dev.json", "record 0 (Q_1)", "field 'subsets.10.0.gemma-3-1b'", "expected a generated answer"),
    ),
    Case(
        "quit generation null",
        {"dev.json": _json([_quit(subsets={"11": {"10": {"qwen-3-4b": None}}})])},
        _load_q,
        ("dev.json", "record 0 (Q_1)", "field 'subsets.11.10.qwen-3-4b'", "got NoneType"),
    ),
    Case(
        "quit mask shorter than the hints",
        {"dev.json": _json([_quit(subsets={"1": {"0": {}}})])},
        _load_q,
        ("dev.json", "record 0 (Q_1)", "field 'subsets.1'", "one 0/1 character per hint (2 hints)"),
    ),
    Case(
        "quit mask longer than the hints",
        {"dev.json": _json([_quit(subsets={"100": {"0": {}}})])},
        _load_q,
        ("dev.json", "record 0 (Q_1)", "field 'subsets.100'", "one 0/1 character per hint"),
    ),
    Case(
        "quit mask with a 2",
        {"dev.json": _json([_quit(subsets={"12": {"0": {}}})])},
        _load_q,
        ("dev.json", "record 0 (Q_1)", "field 'subsets.12'", "one 0/1 character per hint"),
    ),
    Case(
        "quit permutation not the mask's hints",
        {"dev.json": _json([_quit(subsets={"10": {"1": {}}})])},
        _load_q,
        ("dev.json", "record 0 (Q_1)", "field 'subsets.10.1'", "permutation does not match the mask"),
    ),
    Case(
        "quit id with whitespace",
        {"dev.json": _json([_quit(qid="Q 1")])},
        _load_q,
        ("dev.json", "record 0 (Q 1)", "field 'id'", "contains whitespace"),
    ),
    Case(
        "quit hint convergence NaN",
        {"dev.json": _json([_quit(hints=[{"hint": "a", "convergence": NAN}, "b"])])},
        _load_q,
        ("dev.json", "record 0 (Q_1)", "field 'hints[0].convergence'", "finite"),
    ),
    Case(
        "quit path to a split file",
        {"dev.json": _json([_quit()]), "test.json": _json([_quit("Q_2")])},
        lambda d: load_quit(d / "dev.json"),
        ("dev.json", "is a file: pass the folder"),
    ),
    Case(
        "quit split file through load_source",
        {"dev.json": _json([_quit()]), "test.json": _json([_quit("Q_2")])},
        lambda d: load_source(d / "dev.json"),
        ("dev.json", "is a file: pass the folder"),
    ),
    Case(
        "quit split files without a question",
        {"dev.json": "[]", "test.json": "[]"},
        _load_q,
        ("hold no question",),
    ),
    Case(
        "quit corpus duplicate id",
        {
            "dev.json": _json([_quit()]),
            "corpus/corpus.jsonl": _corpus(
                {"id": "Q_1_10_0", "contents": "It is red."},
                {"id": "Q_1_01_1", "contents": "x"},
                {"id": "Q_1_10_0", "contents": "other"},
            ),
        },
        _load_q,
        ("corpus.jsonl", "record line 3", "field 'id'", "duplicate passage id 'Q_1_10_0'", "also on line 1"),
    ),
    Case(
        "quit corpus orphan passage",
        {
            "dev.json": _json([_quit()]),
            "corpus/corpus.jsonl": _corpus(
                {"id": "Q_1_10_0", "contents": "It is red."}, {"id": "Q_9_1_0", "contents": "Stray."}
            ),
        },
        _load_q,
        ("corpus.jsonl", "record line 2", "field 'id'", "question 'Q_9', which is in no split file"),
    ),
    Case(
        "quit corpus not UTF-8",
        {
            "dev.json": _json([_quit()]),
            "corpus/corpus.jsonl": _corpus(
                {"id": "Q_1_10_0", "contents": "It is red."}, b'{"id": "Q_1_01_1", "contents": "\xe9"}\n'
            ),
        },
        _load_q,
        ("corpus.jsonl", "record line 2", "not UTF-8", "byte 0xe9"),
    ),
]


# ---------------------------------------------------------------------------------------- TREC

QRELS_OK = "Q_1 0 Q_1_10_0 2\nQ_1 0 Q_1_01_1 1\n"
RUN_OK = "Q_1 Q0 Q_1_10_0 1 2.5 bm25\nQ_1 Q0 Q_1_01_1 2 1.5 bm25\n"


def _load_qrels(d: Path) -> Any:
    return read_qrels(d / "test.qrels")


def _load_run(d: Path) -> Any:
    return read_run(d / "bm25.trec")


TREC = [
    Case(
        "qrels label 3",
        {"test.qrels": QRELS_OK + "Q_1 0 Q_1_11_01 3\n"},
        _load_qrels,
        ("test.qrels", "record line 3", "field 'label'", "label 3 outside {0, 1, 2}"),
    ),
    Case(
        "qrels label -1",
        {"test.qrels": "Q_1 0 Q_1_10_0 -1\n"},
        _load_qrels,
        ("test.qrels", "record line 1", "field 'label'", "label -1 outside {0, 1, 2}"),
    ),
    Case(
        "qrels duplicate pair",
        {"test.qrels": QRELS_OK + "Q_1 0 Q_1_10_0 1\n"},
        _load_qrels,
        ("test.qrels", "record line 3", "field 'docid'", "also on line 1"),
    ),
    Case(
        "qrels 3 columns",
        {"test.qrels": QRELS_OK + "Q_1 Q_1_11_01 2\n"},
        _load_qrels,
        ("test.qrels", "record line 3", "expected 4 columns", "got 3"),
    ),
    Case(
        "qrels 5 columns (an id with a space)",
        {"test.qrels": "Q 1 0 Q_1_10_0 2\n"},
        _load_qrels,
        ("test.qrels", "record line 1", "expected 4 columns", "got 5"),
    ),
    Case(
        "qrels label 1.0",
        {"test.qrels": "Q_1 0 Q_1_10_0 1.0\n"},
        _load_qrels,
        ("test.qrels", "record line 1", "field 'label'", "not an integer"),
    ),
    Case(
        "run 5 columns",
        {"bm25.trec": RUN_OK + "Q_1 Q0 Q_1_11_01 3 0.5\n"},
        _load_run,
        ("bm25.trec", "record line 3", "expected 6 columns", "got 5"),
    ),
    Case(
        "run rank not an integer",
        {"bm25.trec": "Q_1 Q0 Q_1_10_0 first 2.5 bm25\n"},
        _load_run,
        ("bm25.trec", "record line 1", "field 'rank'", "rank 'first' is not an integer"),
    ),
    Case(
        "run score not a number",
        {"bm25.trec": RUN_OK + "Q_1 Q0 Q_1_11_01 3 high bm25\n"},
        _load_run,
        ("bm25.trec", "record line 3", "field 'score'", "score 'high' is not a number"),
    ),
    Case(
        "run score NaN",
        {"bm25.trec": "Q_1 Q0 Q_1_10_0 1 nan bm25\n"},
        _load_run,
        ("bm25.trec", "record line 1", "field 'score'", "NaN"),
    ),
    Case(
        "run passage twice for a question",
        {"bm25.trec": RUN_OK + "Q_1 Q0 Q_1_10_0 3 0.5 bm25\n"},
        _load_run,
        ("bm25.trec", "record line 3", "field 'docid'", "on line 1 too"),
    ),
    Case(
        "qrels not UTF-8",
        {"test.qrels": b"Q_1 0 Q_1_10_0 2\nQ_\xe9 0 x 1\n"},
        _load_qrels,
        ("test.qrels", "record line 2", "not UTF-8", "byte offset 19"),
    ),
]


# ---------------------------------------------------------------------------------------- profiles

def _profiles(smoke: str) -> dict[str, str]:
    return {"profiles.yaml": "profiles:\n  default:\n    description: base\n    params: {k: 3}\n" + smoke}


def _load_p(d: Path) -> Any:
    return load_profiles(d / "profiles.yaml")


PROFILES = [
    Case(
        "profile inherits an unknown profile",
        _profiles("  smoke:\n    inherit: defualt\n    params: {k: 1}\n"),
        _load_p,
        ("profiles.yaml", "record smoke", "field 'inherit'", "'defualt', which is not a profile"),
    ),
    Case(
        "profile params not a mapping",
        _profiles("  smoke:\n    inherit: default\n    params: [k, 1]\n"),
        _load_p,
        ("profiles.yaml", "record smoke", "field 'params'", "got list"),
    ),
    Case(
        "profile inherit cycle",
        _profiles("  smoke:\n    inherit: smoke\n"),
        _load_p,
        ("profiles.yaml", "record smoke", "field 'inherit'", "cycle smoke -> smoke"),
    ),
    Case(
        "profile notebooks not a list of notebook numbers",
        _profiles("  smoke:\n    inherit: default\n    notebooks: [9]\n"),
        _load_p,
        ("profiles.yaml", "record smoke", "field 'notebooks'", "expected a list of notebook numbers"),
    ),
    Case(
        "profile not a mapping",
        _profiles("  smoke: fast\n"),
        _load_p,
        ("profiles.yaml", "record smoke", "expected a mapping, got str"),
    ),
    Case(
        "profile description not a string",
        _profiles("  smoke:\n    description: [a]\n"),
        _load_p,
        ("profiles.yaml", "record smoke", "field 'description'", "got list"),
    ),
    Case(
        "profiles file without 'profiles'",
        {"profiles.yaml": "default:\n  params: {}\n"},
        _load_p,
        ("profiles.yaml", "field 'profiles'", "expected a mapping"),
    ),
    Case(
        "profiles invalid YAML",
        _profiles("  smoke:\n    params: {k: [1\n"),
        _load_p,
        ("profiles.yaml", "record line", "invalid YAML"),
    ),
]


# ---------------------------------------------------------------------------------------- decisions

def _load_v(d: Path) -> Any:
    return load_decisions(d / "verification.json")


DECISIONS = [
    Case("decision 'yes'", {"verification.json": '{"q1": {"Venezia": "yes"}}'}, _load_v,
         ("verification.json", "record q1", "field 'Venezia'", "expected true or false, got 'yes'")),
    Case("decision null", {"verification.json": '{"q1": {"Venice": true, "Venezia": null}}'}, _load_v,
         ("verification.json", "record q1", "field 'Venezia'", "got None")),
    Case("decision 1", {"verification.json": '{"q1": {"Venezia": 1}}'}, _load_v,
         ("verification.json", "record q1", "field 'Venezia'", "got 1")),
    Case("decisions of a question not an object", {"verification.json": '{"q1": ["Venezia"]}'}, _load_v,
         ("verification.json", "record q1", "got list")),
    Case("decisions not an object", {"verification.json": '[{"q1": {"Venezia": true}}]'}, _load_v,
         ("verification.json", "expected an object", "got list")),
    Case("decisions invalid JSON", {"verification.json": '{"q1": {"Venezia": true}\n'}, _load_v,
         ("verification.json", "record line 2", "invalid JSON at column 1")),
    Case("decisions not UTF-8", {"verification.json": b'{"q1": {"Venez\xeda": true}}'}, _load_v,
         ("verification.json", "record line 1", "not UTF-8", "byte offset 14")),
]

CASES = TRIVIAHG + WIKIHINT + QUIT + TREC + PROFILES + DECISIONS


def _write(folder: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        f = folder / name
        f.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            f.write_bytes(content)
        else:
            f.write_text(content, encoding="utf-8")


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_table_covers_every_loader_with_at_least_30_inputs():
    assert len(CASES) >= 30 and len({c.name for c in CASES}) == len(CASES)
    assert all(len(rows) >= 5 for rows in (TRIVIAHG, WIKIHINT, QUIT, TREC, PROFILES, DECISIONS))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_malformed_input_is_refused_naming_where(case: Case, tmp_path: Path) -> None:
    """The loader raises DataFormatError whose message holds every expected fragment, and the
    folder is unchanged afterwards (nothing written)."""
    _write(tmp_path, case.files)
    before = _snapshot(tmp_path)
    with pytest.raises(DataFormatError) as e:
        case.load(tmp_path)
    msg = str(e.value)
    missing = [frag for frag in case.expect if frag not in msg]
    assert not missing, f"{case.name}: {missing} not in {msg!r}"
    assert _snapshot(tmp_path) == before


# ---------------------------------------------------------------------------------------- accepted

def test_a_byte_order_mark_is_accepted_everywhere(tmp_path: Path) -> None:
    """A UTF-8 BOM (as Windows editors write it) is dropped: JSON list, JSONL corpus, qrels, run,
    profiles and decisions load as without it."""
    bom = b"\xef\xbb\xbf"
    _write(
        tmp_path,
        {
            "t.json": bom + _json([_trivia()]).encode(),
            "q/dev.json": bom + _json([_quit()]).encode(),
            "q/corpus/corpus.jsonl": bom + _corpus({"id": "Q_1_10_0", "contents": "Red."}),
            "test.qrels": bom + QRELS_OK.encode(),
            "bm25.trec": bom + RUN_OK.encode(),
            "profiles.yaml": bom + _profiles("  smoke:\n    inherit: default\n")["profiles.yaml"].encode(),
            "verification.json": bom + b'{"q1": {"Venezia": false}}',
        },
    )
    assert [h.convergence for h in load_triviahg(tmp_path / "t.json").questions["Q_1"].hints] == [1.0, 0.5]
    assert load_quit(tmp_path / "q").passages["Q_1_10_0"].text == "Red."
    assert read_qrels(tmp_path / "test.qrels") == {"Q_1": {"Q_1_10_0": 2, "Q_1_01_1": 1}}
    assert read_run(tmp_path / "bm25.trec") == {"Q_1": [("Q_1_10_0", 2.5), ("Q_1_01_1", 1.5)]}
    assert load_profiles(tmp_path / "profiles.yaml")["smoke"] == {"inherit": "default"}
    assert load_decisions(tmp_path / "verification.json") == {"q1": {"Venezia": False}}


def test_valid_neighbours_of_the_refused_inputs_load(tmp_path: Path) -> None:
    """The refusals are not blanket ones: votes 0.0/1.0, convergence 0 and 1, integer ranks given
    as numbers, an empty QUIT split beside a full one and corpus passages of distractor questions
    (``distractors.json``) all load."""
    _write(
        tmp_path,
        {
            "t.json": _json(
                [_trivia(Convergence=[0, 1], Scores=[{"Pear": 0.0, "Apple": 1.0}, {"Pear": 1, "Apple": 1}])]
            ),
            "w.json": _json([_wiki(_hint("b", 2, convergence=1), _hint("a", 1, convergence=0))]),
            "q/dev.json": _json([_quit()]),
            "q/test.json": "[]",
            "q/distractors.json": _json(
                [{"id": "Q_9", "question": "?", "answers": ["x"], "hints": [{"hint": "Stray."}]}]
            ),
            "q/corpus/corpus.jsonl": _corpus({"id": "Q_9_1_0", "contents": "Stray."}),
        },
    )
    t = load_triviahg(tmp_path / "t.json").questions["Q_1"]
    assert [h.scores for h in t.hints] == [{"Pear": 0, "Apple": 1}, {"Pear": 1, "Apple": 1}]
    assert [h.text for h in load_wikihint(tmp_path / "w.json").questions["w_1"].hints] == ["a", "b"]
    q = load_quit(tmp_path / "q")
    assert q.splits == {"dev": ["Q_1"], "test": []} and q.passages["Q_9_1_0"].qid == "Q_9"
    assert "Q_9_1_0" not in q.qrels["Q_1"]


def test_the_data_command_refuses_an_empty_source_in_one_line(tmp_path: Path) -> None:
    """``data triviahg:<[]>`` used to print "min() arg is an empty sequence"."""
    f = tmp_path / "empty.json"
    f.write_text("[]")
    out = subprocess.run([sys.executable, "-m", "inferqa_utils", "data", f"triviahg:{f}"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "empty.json" in out.stderr and "holds no record" in out.stderr and "min()" not in out.stderr
