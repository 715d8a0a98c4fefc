"""What `partita advise` reads: a trace folder, or partita-p2p results (one JSON file or a
`partita run` folder), turned into advice cases (advise.Case)."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

from ..model.experiments import Pattern
from ..results import ResultError, load_result, load_run_dir
from ..stats import number
from .advise import Case
from .analysis import RoundPattern, laggard_stats, min_delta_us, round_patterns, spread_others_us
from .reader import Request, Trace, TraceError, load_trace

MAX_SAMPLE_US = (1 << 63) / 1e3
LIBPARTITA_NOTE = "libpartita's default model policy (the trace does not record PARTITA_POLICY)"


def native_policy(mpi_library: str | None) -> tuple[str, str]:
    """How the MPI library's own partitioned path sends, as a candidate policy: MPICH
    (main, ch4 active messages) sends the whole buffer once every partition is ready;
    Open MPI's persist component one message per partition (our study of both,
    docs/trace-analysis.md)."""
    lib = mpi_library or ""
    if "Open MPI" in lib:
        return "none", "Open MPI's native path: one message per partition"
    if "MPICH" in lib or "Intel" in lib or "MVAPICH" in lib:
        return "bulk", "MPICH's native path: one message once every partition is ready"
    return "none", "the MPI library's native path, modelled as one message per partition"


class SourceError(ValueError):
    """The input of advise/project is neither a trace nor partita-p2p results."""


def case_from_rounds(label: str, total: int, partitions: int, rounds: list[RoundPattern],
                     current_policy: str, current_note: str) -> Case:
    c = Case(label, total, partitions, rounds, current_policy, current_note)
    lag = laggard_stats(rounds)
    if lag is not None:
        c.laggard_thread, c.laggard_share, c.laggard_delay_us = lag.thread, lag.share, lag.delay_us
        c.laggard_partitions, c.laggard_ids_vary = list(lag.partitions), lag.ids_vary
    c.spread_others_us = spread_others_us(rounds)
    c.min_delta_us = min_delta_us(rounds)
    c.min_delta_median_us = min_delta_us(rounds, statistics.median)
    return c


def _current(trace: Trace, rank: int) -> tuple[str, str]:
    r = next(x for x in trace.ranks if x.rank == rank)
    if r.preloaded_after and "libpartita" in r.preloaded_after:
        return "model", LIBPARTITA_NOTE
    return native_policy(r.mpi_library)


def cases_from_trace(trace: Trace, per_request: bool = False) -> list[Case]:
    """One case per send request (per_request), else per (size, partitions) with the
    rounds of every such send request pooled (a halo exchange's six neighbours, ...)."""
    groups: dict[tuple, list[tuple[Request, Request | None]]] = {}
    for s, r in trace.pairs():
        key = (s.rank, s.id) if per_request else (s.bytes, s.partitions)
        groups.setdefault(key, []).append((s, r))
    out = []
    for pairs in groups.values():
        s0 = pairs[0][0]
        rounds = [rp for s, r in pairs for rp in round_patterns(s, r)]
        if len(pairs) == 1:
            label = f"rank {s0.rank} -> rank {s0.peer}, tag {s0.tag} (request {s0.id})"
        else:
            ranks = sorted({s.rank for s, _ in pairs})
            label = f"{len(pairs)} send requests on rank{'s' if len(ranks) > 1 else ''} " + _ranges(ranks)
        policy, note = _current(trace, s0.rank)
        out.append(case_from_rounds(label, s0.bytes, s0.partitions, rounds, policy, note))
    return out


def _ranges(v: list[int]) -> str:
    parts, i = [], 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[j + 1] == v[j] + 1:
            j += 1
        parts.append(str(v[i]) if i == j else f"{v[i]}-{v[j]}")
        i = j + 1
    return ",".join(parts)


# -- partita-p2p results ----------------------------------------------------------------------

def _pattern(config: dict, threads: int, origin: str) -> Pattern:
    """The ready pattern partita-p2p's noise model makes: one late thread (delay:US,
    single) or all threads alike (none, uniform, gaussian)."""
    noise = str(config.get("noise") or "none")
    if noise.startswith("delay:"):
        # partita-p2p writes delay:%gus (delay:1e+06us for a second); adapt-bench delay:%g
        try:
            delay = float(noise[len("delay:"):].removesuffix("us"))
        except ValueError:
            delay = math.nan
        if not 0 <= delay < math.inf:
            raise SourceError(f"{origin}: config 'noise' is {noise!r}, expected delay:<microseconds >= 0>")
        return Pattern("laggard", delay, threads)
    if noise.startswith("single"):
        return Pattern("laggard", 0.0, threads)
    return Pattern("all", 0.0)


def _owners(config: dict, partitions: int, threads: int) -> list[int]:
    """The thread that marks each partition, as partita-p2p maps them (--mapping): round-robin
    (thread t: t, t+T, ...) or block (thread t: [t*P/T, (t+1)*P/T))."""
    if config.get("mapping") == "block":
        return [next(t for t in range(threads) if u < (t + 1) * partitions // threads) for u in range(partitions)]
    return [u % threads for u in range(partitions)]


def _late_thread(config: dict) -> int:
    """The thread single and delay noise slow down (--noise-thread); one drawn at random per
    iteration is not recorded, so thread 0 stands for it."""
    t = config.get("noise_thread", 0)
    return t if isinstance(t, int) and not isinstance(t, bool) and t >= 0 else 0


def _policy_of(impl: str | None, env_policy: str | None, mpi_library: str | None) -> tuple[str, str]:
    policy = (impl.split(":", 1)[1] if impl and impl.startswith("partita:") else None) or env_policy
    if not policy:
        return native_policy(mpi_library)
    return policy, f"libpartita's {policy} policy"


def cases_from_result(doc: dict, origin: str, impl: str | None = None) -> list[Case]:
    if doc.get("benchmark") != "p2p":
        return []
    config = doc.get("config", {})
    env = doc.get("environment", {})
    policy, note = _policy_of(impl, env.get("partita_policy"), env.get("mpi_library"))
    out = []
    for r in doc.get("results", []):
        case, metrics = r.get("case", {}), r.get("metrics") or {}
        if "t_part_us" not in metrics or "t_last_us" not in metrics:
            continue
        P, total, T = int(case["partitions"]), int(case["bytes"]), int(case.get("threads") or 1)
        pattern = _pattern(config, T, origin)
        owners, late = _owners(config, P, T), _late_thread(config)
        rounds, samples, unordered = [], list(zip(metrics["t_part_us"].get("samples") or [],
                                                  metrics["t_last_us"].get("samples") or [])), 0
        for tp, tl in samples:
            tp, tl = number(tp), number(tl)
            # null (the harness's missing sample), NaN, infinite, not a number; or beyond what a 64-bit
            # nanosecond clock holds, where the model's sums lose every digit or overflow
            if tp is None or tl is None or max(abs(tp), abs(tl)) > MAX_SAMPLE_US:
                continue
            if tl < 0 or tp < tl:
                # the last arrival before the last mark, or the first mark after the last: the ranks'
                # clocks disagree by more than the transfer (or the file was edited); no round to model
                unordered += 1
                continue
            if pattern.name == "laggard":
                ready = [tp - tl if t == late else 0.0 for t in owners]
                threads = owners
            else:
                ready, threads = pattern.ready(P, tp - tl), [0] * P
            rounds.append(RoundPattern(0.0, ready, threads, None, max(ready) + tl))
        label = f"{origin}: {T} thread{'s' if T != 1 else ''}, noise {config.get('noise')}"
        if unordered:
            label += (f" ({unordered} of {len(samples)} rounds left out: t_last < 0 or t_part < t_last, the ranks' "
                      "clocks disagree)")
        if unordered and not rounds:
            raise SourceError(f"{origin}: {P} partitions of {total} bytes: no usable round ({len(samples)} samples, "
                              f"{unordered} with t_last < 0 or t_part < t_last: the ranks' clocks disagree)")
        out.append(case_from_rounds(label, total, P, rounds, policy, note))
    return out


def load_cases(path: Path, per_request: bool = False) -> tuple[list[Case], str | None]:
    """A trace folder (rank-*.json), a `partita run` folder or one partita-p2p JSON file:
    the cases, and the MPI library they ran on (MPI_Get_library_version) if known."""
    path = Path(path)
    if path.is_dir() and any(path.glob("rank-*.json")):
        trace = load_trace(path)
        return cases_from_trace(trace, per_request), trace.ranks[0].mpi_library
    if per_request and path.exists():  # partita-p2p results have no requests to pool or keep apart
        raise SourceError(f"{path}: --per-request applies to a trace folder; partita-p2p results are advised "
                          "case by case")
    if path.is_dir() and (path / "manifest.json").is_file():
        manifest = load_run_dir(path)
        out, library = [], None
        for run in manifest.get("runs", []):
            if run.get("status") == "ok" and run.get("result") and run.get("program") == "partita-p2p":
                doc = load_result(path / run["result"])
                library = library or doc.get("environment", {}).get("mpi_library")
                out += cases_from_result(doc, run["result"], run.get("impl"))
        if not out:
            raise SourceError(f"{path}: no partita-p2p result with t_part/t_last samples in this results folder")
        return out, library
    if path.is_file():
        try:
            doc = load_result(path)
        except ResultError:
            if path.suffix == ".json" and "partita.trace" in path.read_text(errors="replace")[:200]:
                raise SourceError(f"{path}: a rank file of a trace; give its folder") from None
            raise
        out = cases_from_result(doc, path.name)
        if not out:
            raise SourceError(f"{path}: not partita-p2p results with t_part/t_last samples")
        return out, doc.get("environment", {}).get("mpi_library")
    if not path.exists():
        raise SourceError(f"{path}: no such trace or results folder")
    raise SourceError(f"{path}: neither a trace folder (rank-*.json) nor a results folder (manifest.json)")


INPUT_ERRORS = (SourceError, TraceError, ResultError, json.JSONDecodeError, OSError)
