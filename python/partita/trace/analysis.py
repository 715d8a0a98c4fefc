"""The arrival-pattern analysis of a trace (`partita trace show`, docs/trace-analysis.md).

Per traced send request, over its rounds: the spread of the ready times, the laggard
thread and how late it is, the seed's minimum timer δ, the share of the data that could
have been sent before the last MPI_Pready, and the order in which the receiver saw the
partitions arrive; per rank, the share of run time spent inside MPI.

All times here are microseconds.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from .reader import Request, Round, Trace

NS_PER_US = 1e3
# A laggard is at least this late: one thread's loop of marks always ends with the same
# partition a fraction of a microsecond after the others, and partitions marked by one
# MPI_Pready_range or MPI_Pready_list call tie
MIN_LAGGARD_US = 1.0


def fmt_us(v: float | None) -> str:
    """Two significant digits at least: below 1 µs one decimal showed 0.75 and 0.82 as 0.8 and 0.8."""
    if v is None:
        return "-"
    return f"{v:.0f} µs" if abs(v) >= 10 else f"{v:.1f} µs" if abs(v) >= 1 else f"{v:.2f} µs"


@dataclass
class RoundPattern:
    """One complete round of a send request (every partition marked), in µs."""
    start_us: float                 # MPI_Start, relative to the round's first MPI_Pready (<= 0)
    ready_us: list[float]           # per partition, relative to the round's first MPI_Pready
    threads: list[int | None]       # marking thread per partition (None: not recorded)
    arrived_us: list[float] | None  # receiver: per partition, first MPI_Parrived true (same origin), if all seen
    complete_us: float | None       # receiver: return of its completing Wait/Test (same origin)

    @property
    def last_us(self) -> float:
        return max(self.ready_us)

    @property
    def after_last_us(self) -> float | None:
        """Measured time from the last MPI_Pready to the last partition at the receiver."""
        end = max(self.arrived_us) if self.arrived_us else self.complete_us
        return None if end is None else end - self.last_us

    def laggard(self) -> tuple[int | None, list[int]]:
        """The laggard of this round: the thread that marked the last partition and its
        partitions; when that thread marked every partition (or threads are unknown),
        the last partition alone (thread None)."""
        last = max(range(len(self.ready_us)), key=lambda u: self.ready_us[u])
        t = self.threads[last]
        if t is not None and any(x != t for x in self.threads if x is not None):
            return t, [u for u, x in enumerate(self.threads) if x == t]
        return None, [last]


def round_patterns(send: Request, recv: Request | None = None) -> list[RoundPattern]:
    """The complete rounds of a send request, with the matching receive round when the
    receiver recorded as many rounds (round i on both sides is the same message)."""
    recv_rounds = recv.rounds if recv is not None and len(recv.rounds) == len(send.rounds) else None
    out = []
    for i, rd in enumerate(send.rounds):
        if rd.ready_ns is None or any(t is None for t in rd.ready_ns):
            continue
        first = min(rd.ready_ns)
        rel = [(t - first) / NS_PER_US for t in rd.ready_ns]
        arrived = complete = None
        if recv_rounds is not None:
            rr: Round = recv_rounds[i]
            if rr.arrived_ns is not None and all(t is not None for t in rr.arrived_ns):
                arrived = [(t - first) / NS_PER_US for t in rr.arrived_ns]
            if rr.complete_ns is not None:
                complete = (rr.complete_ns - first) / NS_PER_US
        out.append(RoundPattern((rd.start_ns - first) / NS_PER_US, rel, list(rd.ready_thread or [None] * len(rel)),
                                arrived, complete))
    return out


def min_delta_us(rounds: list[RoundPattern], average=statistics.fmean) -> float | None:
    """The seed's minimum timer δ (network-native study, Sec. V-C3, Fig. 12): the mean
    ready time of each partition over the rounds in which it was not the laggard's, then
    the difference between the first and the last of these means. None with fewer than
    two such partitions. Ready times count from the round's first MPI_Pready, not from
    MPI_Start as the seed's profiler did: a program may start a round long before it
    computes (partita-p2p: 1-11 ms), and as each partition's mean leaves out different
    rounds, that varying lead would enter the means (docs/trace-analysis.md).
    average=statistics.median gives our robust variant: one round in which a second
    thread was descheduled for a millisecond moves a mean, not a median."""
    times: dict[int, list[float]] = {}
    for r in rounds:
        _, lag = r.laggard()
        for u, t in enumerate(r.ready_us):
            if u not in lag:
                times.setdefault(u, []).append(t)
    typical = [average(v) for v in times.values()]
    if len(typical) < 2:
        return None
    return max(typical) - min(typical)


@dataclass
class LaggardStats:
    thread: int | None    # the id it had most often (None: the last partition of a single marking thread)
    share: float          # fraction of the rounds in which it was the laggard
    delay_us: float       # median, over those rounds, of its last mark minus the others' last mark
    partitions: list[int]  # its partitions (in the rounds it was the laggard)
    ids_vary: bool = False  # it had other ids in other rounds (or on other ranks): its id names no one thread

    @property
    def is_late(self) -> bool:
        return self.delay_us >= MIN_LAGGARD_US


def laggard_stats(rounds: list[RoundPattern]) -> LaggardStats | None:
    """The laggard most often last, known by the partitions it marks: a thread's id is its
    process's (pooled requests of several ranks share none), and the tracer hands the ids of
    threads that ended to new ones (a program starting its threads every round gives the same
    worker another id each round); a worker's partitions stay the same."""
    if not rounds or len(rounds[0].ready_us) < 2:
        return None
    who = [r.laggard() for r in rounds]
    key, n = Counter(tuple(parts) for _, parts in who).most_common(1)[0]
    delays, threads = [], Counter()
    for r, (t, lag) in zip(rounds, who):
        if tuple(lag) != key:
            continue
        others = [x for u, x in enumerate(r.ready_us) if u not in lag]
        delays.append(r.last_us - max(others))
        threads[t] += 1
    return LaggardStats(threads.most_common(1)[0][0], n / len(rounds), statistics.median(delays), list(key),
                        ids_vary=len(threads) > 1)


