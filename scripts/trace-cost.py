#!/usr/bin/env python3
"""The tracer's added cost per MPI_Pready (docs/trace.md), with partita-p2p's
pready-cost metric: native MPI and libpartita (default policy), each with and
without libpartita-trace.so, at 1 and T threads, LAUNCHES interleaved launches.
Prints per configuration the median over launches of the per-launch median
ns/call, the range over launches, and the added cost (traced - untraced).
Hold the benchmark lock while it runs (flock).

    scripts/trace-cost.py BUILD_DIR [--launches 5] [--threads 1,16] [--partitions 1024]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def one_launch(build: dict, threads: int, parts: int, preload: list[str], trace_dir: str | None) -> float:
    out = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "PARTITA_TRACE")}
    if preload:
        env["LD_PRELOAD"] = ":".join(preload)
    if trace_dir:
        env["PARTITA_TRACE"] = trace_dir
    cmd = [build["mpiexec"], build["mpiexec_numproc_flag"], "2", str(Path(build["bin_dir"]) / "partita-p2p"),
           "--metric", "pready-cost", "-t", str(threads), "-p", str(parts), "-m", f"{parts * 64}:{parts * 64}",
           "-i", "50", "-x", "5", "-f", "json", "-o", out]
    subprocess.run(cmd, env=env, check=True, timeout=300, stdout=subprocess.DEVNULL)
    doc = json.loads(Path(out).read_text())
    os.unlink(out)
    return doc["results"][0]["metrics"]["pready_ns"]["summary"]["median"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir", type=Path)
    ap.add_argument("--launches", type=int, default=5)
    ap.add_argument("--threads", default="1,16")
    ap.add_argument("--partitions", type=int, default=1024)
    a = ap.parse_args()
    build = json.loads((a.build_dir / "partita-build.json").read_text())
    lib = Path(build["lib_dir"])
    tracer, partita = str(lib / "libpartita-trace.so"), str(lib / "libpartita-mpi.so")
    trace_dir = tempfile.mkdtemp(prefix="trace-cost-")
    configs = {"native": [], "native+trace": [tracer], "partita": [partita], "partita+trace": [tracer, partita]}
    threads = [int(t) for t in a.threads.split(",")]
    samples: dict[tuple[str, int], list[float]] = {(c, t): [] for c in configs for t in threads}
    for launch in range(a.launches):
        for t in threads:
            for name, preload in configs.items():
                samples[(name, t)].append(one_launch(build, t, a.partitions, preload,
                                                     trace_dir if tracer in preload else None))
        print(f"launch {launch + 1}/{a.launches} done", file=sys.stderr)
    print(f"# ns per MPI_Pready (partita-p2p pready-cost, {a.partitions} partitions), "
          f"median over {a.launches} launches [min-max]")
    print(f"{'threads':>7} {'configuration':<15} {'median':>8} {'range':>15} {'added':>8}")
    for t in threads:
        for name in configs:
            s = samples[(name, t)]
            med = statistics.median(s)
            added = ""
            if name.endswith("+trace"):
                base = statistics.median(samples[(name.removesuffix("+trace"), t)])
                added = f"{med - base:+.1f}"
            print(f"{t:>7} {name:<15} {med:8.1f} {f'[{min(s):.1f}-{max(s):.1f}]':>15} {added:>8}")


if __name__ == "__main__":
    main()
