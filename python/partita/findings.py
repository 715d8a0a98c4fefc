"""The one-sentence findings of the report's figures and the console headline, computed from
the results (never canned), and why a metric is 0 for every implementation of a run.

Every function takes `by_impl` (implementation label -> pooled result of one suite run) and
returns a sentence. `docs/report.md` describes how each sentence is chosen.
"""

from __future__ import annotations

import math
import statistics

from .model.native import fmt_bytes
from .stats import number, without_samples

# The implementation others are compared with when present.
REFERENCE = "native"


def summary_of(case: dict, metric: str) -> dict | None:
    """The metric's summary, None when its median is not a finite number: a NaN or infinite median
    is no measurement, it would make every median over cases and every "best" arbitrary (an
    infinite bandwidth the best), nor is one of no sample (n 0). A CI bound that is not a finite
    number is None: no interval."""
    s = case.get("metrics", {}).get(metric, {}).get("summary")
    if not s or number(s.get("median")) is None or without_samples(s):
        return None
    return {**s, **{k: number(s.get(k)) for k in ("ci95_lo", "ci95_hi")}}


def by_case(by_impl: dict[str, dict], metric: str, key) -> dict[str, dict]:
    """label -> {key(case): summary} for the cases that have the metric."""
    out: dict[str, dict] = {}
    for label, res in by_impl.items():
        rows = {}
        for c in res.get("results", []):
            s = summary_of(c, metric)
            if s is not None and "skipped" not in c:
                rows[key(c.get("case", {}))] = s
        if rows:
            out[label] = rows
    return out


def reference(labels) -> str:
    labels = list(labels)
    return next((lb for lb in labels if lb == REFERENCE or lb.endswith("/" + REFERENCE)), labels[0])


def overlap(a: dict, b: dict) -> bool:
    return not (a["ci95_lo"] > b["ci95_hi"] or b["ci95_lo"] > a["ci95_hi"])


def ci_words(a: dict, b: dict) -> str:
    if None in (a.get("ci95_lo"), a.get("ci95_hi"), b.get("ci95_lo"), b.get("ci95_hi")):
        return "no CIs recorded"
    return "CIs overlap" if overlap(a, b) else "CIs do not overlap"


def fmt_num(x: float, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.{digits}f}"


def fmt_bw(mbps: float) -> str:
    return f"{mbps / 1000:.1f} GB/s" if mbps >= 1000 else f"{mbps:.0f} MB/s"


def p2p_key(case: dict) -> tuple:
    return (case.get("bytes"), case.get("partitions"))


def where(key: tuple) -> str:
    size, parts = key
    return f"{fmt_bytes(size)} in {parts} partition{'s' if parts != 1 else ''}"


def config_of(by_impl: dict[str, dict]) -> dict:
    return next(iter(by_impl.values()), {}).get("config", {})


def extreme_ratio(t: dict[str, dict], ref: str, lowest: bool):
    """(ratio, label, case, summary, reference summary) of the case where another implementation's
    median is the smallest (lowest) or largest multiple of the reference's; None when none shares a case."""
    best = None
    for lb, rows in t.items():
        if lb == ref:
            continue
        for k, s in rows.items():
            r = t[ref].get(k)
            if r is None or r["median"] <= 0:
                continue
            ratio = s["median"] / r["median"]
            if best is None or (ratio < best[0] if lowest else ratio > best[0]):
                best = (ratio, lb, k, s, r)
    return best


# --- p2p -------------------------------------------------------------------------------------

def overhead(by_impl: dict[str, dict]) -> str:
    """The case (more than one partition when there is one) where the best implementation is
    furthest below the reference, or, with one implementation, its range."""
    t = by_case(by_impl, "overhead", p2p_key)
    if not t:
        return "no overhead was measured."
    ref = reference(t)
    multi = {lb: {k: s for k, s in rows.items() if (k[1] or 1) > 1} or rows for lb, rows in t.items()}
    if len(t) == 1:
        rows = multi[ref]
        lo = min(rows, key=lambda k: rows[k]["median"])
        hi = max(rows, key=lambda k: rows[k]["median"])
        under = sum(1 for s in rows.values() if s["median"] <= 1.0)
        return (f"{ref}: from {fmt_num(rows[lo]['median'])}x one send ({where(lo)}) to "
                f"{fmt_num(rows[hi]['median'])}x ({where(hi)}); at most one send's time in {under} of "
                f"{len(rows)} cases.")
    best = extreme_ratio(multi, ref, lowest=True)
    if best is None:
        return f"the implementations share no case with {ref}."
    gain, lb, k, s, r = best
    if gain < 1:
        return (f"{lb}: {fmt_num(s['median'])}x one send at {where(k)}, {ref} {fmt_num(r['median'])}x; "
                f"{ci_words(s, r)}.")
    return (f"no implementation beats {ref} anywhere; closest: {lb} {fmt_num(s['median'])}x one send at "
            f"{where(k)}, {ref} {fmt_num(r['median'])}x; {ci_words(s, r)}.")


