#!/usr/bin/env python3
"""bench-transports.py: libpartita's transports side by side in one run.

Launches partita-p2p (JSON output) with libpartita-mpi preloaded, alternating
the transports launch by launch (A B, B A, A B ...; with more than two, the
list forward, then backward), and prints per case and metric the median over
launches of each launch's median, with the [min-max] range of those
per-launch medians, and (for two) the ratio of the medians, second over
first; --per-launch adds each launch's median, in launch order. A
transport may carry settings of its own, e.g. two libfabric files side by
side: --transports mpi,fabric:PARTITA_LIBFABRIC=A,fabric:PARTITA_LIBFABRIC=B
A transport's settings win over --env and over the build's interposer: fabric:LD_PRELOAD=OTHER/lib/libpartita-mpi.so
puts another build's library beside this one's.

  bench-transports.py [--build DIR] [--launches N] [--transports mpi,fabric]
                      [--env K=V ...] [--launcher CMD] [--show m1,m2] -- P2P_ARGS...

Hold the machine's benchmark lock around it (flock LOCKFILE ...), as for every
campaign whose numbers are reported. Each launch runs on 2 ranks with the
build's own MPI launcher (partita-build.json), as `partita run` does;
--launcher (or $PARTITA_LAUNCHER) names another that takes `-n 2`, e.g.
"bash scripts/cluster-mpiexec.sh" for the emulated hosts.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
from partita.launch import (BuildInfo, LaunchError, child_env, failure_lines, launch_command,  # noqa: E402
                            run_in_group)

LAUNCH_TIMEOUT_S = 900


def transport_env(spec: str) -> dict[str, str]:
    """`fabric` or `fabric:K=V:K=V...`: the transport and settings of its own."""
    name, *settings = spec.split(":")
    env = {"PARTITA_TRANSPORT": name}
    for kv in settings:
        if "=" not in kv:
            sys.exit(f"bench-transports: '{spec}': '{kv}' is not K=V")
        k, v = kv.split("=", 1)
        env[k] = v
    return env


def launch_env(build: BuildInfo, env_extra: dict[str, str], transport: str) -> dict[str, str]:
    """What one launch sets (on top of this process's environment). Later settings win: the build's
    interposer, then --env, then the transport's own (which may preload another build's interposer, to
    put two builds side by side)."""
    return {"LD_PRELOAD": str(build.interposer), **env_extra, **transport_env(transport)}


def check_preloads(env: dict[str, str], transport: str) -> None:
    """A file in LD_PRELOAD that does not exist is only warned about by the loader, and the launch would
    measure the MPI library alone under the transport's name: stop before any launch instead."""
    for f in filter(None, env["LD_PRELOAD"].replace(":", " ").split()):
        if not Path(f).is_file():
            sys.exit(f"bench-transports: '{transport}': LD_PRELOAD names {f}, which does not exist")


