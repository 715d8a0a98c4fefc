"""`partita advise`: a partition count, libpartita policy and δ for each traced send request.

Every candidate is evaluated with the PLogGP model libpartita plans with
(partita.model.Params: the same C code) on the ready times measured in each round; the
prediction is the time from the last MPI_Pready to the last byte at the receiver (the
part of the communication the application waits for), median over the rounds.
docs/trace-analysis.md lists the assumptions.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from ..model import Params, fmt_bytes
from .analysis import MIN_LAGGARD_US, RoundPattern, fmt_us as _us, laggard_thread_words

# Candidates within this fraction of the best predicted time count as equally good
# (the model's PTM_TIE_TOLERANCE); among them the one that asks least of the developer wins.
TIE_TOLERANCE = 0.02
MAX_ROUNDS = 64          # rounds the model is evaluated on (evenly sampled)
CONSISTENT_LAGGARD = 0.5  # a thread last in at least this share of rounds is "the laggard"
                          # ... when it is at least MIN_LAGGARD_US late


@dataclass
class Case:
    """One send request to advise on: its size and the ready times of its rounds."""
    label: str
    total_bytes: int
    partitions: int
    rounds: list[RoundPattern]
    current_policy: str = "none"  # how it is sent now: a candidate policy (sources.native_policy for native MPI)
    current_note: str = "one message per partition"
    laggard_thread: int | None = None
    laggard_ids_vary: bool = False  # its thread id changed between rounds or ranks (analysis.LaggardStats)
    laggard_partitions: list[int] = field(default_factory=list)  # the laggard's (one thread marking all: the last one)
    laggard_share: float = 0.0
    laggard_delay_us: float | None = None
    spread_others_us: float | None = None
    min_delta_us: float | None = None
    min_delta_median_us: float | None = None


@dataclass(frozen=True)
class Candidate:
    partitions: int
    policy: str                  # none | bulk | model | timer
    delta_us: float | None = None  # timer: δ
    delay_us: float = 0.0        # model: PARTITA_DELAY_US planned for
    messages: int = 0            # transport messages when every partition is ready at once (model layout)
    cut: bool = False
    default_delta: bool = False  # timer: δ is libpartita's default

    def describe(self) -> str:
        if self.policy == "none":
            return "one message per partition"
        if self.policy == "bulk":
            return "one message once every partition is ready"
        if self.policy == "model":
            d = f", planned for a {self.delay_us:.0f} µs laggard" if self.delay_us > 0 else ""
            return f"libpartita model policy ({self.messages} message{'s' if self.messages != 1 else ''}{d})"
        return f"libpartita timer policy, δ = {self.delta_us:.0f} µs ({self.messages} group{'s' if self.messages != 1 else ''})"

    def env(self) -> str:
        if self.policy == "none":
            return "libpartita, PARTITA_POLICY=none"
        if self.policy == "bulk":
            return "libpartita, PARTITA_POLICY=bulk"
        if self.policy == "model":
            return "libpartita, PARTITA_POLICY=model" + (f" PARTITA_DELAY_US={self.delay_us:.0f}"
                                                           if self.delay_us > 0 else "")
        # without a progress thread a split group is flushed only when the program polls
        # (Test/Wait/Parrived): a sender that marks and then waits sends it at its last mark
        return f"libpartita, PARTITA_POLICY=timer PARTITA_DELTA_US={self.delta_us:.0f} PARTITA_PROGRESS_THREAD=1"


@dataclass
class Outcome:
    candidate: Candidate
    predicted_us: float  # median over rounds, last MPI_Pready -> last byte at the receiver
    messages: float = 0.0  # mean transport messages per round (the timer's depend on the marks)


@dataclass
class Advice:
    case: Case
    outcomes: list[Outcome] = field(default_factory=list)
    best: Outcome | None = None
    current: Outcome | None = None
    measured_now_us: float | None = None


# -- ready times under another user partition count ----------------------------------

def remap_ready(ready: list[float], partitions: int) -> list[float]:
    """Ready times if the same buffer were split into `partitions` user partitions:
    merging k consecutive partitions, one is ready when its last part is; splitting a
    partition in k, each piece is ready when the partition was (we know no finer time)."""
    p = len(ready)
    if partitions == p:
        return list(ready)
    if partitions < p:
        k = p // partitions
        return [max(ready[j * k:(j + 1) * k]) for j in range(partitions)]
    k = partitions // p
    return [ready[j // k] for j in range(partitions)]


def partition_counts(total_bytes: int, partitions: int) -> list[int]:
    """The user partition counts considered: /4, /2, as is, x2, x4 (whole bytes each)."""
    out = []
    for c in (partitions // 4 if partitions % 4 == 0 else 0, partitions // 2 if partitions % 2 == 0 else 0,
              partitions, partitions * 2, partitions * 4):
        if c >= 1 and total_bytes % c == 0 and c not in out:
            out.append(c)
    return out


# -- libpartita's plans, evaluated with the model ------------------------------------------

def group_first(user_parts: int, groups: int, g: int) -> int:
    """ptm_group_first (include/partita/model.h): first partition of group g."""
    return g * user_parts // groups


def timer_groups(params: Params, total: int, parts: int) -> tuple[int, bool]:
    """libpartita's timer groups (src/lib/planner/planner.c): the model's layout with
    every partition ready at once, as `model` sends it when no delay is planned for."""
    return params.optimal_layout(total, parts, 0.0)


def default_delta_us(params: Params, total: int, parts: int, groups: int) -> float:
    """libpartita's default δ (pt_plan_delta_ns, ptm_timer_delta_us): the model's cost of one
    more message plus twice the model's MPI_Pready cost per partition of the largest group,
    at least PTM_TIMER_DELTA_MIN_US."""
    group_parts = -(-parts // groups)
    return params.timer_delta_us(total // parts * group_parts, group_parts)


def timer_messages(total: int, parts: int, groups: int, ready: list[float],
                   delta_us: float) -> tuple[list[int], list[float]]:
    """The messages the timer policy sends in a round (libpartita's timer protocol,
    docs/library.md): a group whose partitions are all marked within δ of its first goes
    whole at its last mark; otherwise at first + δ its marked partitions go as contiguous
    runs and every later partition alone at its own mark."""
    part = total // parts
    sizes, times = [], []
    for g in range(groups):
        lo, hi = group_first(parts, groups, g), group_first(parts, groups, g + 1)
        r = ready[lo:hi]
        first, last = min(r), max(r)
        if last - first <= delta_us:
            sizes.append(part * (hi - lo))
            times.append(last)
            continue
        flush = first + delta_us
        run = 0
        for u in range(lo, hi + 1):
            if u < hi and ready[u] <= flush:
                run += 1
                continue
            if run:
                sizes.append(part * run)
                times.append(flush)
                run = 0
            if u < hi:
                sizes.append(part)
                times.append(ready[u])
    return sizes, times


def predict_round(params: Params, c: Candidate, total: int, ready: list[float]) -> tuple[float, int]:
    """Model time from the last MPI_Pready to the last byte at the receiver in one round,
    and the transport messages sent in it."""
    n = c.messages
    if c.policy == "none":
        t = params.grouped_us(total, c.partitions, c.partitions, ready)
    elif c.policy == "bulk":
        t = params.grouped_us(total, c.partitions, 1, ready)
    elif c.policy == "model" or c.cut:
        t = params.cut_us(total, c.partitions, c.messages, ready) if c.cut and c.messages <= c.partitions \
            else params.grouped_us(total, c.partitions, c.messages, ready)
    else:
        sizes, times = timer_messages(total, c.partitions, c.messages, ready, c.delta_us)
        t = params.completion_us(sizes, times)
        n = len(sizes)
    return t - max(ready), n


def sampled(rounds: list[RoundPattern]) -> list[RoundPattern]:
    if len(rounds) <= MAX_ROUNDS:
        return rounds
    step = len(rounds) / MAX_ROUNDS
    return [rounds[int(i * step)] for i in range(MAX_ROUNDS)]


def has_laggard(case: Case) -> bool:
    """One thread is last in most rounds, and late by a microsecond or more."""
    return (case.laggard_share >= CONSISTENT_LAGGARD and case.laggard_delay_us is not None
            and case.laggard_delay_us >= MIN_LAGGARD_US)


def candidates(params: Params, case: Case, keep_partitions: bool = False) -> list[Candidate]:
    out: list[Candidate] = []
    total = case.total_bytes
    lag = case.laggard_delay_us if has_laggard(case) else None
    for p in [case.partitions] if keep_partitions else partition_counts(total, case.partitions):
        out.append(Candidate(p, "none", messages=p))
        if p == case.partitions:  # the same message for every partition count
            out.append(Candidate(p, "bulk", messages=1))
        n, cut = params.optimal_layout(total, p, 0.0)
        out.append(Candidate(p, "model", messages=n, cut=cut))
        if lag:
            n2, cut2 = params.optimal_layout(total, p, lag)
            out.append(Candidate(p, "model", delay_us=round(lag), messages=n2, cut=cut2))
        groups, tcut = timer_groups(params, total, p)
        if tcut or groups >= p:
            continue  # nothing to split: the timer = model (over MPI a cut: the faster of model and none)
        default = round(default_delta_us(params, total, p, groups))
        deltas = {default}
        for d in (case.min_delta_us, case.min_delta_median_us):  # a time between the threads' marks:
            if d is not None:                                      # the same for any split
                deltas.add(max(1, round(d)))
        for d in sorted(deltas):
            out.append(Candidate(p, "timer", delta_us=float(d), messages=groups, default_delta=d == default))
    return out


def current_outcome(outcomes: list[Outcome], case: Case) -> Outcome | None:
    """The candidate that is the current setting; None when it is not one of the modelled
    policies (static, fixed, adaptive, table). At a count where the timer has nothing to split
    it has no candidate of its own (candidates()): it sends the model's layout."""
    here = [o for o in outcomes if o.candidate.partitions == case.partitions and o.candidate.delay_us == 0]
    policy = case.current_policy
    if policy == "timer" and not any(o.candidate.policy == "timer" for o in here):
        policy = "model"
    return next((o for o in here if o.candidate.policy == policy
                 and (policy != "timer" or o.candidate.default_delta)), None)


