"""The decidability table: per finding of a profile's run, the units its verdict rests on now, the
units and questions a decision would need at the observed effect
(:func:`inferqa_utils.measure.decidability.units_needed`), and the cheapest shipped profile or data
that has that many questions, with its time projected from the run's ledger.

**Questions a profile reads for a finding** (:func:`questions_read`): the analyses feeding the
finding (:data:`inferqa_utils.record.ledger.ANALYSES`) name its notebook; notebook 06 reads
``damaging_questions`` test questions on the answer-supporting corpus and
``damaging_control_questions`` of them on the answer-containing control, notebook 07
``beyond_questions``, notebook 02's fair control ``pool_questions`` (:func:`reads_control` says which
findings read the control), every other notebook the whole
test split (each ``None`` = all), at most the test split of the profile's dataset release.

**Data that adds questions** (:data:`MORE_DATA`): labelling a release's unlabelled dev split
(embedded: its dev questions), or building and labelling the source questions a release has not
built (TriviaHG: the validation questions past the first ``max_questions``, at the rate of usable
test questions the built ones gave); their cost per question is the release's own labelling (and
convergence) seconds per test question, from its manifest.

**Projected time** (:func:`projected_seconds`): the seconds per question read of the analyses
feeding the finding in this run's ledger, times the questions the option reads (a profile: all it
reads; more data: the questions needed), plus the data's cost per question added; on the
slow reference host (``inferqa_utils/record/reference_costs.json``) the seconds inside the models are
scaled by the ratio of the two hosts' 1.5B prefill and decode rates applied to the tokens the
analyses evaluated and generated. Options are tried cheapest first; none reaching the questions
needed is said so. When the analyses reused model outputs (LLM cache hits, or none computed: their
outputs came from a release or a cache) the projection is a lower bound, shown with "≥"
(:func:`reused_outputs`): their seconds say nothing of what new questions cost.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.config import PATHS, declared_profile_names, profile
from ..record.projection import minutes

#: the model whose rates scale the LLM seconds to the slow reference host
RATE_MODEL = "qwen2.5-coder-1.5b"


@dataclass(frozen=True)
class MoreData:
    """A way to give a dataset more test questions: what to do, and how many it adds."""

    dataset: str
    what: str
    kind: str  # "dev" (label the release's dev split) | "unbuilt" (build the source's unbuilt questions)


MORE_DATA = (
    MoreData("embedded", "label the embedded release's dev split", "dev"),
    MoreData("triviahg-val", "build and label TriviaHG's unbuilt validation questions", "unbuilt"),
)


def _release_manifest(dataset: str) -> dict[str, Any] | None:
    path = PATHS.root / "data" / dataset / "release" / "manifest.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def test_questions(dataset: str) -> int | None:
    """The test questions of the dataset's release (``None``: no release manifest)."""
    m = _release_manifest(dataset)
    try:
        return int(m["build"]["counts"]["per_split"]["test"])  # type: ignore[index]
    except (TypeError, KeyError, ValueError):
        return None


def more_data(dataset: str) -> tuple[MoreData, int, float] | None:
    """``(option, questions it adds, seconds per added question)`` for the dataset (module
    docstring), from its release manifest; ``None`` when it has no such option."""
    option = next((o for o in MORE_DATA if o.dataset == dataset), None)
    m = _release_manifest(dataset)
    if option is None or m is None:
        return None
    try:
        counts, steps = m["build"]["counts"], m["steps"]
        test = int(counts["per_split"]["test"])
        per_q = (
            float(steps["labeling"]["seconds"]) + float(steps.get("convergence", {}).get("seconds", 0))
        ) / test
        if option.kind == "dev":
            return option, int(counts["per_split"]["dev"]), per_q
        built, tried = int(counts["questions"]), int(m["build"]["parameters"]["max_questions"])
        left = int(counts["source_questions"]) - tried
        return option, int(left * built / tried), per_q
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None


def _notebooks(fid: str) -> set[str]:
    from ..record.ledger import ANALYSES

    return {a.stage for a in ANALYSES.values() if fid in a.feeds}


