"""partita tune: measure the best transport partition count per (message size,
user partitions) and write the tuning table libpartita's `table` policy reads."""

from __future__ import annotations

import argparse
import sys
import time

from ..launch import BuildInfo, LaunchError
from ..model import ModelError, Table, library
from ..model.experiments import Pattern
from ..model.options import (MAX_ITERATIONS, check_delay, check_partitions_fit, load_params, parse_int_list,
                             parse_size_range, warn_if_busy)
from ..model.tune import default_table_path, format_entries, table_document, tune
from ..option_lists import path_arg
from ..results import folder_blocker, output_file_problem, write_json_atomically

PROG = "partita tune"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tune",
        help="measured search of the best transport partition count; writes the tuning table",
        description="For each message size and user partition count, run partita-p2p with libpartita at every "
        "power-of-two transport count (a short screening run each; candidates clearly slower than the best are "
        "stopped there, the others confirmed with full iterations), keep the fastest, and write a "
        "partita.tuning/1 table (PARTITA_TUNING=FILE PARTITA_POLICY=table uses it). Also reports how far the "
        "PLogGP model's choice is from the measured best.",
    )
    p.add_argument("-m", "--message-size", default="4K:1M", help="MIN:MAX powers of two (default 4K:1M)")
    p.add_argument("-p", "--partitions", default="8,16", help="user partition counts (default 8,16)")
    p.add_argument("--delay", type=float, default=0.0,
                   help="laggard delay in us (default 0: all partitions ready at once)")
    p.add_argument("--threads", type=int,
                   help="with --delay: sender threads, thread 0's partitions late (0: one per partition; default 2; "
                   "at most the largest --partitions)")
    p.add_argument("-i", "--iterations", type=int, default=40, help="confirmation iterations (default 40)")
    p.add_argument("--quantile", type=float, default=0.5,
                   help="quantile of the iterations that ranks candidates (default 0.5, the median; lower values "
                   "resist a busy machine)")
    p.add_argument("--screen", type=int, default=10, help="screening iterations per candidate (default 10)")
    p.add_argument("--params", type=path_arg, help="LogGP parameters for the model's choice (default as libpartita)")
    p.add_argument("-o", "--output", type=path_arg, help=f"tuning table file (default {default_table_path()})")
    p.add_argument("--build", help="build folder holding partita-build.json (default: $PARTITA_BUILD or ./build)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    try:
        build = BuildInfo.find(args.build)
        library(build.lib_dir)
        params = load_params(args.params, PROG)
        rng = parse_size_range(args.message_size)
        parts = parse_int_list(args.partitions, "--partitions", minimum=2)
        check_partitions_fit(rng, parts)
        if not 3 <= min(args.screen, args.iterations) <= max(args.screen, args.iterations) <= MAX_ITERATIONS:
            raise ValueError(f"--screen and --iterations must be from 3 to {MAX_ITERATIONS}")
        check_delay(args.delay, "--delay")
        if args.threads is not None and args.delay == 0:
            raise ValueError("--threads: only with --delay, which makes thread 0's partitions late (without it every "
                             "partition is ready at once and no thread is late)")
        if args.threads is not None and args.threads < 0:
            raise ValueError("--threads must be >= 0")
        if args.threads is not None and args.threads > max(parts):
            # each thread owns at least one partition: more would run as max(parts) and the table say otherwise
            raise ValueError(f"--threads {args.threads}: more threads than partitions (the largest --partitions is "
                             f"{max(parts)}); 0 gives one thread per partition")
        if not 0 <= args.quantile <= 1:
            raise ValueError("--quantile must be in [0, 1]")
        # after every other check, so a refused command leaves no folder behind
        out = args.output or default_table_path()
        if out.is_dir():
            raise ValueError(f"{out} is a directory; --output needs a file name")
        # before the search, not after it: a named table's folder must be there; the standard place's is made
        if args.output:
            if problem := output_file_problem(out, "--output"):
                raise ValueError(problem)
        elif blocker := folder_blocker(out):
            raise ValueError(f"cannot write the table to {out}: {blocker} is not a folder")
        else:
            try:
                out.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise ValueError(f"cannot write the table to {out}: {e.strerror or e}") from e
        threads = 2 if args.threads is None else args.threads  # given only with --delay (checked above)
        pattern = Pattern("laggard", args.delay, threads) if args.delay > 0 else Pattern("all", 0.0)
        warn_if_busy(PROG)
        t0 = time.monotonic()
        entries = tune(build, params, rng, parts, pattern, args.iterations, args.screen, 2,
                       progress=lambda s: print(f"  running: {s}", file=sys.stderr, flush=True), q=args.quantile)
        elapsed = time.monotonic() - t0
    except (ValueError, ModelError, LaunchError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    if not entries:
        print(f"{PROG}: error: no case was measured", file=sys.stderr)
        return 1
    print(f"Measured best transport partitions ({pattern.label}, {args.quantile:g}-quantile of t_part), "
          f"model parameters: {params.source}")
    print("\n".join(format_entries(entries)))
    gaps = [e.model_gap for e in entries]
    within = sum(1 for g in gaps if g <= 0.05)
    print(f"\nmodel's choice within 5% of the measured best in {within} of {len(entries)} cases; "
          f"search took {elapsed:.0f} s")
    doc = table_document(entries, pattern, params, elapsed, args.quantile)
    # renamed into place once the library's reader accepts it: a failed write leaves the table
    # that was there as it was
    try:
        write_json_atomically(out, doc, check=Table)
    except (OSError, ModelError) as e:
        print(f"{PROG}: error: cannot write a usable table to {out}: {e}", file=sys.stderr)
        return 2
    print(f"tuning table: {out}  (use: PARTITA_POLICY=table PARTITA_TUNING={out})")
    return 0

