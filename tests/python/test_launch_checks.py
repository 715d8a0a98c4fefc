"""The per-launch policy comparisons of the library suite (partita/launch_checks.py): timer against
model without a late partition, timer against none under a laggard, adaptive against the launch's
best policy; launch by launch and in the median, on made-up result folders."""

import io
import json
import subprocess
import sys
from pathlib import Path

from partita import launch_checks as lc
from partita.launch import unknown_policy
from partita.report import verdict, write_report
from partita.report.data import load_runs
from partita.report.headline import print_headline
from partita.report.tables import print_run_summary
from partita.results import load_run_dir

SIZES = (1024, 1 << 20)
PARTS = (1, 8)


def p2p_result(values: dict, noisy: bool, send_us: dict | None = None) -> dict:
    """A partita-p2p result: values {(bytes, partitions): median} of overhead (quiet) or perceived_bw
    (noisy); send_us {(bytes, partitions): the reference send's time}, 1 us when not given."""
    metric = "perceived_bw" if noisy else "overhead"
    cfg = {"iterations": 20, "threads": 2 if noisy else 1, "compute_us": 200 if noisy else 0,
           "noise": "delay:100" if noisy else "none", "compute_mode": "sleep", "metric": metric.replace("_", "-")}
    cases = []
    for (b, p), v in values.items():
        t = (send_us or {}).get((b, p), 1.0)
        cases.append({"case": {"bytes": b, "partitions": p, "threads": cfg["threads"]}, "validation": "skipped",
                      "metrics": {metric: {"unit": "x", "summary": {"n": 20, "median": v, "ci95_lo": v, "ci95_hi": v}},
                                  "t_pt2pt_us": {"unit": "us", "summary": {"n": 20, "median": t, "ci95_lo": t,
                                                                            "ci95_hi": t}}}})
    return {"schema": "partita.result/1", "benchmark": "p2p", "program": "partita-p2p",
            "environment": {"ranks": 2, "mpi_library": "test"}, "config": cfg, "results": cases}


def write_launches(folder: Path, name: str, launches: dict[str, list[dict | None]]) -> Path:
    """launches: implementation -> one result per launch (None: that launch failed), written in the
    interleaved order of a suite (launch 1 of every implementation, then launch 2, ...)."""
    folder.mkdir(parents=True, exist_ok=True)
    n = max(len(v) for v in launches.values())
    entries = []
    for k in range(1, n + 1):
        for impl, results in launches.items():
            base = f"{name}-{impl.replace(':', '_')}-{k}"
            e = {"name": name, "program": "partita-p2p", "impl": impl, "np": 2, "args": ["-i", "20"],
                 "launch": k, "launches": n, "log": f"{base}.log"}
            res = results[k - 1] if k <= len(results) else None
            if res is None:
                e |= {"status": "failed", "exit_code": 1, "result": None}
            else:
                (folder / f"{base}.json").write_text(json.dumps(res))
                e |= {"status": "ok", "result": f"{base}.json"}
            entries.append(e)
    manifest = folder / "manifest.json"
    old = json.loads(manifest.read_text())["runs"] if manifest.exists() else []
    manifest.write_text(json.dumps({"schema": "partita.run/1", "suite": "library", "runs": old + entries}))
    return folder


def flat(v: float) -> dict:
    return {(b, p): v for b in SIZES for p in PARTS}


def only_check(folder: Path, what: str) -> lc.CheckResult:
    (g,) = [g for g in load_runs([folder]).groups]
    (r,) = [r for r in lc.group_checks(g) if r.check.what == what]
    return r


