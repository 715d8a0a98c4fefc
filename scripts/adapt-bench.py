#!/usr/bin/env python3
"""The adaptive policy's benchmark campaign (docs/library.md, "Adaptive plans").

Runs partita-adapt-bench N times (each launch runs every implementation side by
side, round by round in turn, so each launch's best layout is known) and
summarises, per (size, partitions):

- in how many launches the adaptive policy's median time (t_part, first mark to last
  arrival, or t_last, t_late or t_resume with --metric) was within 10% of
  the best fixed layout of that launch (bulk, none, model, fixed:K);
- the median over launches [min-max] of adaptive, the best layout, native MPI,
  libpartita's `bulk` (one message through the partitioned calls: MPIPCL's
  default) and a plain MPI_Isend of the whole buffer, and whether adaptive is
  worse than native, bulk or the plain send in the median over launches;
- the launch-to-launch spread (max/min of the launch medians) of adaptive against
  that of `bulk` (the single message of issue 22, MPIPCL's default) and of the
  plain send, and where adaptive's is wider, whether its slowest launch was also
  slower than theirs (a spread widened by fast launches is not a slow launch);
- adaptive against bulk and against native in the same launch: the ratio of the
  two medians per launch, median [min-max] over launches, and whether adaptive
  was slower in every launch. With 5 launches that is the distribution-free
  94% interval of the median ratio lying above 1: a difference the launches
  agree on, where "worse in the median over launches" also counts two
  equally fast implementations as worse about half the time;
- a control for that count: in the cases where `model` planned the very layout
  `bulk` sends (their plans, which the saved file keeps as rows of their own,
  are alike but for the policy's name), how often `model` was "worse than
  bulk" in the median, and its ratio to bulk in the same launch: what two
  identical layouts get from the machine's noise, next to adaptive's count there;
  and how often `model`'s launch spread was wider than `bulk`'s there, the same
  yardstick for the spread count.

Run it under the machine's benchmark lock, e.g.
  flock LOCKFILE .venv/bin/python scripts/adapt-bench.py -n 5 --out adapt.jsonl -- -m 4K:4M -f 4 -i 60 -x 40
(arguments after -- go to partita-adapt-bench). --from FILE summarises a saved run again.
Over another transport, name libpartita's implementations POLICY@TRANSPORT and pass
--transport: -I native,single,bulk@fabric,model@fabric,adaptive@fabric ... --transport fabric.
Each launch runs on 2 ranks with the build's own MPI launcher (partita-build.json, or
$PARTITA_LAUNCHER, as `partita run`); one that outlasts --timeout is killed with the
ranks it started and ends the campaign with one line.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

LAYOUTS = ("bulk", "none", "model")
METRIC = ["t_part_us"]  # the median per launch the verdict uses (--metric)
WITHIN = 1.10


def is_layout(impl: str) -> bool:
    return impl in LAYOUTS or impl.startswith("fixed:")


ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
from partita.launch import (BuildInfo, LaunchError, child_env, failure_lines, launch_command,  # noqa: E402
                            run_in_group)


def run(args: argparse.Namespace) -> list[dict]:
    # The build's own MPI and launcher (partita-build.json; $PARTITA_LAUNCHER), as `partita run` uses:
    # it was always the bootstrap's .venv/bin/mpiexec, which a build with a system MPI does not have.
    try:
        build = BuildInfo.find(ROOT / args.build)
        build.program("partita-adapt-bench")
    except (LaunchError, OSError) as e:
        sys.exit(f"adapt-bench: {e}")
    rows = []
    with open(args.out, "w") as out:
        for launch in range(args.launches):
            cmd = launch_command(build, "partita-adapt-bench", ["-l", str(launch), *args.bench_args], 2, {})
            p, timed_out = run_in_group(cmd, child_env({}), args.timeout)
            if timed_out:
                sys.exit(f"adapt-bench: launch {launch} did not finish in {args.timeout:g} s (--timeout)")
            if p.returncode != 0:
                sys.exit(f"adapt-bench: launch {launch} failed ({p.returncode}): {failure_lines(p.stdout, p.stderr)}")
            for line in p.stdout.splitlines():
                if line.startswith("{"):
                    out.write(line + "\n")
                    rows.append(json.loads(line))
            for plan in plan_rows(p.stderr, launch):
                out.write(json.dumps(plan) + "\n")
                rows.append(plan)
            if args.why:
                sys.stderr.write(p.stderr)
            print(f"adapt-bench: launch {launch + 1}/{args.launches} done", file=sys.stderr)
    return rows


PLAN_LINE = re.compile(r"^# (\d+) bytes, (\d+) partitions, ([^:]+): (.*)$")


def plan_rows(text: str, launch: int) -> list[dict]:
    """The plans partita-adapt-bench prints ('# BYTES bytes, P partitions, IMPL: PLAN'), as rows."""
    rows = []
    for line in text.splitlines():
        m = PLAN_LINE.match(line)
        if m:
            rows.append({"launch": launch, "bytes": int(m[1]), "partitions": int(m[2]), "impl": m[3],
                         "plan": m[4]})
    return rows


def layout_of(plan: str) -> str:
    """A plan without its policy's name ("model: 1 message, ..." -> "1 message, ...")."""
    return plan.split(": ", 1)[1] if ": " in plan else plan


