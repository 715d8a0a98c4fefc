"""Per-launch comparisons of libpartita's policies within one suite run (the `library` suite,
docs/suites.md): the timer must not lose to `model` when no partition is late, nor fall below
95% of `none` under a single laggard, and the adaptive policy must come within 10% of the best
layout, in every launch.

A suite launches its implementations interleaved (A B C A B C ...): launch k of every
implementation ran back to back on the same machine state, so each comparison is made launch
by launch, and then summarised by the median over launches with the [min-max] range. Every
figure compared is relative to the launch's own reference `MPI_Send` (MPICH's shared-memory
path switches between fast and slow modes per launch, 2-3x apart): `overhead` is already a
ratio to it, and `perceived_bw` is divided by that launch's single-send bandwidth.

Launches of different implementations still differ by the launch's mode, so the library
suite also runs partita-adapt-bench (benchmark "side-by-side"): every policy in one process,
round by round in a balanced order, each launch's result holding every implementation. There a
comparison is made inside one launch, on the median time per round: t_part (first mark to last
arrival) with no late partition, t_last (last mark to last arrival) under its laggard; and there
adaptive is also compared by t_late (the first mark after the laggard's pause to the last
arrival), which is what it minimises, or where the results have it by t_resume: t_late charged
with any stretch of the pause (partita-adapt-bench, docs/metrics.md). On a machine with no core
to spare a policy whose threads keep the marking thread off its core lives a longer pause, in
which its early messages move on, and t_late alone credits it for that.

A check's floor is only worth what two identical implementations give: the side-by-side runs can
carry a twin of `model` (no late partition) and of `none` (laggard), the same policy launched as
POLICY@mpi, which sends exactly what its original sends. The suite checks each twin against its
original with the floor of the timer's check (the *control*): the cases where a twin "loses" are
what the floor's noise alone makes, the yardstick for the timer's count. Twins are never a
launch's best policy in adaptive's check (the better of two identical copies is the max of two
noisy draws, a bar no single implementation is held to). For the same reason the policies whose
plans sent the same layout in a case (bulk, model and none all send one message at 1 KiB in 1
partition) count as one layout there, at the median of their speeds (best_layout).

All comparisons are speed ratios, subject / other, where speed is 1 / overhead, the relative
perceived bandwidth, or 1 / time (side-by-side): 1.0 means as fast, 0.95 means 5% slower.
"""

from __future__ import annotations

import collections
import re
import statistics
from dataclasses import dataclass, field

from .model.native import fmt_bytes
from .stats import number

TIMER = "partita:timer"
ADAPTIVE = "partita:adaptive"
# a launch of the timer counts as losing to model below this speed ratio: launches of two
# policies with the same layout differ by up to a few percent here (docs/library.md, the timer
# check), which is not a loss of the timer's
MODEL_FLOOR = 0.95
NONE_FLOOR = 0.95            # under a laggard the timer must keep 95% of `none` (issue 22)
ADAPTIVE_FLOOR = 1 / 1.10    # adaptive within 10% of the launch's best layout
# Implementations launched in separate processes (partita-p2p runs) are compared only over at
# least this many launches of both: the MPI library's per-launch modes (2-3x apart at 16-64 KiB)
# can decide a comparison of one launch each (the quick suite's single launches said "LOSES" at
# 8-64 KiB for a timer that sends what model sends). Side-by-side runs compare inside one launch.
MIN_SEPARATE_LAUNCHES = 5
NOT_JUDGED = "not judged"
# under a laggard, side by side: adaptive against the best by t_late (from the first mark after the
# laggard's pause to the last arrival), what it minimises; by t_resume (t_late with a stretched
# pause charged) where the results have it
ADAPTIVE_LATE = "adaptive within 10% of the best from the laggard on"
# the controls: a policy twice in one launch, under the name POLICY@mpi (the same transport)
MODEL_TWIN = "partita:model@mpi"
NONE_TWIN = "partita:none@mpi"
TWINS = (MODEL_TWIN, NONE_TWIN)


@dataclass(frozen=True)
class Check:
    subject: str          # implementation label checked
    against: str          # an implementation label, or BEST: the launch's best partita layout (best_layout)
    metric: str           # "overhead" (no late partition) or "perceived_bw" (a laggard)
    floor: float          # lowest speed ratio that passes
    what: str             # how the verdict says it, e.g. "timer >= model"
    min_launches: int = 1  # fewer launches with both sides: the case is not judged


