"""Comparing two results folders case by case (e.g. two MPI libraries, or before/after a change)."""

from __future__ import annotations

import json
from pathlib import Path

from .pooling import pool_launches
from .results import ResultError, case_key, headline_metrics, is_params_file, load_result, load_run_dir
from .stats import number, without_samples


CASE_ALWAYS = ("bytes", "partitions", "threads")  # in a row's case when the case has them


def distinguishing_keys(cases: list[dict]) -> list[str]:
    """The case keys a row shows: CASE_ALWAYS, then every other key, in the first case's order,
    that two cases agreeing on the keys kept so far still differ in (a pattern's strategy, a
    mechanism's scheme); a key they determine (partition_bytes from bytes and partitions) adds nothing."""
    first = cases[0] if cases else {}
    kept = [k for k in first if k in CASE_ALWAYS]
    for k in first:
        if k in kept:
            continue
        seen: dict[tuple, str] = {}
        for c in cases:
            if seen.setdefault(tuple(str(c.get(x)) for x in kept), str(c.get(k))) != str(c.get(k)):
                kept.append(k)
                break
    return [k for k in first if k in kept]


def load_runs(folder: Path) -> dict[tuple[str, str], dict]:
    """(run name, implementation) -> result, for the successful runs of a folder
    (the launches of a repeated run pooled into one); a suite's partita-loggp run wrote
    LogGP parameters, not a result, and is left out."""
    manifest = load_run_dir(folder)
    launches: dict[tuple[str, str], list[dict]] = {}
    for r in manifest["runs"]:
        if r.get("status") == "ok" and r.get("result") and not is_params_file(folder / r["result"]):
            launches.setdefault((r["name"], r["impl"]), []).append(load_result(folder / r["result"]))
    return {key: pool_launches(results) for key, results in launches.items()}


def verdict(a: dict, b: dict) -> str:
    """'same' when the 95% confidence intervals of the medians overlap, else which side is higher;
    '?' when a median or an interval bound is missing or not a finite number (NaN compares as
    neither higher nor lower, so it must not count as an overlap)."""
    keys = ("median", "ci95_lo", "ci95_hi")
    if any(number(s.get(k)) is None for s in (a, b) for k in keys):
        return "?"
    # no sample behind the median (n 0), or an interval whose bounds are swapped: no measurement
    if any(without_samples(s) or s["ci95_lo"] > s["ci95_hi"] for s in (a, b)):
        return "?"
    if b["ci95_lo"] > a["ci95_hi"]:
        return "higher"
    if b["ci95_hi"] < a["ci95_lo"]:
        return "lower"
    return "same"


def compare_folders(a: Path, b: Path) -> list[dict]:
    """One row per (run, impl, case, headline metric) present in both folders."""
    return compare_runs(load_runs(a), load_runs(b))


def compare_runs(runs_a: dict[tuple[str, str], dict], runs_b: dict[tuple[str, str], dict]) -> list[dict]:
    """compare_folders on the folders' runs (load_runs)."""
    rows = []
    for key in runs_a:
        if key not in runs_b:
            continue
        ra, rb = runs_a[key], runs_b[key]
        cases_b = {case_key(c.get("case", {})): c for c in rb.get("results", []) if "metrics" in c}
        # what tells the cases apart (a pattern's strategy, a mechanism and scheme), as `summary` shows it
        shown = distinguishing_keys([c.get("case", {}) for c in ra.get("results", [])])
        for ca in ra.get("results", []):
            cb = cases_b.get(case_key(ca.get("case", {})))
            if "metrics" not in ca or cb is None:
                continue
            for m in headline_metrics(ra):
                # the headline metrics are the first case's: a later case may lack one, on either side
                sa, sb = ca["metrics"].get(m, {}).get("summary"), cb["metrics"].get(m, {}).get("summary")
                if not sa or not sb:
                    continue
                ma, mb = number(sa.get("median")), number(sb.get("median"))
                case = ca.get("case", {})
                rows.append({"run": key[0], "impl": key[1], "case": case, "metric": m,
                             "label": ",".join(f"{k}={case[k]}" for k in shown if k in case),
                             "a": ma, "b": mb, "ratio": mb / ma if ma and mb is not None else None,
                             "verdict": verdict(sa, sb)})
    return rows


def settings(result: dict) -> dict:
    """What a run was configured with: the benchmark's config and the rank count."""
    return {**(result.get("config") or {}), "ranks": (result.get("environment") or {}).get("ranks")}


def setting_notes(runs_a: dict[tuple[str, str], dict], runs_b: dict[tuple[str, str], dict],
                  rows: list[dict]) -> list[str]:
    """One line per compared run whose settings differ between the folders (load_runs; another noise,
    compute or rank count measures something else under the same run name): which, A -> B."""
    notes = []
    for key in dict.fromkeys((r["run"], r["impl"]) for r in rows):
        sa, sb = settings(runs_a[key]), settings(runs_b[key])
        diff = [f"{k} {_setting(sa.get(k))} -> {_setting(sb.get(k))}" for k in sorted(set(sa) | set(sb), key=str)
                if sa.get(k) != sb.get(k)]
        if diff:
            notes.append(f"# note: {key[0]} ({key[1]}) ran with other settings in B: " + ", ".join(diff))
    return notes


def _setting(v) -> str:
    return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))


def fmt(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def format_rows(rows: list[dict]) -> str:
    table = [["# run", "impl", "case", "metric", "A", "B", "B/A", "verdict (95% CIs)"]]
    for r in rows:
        table.append([r["run"], r["impl"], r["label"], r["metric"], fmt(r["a"], ".4g"), fmt(r["b"], ".4g"),
                      fmt(r["ratio"], ".3f"), r["verdict"]])
    # every column as wide as its widest entry, so a long case never runs into the metric
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = []
    for row in table:
        cells = [x.ljust(w) if i < 4 else x.rjust(w) for i, (x, w) in enumerate(zip(row[:-1], widths))]
        lines.append("  ".join(cells) + "  " + row[-1])
    return "\n".join(lines)


__all__ = ["compare_folders", "compare_runs", "format_rows", "load_runs", "setting_notes", "ResultError"]
