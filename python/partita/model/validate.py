"""`partita model --validate`: predicted against measured completion times."""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass

from ..launch import BuildInfo
from .experiments import Pattern, impl_for, quantile, run_cases
from .native import Params, fmt_bytes


@dataclass
class Case:
    pattern: str
    partitions: int
    transport: int
    bytes: int
    nominal_us: float          # model, nominal ready times, first Pready to last arrival
    spread_us: float           # measured first to last Pready (t_part - t_last)
    predicted_us: float        # model with the measured spread as ready times
    measured_us: float         # t_part
    predicted_last_us: float   # last Pready to last arrival (the exposed communication)
    measured_last_us: float    # t_last

    @property
    def error(self) -> float:
        return (self.predicted_us - self.measured_us) / self.measured_us

    @property
    def error_last(self) -> float:
        return (self.predicted_last_us - self.measured_last_us) / self.measured_last_us


def transports(partitions: int) -> list[int]:
    """Policy none (one message per partition), bulk (one message) and one fixed grouping between."""
    mid = partitions // 2 if partitions >= 4 else None
    return sorted({1, partitions} | ({mid} if mid else set()))


def validate(build: BuildInfo, params: Params, sizes: tuple[int, int], partitions: list[int],
             delays: list[float], iterations: int, warmup: int, progress=None, threads: int = 0,
             q: float = 0.5) -> list[Case]:
    """q: the quantile of the measured samples compared (0.5: the median; a low
    one compares the least disturbed iterations on a busy machine)."""
    patterns = [Pattern("all", 0.0)] + [Pattern("laggard", d, threads) for d in delays]
    cases = []
    for pat in patterns:
        for P in partitions:
            for t in transports(P):
                impl = impl_for(t, P)
                if progress:
                    progress(f"{pat.label}, {P} partitions, {impl}")
                measured = run_cases(build, impl, pat, P, sizes[0], sizes[1], iterations, warmup)
                for m, metrics in sorted(measured.items()):
                    t_part, t_last = quantile(metrics, "t_part_us", q), quantile(metrics, "t_last_us", q)
                    spread = max(0.0, t_part - t_last)
                    ready = pat.ready(P, spread)
                    pred = params.grouped_us(m, P, t, ready)
                    cases.append(Case(pat.label, P, t, m, params.grouped_us(m, P, t, pat.ready(P)), spread, pred,
                                      t_part, pred - max(ready), t_last))
    return cases


def summary(cases: list[Case]) -> dict:
    errs = [abs(c.error) for c in cases]
    errs_nominal = [abs(c.nominal_us - c.measured_us) / c.measured_us for c in cases]
    errs_last = [abs(c.error_last) for c in cases]
    by_pattern = {}
    for c in cases:
        by_pattern.setdefault(c.pattern, []).append(abs(c.error))
    return {
        "cases": len(cases),
        "median_abs_error": statistics.median(errs) if errs else None,
        "median_abs_error_last": statistics.median(errs_last) if errs_last else None,
        "median_abs_error_nominal": statistics.median(errs_nominal) if errs_nominal else None,
        "median_abs_error_by_pattern": {k: statistics.median(v) for k, v in by_pattern.items()},
    }


def format_cases(cases: list[Case]) -> list[str]:
    lines = [f"{'pattern':<19} {'P':>3} {'T':>3} {'bytes':>8} {'nominal':>8} {'spread':>8} {'model':>8} "
             f"{'measured':>9} {'err':>7}   {'model*':>8} {'meas*':>8} {'err*':>7}"]
    for c in cases:
        lines.append(f"{c.pattern:<19} {c.partitions:>3} {c.transport:>3} {fmt_bytes(c.bytes):>8} "
                     f"{c.nominal_us:8.2f} {c.spread_us:8.2f} {c.predicted_us:8.2f} {c.measured_us:9.2f} "
                     f"{c.error * 100:6.1f}%   {c.predicted_last_us:8.2f} {c.measured_last_us:8.2f} "
                     f"{c.error_last * 100:6.1f}%")
    lines.append("times in us. measured: median t_part (first MPI_Pready to last arrival); spread: measured first to "
                 "last MPI_Pready (t_part - t_last);")
    lines.append("nominal: model with the requested ready pattern; model: with the measured spread as ready times; "
                 "*: last MPI_Pready to last arrival (t_last)")
    return lines


def as_json(cases: list[Case], params: Params, config: dict) -> dict:
    return {"schema": "partita.validation/1", "parameters": params.source, "config": config,
            "summary": summary(cases),
            "cases": [dict(asdict(c), error=c.error, error_last=c.error_last) for c in cases]}
