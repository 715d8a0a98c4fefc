"""Runs of the partitioned benchmark (partita-p2p) with libpartita at a fixed
transport count, for the model's validation and the tuning search."""

from __future__ import annotations

from dataclasses import dataclass

from ..launch import BuildInfo, run_benchmark
from ..stats import numbers, quantile_sorted

BENCH = "partita-p2p"


@dataclass(frozen=True)
class Pattern:
    """How the user partitions become ready in a run, and the same as model input.

    all:     one thread calls MPI_Pready on every partition back to back.
    laggard: `threads` threads (0: one per partition) own the partitions
             round-robin (thread t: t, t+T, ...), as partita-p2p maps them;
             thread 0 starts delay_us late, so its partitions are the late ones."""
    name: str          # "all" or "laggard"
    delay_us: float
    threads: int = 0

    @property
    def label(self) -> str:
        if self.name == "all":
            return "all-at-once"
        return f"laggard {self.delay_us:g}us" + (f" T{self.threads}" if self.threads else "")

    def thread_count(self, partitions: int) -> int:
        return min(self.threads, partitions) if self.threads else partitions

    def bench_args(self, partitions: int) -> list[str]:
        if self.name == "all":
            return ["--threads", "1", "--compute", "0"]
        threads = ["--threads", str(self.thread_count(partitions)), "--compute", "0", "--compute-mode", "sleep"]
        if self.delay_us == 0:  # no thread late: partita-p2p refuses delay:0, which adds nothing
            return threads
        return threads + ["--noise", f"delay:{self.delay_us:g}", "--noise-thread", "0"]

    def ready(self, partitions: int, spread_us: float | None = None) -> list[float]:
        """Ready times of the partitions. spread_us: the measured time from the first
        to the last MPI_Pready (t_part - t_last) instead of the nominal pattern: the
        all-at-once thread readies the partitions one after the other over it, and
        the late thread really starts that late (sleeping threads wake up late)."""
        if self.name == "all":
            w = spread_us or 0.0
            return [w * u / (partitions - 1) if partitions > 1 else 0.0 for u in range(partitions)]
        T = self.thread_count(partitions)
        late = self.delay_us if spread_us is None else spread_us
        return [late if u % T == 0 else 0.0 for u in range(partitions)]


def impl_for(transport: int, partitions: int) -> str:
    """libpartita with exactly `transport` messages per round."""
    if transport == partitions:
        return "partita:none"
    if transport == 1:
        return "partita:bulk"
    return f"partita:fixed{transport}"


def run_cases(build: BuildInfo, impl: str, pattern: Pattern, partitions: int, min_bytes: int, max_bytes: int,
              iterations: int, warmup: int, timeout: float = 900) -> dict[int, dict]:
    """One benchmark run over the sizes MIN..MAX for one partition count; per size
    the metric summaries (t_part_us, t_last_us, ...) and samples."""
    args = ["-m", f"{min_bytes}:{max_bytes}", "-p", str(partitions), "-i", str(iterations), "-x", str(warmup),
            "--metric", "overhead", *pattern.bench_args(partitions)]
    doc = run_benchmark(build, BENCH, args, np=2, impl=impl, timeout=timeout)
    out = {}
    for r in doc.get("results", []):
        case = r.get("case", {})
        if case.get("partitions") != partitions or "metrics" not in r:
            continue
        out[int(case["bytes"])] = r["metrics"]
    return out


def quantile(metrics: dict, name: str, q: float = 0.5) -> float:
    """The q-quantile of a metric's samples (type 7, as the harness); the
    harness's own median when q is 0.5 or the samples are absent."""
    m = metrics[name]
    samples = sorted(numbers(m.get("samples") or []))
    if q == 0.5 or not samples:
        return float(m["summary"]["median"])
    return quantile_sorted(samples, q)
