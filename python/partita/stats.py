"""The harness's summary statistics, in Python (src/bench/harness/stats.c; docs/metrics.md)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence


def quantile_sorted(s: Sequence[float], q: float) -> float:
    """The q-quantile of sorted samples, linear between order statistics (Hyndman-Fan type 7)."""
    if not s:
        return math.nan
    h = (len(s) - 1) * q
    lo = math.floor(h)
    if lo >= len(s) - 1:
        return s[-1]
    return s[lo] + (h - lo) * (s[lo + 1] - s[lo])


def median_ci95(s: Sequence[float]) -> tuple[float, float]:
    """Distribution-free 95% CI of the median of sorted samples: order statistics j, k
    (1-based) = floor(n/2 - 0.98 sqrt n), ceil(n/2 + 1 + 0.98 sqrt n), clamped; [min, max] below 6."""
    n = len(s)
    if n == 0:
        return math.nan, math.nan
    if n < 6:
        return s[0], s[-1]
    half = 0.98 * math.sqrt(n)
    j = max(1, math.floor(n / 2 - half))
    k = min(n, math.ceil(n / 2 + 1 + half))
    return s[j - 1], s[k - 1]


def number(x) -> float | None:
    """x as a float when it is a finite number, else None (missing, null, NaN, infinite, true/false,
    not a number): a value that is not a finite number is no measurement."""
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        return None
    try:
        v = float(x)
    except OverflowError:  # an integer of hundreds of digits (JSON has no limit) is beyond any float
        return None
    return v if math.isfinite(v) else None


def without_samples(summary: dict) -> bool:
    """Whether a metric's summary says no sample is behind it: its n, where written, is not a
    count >= 1 (a median of no sample is no measurement, whatever number it holds)."""
    return "n" in summary and not (number(summary["n"]) or 0) >= 1


def numbers(samples: Iterable) -> list[float]:
    """The samples that are finite numbers (the harness writes a sample that is not one as null)."""
    return [v for v in map(number, samples) if v is not None]


def summarize(samples: Iterable) -> dict:
    """The summary the harness writes for one metric (n, median, p05, p95, mean, stdev, ci95_lo/hi, min, max)."""
    s = sorted(numbers(samples))
    n = len(s)
    if n == 0:
        return {"n": 0, **{k: None for k in ("median", "p05", "p95", "mean", "stdev", "ci95_lo", "ci95_hi",
                                              "min", "max")}}
    mean = sum(s) / n
    stdev = math.sqrt(sum((x - mean) ** 2 for x in s) / (n - 1)) if n > 1 else 0.0
    lo, hi = median_ci95(s)
    return {"n": n, "median": quantile_sorted(s, 0.5), "p05": quantile_sorted(s, 0.05),
            "p95": quantile_sorted(s, 0.95), "mean": mean, "stdev": stdev, "ci95_lo": lo, "ci95_hi": hi,
            "min": s[0], "max": s[-1]}
