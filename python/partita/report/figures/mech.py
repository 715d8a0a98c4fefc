"""Effective bandwidth against the partition size, one line per send mechanism (and
implementation for psend), one panel per marking scheme (Open MPI study Fig. 3-6)."""

from __future__ import annotations

from ... import findings
from .common import ci_line, finish, log_value_axis, panels, png, size_axis

TITLE = "Send mechanisms: effective bandwidth"
SHORT = "mechanisms"


def subjects(runs):
    return [g for g in runs.of("mech") if "bandwidth" in g.metric_names()]


def finding(g) -> str:
    return findings.mech(g.by_impl)


def draw(g) -> bytes:
    lines = findings.mech_lines(g.by_impl)
    panes = sorted({(k[1], k[2]) for rows in lines.values() for k in rows}, key=lambda p: (str(p[0]), p[1] or 0))
    fig, axes = panels(len(panes), sharey=True)
    sizes = sorted({k[0] for rows in lines.values() for k in rows})
    for ax, (scheme, threads) in zip(axes, panes):
        for name, rows in lines.items():
            pts = sorted((k[0], s) for k, s in rows.items() if (k[1], k[2]) == (scheme, threads))
            if pts:
                ci_line(ax, [p[0] for p in pts], [p[1] for p in pts], name, scale=1000)   # GB/s
        size_axis(ax, sizes)
        finish(ax, "partition size", "effective bandwidth (GB/s)" if ax is axes[0] else "",
               f"{scheme} marking" + (f", {threads} threads" if threads and threads > 1 else ""), legend=False)
    log_value_axis(axes)
    return png(fig, legend_from=axes)