def single_send_mbps(by_impl: dict[str, dict]) -> dict[tuple, float]:
    """Bandwidth of the reference MPI_Send per case (bytes / t_pt2pt), from the reference implementation."""
    t = by_case(by_impl, "t_pt2pt_us", p2p_key)
    if not t:
        return {}
    rows = t[reference(t)]
    return {k: k[0] / s["median"] for k, s in rows.items() if s["median"] > 0}


def perceived_bw(by_impl: dict[str, dict]) -> str:
    """The size where the best implementation's perceived bandwidth is the largest multiple of the
    reference's, with the single send's bandwidth beside it."""
    t = by_case(by_impl, "perceived_bw", p2p_key)
    if not t:
        return "no perceived bandwidth was measured."
    ref = reference(t)
    single = single_send_mbps(by_impl)
    if len(t) == 1:
        rows = t[ref]
        k = max(rows, key=lambda k: k[0])
        extra = f", {fmt_num(rows[k]['median'] / single[k])}x the single send" if k in single else ""
        return f"{ref}: {fmt_bw(rows[k]['median'])} at {where(k)}{extra}."
    best = extreme_ratio(t, ref, lowest=False)
    if best is None:
        return f"the implementations share no case with {ref}."
    ratio, lb, k, s, r = best
    one = f"; one send {fmt_bw(single[k])}" if k in single else ""
    verb = "perceives" if ratio >= 1 else "at best perceives"
    return (f"{lb} {verb} {fmt_bw(s['median'])} at {where(k)}, {fmt_num(ratio)}x {ref} "
            f"({fmt_bw(r['median'])}){one}; {ci_words(s, r)}.")


def all_zero(by_impl: dict[str, dict], metric: str) -> bool:
    """True when the metric was measured and is 0 in every case of every implementation: its median
    and its CI's upper bound (a pooled CI covers every launch's median: a median of 0 over launches
    whose one median was 47% is no metric that is 0 by construction)."""
    t = by_case(by_impl, metric, lambda c: tuple(sorted(c.items())))
    vals = [(s["median"], s.get("ci95_hi")) for rows in t.values() for s in rows.values()]
    return bool(vals) and all(median == 0 and hi in (0, None) for median, hi in vals)


def why_zero(by_impl: dict[str, dict], metric: str) -> str:
    """Why `metric` (availability, early_bird, early_arrival) is 0 for every implementation of a run,
    from its configuration and its other metrics."""
    cfg = config_of(by_impl)
    compute = cfg.get("compute_us") or 0
    noise = str(cfg.get("noise", "none"))
    threads = cfg.get("threads") or 1
    parts = cfg.get("partitions") or []
    head = f"{metric} is 0 for every implementation and case: "
    if compute == 0 and noise == "none":
        return head + ("this run has no compute and no noise, so every partition is ready at the same time "
                       "as the join and nothing can overlap it (these metrics need --compute and a laggard, "
                       "e.g. --noise delay:500).")
    if threads == 1 or parts == [1]:
        return head + ("one thread (or one partition) readies everything at once after its compute, "
                       "so nothing is ready before the join.")
    if noise == "none":
        return head + ("the threads compute equally long (no noise), so they all finish at the join and no "
                       "partition is ready before it; add a laggard with --noise.")
    t_ref = by_case(by_impl, "t_pt2pt_us", p2p_key)
    ref_us = statistics.median(s["median"] for rows in t_ref.values() for s in rows.values()) if t_ref else None
    send = f"; one send of the message takes {fmt_num(ref_us)} us" if ref_us else ""
    if metric == "early_bird":
        return head + f"no partition was ready before the join under {noise}{send}."
    if metric == "early_arrival" or all_zero(by_impl, "early_arrival"):
        return head + (f"no partition arrived before the join: the implementations sent nothing while the "
                       f"laggard ({noise}) was late, or the early partitions took longer than the delay{send}.")
    after = by_case(by_impl, "t_after_join_us", p2p_key)
    after_us = statistics.median(s["median"] for rows in after.values() for s in rows.values()) if after else None
    return head + (f"partitions arrived early, but what was left after the join still took at least one whole "
                   f"send (after the join {fmt_num(after_us)} us{send}).")


