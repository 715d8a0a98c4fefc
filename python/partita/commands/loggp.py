"""partita loggp: measure LogGP parameters and save them where libpartita finds them."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..launch import BuildInfo, LaunchError, check_launcher
from ..model import ModelError, default_params_path, library
from ..model.loggp import format_segments, format_sizes, measure
from ..model.options import warn_if_busy
from ..option_lists import path_arg
from ..results import folder_blocker, output_file_problem, write_json_atomically


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "loggp",
        help="measure LogGP parameters (PRTT method) and save them for libpartita",
        description="Run partita-loggp on 2 ranks, print the per-size measurements and the per-segment LogGP "
        "parameters, and save the partita.loggp/1 file where libpartita and `partita model` find it by default "
        "($XDG_CONFIG_HOME/partita/loggp.json, else ~/.config/partita/loggp.json; PARTITA_LOGGP overrides). "
        "With --transport fabric it measures libfabric writes with remote CQ data, as libpartita's fabric transport "
        "moves its messages, and saves loggp-fabric.json there (PARTITA_LOGGP_FABRIC overrides), which the planner "
        "uses for fabric requests.",
    )
    p.add_argument("-m", "--message-size", default="1:4M", help="MIN:MAX, powers of two (default 1:4M)")
    p.add_argument("-i", "--iterations", type=int, default=40, help="repetitions per PRTT and pass (default 40)")
    p.add_argument("--passes", type=int, default=3, help="sweeps over the sizes; the least disturbed counts (default 3)")
    p.add_argument("--quantile", type=float, default=0.5,
                   help="statistic of the repetitions: 0.5 the median (default); e.g. 0.2 on a busy machine")
    p.add_argument("--api", choices=["isend", "send"], default="isend",
                   help="isend: MPI_Isend with receives posted ahead, as libpartita (default); send: blocking")
    p.add_argument("--transport", choices=["mpi", "fabric"], default="mpi",
                   help="mpi: MPI point-to-point (--api); fabric: libfabric RMA writes (provider: "
                   "PARTITA_FABRIC_PROVIDER, else shm on one host, tcp;ofi_rxm across hosts)")
    p.add_argument("-o", "--output", type=path_arg, help="save the parameter file here instead of the standard place")
    p.add_argument("--no-save", action="store_true", help="only print, save nothing (not with --output)")
    p.add_argument("--quiet", action="store_true", help="do not print the per-size table")
    p.add_argument("--launcher", help="launch with this command instead of mpiexec (gets -n 2)")
    p.add_argument("--build", help="build folder holding partita-build.json (default: $PARTITA_BUILD or ./build)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    prog = "partita loggp"
    if args.iterations < 1 or args.passes < 1:
        print(f"{prog}: error: --iterations and --passes must be at least 1", file=sys.stderr)
        return 2
    if not 0 <= args.quantile <= 1:
        print(f"{prog}: error: --quantile must be in [0, 1]", file=sys.stderr)
        return 2
    if args.no_save and args.output is not None:
        print(f"{prog}: error: --no-save and --output {args.output} exclude each other: --output saves there",
              file=sys.stderr)
        return 2
    try:
        build = BuildInfo.find(args.build)
        lib = library(build.lib_dir)
        check_launcher(args.launcher)
        target = args.output
        if target is None and not args.no_save:
            target, from_env = default_params_path(lib, args.transport)
            if target is None:
                raise ModelError("no standard place for the parameter file (HOME is not set); use --output")
            if from_env:
                env = "PARTITA_LOGGP_FABRIC" if args.transport == "fabric" else "PARTITA_LOGGP"
                print(f"{prog}: {env} is set: saving to {target}", file=sys.stderr)
        if target is not None and target.is_dir():
            raise ModelError(f"{target} is a directory; --output needs a file name")
        # checked before the measurement, which takes minutes: the file is saved after it, in a folder
        # that must exist (the standard place's is made)
        if problem := output_file_problem(args.output, "--output"):
            raise ModelError(problem)
        blocker = folder_blocker(target) if target is not None else None
        if blocker:
            raise ModelError(f"cannot save to {target}: {blocker} is not a folder")
        if args.transport == "fabric" and not build.fabric_transport:
            raise ModelError("--transport fabric: this build has no fabric transport (libfabric was not found when "
                             "it was configured: install libfabric-dev and re-run make bootstrap)")
        cmd = ["-m", args.message_size, "-i", str(args.iterations), "--passes", str(args.passes),
               "--quantile", str(args.quantile), "--api", args.api, "--transport", args.transport]
        warn_if_busy(prog)
        doc, params = measure(build, cmd, launcher=args.launcher)
    except (LaunchError, ModelError) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    meas = doc.get("measurement", {})
    over = (f"libfabric provider {meas.get('provider', '?')}" if meas.get("transport") == "fabric"
            else f"MPI: {meas.get('mpi_library', '?')}")
    print(f"LogGP parameters by PRTT (n={meas.get('n')}, {meas.get('passes')} passes x {meas.get('iterations')} "
          f"repetitions, {meas.get('quantile')}-quantile), {over}")
    if not args.quiet:
        print("\n".join(format_sizes(doc)))
        print()
    print("\n".join(format_segments(params)))
    if target is not None:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_json_atomically(target, doc)
        except OSError as e:
            print(f"{prog}: error: cannot save {target}: {e}", file=sys.stderr)
            return 2
        print(f"\nsaved {target}")
        env = "PARTITA_LOGGP_FABRIC" if args.transport == "fabric" else "PARTITA_LOGGP"
        if os.environ.get(env) and Path(os.environ[env]) != target:
            print(f"note: {env}={os.environ[env]} takes precedence over this file", file=sys.stderr)
    return 0
