"""Early-bird share and early arrival against the message size, one line per implementation
(ICPP'22 Fig. 8; early arrival is partita's: the data that really moved before the join)."""

from __future__ import annotations

from ... import findings
from .common import finish, impl_lines, p2p_runs, panels, png, size_axis, values

TITLE = "Early-bird share and early arrival"
SHORT = "early arrival"
METRICS = (("early_bird", "early-bird share (%)"), ("early_arrival", "arrived before the join (%)"))


def subjects(runs):
    return p2p_runs(runs, {"early_bird", "early_arrival"}, noisy=True)


def finding(g) -> str:
    return findings.early(g.by_impl)


def draw(g) -> bytes:
    parts = values(g.by_impl, "partitions")
    fig, axes = panels(2 * len(parts), max_cols=2)
    for i, p in enumerate(parts):
        for j, (metric, ylabel) in enumerate(METRICS):
            ax = axes[2 * i + j]
            impl_lines(ax, g.by_impl, metric, p)
            ax.set_ylim(-3, 103)
            size_axis(ax, values(g.by_impl, "bytes"))
            finish(ax, "message size", ylabel, f"{p} partitions, noise {g.config.get('noise')}", legend=False)
    return png(fig, legend_from=axes)
