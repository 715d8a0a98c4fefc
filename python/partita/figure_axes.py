"""Axes that a reader can read values off: sizes as 1K, 64K, 1M; counts as 1, 2, 4; log values as
plain numbers (0.5, 1, 2). Shared by the report's figures and `partita model --plot`."""

from __future__ import annotations

import math


def size_axis(ax, sizes):
    """A log2 axis of message sizes labelled 1K, 64K, 1M ..."""
    from .model.native import fmt_bytes
    ax.set_xscale("log", base=2)
    ticks = sorted(set(sizes))
    if len(ticks) > 8:
        ticks = ticks[:: math.ceil(len(ticks) / 8)]
    ax.set_xticks(ticks)
    ax.set_xticklabels([fmt_bytes(int(t)).replace("iB", "") for t in ticks], fontsize=8)
    ax.minorticks_off()


def log_value_axis(axes) -> None:
    """A log y axis (shared by axes, or each its own) labelled with plain numbers: 0.5, 1, 2, 5 ...
    Matplotlib labels only the powers of ten, so a ratio between 0.5 and 3 showed one label, 10^0,
    and a reader could not read a value off it. The ticks are denser when the data span less:
    1-2-3-5 within about a decade and a half, 1-2-5 within three, the powers of ten beyond."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator
    for ax in axes:
        ax.set_yscale("log")
    for ax in axes:
        lo, hi = ax.get_ylim()
        decades = math.log10(hi / lo) if lo > 0 and hi > lo else 0.0
        subs = (1.0, 2.0, 3.0, 5.0) if decades <= 1.5 else (1.0, 2.0, 5.0) if decades <= 3 else (1.0,)
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        ax.yaxis.set_minor_locator(NullLocator())


def count_axis(ax, counts) -> None:
    """A log2 x axis of counts (transport partitions ...) labelled 1, 2, 4, 8."""
    from matplotlib.ticker import NullLocator
    ax.set_xscale("log", base=2)
    ticks = sorted(set(counts))
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(int(t)) for t in ticks])
    ax.xaxis.set_minor_locator(NullLocator())