def same_plan(plans: dict, case: tuple[int, int], a: str, b: str) -> bool:
    """Whether a and b planned the same layout in every launch that printed both plans."""
    pa, pb = plans.get(case + (a,), {}), plans.get(case + (b,), {})
    shared = [L for L in pa if L in pb]
    return bool(shared) and all(layout_of(pa[L]) == layout_of(pb[L]) for L in shared)


def in_launch_ratios(ad: dict[int, float], ref: dict[int, float]) -> list[float]:
    """adaptive's median over ref's, launch by launch (launches that ran both)."""
    return [ad[L] / ref[L] for L in sorted(ad) if L in ref and ref[L] > 0]


def spread(v: list[float]) -> float:
    return max(v) / min(v) if min(v) > 0 else float("inf")


def worse_in_median(mine, ref) -> bool:
    """Slower than ref in the median over launches (values: launch medians)."""
    return statistics.median(mine) > statistics.median(ref)


def wider_spread(mine, ref) -> bool:
    """A launch spread wider than ref's."""
    return spread(list(mine)) > spread(list(ref))


def over_transport(rows: list[dict], transport: str | None) -> list[dict]:
    """The rows of one transport's libpartita implementations, named without it: with transport T,
    POLICY@T is read as POLICY, and libpartita rows of other transports are left out (native and
    single, the MPI library's own, stay). Without one, the rows as they are."""
    if not transport:
        return rows
    kept = []
    for r in rows:
        impl = r["impl"]
        if impl in ("native", "single"):
            kept.append(r)
        elif impl.endswith("@" + transport):
            kept.append(dict(r, impl=impl[: -len(transport) - 1]))
    return kept


