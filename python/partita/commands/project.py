"""partita project: the application speedup of porting to partitioned communication (Amdahl)."""

from __future__ import annotations

import argparse
import sys

from ..option_lists import path_arg
from ..results import ResultError
from ..trace.project import measured_speedup, project
from ..trace.reader import TraceError, load_trace

PROG = "partita project"

ASSUMPTIONS = """\
assumptions (Amdahl's law, as the micro-benchmark study projected SNAP from mpiP):
  - only the time inside point-to-point calls (ordinary and partitioned) changes, by the
    factor given; compute, collectives and everything else stay as traced
  - the point-to-point time is the tracer's mpiP-style sum of the time inside those calls
    between MPI_Init and MPI_Finalize; time a rank waits for a late peer counts as
    communication, so a load imbalance is projected to shrink too
  - the ranks' shares are independent; "slowest rank" assumes the run ends with its
    slowest rank before and after"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "project", help="project the application speedup of porting to partitioned communication",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="From a trace of an unported program (its share of run time in point-to-point\n"
                    "communication, per rank) and the speedup of that communication (a factor, or measured by a\n"
                    "pattern benchmark: unported variant over partitioned in the same implementation's launches,\n"
                    "the best of them), project the application speedup with Amdahl's law: 1 / ((1 - f) + f / s).",
        epilog=ASSUMPTIONS)
    p.add_argument("trace", type=path_arg, metavar="TRACE_DIR", help="a trace folder (partita trace)")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--speedup", type=float, metavar="X", help="speedup of the point-to-point communication")
    g.add_argument("--results", type=path_arg, metavar="DIR",
                   help="a pattern benchmark result (sweep3d, halo3d, stencil: JSON file or `partita run` folder) "
                        "whose unported and partitioned variants give the speedup")
    p.add_argument("--run", metavar="NAME",
                   help="with --results: the run of the folder to use (e.g. stencil; the runs' names are the "
                        "suite's), or the benchmark of a result file (default: the first with both variants)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    try:
        trace = load_trace(args.trace)
        if args.run is not None and args.results is None:
            raise ValueError("--run needs --results")
        if args.results is not None:
            speedup, source = measured_speedup(args.results, args.run)
        else:
            speedup, source = args.speedup, "given"
        per, pooled, slowest = project(trace, speedup)
    except (TraceError, ResultError, ValueError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    print(f"communication speedup s = {speedup:.3g} ({source})")
    print(f"{'rank':>6} {'wall ms':>9} {'p2p ms':>8} {'share f':>8} {'projected':>10}")
    capped = any(p.summed_over_threads for p in per)
    for p in per:
        print(f"{p.rank:>6} {p.wall_us / 1e3:>9.2f} {p.p2p_us / 1e3:>8.2f} {p.share:>8.1%} {p.projected:>9.3f}x"
              + (" *" if p.summed_over_threads else ""))
    print(f"{'all':>6} {pooled.wall_us / 1e3:>9.2f} {pooled.p2p_us / 1e3:>8.2f} {pooled.share:>8.1%} "
          f"{pooled.projected:>9.3f}x  (times pooled over ranks{', * ranks at their run time' if capped else ''})")
    if capped:
        print("  * the time summed over the rank's threads exceeds its run time (several threads inside MPI at "
              "once;\n    the trace does not say how much of the run they overlapped): its share is taken as 100%, "
              "an upper bound")
    print(f"projected application speedup: {pooled.projected:.3f}x (pooled); {slowest:.3f}x if the run ends with "
          "its slowest rank")
    print(ASSUMPTIONS)
    return 0