def test_timer_against_model_launch_by_launch(tmp_path):
    # overhead (lower is better): model 1.0 in every launch; the timer as fast in every launch except
    # 1 MiB in 8 partitions: 1.5x model's time in launch 2 only (a mode flip), and 1 KiB in 8
    # partitions: 1.2x in every launch (a loss)
    timer = []
    for k in range(1, 6):
        v = flat(1.0)
        v[(1 << 20, 8)] = 1.5 if k == 2 else 1.0
        v[(1024, 8)] = 1.2
        timer.append(p2p_result(v, noisy=False))
    folder = write_launches(tmp_path / "r", "overhead", {
        "partita:model": [p2p_result(flat(1.0), noisy=False)] * 5, "partita:timer": timer})
    r = only_check(folder, "timer >= model")
    status = {c.key: r.status(c) for c in r.cases}
    assert status == {(1024, 1): "holds", (1024, 8): "LOSES", (1 << 20, 1): "holds", (1 << 20, 8): "median holds"}
    flip = next(c for c in r.cases if c.key == (1 << 20, 8))
    assert [k for k, x in flip.ratios if x < lc.MODEL_FLOOR] == [2]
    lines = lc.per_size_lines(r)
    assert lines[0].startswith("1KiB: holds in every launch at 1/2 partition counts") and "LOSES at P=8 (0.83)" in lines[0]
    assert lines[1].startswith("1MiB: holds in every launch at 1/2") and "some launches below at P=8 (1/5)" in lines[1]
    assert "LOSES in the median in 1" in lc.verdict(r) and "and in the median but not in every launch in 1" in lc.verdict(r)


def test_launches_pair_by_number_not_by_position(tmp_path):
    # the timer's launch 2 failed: its launch 3 must be compared with model's launch 3, not 2
    model = [p2p_result(flat(v), noisy=False) for v in (1.0, 2.0, 3.0, 4.0, 5.0, 6.0)]
    timer = [p2p_result(flat(v), noisy=False) if v != 2.0 else None for v in (1.0, 2.0, 3.0, 4.0, 5.0, 6.0)]
    folder = write_launches(tmp_path / "r", "overhead", {"partita:model": model, "partita:timer": timer})
    r = only_check(folder, "timer >= model")
    assert all(c.ratios == [(k, 1.0) for k in (1, 3, 4, 5, 6)] for c in r.cases)
    assert all(r.status(c) == "holds" for c in r.cases)


def test_separate_launches_are_not_judged_below_five(tmp_path):
    # one launch each, in separate processes: the timer "2.5x slower" at 1 MiB may be the MPI
    # library's slow mode in its launch alone, so nothing is judged, and the verdict says why
    timer = flat(1.0) | {(1 << 20, 8): 2.5}
    folder = write_launches(tmp_path / "r", "overhead", {
        "partita:model": [p2p_result(flat(1.0), False)], "partita:timer": [p2p_result(timer, False)]})
    r = only_check(folder, "timer >= model")
    assert all(r.status(c) == lc.NOT_JUDGED for c in r.cases) and r.failing() == []
    v = lc.verdict(r)
    assert "not judged: 1 launch of each implementation, in separate processes; at least 5 are needed" in v
    assert "LOSES" not in v and "holds" not in v
    assert lc.per_size_lines(r)[1] == ("1MiB: not judged (too few launches); timer/model 0.40-1.00 "
                                       "(2 ratios: one per case and launch)")
    # a single ratio is one number, not a range of one
    one = write_launches(tmp_path / "one", "overhead", {
        "partita:model": [p2p_result({(1 << 20, 8): 1.0}, False)],
        "partita:timer": [p2p_result({(1 << 20, 8): 2.5}, False)]})
    assert lc.per_size_lines(only_check(one, "timer >= model"))[-1] == (
        "1MiB: not judged (too few launches); timer/model 0.40 (1 ratio: one per case and launch)")
    # five launches of the same: judged, and lost
    folder = write_launches(tmp_path / "s", "overhead", {
        "partita:model": [p2p_result(flat(1.0), False)] * 5, "partita:timer": [p2p_result(timer, False)] * 5})
    r = only_check(folder, "timer >= model")
    assert [c.key for c in r.cases if r.status(c) == "LOSES"] == [(1 << 20, 8)]


