"""partita compare: two results folders side by side, case by case."""

from __future__ import annotations

import argparse
import sys

from ..compare import compare_runs, format_rows, load_runs, setting_notes
from ..option_lists import path_arg
from ..results import ResultError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare", help="compare two results folders case by case",
        description="For every run, implementation, case and headline metric found in both folders, print the "
        "medians A and B, their ratio B/A and whether the 95% confidence intervals of the medians overlap "
        "('same') or B is significantly higher or lower; '?' (and '-' for a missing value or ratio) when a median or "
        "an interval bound is missing or not a finite number (NaN, Infinity), when no sample is behind a median (n 0) "
        "or an interval's bounds are swapped: such a case is never called 'same'. "
        "Use it to compare two MPI libraries, two machines, or a change against its baseline. A run of the same name "
        "configured otherwise in B (noise, compute, iterations, rank count, ...) gets a '# note:' line naming each "
        "setting, A -> B, before the table.")
    p.add_argument("a", type=path_arg, help="the baseline results folder")
    p.add_argument("b", type=path_arg, help="the folder compared with it")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    try:
        runs_a, runs_b = load_runs(args.a), load_runs(args.b)  # read once: the rows and the notes
        rows = compare_runs(runs_a, runs_b)
    except ResultError as e:
        print(f"partita compare: error: {e}", file=sys.stderr)
        return 2
    if not rows:  # no run, implementation and case of one is in the other: nothing was compared
        print(f"partita compare: error: nothing in common to compare: no run and implementation of {args.a} has a "
              f"measured case in {args.b}", file=sys.stderr)
        return 1
    for note in setting_notes(runs_a, runs_b, rows):
        print(note)
    print(format_rows(rows))
    return 0
