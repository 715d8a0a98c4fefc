"""Application patterns: Sweep3D and Halo3D throughput per variant and thread count (Sweep3D /
Halo3D study Fig. 9-12), the 27-point stencil's time per strategy (Comb study)."""

from __future__ import annotations

from ... import findings
from .common import bars, finish, panels, png

TITLE = "Application patterns"
SHORT = "pattern"
RATE = {"sweep3d", "halo3d"}     # drawn as throughput (iterations per second); the stencil as time
NAMES = {"sweep3d": "Sweep3D", "halo3d": "Halo3D", "stencil": "27-point stencil"}


def subjects(runs):
    return [g for g in runs.of("sweep3d", "halo3d", "stencil") if "time_us" in g.metric_names()]


def finding(g) -> str:
    return findings.pattern(g.by_impl)


def draw(g) -> bytes:
    t = findings.by_case(g.by_impl, "time_us", findings.pattern_key)
    cats = []
    for rows in t.values():
        cats += [k for k in rows if k not in cats]
    threads = {k[1] for k in cats}
    names = [k[0] if len(threads) == 1 else f"{k[0]}\n{k[1]} threads" for k in cats]
    fig, (ax,) = panels(1, width=max(6.0, 1.3 * len(cats) * max(1, len(t)) ** 0.5 + 2), height=3.8)
    by_label = {lb: {names[cats.index(k)]: s for k, s in rows.items()} for lb, rows in t.items()}
    if g.benchmark in RATE:
        bars(ax, names, by_label, transform=lambda us: 1e6 / us if us else 0.0)
        ylabel = "throughput (iterations / s)"
    else:
        bars(ax, names, by_label)
        ylabel = "time per iteration (us)"
    finish(ax, "variant", ylabel, NAMES.get(g.benchmark, g.benchmark), legend=False)
    if len(t) > 1:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    return png(fig)
