"""Perceived bandwidth against the message size, one line per implementation (policy), one panel
per partition count, the single send's bandwidth as a dotted reference (ICPP'22 Fig. 5 under
noise/compute, network-native study Fig. 9 per policy)."""

from __future__ import annotations

from ... import findings
from .common import ci_line, finish, panels, png, series, size_axis, values

TITLE = "Perceived bandwidth"
SHORT = "perceived bandwidth"


def subjects(runs):
    return [g for g in runs.of("p2p") if "perceived_bw" in g.metric_names() and g.noisy()]


def finding(g) -> str:
    return findings.perceived_bw(g.by_impl)


def draw(g) -> bytes:
    parts = values(g.by_impl, "partitions")
    fig, axes = panels(len(parts), sharey=True)
    single = findings.single_send_mbps(g.by_impl)
    for ax, p in zip(axes, parts):
        for label, res in g.by_impl.items():
            xs, ss = series(res, "perceived_bw", "bytes", partitions=p)
            if xs:
                ci_line(ax, xs, [{k: (v / 1000 if isinstance(v, (int, float)) else v) for k, v in s.items()}
                                 for s in ss], label)
        ref = sorted((k[0], v / 1000) for k, v in single.items() if k[1] == p)
        if ref:
            ax.plot([r[0] for r in ref], [r[1] for r in ref], linestyle=":", color="black", linewidth=1.5,
                    label="one send")
        ax.set_yscale("log")
        size_axis(ax, values(g.by_impl, "bytes"))
        finish(ax, "message size", "perceived bandwidth (GB/s)" if ax is axes[0] else "",
               f"{p} partition{'s' if p != 1 else ''}", legend=False)
    return png(fig, legend_from=axes)
