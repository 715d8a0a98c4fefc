"""scripts/adapt-bench.py's summary (no MPI): the plans it keeps, and the control for "worse than bulk"."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "adapt-bench.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("adapt_bench_script", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


STDERR = """# 4096 bytes, 8 partitions, bulk: bulk: 1 message, planned at init; transport mpi
# 4096 bytes, 8 partitions, model: model: 1 message, planned at init; transport mpi
# 65536 bytes, 8 partitions, bulk: bulk: 1 message, planned at init; transport mpi
# 65536 bytes, 8 partitions, model: model: 9 pieces (cut), planned at init; transport mpi
# 65536 bytes, 8 partitions, adaptive: adaptive, round 100: layout #0 (1 message) of #0 1 message; transport mpi
partita-adapt-bench: something else on stderr
"""


def test_plan_lines_become_rows(script):
    rows = script.plan_rows(STDERR, 3)
    assert len(rows) == 5 and all(r["launch"] == 3 for r in rows)
    assert rows[3] == {"launch": 3, "bytes": 65536, "partitions": 8, "impl": "model",
                       "plan": "model: 9 pieces (cut), planned at init; transport mpi"}
    assert rows[4]["impl"] == "adaptive" and rows[4]["plan"].startswith("adaptive, round 100")


def timing(launch, size, impl, us):
    return {"launch": launch, "bytes": size, "partitions": 8, "impl": impl, "t_part_us": us}


def test_control_counts_only_cases_where_model_sends_what_bulk_sends(script, capsys):
    rows = []
    for launch in range(3):
        rows += script.plan_rows(STDERR, launch)
        # 4 KiB: model sends bulk's message and is 2% slower in every launch; adaptive 9.9, 11.9, 13.9 us.
        rows += [timing(launch, 4096, "bulk", 10.0), timing(launch, 4096, "model", 10.2),
                 timing(launch, 4096, "adaptive", 9.9 + 2 * launch), timing(launch, 4096, "native", 12.0)]
        # 64 KiB: model plans another layout, slower; not a control case.
        rows += [timing(launch, 65536, "bulk", 20.0), timing(launch, 65536, "model", 25.0),
                 timing(launch, 65536, "adaptive", 21.0), timing(launch, 65536, "native", 30.0)]
    assert script.summarise(rows) == 0
    out = capsys.readouterr().out
    assert ("control: in the 1 cases where model planned what bulk sends, model was worse than bulk in the "
            "median in 1/1; model/bulk in the same launch, medians over launches: 1.020-1.020 "
            "(two identical layouts); adaptive in 1/1") in out
    # bulk and model are as steady in every launch (spread 1.0); adaptive's launches spread 9.9-13.9 us
    assert ("control: in those 1 cases model's launch spread was wider than bulk's in 0/1 (two identical "
            "layouts); adaptive's in 1/1") in out


def test_control_needs_the_plans(script, capsys):
    rows = [timing(L, 4096, impl, 10.0) for L in range(2) for impl in ("bulk", "model", "adaptive")]
    script.summarise(rows)
    assert "control: no case where model planned what bulk sends" in capsys.readouterr().out


def test_transport_reads_policy_at_transport_as_the_policy(script, capsys):
    rows = []
    for launch in range(2):
        rows += [timing(launch, 4096, "bulk@fabric", 10.0), timing(launch, 4096, "adaptive@fabric", 12.0),
                 timing(launch, 4096, "bulk", 1.0), timing(launch, 4096, "adaptive", 1.0),
                 timing(launch, 4096, "native", 11.0)]
    assert script.summarise(script.over_transport(rows, "fabric")) == 0
    out = capsys.readouterr().out
    # the fabric's adaptive (12 us) against the fabric's bulk (10 us), native kept; the MPI rows left out
    assert "| 4096 | 8 | 12.0 [12.0-12.0] | 10.0 [10.0-10.0] | 11.0 [11.0-11.0] | 10.0 [10.0-10.0] | - |" in out
    assert "worse than native; worse than bulk" in out


def test_no_adaptive_results_is_an_error(script, capsys):
    rows = [timing(L, 4096, impl, 10.0) for L in range(2) for impl in ("bulk@fabric", "adaptive@fabric")]
    assert script.summarise(rows) == 2
    err = capsys.readouterr().err
    assert "no results of 'adaptive' to judge (implementations: adaptive@fabric, bulk@fabric)" in err
    assert "--transport T" in err


def test_plans_differing_in_one_launch_are_not_the_same(script):
    plans = {(4096, 8, "bulk"): {0: "bulk: 1 message", 1: "bulk: 1 message"},
             (4096, 8, "model"): {0: "model: 1 message", 1: "model: 2 groups"}}
    assert not script.same_plan(plans, (4096, 8), "model", "bulk")
    plans[(4096, 8, "model")][1] = "model: 1 message"
    assert script.same_plan(plans, (4096, 8), "model", "bulk")


def test_a_campaign_keeps_the_plans_and_prints_the_control(build, tmp_path):
    out = tmp_path / "campaign.jsonl"
    p = subprocess.run([sys.executable, str(SCRIPT), "-n", "2", "--build", str(build.path), "--out", str(out),
                        "--", "-m", "4K:4K", "-p", "8", "-I", "bulk,model,adaptive", "-i", "4", "-x", "20"],
                       capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    plans = {(r["launch"], r["impl"]): r["plan"] for r in rows if "plan" in r}
    assert set(plans) == {(L, i) for L in (0, 1) for i in ("bulk", "model", "adaptive")}
    assert plans[(0, "bulk")].startswith("bulk: 1 message")
    # the case is the control's when model sent bulk's one message in both launches (at 4 KiB in 8
    # partitions it does with MPICH's parameters; Open MPI's give it 2 groups)
    if all(plans[(L, "model")].startswith("model: 1 message") for L in (0, 1)):
        assert "control: in the 1 cases where model planned what bulk sends" in p.stdout
    else:
        assert "control: no case where model planned what bulk sends (their plans differ in every case)" in p.stdout


def test_a_build_that_is_not_there_is_one_line(tmp_path):
    p = subprocess.run([sys.executable, str(SCRIPT), "-n", "1", "--build", str(tmp_path / "nowhere"),
                        "--out", str(tmp_path / "x.jsonl")], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr.startswith("adapt-bench: no partita build found"), p.stderr


def test_a_launch_that_does_not_finish_is_one_line(build, tmp_path):
    # 4 MiB rounds, many of them, and a timeout far too short for them
    p = subprocess.run([sys.executable, str(SCRIPT), "-n", "1", "--build", str(build.path), "--timeout", "0.5",
                        "--out", str(tmp_path / "x.jsonl"), "--", "-m", "4M:4M", "-p", "8", "-i", "100000"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert "adapt-bench: launch 0 did not finish in 0.5 s (--timeout)" in p.stderr, p.stderr


@pytest.mark.parametrize("metric, code", [("t_resume", 0), ("t_late", 2)])
def test_metric_t_resume_is_read_and_a_missing_one_refused(tmp_path, metric, code):
    # a saved run under a laggard whose rows carry t_resume but (here) not t_late: --metric t_resume
    # summarises it, --metric t_late is refused with a line naming what is missing
    saved = tmp_path / "runs.jsonl"
    with saved.open("w") as f:
        for launch in range(2):
            for impl, us in (("bulk", 10.0), ("model", 10.0), ("adaptive", 10.5)):
                f.write(json.dumps({"launch": launch, "bytes": 4096, "partitions": 8, "impl": impl,
                                    "t_part_us": 200.0, "t_resume_us": us}) + "\n")
    r = subprocess.run([sys.executable, str(SCRIPT), "--from", str(saved), "--metric", metric],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == code, r.stdout + r.stderr
    if code:
        assert "the results hold no t_late_us" in r.stderr and r.stderr.count("error:") == 1
    else:
        assert f"metric: median {metric} (us) per launch" in r.stdout
