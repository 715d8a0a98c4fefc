"""Overhead against the total message size, one line per partition count, one panel per
implementation, 95% CIs as error bars (ICPP'22 Fig. 4)."""

from __future__ import annotations

from ... import findings
from .common import ci_line, finish, log_value_axis, p2p_runs, panels, png, series, size_axis, values

TITLE = "Overhead of partitioned over one send"
SHORT = "overhead"


def subjects(runs):
    return p2p_runs(runs, {"overhead"}, noisy=False)


def finding(g) -> str:
    return findings.overhead(g.by_impl)


def draw(g) -> bytes:
    fig, axes = panels(len(g.by_impl), sharey=True)
    for ax, (label, res) in zip(axes, g.by_impl.items()):
        for p in values({label: res}, "partitions"):
            xs, ss = series(res, "overhead", "bytes", partitions=p)
            if xs:
                ci_line(ax, xs, ss, f"{p} partition{'s' if p != 1 else ''}")
        ax.axhline(1.0, color="grey", linestyle=":", linewidth=1, label="one send")
        size_axis(ax, values(g.by_impl, "bytes"))
        finish(ax, "total message size", "overhead (t_part / t_pt2pt)" if ax is axes[0] else "", label, legend=False)
    log_value_axis(axes)
    return png(fig, legend_from=axes)
