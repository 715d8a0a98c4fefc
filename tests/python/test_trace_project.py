"""partita project: Amdahl's law on the point-to-point share, and the measured pattern speedup."""

from __future__ import annotations

import json

import pytest
from model_helpers import run_cli
from trace_helpers import rank_doc, write_trace

from partita.results import ResultError
from partita.trace.project import amdahl, measured_speedup, project
from partita.trace.reader import load_trace


def test_amdahl():
    assert amdahl(0.5, 2.0) == pytest.approx(4 / 3)
    assert amdahl(0.0, 10.0) == 1.0
    assert amdahl(1.0, 3.0) == pytest.approx(3.0)
    assert amdahl(0.2, 0.5) == pytest.approx(1 / 1.2)  # slower communication: a slowdown
    with pytest.raises(ValueError):
        amdahl(1.5, 2.0)
    with pytest.raises(ValueError):
        amdahl(0.5, 0.0)


def test_project_per_rank_pooled_and_slowest(tmp_path):
    docs = [rank_doc(0, 2, [], finalize_ns=1_000_000,
                     mpi_time_ns={"p2p": 400_000, "collective": 100_000, "partitioned": 100_000}),
            rank_doc(1, 2, [], finalize_ns=2_000_000,
                     mpi_time_ns={"p2p": 200_000, "collective": 0, "partitioned": 0})]
    per, pooled, slowest = project(load_trace(write_trace(tmp_path / "t", docs)), 2.0)
    assert [p.share for p in per] == pytest.approx([0.5, 0.1])  # collectives are not ported
    assert per[0].projected == pytest.approx(1 / 0.75)
    assert pooled.share == pytest.approx(0.7 / 3.0)
    assert pooled.projected == pytest.approx(1 / ((1 - 0.7 / 3) + 0.35 / 3))
    # before: the slowest rank is rank 1 (2 ms); after: rank 1 1.9 ms, rank 0 0.75 ms
    assert slowest == pytest.approx(2.0 / 1.9)


def pattern_doc(bench, samples):
    return {"schema": "partita.result/1", "benchmark": bench, "results": [
        {"case": {"strategy": s}, "metrics": {"time_us": {"samples": t}, "compute_us": {"samples": c}}}
        for s, (t, c) in samples.items()]}


def test_measured_speedup_from_a_pattern_result(tmp_path):
    f = tmp_path / "halo.json"
    f.write_text(json.dumps(pattern_doc("halo3d", {
        "single": ([110, 120, 130], [10, 10, 10]),         # communication 100, 110, 120
        "partitioned": ([60, 70, 65], [10, 10, 10]),       # 50, 60, 55
        "multiple": ([50, 50, 50], [10, 10, 10])})))       # not a partitioned variant
    s, why = measured_speedup(f)
    assert s == pytest.approx(110 / 55) and "single" in why and "partitioned" in why


def test_measured_speedup_needs_both_variants(tmp_path):
    f = tmp_path / "p.json"
    f.write_text(json.dumps(pattern_doc("sweep3d", {"partitioned": ([1, 2], [0, 0])})))
    with pytest.raises(ResultError, match="unported variant"):
        measured_speedup(f)


def run_folder(tmp_path, runs):
    """A `partita run` folder: (run name, impl, benchmark, samples per strategy) per launch."""
    d = tmp_path / "run"
    d.mkdir()
    entries = []
    for k, (name, impl, bench, samples) in enumerate(runs):
        f = f"{name}-{impl}-{k}.json"
        (d / f).write_text(json.dumps(pattern_doc(bench, samples)))
        entries.append({"name": name, "program": f"partita-{bench}", "impl": impl, "status": "ok", "result": f})
    (d / "manifest.json").write_text(json.dumps({"schema": "partita.run/1", "suite": "t", "runs": entries}))
    return d


def test_measured_speedup_keeps_the_runs_of_one_benchmark_apart(tmp_path):
    # the patterns suite: two halo3d problems (halo3d, halo3d-all), stencil under two policies
    d = run_folder(tmp_path, [
        ("halo3d", "native", "halo3d", {"single": ([100], [0]), "partitioned": ([50], [0])}),
        ("halo3d", "native", "halo3d", {"single": ([120], [0]), "partitioned": ([60], [0])}),  # a 2nd launch
        ("halo3d-all", "native", "halo3d", {"single": ([900], [0]), "partitioned": ([10], [0])}),
        ("stencil-impl", "partita:none", "stencil", {"nonblocking": ([80], [0]), "partitioned": ([40], [0])}),
        ("stencil-impl", "partita:timer", "stencil", {"nonblocking": ([80], [0]), "partitioned": ([20], [0])}),
        ("persistent-only", "native", "stencil", {"persistent": ([70], [10]), "partitioned": ([40], [10])}),
    ])
    # the first run with both variants, its launches pooled (110 / 55); pooled with
    # halo3d-all's samples it would be 120 / 50
    s, why = measured_speedup(d)
    assert s == pytest.approx(2.0) and why.startswith("halo3d: ")
    assert measured_speedup(d, "halo3d-all")[0] == pytest.approx(90.0)
    s, why = measured_speedup(d, "stencil-impl")  # each policy a variant: the fastest is the timer's
    assert s == pytest.approx(80 / 20) and "partitioned (partita:timer)" in why
    s, why = measured_speedup(d, "persistent-only")  # no single/nonblocking: persistent is the baseline
    assert s == pytest.approx(60 / 30) and "persistent 60.0" in why
    with pytest.raises(ResultError, match="no run named 'sweep3d'.*halo3d, halo3d-all, stencil-impl"):
        measured_speedup(d, "sweep3d")


