"""partita summary: print the summary tables of an existing results folder again."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..report import print_run_summary
from ..results import ResultError, load_run_dir, unreadable_results


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("summary", help="print the summary of a results folder",
                       description="Print the OMB-style summary tables of a folder written by `partita run`. "
                       "Exits 1 when a result file the folder lists cannot be read (each is named), 2 when the "
                       "folder has no readable manifest.json.")
    p.add_argument("folder", type=Path, help="a results/<timestamp>-<suite> folder")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    try:
        manifest = load_run_dir(args.folder)
    except ResultError as e:
        print(f"partita summary: error: {e}", file=sys.stderr)
        return 2
    print_run_summary(args.folder, manifest)
    errors = unreadable_results(args.folder, manifest)
    for e in errors:
        print(f"partita summary: error: {e}", file=sys.stderr)
    return 1 if errors else 0