def run_once(build: BuildInfo, launcher: str | None, transport: str, env_extra: dict[str, str],
             args: list[str]) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = Path(f.name)
    env = launch_env(build, env_extra, transport)
    cmd = launch_command(build, "partita-p2p", [*args, "-f", "json", "-o", str(out)], 2, env, launcher)
    try:
        p, timed_out = run_in_group(cmd, child_env(env), LAUNCH_TIMEOUT_S)
        if timed_out:
            sys.exit(f"bench-transports: {transport}: the launch did not finish in {LAUNCH_TIMEOUT_S} s")
        if p.returncode != 0:
            sys.exit(f"bench-transports: {transport}: exit {p.returncode}: {failure_lines(p.stdout, p.stderr)}")
        return json.loads(out.read_text())
    except OSError as e:  # the launcher itself cannot be started
        sys.exit(f"bench-transports: cannot start {cmd[0]}: {e.strerror or e}")
    finally:
        out.unlink(missing_ok=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", type=Path, default=Path("build"))
    ap.add_argument("--launches", type=int, default=5)
    ap.add_argument("--transports", default="mpi,fabric",
                    help="comma-separated; each mpi, fabric or auto, optionally with settings of its own: "
                         "fabric:PARTITA_LIBFABRIC=FILE (as many :K=V as needed)")
    ap.add_argument("--env", action="append", default=[], help="K=V for every launch")
    ap.add_argument("--launcher", default=None,
                    help="a launcher taking -n 2 instead of the build's mpiexec (default: $PARTITA_LAUNCHER)")
    ap.add_argument("--show", default="", help="comma-separated metric names to print (default: all)")
    ap.add_argument("--per-launch", action="store_true",
                    help="below each row, every launch's median per transport, in launch order (a launch "
                         "2-3x off the rest shows a per-launch mode, which the median hides)")
    ap.add_argument("p2p", nargs=argparse.REMAINDER, help="-- then partita-p2p's arguments")
    a = ap.parse_args()
    p2p = a.p2p[1:] if a.p2p[:1] == ["--"] else a.p2p
    try:
        build = BuildInfo.find(a.build)
        build.program("partita-p2p")
    except (LaunchError, OSError) as e:
        sys.exit(f"bench-transports: {e}")
    bad = [kv for kv in a.env if "=" not in kv]
    if bad:
        sys.exit(f"bench-transports: --env '{bad[0]}' is not K=V")
    env_extra = dict(kv.split("=", 1) for kv in a.env)
    transports = a.transports.split(",")
    for t in transports:  # a malformed one, or a missing preload, stops the campaign before any launch
        check_preloads(launch_env(build, env_extra, t), t)
    # per transport, per (case, metric): the median of each launch
    med: dict[str, dict[tuple, list[float]]] = {t: {} for t in transports}
    loads = []
    for k in range(a.launches):
        order = transports if k % 2 == 0 else transports[::-1]
        for t in order:
            loads.append(os.getloadavg()[0])
            doc = run_once(build, a.launcher, t, env_extra, p2p)
            for r in doc["results"]:
                c = r["case"]
                key = (c["bytes"], c["partitions"], c.get("threads", 1))
                for m, v in r.get("metrics", {}).items():
                    s = v.get("summary", {})
                    if s.get("median") is not None:
                        med[t].setdefault((key, m), []).append(s["median"])
        print(f"# launch {k + 1}/{a.launches} done (order {' '.join(order)})", file=sys.stderr)
    print(f"# partita-p2p {' '.join(p2p)}; {a.launches} launches per transport, interleaved; "
          f"load average {min(loads):.1f}-{max(loads):.1f}; env {' '.join(a.env) or '-'}")
    print("# value: median over launches of the per-launch medians [min-max of those]")
    show = set(filter(None, a.show.split(",")))
    keys = sorted(k for k in med[transports[0]] if not show or k[1] in show)
    hdr = f"{'bytes':>9} {'parts':>5} {'thr':>3} {'metric':>13} " + " ".join(f"{t:>26}" for t in transports)
    if len(transports) == 2:
        hdr += f" {transports[1] + '/' + transports[0]:>12}"
    print(hdr)
    for key in keys:
        (b, p, th), m = key
        cells, mids = [], []
        for t in transports:
            v = med[t].get(key, [])
            mid = statistics.median(v) if v else float("nan")
            mids.append(mid)
            cells.append(f"{mid:10.4g} [{min(v):.4g}-{max(v):.4g}]" if v else "-")
        line = f"{b:>9} {p:>5} {th:>3} {m:>13} " + " ".join(f"{c:>26}" for c in cells)
        if len(transports) == 2 and mids[0]:
            line += f" {mids[1] / mids[0]:12.3f}"
        print(line)
        if a.per_launch:
            for t in transports:
                print(f"{'':>33} per launch, {t}: " + " ".join(f"{x:.4g}" for x in med[t].get(key, [])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
