"""The verdict of a results folder: per implementation the median over sizes of overhead, the
perceived bandwidth under a laggard and the availability under noise, the best marked, then one
line per finding (the report's figures' sentences). Printed by `partita run` and `partita summary`
and shown at the top of the HTML report."""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .. import findings, launch_checks
from ..results import nothing_ran
from .data import RunSet, fmt_noise


@dataclass(frozen=True)
class Column:
    title: str
    metric: str
    higher_is_better: bool
    runs_word: str

    def selects(self, g) -> bool:
        if g.benchmark != "p2p" or self.metric not in g.metric_names():
            return False
        noise = str(g.config.get("noise", "none"))
        if self.metric == "overhead":
            return noise == "none"
        if self.metric == "perceived_bw":
            return noise.startswith(("delay", "single"))      # one late thread: a laggard
        return noise != "none"

    def keeps(self, case: dict) -> bool:
        # overhead of one partition is the library's per-message cost, not partitioning's
        return self.metric != "overhead" or (case.get("partitions") or 1) > 1


COLUMNS = [Column("overhead (x one send)", "overhead", False, "without noise, more than one partition"),
           Column("perceived bw under a laggard", "perceived_bw", True, "with one late thread"),
           Column("availability under noise", "availability", True, "with noise")]


def fmt_cell(metric: str, v: float) -> str:
    if metric == "perceived_bw":
        return findings.fmt_bw(v)
    if metric == "availability":
        return f"{v:.0f}%"
    return f"{v:.2f}x"


@dataclass
class Headline:
    header: list[str]
    rows: list[list[str]]
    notes: list[str]            # how each column was computed, and why a column is missing
    findings: list[str]         # "family (run): sentence", one per figure
    checks: list[launch_checks.CheckResult] = field(default_factory=list)   # per-launch policy comparisons

    @property
    def marked(self) -> bool:
        """Some cell carries the best mark (none with one implementation, or when all tie)."""
        return any(cell.endswith(" *") for row in self.rows for cell in row[1:])


BEST_MARK_NOTE = "* best (lowest overhead, highest bandwidth and availability)"


def headline(runs: RunSet, figures) -> Headline:
    labels: list[str] = []
    for g in runs.groups:
        labels += [lb for lb in g.by_impl if lb not in labels]
    cols, notes = [], []
    for col in COLUMNS:
        groups = [g for g in runs.groups if col.selects(g)]
        if not groups:
            continue
        vals: dict[str, list[float]] = {}
        for g in groups:
            for label, res in g.by_impl.items():
                for c in res.get("results", []):
                    s = findings.summary_of(c, col.metric)
                    if s is not None and col.keeps(c.get("case", {})):
                        vals.setdefault(label, []).append(s["median"])
        med = {lb: statistics.median(v) for lb, v in vals.items() if v}
        where = ", ".join(f"'{g.name}'" for g in groups)
        if all(findings.all_zero(g.by_impl, col.metric) for g in groups):
            notes.append(f"{col.title.split(' (')[0]} (runs {where}): " + findings.why_zero(groups[0].by_impl,
                                                                                             col.metric))
            continue
        if not med:
            continue
        best = (max if col.higher_is_better else min)(med.values())
        mark = len(set(med.values())) > 1          # no star when every implementation ties
        cols.append((col, {lb: fmt_cell(col.metric, v) + (" *" if mark and v == best else "")
                           for lb, v in med.items()}))
        settings = "; ".join(sorted({describe_settings(g) for g in groups}))
        notes.append(f"{col.title}: median over the sizes of run(s) {where} ({col.runs_word}; {settings})")
    if all(nothing_ran(m) for m in runs.manifests):
        notes.append("nothing ran: no launch gave a result (each failed or was unavailable)")
    rows = [[lb] + [cells.get(lb, "-") for _, cells in cols] for lb in labels
            if any(lb in cells for _, cells in cols)]
    found = [f"{f.short or f.title}" + (f" ({f.run})" if f.run else "") + f": {f.finding}" for f in figures]
    checks = [r for g in runs.groups for r in launch_checks.group_checks(g)]
    return Headline(["implementation"] + [c.title for c, _ in cols], rows, notes, found, checks)


def describe_settings(g) -> str:
    cfg = g.config
    bits = [f"{cfg.get('threads', 1)} thread(s)"]
    if cfg.get("compute_us"):
        bits.append(f"compute {cfg['compute_us']:g} us in {cfg.get('compute_mode', 'spin')} mode"
                    + (" (sleeping threads: more threads than cores still behave)"
                       if cfg.get("compute_mode") == "sleep" else ""))
    bits.append(fmt_noise(cfg))
    return ", ".join(bits)


def format_table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    out = []
    for r in [header] + rows:
        out.append("  ".join(x.ljust(w) if i == 0 else x.rjust(w) for i, (x, w) in enumerate(zip(r, widths))).rstrip())
    return out


def print_headline(h: Headline, folders: list[Path], report: Path | None, out=sys.stdout,
                   problems: list[str] | None = None) -> None:
    print("# verdict of " + ", ".join(str(f) for f in folders), file=out)
    if h.rows:
        for line in format_table(h.header, h.rows):
            print(line, file=out)
        if h.marked:
            print(f"  {BEST_MARK_NOTE}", file=out)
    for n in h.notes:
        print(f"  {n}", file=out)
    if h.findings:
        print("# findings", file=out)
        for f in h.findings:
            print(f"- {f}", file=out)
    for r in h.checks:
        print(f"# {launch_checks.title(r)}", file=out)
        print(f"- {launch_checks.verdict(r)}", file=out)
        for line in launch_checks.per_size_lines(r):
            print(f"  {line}", file=out)
    for p in problems or []:
        print(f"# no result: {p}", file=out)
    if report:
        print(f"# report: {report}", file=out)
    print(f"# every table: partita summary {' '.join(str(f) for f in folders)} --all", file=out)
