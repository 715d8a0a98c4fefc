"""The SNAP-style projection (`partita project`): Amdahl's law on the point-to-point share
of run time, as the micro-benchmark study projected SNAP from its mpiP profile (Fig. 13)."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from ..results import ResultError, is_params_file, load_result, load_run_dir
from ..stats import number
from .analysis import rank_shares
from .reader import Trace

# The pattern programs' unported variants, in order of preference: persistent
# point-to-point only where a run has neither (the patterns suite's stencil-impl).
BASELINES = ("single", "nonblocking", "persistent")


def amdahl(share: float, speedup: float) -> float:
    """Whole-run speedup when a part `share` (0..1) of the run becomes `speedup` times faster."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must be within 0..1, not {share}")
    if not 0 < speedup < math.inf:
        raise ValueError(f"the speedup must be a positive finite number, not {speedup}")
    time = (1.0 - share) + share / speedup   # the run's time after, as a fraction of before
    if not 0 < time < math.inf:              # a speedup so close to 0 that the time overflows
        raise ValueError(f"the speedup {speedup:g} is out of range: the projected run time is not a number")
    return 1.0 / time


# The tracer sums the time of every thread inside MPI (docs/trace.md), at most this many threads
# alive at once (its PTR_MAX_THREADS): a rank's summed time beyond this many run times is no trace's.
TRACER_MAX_THREADS = 1024


@dataclass
class Projection:
    rank: int | None      # None: the whole run
    wall_us: float
    p2p_us: float         # summed over the rank's threads: more than wall_us when several waited at once
    speedup: float        # the communication part's

    @property
    def summed_over_threads(self) -> bool:
        return self.p2p_us > self.wall_us

    @property
    def share(self) -> float:
        """The point-to-point share of run time; 1 (an upper bound) when the time summed over the
        rank's threads exceeds the run: how much of the run they overlapped is not in the trace."""
        return min(1.0, self.p2p_us / self.wall_us) if self.wall_us else 0.0

    @property
    def projected(self) -> float:
        return amdahl(self.share, self.speedup)


def project(trace: Trace, speedup: float) -> tuple[list[Projection], Projection, float]:
    """Per rank; the whole run with the times pooled over ranks (mpiP's aggregate, the
    seed's input); and the run as long as its slowest rank: the longest wall time before
    over the longest projected wall time after."""
    per = [Projection(s.rank, s.wall_us, s.p2p_us + s.partitioned_us, speedup) for s in rank_shares(trace)]
    for r, p in zip(trace.ranks, per):
        # several threads (MPI_THREAD_MULTIPLE) inside MPI at once sum to more than the run
        most = p.wall_us * (TRACER_MAX_THREADS if r.thread_level == "MPI_THREAD_MULTIPLE" else 1)
        if not 0 <= p.p2p_us <= most or p.wall_us <= 0:
            raise ValueError(f"{r.path}: {p.p2p_us:.6g} us in point-to-point calls of {p.wall_us:.6g} us from "
                             "MPI_Init to MPI_Finalize is no share of the run time")
    pooled = Projection(None, sum(p.wall_us for p in per), sum(p.share * p.wall_us for p in per), speedup)
    after = max(p.wall_us / p.projected for p in per)
    slowest = max(p.wall_us for p in per) / after if after > 0 else 1.0
    return per, pooled, slowest


def _variant(strategy: str, impl: str) -> str:
    return strategy if impl == "native" else f"{strategy} ({impl})"


def ported_speedups(by_impl: dict[str, dict[str, list[float]]]) -> list[tuple[float, str, float, str, float]]:
    """(speedup, unported variant, its median, partitioned variant, its median) of every partitioned
    variant, over the unported variant of the same implementation's launches: the program measured
    under the same conditions (another implementation's launches ran at another time; pooled with
    them, a slow launch moved the baseline). An implementation without an unported variant of its
    own is compared with native's."""
    medians = {impl: {v: statistics.median(x) for v, x in strategies.items() if x}
               for impl, strategies in by_impl.items()}
    out = []
    for impl, variants in medians.items():
        base_impl = impl if any(b in variants for b in BASELINES) else "native"
        base = next((b for b in BASELINES if b in medians.get(base_impl, {})), None)
        if base is None:
            continue
        before = medians[base_impl][base]
        for v, after in variants.items():
            if v.startswith("partitioned") and after > 0:
                out.append((before / after, _variant(base, base_impl), before, _variant(v, impl), after))
    return out


def measured_speedup(path: Path, run: str | None = None) -> tuple[float, str]:
    """The communication speedup a pattern benchmark measured: the median communication
    time per iteration (time_us - compute_us) of its unported variant (single, or
    nonblocking for the stencil; persistent when the run has neither) over that of a
    partitioned variant of the same implementation's launches (under libpartita, each policy
    is a variant of its own), the highest of these speedups (ported_speedups).
    path: one result JSON (named by its benchmark) or a `partita run` folder, whose runs
    are kept apart by name (the patterns suite runs halo3d and halo3d-all, stencil and
    stencil-early-unpack: different problems of the same program) and whose launches of
    one run are pooled. run: the run (or benchmark) to use; by default the first one, in
    the folder's order, that has both variants."""
    path = Path(path)
    if path.is_dir():
        manifest = load_run_dir(path)
        # a suite's partita-loggp run wrote LogGP parameters, not a result
        docs = [(r["name"], r["impl"], load_result(path / r["result"])) for r in manifest.get("runs", [])
                if r.get("status") == "ok" and r.get("result") and not is_params_file(path / r["result"])]
    else:
        doc = load_result(path)
        docs = [(doc.get("benchmark", "?"), "native", doc)]
    comm: dict[str, dict[str, dict[str, list[float]]]] = {}   # run -> implementation -> strategy -> samples
    for name, impl, d in docs:
        for r in d.get("results", []):
            m, case = r.get("metrics") or {}, r.get("case", {})
            strategy = case.get("strategy") or case.get("mode")
            if not strategy or "time_us" not in m:
                continue
            t = m["time_us"].get("samples") or []
            c = (m.get("compute_us") or {}).get("samples") or [0.0] * len(t)
            # a sample that is not a finite number (null, NaN, a string) is no measurement
            comm.setdefault(name, {}).setdefault(impl, {}).setdefault(str(strategy), []).extend(
                a - b for a, b in zip(map(number, t), map(number, c)) if a is not None and b is not None)
    if run is not None and run not in comm:
        raise ResultError(f"{path}: no run named {run!r} among its pattern benchmark runs "
                          f"({', '.join(comm) or 'none'})")
    for name in [run] if run is not None else list(comm):
        ported = ported_speedups(comm[name])
        if ported:
            s, base, before, part, after = max(ported)
            return s, (f"{name}: {base} {before:.1f} µs / {part} {after:.1f} µs communication per iteration "
                       "(medians)")
    which = f"run {run!r}" if run is not None else "pattern benchmark result"
    raise ResultError(f"{path}: no {which} with both an unported variant "
                      f"({' or '.join(BASELINES)}) and a partitioned one")