def test_laggard_compares_bandwidth_relative_to_the_launchs_own_send(tmp_path):
    # the timer's launch 1 ran in a slow mode: its reference send took twice as long and its
    # perceived bandwidth is half none's; relative to its own send it is as good as none's
    none = [p2p_result(flat(1000.0), noisy=True)] * 5
    slow = p2p_result(flat(500.0), noisy=True, send_us={k: 2.0 for k in flat(0)})
    timer = [slow] + [p2p_result(flat(960.0), noisy=True)] * 4
    folder = write_launches(tmp_path / "r", "laggard", {"partita:none": none, "partita:timer": timer})
    r = only_check(folder, "timer >= 95% of none")
    assert all(c.ratios[0] == (1, 1.0) and r.status(c) == "holds" for c in r.cases)
    # 94% of none in every launch fails
    timer = [p2p_result(flat(940.0), noisy=True)] * 5
    folder = write_launches(tmp_path / "s", "laggard", {"partita:none": none, "partita:timer": timer})
    r = only_check(folder, "timer >= 95% of none")
    assert all(r.status(c) == "LOSES" for c in r.cases)


def test_adaptive_within_ten_percent_of_the_launchs_best(tmp_path):
    # launches 1 and 3: model is best (1.0), adaptive 1.05 (within 10%); launch 2: none is best at
    # 1 MiB (0.5), adaptive 1.0 (2x slower), elsewhere adaptive is the best
    def launch(adaptive, model, none):
        return p2p_result(flat(adaptive), False), p2p_result(flat(model), False), p2p_result(none, False)
    none2 = flat(2.0) | {(1 << 20, p): 0.5 for p in PARTS}
    l1, l2 = launch(1.05, 1.0, flat(2.0)), launch(1.0, 1.2, none2)
    order = [l1, l2, l1, l1, l1]
    folder = write_launches(tmp_path / "r", "overhead", {
        "partita:adaptive": [x[0] for x in order], "partita:model": [x[1] for x in order],
        "partita:none": [x[2] for x in order], "native": [p2p_result(flat(0.1), False)] * 5})   # native is no policy: never "the best"
    r = only_check(folder, "adaptive within 10% of the best")
    small = next(c for c in r.cases if c.key == (1024, 8))
    assert small.best_of == [(1, "partita:model"), (2, "partita:adaptive")] + [(k, "partita:model") for k in (3, 4, 5)]
    assert abs(small.ratios[0][1] - 1 / 1.05) < 1e-9 and small.ratios[1][1] == 1.0
    assert r.status(small) == "holds"
    big = next(c for c in r.cases if c.key == (1 << 20, 8))
    assert big.best_of[1] == (2, "partita:none") and r.status(big) == "median holds"
    rows = lc.table_rows(r)
    assert rows[0][-2:] == ["median [min-max]", "verdict"]
    assert any(row[:2] == ["1MiB", "8"] and row[3] == "0.50 (none)" for row in rows)


def test_no_check_without_both_sides(tmp_path):
    folder = write_launches(tmp_path / "r", "overhead", {"partita:timer": [p2p_result(flat(1.0), False)] * 2,
                                                         "partita:none": [p2p_result(flat(1.0), False)] * 2})
    (g,) = load_runs([folder]).groups
    assert lc.group_checks(g) == []     # no model: nothing to say about timer >= model


def test_the_verdict_and_the_long_tables_print_the_checks(tmp_path):
    folder = write_launches(tmp_path / "r", "overhead", {
        "partita:model": [p2p_result(flat(1.0), False)] * 5, "partita:timer": [p2p_result(flat(1.1), False)] * 5})
    write_launches(folder, "laggard", {"partita:none": [p2p_result(flat(100.0), True)] * 5,
                                       "partita:timer": [p2p_result(flat(99.0), True)] * 5})
    runs, h = verdict([folder])
    out = io.StringIO()
    print_headline(h, [folder], None, out, runs.problems)
    text = out.getvalue()
    assert "# timer >= model (run 'overhead')" in text and "LOSES in the median in 4" in text
    assert "  1MiB: holds in every launch at 0/2 partition counts" in text
    assert "- timer >= 95% of none (run 'laggard'): holds in every launch in 4 of 4 cases." in text
    out = io.StringIO()
    print_run_summary(folder, load_run_dir(folder), out)
    assert "launch 5" in out.getvalue() and "0.91 [0.91-0.91]" in out.getvalue()
    write_report([folder], tmp_path / "r.html")
    html = (tmp_path / "r.html").read_text()
    assert "timer &gt;= model (run &#x27;overhead&#x27;)" in html and "<td>LOSES</td>" in html