def advise_case(params: Params, case: Case, keep_partitions: bool = False) -> Advice:
    adv = Advice(case)
    rounds = sampled(case.rounds)
    if not rounds:
        return adv
    readies = {p: [remap_ready(r.ready_us, p) for r in rounds]
               for p in partition_counts(case.total_bytes, case.partitions)}
    for c in candidates(params, case, keep_partitions):
        per_round = [predict_round(params, c, case.total_bytes, rd) for rd in readies[c.partitions]]
        adv.outcomes.append(Outcome(c, statistics.median(t for t, _ in per_round),
                                    statistics.fmean(n for _, n in per_round)))
    adv.current = current_outcome(adv.outcomes, case)
    fastest = min(o.predicted_us for o in adv.outcomes)

    def effort(o: Outcome) -> tuple:
        # no change to the program first; then no progress thread (the timer's flush comes
        # a thread wake-up after δ, which the model leaves out); the fewest messages; the time
        c = o.candidate
        return (c.partitions != case.partitions, c.policy == "timer", o.messages, o.predicted_us)
    good = [o for o in adv.outcomes if o.predicted_us <= fastest * (1 + TIE_TOLERANCE) + 0.05]
    adv.best = min(good, key=effort)
    if adv.current is not None and adv.current.predicted_us <= adv.best.predicted_us * (1 + TIE_TOLERANCE) + 0.05:
        adv.best = adv.current
    after = [r.after_last_us for r in case.rounds if r.after_last_us is not None]
    adv.measured_now_us = statistics.median(after) if after else None
    return adv


