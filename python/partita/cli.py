"""The `partita` command line: one sub-command per module in partita.commands."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import signal
import sys
import threading

from . import __version__, commands


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="partita",
        description="Benchmark, accelerate, model and explain MPI-4 partitioned communication.",
    )
    parser.add_argument("--version", action="version", version=f"partita {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    # Each module in partita.commands registers its own sub-command(s): adding a
    # command never means editing this file.
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(sub)
    return parser


class Terminated(BaseException):
    """SIGTERM (`timeout`, a batch system, kill), raised like Ctrl-C's KeyboardInterrupt: unwinding
    stops what partita started (launch.run_in_group kills the launch's process group)."""


def _terminated(signum, frame):
    raise Terminated


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # SIGTERM's default action ended partita at once and left its launches running (signal handlers
    # belong to the main thread: a caller's other thread keeps the default)
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminated) if in_main else None
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("partita: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("partita: interrupted (SIGTERM)", file=sys.stderr)
        return 128 + signal.SIGTERM
    except BrokenPipeError:
        # output piped into e.g. `head`: stop quietly
        sys.stdout = None
        return 0
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


if __name__ == "__main__":
    sys.exit(main())