def laggard_thread_words(thread: int, partitions: list[int], ids_vary: bool) -> str:
    """The laggard thread as a reader can find it: its id when it kept one, else (a program that
    starts its threads every round, or several ranks pooled) the partitions it marks."""
    if not ids_vary:
        return f"thread {thread}"
    shown = ", ".join(map(str, partitions[:6])) + (", ..." if len(partitions) > 6 else "")
    return f"the thread marking partition{'s' if len(partitions) != 1 else ''} {shown}"


def spread_others_us(rounds: list[RoundPattern]) -> float | None:
    """Median over rounds of the first to the last MPI_Pready of the threads that were not
    the round's laggard (first to last-but-one when each thread marks one partition)."""
    if not rounds or len(rounds[0].ready_us) < 2:
        return None
    spreads = []
    for r in rounds:
        _, lag = r.laggard()
        spreads.append(max(t for u, t in enumerate(r.ready_us) if u not in lag))
    return statistics.median(spreads)


@dataclass
class RequestAnalysis:
    send: Request
    recv: Request | None
    rounds: list[RoundPattern] = field(repr=False)
    spread_us: float | None = None            # median first -> last MPI_Pready
    spread_others_us: float | None = None     # median first -> last MPI_Pready of the non-laggard threads
    laggard: LaggardStats | None = None
    min_delta_us: float | None = None
    min_delta_median_us: float | None = None  # ours: medians instead of means
    early_share_model: float | None = None    # model: share of bytes arrived by the last MPI_Pready
    early_share_measured: float | None = None  # receiver: share of bytes whose arrival was seen by then
    after_last_us: float | None = None        # measured median, last MPI_Pready -> last arrival
    arrival_in_ready_order: float | None = None  # share of rounds the receiver saw the ready order
    arrival_order: list[int] | None = None    # most common receiver-side arrival order
    arrival_order_share: float | None = None

    @property
    def partition_bytes(self) -> int:
        return self.send.partition_bytes


def _order(times: list[float]) -> list[int]:
    return sorted(range(len(times)), key=lambda u: (times[u], u))