def summarise(rows: list[dict]) -> int:
    cases: dict[tuple[int, int], dict[str, dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
    plans: dict[tuple[int, int, str], dict[int, str]] = defaultdict(dict)
    if not any(r["impl"] == "adaptive" and "plan" not in r for r in rows):
        names = sorted({r["impl"] for r in rows})
        print(f"adapt-bench.py: error: no results of 'adaptive' to judge (implementations: "
              f"{', '.join(names) or 'none'}); run partita-adapt-bench with adaptive among -I, or with "
              "adaptive@T and --transport T", file=sys.stderr)
        return 2
    for r in rows:
        if "plan" in r:
            plans[(r["bytes"], r["partitions"], r["impl"])][r["launch"]] = r["plan"]
        else:
            cases[(r["bytes"], r["partitions"])][r["impl"]][r["launch"]] = r[METRIC[0]]
    within = total = 0
    # launch spread wider than the reference's, and of those with a slowest launch slower than its slowest:
    # against bulk (one message through the partitioned calls, MPIPCL's default: what issue 22 means by
    # "the single message") and against the plain MPI_Isend (no partitioned calls at all)
    wider = {"bulk": 0, "single": 0}
    wider_worst = {"bulk": 0, "single": 0}
    worse = {"native": 0, "bulk": 0, "single": 0}
    every = {"bulk": 0, "native": 0}  # slower in every launch, in-launch ratio (columns in this order)
    print("| bytes | P | adaptive | best layout | native | bulk | single | adaptive/best per launch | best layouts "
          "| adaptive/bulk in launch | adaptive/native in launch |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    fmt = lambda v: f"{statistics.median(v):.1f} [{min(v):.1f}-{max(v):.1f}]"
    for (size, parts), impls in sorted(cases.items()):
        if "adaptive" not in impls:
            continue  # a case whose adaptive run was skipped: nothing to judge
        launches = sorted(impls["adaptive"])
        best, names, ratios = [], [], []
        for L in launches:
            cand = {k: v[L] for k, v in impls.items() if is_layout(k) and L in v}
            name = min(cand, key=cand.get)
            best.append(cand[name])
            names.append(name)
            ratios.append(impls["adaptive"][L] / cand[name])
        total += len(ratios)
        within += sum(x <= WITHIN for x in ratios)
        ad = [impls["adaptive"][L] for L in launches]
        flags = []
        for ref in worse:
            if ref in impls and worse_in_median(ad, impls[ref].values()):
                flags.append(f"worse than {ref}")
                worse[ref] += 1
        in_launch = []
        for ref in every:
            r = in_launch_ratios(impls["adaptive"], impls.get(ref, {}))
            in_launch.append(f"{statistics.median(r):.3f} [{min(r):.3f}-{max(r):.3f}]" if r else "-")
            if r and min(r) > 1:
                every[ref] += 1
                flags.append(f"slower than {ref} in every launch")
        for ref in wider:
            if ref in impls and wider_spread(ad, impls[ref].values()):
                wider[ref] += 1
                flags.append(f"spread {spread(ad):.2f} > {ref}'s {spread(list(impls[ref].values())):.2f}")
                if max(ad) > max(impls[ref].values()):
                    wider_worst[ref] += 1  # ... and its slowest launch slower than the reference's slowest
        row = [str(size), str(parts), fmt(ad), fmt(best),
               *(fmt(list(impls[ref].values())) if ref in impls else "-" for ref in ("native", "bulk", "single")),
               " ".join(f"{x:.2f}" for x in ratios), ",".join(sorted(set(names))), *in_launch]
        print("| " + " | ".join(row) + " |" + (" " + "; ".join(flags) if flags else ""))
    print(f"\nadaptive within {100 * (WITHIN - 1):.0f}% of the launch's best layout: {within}/{total} "
          f"({100 * within / max(total, 1):.0f}%); cases worse in the median over launches than native: "
          f"{worse['native']}/{len(cases)}, than bulk: {worse['bulk']}/{len(cases)}, than a plain send: "
          f"{worse['single']}/{len(cases)}")
    for ref, what in (("bulk", "bulk's (one message through the partitioned calls)"),
                      ("single", "the plain send's")):
        print(f"launch spread (slowest over fastest launch median) wider than {what}: {wider[ref]}/{len(cases)}, "
              f"and with a slowest launch slower than its slowest: {wider_worst[ref]}/{len(cases)}")
    print(f"slower in every launch (in-launch ratio of medians above 1 each time) than bulk: "
          f"{every['bulk']}/{len(cases)}, than native: {every['native']}/{len(cases)}")
    print_control(cases, plans)
    return 0


def print_control(cases: dict, plans: dict) -> None:
    """What "worse than bulk in the median" is worth: `model` where it plans the very layout `bulk`
    sends (one message) is the same work under another name, so how often it is "worse" (and by how
    much in the same launch) is the count two identical layouts get from this machine's noise."""
    same = [c for c in sorted(cases) if "model" in cases[c] and "bulk" in cases[c]
            and same_plan(plans, c, "model", "bulk")]
    if not same:
        planned = any(c + (who,) in plans for c in cases for who in ("model", "bulk"))
        why = "their plans differ in every case" if planned else "plans not in the results: older file?"
        print(f"control: no case where model planned what bulk sends ({why})")
        return
    worse = {"model": 0, "adaptive": 0}
    wider = {"model": 0, "adaptive": 0}  # launch spread wider than bulk's
    ratios = []
    for c in same:
        impls = cases[c]
        for who in worse:
            if who in impls and worse_in_median(impls[who].values(), impls["bulk"].values()):
                worse[who] += 1
            if who in impls and wider_spread(impls[who].values(), impls["bulk"].values()):
                wider[who] += 1
        r = in_launch_ratios(impls["model"], impls["bulk"])
        if r:
            ratios.append(statistics.median(r))
    spread_text = f"; model/bulk in the same launch, medians over launches: {min(ratios):.3f}-{max(ratios):.3f}" \
        if ratios else ""
    print(f"control: in the {len(same)} cases where model planned what bulk sends, model was worse than bulk in "
          f"the median in {worse['model']}/{len(same)}{spread_text} (two identical layouts); adaptive in "
          f"{worse['adaptive']}/{len(same)}")
    print(f"control: in those {len(same)} cases model's launch spread was wider than bulk's in "
          f"{wider['model']}/{len(same)} (two identical layouts); adaptive's in {wider['adaptive']}/{len(same)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--launches", type=int, default=5)
    ap.add_argument("--out", default="adapt-bench.jsonl", help="JSON lines of every launch (written)")
    ap.add_argument("--from", dest="source", help="summarise this saved file instead of running")
    ap.add_argument("--build", default="build")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--metric", choices=("t_part", "t_last", "t_late", "t_resume"), default="t_part",
                    help="t_part: first mark to last arrival (partita-p2p's overhead metric; default); "
                         "t_last: last mark to last arrival; t_late (with -L): first mark after the "
                         "laggard's pause to last arrival, what adaptive minimises under a laggard; "
                         "t_resume (with -L): t_late with a stretched pause charged (docs/metrics.md)")
    ap.add_argument("--why", action="store_true", help="print libpartita's plans (Partita_Request_why)")
    ap.add_argument("--transport", choices=("mpi", "fabric", "auto"),
                    help="judge the implementations named POLICY@TRANSPORT (-I adaptive@fabric,bulk@fabric,...) "
                         "as POLICY, leaving out libpartita's others; native and single stay")
    ap.add_argument("bench_args", nargs="*", help="passed to partita-adapt-bench (after --)")
    args = ap.parse_args()
    if args.launches < 1:
        ap.error("--launches must be at least 1")
    METRIC[0] = f"{args.metric}_us"
    print(f"metric: median {args.metric} (us) per launch")
    if args.source:
        rows = [json.loads(line) for line in open(args.source) if line.startswith("{")]
    else:
        rows = run(args)
    if any(METRIC[0] not in r for r in rows if "plan" not in r):
        print(f"adapt-bench.py: error: the results hold no {METRIC[0]} (t_late and t_resume are measured "
              "only under a laggard: pass -L US to partita-adapt-bench)", file=sys.stderr)
        return 2
    return summarise(over_transport(rows, args.transport))


if __name__ == "__main__":
    sys.exit(main())
