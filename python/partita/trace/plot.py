"""The arrival-pattern figure of the network-native study (its Fig. 10-11): for
each round of a send request, one horizontal bar per partition. The first part
(compute colour) runs from the round's first MPI_Pready to this partition's
MPI_Pready: how long the application kept it. The second part (transfer colour)
is appended: the measured transfer, first MPI_Parrived == true on the receiver
minus MPI_Pready, or, when the arrival is unknown, partition bytes / bandwidth
(the seed's estimate; `bandwidth` in bytes/s, else estimated_bandwidth's, from the
rounds' last-marked partitions). The seed measured from
MPI_Start; we measure from the first MPI_Pready, so a compute phase before any
partition is ready does not hide the spread of the ready times.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from partita.figure_file import save_figure
from partita.trace.perfetto import arrival_of, round_arrivals
from partita.trace.reader import Request, Trace

COMPUTE_COLOUR = "tab:green"
MEASURED_COLOUR = "black"
ESTIMATED_COLOUR = "tab:grey"
MAX_ROUNDS = 8
MAX_REQUESTS = 6
# Above this many partitions a bar is about a pixel high: the white gaps between bars then
# alias into stripes that hide the data (64 partitions in 8 rounds did), so the bars touch and
# a round reads as one block, its colours alternating only where the partitions' times do.
GAPPED_BARS_MAX = 16


def estimated_bandwidth(trace: Trace) -> float | None:
    """Bytes/s for the transfers whose arrival is unknown: per round, the last-marked partition's
    bytes over its MPI_Pready-to-arrival time, median over the rounds where it is known. Nothing
    marked after that partition holds it back, while an earlier one's time includes its wait for
    the rest of an aggregated message: the median over every partition put 8 KiB partitions,
    half of them 200 us early, at 35 MB/s."""
    rates = []
    for send, recv in trace.pairs():
        for i, rd in enumerate(send.rounds):
            marked = rd.marked()
            if not marked:
                continue
            t, p = max(marked)
            a = arrival_of(send, recv, round_arrivals(recv, i), p)
            if a is not None and a > t:
                rates.append(send.partition_bytes / ((a - t) / 1e9))
    return statistics.median(rates) if rates else None


def check_request(trace: Trace, n: int) -> None:
    """ValueError when the trace has no n-th send request (in `show` order, from 0)."""
    pairs = len(trace.pairs())
    if not 0 <= n < pairs:
        raise ValueError(f"no send request number {n}: the trace has {pairs}")


def _chosen(trace: Trace, request) -> tuple[list[tuple[Request, Request | None]], int]:
    """The send requests to draw (those with a recorded round), and how many there were to choose from."""
    pairs = trace.pairs()
    if request is None:
        drawable = [pr for pr in pairs if pr[0].rounds]
        return drawable[:MAX_REQUESTS], len(drawable)
    if isinstance(request, int):
        check_request(trace, request)
        chosen = [pairs[request]]
    else:
        chosen = [pr for pr in pairs if pr[0] is request]
    chosen = [pr for pr in chosen if pr[0].rounds]
    return chosen, len(chosen)


def _rounds_shown(n: int) -> list[int]:
    """At most MAX_ROUNDS round indices, evenly spread over n rounds."""
    if n <= MAX_ROUNDS:
        return list(range(n))
    return sorted({round(k * (n - 1) / (MAX_ROUNDS - 1)) for k in range(MAX_ROUNDS)})


def legend_patches(drawn: set[str], rate: float | None) -> list:
    """The legend of the kinds of transfer drawn; a transfer neither measured nor estimated
    (no arrival anywhere in the trace: the receiver waited instead of polling MPI_Parrived)
    is not drawn, and the legend says so rather than claim a measured one."""
    from matplotlib.patches import Patch

    legend = [Patch(color=COMPUTE_COLOUR, label="compute (first MPI_Pready to this one)")]
    if "measured" in drawn:
        legend.append(Patch(color=MEASURED_COLOUR, label="transfer: MPI_Pready to first MPI_Parrived true"))
    if "estimated" in drawn:
        legend.append(Patch(color=ESTIMATED_COLOUR,
                            label=f"transfer estimated: bytes / {rate / 1e9:.3g} GB/s (arrival unknown)"))
    if "unknown" in drawn:
        legend.append(Patch(facecolor="none", edgecolor="none",
                            label="transfer not drawn: no MPI_Parrived arrival in the trace to measure or "
                                  "estimate it (the receiver waited)"))
    return legend


def plot_arrivals(trace: Trace, path: str | Path, request=None, bandwidth: float | None = None) -> Path:
    """Draws the arrival pattern of one send request (`request`: its index in
    trace.pairs() or the Request itself) or of the first few, into `path` (PNG, PDF, SVG)."""
    return save_figure(arrival_figure(trace, request, bandwidth), path)


def arrival_figure(trace: Trace, request=None, bandwidth: float | None = None):
    """plot_arrivals' matplotlib figure, not yet saved."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pairs, drawable = _chosen(trace, request)
    if not pairs:
        raise ValueError(f"{trace.folder}: no send request with a recorded round to plot")
    rate = bandwidth or estimated_bandwidth(trace)
    fig, axes = plt.subplots(len(pairs), 1, figsize=(9, 2.2 + 2.8 * len(pairs)), squeeze=False)
    drawn: set[str] = set()  # which transfers the bars show: measured, estimated, unknown
    for ax, (send, recv) in zip(axes[:, 0], pairs):
        P, rows, labels = send.partitions, [], []
        shown = _rounds_shown(len(send.rounds))
        for k, i in enumerate(shown):
            rd = send.rounds[i]
            ready = [t for t in (rd.ready_ns or []) if t is not None]
            if not ready:
                continue
            first = min(ready)
            arrived = round_arrivals(recv, i)
            base = k * (P + 2)
            labels.append((base + P / 2, f"round {i}"))
            for p, t in enumerate(rd.ready_ns):
                if t is None:
                    continue
                y = base + p
                compute_us = (t - first) / 1e3
                a = arrival_of(send, recv, arrived, p)
                if a is not None and a >= t:
                    transfer_us, colour, kind = (a - t) / 1e3, MEASURED_COLOUR, "measured"
                elif rate:
                    transfer_us, colour, kind = send.partition_bytes / rate * 1e6, ESTIMATED_COLOUR, "estimated"
                else:
                    transfer_us, colour, kind = 0.0, ESTIMATED_COLOUR, "unknown"
                drawn.add(kind)
                rows.append((y, compute_us, transfer_us, colour))
        height = 0.8 if P <= GAPPED_BARS_MAX else 1.0
        ax.barh([r[0] for r in rows], [r[1] for r in rows], height=height, color=COMPUTE_COLOUR)
        ax.barh([r[0] for r in rows], [r[2] for r in rows], left=[r[1] for r in rows], height=height,
                color=[r[3] for r in rows])
        ax.set_yticks([y for y, _ in labels], [name for _, name in labels])
        ax.invert_yaxis()
        ax.set_xlim(left=0)  # bars of zero width only (marked at once, transfer unknown) centred the axis on 0
        ax.set_xlabel("µs since the round's first MPI_Pready")
        ax.set_title(f"rank {send.rank} -> {send.peer}, tag {send.tag}: {P} partitions of "
                     f"{send.partition_bytes} B ({len(shown)} of {len(send.rounds)} rounds)", fontsize=10)
    legend = legend_patches(drawn, rate)
    top = 1.0
    if drawable > len(pairs):
        fig.suptitle(f"the first {len(pairs)} of {drawable} send requests with a recorded round "
                     "(partita trace export --request N draws another)", fontsize=9)
        top -= 0.35 / fig.get_figheight()
    # two entries a row: three in one ran past the figure's edges
    legend_rows = (len(legend) + 1) // 2
    fig.legend(handles=legend, loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, (0.1 + 0.2 * legend_rows) / fig.get_figheight(), 1, top))
    return fig