def reads_control(fid: str) -> bool:
    """Whether the finding's measure reads notebook 06's answer-containing control (its questions
    are ``damaging_control_questions``)."""
    from ..measure.paper import load_paper_numbers
    from ..stages import CONTAINING

    f = next((x for x in load_paper_numbers() if x.id == fid), None)
    return f is not None and (f.params.get("corpus") == CONTAINING or f.measure == "damaging_by_corpus")


def questions_read(params: Mapping[str, Any], fid: str) -> int | None:
    """The test questions a profile with ``params`` reads for finding ``fid`` (module docstring)."""
    from ..record.ledger import ANALYSES

    split = test_questions(str(params.get("dataset_name", "")))
    n_test = params.get("n_test") or split
    nbs = _notebooks(fid)
    if "06" in nbs:
        n = params.get("damaging_questions") or n_test
        if reads_control(fid):
            n = params.get("damaging_control_questions") or n
    elif "07" in nbs:
        n = params.get("beyond_questions") or n_test
    elif fid in ANALYSES["02.fair_control"].feeds:
        n = params.get("pool_questions") or n_test
    else:
        n = n_test
    if n is None:
        return None
    return int(min(n, split)) if split else int(n)


def _rates(ref: Mapping[str, Any] | None) -> tuple[float, float] | None:
    r = (ref or {}).get(RATE_MODEL)
    if not isinstance(r, Mapping):
        return None
    try:
        return float(r["prefill_tok_s"]), float(r["decode_tok_s"])
    except (KeyError, TypeError, ValueError):
        return None


def reference_rates() -> dict[str, Any] | None:
    """The slow reference host's LLM rates (``reference_costs.json``'s default profile record)."""
    from ..record.projection import load_reference

    rec = load_reference().get("default") or {}
    return rec.get("rates") if isinstance(rec.get("rates"), Mapping) else None


def projected_seconds(
    rows: Sequence[Mapping[str, Any]], host: Mapping[str, Any] | None, slow: Mapping[str, Any] | None
) -> tuple[float, float | None]:
    """``(seconds here, seconds on the slow reference host)`` of ledger ``rows`` (module docstring;
    ``None`` for the slow host when a host's rates are unknown)."""
    here = sum(float(r.get("seconds") or 0) for r in rows)
    h, s = _rates(host), _rates(slow)
    if h is None or s is None:
        return here, None
    out = 0.0
    for r in rows:
        llm, secs = float(r.get("llm_s") or 0), float(r.get("seconds") or 0)
        ev, gen = float(r.get("evaluated") or 0), float(r.get("generated") or 0)
        floor_h, floor_s = ev / h[0] + gen / h[1], ev / s[0] + gen / s[1]
        out += (llm * floor_s / floor_h if floor_h > 0 else llm) + max(0.0, secs - llm)
    return here, out


def _options(dataset: str, fid: str) -> list[tuple[str, int, float]]:
    """``(name, questions it reads for the finding, extra seconds per question)``: the shipped profiles
    on ``dataset`` and its :data:`MORE_DATA`, each with the questions it reads for ``fid``."""
    out = []
    for name in declared_profile_names():
        try:
            params = profile(name)
        except Exception:
            continue
        if params.get("dataset_name") != dataset:
            continue
        n = questions_read(params, fid)
        if n:
            out.append((f"profile {name}", n, 0.0))
    extra = more_data(dataset)
    split = test_questions(dataset)
    if extra is not None and split:
        option, added, per_q = extra
        out.append((option.what, split + added, per_q))
    return out