BEST = "best"
SIDE_BY_SIDE = "side-by-side"   # partita-adapt-bench's results: every implementation in one launch
# the metric each kind of check reads: (no late partition, a laggard), p2p and side-by-side
QUIET_METRICS = ("overhead", "t_part_us")
LAGGARD_METRICS = ("perceived_bw", "t_last_us")
METRIC_WORDS = {"overhead": "1 / overhead", "perceived_bw": "perceived bw / the launch's one-send bw",
                "t_part_us": "1 / t_part, in one launch", "t_last_us": "1 / t_last, in one launch",
                "t_late_us": "1 / t_late, in one launch",
                "t_resume_us": "1 / t_resume (t_late with a stretched pause charged), in one launch"}
# what the check "from the laggard on" reads, the first the results have
LATE_METRICS = ("t_resume_us", "t_late_us")


@dataclass
class CaseResult:
    key: tuple                                   # (bytes, partitions)
    ratios: list[tuple[int, float]]              # (launch, speed ratio) of every launch that has both
    best_of: list[tuple[int, str]] = field(default_factory=list)   # BEST checks: the best per launch
    sent: list[tuple[int, str]] = field(default_factory=list)      # BEST checks: the subject's layout per
                                                                   # launch, where its plan names one

    @property
    def median(self) -> float:
        return statistics.median(r for _, r in self.ratios)

    def passing(self, floor: float) -> int:
        return sum(1 for _, r in self.ratios if r >= floor)


@dataclass
class CheckResult:
    check: Check
    run: str
    cases: list[CaseResult]

    def status(self, c: CaseResult) -> str:
        """"holds" (every launch at or above the floor), "median holds" (some launches below: a mode
        flip or noise shows), "LOSES" (the median over launches below the floor), or "not judged"
        (fewer launches than the check needs)."""
        if len(c.ratios) < self.check.min_launches:
            return NOT_JUDGED
        if c.median < self.check.floor:
            return "LOSES"
        return "holds" if c.passing(self.check.floor) == len(c.ratios) else "median holds"

    def failing(self) -> list[CaseResult]:
        """Cases where some launch, or the median, is below the floor."""
        return [c for c in self.cases if self.status(c) in ("LOSES", "median holds")]


def checks_for(labels, noisy: bool, metrics: set[str], min_launches: int = 1) -> list[Check]:
    """The checks a suite run supports: by its noise (a laggard or none) and implementations;
    min_launches: what each needs to judge a case."""
    out = []
    quiet = next((m for m in QUIET_METRICS if m in metrics), None)
    laggard = next((m for m in LAGGARD_METRICS if m in metrics), None)
    if not noisy and quiet:
        if TIMER in labels and "partita:model" in labels:
            out.append(Check(TIMER, "partita:model", quiet, MODEL_FLOOR, "timer >= model", min_launches))
        if MODEL_TWIN in labels and "partita:model" in labels:
            out.append(Check(MODEL_TWIN, "partita:model", quiet, MODEL_FLOOR,
                             "control: model@mpi >= model (one policy twice)", min_launches))
        if ADAPTIVE in labels:
            out.append(Check(ADAPTIVE, BEST, quiet, ADAPTIVE_FLOOR, "adaptive within 10% of the best", min_launches))
    if noisy and laggard:
        if TIMER in labels and "partita:none" in labels:
            out.append(Check(TIMER, "partita:none", laggard, NONE_FLOOR, "timer >= 95% of none", min_launches))
        if NONE_TWIN in labels and "partita:none" in labels:
            out.append(Check(NONE_TWIN, "partita:none", laggard, NONE_FLOOR,
                             "control: none@mpi >= 95% of none (one policy twice)", min_launches))
        if ADAPTIVE in labels:
            out.append(Check(ADAPTIVE, BEST, laggard, ADAPTIVE_FLOOR, "adaptive within 10% of the best", min_launches))
            # adaptive ranks layouts by what the round costs from the laggard's first mark on
            # (docs/library.md, "What a round costs"), not by t_last, which leaves out the messages
            # the late marks hand over: the two can crown different layouts, and the summary shows
            # both rather than one
            late = next((m for m in LATE_METRICS if m in metrics), None)
            if laggard == "t_last_us" and late:
                out.append(Check(ADAPTIVE, BEST, late, ADAPTIVE_FLOOR, ADAPTIVE_LATE, min_launches))
    return out


