"""partita report: one self-contained HTML page of figures and findings from results folders."""

from __future__ import annotations

import argparse
import sys

from ..option_lists import path_arg
from ..report import ReportError, write_report
from ..results import output_file_problem, replaces_input


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report", help="write an HTML report with figures and findings of results folders",
        description="Write one self-contained HTML file (figures embedded, nothing fetched when it is viewed) "
        "from one or more folders written by `partita run`: the verdict table, and for whatever the folders "
        "hold the seed papers' figures (overhead, perceived bandwidth, availability, early-bird share and "
        "early arrival, send mechanisms, Sweep3D / Halo3D / stencil, the PLogGP model), each with what was run "
        "and a finding computed from the data. Several folders are compared: a run found in more than one is "
        "drawn once, its implementations prefixed with the folder name. See docs/report.md.")
    p.add_argument("folders", nargs="+", type=path_arg, metavar="RESULTS_DIR", help="results/<timestamp>-<suite> folders")
    p.add_argument("-o", "--output", type=path_arg, help="the HTML file (default: report.html in the first folder)")
    p.add_argument("--trace", type=path_arg, metavar="TRACE_DIR", help="also draw the arrival pattern of this trace")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    out = args.output or args.folders[0] / "report.html"
    if problem := output_file_problem(args.output, "-o"):  # before reading and drawing everything
        print(f"partita report: error: {problem}", file=sys.stderr)
        return 2
    if replaces_input(out, args.folders + ([args.trace] if args.trace else [])):
        print(f"partita report: error: -o {out} is a file of the folders the report reads (a result, manifest or "
              f"run log); give another file", file=sys.stderr)
        return 2
    if args.trace is not None and not args.trace.is_dir():
        print(f"partita report: error: {args.trace}: not a trace folder", file=sys.stderr)
        return 2
    try:
        runs, _ = write_report(args.folders, out, args.trace)
    except ReportError as e:
        print(f"partita report: error: {e}", file=sys.stderr)
        return 2
    for p in runs.problems:
        print(f"partita report: note: {p}", file=sys.stderr)
    print(f"report: {out}")
    return 0
