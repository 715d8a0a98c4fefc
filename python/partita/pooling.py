"""One result from several launches of the same benchmark (a suite's `repeat`).

Launches of one program differ more than iterations of one launch do (where the
processes land, the state of a shared machine): on the 2-core VM the median
time of 4 MiB under a laggard moved 2x between launches. A single launch per
implementation would mix that into the comparison, so a suite can launch every
implementation several times, interleaved, and the summary pools them: the
median of all iterations of all launches, with an interval that is the 95% CI
of that median widened to cover every launch's own median (docs/suites.md).
"""

from __future__ import annotations

import copy

from .results import case_key
from .stats import numbers, summarize, without_samples


def pooled_summary(samples: list, launch_metrics: list[dict]) -> dict:
    """The summary of one metric over launches: samples are all launches' samples, launch_metrics
    each launch's metrics[name] (for its own median)."""
    s = summarize(samples)
    # a launch whose median is not a finite number, or of no sample, measured nothing: it widens no interval
    medians = numbers(m.get("summary", {}).get("median") for m in launch_metrics
                      if not without_samples(m.get("summary", {})))
    if len(launch_metrics) > 1 and medians and s["n"]:
        s["ci95_lo"] = min([s["ci95_lo"], *medians])
        s["ci95_hi"] = max([s["ci95_hi"], *medians])
    s["launch_medians"] = medians
    return s


def pooled_validation(values: list[str]) -> str:
    if "fail" in values:
        return "fail"
    return "pass" if "pass" in values else values[0]


def pool_launches(results: list[dict]) -> dict:
    """The results of N launches of one run as one result (itself when N = 1)."""
    if len(results) == 1:
        return results[0]
    out = copy.deepcopy(results[0])
    out["launches"] = len(results)
    by_case = [{case_key(c.get("case", {})): c for c in r.get("results", [])} for r in results]
    for c in out.get("results", []):
        k = case_key(c.get("case", {}))
        same = [cases[k] for cases in by_case if k in cases]
        if "metrics" not in c or any("metrics" not in x for x in same):
            continue
        c["validation"] = pooled_validation([x.get("validation", "skipped") for x in same])
        for name, metric in c["metrics"].items():
            launch_metrics = [x["metrics"][name] for x in same if name in x["metrics"]]
            metric["samples"] = [v for m in launch_metrics for v in m.get("samples") or []]
            metric["summary"] = pooled_summary(metric["samples"], launch_metrics)
    return out
