"""Break the scoreboard's rules one line at a time and check that a named test catches each break.

Each entry of :data:`BREAKS` names a one-line change to the package (a rule broken on purpose: Holm
skipped, a and b swapped in a measure, a guard's ``<`` turned into ``<=``, …) and the tests that must
fail with it. For every break, a copy of the working tree is made in a temporary folder (the
checkout is never written), the line is replaced (it must occur exactly once), and the named tests
run there with ``python -m pytest``; a break is *caught* when they fail. The script then runs the
same tests on the unbroken copy, which must pass.

    python scripts/break_rules.py            # every break; exit code 1 when one survives

Besides :data:`BREAKS`, every finding of ``paper_numbers.yaml`` gets its rule turned the other way
(:func:`finding_breaks`: a > b → a < b, a margin claim reversed, "adds little" made a margin claim, a
ratio's or a relative difference's range moved out of reach), which its three cases in
tests/test_finding_rules.py must catch.
    python scripts/break_rules.py --list     # the breaks and their tests
    python scripts/break_rules.py --only holm-skipped ab-swap-dense

Run from the checkout with its virtual environment (``.venv/bin/python scripts/break_rules.py``);
each break takes the seconds of its tests (a minute or two in all).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Break:
    name: str
    file: str
    old: str
    new: str
    tests: tuple[str, ...]


F, V, C = (
    "inferqa_utils/verdicts/findings.py",
    "inferqa_utils/measure/verdict.py",
    "inferqa_utils/verdicts/check.py",
)
TF, TR, TC = "tests/test_findings.py", "tests/test_finding_rules.py", "tests/test_check.py"

BREAKS: tuple[Break, ...] = (
    # the breaks that survived the earlier test suite
    Break(
        "holm-skipped",
        F,
        "adjusted = adjust([r.scored for r in raw])",
        "adjusted = [r.scored for r in raw]",
        (
            f"{TF}::test_verdict_table_reports_the_adjusted_p_and_verdict",
            f"{TC}::test_the_report_prints_holms_p_as_p_holm",
        ),
    ),
    Break(
        "report-raw-p-as-holm",
        C,
        '_p(r["p"]), _p(r["p (Holm)"]), r["rule"]',
        '_p(r["p"]), _p(r["p"]), r["rule"]',
        (f"{TC}::test_the_report_prints_holms_p_as_p_holm",),
    ),
    Break(
        "ab-swap-dense",
        F,
        'return _pair(t, name, "bm25", f"{metric}: {name} vs bm25")',
        'return _pair(t, "bm25", name, f"{metric}: {name} vs bm25")',
        (f"{TR}::test_each_rule_reaches_each_verdict",),
    ),
    Break(
        "ab-swap-cot",
        F,
        "return _pair(t, base, cot_name,",
        "return _pair(t, cot_name, base,",
        (f"{TR}::test_each_rule_reaches_each_verdict",),
    ),
    Break(
        "ab-swap-ft-retriever",
        F,
        "        t,\n        name,\n        base[0],\n        f\"{metric}: {name} vs {base[0]}; fine-tuning",
        "        t,\n        base[0],\n        name,\n        f\"{metric}: {name} vs {base[0]}; fine-tuning",
        (f"{TR}::test_each_rule_reaches_each_verdict",),
    ),
    Break(
        "unmeasured-scored-zero",
        F,
        "both = table[[a, b]].dropna()",
        "both = table[[a, b]].fillna(0.0)",
        (f"{TR}::test_unmeasured_questions_are_dropped_not_scored_zero",),
    ),
    Break(
        "closed-edges-inside",
        V,
        "if lo > r0 and hi < r1:",
        "if lo >= r0 and hi <= r1:",
        (f"{TF}::test_decide_hand_checked",),
    ),
    Break(
        "closed-edges-outside",
        V,
        "if hi < r0 or lo > r1:",
        "if hi <= r0 or lo >= r1:",
        (f"{TF}::test_decide_hand_checked",),
    ),
    Break(
        "units-guard-le",
        V,
        "    if measured < MIN_UNITS:",
        "    if measured <= MIN_UNITS:",
        (f"{TF}::test_ten_units_all_discordant_are_enough",),
    ),
    Break(
        "discordant-guard-le",
        V,
        "        if d < MIN_UNITS:",
        "        if d <= MIN_UNITS:",
        (
            f"{TF}::test_the_guard_counts_discordant_questions_not_measured_ones",
            f"{TF}::test_ten_units_all_discordant_are_enough",
        ),
    ),
    Break(
        "moved-guard-le",
        V,
        "        if moved < MIN_UNITS:",
        "        if moved <= MIN_UNITS:",
        (f"{TF}::test_equivalence_needs_the_intervention_to_move_ten_units",),
    ),
    Break(
        "ledger-rerun-twice",
        C,
        "for path, _m, fresh in _allocate(run_manifests(profile_name, executions)):",
        "for path, _m, fresh in [(p, m, _finished_notebooks(m)) for p, m in run_manifests(profile_name, "
        "executions)]:",
        (f"{TC}::test_a_notebook_rerun_in_a_newer_run_is_counted_once_in_the_ledger",),
    ),
    Break(
        "eta-every-notebook",
        "inferqa_utils/record/projection.py",
        "rest = sum(self.per_notebook.get(s, 0.0) for s in left)",
        "rest = sum(self.per_notebook.values())",
        ("tests/test_projection.py::test_projection_announces_a_slow_host_and_gives_an_eta",),
    ),
    Break(
        "failed-run-not-noted",
        C,
        'if not found or run_outcome(found[0][1], profile_name) not in ("failed", "interrupted", "running"):',
        "if True:",
        (f"{TC}::test_a_failed_newest_run_is_noted",),
    ),
    Break(
        "docs-from-not-overriding",
        "inferqa_utils/present/docs_blocks.py",
        "values[name] = node",
        "values.setdefault(name, node)",
        ("tests/test_docs_records.py::test_values_from_another_file_and_its_record_listed",),
    ),
    # the rules of the scoreboard
    Break(
        "guard-counts-measured",
        V,
        "        d = int(s.discordant or 0)",
        "        d = len(s.a)",
        (f"{TF}::test_the_guard_counts_discordant_questions_not_measured_ones",),
    ),
    Break(
        "holm-never-demotes",
        V,
        "if s.verdict in (HOLDS, CONTRADICTED) and p >= alpha:",
        "if s.verdict in (HOLDS, CONTRADICTED) and p >= alpha and False:",
        (f"{TF}::test_holm_decides_the_verdicts_and_keeps_the_unadjusted_beside",),
    ),
    Break(
        "sign-test-interval-unscaled",
        V,
        "        (2 * lo - 1) * m / n * s.scale,\n        (2 * hi - 1) * m / n * s.scale,",
        "        (2 * lo - 1) * s.scale,\n        (2 * hi - 1) * s.scale,",
        (f"{TF}::test_exact_sign_test_and_interval_by_hand",),
    ),
    Break(
        "tango-variance",
        V,
        "var = n * (2 * q + delta * (1 - delta))",
        "var = n * (2 * q)",
        (f"{TF}::test_tango_score_statistic_by_hand",),
    ),
    Break(
        "share-conditional",
        F,
        "        a_at_least_b=True,\n        read=len(p),",
        "        read=len(p),",
        (f"{TR}::test_each_rule_reaches_each_verdict",),
    ),
    Break(
        "probe3-prefix-kept",
        F,
        'other = t[~t["prefix"].astype(bool)]',
        "other = t",
        (f"{TR}::test_probe3_leaves_out_the_prefix_questions",),
    ),
    Break(
        "optimal-not-by-construction",
        F,
        "    if reader is None or str(reader) not in labelers:",
        "    if True:",
        (f"{TR}::test_optimal_is_by_construction_when_the_reader_labelled",),
    ),
    Break(
        "authors-convention-off",
        F,
        "counted = both.dropna() if relevant is None else both[both.index.astype(str).isin(relevant)]",
        "counted = both.fillna(0.0)",
        (
            f"{TR}::test_cross_corpus_authors_convention_skips_supporting_questions_without_a_relevant_passage",
        ),
    ),
    Break(
        "lengths-unclustered",
        F,
        'if "qid" in t.columns and sup["qid"].notna().all()',
        'if False and sup["qid"].notna().all()',
        (f"{TR}::test_passage_lengths_are_resampled_by_question",),
    ),
    Break(
        "damage-unweighted",
        F,
        '        a_weight=t["w_a"].to_numpy(float),\n        b_weight=t["w_b"].to_numpy(float),\n    )',
        "    )",
        (f"{TR}::test_damage_by_corpus_is_normalised_by_the_questions_ever_right",),
    ),
    Break(
        "decidability-no-guard-floor",
        "inferqa_utils/measure/decidability.py",
        "        n_needed = max(n_needed, math.ceil(MIN_UNITS * len(s.a) / units_now))",
        "        pass",
        (f"{TF}::test_units_needed_never_fewer_questions_than_the_guard_needs",),
    ),
    Break(
        "decidability-sign-test-floor",
        "inferqa_utils/measure/decidability.py",
        "        m = max(m, MIN_UNITS)",
        "        pass",
        (f"{TF}::test_units_needed_never_fewer_questions_than_the_guard_needs",),
    ),
    Break(
        "projection-from-reused-outputs",
        "inferqa_utils/verdicts/decidability.py",
        "    return reused > 0 or calls == 0",
        "    return False",
        (f"{TC}::test_a_projection_from_reused_outputs_is_a_lower_bound",),
    ),
    Break(
        "adds-little-not-negative",
        V,
        '        outside.append((_two(t.below(0.0)), "below 0 (it hurts)"))',
        "        pass",
        (f"{TF}::test_decide_hand_checked", f"{TR}::test_each_rule_reaches_each_verdict"),
    ),
)


PAPER_NUMBERS = "inferqa_utils/measure/paper_numbers.yaml"
#: per relation, its rule broken: the region turned the other way, or (``None``) a bound moved out
#: of reach by :data:`_BOUND`
_BROKEN = {
    "a > b": "a < b",
    "a < b": "a > b",
    "a - b >= margin": "a - b <= margin",
    "a - b <= margin": "a - b >= margin",
    "adds little": "a - b >= margin",
    "ratio a/b in [lo, hi]": None,
    "abs(a - b) / b <= margin": None,
}
_BOUND = {"ratio a/b in [lo, hi]": ("lo", 0.9), "abs(a - b) / b <= margin": ("margin", 0.000001)}


def finding_breaks() -> tuple[Break, ...]:
    """Per finding of ``paper_numbers.yaml``: its rule turned the other way, which the finding's three
    cases in tests/test_finding_rules.py must catch (holds and contradicted swap, or holds is lost)."""
    import yaml

    text = (CHECKOUT / PAPER_NUMBERS).read_text(encoding="utf-8")
    out = []
    for entry in yaml.safe_load(text)["findings"]:
        fid, rel = entry["id"], entry["relation"]
        block = text[text.index(f"  - id: {fid}\n") :]
        line = f'    relation: "{rel}"'
        if _BROKEN[rel] is not None:
            old = block[: block.index(line) + len(line)]
            new = old[: -len(line)] + f'    relation: "{_BROKEN[rel]}"'
        else:
            key, value = _BOUND[rel]
            bound = f"    {key}: {entry[key]}"
            old = block[: block.index(bound) + len(bound)]
            new = old[: -len(bound)] + f"    {key}: {value}"
        tests = tuple(
            f"tests/test_finding_rules.py::test_each_rule_reaches_each_verdict[{fid}-{v}]"
            for v in ("holds", "contradicted", "inconclusive")
        )
        out.append(Break(f"rule-{fid}", PAPER_NUMBERS, old, new, tests))
    return tuple(out)


def copy_tree(dest: Path) -> None:
    """The working tree's tracked and new files (not the ignored ones) into ``dest``."""
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=CHECKOUT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    for rel in files:
        src = CHECKOUT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def run_tests(root: Path, tests: tuple[str, ...]) -> tuple[bool, float, str]:
    env = {**os.environ, "PYTHONPATH": str(root), "INFERQA_LLM_CACHE": str(root / ".cache" / "llm.sqlite")}
    env.pop("INFERQA_ROOT", None)
    t0 = time.time()
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    return out.returncode == 0, time.time() - t0, (out.stdout + out.stderr)[-3000:]


