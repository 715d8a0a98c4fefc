"""Results folders made up for the report tests: partita.result/1 documents with the metrics of
every benchmark family the report draws, and a partita.run/1 manifest around them."""

from __future__ import annotations

import json
from pathlib import Path

UNITS = {"overhead": "ratio", "perceived_bw": "MB/s", "availability": "%", "early_bird": "%",
         "early_arrival": "%", "t_pt2pt_us": "us", "t_after_join_us": "us", "bandwidth": "MB/s", "time_us": "us"}
SIZES = (4096, 65536, 1 << 20)


def metric(name: str, v: float, spread: float = 0.05) -> dict:
    return {"unit": UNITS.get(name, ""), "summary": {"n": 20, "median": v, "ci95_lo": v * (1 - spread),
                                                     "ci95_hi": v * (1 + spread)}}


def result(benchmark: str, cases: list[tuple[dict, dict]], impl: str = "native", **config) -> dict:
    env = {"mpi_library": "MPICH Version: 5.0.2", "ranks": 2, "nodes": 1, "hosts": ["h1", "h1"]}
    if impl.startswith("partita:"):
        env["partita_policy"] = impl.split(":", 1)[1]
    cfg = {"iterations": 20, "threads": 1, "compute_us": 0, "noise": "none", "compute_mode": "spin"} | config
    return {"schema": "partita.result/1", "benchmark": benchmark, "program": f"partita-{benchmark}",
            "environment": env, "config": cfg,
            "results": [{"case": case, "validation": "skipped",
                         "metrics": {m: metric(m, v) for m, v in values.items()}} for case, values in cases]}


def p2p(impl: str = "native", gain: float = 1.0, noisy: bool = False, zero_early: bool = False) -> dict:
    """partita-p2p: overhead 1.2 x gain per case; under noise availability and early arrival that
    grow with the gain (0 with zero_early)."""
    cases = []
    for b in SIZES:
        for p in ((8,) if noisy else (1, 8)):
            t_ref = 2 + b / 10000
            v = {"overhead": 1.2 * gain * (1 + p / 64), "t_pt2pt_us": t_ref}
            if noisy:
                early = 0.0 if zero_early else min(90.0, 40 * gain)
                v |= {"perceived_bw": b / t_ref * gain, "availability": early, "early_bird": early and 40.0 + 10 * gain,
                      "early_arrival": early and min(100.0, 25.0 * gain), "t_after_join_us": t_ref * 1.5}
            cases.append(({"bytes": b, "partitions": p, "threads": 2 if noisy else 1}, v))
    cfg = {"threads": 2, "compute_us": 1000, "noise": "delay:500us", "compute_mode": "sleep"} if noisy else {}
    return result("p2p", cases, impl, **cfg)


def mech(impl: str = "native") -> dict:
    cases = [({"bytes": 1 << 20, "partitions": (1 << 20) // pb, "partition_bytes": pb, "threads": 1, "scheme": sch,
               "mechanism": mech}, {"bandwidth": bw * (pb / 1024) ** 0.3})
             for pb in (1024, 16384, 262144) for sch in ("ltr", "random")
             for mech, bw in (("persistent", 800.0), ("psend", 3000.0))]
    return result("mech", cases, impl)


def pattern(benchmark: str, strategies: dict[str, float], impl: str = "native") -> dict:
    return result(benchmark, [({"strategy": s, "threads": 2, "partitions": 2 if s.startswith("part") else 0},
                               {"time_us": t}) for s, t in strategies.items()], impl, threads=2, compute_us=200,
                  compute_mode="sleep")


def write_folder(path: Path, runs: list[tuple[str, str, object]], suite: str = "t") -> Path:
    """runs: (run name, implementation, result dict | 'failed' | 'unavailable' | 'missing')."""
    path.mkdir(parents=True, exist_ok=True)
    entries = []
    for name, impl, res in runs:
        base = f"{name}-{impl.replace(':', '_')}"
        entry = {"name": name, "impl": impl, "np": 2, "args": ["-i", "20"], "launch": 1, "launches": 1,
                 "command": ["/opt/x/bin/mpiexec", "-n", "2", f"/opt/x/bin/partita-{name.split('-')[0]}", "-i", "20",
                             "--format", "json", "--output", f"{base}.json"]}
        if isinstance(res, dict):
            entry["program"] = res["program"]
            (path / f"{base}.json").write_text(json.dumps(res))
            entry |= {"status": "ok", "result": f"{base}.json", "log": f"{base}.log"}
        elif res == "missing":
            entry |= {"status": "ok", "result": f"{base}.json", "log": f"{base}.log"}
        elif res == "failed":
            entry |= {"status": "failed", "exit_code": 1, "result": None, "log": f"{base}.log"}
        else:
            entry |= {"status": "unavailable", "reason": "no native partitioned calls in this MPI"}
        entries.append(entry)
    (path / "manifest.json").write_text(json.dumps({"schema": "partita.run/1", "suite": suite,
                                                    "description": "made up for a test", "runs": entries}))
    return path


def every_family(path: Path) -> Path:
    """A folder with something for every figure family (the model's comes with the p2p runs)."""
    return write_folder(path, [
        ("p2p", "native", p2p("native", 1.0)), ("p2p", "partita:model", p2p("partita:model", 0.5)),
        ("p2p-noise", "native", p2p("native", 1.0, noisy=True)),
        ("p2p-noise", "partita:timer", p2p("partita:timer", 1.5, noisy=True)),
        ("mech", "native", mech("native")),
        ("sweep3d", "native", pattern("sweep3d", {"single": 7000.0, "multiple": 6000.0, "partitioned": 9000.0})),
        ("halo3d", "native", pattern("halo3d", {"single": 480.0, "partitioned": 520.0, "persistent": 570.0})),
        ("stencil", "native", pattern("stencil", {"nonblocking": 450.0, "persistent": 470.0, "partitioned": 400.0})),
    ])
