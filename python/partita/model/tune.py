"""`partita tune`: the measured search for the best transport partition count,
the partita.tuning/1 table libpartita's `table` policy reads, and how far the
model's choice is from the measured best."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..launch import BuildInfo
from .experiments import Pattern, impl_for, quantile, run_cases
from .native import TUNING_SCHEMA, Params
from .tables import pow2_counts

# A candidate is stopped after the screening run when it is clearly worse than
# the best so far: its median exceeds the best median by this fraction and its
# fast tail (p05) is slower than the best's slow tail (p95).
CLEARLY_WORSE = 0.10


@dataclass
class Candidate:
    transport: int
    median_us: float
    p05_us: float
    p95_us: float
    iterations: int
    stopped_early: bool = False


@dataclass
class Entry:
    bytes: int
    partitions: int
    candidates: dict[int, Candidate] = field(default_factory=dict)
    model_transport: int = 0

    @property
    def best(self) -> Candidate:
        """The fastest candidate by its latest measurement (a stopped candidate keeps
        its screening time: it can still win if the confirmation of the others is slower)."""
        return min(self.candidates.values(), key=lambda c: c.median_us)

    @property
    def model_gap(self) -> float:
        """(time of the model's choice - best time) / best time."""
        c = self.candidates.get(self.model_transport)
        return (c.median_us - self.best.median_us) / self.best.median_us if c else float("nan")


def default_table_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "partita" / "tuning.json"


def _summaries(metrics: dict, q: float) -> tuple[float, float, float]:
    """(the q-quantile, p05, p95) of t_part."""
    s = metrics["t_part_us"]["summary"]
    return quantile(metrics, "t_part_us", q), float(s["p05"]), float(s["p95"])


def tune(build: BuildInfo, params: Params, sizes: tuple[int, int], partitions: list[int], pattern: Pattern,
         iterations: int, screen_iterations: int, warmup: int, progress=None, q: float = 0.5) -> list[Entry]:
    """q: the quantile of the iterations that ranks the candidates (0.5: median)."""
    entries: dict[tuple[int, int], Entry] = {}
    for P in partitions:
        counts = pow2_counts(P)
        ready = pattern.ready(P)
        # Screening: every candidate, few iterations, all sizes in one run.
        for t in counts:
            if progress:
                progress(f"screen {P} partitions, {t} transport ({screen_iterations} iterations)")
            for m, metrics in run_cases(build, impl_for(t, P), pattern, P, sizes[0], sizes[1], screen_iterations,
                                        warmup).items():
                e = entries.setdefault((m, P), Entry(m, P))
                med, p05, p95 = _summaries(metrics, q)
                e.candidates[t] = Candidate(t, med, p05, p95, screen_iterations)
        for (m, p), e in entries.items():
            if p != P:
                continue
            e.model_transport = params.optimal_transport_ready(m, P, ready, pow2_only=True)[0]
            b = min(e.candidates.values(), key=lambda c: c.median_us)
            for c in e.candidates.values():
                c.stopped_early = c is not b and c.median_us > b.median_us * (1 + CLEARLY_WORSE) and c.p05_us > b.p95_us
        # Confirmation: the survivors, full iterations, over the sizes where they survived.
        if iterations <= screen_iterations:
            continue
        for t in counts:
            alive = sorted(m for (m, p), e in entries.items() if p == P and t in e.candidates
                           and not e.candidates[t].stopped_early)
            if not alive:
                continue
            if progress:
                progress(f"confirm {P} partitions, {t} transport on {len(alive)} size(s) ({iterations} iterations)")
            for m, metrics in run_cases(build, impl_for(t, P), pattern, P, alive[0], alive[-1], iterations,
                                        warmup).items():
                if m in alive:
                    med, p05, p95 = _summaries(metrics, q)
                    entries[(m, P)].candidates[t] = Candidate(t, med, p05, p95, iterations)
    return [entries[k] for k in sorted(entries, key=lambda k: (k[1], k[0]))]


def table_document(entries: list[Entry], pattern: Pattern, params: Params, elapsed_s: float, q: float = 0.5) -> dict:
    return {
        "schema": TUNING_SCHEMA,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "pattern": {"name": pattern.name, "delay_us": pattern.delay_us},
        "metric": f"{q:g}-quantile of t_part_us (first MPI_Pready to last arrival), partita-p2p with libpartita "
                  "fixed groupings",
        "model_parameters": params.source,
        "search_seconds": round(elapsed_s, 1),
        "entries": [
            {
                "bytes": e.bytes,
                "user_partitions": e.partitions,
                "transport_partitions": e.best.transport,
                "time_us": e.best.median_us,
                "model_transport_partitions": e.model_transport,
                "model_gap": e.model_gap,
                "candidates": [
                    {"transport_partitions": c.transport, "median_us": c.median_us, "p05_us": c.p05_us,
                     "p95_us": c.p95_us, "iterations": c.iterations, "stopped_early": c.stopped_early}
                    for c in sorted(e.candidates.values(), key=lambda c: c.transport)
                ],
            }
            for e in entries
        ],
    }


def format_entries(entries: list[Entry]) -> list[str]:
    from .native import fmt_bytes
    lines = [f"{'bytes':>8} {'P':>3} {'best T':>6} {'best (us)':>10} {'model T':>7} {'model (us)':>10} "
             f"{'gap':>7}  candidates (us; x = stopped early)"]
    for e in entries:
        b = e.best
        mc = e.candidates.get(e.model_transport)
        cands = " ".join(f"{c.transport}:{c.median_us:.1f}{'x' if c.stopped_early else ''}"
                         for c in sorted(e.candidates.values(), key=lambda c: c.transport))
        lines.append(f"{fmt_bytes(e.bytes):>8} {e.partitions:>3} {b.transport:>6} {b.median_us:10.2f} "
                     f"{e.model_transport:>7} {(mc.median_us if mc else float('nan')):10.2f} "
                     f"{e.model_gap * 100:6.1f}%  {cands}")
    return lines
