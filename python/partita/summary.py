"""OMB-style text summaries of results: one table per metric, one column per implementation."""

from __future__ import annotations

from .findings import all_zero, why_zero
from .results import case_key, headline_metrics
from .stats import number, without_samples

# metrics that are 0 by construction in some configurations: a table of zeros is replaced by why
ZERO_EXPLAINED = ("availability", "early_bird", "early_arrival")


def fmt_value(x) -> str:
    # a value that is not a finite number (null, NaN, infinite, a string in a hand-made file) shows as '-'
    x = number(x)
    if x is None:
        return "-"
    ax = abs(x)
    if ax != 0 and (ax >= 1e5 or ax < 1e-2):
        return f"{x:.3g}"
    return f"{x:.2f}" if ax < 100 else f"{x:.0f}"


def cell(metric: dict | None) -> str:
    if not metric:
        return "-"
    s = metric.get("summary", {})
    if without_samples(s):  # n 0: the numbers measure nothing
        return "- (no sample)"
    return f"{fmt_value(s.get('median'))} [{fmt_value(s.get('ci95_lo'))},{fmt_value(s.get('ci95_hi'))}]"


def summarize_group(name: str, by_impl: dict[str, dict]) -> str:
    """Tables for one suite run executed with one or more implementations."""
    impls = list(by_impl)
    first = next(iter(by_impl.values()))
    metrics = headline_metrics(first)
    # union of cases in first-seen order
    order: list[tuple] = []
    labels: dict[tuple, dict] = {}
    index: dict[str, dict[tuple, dict]] = {}
    for impl, res in by_impl.items():
        index[impl] = {}
        for c in res.get("results", []):
            k = case_key(c.get("case", {}))
            index[impl][k] = c
            if k not in labels:
                labels[k] = c.get("case", {})
                order.append(k)
    varying = [k for k in (labels[order[0]] if order else {})
               if k == "bytes" or len({str(labels[o].get(k)) for o in order}) > 1]
    lines = []
    iters = first.get("config", {}).get("iterations")
    launches = first.get("launches", 1)
    over = (f"{launches} launches x {iters} iterations (the interval also covers every launch's own median)"
            if launches > 1 else f"{iters} iterations")
    for m in metrics:
        if m in ZERO_EXPLAINED and all_zero(by_impl, m):
            lines.append(f"# {name}: {why_zero(by_impl, m)}")
            lines.append("")
            continue
        unit = ""
        for c in first.get("results", []):
            if m in c.get("metrics", {}):
                unit = c["metrics"][m].get("unit", "")
                break
        lines.append(f"# {name}: {m} ({unit}), median [95% CI of the median] over {over}")
        rows = []
        for k in order:
            row = [str(labels[k].get(v)) for v in varying]
            for impl in impls:
                c = index[impl].get(k)
                row.append("-" if c is None else "skipped" if "skipped" in c
                           else cell(c.get("metrics", {}).get(m)))
            rows.append(row)
        header = [("# " if i == 0 else "") + v for i, v in enumerate(varying)] + impls
        # every column as wide as its widest entry: long labels never run into the next column
        widths = [max(len(r[i]) for r in rows + [header]) + 2 for i in range(len(header))]
        nlab = len(varying)

        def fmt(r):
            return "".join(x.ljust(w) if i < nlab else x.rjust(w) for i, (x, w) in enumerate(zip(r, widths)))
        lines.append(fmt(header).rstrip())
        lines.extend(fmt(r).rstrip() for r in rows)
        lines.append("")
    skipped = {c["skipped"] for r in by_impl.values() for c in r.get("results", []) if "skipped" in c}
    for why in sorted(skipped):
        lines.append(f"# some cases skipped: {why}")
    return "\n".join(lines)
