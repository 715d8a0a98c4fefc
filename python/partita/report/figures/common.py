"""What every figure family shares: the Figure record, matplotlib set-up, lines with 95% CI
error bars, and PNG bytes."""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field

from ...figure_axes import log_value_axis, size_axis  # noqa: F401 (the figure families take them from here)


@dataclass
class Figure:
    title: str
    finding: str                 # one sentence computed from the data (partita.findings)
    caption: str                 # what was run
    png: bytes = b""
    table: list[list[str]] = field(default_factory=list)   # optional table shown under the image
    short: str = ""              # the family in a few words (console)
    run: str = ""                # the suite run it shows, if any


def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def panels(n: int, width: float = 11.0, height: float = 3.6, max_cols: int = 3, sharey: bool = False):
    """A figure of n panels, at most max_cols per row; returns (fig, list of axes)."""
    plt = pyplot()
    cols = 2 if n == 4 and max_cols < 4 else min(n, max_cols)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width, height * rows), squeeze=False, sharey=sharey)
    flat = [a for row in axes for a in row]
    for a in flat[n:]:
        a.set_visible(False)
    return fig, flat[:n]


def ci_line(ax, xs, summaries, label, scale: float = 1.0, **kw):
    """Medians / scale with their 95% CI as error bars (points without a CI get none)."""
    med = [s["median"] / scale for s in summaries]
    lo = [max(0.0, m - s["ci95_lo"] / scale) if s.get("ci95_lo") is not None else 0.0 for m, s in zip(med, summaries)]
    hi = [max(0.0, s["ci95_hi"] / scale - m) if s.get("ci95_hi") is not None else 0.0 for m, s in zip(med, summaries)]
    ax.errorbar(xs, med, yerr=[lo, hi], label=label, marker="o", markersize=3.5, capsize=2.5, linewidth=1.3, **kw)


def finish(ax, xlabel: str, ylabel: str, title: str | None = None, legend: bool = True):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7.5, framealpha=0.85)


def png(fig, legend_from=None) -> bytes:
    """The figure as PNG; with legend_from (the panels), one legend of their lines below all panels
    instead of one per panel, so no legend hides a line."""
    plt = pyplot()
    rect = (0, 0, 1, 1)
    if legend_from:
        seen: dict[str, object] = {}
        for ax in legend_from:
            for h, lb in zip(*ax.get_legend_handles_labels()):
                seen.setdefault(lb, h)
        if seen:
            ncol = min(len(seen), 4 if max(len(lb) for lb in seen) < 30 else 2)
            rows = math.ceil(len(seen) / ncol)
            height = fig.get_size_inches()[1]
            fig.legend(list(seen.values()), list(seen), loc="lower center", ncol=ncol, fontsize=8.5, frameon=False)
            rect = (0, min(0.45, (0.28 * rows + 0.1) / height), 1, 1)
    fig.tight_layout(rect=rect)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()


def series(result: dict, metric: str, x: str, **fixed) -> tuple[list, list[dict]]:
    """(x values, summaries) of one metric over the cases whose case fields equal `fixed`, sorted by x."""
    from ...findings import summary_of
    pts = []
    for c in result.get("results", []):
        case = c.get("case", {})
        s = summary_of(c, metric)
        if s is None or "skipped" in c or any(case.get(k) != v for k, v in fixed.items()):
            continue
        pts.append((case.get(x), s))
    pts.sort(key=lambda p: p[0])
    return [p[0] for p in pts], [p[1] for p in pts]


def values(by_impl: dict[str, dict], field_name: str) -> list:
    """The distinct values of one case field over every implementation, sorted."""
    vals = {c.get("case", {}).get(field_name) for r in by_impl.values() for c in r.get("results", [])}
    return sorted(v for v in vals if v is not None)


def bars(ax, categories: list, by_label: dict[str, dict], transform=lambda v: v):
    """Grouped bars: one group per category, one bar per label, 95% CI as error bars;
    transform maps a time to what is drawn (e.g. 1e6 / t for a rate) and may swap the CI ends."""
    n = max(1, len(by_label))
    width = 0.8 / n
    for i, (label, rows) in enumerate(by_label.items()):
        xs, hs, lo, hi = [], [], [], []
        for j, cat in enumerate(categories):
            s = rows.get(cat)
            if s is None:
                continue
            m = transform(s["median"])
            ends = sorted(transform(s[k]) for k in ("ci95_lo", "ci95_hi") if s.get(k) is not None) or [m, m]
            xs.append(j - 0.4 + width * (i + 0.5))
            hs.append(m)
            lo.append(max(0.0, m - ends[0]))
            hi.append(max(0.0, ends[-1] - m))
        ax.bar(xs, hs, width=width * 0.95, yerr=[lo, hi], capsize=3, label=label)
    ax.set_xticks(range(len(categories)))
    ax.set_xticklabels([str(c) for c in categories], fontsize=8)


def p2p_runs(runs, metrics: set[str], noisy: bool | None):
    """The p2p runs that measured all these metrics (with noise, without, or either when None)."""
    return [g for g in runs.of("p2p") if metrics <= g.metric_names() and (noisy is None or g.noisy() == noisy)]


def impl_lines(ax, by_impl: dict[str, dict], metric: str, partitions: int, scale: float = 1.0):
    """One CI line per implementation of a metric against the message size, at one partition count."""
    for label, res in by_impl.items():
        xs, ss = series(res, metric, "bytes", partitions=partitions)
        if xs:
            ci_line(ax, xs, ss, label, scale)
