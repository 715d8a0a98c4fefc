"""The `partita` command line: one sub-command per module in partita.commands."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

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


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("partita: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # output piped into e.g. `head`: stop quietly
        sys.stdout = None
        return 0


if __name__ == "__main__":
    sys.exit(main())