def test_measured_speedup_pairs_each_implementation_with_its_own_unported_variant(tmp_path):
    """native's launch: nonblocking 30 us, partitioned 50 us; libpartita's, on a busier machine: 170 and
    140. Pooled over both launches the baseline was 100 us, over native's partitioned 50 us: a 2.0x
    speedup that no launch showed (0.6x native, 1.21x libpartita's)."""
    d = run_folder(tmp_path, [
        ("stencil", "native", "stencil", {"nonblocking": ([30], [0]), "partitioned": ([50], [0])}),
        ("stencil", "partita:model", "stencil", {"nonblocking": ([170], [0]), "partitioned": ([140], [0])}),
        ("halo3d", "native", "halo3d", {"single": ([100], [0]), "partitioned": ([80], [0])}),
        ("halo3d", "partita:timer", "halo3d", {"partitioned": ([40], [0])})])  # no unported variant of its own
    s, why = measured_speedup(d, "stencil")
    assert s == pytest.approx(170 / 140)
    assert "nonblocking (partita:model) 170.0 µs / partitioned (partita:model) 140.0 µs" in why
    s, why = measured_speedup(d, "halo3d")  # the timer's launches against native's unported variant
    assert s == pytest.approx(100 / 40) and "single 100.0 µs / partitioned (partita:timer) 40.0 µs" in why


def test_project_cli_chooses_the_run(tmp_path, capsys):
    from partita.cli import main

    trace = write_trace(tmp_path / "t", [rank_doc(0, 1, [], finalize_ns=1_000_000,
                                                  mpi_time_ns={"p2p": 500_000, "collective": 0, "partitioned": 0})])
    d = run_folder(tmp_path, [
        ("halo3d", "native", "halo3d", {"single": ([100], [0]), "partitioned": ([50], [0])}),
        ("stencil", "native", "stencil", {"nonblocking": ([300], [0]), "partitioned": ([100], [0])})])
    assert main(["project", str(trace), "--results", str(d), "--run", "stencil"]) == 0
    out = capsys.readouterr().out
    assert "s = 3 (stencil: nonblocking" in out and "1.500x (pooled)" in out
    assert main(["project", str(trace), "--speedup", "2", "--run", "stencil"]) == 2
    assert "partita project: error: --run needs --results" in capsys.readouterr().err


def test_threads_waiting_at_once_cap_the_share(tmp_path):
    """Four threads of an MPI_THREAD_MULTIPLE rank each blocked 50 ms in MPI_Recv of a 50 ms run: the
    tracer's per-thread sum is 200 ms. project stopped with "no share of the run time" on a valid
    trace; the share is now taken as 100% and said to be an upper bound."""
    docs = [rank_doc(0, 2, [], finalize_ns=50_000_000, mpi_time_ns={"p2p": 30_000, "collective": 0, "partitioned": 0}),
            rank_doc(1, 2, [], finalize_ns=50_000_000,
                     mpi_time_ns={"p2p": 200_000_000, "collective": 0, "partitioned": 0})]
    t = write_trace(tmp_path / "t", docs)
    per, pooled, _ = project(load_trace(t), 2.0)
    assert per[1].share == 1.0 and per[1].summed_over_threads and per[1].projected == pytest.approx(2.0)
    assert pooled.share == pytest.approx((0.03 + 50) / 100)
    p = run_cli("project", str(t), "--speedup", "2", timeout=120)
    assert p.returncode == 0, p.stderr
    assert "100.0%" in p.stdout and "upper bound" in p.stdout
    shown = run_cli("trace", "show", str(t), timeout=120).stdout
    assert "400.0%" in shown and "several were inside at once" in shown


def test_a_single_threaded_rank_beyond_its_run_time_is_still_refused(tmp_path):
    doc = rank_doc(0, 1, [], finalize_ns=1_000_000, mpi_time_ns={"p2p": 2_000_000, "collective": 0, "partitioned": 0})
    doc["thread_level"] = "MPI_THREAD_SINGLE"
    with pytest.raises(ValueError, match="no share of the run time"):
        project(load_trace(write_trace(tmp_path / "t", [doc])), 2.0)