def in_ready_order(ready: list[float], arrived: list[float]) -> bool:
    """No partition arrived before one marked earlier: partitions marked at one instant (one
    MPI_Pready_range, or one receive partition over several send partitions) may arrive in any order."""
    order = sorted(range(len(ready)), key=lambda u: (ready[u], arrived[u]))
    return all(arrived[u] <= arrived[v] for u, v in zip(order, order[1:]))


def ready_per_recv_partition(ready_us: list[float], send_part_bytes: int, recv_part_bytes: int,
                             recv_parts: int) -> list[float]:
    """When each receive partition's bytes were all marked: the last ready time of the send
    partitions it overlaps (the two sides may partition the buffer differently)."""
    if recv_parts == len(ready_us) or send_part_bytes <= 0 or recv_part_bytes <= 0:
        return list(ready_us)
    last = len(ready_us) - 1
    return [max(ready_us[min(last, q * recv_part_bytes // send_part_bytes):
                         min(last, ((q + 1) * recv_part_bytes - 1) // send_part_bytes) + 1])
            for q in range(recv_parts)]


def analyse_request(send: Request, recv: Request | None, params=None) -> RequestAnalysis:
    """The analysis of one send request (and its receive, if traced). params: a
    partita.model.Params for the modelled early share (None: left out)."""
    rounds = round_patterns(send, recv)
    a = RequestAnalysis(send, recv, rounds)
    if not rounds:
        return a
    a.spread_us = statistics.median(r.last_us for r in rounds)
    a.laggard = laggard_stats(rounds)
    a.spread_others_us = spread_others_us(rounds)
    a.min_delta_us = min_delta_us(rounds)
    a.min_delta_median_us = min_delta_us(rounds, statistics.median)
    if params is not None:
        a.early_share_model = statistics.fmean(early_share_model(params, send.partition_bytes, r.ready_us)
                                               for r in rounds)
    measured = [r for r in rounds if r.arrived_us is not None]
    after = [r.after_last_us for r in rounds if r.after_last_us is not None]
    if after:
        a.after_last_us = statistics.median(after)
    if measured:
        a.early_share_measured = statistics.fmean(
            sum(1 for t in r.arrived_us if t <= r.last_us) / len(r.arrived_us) for r in measured)
        orders = [tuple(_order(r.arrived_us)) for r in measured]
        a.arrival_in_ready_order = sum(
            1 for r in measured if in_ready_order(ready_per_recv_partition(
                r.ready_us, send.partition_bytes, recv.partition_bytes, len(r.arrived_us)), r.arrived_us)) \
            / len(measured)
        common, n = Counter(orders).most_common(1)[0]
        a.arrival_order, a.arrival_order_share = list(common), n / len(measured)
    return a


def early_share_model(params, partition_bytes: int, ready_us: list[float]) -> float:
    """Share of the data that, sent as one message per partition the moment it is
    marked, the PLogGP model has at the receiver by the last MPI_Pready (ours; the
    seed drew the same as each partition's size over the bandwidth appended to its
    ready time, Fig. 10-11)."""
    _, arrivals = params.arrivals_us([partition_bytes] * len(ready_us), ready_us)
    last = max(ready_us)
    return sum(1 for t in arrivals if t <= last) / len(arrivals)


@dataclass
class RankShare:
    rank: int
    wall_us: float
    p2p_us: float
    collective_us: float
    partitioned_us: float

    @property
    def mpi_share(self) -> float:
        return (self.p2p_us + self.collective_us + self.partitioned_us) / self.wall_us if self.wall_us else 0.0

    @property
    def p2p_share(self) -> float:
        """Point-to-point (ordinary and partitioned) share of run time: what porting may speed up."""
        return (self.p2p_us + self.partitioned_us) / self.wall_us if self.wall_us else 0.0


def rank_shares(trace: Trace) -> list[RankShare]:
    return [RankShare(r.rank, r.wall_ns / NS_PER_US, r.mpi_time_ns["p2p"] / NS_PER_US,
                      r.mpi_time_ns["collective"] / NS_PER_US, r.mpi_time_ns["partitioned"] / NS_PER_US)
            for r in trace.ranks]


def analyse(trace: Trace, params=None) -> list[RequestAnalysis]:
    return [analyse_request(s, r, params) for s, r in trace.pairs()]
