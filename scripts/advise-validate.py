#!/usr/bin/env python3
"""Validate `partita advise` (docs/trace-analysis.md, "Validation"): for one scenario, run the
program once natively (traced, or partita-p2p's own JSON), advise at the program's partition
count, then run every candidate setting in N interleaved launches and report whether the
advised one was within 10% of the measured best. Hold the benchmark lock around it:

    flock BENCH_LOCK .venv/bin/python scripts/advise-validate.py p2p-1M --launches 5 --out v.json

Scenarios: p2p-64K, p2p-1M, p2p-4M (partita-p2p, 4 threads, one 300 µs late), sweep3d,
halo3d, stencil (4 ranks x 4 threads, one thread 300 µs late). Compute is emulated with
sleep (more threads than cores). `--iterations N` replaces the scenario's -i (timed
iterations per launch) in the advise run and every candidate's launches.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from partita.launch import BuildInfo, LaunchError, run_benchmark, run_program
from partita.model.options import load_params
from partita.trace.advise import advise_case, advice_lines
from partita.trace.sources import cases_from_result, load_cases

LAG = ["--compute", "200", "--compute-mode", "sleep", "--noise", "delay:300", "--noise-thread", "0"]
SCENARIOS = {
    "p2p-64K": ("partita-p2p", 2, ["-m", "64K:64K", "-p", "8", "-t", "4", "--metric", "overhead", "-i", "30",
                                   "-x", "3", *LAG]),
    "p2p-1M": ("partita-p2p", 2, ["-m", "1M:1M", "-p", "8", "-t", "4", "--metric", "overhead", "-i", "30",
                                  "-x", "3", *LAG]),
    "p2p-4M": ("partita-p2p", 2, ["-m", "4M:4M", "-p", "8", "-t", "4", "--metric", "overhead", "-i", "30",
                                  "-x", "3", *LAG]),
    "sweep3d": ("partita-sweep3d", 4, ["-g", "16,16,16", "-t", "4", "-M", "partitioned", "-i", "10", "-x", "2",
                                       *LAG]),
    "halo3d": ("partita-halo3d", 4, ["-g", "32", "-t", "4", "-M", "partitioned", "-i", "10", "-x", "2", *LAG]),
    "stencil": ("partita-stencil", 4, ["-t", "4", "-S", "partitioned", "-i", "10", "-x", "2", *LAG]),
}


def setting(c, native_policy: str) -> tuple[str, dict[str, str]]:
    """The implementation and environment that run a candidate."""
    if c.policy == native_policy:
        return "native", {}
    env = {}
    if c.policy == "model" and c.delay_us > 0:
        env["PARTITA_DELAY_US"] = f"{c.delay_us:.0f}"
    if c.policy == "timer":  # as advised: the progress thread flushes split groups
        env["PARTITA_DELTA_US"] = f"{c.delta_us:.0f}"
        env["PARTITA_PROGRESS_THREAD"] = "1"
    return f"partita:{c.policy}", env


def metric(program: str, doc: dict) -> float:
    """p2p: median time from the last MPI_Pready to the last arrival; patterns: median
    iteration time of the partitioned variant."""
    for r in doc.get("results", []):
        m = r.get("metrics") or {}
        if program == "partita-p2p" and "t_last_us" in m:
            return float(m["t_last_us"]["summary"]["median"])
        if program != "partita-p2p" and "time_us" in m:
            return float(m["time_us"]["summary"]["median"])
    raise LaunchError(f"{program}: no metric in the result")


def scenario_args(name: str, iterations: int | None) -> tuple[str, int, list[str]]:
    """The scenario's program, rank count and arguments, with -i replaced when asked."""
    program, np, args = SCENARIOS[name]
    args = list(args)
    if iterations is not None:
        args[args.index("-i") + 1] = str(iterations)
    return program, np, args


def advise_scenario(build: BuildInfo, name: str, work: Path, iterations: int | None = None):
    program, np, args = scenario_args(name, iterations)
    if program == "partita-p2p":
        doc = run_benchmark(build, program, args, np=np, timeout=300)
        cases = cases_from_result(doc, name)
        library = doc.get("environment", {}).get("mpi_library")
    else:
        folder = work / f"trace-{name}"
        o = run_program(build, program, args, np=np, timeout=300,
                        env={"LD_PRELOAD": str(build.tracer), "PARTITA_TRACE": str(folder)})
        if o.returncode != 0:
            raise LaunchError(f"{program} traced: exit {o.returncode}: {o.stderr[-500:]}")
        cases, library = load_cases(folder)
    # the program moves most of its bytes in this request shape: one policy for the program
    case = max(cases, key=lambda c: c.total_bytes * len(c.rounds))
    params = load_params(None, "advise-validate", library)
    return program, np, args, case, advise_case(params, case, keep_partitions=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    ap.add_argument("--launches", type=int, default=5)
    ap.add_argument("--iterations", "-i", type=int,
                    help="timed iterations per launch instead of the scenario's own (a longer run "
                         "evens out a busy machine); used for the advise run and every candidate")
    ap.add_argument("--out", type=Path, help="append the outcome as one JSON line to this file")
    a = ap.parse_args()
    if a.iterations is not None and a.iterations < 1:
        ap.error("--iterations must be at least 1")
    build = BuildInfo.find()
    with tempfile.TemporaryDirectory(prefix="advise-validate-") as tmp:
        program, np, args, case, adv = advise_scenario(build, a.scenario, Path(tmp), a.iterations)
    print("\n".join(advice_lines(adv)))
    native = case.current_policy
    runs = {}
    for o in adv.outcomes:
        impl, env = setting(o.candidate, native)
        runs.setdefault((impl, tuple(sorted(env.items()))), []).append(o)
    measured: dict[tuple, list[float]] = {k: [] for k in runs}
    for launch in range(a.launches):  # interleaved: every setting once per launch round
        for key in runs:
            impl, env = key
            try:
                doc = run_benchmark(build, program, args, np=np, impl=impl, env=dict(env), timeout=300)
                measured[key].append(metric(program, doc))
            except LaunchError as e:
                print(f"# {impl} {dict(env)}: {e}", file=sys.stderr)
    med = {k: statistics.median(v) for k, v in measured.items() if v}
    best = min(med.values())
    advised_key = next(k for k, os_ in runs.items() if adv.best in os_)
    rows = []
    for k, v in med.items():
        outs = runs[k]
        rows.append({"impl": k[0], "env": dict(k[1]), "candidates": [o.candidate.describe() for o in outs],
                     "predicted_us": min(o.predicted_us for o in outs), "measured_median": v,
                     "measured_range": [min(measured[k]), max(measured[k])], "advised": k == advised_key})
        mark = "*" if k == advised_key else " "
        print(f"{mark} {k[0]:<16} {json.dumps(dict(k[1])):<28} predicted {rows[-1]['predicted_us']:8.1f} µs  "
              f"measured {v:10.1f} [{min(measured[k]):.1f}, {max(measured[k]):.1f}]")
    within = advised_key in med and med[advised_key] <= 1.10 * best
    print(f"{a.scenario}: advised {'within' if within else 'NOT within'} 10% of the measured best "
          f"({med.get(advised_key, float('nan')):.1f} vs {best:.1f}; {a.launches} interleaved launches)")
    if a.out:
        with a.out.open("a") as f:
            f.write(json.dumps({"scenario": a.scenario, "launches": a.launches, "args": args,
                                "within_10pct": within,
                                "metric": "t_last_us" if program == "partita-p2p" else "time_us",
                                "rows": rows}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
