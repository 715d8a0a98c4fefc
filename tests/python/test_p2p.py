"""partita-p2p end to end: JSON schema, the one-partition sanity, validation, reproducible noise."""

import math
import time
from pathlib import Path

import pytest

from partita.launch import LaunchError, run_benchmark, run_program
from partita.stats import summarize

SUMMARY_KEYS = {"n", "median", "p05", "p95", "mean", "stdev", "ci95_lo", "ci95_hi", "min", "max"}
METRICS = {"overhead", "perceived_bw", "availability", "early_bird", "t_part_us", "t_last_us",
           "t_pt2pt_us", "t_after_join_us", "t_before_join_us", "t_union_us", "early_arrival", "pready_ns"}


@pytest.fixture(scope="module")
def one_partition(build):
    return run_benchmark(build, "partita-p2p", ["-m", "1K:64K", "-p", "1", "--compute", "20",
                                                "--compute-mode", "sleep", "-i", "60", "-x", "5", "-c"],
                         timeout=240)


def test_json_schema(one_partition):
    r = one_partition
    assert r["schema"] == "partita.result/1"
    assert r["benchmark"] == "p2p"
    env = r["environment"]
    assert env["mpi_library"] and env["ranks"] == 2 and len(env["hosts"]) == 2
    assert env["thread_level_requested"].startswith("MPI_THREAD_")
    assert env["thread_level_provided"].startswith("MPI_THREAD_")
    cfg = r["config"]
    for key in ("iterations", "warmup", "threads", "compute_us", "noise", "compute_mode", "cache", "seed",
                "message_size", "partitions"):
        assert key in cfg, key
    assert cfg["seed"] == 1 and cfg["compute_mode"] == "sleep" and cfg["iterations"] == 60
    assert r["clock"]["shared"] is True
    sizes = [c["case"]["bytes"] for c in r["results"]]
    assert sizes == [1024, 2048, 4096, 8192, 16384, 32768, 65536]
    for c in r["results"]:
        assert c["validation"] == "pass"
        assert set(c["metrics"]) == METRICS
        for name, m in c["metrics"].items():
            assert set(m["summary"]) == SUMMARY_KEYS, name
            assert m["unit"] and m["definition"]
            assert len(m["samples"]) == 60 == m["summary"]["n"], name
            s = m["summary"]
            assert s["min"] <= s["p05"] <= s["median"] <= s["p95"] <= s["max"], name
            assert s["ci95_lo"] <= s["median"] <= s["ci95_hi"], name


def test_python_summary_matches_the_harness(one_partition):
    """partita.stats (used to pool launches) computes what the harness writes."""
    for c in one_partition["results"]:
        for name, m in c["metrics"].items():
            mine = summarize(m["samples"])
            for key, value in m["summary"].items():
                if value is None or mine[key] is None:
                    assert value is None and mine[key] is None, (name, key)
                else:
                    assert mine[key] == pytest.approx(value, rel=1e-7, abs=1e-9), (name, key)  # JSON keeps ~10 digits


def test_one_partition_has_no_early_bird(one_partition):
    """With one partition nothing can be sent before the join."""
    for c in one_partition["results"]:
        eb = c["metrics"]["early_bird"]["summary"]["median"]
        assert abs(eb) <= 1.0, (c["case"], eb)


def test_one_partition_arrives_after_the_join(one_partition):
    for c in one_partition["results"]:
        assert c["metrics"]["early_arrival"]["summary"]["max"] == 0.0, c["case"]


def test_one_partition_availability_is_one_minus_overhead(one_partition):
    """With one partition the whole transfer comes after the join, so availability = max(0, 1 - overhead)."""
    for c in one_partition["results"]:
        ov = c["metrics"]["overhead"]["samples"]
        av = c["metrics"]["availability"]["samples"]
        for o, a in zip(ov, av):
            assert a == pytest.approx(max(0.0, 100.0 * (1.0 - o)), abs=1e-3)