# -- words -------------------------------------------------------------------------------

def pattern_sentence(case: Case) -> str:
    part = fmt_bytes(case.total_bytes // case.partitions)
    head = f"your {case.partitions} partition{'s' if case.partitions != 1 else ''} of {part}"
    if case.partitions == 1:
        return head
    spread = case.spread_others_us
    if has_laggard(case) and spread is not None:
        lag = case.laggard_partitions
        who = (laggard_thread_words(case.laggard_thread, lag, case.laggard_ids_vary) if case.laggard_thread is not None
               else f"partition {lag[0]}" if len(lag) == 1 else "the partition marked last")
        return (f"{head} are ready within {_us(spread)} of each other except {who}, "
                f"{_us(case.laggard_delay_us)} late in {case.laggard_share:.0%} of rounds")
    whole = statistics.median(r.last_us for r in case.rounds)
    if case.laggard_share >= CONSISTENT_LAGGARD:  # the same thread last, by less than MIN_LAGGARD_US
        return f"{head} are ready within {_us(whole)} of each other (none is late)"
    return (f"{head} are ready within {_us(whole)} of each other (no thread is last in more than "
            f"{max(case.laggard_share, 0):.0%} of rounds)")


def current_words(case: Case, cur: Outcome) -> str:
    """How the program sends now; a timer with nothing to split says whose layout it sends."""
    if cur.candidate.policy == case.current_policy:
        return case.current_note
    return f"{case.current_note}, which sends the model's layout here: nothing to split"


def advice_lines(adv: Advice) -> list[str]:
    case = adv.case
    lines = [f"== {case.label}: {fmt_bytes(case.total_bytes)} in {case.partitions} partitions, "
             f"{len(case.rounds)} rounds"]
    if adv.best is None:
        return lines + ["   no complete round (every partition marked) to advise on"]
    b, cur = adv.best, adv.current
    lines.append("   " + pattern_sentence(case) + ".")
    if case.min_delta_us is not None:
        lines.append(f"   min δ that aggregates every non-laggard partition: {_us(case.min_delta_us)} (seed's method, "
                     f"means over rounds), {_us(case.min_delta_median_us)} (medians)")
    change = "" if b.candidate.partitions == case.partitions else \
        f"split the buffer into {b.candidate.partitions} partitions and "
    if cur is not None and b is cur:
        lines.append(f"   keep what you do ({current_words(case, cur)}): no candidate is predicted more than "
                     f"{TIE_TOLERANCE:.0%} faster; expected time after the last MPI_Pready {_us(cur.predicted_us)}.")
    else:
        now = f" instead of {_us(cur.predicted_us)} now ({current_words(case, cur)})" if cur else \
            f" (now: {case.current_note}, which the model does not cover: no comparison)"
        gain = f", {cur.predicted_us / b.predicted_us:.2f}x faster" if cur and b.predicted_us > 0 else ""
        lines.append(f"   advice: {change}use {b.candidate.describe()} [{b.candidate.env()}]: "
                     f"expected time after the last MPI_Pready {_us(b.predicted_us)}{now}{gain}.")
    if adv.measured_now_us is not None:
        lines.append(f"   measured now (receiver): {_us(adv.measured_now_us)} from the last MPI_Pready to the last "
                     "arrival" + (f"; the model predicted {_us(cur.predicted_us)}" if cur else ""))
    width = max([len("how it is sent")] + [len(o.candidate.describe()) for o in adv.outcomes])
    lines.append(f"   {'partitions':>10}  {'how it is sent':<{width}} {'after last Pready':>17}  {'speedup':>7}")
    for o in sorted(adv.outcomes, key=lambda o: (o.candidate.partitions, o.predicted_us)):
        mark = "*" if o is b else ("=" if o is cur else " ")
        rel = f"{cur.predicted_us / o.predicted_us:6.2f}x" if cur and o.predicted_us > 0 else ""
        lines.append(f" {mark} {o.candidate.partitions:>10}  {o.candidate.describe():<{width}} "
                     f"{_us(o.predicted_us):>17}  {rel:>7}")
    lines.append("   (* advised, = current; times: the model's median over the rounds; speedup: current / candidate)")
    return lines