def test_a_policy_the_library_does_not_know_is_unavailable():
    env = {"PARTITA_POLICY": "adaptive"}
    err = "Abort(1)\npartita: PARTITA_POLICY='adaptive' is not one of none|bulk|static|model|timer|fixed|table\n"
    assert "no policy 'adaptive'" in unknown_policy("partita:adaptive", env, err)
    assert unknown_policy("partita:adaptive", env, "partita: MPI_Pready: partition 7 is outside") is None
    assert unknown_policy("native", {}, err) is None
    nofab = ("partita: MPI_Psend_init: transport 'fabric' asked for, but this libpartita was built without it "
             "(libfabric was not found when it was configured)\n")
    env = {"PARTITA_POLICY": "timer", "PARTITA_TRANSPORT": "fabric"}
    assert "no fabric transport" in unknown_policy("partita:timer@fabric", env, nofab)
    assert unknown_policy("partita:timer@fabric", env, "partita: MPI_Wait: fabric transport: fi_write failed") is None


def run_suite_file(build, tmp_path, name: str, toml: str, build_dir: Path | None = None) -> subprocess.CompletedProcess:
    """`partita run` of a suite written to tmp_path/NAME.toml, its results under tmp_path."""
    suite = tmp_path / f"{name}.toml"
    suite.write_text(toml)
    return subprocess.run([sys.executable, "-m", "partita.cli", "run", "--suite", str(suite), "--out", str(tmp_path),
                           "--build", str(build_dir or build.path)],
                          capture_output=True, text=True, timeout=300)


UNKNOWN_POLICY_SUITE = ('repeat = 2\n[[run]]\nname = "p2p"\nprogram = "partita-p2p"\n'
                        'args = ["-m", "4K:4K", "--partitions", "4", "-i", "3", "-x", "1"]\n'
                        'impl = ["partita:model", "partita:tmier"]\ntimeout = 120\n')


def test_suite_with_a_policy_the_build_lacks_is_refused_before_any_launch(build, tmp_path):
    assert build.policies and "timer" in build.policies and "tmier" not in build.policies
    p = run_suite_file(build, tmp_path, "tiny", UNKNOWN_POLICY_SUITE)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "no policy 'tmier'" in p.stderr and "did you mean partita:timer?" in p.stderr
    assert not list(tmp_path.glob("*-tiny")), "nothing is launched, no results folder"
    q = subprocess.run([sys.executable, "-m", "partita.cli", "run", "--impl", "partita:model,partita:bluk",
                        "--out", str(tmp_path), "--build", str(build.path)], capture_output=True, text=True, timeout=60)
    assert q.returncode == 2 and "did you mean partita:bulk?" in q.stderr, q.stderr


def test_build_without_a_policy_list_reports_an_unknown_policy_as_unavailable(build, tmp_path):
    """A build description from before the list (or another tool's): the policy is found unknown by the
    first launch, which libpartita refuses in MPI_Init, and not launched again."""
    raw = {k: v for k, v in build.raw.items() if k != "policies"}
    old = tmp_path / "old-build"
    old.mkdir()
    (old / "partita-build.json").write_text(json.dumps(raw))
    p = run_suite_file(build, tmp_path, "tiny", UNKNOWN_POLICY_SUITE, build_dir=old)
    assert p.returncode == 0, p.stdout + p.stderr
    runs = json.loads(next(tmp_path.glob("*-tiny/manifest.json")).read_text())["runs"]
    assert [(r["impl"], r["status"]) for r in runs] == [
        ("partita:model", "ok"), ("partita:tmier", "unavailable"),
        ("partita:model", "ok"), ("partita:tmier", "unavailable")]
    assert "no policy 'tmier'" in runs[1]["reason"]
    # the library's own list (C) is the build description's (CMake hands both the same names)
    assert "is not one of " + "|".join(build.policies) in runs[1]["reason"]
    assert "exit_code" not in runs[3]        # known after the first launch: not launched again
    assert "# no result: p2p (partita:tmier, launch 1): unavailable: this build's libpartita" in p.stdout


