"""partita-adapt-bench end to end: its result document, the timer and the laggard, bad input."""

import subprocess

import pytest

from partita.launch import launch_command, run_benchmark, run_program


def test_result_document_holds_every_implementation_of_the_launch(build):
    r = run_benchmark(build, "partita-adapt-bench",
                      ["-m", "4K:16K", "-f", "4", "-p", "1,8", "-i", "6", "-x", "2", "-l", "3",
                       "-I", "native,single,model,timer,timer:5"], timeout=120)
    assert r["schema"] == "partita.result/1" and r["benchmark"] == "side-by-side"
    assert r["config"]["noise"] == "none" and r["config"]["launch"] == 3 and r["config"]["iterations"] == 6
    keys = {(c["case"]["bytes"], c["case"]["partitions"], c["case"]["impl"]) for c in r["results"]}
    assert keys == {(b, p, i) for b in (4096, 16384) for p in (1, 8)
                    for i in ("native", "single", "model", "timer", "timer:5")}
    for c in r["results"]:
        for m in ("t_part_us", "t_last_us"):
            s = c["metrics"][m]
            assert len(s["samples"]) == 6 and s["summary"]["n"] == 6
            assert 0 < s["summary"]["min"] <= s["summary"]["median"] <= s["summary"]["max"]
        # one partition: the first mark is the last
        if c["case"]["partitions"] == 1:
            assert c["metrics"]["t_part_us"]["samples"] == c["metrics"]["t_last_us"]["samples"]
    plans = {c["case"]["impl"]: c.get("plan", "") for c in r["results"] if c["case"]["partitions"] == 8}
    # "timer: ..." planned at init, or "timer, round R: ..." when it measures a cut against one
    # message per partition (Open MPI's parameters make the model cut 16 KiB in 8 partitions)
    assert plans["timer"].startswith(("timer: ", "timer, round ")) and plans["native"] == ""


def test_laggard_marks_the_first_half_late(build):
    # 8 partitions of 16 KiB, the first half marked 2 ms after the second: the last mark comes at
    # least 2 ms after the first, so t_part exceeds t_last by that much in every round
    r = run_benchmark(build, "partita-adapt-bench",
                      ["-m", "128K:128K", "-p", "8", "-i", "4", "-x", "1", "-L", "2000", "-I", "none,model"],
                      timeout=120)
    assert r["config"]["noise"] == "delay:2000" and r["config"]["laggard_us"] == 2000
    for c in r["results"]:
        part, last = c["metrics"]["t_part_us"]["samples"], c["metrics"]["t_last_us"]["samples"]
        assert all(p - q >= 2000 for p, q in zip(part, last)), c["case"]
        # t_late starts at the first mark after the pause: 2 ms after the first mark, at or before the
        # last one (the samples are sorted per metric, so compare the sorted lists: each order holds
        # round by round, so it holds between the k-th smallest of each)
        late = c["metrics"]["t_late_us"]["samples"]
        assert len(late) == 4 and all(q <= t <= p - 2000 for p, q, t in zip(part, last, late)), c["case"]
        assert "laggard's pause" in c["metrics"]["t_late_us"]["definition"]
        # the pause as the marking thread lived it: at least the 2 ms sleep, and no longer than the
        # round from its first mark to its last; t_resume is t_late plus a stretch of it, never less
        pause, resume = c["metrics"]["t_pause_us"]["samples"], c["metrics"]["t_resume_us"]["samples"]
        assert len(pause) == 4 and 2000 <= min(pause) and max(pause) <= max(part) - min(last), c["case"]
        assert all(t <= x for t, x in zip(late, resume)), c["case"]


def test_scattered_laggard_marks_every_kth_partition_late(build, tmp_path):
    # -S 4: partitions 0 and 4 of 8 are the laggard's, marked 2 ms after the others. Seen in a
    # trace of the MPI library's own requests (`native`), whose MPI_Pready the tracer wraps; the
    # program links libpartita too, and the tracer asked libpartita about those native requests,
    # which aborted the run ("not a partitioned request")
    import json
    from model_helpers import run_cli

    cmd = launch_command(build, "partita-adapt-bench",
                         ["-m", "8K:8K", "-p", "8", "-I", "native,none", "-i", "3", "-x", "0", "-L", "2000",
                          "-S", "4"], 2, {})
    p = run_cli("trace", "--out", str(tmp_path / "t"), "--", *cmd, timeout=120)
    assert p.returncode == 0, p.stderr
    doc = json.loads((tmp_path / "t" / "rank-00000.json").read_text())
    sends = [r for r in doc["requests"] if r["kind"] == "send"]
    assert len(sends) == 1 and len(sends[0]["rounds"]) == 3  # native's; none's go through Partita_* calls
    for rnd in sends[0]["rounds"]:
        ready = rnd["ready_ns"]
        late, early = [ready[p] for p in (0, 4)], [ready[p] for p in range(8) if p % 4]
        assert min(late) - max(early) >= 2_000_000, ready
        assert early == sorted(early) and late == sorted(late), ready  # each set in order


def test_t_late_only_under_a_laggard(build):
    r = run_benchmark(build, "partita-adapt-bench", ["-m", "4K:4K", "-p", "8", "-i", "3", "-x", "1", "-I", "model"],
                      timeout=120)
    assert all(set(c["metrics"]) == {"t_part_us", "t_last_us"} for c in r["results"])


@pytest.mark.parametrize("args, message", [
    (["-L", "50", "-p", "1,8"], "-L needs at least 2 partitions"),
    (["-L", "-3"], "-L needs microseconds"),
    (["-S", "4"], "-S needs -L"),
    (["-L", "50", "-S", "1"], "-S: 1 is out of range [2, 65536]"),
    (["-L", "50", "-S", "4x"], "-S: '4x' is not a whole number"),
    (["-I", "model,nosuch"], "-I: 'nosuch' is not one of"),
    (["-I", "timer:abc"], "-I: 'timer:abc' is not one of"),
    (["--bogus"], "unknown option"),
    (["-m", "3K:4K"], "-m: message sizes must be powers of two"),
])
def test_bad_input_is_one_line_on_rank_0_and_exit_2(build, args, message):
    o = run_program(build, "partita-adapt-bench", args, timeout=60)
    assert o.returncode != 0 and o.result is None
    assert message in o.stderr
    assert o.stderr.count("error:") == 1, "the error must be printed once (rank 0), not per rank"


@pytest.mark.parametrize("args, message", [
    (["--format", "json", "--output", "{tmp}/no/such/r.json"], "cannot write --output"),
    (["--format", "xml"], "--format 'xml': must be json or lines"),
    (["--output", "{tmp}/r.json"], "--output needs --format json"),
])
def test_output_options_fail_before_measuring(build, tmp_path, args, message):
    cmd = launch_command(build, "partita-adapt-bench", [a.format(tmp=tmp_path) for a in args], 2, {})
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert p.returncode != 0 and message in p.stderr and p.stdout == ""
    assert not (tmp_path / "r.json").exists()


def test_help_lists_the_options(build):
    p = subprocess.run(launch_command(build, "partita-adapt-bench", ["--help"], 2, {}), capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0
    for opt in ("-m MIN:MAX", "-I IMPL", "-L US", "--format json --output FILE", "timer:US"):
        assert opt in p.stdout
