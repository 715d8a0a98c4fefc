"""partita model: the PLogGP model on this machine's LogGP parameters (Table I,
Figure 3 of the IB-verbs paper) and its validation against measurements."""

from __future__ import annotations

import argparse
import sys

from ..launch import BuildInfo, LaunchError
from ..model import ModelError, library
from ..model.loggp import format_segments
from ..model.options import (MAX_ITERATIONS, check_any_case_fits, check_delay, check_partitions_fit, load_params,
                             parse_float_list, parse_int_list, parse_size_range, sizes_in, warn_if_busy)
from ..model.tables import format_choices, optimal_choices, plot, table1_ranges
from ..option_lists import path_arg
from ..results import output_file_problem, write_json_atomically

PROG = "partita model"

# Each mode's defaults, said once: the help text quotes them and apply_defaults
# fills them in. (None in argparse means "not given", which check_mode_options
# needs to refuse an option of the other mode.)
TABLE_DEFAULTS = {"message_size": "1K:256M", "partitions": "32", "pattern": "laggard", "delay": 4000.0}
VALIDATE_DEFAULTS = {"message_size": "16K:256K", "partitions": "4,8", "delays": "50,500", "threads": 2,
                     "iterations": 30, "quantile": 0.5}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "model",
        help="optimal transport partitions by the PLogGP model; --validate against measurements",
        description="Print the PLogGP model's optimal transport partition count per message size (the "
        "equivalent of Table I of the IB-verbs paper) for the given user partitions and arrival pattern, and "
        "plot modelled completion time against the transport count (--plot). With --validate, run partita-p2p "
        "with libpartita at fixed groupings and compare predicted with measured times. The model is partita's "
        "own derivation from LogGP (docs/model.md).",
    )
    p.add_argument("--params", type=path_arg, help="partita.loggp/1 file (default: $PARTITA_LOGGP, the standard "
                   "place written by `partita loggp`, else built-in defaults)")
    table, validate = TABLE_DEFAULTS, VALIDATE_DEFAULTS
    p.add_argument("-m", "--message-size", help=f"MIN:MAX powers of two (default {table['message_size']}; "
                   f"with --validate {validate['message_size']})")
    p.add_argument("-p", "--partitions",
                   help=f"user partitions (default {table['partitions']}; with --validate {validate['partitions']})")
    p.add_argument("--pattern", choices=["laggard", "all", "uniform"],
                   help="arrival pattern of the table: one late partition, all at once, or spread evenly "
                   f"(default {table['pattern']})")
    p.add_argument("--delay", type=float, help=f"laggard delay / spread window in us (default {table['delay']:g})")
    p.add_argument("--plot", type=path_arg, help="write the figure here (PNG; .pdf, .svg by the suffix; not with --validate)")
    p.add_argument("--validate", action="store_true", help="compare the model with partita-p2p measurements")
    p.add_argument("--delays", help=f"--validate: laggard delays in us (default {validate['delays']})")
    p.add_argument("--threads", type=int,
                   help="--validate: sender threads of the laggard runs; thread 0's partitions are late "
                   f"(0: one thread per partition; default {validate['threads']}, fewer threads than cores keep the "
                   "scheduler out)")
    p.add_argument("-i", "--iterations", type=int,
                   help=f"--validate: iterations per case (default {validate['iterations']})")
    p.add_argument("--quantile", type=float,
                   help="--validate: quantile of the measured iterations compared with the model (default "
                   f"{validate['quantile']:g}, the median; e.g. 0.1 on a busy machine, where other processes only "
                   "ever add time)")
    p.add_argument("--json", type=path_arg, help="--validate: also write the cases and errors as JSON here (its "
                   "folder must exist: checked before measuring)")
    p.add_argument("--build", help="build folder holding partita-build.json (default: $PARTITA_BUILD or ./build)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    try:
        build = BuildInfo.find(args.build) if args.build is not None or args.validate else None
        library(build.lib_dir if build else None)
        params = load_params(args.params, PROG)
        check_mode_options(args)
        apply_defaults(args, VALIDATE_DEFAULTS if args.validate else TABLE_DEFAULTS)
        if args.validate:
            return validate_main(args, build, params)
        rng = parse_size_range(args.message_size)
        parts = parse_int_list(args.partitions, "--partitions")
        check_any_case_fits(rng, parts)
        check_delay(args.delay, "--delay")
        if args.plot:  # before the table is printed: the command's outputs are all written or none
            check_plot(args.plot, sizes_in(rng), parts[0])
    except (ValueError, ModelError, LaunchError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    sizes = sizes_in(rng)
    print(f"LogGP parameters: {params.source}")
    print("\n".join(format_segments(params)))
    for P in parts:
        fit = [s for s in sizes if s >= P]  # a partition of less than a byte is no case (partita-p2p skips it)
        if len(fit) < len(sizes):
            print(f"\n{P} user partitions: skipped {len(sizes) - len(fit)} size(s) of fewer bytes than partitions")
        if not fit:
            continue
        rows = optimal_choices(params, fit, P, args.pattern, args.delay)
        what = {"laggard": f"one partition {args.delay:g} us late", "all": "all ready at once",
                "uniform": f"ready times spread over {args.delay:g} us"}[args.pattern]
        print(f"\nOptimal transport partitions (powers of two) for {P} user partitions, {what}:")
        print(f"{'message size':>20}  transport partitions")
        for label, t in table1_ranges(rows):
            print(f"{label:>20}  {t}")
        print()
        print("\n".join(format_choices(rows, P)))
    if args.plot:
        try:
            written = plot(params, [s for s in sizes if s >= parts[0]], parts[0], args.pattern, args.delay, args.plot)
        except (OSError, ValueError) as e:
            print(f"{PROG}: error: cannot write {args.plot}: {e}", file=sys.stderr)
            return 2
        print(f"\nfigure: {written}")
    return 0


def check_plot(path, sizes, partitions: int) -> None:
    """Raise ValueError for a --plot that could not be drawn or written: its folder, its format, or no
    size of at least one byte per partition of the first partition count (the one drawn)."""
    from ..figure_file import folder_problem, format_problem

    problem = output_file_problem(path, "--plot")
    if problem is None and (kind := folder_problem(path) or format_problem(path)):
        problem = f"--plot {kind}"
    if problem is None and not any(s >= partitions for s in sizes):
        problem = f"--plot: no size of at least {partitions} bytes to plot for {partitions} partitions"
    if problem:
        raise ValueError(problem)


# Options of one mode only, refused in the other rather than ignored: an option
# that would do nothing hides a mistake (the user thinks it took effect).
TABLE_ONLY = {"pattern": "--pattern", "delay": "--delay", "plot": "--plot"}
VALIDATE_ONLY = {"delays": "--delays", "threads": "--threads", "iterations": "--iterations", "quantile": "--quantile",
                 "json": "--json"}


def check_mode_options(args: argparse.Namespace) -> None:
    wrong = TABLE_ONLY if args.validate else VALIDATE_ONLY
    given = ", ".join(flag for dest, flag in wrong.items() if getattr(args, dest) is not None)
    if given and args.validate:
        raise ValueError(f"{given}: only for the model's table, which --validate does not print (its laggard "
                         "delays are --delays); run them separately")
    if given:
        raise ValueError(f"{given}: only with --validate, which measures (the table alone takes --pattern, "
                         "--delay and --plot)")
    if not args.validate and args.pattern == "all" and args.delay is not None:
        raise ValueError("--delay: --pattern all has every partition ready at once, so no delay or spread; "
                         "leave --delay out, or give --pattern laggard or uniform")


def apply_defaults(args: argparse.Namespace, defaults: dict) -> None:
    for dest, default in defaults.items():
        if getattr(args, dest) is None:
            setattr(args, dest, default)


def validate_main(args: argparse.Namespace, build: BuildInfo, params) -> int:
    from ..model.validate import as_json, format_cases, summary, validate

    rng = parse_size_range(args.message_size)
    parts = parse_int_list(args.partitions, "--partitions", minimum=2)
    check_partitions_fit(rng, parts)
    delays = parse_float_list(args.delays, "--delays")
    if not 3 <= args.iterations <= MAX_ITERATIONS:
        raise ValueError(f"--iterations must be from 3 to {MAX_ITERATIONS}")
    if args.threads < 0:
        raise ValueError("--threads must be >= 0")
    if not 0 <= args.quantile <= 1:
        raise ValueError("--quantile must be in [0, 1]")
    if args.json is not None and args.json.is_dir():
        raise ValueError(f"{args.json} is a directory; --json needs a file name")
    if problem := output_file_problem(args.json, "--json"):  # before the measurements, which take minutes
        raise ValueError(problem)
    print(f"LogGP parameters: {params.source}")
    warn_if_busy(PROG)
    cases = validate(build, params, rng, parts, delays, args.iterations, max(2, args.iterations // 10),
                     progress=lambda s: print(f"  running: {s}", file=sys.stderr, flush=True), threads=args.threads,
                     q=args.quantile)
    print("\n".join(format_cases(cases)))
    s = summary(cases)
    if not cases:
        print(f"{PROG}: error: no case was measured", file=sys.stderr)
        return 1
    print(f"\n{s['cases']} cases, measured {args.quantile:g}-quantile; median absolute error: "
          f"{s['median_abs_error'] * 100:.1f}% (t_part, measured ready spread), {s['median_abs_error_last'] * 100:.1f}% (t_last), "
          f"{s['median_abs_error_nominal'] * 100:.1f}% (t_part, nominal pattern)")
    for k, v in s["median_abs_error_by_pattern"].items():
        print(f"  {k:<19} {v * 100:6.1f}%")
    if args.json:
        cfg = {"sizes": list(rng), "partitions": parts, "delays_us": delays, "iterations": args.iterations,
               "laggard_threads": args.threads, "quantile": args.quantile}
        try:
            write_json_atomically(args.json, as_json(cases, params, cfg))
        except OSError as e:
            print(f"{PROG}: error: cannot write {args.json}: {e}", file=sys.stderr)
            return 2
        print(f"cases: {args.json}")
    return 0
