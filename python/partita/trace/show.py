"""The text `partita trace show` prints: the analysis of every send request and the MPI
share of run time per rank (definitions in docs/trace-analysis.md)."""

from __future__ import annotations

from ..model import fmt_bytes
from .analysis import MIN_LAGGARD_US, LaggardStats, RequestAnalysis, fmt_us as _us, laggard_thread_words, rank_shares
from .reader import Trace


def _order(order: list[int], limit: int = 16) -> str:
    head = " ".join(map(str, order[:limit]))
    return head + (f" ... ({len(order)} partitions)" if len(order) > limit else "")


def header_lines(trace: Trace) -> list[str]:
    r0 = trace.ranks[0]
    hosts = sorted({r.hostname for r in trace.ranks})
    lines = [f"trace {trace.folder}: {len(trace.ranks)} of {r0.size} ranks, {r0.mpi_library}, {r0.thread_level}, "
             f"host{'s' if len(hosts) > 1 else ''} {','.join(hosts)}"]
    under = {r.preloaded_after for r in trace.ranks if r.preloaded_after}
    if under:
        lines.append(f"partitioned calls went on to {', '.join(sorted(under))}")
    if len(trace.ranks) < r0.size:
        lines.append(f"warning: only {len(trace.ranks)} of {r0.size} rank files")
    if trace.dropped_events or trace.dropped_rounds:
        lines.append(f"warning: the tracer's buffers overflowed: {trace.dropped_events} events and "
                     f"{trace.dropped_rounds} rounds were dropped (not analysed)")
    worst = max(r.uncertainty_ns for r in trace.ranks)
    if worst:
        lines.append(f"clock offsets between ranks known to ±{_us(worst / 1e3)}")
    return lines


def brief_line(a: RequestAnalysis) -> str:
    """One line per send request: size, rounds, spread, laggard and min δ."""
    s = a.send
    what = f"rank {s.rank} -> {s.peer} tag {s.tag}: {s.bytes} B in {s.partitions} partitions, {len(a.rounds)} rounds"
    if a.rounds:
        what += f", spread {_us(a.spread_us)}"
        if a.laggard is not None and not a.laggard.is_late:
            what += ", no laggard"
        elif a.laggard is not None:
            lag = a.laggard
            who = laggard_thread_words(lag.thread, lag.partitions, lag.ids_vary) if lag.thread is not None \
                else "last partition"
            what += f", laggard {who} ({a.laggard.share:.0%} of rounds, {_us(a.laggard.delay_us)})"
        if a.min_delta_us is not None:
            what += f", min δ {_us(a.min_delta_us)}"
    return what


def laggard_sentence(lag: LaggardStats) -> str:
    if not lag.is_late:  # a tie, or the end of one thread's loop of marks: not a late thread
        return (f"laggard: none (the last mark comes {_us(lag.delay_us)} after the others', median: "
                f"less than {MIN_LAGGARD_US:g} µs)")
    who = laggard_thread_words(lag.thread, lag.partitions, lag.ids_vary) if lag.thread is not None else \
        f"partition {lag.partitions[0]} (one thread marks them all)"
    return (f"laggard: {who} is last in {lag.share:.0%} of rounds, "
            f"{_us(lag.delay_us)} after the others' last mark (median of those rounds)")


def request_lines(a: RequestAnalysis) -> list[str]:
    s = a.send
    incomplete = len(s.rounds) - len(a.rounds)
    lines = [f"== rank {s.rank} -> rank {s.peer}, tag {s.tag} (request {s.id}): {fmt_bytes(s.bytes)} in "
             f"{s.partitions} partitions of {fmt_bytes(s.partition_bytes)}, {len(a.rounds)} complete rounds"
             + (f" ({incomplete} with unmarked partitions left out)" if incomplete else "")
             + (f", libpartita transport {s.transport}" if s.transport else "")]
    if not a.rounds:
        return lines
    lines.append(f"   ready spread, first -> last MPI_Pready: {_us(a.spread_us)} (median over rounds)"
                 + (f"; without the laggard: {_us(a.spread_others_us)}" if a.spread_others_us is not None else ""))
    if a.laggard is not None:
        lines.append("   " + laggard_sentence(a.laggard))
    if a.min_delta_us is not None:
        lines.append(f"   min δ aggregating every non-laggard partition (seed's method, means): {_us(a.min_delta_us)}; "
                     f"with medians: {_us(a.min_delta_median_us)}")
    early = []
    if a.early_share_model is not None:
        early.append(f"{a.early_share_model:.0%} by the model (one message per partition)")
    if a.early_share_measured is not None:
        early.append(f"{a.early_share_measured:.0%} seen arrived by the receiver")
    if early:
        lines.append("   data that could be at the receiver before the last MPI_Pready: " + "; ".join(early))
    if a.recv is None:
        lines.append("   receiver: not traced (no matching receive request)")
    elif a.arrival_order is not None:
        lines.append(f"   receiver: arrival order = ready order in {a.arrival_in_ready_order:.0%} of rounds; "
                     f"most common order ({a.arrival_order_share:.0%}): {_order(a.arrival_order)}")
    else:
        lines.append("   receiver: no round with every partition seen by MPI_Parrived (it waited instead)")
    if a.after_last_us is not None:
        lines.append(f"   last MPI_Pready -> last partition at the receiver: {_us(a.after_last_us)} (median)")
    return lines


def share_lines(trace: Trace) -> list[str]:
    lines = ["MPI share of run time (MPI_Init to MPI_Finalize):",
             f"  {'rank':>5} {'wall':>10} {'p2p':>7} {'partitioned':>11} {'collective':>10} {'all MPI':>8}"]
    for s in rank_shares(trace):
        w = s.wall_us or 1.0
        lines.append(f"  {s.rank:>5} {s.wall_us / 1e3:>8.1f}ms {s.p2p_us / w:>7.1%} {s.partitioned_us / w:>11.1%} "
                     f"{s.collective_us / w:>10.1%} {s.mpi_share:>8.1%}")
    if trace.requests:
        lines += ["  (partitioned: init, start and completion calls; the time inside MPI_Pready and MPI_Parrived",
                  "   is not measured, so a receiver polling MPI_Parrived shows little of its wait)"]
    if any(s.mpi_share > 1 for s in rank_shares(trace)):
        lines.append("  (above 100%: the time of every thread inside MPI is summed, and several were inside at once)")
    return lines


def show_lines(trace: Trace, analyses: list[RequestAnalysis]) -> list[str]:
    lines = header_lines(trace)
    for a in analyses:
        lines += request_lines(a)
    if not analyses:
        lines.append("no partitioned send request in this trace")
    paired = {id(r) for a in analyses if a.recv is not None for r in [a.recv]}
    orphans = [q for q in trace.requests if q.kind == "recv" and id(q) not in paired]
    if orphans:
        lines.append(f"{len(orphans)} receive request(s) whose sender was not traced")
    return lines + share_lines(trace)