def speed(case: dict, metric: str) -> float | None:
    """The case's speed in its own launch: 1 / overhead, or perceived bandwidth over the launch's
    single-send bandwidth (raw perceived bandwidth when the send's time was not recorded)."""
    m = case.get("metrics", {})
    v = number(m.get(metric, {}).get("summary", {}).get("median"))
    if v is None or v <= 0 or "skipped" in case:
        return None
    if metric in ("overhead", "t_part_us", "t_last_us") + LATE_METRICS:
        return 1.0 / v
    t_send = number(m.get("t_pt2pt_us", {}).get("summary", {}).get("median"))
    b = case.get("case", {}).get("bytes")
    if t_send is not None and t_send > 0 and b:
        return v / (b / t_send)
    return v


def key_of(case: dict) -> tuple:
    c = case.get("case", {})
    return (c.get("bytes"), c.get("partitions"))


def speeds(launches: list[tuple[int, dict]], metric: str) -> dict[int, dict[tuple, float]]:
    """launch -> {(bytes, partitions): speed}."""
    out: dict[int, dict[tuple, float]] = {}
    for launch, res in launches:
        rows = out.setdefault(launch, {})
        for c in res.get("results", []):
            s = speed(c, metric)
            if s is not None:
                rows[key_of(c)] = s
    return out


# The layout a plan names: "model: 9 pieces (cut), planned at init; ..." or, for a policy that
# measures candidates, "adaptive, round 80: layout #0 (9 pieces (cut)) of ...". A plan whose groups
# the timer may split sends more than its layout says, and is its own.
LAYOUT_WORDS = r"(\d+ (?:messages?|groups?|pieces)(?: \(cut\))?)"
FIXED_PLAN = re.compile(r"^[\w:@]+: " + LAYOUT_WORDS + ", ")


def chosen_layout(plan) -> str | None:
    """What a plan says its request sent, for the reader (a layout that may split included): "1 message",
    "9 pieces (cut)", "1 message, split" (split when its marking stalls); None without a plan in these
    words."""
    if not isinstance(plan, str):
        return None
    m = FIXED_PLAN.match(plan)
    if m:
        return m.group(1)
    at = plan.find(": layout #")
    start = plan.find("(", at) if at >= 0 else -1
    if start < 0:
        return None
    depth = 0
    for i in range(start, len(plan)):  # the layout's words hold parentheses of their own: "(9 pieces (cut))"
        depth += {"(": 1, ")": -1}.get(plan[i], 0)
        if depth == 0:
            return plan[start + 1:i].replace(", split when its marking stalls", ", split")
    return None


def layout_of(plan) -> str | None:
    """The layout a case's plan sent, or None (no plan, a plan in other words, or one that may split)."""
    layout = chosen_layout(plan)
    if layout is None or " is split" in plan or not re.fullmatch(LAYOUT_WORDS, layout):
        return None
    return layout


def layouts(launches: list[tuple[int, dict]]) -> dict[int, dict[tuple, str | None]]:
    """launch -> {(bytes, partitions): the layout its plan sent}."""
    return {launch: {key_of(c): layout_of(c.get("plan")) for c in res.get("results", [])}
            for launch, res in launches}


def best_layout(rivals: dict[str, tuple[float, str | None]]) -> tuple[str, float]:
    """The launch's best among the rivals {label: (speed, layout)}: policies whose plans sent the same
    layout count once, at the median of their speeds (the fastest of several copies of one layout is
    the largest of several noisy draws, a bar no single implementation meets as often); a rival
    without a known layout (None: so the check's subject is given) stands alone. Returns its label
    (pooled: "bulk/model/timer") and speed."""
    pooled: dict[str, list[tuple[str, float]]] = {}
    for lb, (s, layout) in rivals.items():
        pooled.setdefault(lb if layout is None else f"layout {layout}", []).append((lb, s))
    entries = {}
    for members in pooled.values():
        label = members[0][0] if len(members) == 1 else "/".join(short(lb) for lb, _ in members)
        entries[label] = statistics.median(s for _, s in members)
    label = max(entries, key=entries.get)
    return label, entries[label]


