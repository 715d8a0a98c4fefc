"""Printing the summary of a results folder."""

from __future__ import annotations

import sys
from pathlib import Path

from .results import ResultError, load_result
from .summary import summarize_group


def print_run_summary(folder: Path, manifest: dict, out=sys.stdout) -> None:
    groups: dict[str, dict[str, dict]] = {}
    for r in manifest["runs"]:
        if r.get("status") != "ok" or not r.get("result"):
            continue
        try:
            res = load_result(folder / r["result"])
        except ResultError as e:
            print(f"# {r['name']} ({r['impl']}): {e}", file=out)
            continue
        groups.setdefault(r["name"], {})[r["impl"]] = res
    for name, by_impl in groups.items():
        first = next(iter(by_impl.values()))
        env = first.get("environment", {})
        print(f"# === {name}: {first.get('program')} on {env.get('ranks')} ranks, {env.get('mpi_library')}", file=out)
        print(summarize_group(name, by_impl), file=out)
    for r in manifest["runs"]:
        if r.get("status") != "ok":
            print(f"# {r['name']} ({r['impl']}): {r.get('status')}: {r.get('reason') or 'see ' + str(r.get('log'))}",
                  file=out)
    print(f"# results: {folder}", file=out)
