"""partita trace: run a program with libpartita-trace.so preloaded; show or export a trace."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from ..launch import INTERPOSER, BuildInfo, LaunchError, child_env
from ..model import ModelError
from ..model.options import load_params
from ..option_lists import path_arg
from ..results import output_file_problem
from ..runner import results_folder
from ..trace.analysis import analyse
from ..trace.reader import RANK_GLOB, TraceError, is_rank_file, load_trace
from ..trace.show import brief_line, header_lines, show_lines

PROG = "partita trace"

DESCRIPTION = """\
Trace the partitioned communication of any MPI program, and analyse the trace.

  partita trace [--out DIR] [--order before|after] -- COMMAND ...
      run COMMAND (e.g. mpiexec -n 4 ./app args) with libpartita-trace.so preloaded;
      every rank writes DIR/rank-<R>.json at MPI_Finalize (docs/trace.md)
  partita trace show DIR [--loggp FILE]
      print the analysis: per send request the ready spread, the laggard thread, the
      seed's minimum timer delta, the data that could go before the last MPI_Pready,
      the receiver's arrival order; per rank the MPI share of run time
      (docs/trace-analysis.md)
  partita trace export DIR [--perfetto FILE] [--plot FILE] [--request N]
      write a Perfetto / chrome://tracing timeline and/or the arrival-pattern figure

The tracer is prepended to LD_PRELOAD. When LD_PRELOAD already holds libpartita-mpi.so
(the program runs on libpartita), --order says where the tracer goes: `before`
(default) puts it first, so it records the partitions exactly as the program marks
them and libpartita aggregates below it; `after` puts it behind libpartita, whose
MPI_* calls would hide the program's from it, so the tracer then runs the program once
more with itself first, before MPI starts: both orders record the same events
(docs/trace.md). The launcher must pass LD_PRELOAD and PARTITA_TRACE to the ranks
(MPICH's mpiexec and srun do; Open MPI's mpiexec needs -x LD_PRELOAD -x PARTITA_TRACE)."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("trace", help="trace a program's partitioned communication; show or export a trace",
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
                       usage="partita trace [--out DIR] [--order before|after] [--build DIR] -- COMMAND ...\n"
                             "       partita trace show DIR [--loggp FILE]\n"
                             "       partita trace export DIR [--perfetto FILE] [--plot FILE] [--request N]")
    p.add_argument("--out", type=path_arg, help="trace folder (default: a new folder results/<timestamp>-trace)")
    p.add_argument("--order", choices=("before", "after"), default="before",
                   help="where the tracer goes relative to libpartita-mpi.so in LD_PRELOAD (default: before)")
    p.add_argument("--build", type=path_arg, help="the partita build folder (default: $PARTITA_BUILD or ./build)")
    p.add_argument("words", nargs=argparse.REMAINDER, metavar="-- COMMAND ... | show DIR | export DIR ...")
    p.set_defaults(func=main)


def fail(message: str, code: int = 2, prog: str = PROG) -> int:
    print(f"{prog}: error: {message}", file=sys.stderr)
    return code


def main(args: argparse.Namespace) -> int:
    words = list(args.words)
    if words and words[0] in ("show", "export"):
        # options of running a program, which show and export would ignore
        given = [o for o, v in (("--out", args.out), ("--order", args.order != "before"), ("--build", args.build)) if v]
        if given:
            return fail(f"{', '.join(given)}: for running a program (`-- COMMAND ...`), not for `{words[0]}`")
        return (show if words[0] == "show" else export)(words[1:])
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        return fail("nothing to run: give `-- COMMAND ...`, `show DIR` or `export DIR ...` (see --help)")
    return run(words, args.out, args.order, args.build)


# -- running a program under the tracer ------------------------------------------------------------

def preload_with_tracer(tracer: Path, current: str, order: str) -> tuple[str, bool]:
    """LD_PRELOAD with the tracer added, and whether libpartita was in it."""
    entries = [e for e in current.replace(" ", ":").split(":") if e]
    at = next((i for i, e in enumerate(entries) if Path(e).name == INTERPOSER), None)
    if at is None or order == "before":
        return ":".join([str(tracer), *entries]), at is not None
    return ":".join([*entries[:at + 1], str(tracer), *entries[at + 1:]]), True


def run(command: list[str], out: Path | None, order: str, build_dir: Path | None) -> int:
    try:
        tracer = BuildInfo.find(build_dir).tracer
    except LaunchError as e:
        return fail(str(e))
    preload, with_partita = preload_with_tracer(tracer, os.environ.get("LD_PRELOAD", ""), order)
    if order == "after" and not with_partita:  # the program would run on the MPI library alone
        return fail(f"--order after: LD_PRELOAD holds no {INTERPOSER} for the tracer to go after; preload it "
                    "to trace a program running on libpartita, or leave --order out")
    # made here (results_folder makes the default one): removed again, if still empty, when the
    # program writes no trace
    made = out is None or not out.exists()
    try:
        folder = (out or results_folder(Path("results"), "trace")).resolve()
    except OSError as e:  # ./results is a file, or not writable
        return fail(f"cannot create the trace folder in results: {e.strerror or e}; give --out")
    if folder.is_dir() and any(folder.glob(RANK_GLOB)):
        return fail(f"{folder} already holds a trace ({RANK_GLOB}); give another --out")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:  # a file of that name, a file on the way, no permission
        return fail(f"cannot create the trace folder {folder}: {e.strerror or e}")
    env = child_env({"LD_PRELOAD": preload, "PARTITA_TRACE": str(folder)})
    if with_partita:
        print(f"{PROG}: libpartita-mpi.so is preloaded: tracer {order} it", file=sys.stderr)
    rc = trace_command(command, env, folder)
    if made and not any(folder.iterdir()):  # nothing written: no empty results folder left behind
        folder.rmdir()
    return rc