def test_early_bird_with_laggard_threads(build):
    """Two threads, one 300 us late: the early partition waits before the join, and the metrics add up."""
    # Open MPI 5's own partitioned path hangs now and then when threads mark concurrently (it
    # hung in 1 of 2 full test runs here, not in 10 runs alone; like the thread hangs of
    # docs/patterns.md, "Known issues"): there it runs under libpartita
    impl = "partita:none" if build.mpi_flavor == "openmpi" and build.interposer.is_file() else "native"
    r = run_benchmark(build, "partita-p2p", ["-m", "64K:64K", "-p", "2", "-t", "2", "--compute", "50",
                                             "--noise", "delay:300", "--compute-mode", "sleep", "-i", "20", "-x", "2"],
                      impl=impl, timeout=240)
    c = r["results"][0]
    assert c["case"]["threads"] == 2
    m = {k: v["samples"] for k, v in c["metrics"].items()}
    for i in range(20):
        assert m["t_before_join_us"][i] + m["t_after_join_us"][i] == pytest.approx(m["t_union_us"][i], abs=1e-3)
        assert m["early_bird"][i] == pytest.approx(100 * m["t_before_join_us"][i] / m["t_union_us"][i], abs=1e-6)
        assert m["t_part_us"][i] >= m["t_last_us"][i] >= 0
        assert m["t_union_us"][i] <= m["t_part_us"][i] + 1e-3
    # Sleeping threads can wake late on a loaded machine, so the 300 us only shows reliably in the
    # best iterations: in at least one the first mark comes ~the delay before the last arrival, and
    # the early partition waits ~the delay before the join (MPICH's own path and libpartita's
    # `none` both move it only after the join; Open MPI's own path, not tested here, moved it at once).
    assert max(m["t_part_us"]) >= 250
    waited = max(m["t_before_join_us"]) >= 250
    if build.mpi_flavor == "openmpi":
        # Open MPI's shared-memory transport can finish the early partition's 32 KiB (a rendezvous)
        # while the sender sleeps, by the receiver's own copy, and in some launches does (2 of 3 in a
        # row here): then in the best iterations it is in at once, long before the laggard
        assert waited or min(m["t_before_join_us"]) < 150, m["t_before_join_us"]
    else:
        assert waited
    assert max(m["early_bird"]) > 0


SLOW_US = 3000


def medians_with_one_slow_call(build, partition: int, stamps: str) -> tuple[float, float]:
    """t_last and t_part (medians, us) of 1 KiB in 2 partitions marked by one thread whose MPI_Pready of
    `partition` sleeps SLOW_US before it marks (a stand-in preloaded in front of libpartita)."""
    shim = build.lib_dir / "libbench-slow-pready.so"
    if not shim.is_file() or not build.interposer.is_file():
        pytest.skip(f"{shim.name} or libpartita-mpi.so is not built in this build")
    env = {"LD_PRELOAD": f"{shim}:{build.interposer}", "PARTITA_TEST_SLOW_PARTITION": str(partition),
           "PARTITA_TEST_SLOW_US": str(SLOW_US)}
    r = run_benchmark(build, "partita-p2p", ["-m", "1K:1K", "-p", "2", "--compute", "20", "--compute-mode", "sleep",
                                             "--metric", "perceived-bw", "--ready-stamps", stamps, "-i", "20", "-x", "2"],
                      impl="partita:bulk", env=env, timeout=120)
    m = r["results"][0]["metrics"]
    return m["t_last_us"]["summary"]["median"], m["t_part_us"]["summary"]["median"]


@pytest.mark.parametrize("stamps", ["span", "each"])
def test_t_last_starts_at_the_last_call(build, stamps):
    """Both stamp modes time the last MPI_Pready from its own start. A last call that sleeps 3 ms before it
    marks: its partition arrives at least 3 ms after that start. A first call that sleeps: the last call
    starts after it, and t_last is the transfer alone. (With the span's second clock read after the last
    call, both cases read about half the sleep.)"""
    t_last, t_part = medians_with_one_slow_call(build, 1, stamps)
    assert t_last >= SLOW_US and t_part >= SLOW_US, (t_last, t_part)
    t_last, t_part = medians_with_one_slow_call(build, 0, stamps)
    assert t_part >= SLOW_US and t_last < SLOW_US / 3, (t_last, t_part)


