"""partita summary: the verdict of existing results folders again, or (--all) every table."""

from __future__ import annotations

import argparse
import sys

from ..option_lists import path_arg
from ..report import print_run_summary, verdict
from ..report.headline import print_headline
from ..results import ResultError, load_run_dir, nothing_ran, unreadable_results


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("summary", help="print the verdict (or every table) of results folders",
                       description="Print the verdict of folders written by `partita run`: per implementation the "
                       "median over sizes of overhead, perceived bandwidth under a laggard and availability under "
                       "noise (best marked), then one line per finding of the report (docs/report.md). --all prints "
                       "the OMB-style tables of every run and metric instead.")
    p.add_argument("folders", nargs="+", type=path_arg, metavar="folder", help="results/<timestamp>-<suite> folders")
    p.add_argument("--all", action="store_true", help="every table: one per run and metric, implementations side "
                   "by side (median [95%% CI of the median])")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    try:
        manifests = [(folder, load_run_dir(folder)) for folder in args.folders]
    except ResultError as e:  # no readable manifest
        print(f"partita summary: error: {e}", file=sys.stderr)
        return 2
    # a result file that cannot be read is named and makes the exit status 1, in both modes
    errors = [e for folder, manifest in manifests for e in unreadable_results(folder, manifest)]
    if args.all:
        for folder, manifest in manifests:
            print_run_summary(folder, manifest)
    elif not errors:
        runs, h = verdict(args.folders)
        report = args.folders[0] / "report.html"
        print_headline(h, args.folders, report if report.is_file() and len(args.folders) == 1 else None,
                       problems=runs.problems)
    for e in errors:
        print(f"partita summary: error: {e}", file=sys.stderr)
    idle = [(folder, manifest) for folder, manifest in manifests if nothing_ran(manifest)]
    for folder, manifest in idle:
        print(f"partita summary: error: nothing ran in {folder}: none of its {len(manifest['runs'])} launch(es) gave "
              "a result (each failed or was unavailable)", file=sys.stderr)
    return 1 if errors or idle else 0
