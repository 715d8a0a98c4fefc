"""partita advise: a user partition count, libpartita policy and δ for each traced send request."""

from __future__ import annotations

import argparse
import sys

from ..model import ModelError
from ..model.options import load_params
from ..option_lists import path_arg
from ..trace.advise import advice_lines, advise_case
from ..trace.sources import INPUT_ERRORS, load_cases

PROG = "partita advise"

DESCRIPTION = """\
For each partitioned send (a trace's send requests pooled per message size and partition
count, or each case of partita-p2p results), evaluate with the PLogGP model libpartita plans
with, on the ready times of every round, the user partition counts P/4, P/2, P, 2P, 4P, each
sent:
  - one message per partition as it is marked (libpartita's none; Open MPI's native path),
  - one message once every partition is ready (at P only: libpartita's bulk; MPICH's native path),
  - with libpartita's model policy (planned for no delay, and for the measured laggard),
  - with its timer policy (libpartita's default delta and the seed's minimum delta).
Prints the pattern, the advised setting, the predicted time from the last MPI_Pready to the
last byte at the receiver for every candidate and the gain over the current setting."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "advise", help="advise a partition count, libpartita policy and timer delta from a trace",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=DESCRIPTION,
        epilog="INPUT is a trace folder (partita trace), a `partita run` results folder with partita-p2p runs,\n"
               "or one partita-p2p JSON result. Definitions and assumptions: docs/trace-analysis.md.")
    p.add_argument("input", type=path_arg, metavar="INPUT", help="trace folder or partita-p2p results")
    p.add_argument("--loggp", type=path_arg, metavar="FILE",
                   help="LogGP parameters (partita.loggp/1; default: the file libpartita uses, else its built-in "
                        "set for the traced MPI library)")
    p.add_argument("--per-request", action="store_true",
                   help="one advice per send request instead of per (message size, partition count)")
    p.add_argument("--keep-partitions", action="store_true",
                   help="only candidates with the program's own partition count (when the code fixes it)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    try:
        cases, library = load_cases(args.input, args.per_request)
    except INPUT_ERRORS as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    try:
        params = load_params(args.loggp, PROG, library)
    except ModelError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    if not cases:
        print(f"{PROG}: error: {args.input}: no partitioned send request to advise on", file=sys.stderr)
        return 2
    print(f"# model parameters: {params.source}")
    advised = 0
    for case in cases:
        advice = advise_case(params, case, args.keep_partitions)
        advised += advice.best is not None
        for line in advice_lines(advice):
            print(line)
    if not advised:  # every round incomplete, or every sample missing or not a number: nothing was advised
        print(f"{PROG}: error: {args.input}: no complete round (every partition marked, its times numbers) to "
              "advise on", file=sys.stderr)
        return 2
    return 0