def run_check(check: Check, run: str, launches: dict[str, list[tuple[int, dict]]]) -> CheckResult:
    """The check over every case and launch that the subject and the other side share."""
    mine = speeds(launches.get(check.subject, []), check.metric)
    mine_sent = {launch: {key_of(c): chosen_layout(c.get("plan")) for c in res.get("results", [])}
                 for launch, res in launches.get(check.subject, [])}
    if check.against == BEST:
        rival_labels = [lb for lb in launches if lb.startswith("partita:") and lb not in TWINS]
    else:
        rival_labels = [check.against]
    others = {lb: speeds(launches.get(lb, []), check.metric) for lb in rival_labels}
    sent = {lb: layouts(launches.get(lb, [])) for lb in rival_labels}
    cases: dict[tuple, CaseResult] = {}
    for launch, rows in sorted(mine.items()):
        for key, s in rows.items():
            rivals = {lb: (o[launch][key], sent[lb].get(launch, {}).get(key))
                      for lb, o in others.items() if key in o.get(launch, {})}
            if check.against == BEST:
                rivals[check.subject] = (s, None)
            if not rivals:
                continue
            lb, best = best_layout(rivals)
            cr = cases.setdefault(key, CaseResult(key, []))
            cr.ratios.append((launch, s / best))
            if check.against == BEST:
                cr.best_of.append((launch, lb))
                if mine_sent.get(launch, {}).get(key):
                    cr.sent.append((launch, mine_sent[launch][key]))
    order = sorted(cases, key=lambda k: (k[0] or 0, k[1] or 0))
    return CheckResult(check, run, [cases[k] for k in order])


def impl_label(impl: str) -> str:
    """A side-by-side implementation as the checks name it: libpartita's policies and layouts as
    partita:POLICY (the labels a p2p suite run gives them), native and single as they are."""
    return impl if impl in ("native", "single") else f"partita:{impl}"


def side_by_side_launches(launches: dict[str, list[tuple[int, dict]]]) -> dict[str, list[tuple[int, dict]]]:
    """Side-by-side results (each launch holds every implementation, case["impl"]) split into one
    result per implementation and launch, as a p2p suite run has them; a launch of a run found in
    several folders keeps its folder's label as prefix."""
    out: dict[str, list[tuple[int, dict]]] = {}
    for label, runs in launches.items():
        prefix = "" if len(launches) == 1 else f"{label} "
        for launch, res in runs:
            split: dict[str, list[dict]] = {}
            for c in res.get("results", []):
                case = dict(c.get("case", {}))
                impl = case.pop("impl", None)
                if isinstance(impl, str):
                    split.setdefault(prefix + impl_label(impl), []).append({**c, "case": case})
            for lb, rows in split.items():
                out.setdefault(lb, []).append((launch, {"results": rows}))
    return out


def group_checks(group) -> list[CheckResult]:
    """Every check a report group (report/data.py Group) supports, with at least one compared case."""
    out = []
    if group.benchmark == SIDE_BY_SIDE:
        launches, need = side_by_side_launches(group.launches), 1
    elif group.benchmark == "p2p":
        launches, need = group.launches, MIN_SEPARATE_LAUNCHES
    else:
        return out
    for check in checks_for(launches, group.noisy(), group.metric_names(), need):
        r = run_check(check, group.name, launches)
        if r.cases:
            out.append(r)
    return out


# --- words ---------------------------------------------------------------------------------------

def short(label: str) -> str:
    return label.split(":", 1)[1] if label.startswith("partita:") else label


def fmt_ratio(c: CaseResult) -> str:
    rs = [r for _, r in c.ratios]
    return f"{c.median:.2f} [{min(rs):.2f}-{max(rs):.2f}]"


def per_size_lines(r: CheckResult) -> list[str]:
    """One line per size: at how many partition counts the check held in every launch; where the median
    over launches is below the floor (LOSES, with that median) and where only some launches are (with
    their count: a mode flip or noise)."""
    ck = r.check
    against = "the launch's best" if ck.against == BEST else short(ck.against)
    lines = []
    for size in sorted({c.key[0] for c in r.cases}):
        row = [c for c in r.cases if c.key[0] == size]
        unjudged = [c for c in row if r.status(c) == NOT_JUDGED]
        row = [c for c in row if c not in unjudged]
        if not row:
            seen = [x for c in unjudged for _, x in c.ratios]
            span = f"{min(seen):.2f}-{max(seen):.2f} ({len(seen)} ratios" if len(seen) > 1 else f"{seen[0]:.2f} (1 ratio"
            lines.append(f"{fmt_bytes(size)}: not judged (too few launches); {short(ck.subject)}/{against} "
                         f"{span}: one per case and launch)")
            continue
        loses = [c for c in row if r.status(c) == "LOSES"]
        shaky = [c for c in row if r.status(c) == "median holds"]
        worst = min(row, key=lambda c: c.median)
        line = (f"{fmt_bytes(size)}: holds in every launch at {len(row) - len(loses) - len(shaky)}/{len(row)} "
                f"partition counts; lowest median {short(ck.subject)}/{against} {fmt_ratio(worst)} at P={worst.key[1]}")
        if loses:
            line += "; LOSES at P=" + ", ".join(f"{c.key[1]} ({c.median:.2f}{sent_words(c)})" for c in loses)
        if shaky:
            line += "; some launches below at P=" + ", ".join(
                f"{c.key[1]} ({len(c.ratios) - c.passing(ck.floor)}/{len(c.ratios)})" for c in shaky)
        if unjudged:
            line += "; not judged at P=" + ", ".join(str(c.key[1]) for c in unjudged)
        lines.append(line)
    return lines


