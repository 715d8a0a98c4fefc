"""Perceived bandwidth against the message size, one line per implementation (policy), one panel
per partition count, the single send's bandwidth as a dotted reference (ICPP'22 Fig. 5 under
noise/compute, network-native study Fig. 9 per policy)."""

from __future__ import annotations

from ... import findings
from .common import finish, impl_lines, log_value_axis, p2p_runs, panels, png, size_axis, values

TITLE = "Perceived bandwidth"
SHORT = "perceived bandwidth"


def subjects(runs):
    return p2p_runs(runs, {"perceived_bw"}, noisy=True)


def finding(g) -> str:
    return findings.perceived_bw(g.by_impl)


def draw(g) -> bytes:
    parts = values(g.by_impl, "partitions")
    fig, axes = panels(len(parts), sharey=True)
    single = findings.single_send_mbps(g.by_impl)
    for ax, p in zip(axes, parts):
        impl_lines(ax, g.by_impl, "perceived_bw", p, scale=1000)   # GB/s
        ref = sorted((k[0], v / 1000) for k, v in single.items() if k[1] == p)
        if ref:
            # a dotted line through one size is no line at all: a dash marks each size
            ax.plot([r[0] for r in ref], [r[1] for r in ref], linestyle=":", color="black", linewidth=1.5,
                    marker="_", markersize=14, label="one send")
        size_axis(ax, values(g.by_impl, "bytes"))
        finish(ax, "message size", "perceived bandwidth (GB/s)" if ax is axes[0] else "",
               f"{p} partition{'s' if p != 1 else ''}", legend=False)
    log_value_axis(axes)
    return png(fig, legend_from=axes)