def best_case(t: dict[str, dict], higher: bool = True):
    """(label, key, summary) of the highest (or lowest) median over every implementation and case;
    the label names every implementation that ties there ("a and b")."""
    items = [(lb, k, s) for lb, rows in t.items() for k, s in rows.items()]
    lb, k, s = (max if higher else min)(items, key=lambda x: x[2]["median"])
    ties = [o for o, rows in t.items() if k in rows and rows[k]["median"] == s["median"]]
    return " and ".join(ties), k, s


def availability(by_impl: dict[str, dict]) -> str:
    if all_zero(by_impl, "availability"):
        return why_zero(by_impl, "availability")
    t = by_case(by_impl, "availability", p2p_key)
    if not t:
        return "no availability was measured."
    lb, k, s = best_case(t)
    noise = str(config_of(by_impl).get("noise", "none"))
    if s["median"] == 0:  # every median 0, yet not every interval (all_zero): some launches gave some back
        lb, k, s = max(((o, key, x) for o, rows in t.items() for key, x in rows.items()),
                       key=lambda item: item[2]["ci95_hi"] or 0)
        return (f"the median availability is 0% for every implementation and case under {noise}, but not in "
                f"every launch: {lb}'s 95% CI reaches {fmt_num(s['ci95_hi'], 0)}% at {where(k)}.")
    others = [f"{o} {fmt_num(rows[k]['median'], 0)}%" for o, rows in t.items() if o not in lb.split(" and ") and k in rows]
    verb = "give" if " and " in lb else "gives"
    return (f"{lb} {verb} back {fmt_num(s['median'], 0)}% of one send's time at {where(k)} under {noise}"
            + (f"; {', '.join(others)}" if others else "") + ".")


def early(by_impl: dict[str, dict]) -> str:
    """Early arrival (data that really moved before the join) against the early-bird share."""
    if all_zero(by_impl, "early_bird") and all_zero(by_impl, "early_arrival"):
        return why_zero(by_impl, "early_bird")
    ea = by_case(by_impl, "early_arrival", p2p_key)
    eb = by_case(by_impl, "early_bird", p2p_key)
    if not ea or not eb:
        return "early-bird share or early arrival was not measured."
    if all_zero(by_impl, "early_arrival"):
        lb, k, s = best_case(eb)
        return (f"{lb} has the highest early-bird share, {fmt_num(s['median'], 0)}% at {where(k)}, yet "
                + why_zero(by_impl, "early_arrival"))
    lb, k, s = best_case(ea)
    # one share per implementation named: two that tie on early arrival may differ here (1% and 59%)
    birds = [fmt_num(b["median"], 0) + "%" for o in lb.split(" and ") if (b := eb.get(o, {}).get(k))]
    ref = reference(ea)
    tail = ""
    if ref not in lb.split(" and ") and k in ea[ref]:
        rb = eb.get(ref, {}).get(k)
        tail = (f"; {ref}: {fmt_num(ea[ref][k]['median'], 0)}% arrived"
                + (f", early-bird share {fmt_num(rb['median'], 0)}%" if rb else ""))
    return (f"{lb}: {fmt_num(s['median'], 0)}% of the message arrived before the join at {where(k)}"
            + (f" (early-bird share {' and '.join(birds)})" if birds else "") + tail + ".")


# --- mechanisms and patterns ---------------------------------------------------------------------

def mech_key(case: dict) -> tuple:
    return (case.get("partition_bytes"), case.get("scheme"), case.get("mechanism"), case.get("threads"))