# --- side-by-side results (partita-adapt-bench): every implementation in one launch ----------------

def side_by_side_result(times: dict[str, dict], laggard_us: float = 0) -> dict:
    """One launch of partita-adapt-bench: times {impl: {(bytes, partitions): median us}}; the metric is
    t_part_us without a laggard, t_last_us with one (the other metric is 1000x slower: never read)."""
    read, other = ("t_last_us", "t_part_us") if laggard_us else ("t_part_us", "t_last_us")
    cases = []
    for impl, values in times.items():
        for (b, p), v in values.items():
            cases.append({"case": {"bytes": b, "partitions": p, "impl": impl},
                          "metrics": {read: {"unit": "us", "summary": {"n": 20, "median": v}, "samples": [v]},
                                      other: {"unit": "us", "summary": {"n": 20, "median": v * 1000},
                                              "samples": [v * 1000]}}})
    return {"schema": "partita.result/1", "benchmark": "side-by-side", "program": "partita-adapt-bench",
            "environment": {"ranks": 2}, "results": cases,
            "config": {"iterations": 20, "noise": f"delay:{laggard_us:g}" if laggard_us else "none",
                       "laggard_us": laggard_us}}


def test_side_by_side_compares_inside_each_launch(tmp_path):
    # launch 2 runs in a slow mode (every implementation 3x slower): a comparison across launches
    # would see the timer of launch 2 lose to model of launch 1, inside a launch it is as fast;
    # 1 KiB in 8 partitions: the timer takes 1.25x model's time in every launch (a loss)
    def launch(scale):
        model = {k: 10.0 * scale for k in flat(0)}
        timer = dict(model) | {(1024, 8): 12.5 * scale}
        return side_by_side_result({"model": model, "timer": timer, "native": flat(1.0), "single": flat(1.0)})
    folder = write_launches(tmp_path / "r", "policies", {"native": [launch(1), launch(3), launch(1)]})
    r = only_check(folder, "timer >= model")
    assert r.check.metric == "t_part_us" and "in one launch" in lc.title(r)
    by = {c.key: c for c in r.cases}
    assert r.status(by[(1 << 20, 8)]) == "holds" and by[(1 << 20, 8)].ratios == [(1, 1.0), (2, 1.0), (3, 1.0)]
    assert r.status(by[(1024, 8)]) == "LOSES" and abs(by[(1024, 8)].median - 0.8) < 1e-9


def test_side_by_side_laggard_reads_t_last_and_the_best_layout_includes_fixed(tmp_path):
    none = flat(100.0)
    timer = flat(99.0) | {(1 << 20, 8): 200.0}          # half of none's speed at 1 MiB in 8
    adaptive = flat(105.0)
    fixed = flat(100.0) | {(1024, 1): 50.0}             # the launch's best at 1 KiB in 1: adaptive 2.1x slower
    res = side_by_side_result({"none": none, "timer": timer, "adaptive": adaptive, "fixed:4": fixed}, laggard_us=100)
    folder = write_launches(tmp_path / "r", "laggard", {"native": [res] * 5})
    r = only_check(folder, "timer >= 95% of none")
    assert r.check.metric == "t_last_us"
    assert [c.key for c in r.cases if r.status(c) == "LOSES"] == [(1 << 20, 8)]
    a = only_check(folder, "adaptive within 10% of the best")
    worst = next(c for c in a.cases if c.key == (1024, 1))
    assert worst.best_of[0] == (1, "partita:fixed:4") and abs(worst.median - 50 / 105) < 1e-9
    assert a.status(worst) == "LOSES"
    assert sum(a.status(c) == "LOSES" for c in a.cases) == 1