def trace_command(command: list[str], env: dict, folder: Path) -> int:
    """Run the command with the tracer and print what its trace shows (or why there is none)."""
    try:
        rc = subprocess.run(command, env=env).returncode
    except FileNotFoundError:
        return fail(f"{command[0]}: command not found")
    except PermissionError:
        return fail(f"{command[0]}: not executable")
    if not any(folder.glob(RANK_GLOB)):
        return fail(f"the program wrote no trace into {folder} (exit {rc}); did it reach MPI_Finalize, "
                    "and does the launcher pass LD_PRELOAD and PARTITA_TRACE to the ranks?", rc or 1)
    try:
        trace = load_trace(folder)
    except TraceError as e:
        return fail(str(e), rc or 1)
    print(f"{PROG}: trace in {folder} ({len(trace.ranks)} rank files)" + (f"; the program exited {rc}" if rc else ""))
    analyses = analyse(trace)
    for line in header_lines(trace) + ["  " + brief_line(a) for a in analyses]:
        print(line)
    if analyses:
        print(f"full analysis: partita trace show {folder}; advice: partita advise {folder}")
    else:  # advise has nothing to work on; the MPI share still feeds `partita project`
        print(f"no partitioned send request: MPI share of run time: partita trace show {folder}; "
              f"projected speedup of a port: partita project {folder} --speedup X")
    return rc


# -- show and export ------------------------------------------------------------------------------------

def _load(prog: str, folder: Path):
    try:
        return load_trace(folder)
    except TraceError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return None


def show(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog=f"{PROG} show", description="Print the analysis of a trace folder "
                                "(definitions: docs/trace-analysis.md).")
    p.add_argument("folder", type=path_arg, help="a trace folder (rank-*.json)")
    p.add_argument("--loggp", type=path_arg, help="LogGP parameter file for the modelled early share "
                   "(default: the file libpartita uses, else its built-in set for the traced MPI)")
    a = p.parse_args(argv)
    trace = _load(f"{PROG} show", a.folder)
    if trace is None:
        return 2
    try:
        params = load_params(a.loggp, f"{PROG} show", trace.ranks[0].mpi_library)
    except ModelError as e:
        if a.loggp is not None:  # the file asked for is unusable: not a warning (advise stops too)
            print(f"{PROG} show: error: {e}", file=sys.stderr)
            return 2
        print(f"{PROG} show: warning: {e}; the modelled early share is left out", file=sys.stderr)
        params = None
    for line in show_lines(trace, analyse(trace, params)):
        print(line)
    return 0


def export(argv: list[str]) -> int:
    prog = f"{PROG} export"
    p = argparse.ArgumentParser(prog=prog, description="Export a trace: a timeline Perfetto and chrome://tracing "
                                "open (one track per rank and thread, a slice per partition from ready to "
                                "arrival), and/or the arrival-pattern figure (matplotlib).")
    p.add_argument("folder", type=path_arg, help="a trace folder (rank-*.json)")
    p.add_argument("--perfetto", type=path_arg, metavar="FILE", help="write the timeline (JSON trace events) to FILE")
    p.add_argument("--plot", type=path_arg, metavar="FILE", help="draw the arrival pattern to FILE (.png, .pdf, .svg)")
    p.add_argument("--request", type=int, metavar="N",
                   help="--plot: the N-th send request (in `show` order, from 0; default: the first few); checked "
                   "against the trace with or without --plot")
    a = p.parse_args(argv)
    if a.perfetto is None and a.plot is None:
        p.error("nothing to export: give --perfetto FILE and/or --plot FILE")
    for option, path in (("--perfetto", a.perfetto), ("--plot", a.plot)):
        if path is not None and is_rank_file(path, a.folder):
            # over a rank file, or a new one: either breaks every later read of the trace
            return fail(f"{option} {path}: a rank file of the trace folder {a.folder} ({RANK_GLOB}); give "
                        "another file", prog=prog)
        if problem := output_file_problem(path, option):
            return fail(problem, prog=prog)
    trace = _load(prog, a.folder)
    if trace is None:
        return 2
    try:
        if a.request is not None:  # with or without --plot: never silently ignored
            from ..trace.plot import check_request
            check_request(trace, a.request)
        figure = None
        if a.plot is not None:  # drawn before the timeline is written: all or nothing
            from ..figure_file import format_problem
            from ..trace.plot import arrival_figure
            if problem := format_problem(a.plot):
                return fail(f"--plot {problem}", prog=prog)
            figure = arrival_figure(trace, a.request)  # ValueError: nothing to draw
        if a.perfetto is not None and not trace.requests:  # a timeline of the ranks' names alone
            return fail(f"{a.folder}: no partitioned request to put on a timeline (the program made none)", prog=prog)
        if a.perfetto is not None:
            from ..trace.perfetto import write_perfetto
            write_perfetto(trace, a.perfetto)
            print(f"timeline: {a.perfetto} (open it in https://ui.perfetto.dev or chrome://tracing)")
        if figure is not None:
            from ..figure_file import save_figure
            print(f"arrival pattern: {save_figure(figure, a.plot)}")
    except ImportError as e:
        print(f"{prog}: error: this installation cannot export ({e})", file=sys.stderr)
        return 2
    except (OSError, ValueError) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    return 0
