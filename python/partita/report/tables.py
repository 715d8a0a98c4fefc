"""Printing the summary of a results folder."""

from __future__ import annotations

import sys
from pathlib import Path

from .. import launch_checks
from ..pooling import pool_launches
from ..results import ResultError, is_params_file, load_result
from ..summary import summarize_group


def print_run_summary(folder: Path, manifest: dict, out=sys.stdout) -> None:
    launches: dict[str, dict[str, list[dict]]] = {}
    for r in manifest["runs"]:
        if r.get("status") != "ok" or not r.get("result"):
            continue
        if is_params_file(folder / r["result"]):
            print(f"# {r['name']} ({r['impl']}): LogGP parameters in {folder / r['result']} "
                  f"(partita model --params FILE)", file=out)
            continue
        try:
            res = load_result(folder / r["result"])
        except ResultError as e:
            print(f"# {r['name']} ({r['impl']}): {e}", file=out)
            continue
        launches.setdefault(r["name"], {}).setdefault(r["impl"], []).append(res)
    for name, impls in launches.items():
        by_impl = {impl: pool_launches(results) for impl, results in impls.items()}
        first = next(iter(by_impl.values()))
        env = first.get("environment", {})
        print(f"# === {name}: {first.get('program')} on {env.get('ranks')} ranks, {env.get('mpi_library')}", file=out)
        print(summarize_group(name, by_impl), file=out)
    print_check_tables(folder, out)
    for r in manifest["runs"]:
        if r.get("status") != "ok":
            launch = f", launch {r['launch']}" if r.get("launches", 1) > 1 else ""
            print(f"# {r['name']} ({r['impl']}{launch}): {r.get('status')}: {r.get('reason') or 'see ' + str(r.get('log'))}",
                  file=out)
    print(f"# results: {folder}", file=out)


def print_check_tables(folder: Path, out=sys.stdout) -> None:
    """The per-launch policy comparisons (launch_checks.py), every case and launch."""
    from .data import load_runs
    from .headline import format_table

    try:
        groups = load_runs([folder]).groups
    except ResultError:
        return  # the unreadable file is named above
    for g in groups:
        for r in launch_checks.group_checks(g):
            print(f"# {launch_checks.title(r)}", file=out)
            rows = launch_checks.table_rows(r)
            for line in format_table(rows[0], rows[1:]):
                print(line, file=out)
            print("", file=out)