def test_side_by_side_laggard_also_judges_adaptive_by_t_late(tmp_path):
    # under a laggard the timer wins t_last (its split sends the late partitions as they are
    # marked) but pays for it in the late marks: by t_late (the first mark after the pause to the
    # last arrival) model is the best and adaptive, at model's time, holds; without t_late in the
    # results (older ones) that check is not made
    def laggard_launch(with_late):
        cases = []
        for impl, last, late in (("timer", 2.0, 12.0), ("model", 4.0, 4.0), ("adaptive", 4.2, 4.2)):
            for (b, p) in flat(0):
                metrics = {"t_last_us": {"unit": "us", "summary": {"n": 20, "median": last}},
                           "t_part_us": {"unit": "us", "summary": {"n": 20, "median": 160.0 + late}}}
                if with_late:
                    metrics["t_late_us"] = {"unit": "us", "summary": {"n": 20, "median": late}}
                cases.append({"case": {"bytes": b, "partitions": p, "impl": impl}, "metrics": metrics})
        return {"schema": "partita.result/1", "benchmark": "side-by-side", "program": "partita-adapt-bench",
                "environment": {"ranks": 2}, "results": cases,
                "config": {"iterations": 20, "noise": "delay:100", "laggard_us": 100}}
    folder = write_launches(tmp_path / "r", "laggard", {"native": [laggard_launch(True)] * 5})
    by_last = only_check(folder, "adaptive within 10% of the best")
    assert by_last.check.metric == "t_last_us" and all(by_last.status(c) == "LOSES" for c in by_last.cases)
    by_late = only_check(folder, lc.ADAPTIVE_LATE)
    assert by_late.check.metric == "t_late_us"
    assert all(by_late.status(c) == "holds" and c.best_of[0] == (1, "partita:model") for c in by_late.cases)
    assert all(abs(c.median - 4.0 / 4.2) < 1e-9 for c in by_late.cases)
    older = write_launches(tmp_path / "o", "laggard", {"native": [laggard_launch(False)] * 5})
    (g,) = load_runs([older]).groups
    assert {r.check.what for r in lc.group_checks(g)} == {"adaptive within 10% of the best"}


def test_laggard_check_reads_t_resume_where_the_results_have_it(tmp_path):
    # the timer's threads held the marking thread's core: its pause was stretched and its late half
    # began after the early messages had moved on. By t_late it is the best (600 us against
    # adaptive's 900: adaptive loses); charged with the stretch (t_resume 1100) it is not, and
    # adaptive, the best by t_resume, holds
    def launch():
        cases = []
        for impl, late, resume in (("timer", 600.0, 1100.0), ("none", 950.0, 950.0), ("adaptive", 900.0, 900.0)):
            metrics = {name: {"unit": "us", "summary": {"n": 20, "median": v}}
                       for name, v in (("t_last_us", late), ("t_part_us", late + 180), ("t_late_us", late),
                                       ("t_resume_us", resume))}
            cases.append({"case": {"bytes": 8 << 20, "partitions": 8, "impl": impl}, "metrics": metrics})
        return {"schema": "partita.result/1", "benchmark": "side-by-side", "program": "partita-adapt-bench",
                "environment": {"ranks": 2}, "results": cases,
                "config": {"iterations": 20, "noise": "delay:100", "laggard_us": 100}}
    folder = write_launches(tmp_path / "r", "laggard", {"native": [launch()] * 5})
    by_late = only_check(folder, lc.ADAPTIVE_LATE)
    assert by_late.check.metric == "t_resume_us"
    (case,) = by_late.cases
    assert by_late.status(case) == "holds" and case.best_of[0] == (1, "partita:adaptive")
    # by t_last the timer's stretch still counts for it: adaptive at 600/900 of its speed loses
    by_last = only_check(folder, "adaptive within 10% of the best")
    (case,) = by_last.cases
    assert by_last.check.metric == "t_last_us" and by_last.status(case) == "LOSES"