def test_libpartita_plan_is_recorded(build):
    """Under libpartita each case carries the sender's Partita_Request_why (the layout, and under `adaptive`
    the candidates and the decision); under the MPI library's own partitioned calls there is none."""
    if not build.interposer.is_file():
        pytest.skip("libpartita-mpi.so is not built in this build")
    args = ["-m", "4K:8K", "-p", "4", "-i", "30", "-x", "2"]
    r = run_benchmark(build, "partita-p2p", args, impl="partita:adaptive", timeout=120)
    plans = [c["plan"] for c in r["results"]]
    assert len(plans) == 2 and all(p.startswith("adaptive, round ") and "layout #" in p for p in plans), plans
    assert all("transport mpi" in p for p in plans)
    if build.native_partitioned:
        native = run_benchmark(build, "partita-p2p", args, impl="native", timeout=120)
        assert all("plan" not in c for c in native["results"])


def test_seed_reproduces_noise_config(build):
    args = ["-m", "1K:1K", "-p", "2", "-t", "2", "--compute", "10", "--noise", "gaussian:30",
            "--compute-mode", "sleep", "-i", "5", "-x", "0", "--seed", "77"]
    r = run_benchmark(build, "partita-p2p", args, timeout=120)
    assert r["config"]["seed"] == 77 and r["config"]["noise"] == "gaussian:30%"


def test_bad_input_is_reported(build):
    o = run_program(build, "partita-p2p", ["-m", "64"], timeout=60)
    assert o.returncode != 0
    assert "sizes must be given as MIN:MAX" in o.stderr
    assert o.stderr.count("error:") == 1, "the error must be printed once (rank 0), not per rank"
    with pytest.raises(LaunchError):
        run_benchmark(build, "partita-p2p", ["-i", "0"], timeout=60)


def test_pingpong_clock_estimate_is_within_its_uncertainty(build):
    """On one node the true offset is 0; the ping-pong estimate must bracket it."""
    r = run_benchmark(build, "partita-p2p", ["-m", "1K:1K", "-p", "1", "-i", "10", "-x", "1", "--clock", "pingpong"],
                      timeout=120)
    clk = r["clock"]
    assert clk["shared"] is False
    assert clk["uncertainty_us"] > 0
    assert abs(clk["offset_us"]) <= clk["uncertainty_us"] + 1e-3
    assert r["config"]["clock"] == "pingpong"


def test_a_timed_out_launch_takes_its_ranks_with_it(build, tmp_path):
    """run_program's timeout kills the launch's whole process group. It used to kill the launcher
    only: a rank it had started (here a stand-in, `sleep`) kept running, spinning on a core."""
    pidfile = tmp_path / "rank.pid"
    launcher = tmp_path / "launcher.sh"
    launcher.write_text(f"#!/bin/bash\necho started >&2\nsleep 300 &\necho $! > {pidfile}\nwait\n")
    launcher.chmod(0o755)
    o = run_program(build, "partita-p2p", ["-m", "1K:1K"], timeout=2, launcher=str(launcher))
    assert o.returncode == -1 and "timed out after 2 s" in o.stderr
    assert o.stderr.startswith("started"), "what the launch printed before the timeout is kept"
    pid = int(pidfile.read_text())
    # SIGKILL is delivered at once, but on a loaded machine the rank may run (state R) a moment
    # longer before it is scheduled to die: read under a second after the kill, it failed now and then
    deadline = time.monotonic() + 5
    while (state := process_state(pid)) not in ("gone", "Z") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert state in ("gone", "Z"), f"the launch's rank (pid {pid}) is still running 5 s after the timeout"


def process_state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"
