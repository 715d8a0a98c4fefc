"""partita project: Amdahl's law on the point-to-point share, and the measured pattern speedup."""

from __future__ import annotations

import json

import pytest
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