def sent_words(c: CaseResult, most: int = 2) -> str:
    """What the subject sent in a case's launches, by its plans, the `most` most frequent: "; sent 1 message
    in 3 launches, 1 message, split in 2" ("" without plans)."""
    if not c.sent:
        return ""
    counts = collections.Counter(layout for _, layout in c.sent).most_common()
    if len(counts) == 1 and counts[0][1] == len(c.ratios):
        return f"; sent {counts[0][0]} in every launch"
    words = [f"{layout} in {n}" for layout, n in counts[:most]]
    words[0] += f" launch{'es' if counts[0][1] != 1 else ''}"
    more = len(counts) - most
    return "; sent " + ", ".join(words) + (f", {more} other layout{'s' if more > 1 else ''}" if more > 0 else "")


def launches_words(cases: list[CaseResult]) -> str:
    """How many launches the unjudged cases had, against how many they need."""
    most = max(len(c.ratios) for c in cases)
    return (f"{most} launch{'es' if most != 1 else ''} of each implementation, in separate processes; "
            f"at least {MIN_SEPARATE_LAUNCHES} are needed")


def title(r: CheckResult) -> str:
    ck = r.check
    metric = METRIC_WORDS.get(ck.metric, ck.metric)
    against = "the launch's best layout" if ck.against == BEST else ck.against
    return (f"{ck.what} (run '{r.run}'): speed ratio {short(ck.subject)}/{short(against)} ({metric}), per launch and "
            f"median [min-max] over launches; at least {ck.floor:.2f} passes")


def verdict(r: CheckResult) -> str:
    """One sentence: in how many cases the check holds in every launch, in the median but not in every launch, or not."""
    unjudged = [c for c in r.cases if r.status(c) == NOT_JUDGED]
    if len(unjudged) == len(r.cases):
        return (f"{r.check.what} (run '{r.run}'): not judged: {launches_words(unjudged)}, since the MPI "
                f"library's per-launch modes can decide a comparison of fewer (the library suite compares "
                f"the policies over 5 launches, side by side in one process).")
    n = len(r.cases) - len(unjudged)
    loses = [c for c in r.cases if r.status(c) == "LOSES"]
    shaky = [c for c in r.cases if r.status(c) == "median holds"]
    s = f"{r.check.what} (run '{r.run}'): holds in every launch in {n - len(loses) - len(shaky)} of {n} cases"
    if shaky:
        s += f", and in the median but not in every launch in {len(shaky)}"
    if loses:
        worst = min(loses, key=lambda c: c.median)
        s += (f"; LOSES in the median in {len(loses)} (worst {fmt_bytes(worst.key[0])} in {worst.key[1]} "
              f"partitions: {fmt_ratio(worst)})")
    if unjudged:
        s += f"; not judged in {len(unjudged)} ({launches_words(unjudged)})"
    return s + "."


def table_rows(r: CheckResult) -> list[list[str]]:
    """Every case: size, partitions, each launch's ratio (BEST checks: and the best when it was
    another: a policy, or "bulk/model" for policies that sent the same layout), the median [min-max]
    and the status."""
    launches = sorted({lk for c in r.cases for lk, _ in c.ratios})
    rows = [["size", "partitions"] + [f"launch {k}" for k in launches] + ["median [min-max]", "verdict"]]
    for c in r.cases:
        by, best = dict(c.ratios), dict(c.best_of)
        cells = [(f"{by[k]:.2f}" + (f" ({short(best[k])})" if best.get(k, r.check.subject) != r.check.subject else ""))
                 if k in by else "-" for k in launches]
        rows.append([fmt_bytes(c.key[0]), str(c.key[1])] + cells + [fmt_ratio(c), r.status(c)])
    return rows