def decidability_rows(
    profile_name: str,
    verdicts: Any,
    ledger: Sequence[Mapping[str, Any]],
    host: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """One row per finding of ``verdicts`` (:func:`inferqa_utils.verdicts.findings.verdict_table`):
    the units its verdict rests on, the units and questions needed, the questions this run read for
    it, its seconds per question from ``ledger``, and the cheapest option that reads enough
    questions with its projected time here (the run's LLM rates ``host``, ``{model: {prefill_tok_s,
    decode_tok_s}}``) and on the slow reference host (module docstring)."""
    params = profile(profile_name)
    dataset = str(params.get("dataset_name", ""))
    slow = reference_rates()
    out = []
    for fid, r in verdicts.iterrows():
        fid = str(fid)
        row: dict[str, Any] = {
            "id": fid,
            "verdict": str(r["verdict"]),
            "rests_on": _int(r.get("informative")),
            "n": _int(r.get("n")),
            "units_needed": _int(r.get("units needed")),
            "questions_needed": _int(r.get("questions needed")),
            "how": str(r.get("needed how") or ""),
            "reached_by": None,
            "projected_s": None,
            "projected_slow_s": None,
            "lower_bound": False,
            "note": "",
        }
        out.append(row)
        if row["verdict"] == "by construction":
            row["note"] = "by construction: more questions do not change it"
            continue
        if row["verdict"] in ("holds", "contradicted"):
            row["note"] = f"decided on this run ({row['verdict']})"
            continue
        q = row["questions_needed"]
        if q is None:
            row["note"] = row["how"] or "not measured"
            continue
        read_now = questions_read(params, fid) or 0
        feeding = [x for x in ledger if any(f.get("finding") == fid for f in x.get("feeds") or [])]
        here, slow_s = projected_seconds(feeding, host, slow)
        row["lower_bound"] = reused_outputs(feeding)
        per_q = here / read_now if read_now else None
        per_q_slow = slow_s / read_now if read_now and slow_s is not None else None
        options = _options(dataset, fid)
        reach = [o for o in options if o[1] >= q]
        if not reach:
            most = max((o[1] for o in options), default=read_now)
            row["note"] = f"no shipped profile or data reads {q:,} questions (at most {most:,})"
            continue
        name, n, extra = min(reach, key=lambda o: (o[2], o[1]))
        row["reached_by"] = name
        # a profile reads all its questions; more data is labelled only as far as needed
        reads = n if extra == 0 else q
        if per_q is not None:
            row["projected_s"] = round(reads * per_q + q * extra, 1)
        if per_q_slow is not None:
            row["projected_slow_s"] = round(reads * per_q_slow + q * extra, 1)
    return out


def _int(v: Any) -> int | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else int(f)


def reused_outputs(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the ledger ``rows`` feeding a finding reused model outputs (LLM cache hits) or made no
    model call at all (their outputs came from a release or a cache): their seconds then say nothing
    of what new questions cost, and a projection from them is a lower bound."""
    if not rows:
        return True
    reused = sum(float(r.get("reused") or 0) for r in rows)
    calls = sum(float(r.get("evaluated") or 0) + float(r.get("generated") or 0) for r in rows)
    return reused > 0 or calls == 0


def _time(s: float | None, lower_bound: bool = False) -> str:
    if s is None:
        return "—"
    return ("≥ " if lower_bound else "") + minutes(s)


def decidability_text(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The table as aligned text lines (``check``'s output)."""
    lines = [
        f"{'finding':40} {'verdict':15} {'units now':>9} {'needed':>8} {'questions':>9}  "
        f"{'here':>11} {'slow host':>11}  reached by"
    ]
    for r in rows:
        lines.append(
            f"{r['id']:40} {r['verdict']:15} {_cell(r['rests_on']):>9} {_cell(r['units_needed']):>8} "
            f"{_cell(r['questions_needed']):>9}  "
            f"{_time(r['projected_s'], r.get('lower_bound', False)):>11} "
            f"{_time(r['projected_slow_s'], r.get('lower_bound', False)):>11}  {r['reached_by'] or r['note']}"
        )
    return lines


def decidability_markdown(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The table in Markdown (the check report and the results page)."""
    from ..present.tables import markdown_table

    return markdown_table(
        [
            "finding",
            "verdict",
            "units now",
            "units needed",
            "questions needed",
            "reached by",
            "projected here",
            "projected, slow host",
            "how",
        ],
        [
            [
                f"`{r['id']}`",
                r["verdict"],
                _cell(r["rests_on"]),
                _cell(r["units_needed"]),
                _cell(r["questions_needed"]),
                r["reached_by"] or r["note"],
                _time(r["projected_s"], r.get("lower_bound", False)),
                _time(r["projected_slow_s"], r.get("lower_bound", False)),
                r["how"],
            ]
            for r in rows
        ],
    )


def _cell(v: int | None) -> str:
    return "—" if v is None else f"{v:,}"