def mech_lines(by_impl: dict[str, dict]) -> dict[str, dict]:
    """'mechanism' or 'mechanism (impl)' -> {(partition_bytes, scheme, threads): summary} of bandwidth."""
    t = by_case(by_impl, "bandwidth", mech_key)
    mechs_per_impl = {lb: {k[2] for k in rows} for lb, rows in t.items()}
    label_impl = len(t) > 1
    out: dict[str, dict] = {}
    for lb, rows in t.items():
        for (pb, scheme, mech, threads), s in rows.items():
            # the MPI library's own mechanisms are the same in every implementation's run: keep psend apart
            name = f"{mech} ({lb})" if label_impl and (mech == "psend" or len(mechs_per_impl) == 1) else mech
            out.setdefault(name, {}).setdefault((pb, scheme, threads), s)
    return out


def mech(by_impl: dict[str, dict]) -> str:
    lines = mech_lines(by_impl)
    if not lines:
        return "no bandwidth was measured."
    keys = sorted({k for rows in lines.values() for k in rows}, key=lambda k: (k[0], str(k[1])))
    smallest = keys[0]
    at = {n: rows[smallest] for n, rows in lines.items() if smallest in rows}
    hi = max(at, key=lambda n: at[n]["median"])
    lo = min(at, key=lambda n: at[n]["median"])
    pb, scheme, threads = smallest
    thr = f", {threads} threads" if threads and threads > 1 else ""
    if hi == lo:
        return f"{hi}: {fmt_bw(at[hi]['median'])} with {fmt_bytes(pb)} partitions ({scheme} marking{thr})."
    largest = keys[-1]
    big = [rows[largest]["median"] for rows in lines.values() if largest in rows]
    spread = max(big) / min(big) if big and min(big) > 0 else math.nan
    return (f"with {fmt_bytes(pb)} partitions ({scheme} marking{thr}) {hi} reaches {fmt_bw(at[hi]['median'])}, "
            f"{fmt_num(at[hi]['median'] / at[lo]['median'], 1)}x {lo} ({fmt_bw(at[lo]['median'])}); "
            f"at {fmt_bytes(largest[0])} partitions all lie within {fmt_num(spread, 2)}x.")


def pattern_key(case: dict) -> tuple:
    return (case.get("strategy"), case.get("threads"))


BASELINES = ("single", "nonblocking")


def pattern(by_impl: dict[str, dict]) -> str:
    """Fastest variant against the baseline (single / nonblocking) of the reference implementation."""
    t = by_case(by_impl, "time_us", pattern_key)
    if not t:
        return "no time was measured."
    ref = reference(t)
    named = {(f"{k[0]}" + (f" ({lb})" if len(t) > 1 else ""), k[1]): s for lb, rows in t.items()
             for k, s in rows.items()}
    fast = min(named, key=lambda n: named[n]["median"])
    base_key = next((k for k in t[ref] if k[0] in BASELINES), None) or max(t[ref], key=lambda k: t[ref][k]["median"])
    base_name = (base_key[0] + (f" ({ref})" if len(t) > 1 else ""), base_key[1])
    fs, bs = named[fast], named[base_name]
    thr = f" with {fast[1]} threads" if fast[1] else ""
    if fast == base_name:
        second = sorted(named, key=lambda n: named[n]["median"])[1:2]
        other = (f"; next {second[0][0]} {fmt_num(named[second[0]]['median'], 0)} us ("
                 f"{ci_words(fs, named[second[0]])})") if second else ""
        return f"{fast[0]} is fastest{thr}: {fmt_num(fs['median'], 0)} us per iteration{other}."
    return (f"{fast[0]}{thr}: {fmt_num(fs['median'], 0)} us per iteration, {fmt_num(bs['median'] / fs['median'])}x "
            f"as fast as {base_name[0]} ({fmt_num(bs['median'], 0)} us); {ci_words(fs, bs)}.")


# --- the headline --------------------------------------------------------------------------------

def median_over_cases(by_impl: dict[str, dict], metric: str, keep=lambda case: True) -> dict[str, float]:
    """label -> median over the cases (sizes, partition counts) of the per-case medians."""
    out = {}
    for label, res in by_impl.items():
        vals = [summary_of(c, metric)["median"] for c in res.get("results", [])
                if summary_of(c, metric) is not None and keep(c.get("case", {}))]
        if vals:
            out[label] = statistics.median(vals)
    return out
