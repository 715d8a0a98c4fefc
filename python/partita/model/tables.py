"""What `partita model` prints and draws: the machine's equivalent of the
IB-verbs paper's Table I (optimal transport partitions per message size) and
modelled completion time against the transport partition count (its Figure 3)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..figure_axes import count_axis, log_value_axis, size_axis
from ..figure_file import save_figure
from .native import Params, fmt_bytes


@dataclass
class Choice:
    bytes: int
    transport: int
    time_us: float
    bulk_us: float      # one message after the last partition is ready
    fine_us: float      # one message per user partition
    library: int        # messages libpartita's model policy uses (laggard at the delay)
    library_cut: bool   # ... cutting the buffer in byte-balanced pieces rather than grouping partitions


def pow2_counts(user_parts: int) -> list[int]:
    out, t = [], 1
    while t <= user_parts:
        if user_parts % t == 0:
            out.append(t)
        t *= 2
    return out


def optimal_choices(params: Params, sizes: list[int], user_parts: int, pattern: str,
                    delay_us: float) -> list[Choice]:
    ready = params.pattern_ready(pattern, user_parts, delay_us)
    rows = []
    for m in sizes:
        t, best = params.optimal_transport_ready(m, user_parts, ready, pow2_only=True)
        layout, cut = params.optimal_layout(m, user_parts, delay_us if pattern == "laggard" else 0.0)
        rows.append(Choice(m, t, best, params.grouped_us(m, user_parts, 1, ready),
                           params.grouped_us(m, user_parts, user_parts, ready), layout, cut))
    return rows


def table1_ranges(rows: list[Choice]) -> list[tuple[str, int]]:
    """Consecutive sizes with the same choice, as the paper's Table I shows them."""
    out: list[tuple[str, int]] = []
    i = 0
    while i < len(rows):
        j = i
        while j + 1 < len(rows) and rows[j + 1].transport == rows[i].transport:
            j += 1
        lo, hi = fmt_bytes(rows[i].bytes), fmt_bytes(rows[j].bytes)
        if i == 0 and j + 1 < len(rows):
            label = f"<= {hi}"
        elif j + 1 == len(rows) and i > 0:
            label = f">= {lo}"
        else:
            label = lo if i == j else f"{lo}-{hi}"
        out.append((label, rows[i].transport))
        i = j + 1
    return out


def format_choices(rows: list[Choice], user_parts: int) -> list[str]:
    lines = [f"{'message':>10} {'transport':>9} {'model (us)':>11} {'bulk (us)':>10} "
             f"{f'{user_parts} msgs (us)':>14} {'gain vs bulk':>12} {'libpartita':>10}"]
    for r in rows:
        gain = (r.bulk_us - r.time_us) / r.bulk_us * 100
        lines.append(f"{fmt_bytes(r.bytes):>10} {r.transport:>9} {r.time_us:11.2f} {r.bulk_us:10.2f} "
                     f"{r.fine_us:14.2f} {gain:11.1f}% {str(r.library) + (' cut' if r.library_cut else ''):>10}")
    if any(r.library_cut for r in rows):
        lines.append("libpartita: `cut` = the buffer cut in that many byte-balanced messages, "
                     "not groups of whole partitions")
    return lines


def plot(params: Params, sizes: list[int], user_parts: int, pattern: str, delay_us: float, path) -> Path:
    """Two panels: time after the last ready partition against message size, one
    line per transport count (Figure 3 of the paper); total time against the
    transport count for a few sizes. path: a file name or a binary file object; returns
    where it was written (.png added to a name without a suffix, as matplotlib does);
    ValueError for a suffix matplotlib cannot write."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ready = params.pattern_ready(pattern, user_parts, delay_us)
    last = max(ready)
    counts = pow2_counts(user_parts)
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.8))
    for t in counts:
        a.plot(sizes, [params.grouped_us(m, user_parts, t, ready) - last for m in sizes], marker=".",
               label=f"{t} message{'s' if t != 1 else ''}")
    size_axis(a, sizes)
    log_value_axis([a])
    a.set_xlabel("message size")
    a.set_ylabel("modelled time after the last Pready (us)")
    a.set_title(f"PLogGP: {user_parts} user partitions, {pattern}" + (f" {delay_us:g} us" if pattern != "all" else ""))
    a.legend(fontsize=8, title="transport partitions", title_fontsize=8)
    a.grid(True, which="major", alpha=0.3)
    picks = sizes[:: max(1, len(sizes) // 5)]
    for m in picks:
        base = params.grouped_us(m, user_parts, 1, ready)
        b.plot(counts, [params.grouped_us(m, user_parts, t, ready) / base for t in counts], marker="o",
               label=fmt_bytes(m))
    count_axis(b, counts)
    b.set_xlabel("transport partitions")
    b.set_ylabel("modelled completion time / one message")
    b.set_title("completion time against the transport count")
    b.legend(fontsize=8, title="message size", title_fontsize=8)
    b.grid(True, which="both", alpha=0.3)
    fig.text(0.01, 0.01, f"parameters: {params.source}", fontsize=7, alpha=0.7)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return save_figure(fig, path)
