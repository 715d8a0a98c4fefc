"""The PLogGP model for the configuration of the folder's partitioned runs: the table of best
transport partition counts per size and the modelled completion-time plot (network-native
study Table I and Fig. 3), drawn by partita.model.tables."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

from ...model import ModelError, Params, default_params_path, library
from ...model.tables import optimal_choices, plot, table1_ranges

TITLE = "PLogGP model: best transport partition counts"
SHORT = "model"
DEFAULT_DELAY_US = 100.0


@dataclass
class Subject:
    params: Params
    sizes: list[int]
    partitions: int
    delay_us: float
    run: str


def laggard_delay(noise: str) -> float | None:
    m = re.fullmatch(r"delay:([0-9.]+)(us)?", str(noise))
    return float(m.group(1)) if m else None


def machine_params(lib_dir: str | None, measured: list | None = None) -> Params:
    """The parameters measured by the folder's own partita-loggp run when it has one; else those
    libpartita plans with: the machine's measured file when there is one, else the built-in set."""
    try:
        lib = library(lib_dir)
    except ModelError:
        lib = library()          # the folder was written by another build: this one's
    if measured:
        return Params.load(measured[0], lib)
    path, _ = default_params_path(lib)
    if path is not None and path.exists():
        try:
            return Params.load(path, lib)
        except ModelError:
            pass
    return Params.default(lib)


def subjects(runs):
    p2p = [g for g in runs.of("p2p")]
    if not p2p:
        return []
    # the run with a laggard when there is one: the model's pattern is one late partition
    g = next((g for g in p2p if laggard_delay(g.config.get("noise")) is not None), p2p[0])
    sizes = sorted({c["case"]["bytes"] for r in g.by_impl.values() for c in r.get("results", [])
                    if c.get("case", {}).get("bytes")})
    # measured cases only: a skipped one may have no partitions, or 0 (results.MEASURED_CASE_FIELDS)
    parts = [c["case"]["partitions"] for r in g.by_impl.values() for c in r.get("results", []) if "skipped" not in c]
    try:
        params = machine_params(runs.lib_dir, runs.params_files)
    except (ModelError, OSError) as e:
        runs.problems.append(f"model section left out: {e}")
        return []
    return [Subject(params, sizes, max(parts) if parts else 8,
                    laggard_delay(g.config.get("noise")) or DEFAULT_DELAY_US, g.name)]


def choices(s: Subject):
    return optimal_choices(s.params, s.sizes, s.partitions, "laggard", s.delay_us)


def finding(s: Subject) -> str:
    ranges = table1_ranges(choices(s))
    picks = ", ".join(f"{label}: {t} message{'s' if t != 1 else ''}" for label, t in ranges)
    return (f"with {s.partitions} user partitions and one {s.delay_us:g} us late, the model sends {picks} "
            f"(parameters: {s.params.source}).")


def caption(s: Subject) -> str:
    return (f"PLogGP model (no run): {s.partitions} user partitions, laggard {s.delay_us:g} us, the sizes of run "
            f"'{s.run}'; LogGP parameters: {s.params.source} (`partita loggp` measures this machine's, "
            f"`partita model` prints the same table).")


def table(s: Subject) -> list[list[str]]:
    return [["message size", "transport partitions"]] + [[label, str(t)] for label, t in table1_ranges(choices(s))]


def draw(s: Subject) -> bytes:
    buf = io.BytesIO()
    plot(s.params, s.sizes, s.partitions, "laggard", s.delay_us, buf)
    return buf.getvalue()
