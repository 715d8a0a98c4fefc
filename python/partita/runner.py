"""Running a suite: every run x implementation, results collected in one folder."""

from __future__ import annotations

import datetime as dt
import json
import sys
import time
from pathlib import Path

from .launch import BuildInfo, LaunchError, impl_env, inherited_settings, run_program, unknown_policy
from .results import RUN_SCHEMA
from .suite import RunSpec, Suite


def results_folder(base: Path, suite: Suite | str) -> Path:
    """A new folder base/<timestamp>-<name> (name: the suite's, or the string given)."""
    name = suite if isinstance(suite, str) else suite.name
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = base / f"{stamp}-{name}"
    n = 1
    while out.exists():
        n += 1
        out = base / f"{stamp}-{name}-{n}"
    out.mkdir(parents=True)
    return out


def safe(s: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in s)


def launch_order(suite: Suite, impls_override: list[str] | None = None,
                 repeat_override: int | None = None) -> list[tuple[RunSpec, str, int, int]]:
    """(run, implementation, launch, launches) in the order of launching. The launches of
    one run are interleaved (A B C A B C, not A A B B C C) so that drift of the machine
    during the run falls on every implementation alike."""
    jobs = []
    for r in suite.runs:
        n = repeat_override or r.repeat
        jobs += [(r, impl, k, n) for k in range(1, n + 1) for impl in (impls_override or r.impls)]
    return jobs


def launch_args(args: list[str], launch: int) -> list[str]:
    """A run's arguments for one of its launches: "{launch}" becomes the launch number (1, 2, ...),
    e.g. partita-adapt-bench's -l, which relabels its implementations in the rounds' order so that
    the launches do not share one order. The manifest keeps the arguments as written, which is how
    the summary knows the launches for one run (report/data.py: run_key); the command shows these."""
    return [a.replace("{launch}", str(launch)) for a in args]


# Progress lines estimate the remaining time once it is at least this long (long suites only).
ETA_MIN_S = 20.0


def remaining_estimate(jobs: list, done: list[float], i: int) -> float:
    """Seconds the jobs after the i-th (1-based) should take: each run's own mean launch time so far,
    the mean of all finished launches for runs not started yet."""
    if not done:
        return 0.0
    per_run: dict[str, list[float]] = {}
    for (spec, *_), d in zip(jobs, done):
        per_run.setdefault(spec.name, []).append(d)
    overall = sum(done) / len(done)
    return sum(sum(per_run[spec.name]) / len(per_run[spec.name]) if spec.name in per_run else overall
               for spec, *_ in jobs[i:])


def fmt_eta(seconds: float) -> str:
    if seconds < ETA_MIN_S:
        return ""
    m, s = divmod(int(round(seconds)), 60)
    return f" (about {m} min {s:02d} s left)" if m else f" (about {s} s left)"


def run_suite(suite: Suite, build: BuildInfo, out: Path, np_override: int | None = None,
              launcher: str | None = None, impls_override: list[str] | None = None,
              repeat_override: int | None = None, log=sys.stdout, meta: dict | None = None) -> dict:
    """Run everything, write out/manifest.json and one JSON + log per launch; return the manifest.
    The manifest is rewritten after every launch, so the launches that finished stay readable when
    the suite is interrupted (it has "finished" once every launch is done).
    `meta`: more top-level manifest entries (e.g. "cluster": the hosts and link rate)."""
    jobs = launch_order(suite, impls_override, repeat_override)
    # the suite and the implementation define these, not whoever started partita
    dropped = inherited_settings()
    if dropped:
        print(f"partita run: warning: not passed to the launches (the suite and --impl set them): "
              f"{', '.join(dropped)}", file=sys.stderr, flush=True)
    manifest = {
        "schema": RUN_SCHEMA,
        "suite": suite.name,
        "description": suite.description,
        "started": dt.datetime.now().isoformat(timespec="seconds"),
        "build": build.raw,
        "launcher": launcher,
        "dropped_env": dropped,
        **(meta or {}),
        "runs": [],
    }
    durations: list[float] = []
    unknown: dict[str, str] = {}   # implementation -> why the library refused its policy: not launched again
    for i, (spec, impl, launch, launches) in enumerate(jobs, 1):
        np = np_override or spec.np
        label = f"{spec.name} ({impl}, {np} ranks" + (f", launch {launch}/{launches})" if launches > 1 else ")")
        print(f"[{i}/{len(jobs)}] {label} ...", end="", file=log, flush=True)
        entry = {"name": spec.name, "program": spec.program, "impl": impl, "np": np, "args": spec.args,
                 "launch": launch, "launches": launches}
        if spec.description:
            entry["description"] = spec.description
        base = safe(f"{spec.name}-{impl}" + (f"-{launch}" if launches > 1 else ""))
        t0 = time.monotonic()
        try:
            impl_env(build, impl)  # checks the implementation is available
            if impl in unknown:
                raise LaunchError(unknown[impl])
            o = run_program(build, spec.program, launch_args(spec.args, launch), np=np, impl=impl, env=spec.env,
                            timeout=spec.timeout,
                            launcher=launcher, json_out=out / f"{base}.json", drop=dropped)
        except LaunchError as e:
            entry.update(status="unavailable", reason=str(e), duration_s=0.0)
            durations.append(0.0)
            print(f" unavailable: {e}", file=log, flush=True)
            manifest["runs"].append(entry)
            write_manifest(out, manifest)
            continue
        dur = time.monotonic() - t0
        durations.append(dur)
        eta = fmt_eta(remaining_estimate(jobs, durations, i))
        (out / f"{base}.log").write_text(
            "$ " + " ".join(o.command) + "\n" + "".join(f"# {k}={v}\n" for k, v in o.env.items())
            + (f"# not passed on from partita's environment: {', '.join(dropped)}\n" if dropped else "")
            + "--- stdout\n" + o.stdout + "--- stderr\n" + o.stderr)
        ok = o.returncode == 0 and o.result is not None
        entry.update(status="ok" if ok else "failed", exit_code=o.returncode, duration_s=round(dur, 2),
                     command=o.command, env=o.env, log=f"{base}.log",
                     result=f"{base}.json" if o.result is not None else None)
        refused = None if ok else unknown_policy(impl, o.env, o.stderr)
        if refused:
            # a policy this build does not have (yet): reported as unavailable, like a missing
            # implementation, not as a failed measurement
            unknown[impl] = refused
            entry.update(status="unavailable", reason=refused)
            print(f" unavailable: {refused}", file=log, flush=True)
        elif ok:
            print(f" done in {dur:.1f} s{eta}", file=log, flush=True)
        else:
            why = (o.stderr.strip().splitlines() or ["no output"])[-1]
            print(f" FAILED (exit {o.returncode}) in {dur:.1f} s: {why}{eta}", file=log, flush=True)
        manifest["runs"].append(entry)
        write_manifest(out, manifest)
    manifest["finished"] = dt.datetime.now().isoformat(timespec="seconds")
    write_manifest(out, manifest)
    return manifest


def write_manifest(out: Path, manifest: dict) -> None:
    # whole or not at all: an interruption while writing never leaves half a manifest
    tmp = out / "manifest.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=2) + "\n")
    tmp.replace(out / "manifest.json")
