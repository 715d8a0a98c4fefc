"""Run the peer conformance suites for one MPI under each policy, and summarise all runs.

    run_suites.py run --mpi NAME --flavour mpich|openmpi --mpiexec PATH --bindir DIR
                      --mpich-src DIR --mpi4py-src DIR --python PY --pythonpath DIR
                      --interposer LIB --policies native,none,... --level quick|full --results FILE
                      --expectations FILE
    run_suites.py summary --results-dir DIR --expectations FILE

`run` appends one JSON line per case to FILE; `summary` reads every *.jsonl in DIR, applies
the expectations file, prints the suite x policy table and exits 1 on an unexpected failure.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import peer_cases
import peer_expect
from peer_launch import PRELOAD_FAILED, Launcher, probe_preload, run

# Environment of each policy. "native" runs without the interposer (the control).
POLICIES = {
    "native": None,
    "none": {"PARTITA_POLICY": "none"},
    "bulk": {"PARTITA_POLICY": "bulk"},
    "static": {"PARTITA_POLICY": "static"},
    "model": {"PARTITA_POLICY": "model"},
    "timer": {"PARTITA_POLICY": "timer"},
    "fixed2": {"PARTITA_POLICY": "fixed", "PARTITA_TRANSPORT_PARTS": "2"},
    # candidate layouts tried online; most peer cases run a few rounds, i.e. the exploration
    "adaptive": {"PARTITA_POLICY": "adaptive"},
    # the buffer cut into 61 byte-balanced pieces (at most one per byte) that straddle partition
    # boundaries (61 is prime): the model's small-message layout.
    "cut": {"PARTITA_POLICY": "fixed", "PARTITA_TRANSPORT_PARTS": "61"},
    "table": {"PARTITA_POLICY": "table"},
    # timer with a tiny delta: partial groups are flushed almost every time.
    "timer-1us": {"PARTITA_POLICY": "timer", "PARTITA_DELTA_US": "1"},
    # static with large groups: many user partitions share one transport message.
    "static-64k": {"PARTITA_POLICY": "static", "PARTITA_MIN_BYTES": "65536"},
}
MAX_LISTED = 40   # unexpected failures listed one by one at the end of the summary
# A case listed as an expected failure gets this shorter limit: natively every case ends
# within seconds, so a known hang need not cost the full limit.
EXPECTED_FAILURE_TIMEOUT = 20
ERROR_LINE = re.compile(r"error|abort|assert|found \d+ errors|traceback|fail|signal|segmentation|killed",
                        re.IGNORECASE)


def policy_env(name: str) -> dict[str, str] | None:
    """A named policy, or an ad-hoc one written as NAME:KEY=VALUE,KEY=VALUE."""
    if name in POLICIES:
        return POLICIES[name]
    label, _, spec = name.partition(":")
    if not spec:
        raise SystemExit(f"run_suites: unknown policy '{name}'; known: {', '.join(POLICIES)} or NAME:K=V,...")
    return dict(item.split("=", 1) for item in spec.split(","))


def first_error_lines(text: str, limit: int = 3) -> str:
    lines = [line.strip() for line in text.splitlines() if ERROR_LINE.search(line)]
    return " | ".join(lines[:limit])[:400]


def mpich_verdict(outcome) -> tuple[str, str]:
    if PRELOAD_FAILED in outcome.output:
        return "fail", "the interposer was not preloaded"
    if outcome.timed_out:
        return "timeout", first_error_lines(outcome.output)
    if outcome.returncode == 0 and "No Errors" in outcome.output:
        return "pass", ""
    return "fail", f"exit {outcome.returncode}: " + first_error_lines(outcome.output)


def mpi4py_verdicts(case, outcome, outdir: Path, names: list[str]) -> list[tuple[str, str, str]]:
    """Per test case: pass only when every rank recorded it as ok."""
    per_case: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for rank_file in sorted(outdir.glob("rank*.tsv")):
        for line in rank_file.read_text(encoding="utf-8").splitlines():
            name, status, detail = (line.split("\t") + ["", ""])[:3]
            per_case[name].append((status, f"{rank_file.stem}: {detail.strip()}"))
    if PRELOAD_FAILED in outcome.output:
        return [(n, "fail", "the interposer was not preloaded") for n in names]
    verdicts = []
    for name in names:
        records = per_case.get(name, [])
        bad = [detail for status, detail in records if status != "ok"]
        if len(records) == case.nprocs and not bad:
            verdicts.append((name, "pass", ""))
        elif bad:
            verdicts.append((name, "fail", "; ".join(bad)[:400]))
        else:
            why = "timed out" if outcome.timed_out else f"exit {outcome.returncode}"
            verdicts.append((name, "timeout" if outcome.timed_out else "fail",
                             f"not finished on {case.nprocs - len(records)} rank(s) ({why}): "
                             + first_error_lines(outcome.output)))
    return verdicts


@dataclass
class PolicyRun:
    """The cases of one MPI under one policy: runs them, records and reports outcomes."""
    args: argparse.Namespace
    launcher: Launcher
    expectations: list
    sink: TextIO
    policy: str
    counts: dict = field(default_factory=lambda: defaultdict(int))
    failures: list = field(default_factory=list)

    lock: threading.Lock = field(default_factory=threading.Lock)  # the sink and stdout, shared by --jobs runs

    def note(self, suite, name, status, detail, seconds, log):
        line = json.dumps({"mpi": self.args.mpi, "policy": self.policy, "suite": suite, "case": name,
                           "status": status, "detail": detail, "seconds": round(seconds, 2), "log": str(log)})
        with self.lock:
            self.sink.write(line + "\n")
            self.sink.flush()
        label = "expected-" + status if status != "pass" and self.expected(suite, name) else status
        self.counts[label] += 1
        if status != "pass":
            self.failures.append(f"    {label:7} {suite}: {name}: {detail[:200]}")

    def expected(self, suite, name) -> bool:
        return bool(peer_expect.reason_for(self.expectations, suite, name, self.args.mpi, self.policy))

    def mpich_case(self, case, env, preload, logdir, skip_reason):
        log = logdir / case.suite / (re.sub(r"[^A-Za-z0-9=._-]+", "_", case.name) + ".log")
        if skip_reason:
            self.note(case.suite, case.name, "notrun", skip_reason, 0.0, log)
            return
        timeout = min(case.timeout, EXPECTED_FAILURE_TIMEOUT) if self.expected(case.suite, case.name) else case.timeout
        outcome = run(self.launcher.command(case.nprocs, preload, case.argv), {**env, **case.env},
                      timeout, Path(self.args.bindir), log)
        self.note(case.suite, case.name, *mpich_verdict(outcome), outcome.seconds, log)

    def mpi4py_module(self, nprocs, names, env, preload, logdir, skip_reason):
        outdir = logdir / f"mpi4py-np{nprocs}"
        mpi4py_src = Path(self.args.mpi4py_src)
        case = peer_cases.mpi4py_run(mpi4py_src, self.args.python, outdir, nprocs)
        log = outdir / "run.log"
        why_not = skip_reason or self.args.mpi4py_missing
        if why_not:
            for name in names:
                self.note(case.suite, name, "notrun", why_not, 0.0, log)
            return
        for stale in outdir.glob("rank*.tsv"):
            stale.unlink()
        outcome = run(self.launcher.command(nprocs, preload, case.argv), env, case.timeout, mpi4py_src, log)
        for name, status, detail in mpi4py_verdicts(case, outcome, outdir, names):
            self.note(case.suite, name, status, detail, outcome.seconds / len(names), log)

    def report(self, seconds, skip_reason):
        summary = ", ".join(f"{n} {s}" for s, n in sorted(self.counts.items()))
        lines = [f"[peer-tests] {self.args.mpi:9} {self.policy:10} {summary} ({seconds:.0f} s)"]
        if skip_reason:
            lines.append(f"    not run: {skip_reason}")
        elif self.failures:
            lines += self.failures[:12]
            if len(self.failures) > 12:
                lines.append(f"    ... {len(self.failures) - 12} more")
        with self.lock:
            print("\n".join(lines), flush=True)


def cmd_run(args) -> int:
    launcher = Launcher(args.mpiexec, args.flavour)
    bindir, results = Path(args.bindir), Path(args.results)
    quick = args.level == "quick"
    src, mpi4py_src = Path(args.mpich_src), Path(args.mpi4py_src)
    mpich_cases = (peer_cases.mpich_part(src, bindir) + peer_cases.mpich_threads(src, bindir)
                   + peer_cases.mpich_pingping(bindir, quick))
    mpi4py_nprocs = [2] if quick else [2, 3]
    mpi4py_names = peer_cases.mpi4py_case_names(mpi4py_src)
    expectations = peer_expect.load(Path(args.expectations))
    lock = threading.Lock()
    for policy in args.policies.split(","):
        policy_env(policy)  # an unknown policy stops the run before anything starts

    def run_policy(policy: str, sink: TextIO) -> None:
        started = time.monotonic()
        extra = policy_env(policy)
        if extra is not None:  # --env (e.g. the fabric transport) applies to every interposed policy
            extra = {**dict(kv.split("=", 1) for kv in args.env), **extra}
        preload = None if extra is None else str(Path(args.interposer).resolve())
        env = launcher.environment({"PYTHONPATH": args.pythonpath, **(extra or {})})
        logdir = results.parent / "logs" / args.mpi / re.sub(r"[^A-Za-z0-9=._-]+", "_", policy)
        skip_reason = preload and probe_preload(launcher, bindir / "probe-interposer", preload, env,
                                                logdir / "probe-interposer.log")
        step = PolicyRun(args, launcher, expectations, sink, policy, lock=lock)
        for case in mpich_cases:
            step.mpich_case(case, env, preload, logdir, skip_reason)
        for nprocs in mpi4py_nprocs:
            step.mpi4py_module(nprocs, mpi4py_names, env, preload, logdir, skip_reason)
        step.report(time.monotonic() - started, skip_reason)

    with results.open("a", encoding="utf-8") as sink:
        # --jobs N: N policies at a time, each its own cases in order (every case is a launch of
        # its own, and much of a launch is waiting for processes to start)
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for done in [pool.submit(run_policy, p, sink) for p in args.policies.split(",")]:
                done.result()
    return 0


def cmd_summary(args) -> int:
    expectations = peer_expect.load(Path(args.expectations))
    rows = []
    for path in sorted(Path(args.results_dir).glob("*.jsonl")):
        rows += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not rows:
        print("[peer-tests] no results to summarise")
        return 1
    cells: dict[tuple, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    unexpected, xpassed, xfailed = [], [], []
    for r in rows:
        reason = peer_expect.reason_for(expectations, r["suite"], r["case"], r["mpi"], r["policy"])
        if r["status"] == "pass":
            kind = "xpass" if reason else "pass"
            if reason:
                xpassed.append(r)
        else:
            kind = "xfail" if reason else "fail"
            (xfailed if reason else unexpected).append((r, reason))
        cells[(r["mpi"], r["suite"], r["policy"])][kind] += 1
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    lines = list(dict.fromkeys((r["mpi"], r["suite"]) for r in rows))

    def cell(c):
        total = sum(c.values())
        text = f"{c['pass'] + c['xpass']}/{total}"
        if c["xfail"]:
            text += f" xf{c['xfail']}"
        if c["fail"]:
            text += f" FAIL{c['fail']}"
        return text

    width = max(12, *(len(cell(c)) for c in cells.values()))
    print("\n== peer conformance suites: passed/total per MPI, suite and policy "
          "(xfN: expected failures, FAILN: unexpected)")
    head = f"{'MPI':10} {'suite':15} " + " ".join(f"{p[:width]:>{width}}" for p in policies)
    print(head)
    print("-" * len(head))
    for mpi, suite in lines:
        row = " ".join(f"{cell(cells[(mpi, suite, p)]) if (mpi, suite, p) in cells else '-':>{width}}"
                       for p in policies)
        print(f"{mpi:10} {suite:15} {row}")
    seconds = defaultdict(float)
    for r in rows:
        seconds[(r["mpi"], r["policy"])] += r["seconds"]
    print("time per MPI and policy: " + ", ".join(f"{m}/{p} {s:.0f}s" for (m, p), s in seconds.items()))
    grouped = defaultdict(lambda: ({}, {}))
    for r, reason in xfailed:   # one line per reason: its cases and policies
        cases, where = grouped[(r["mpi"], r["suite"], reason)]
        cases[r["case"]] = where[r["policy"]] = True
    for (mpi, suite, reason), (cases, where) in grouped.items():
        what = next(iter(cases)) if len(cases) == 1 else f"{len(cases)} cases"
        print(f"expected failure: {mpi} {suite}: {what} [{','.join(where)}] -- {reason}")
    for r in xpassed:
        reason = peer_expect.reason_for(expectations, r["suite"], r["case"], r["mpi"], r["policy"])
        if not peer_expect.is_intermittent(reason):
            print(f"expected failure passed (remove it from the expectations file?): "
                  f"{r['mpi']}/{r['policy']} {r['suite']}: {r['case']}")
    not_run = defaultdict(int)
    for r, _ in unexpected:
        if r["status"] == "notrun":
            not_run[(r["mpi"], r["policy"], r["detail"])] += 1
    for (mpi, policy, detail), n in not_run.items():
        print(f"NOT RUN {mpi}/{policy}: {n} cases -- {detail}")
    failed = [r for r, _ in unexpected if r["status"] != "notrun"]
    for r in failed[:MAX_LISTED]:
        print(f"FAILED {r['mpi']}/{r['policy']} {r['suite']}: {r['case']} [{r['status']}] {r['detail'][:300]}"
              f"\n    log: {r['log']}")
    if len(failed) > MAX_LISTED:
        print(f"... and {len(failed) - MAX_LISTED} more failures (one JSON line each in {args.results_dir})")
    passed = sum(1 for r in rows if r["status"] == "pass")
    print(f"(in the next line, skipped = expected failures listed in {Path(args.expectations).name})")
    print(f"peer-tests: {passed} passed, {len(unexpected)} failed, {len(xfailed)} skipped")
    return 1 if unexpected else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    for opt in ("--mpi", "--mpiexec", "--bindir", "--mpich-src", "--mpi4py-src", "--python",
                "--pythonpath", "--interposer", "--policies", "--results", "--expectations"):
        r.add_argument(opt, required=True)
    r.add_argument("--flavour", choices=["mpich", "openmpi"], required=True)
    r.add_argument("--level", choices=["quick", "full"], default="quick")
    r.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="run N policies at a time (each case is a launch of its own; default 1)")
    r.add_argument("--env", action="append", default=[], metavar="K=V",
                   help="set K=V for every policy that runs with the interposer (e.g. PARTITA_TRANSPORT=fabric)")
    r.add_argument("--mpi4py-missing", default="", metavar="REASON",
                   help="mpi4py could not be built: record its cases as not run, with this reason")
    s = sub.add_parser("summary")
    s.add_argument("--results-dir", required=True)
    s.add_argument("--expectations", required=True)
    args = parser.parse_args(argv)
    if args.command == "run" and args.jobs < 1:
        parser.error("--jobs must be at least 1")
    return cmd_run(args) if args.command == "run" else cmd_summary(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
