"""partita cluster: bring the emulated cluster of scripts/cluster.sh up or down, or show it."""

from __future__ import annotations

import argparse
import subprocess
import sys

from ..cluster import CLUSTER_SH, DEFAULT_RATE, SKIP_CODE


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "cluster",
        help="an emulated cluster on this machine: hosts as network namespaces (root)",
        description="Emulate a cluster on this machine (root, ip and tc): every host is a network namespace with "
        "its own hostname (h0, h1, ...), joined to the others through a bridge by a link whose rate a token "
        "bucket (tc tbf) sets. `partita run --cluster emulated:N` and scripts/cluster-mpiexec.sh run MPI jobs "
        "across it. See docs/two-hosts.md.",
    )
    p.add_argument("action", choices=["up", "down", "status"],
                   help="up: (re)create, removing any leftover first; down: remove (idempotent); status: show")
    # defaults filled in by main: None says "not given", which `down` and `status` refuse
    p.add_argument("--hosts", type=int, help="hosts (up; 2..64, default 2)")
    p.add_argument("--rate", help=f"link rate in tc units, e.g. 1gbit, 500mbit (up; default {DEFAULT_RATE})")
    p.add_argument("--mtu", type=int, help="link MTU in bytes (up; default 9000)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    given = [f"--{name}" for name in ("hosts", "rate", "mtu") if getattr(args, name) is not None]
    if given and args.action != "up":  # ignored, they would hide a mistake (the user thinks they took effect)
        print(f"partita cluster: error: {', '.join(given)}: only with `up` (`{args.action}` takes no option)",
              file=sys.stderr)
        return 2
    if args.rate is not None and not args.rate.strip():  # cluster.sh: "line 171: 2: parameter null or not set"
        print("partita cluster: error: --rate is empty: give a rate in tc units, e.g. 1gbit", file=sys.stderr)
        return 2
    cmd = ["bash", str(CLUSTER_SH), args.action]
    if args.action == "up":
        cmd += ["--hosts", str(2 if args.hosts is None else args.hosts),
                "--rate", DEFAULT_RATE if args.rate is None else args.rate,
                "--mtu", str(9000 if args.mtu is None else args.mtu)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        print(f"partita cluster: error: {e}", file=sys.stderr)
        return 2
    if p.returncode == 0 or (args.action == "status" and p.returncode == 1):
        sys.stdout.write(p.stdout)
        return p.returncode
    why = (p.stderr or p.stdout).strip().splitlines()
    why = why[-1] if why else f"exit {p.returncode}"
    if why.startswith("cluster.sh: error: "):
        why = why[len("cluster.sh: error: "):]
    elif why.startswith("cluster.sh: "):
        why = why[len("cluster.sh: "):]
    print(f"partita cluster: error: {why}", file=sys.stderr)
    return 2 if p.returncode != SKIP_CODE else SKIP_CODE
