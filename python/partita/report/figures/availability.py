"""Application availability against the message size, one line per implementation, one panel per
partition count, under the run's noise model (ICPP'22 Fig. 6, 7)."""

from __future__ import annotations

from ... import findings
from .common import finish, impl_lines, p2p_runs, panels, png, size_axis, values

TITLE = "Application availability under noise"
SHORT = "availability"


def subjects(runs):
    return p2p_runs(runs, {"availability"}, noisy=True)


def finding(g) -> str:
    return findings.availability(g.by_impl)


def draw(g) -> bytes:
    parts = values(g.by_impl, "partitions")
    fig, axes = panels(len(parts), sharey=True)
    noise = g.config.get("noise", "none")
    for ax, p in zip(axes, parts):
        impl_lines(ax, g.by_impl, "availability", p)
        ax.set_ylim(-3, 103)
        size_axis(ax, values(g.by_impl, "bytes"))
        finish(ax, "message size", "availability (%)" if ax is axes[0] else "",
               f"{p} partitions, noise {noise}", legend=False)
    return png(fig, legend_from=axes)