def test_a_policy_twice_is_the_control_and_never_the_launchs_best(tmp_path):
    # model@mpi sends what model sends: its check against model (the timer's floor) counts the
    # cases that the floor's noise alone makes "lose". Here it is 0.9x model's speed at 1 KiB in 1
    # (a loss) and 2x at 1 MiB in 8, where adaptive (model's time) must still be judged against
    # model, not against the faster twin.
    model = flat(10.0)
    twin = flat(10.0) | {(1024, 1): 10.0 / 0.9, (1 << 20, 8): 5.0}
    res = side_by_side_result({"model": model, "model@mpi": twin, "timer": flat(10.0), "adaptive": flat(10.0)})
    folder = write_launches(tmp_path / "q", "policies", {"native": [res] * 5})
    control = only_check(folder, "control: model@mpi >= model (one policy twice)")
    assert control.check.floor == lc.MODEL_FLOOR and control.check.metric == "t_part_us"
    assert [c.key for c in control.cases if control.status(c) == "LOSES"] == [(1024, 1)]
    a = only_check(folder, "adaptive within 10% of the best")
    assert all(best != lc.MODEL_TWIN for c in a.cases for _, best in c.best_of)
    assert all(a.status(c) == "holds" for c in a.cases)
    none = flat(100.0)
    lag = side_by_side_result({"none": none, "none@mpi": none | {(1024, 8): 200.0}, "timer": none}, laggard_us=100)
    folder = write_launches(tmp_path / "l", "laggard", {"native": [lag] * 5})
    control = only_check(folder, "control: none@mpi >= 95% of none (one policy twice)")
    assert control.check.floor == lc.NONE_FLOOR and control.check.metric == "t_last_us"
    assert [c.key for c in control.cases if control.status(c) == "LOSES"] == [(1024, 8)]


def test_a_plans_layout_is_read_from_its_words():
    assert lc.layout_of("model: 9 pieces (cut), planned at init; transport mpi") == "9 pieces (cut)"
    assert lc.layout_of("bulk: 1 message, planned at init; transport mpi") == "1 message"
    assert lc.layout_of("fixed:4: 4 groups, planned at init; transport fabric") == "4 groups"
    assert lc.layout_of("adaptive, round 80: layout #2 (2 groups) of #0 1 message, #1 128 pieces (cut), "
                        "#2 2 groups; layout #2 measured best") == "2 groups"
    assert lc.layout_of("timer, round 80: layout #0 (9 pieces (cut)) of #0 9 pieces (cut), #1 16 pieces "
                        "(cut); the model's layout is a cut") == "9 pieces (cut)"
    # a timer that may split sends more than its layout; no plan, or other words: unknown
    assert lc.layout_of("timer: 1 message, planned at init; a group with no new mark for 5.0 us is split: "
                        "its ready partitions go") is None
    assert lc.layout_of(None) is None and lc.layout_of("none: set-up message not in yet") is None


def test_what_a_plan_says_was_sent():
    assert lc.chosen_layout("adaptive, round 80: layout #2 (9 pieces (cut)) of #0 1 message, #1 2 groups") == \
        "9 pieces (cut)"
    assert lc.chosen_layout("adaptive, round 100: layout #3 (1 message, split when its marking stalls) of #0 9 "
                            "pieces (cut)") == "1 message, split"
    assert lc.chosen_layout("none: 64 groups, planned at init; transport mpi") == "64 groups"
    assert lc.chosen_layout("adaptive, round 3: layout #0 (1 mess") is None  # cut short: unknown, not a guess
    assert lc.chosen_layout(None) is None and lc.chosen_layout("exploring 4 layouts") is None
    c = lc.CaseResult((1024, 8), [(k, 0.5) for k in range(1, 6)],
                      sent=[(1, "1 message"), (2, "1 message"), (3, "2 groups"), (4, "1 message, split"),
                            (5, "1 message")])
    assert lc.sent_words(c) == "; sent 1 message in 3 launches, 2 groups in 1, 1 other layout"
    assert lc.sent_words(lc.CaseResult((1024, 8), [(1, 0.5)])) == ""


