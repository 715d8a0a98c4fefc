"""partita run: run a suite of benchmarks and summarise the results."""

from __future__ import annotations

import argparse
import os
import sys

from .. import cluster
from ..option_lists import list_entries, nonempty, path_arg
from ..launch import (RANKS_PER_CORE, BuildInfo, LaunchError, check_launcher, check_policy, check_rank_count,
                      distinct_impls)
from ..report import explain_run
from ..results import nothing_ran
from ..runner import results_folder, run_suite
from ..suite import MAX_REPEAT, SuiteError, builtin_suites, load_suite


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="run a benchmark suite and summarise it",
        description="Run a suite (a built-in one by name or a TOML file) through mpiexec or the given launcher, "
        "collect every program's JSON result in a new folder under --out, write report.html there (partita report) "
        "and print the verdict: a headline table per implementation and one line per finding (every table: "
        "partita summary FOLDER --all).",
        epilog=f"Built-in suites: {', '.join(builtin_suites())}. "
        "Implementations: native (the MPI library's own partitioned calls) or partita:<policy> "
        "(libpartita preloaded; policies none, bulk, static, model, timer, fixed<N>, table, adaptive), "
        "optionally partita:<policy>@<transport> (mpi, fabric, auto: libpartita's transport).",
    )
    p.add_argument("--suite", default="quick", type=nonempty, help="suite name or TOML file (default: quick)")
    p.add_argument("--out", default="results", type=path_arg, help="parent folder of the results (default: results)")
    p.add_argument("--np", type=int, help="ranks for every run (default: each run's own, 2 for most). When every "
                   "rank starts on this machine (no --launcher or $PARTITA_LAUNCHER; or --cluster, whose hosts are "
                   f"this machine), at most {RANKS_PER_CORE} per core it may use (oversubscribed): a larger count, "
                   "here or in a suite run, is refused before anything is launched")
    p.add_argument("--launcher", help="launch with this command instead of mpiexec, e.g. 'srun' (gets -n NP)")
    p.add_argument("--cluster", metavar="emulated:HOSTS[:RATE]",
                   help="run across an emulated cluster on this machine (root; docs/two-hosts.md), e.g. "
                   "emulated:2 or emulated:2:1gbit: the running one, else one brought up for the run and taken "
                   "down after it; ranks fill the hosts in order, ceil(NP/hosts) per host; the manifest records hosts "
                   "and link rate")
    p.add_argument("--impl", help="comma-separated implementations for every run, e.g. native,partita:timer "
                   "(default: each run's own list)")
    p.add_argument("--repeat", type=int, help="launch every implementation of every run this many times, "
                   "interleaved, and pool the launches in the summary (default: each run's own 'repeat', 1 for "
                   "most; see docs/suites.md)")
    p.add_argument("--build", help="build folder holding partita-build.json (default: $PARTITA_BUILD or ./build)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    try:
        suite = load_suite(args.suite)
        build = BuildInfo.find(args.build)
    except (SuiteError, LaunchError) as e:
        print(f"partita run: error: {e}", file=sys.stderr)
        return 2
    for opt in ("np", "repeat"):
        if getattr(args, opt) is not None and getattr(args, opt) < 1:
            print(f"partita run: error: --{opt} must be at least 1", file=sys.stderr)
            return 2
    if args.repeat is not None and args.repeat > MAX_REPEAT:
        print(f"partita run: error: --repeat must be at most {MAX_REPEAT}, not {args.repeat}", file=sys.stderr)
        return 2
    try:
        impls = [s.strip() for s in list_entries(args.impl, "--impl")] if args.impl is not None else None
    except ValueError as e:
        print(f"partita run: error: {e}", file=sys.stderr)
        return 2
    try:
        # one spelling per implementation (partita:TIMER is partita:timer), each once: two spellings of one
        # wrote the same result file, the second launch over the first
        if impls is not None:  # replaces every run's list
            impls = distinct_impls(impls, "--impl")
        else:
            for spec in suite.runs:
                spec.impls = distinct_impls(spec.impls, f"run '{spec.name}' of suite {args.suite}: 'impl'")
        # every implementation the suite would launch, before anything is launched: a misspelt policy is an
        # error here, not a suite of launches that each come back unavailable
        for impl in dict.fromkeys(impls or [i for spec in suite.runs for i in spec.impls]):
            check_policy(build, impl)
        if args.cluster and args.launcher:
            raise LaunchError("--cluster and --launcher exclude each other")
        if not args.cluster:  # --cluster brings its own launcher
            check_launcher(args.launcher)
        # without a launcher of their own (--cluster's hosts are this machine too) every rank starts here
        here = bool(args.cluster) or not (args.launcher or os.environ.get("PARTITA_LAUNCHER"))
        if args.np is not None:
            check_rank_count(args.np, f"--np {args.np}", here)
        else:
            for spec in suite.runs:
                check_rank_count(spec.np, f"run '{spec.name}' of suite {args.suite}: np = {spec.np}", here)
        if args.cluster:
            spec, launcher = cluster.parse_spec(args.cluster), cluster.launcher(build)
            with cluster.session(spec, log=sys.stdout) as where:
                manifest, out = _run(args, suite, build, impls, launcher, {"cluster": where})
        else:
            manifest, out = _run(args, suite, build, impls, args.launcher, {})
    except LaunchError as e:
        print(f"partita run: error: {e}", file=sys.stderr)
        return 2
    except _ResultsUnwritable as e:
        print(f"partita run: error: {e}", file=sys.stderr)
        return 2
    print()
    explain_run(out)
    failed = [r for r in manifest["runs"] if r["status"] == "failed"]
    if failed:
        print(f"partita: {len(failed)} run(s) failed; see the .log files in {out}", file=sys.stderr)
        return 1
    if nothing_ran(manifest):
        # every launch was unavailable (program not built, implementation missing): nothing was measured
        print(f"partita run: error: no benchmark ran ({len(manifest['runs'])} launch(es), all unavailable; "
              f"see {out / 'manifest.json'})", file=sys.stderr)
        for reason in _distinct_reasons(manifest["runs"]):
            print(f"  unavailable: {reason}", file=sys.stderr)
        return 1
    return 0


def _distinct_reasons(runs: list[dict], most: int = 5) -> list[str]:
    """Why launches were unavailable, each reason once, in the order met (at most `most`)."""
    reasons = list(dict.fromkeys(r.get("reason") or "no reason recorded" for r in runs))
    return reasons[:most] + ([f"... and {len(reasons) - most} more"] if len(reasons) > most else [])


class _ResultsUnwritable(Exception):
    """The results folder could not be created or written (message says where)."""


def _run(args, suite, build, impls, launcher, meta):
    try:
        out = results_folder(args.out, suite)
    except OSError as e:
        raise _ResultsUnwritable(f"cannot create the results folder in {args.out}: {e.strerror or e}") from e
    print(f"partita: suite {suite.name} ({len(suite.runs)} runs) -> {out}")
    if suite.description:
        print(f"partita: {suite.description}")
    if meta.get("cluster"):
        c = meta["cluster"]
        print(f"partita: across {len(c['hosts'])} emulated hosts ({', '.join(c['hosts'])}), link {c['rate']}")
    try:
        return run_suite(suite, build, out, args.np, launcher, impls, args.repeat, meta=meta), out
    except OSError as e:  # e.g. the results folder became unwritable or the disk is full
        raise _ResultsUnwritable(f"cannot write the results in {out}: {e}") from e
