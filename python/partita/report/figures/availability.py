"""Application availability against the message size, one line per implementation, one panel per
partition count, under the run's noise model (ICPP'22 Fig. 6, 7)."""

from __future__ import annotations

from ... import findings
from .common import ci_line, finish, panels, png, series, size_axis, values

TITLE = "Application availability under noise"
SHORT = "availability"


def subjects(runs):
    return [g for g in runs.of("p2p") if "availability" in g.metric_names() and g.noisy()]


def finding(g) -> str:
    return findings.availability(g.by_impl)


def draw(g) -> bytes:
    parts = values(g.by_impl, "partitions")
    fig, axes = panels(len(parts), sharey=True)
    noise = g.config.get("noise", "none")
    for ax, p in zip(axes, parts):
        for label, res in g.by_impl.items():
            xs, ss = series(res, "availability", "bytes", partitions=p)
            if xs:
                ci_line(ax, xs, ss, label)
        ax.set_ylim(-3, 103)
        size_axis(ax, values(g.by_impl, "bytes"))
        finish(ax, "message size", "availability (%)" if ax is axes[0] else "",
               f"{p} partitions, noise {noise}", legend=False)
    return png(fig, legend_from=axes)