def with_plans(result: dict, plans: dict[str, str]) -> dict:
    """The side-by-side result with each implementation's plan (the same for every case)."""
    for c in result["results"]:
        if c["case"]["impl"] in plans:
            c["plan"] = plans[c["case"]["impl"]]
    return result


def test_policies_that_sent_one_layout_count_once_at_their_median(tmp_path):
    # bulk, model and none all send one message (times 10, 11, 12 us): that layout's time in the
    # launch is their median, 11, not the luckiest copy's 10; adaptive at 11.5 is within 10% of it
    # (against 10 it would lose: 0.87). The timer's plan says it may split: it stands alone, and
    # at 1 MiB in 8 it is the best (5 us), so adaptive loses there.
    times = {"bulk": flat(10.0), "model": flat(11.0), "none": flat(12.0), "adaptive": flat(11.5),
             "timer": flat(20.0) | {(1 << 20, 8): 5.0}}
    plans = {"bulk": "bulk: 1 message, planned at init; transport mpi",
             "model": "model: 1 message, planned at init; transport mpi",
             "none": "none: 1 message, planned at init; transport mpi",
             "timer": "timer: 1 message, planned at init; a group with no new mark for 5.0 us is split: its "
                      "ready partitions go",
             "adaptive": "adaptive, round 80: layout #0 (1 message) of #0 1 message, #1 2 groups; layout #0"}
    res = with_plans(side_by_side_result(times), plans)
    folder = write_launches(tmp_path / "q", "policies", {"native": [res] * 5})
    a = only_check(folder, "adaptive within 10% of the best")
    by = {c.key: c for c in a.cases}
    small = by[(1024, 8)]
    assert small.best_of[0] == (1, "bulk/model/none") and abs(small.median - 11 / 11.5) < 1e-9
    assert a.status(small) == "holds"
    assert by[(1 << 20, 8)].best_of[0] == (1, "partita:timer") and a.status(by[(1 << 20, 8)]) == "LOSES"
    assert any("(bulk/model/none)" in cell for row in lc.table_rows(a) for cell in row)
    # where adaptive loses, the verdict says what it sent there, by its plan
    line = next(x for x in lc.per_size_lines(a) if x.startswith("1MiB"))
    assert "LOSES at P=8 (" in line and "; sent 1 message in every launch)" in line, line
    # without plans (older results) each policy stands alone: the fastest copy is the bar
    folder = write_launches(tmp_path / "old", "policies", {"native": [side_by_side_result(times)] * 5})
    old = {c.key: c for c in only_check(folder, "adaptive within 10% of the best").cases}
    assert old[(1024, 8)].best_of[0] == (1, "partita:bulk") and abs(old[(1024, 8)].median - 10 / 11.5) < 1e-9


def test_a_real_side_by_side_run_gives_its_checks(build, tmp_path):
    p = run_suite_file(build, tmp_path, "sbs",
                       '[[run]]\nname = "policies"\nprogram = "partita-adapt-bench"\n'
                       'args = ["-m", "4K:4K", "-p", "1,8", "-i", "5", "-x", "2", "-I", "single,model,timer,adaptive"]\n'
                       'impl = ["native"]\ntimeout = 120\n')
    assert p.returncode == 0, p.stdout + p.stderr
    (folder,) = tmp_path.glob("*-sbs")
    (g,) = load_runs([folder]).groups
    assert g.benchmark == "side-by-side"
    checks = {r.check.what: r for r in lc.group_checks(g)}
    assert set(checks) == {"timer >= model", "adaptive within 10% of the best"}
    assert [c.key for c in checks["timer >= model"].cases] == [(4096, 1), (4096, 8)]
    assert "timer >= model (run 'policies')" in p.stdout