def apply(root: Path, b: Break) -> None:
    path = root / b.file
    text = path.read_text(encoding="utf-8")
    if text.count(b.old) != 1:
        raise SystemExit(f"[break] {b.name}: the line to break occurs {text.count(b.old)} times in {b.file}")
    path.write_text(text.replace(b.old, b.new), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", action="store_true", help="list the breaks and their tests")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="only these breaks")
    args = ap.parse_args(argv)
    breaks = [b for b in (*BREAKS, *finding_breaks()) if not args.only or b.name in args.only]
    if args.list:
        for b in breaks:
            print(f"{b.name:28} {b.file}: {b.old!r} → {b.new!r}\n{'':28} {', '.join(b.tests)}")
        return 0
    survived = []
    with tempfile.TemporaryDirectory(prefix="inferqa-breaks-") as tmp:
        base = Path(tmp) / "base"
        copy_tree(base)
        tests = tuple(dict.fromkeys(t for b in breaks for t in b.tests))
        ok, secs, output = run_tests(base, tests)
        print(f"[break] unbroken: the {len(tests)} tests {'pass' if ok else 'FAIL'} ({secs:.0f} s)")
        if not ok:
            print(output)
            return 1
        for b in breaks:
            root = Path(tmp) / b.name
            shutil.copytree(base, root)
            apply(root, b)
            passed, secs, _output = run_tests(root, b.tests)
            caught_by = ", ".join(t.split("::")[-1] for t in b.tests)
            print(
                f"[break] {b.name:28} {'SURVIVED' if passed else 'caught'} by {caught_by} "
                f"({secs:.0f} s)"
            )
            if passed:
                survived.append(b.name)
            shutil.rmtree(root)
    print(
        f"[break] {len(breaks) - len(survived)} of {len(breaks)} breaks caught"
        + (f"; survived: {', '.join(survived)}" if survived else "")
    )
    return 1 if survived else 0


if __name__ == "__main__":
    raise SystemExit(main())
