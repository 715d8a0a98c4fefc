"""Hostile input to the partita CLI: every case ends in a `partita CMD: error: ...` line that
names the file or value and a non-zero exit, never a traceback or a silent success."""

from __future__ import annotations

import json
import math
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from model_helpers import build_info, run_cli
from partita.compare import compare_folders
from partita.model import ModelError, Params, Segment, library


def assert_clean_error(p, command, rc, *words):
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode == rc, (p.returncode, p.stdout, p.stderr)
    line = next((l for l in p.stderr.splitlines() if l.startswith(f"partita {command}: error: ")), None)
    assert line is not None, p.stderr
    for w in words:
        assert w in line, (w, line)


def result_doc(median=2.0, lo=1.9, hi=2.1, benchmark="p2p", metric="overhead", case=None):
    return {"schema": "partita.result/1", "benchmark": benchmark, "config": {"iterations": 3},
            "results": [{"case": case or {"bytes": 1024, "partitions": 4},
                         "metrics": {metric: {"unit": "ratio",
                                              "summary": {"median": median, "ci95_lo": lo, "ci95_hi": hi}}}}]}


def results_folder(path, result_text, manifest=None):
    """A folder as `partita run` writes it, with one result file of the given text."""
    path.mkdir()
    (path / "p2p-native.json").write_text(result_text) if isinstance(result_text, str) else \
        (path / "p2p-native.json").write_bytes(result_text)
    if manifest is None:
        manifest = {"schema": "partita.run/1", "suite": "t",
                    "runs": [{"name": "p2p", "impl": "native", "status": "ok", "result": "p2p-native.json"}]}
    (path / "manifest.json").write_text(json.dumps(manifest))
    return path


# -- result folders that are not what they claim ---------------------------------------------

def test_result_with_null_results(tmp_path):
    bad = results_folder(tmp_path / "bad", json.dumps({**result_doc(), "results": None}))
    good = results_folder(tmp_path / "good", json.dumps(result_doc()))
    f = str(bad / "p2p-native.json")
    assert_clean_error(run_cli("summary", str(bad)), "summary", 1, f, "'results'")
    assert_clean_error(run_cli("compare", str(good), str(bad)), "compare", 2, f, "'results'")


def test_result_of_random_bytes(tmp_path):
    noise = bytes((i * 97 + 13) % 256 for i in range(4096))  # not UTF-8, not JSON
    bad = results_folder(tmp_path / "bad", noise)
    good = results_folder(tmp_path / "good", json.dumps(result_doc()))
    f = str(bad / "p2p-native.json")
    assert_clean_error(run_cli("summary", str(bad)), "summary", 1, f, "not a readable result")
    assert_clean_error(run_cli("compare", str(bad), str(good)), "compare", 2, f, "not a readable result")


def test_result_with_samples_that_are_not_a_list(tmp_path):
    doc = result_doc()
    doc["results"][0]["metrics"]["overhead"]["samples"] = 5
    folder = tmp_path / "f"
    results_folder(folder, json.dumps(doc), {
        "schema": "partita.run/1", "suite": "t",
        "runs": [{"name": "p2p", "impl": "native", "status": "ok", "result": "p2p-native.json", "launch": k,
                  "launches": 2} for k in (1, 2)]})  # two launches: the summary pools the samples
    assert_clean_error(run_cli("summary", str(folder)), "summary", 1, str(folder / "p2p-native.json"), "'samples'")


@pytest.mark.parametrize("manifest, why", [
    ([1, 2, 3], "a JSON list"),
    ({"schema": "partita.run/1", "runs": None}, "'runs'"),
    ({"schema": "partita.run/1", "runs": [{"name": "p2p"}]}, "runs[0]"),
])
def test_manifest_of_the_wrong_shape(tmp_path, manifest, why):
    folder = results_folder(tmp_path / "f", json.dumps(result_doc()), manifest)
    f = str(folder / "manifest.json")
    assert_clean_error(run_cli("summary", str(folder)), "summary", 2, f, why)
    assert_clean_error(run_cli("compare", str(folder), str(folder)), "compare", 2, f, why)


@pytest.mark.parametrize("b", [
    {"median": math.nan, "lo": math.nan, "hi": math.nan},
    {"median": None, "lo": None, "hi": None},
    {"median": 2.0, "lo": math.nan, "hi": 2.1},
    pytest.param({"median": 10**400, "lo": 1.9, "hi": 2.1}, id="10**400"),   # JSON integers have no limit
])
def test_compare_never_calls_a_missing_or_nan_median_same(tmp_path, b):
    a = results_folder(tmp_path / "a", json.dumps(result_doc()))
    bf = results_folder(tmp_path / "b", json.dumps(result_doc(b["median"], b["lo"], b["hi"])))
    rows = compare_folders(a, bf)
    assert len(rows) == 1 and rows[0]["verdict"] == "?"
    p = run_cli("compare", str(a), str(bf))
    assert p.returncode == 0 and "Traceback" not in p.stderr
    assert "same" not in p.stdout.splitlines()[-1] and p.stdout.splitlines()[-1].endswith("?")


# -- partita run --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def build_dir():
    return str(build_info().path)


def test_run_with_a_launcher_that_does_not_exist(tmp_path, build_dir):
    p = run_cli("run", "--build", build_dir, "--out", str(tmp_path), "--launcher", "no-such-launcher-xyz --flag")
    assert_clean_error(p, "run", 2, "no-such-launcher-xyz")
    assert not any(tmp_path.iterdir()), "nothing is written when the launcher is unusable"


def test_run_with_out_in_an_unwritable_place(tmp_path, build_dir):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")  # a folder cannot be made inside a file, even by root
    p = run_cli("run", "--build", build_dir, "--out", str(blocker / "results"))
    assert_clean_error(p, "run", 2, str(blocker / "results"))


@pytest.mark.parametrize("impl, why", [("bogus", "implementation"), ("partita:", "implementation"),
                                       ("native,partita", "implementation"), (",", "--impl has an empty entry"),
                                       ("native,,partita:none", "--impl has an empty entry (got 'native,,partita:none')"),
                                       # libpartita refuses these counts in MPI_Init: every launch failed
                                       ("partita:fixed0", "partita:fixed<N>"), ("partita:fixed-4", "partita:fixed<N>"),
                                       ("partita:fixed" + "9" * 5000, "partita:fixed<N>"),
                                       ("partita:fixed", "partita:fixed<N>"), ("partita:fixed@mpi", "partita:fixed<N>")])
def test_run_with_a_bad_implementation(tmp_path, build_dir, impl, why):
    p = run_cli("run", "--build", build_dir, "--out", str(tmp_path), "--impl", impl)
    assert_clean_error(p, "run", 2, why)
    assert not any(tmp_path.iterdir())


def test_run_in_which_nothing_ran_fails(tmp_path, build_dir):
    suite = tmp_path / "nothing.toml"
    suite.write_text('[[run]]\nname = "ghost"\nprogram = "partita-no-such-program"\n')
    p = run_cli("run", "--build", build_dir, "--out", str(tmp_path / "out"), "--suite", str(suite))
    assert_clean_error(p, "run", 1, "no benchmark ran")
    assert "partita-no-such-program" in p.stdout  # the unavailable run says why
    # and so does the error: a reader sees why without opening the manifest
    reasons = [l for l in p.stderr.splitlines() if l.startswith("  unavailable: ")]
    assert len(reasons) == 1 and "partita-no-such-program" in reasons[0], p.stderr


@pytest.fixture
def launches(monkeypatch):
    """partita run in-process, its suite run replaced: the np of every suite run is recorded and nothing is launched."""
    from partita.commands import run as run_command
    from partita.launch import LaunchError

    recorded = []

    def fake_run_suite(suite, build, out, np, *rest, **kw):
        recorded.append(np)
        raise LaunchError("stopped by the test before launching")

    monkeypatch.setattr(run_command, "run_suite", fake_run_suite)
    monkeypatch.delenv("PARTITA_LAUNCHER", raising=False)
    return recorded


def run_in_process(capsys, *args):
    from partita import cli

    rc = cli.main(["run", *args])
    out, err = capsys.readouterr()
    return rc, out, err


# The ranks of a run without --launcher all start on this machine: at most 16 per core it may use
# (docs/suites.md). Before that limit, --np 100000 went to mpiexec as it was.
LOCAL_RANK_LIMIT = 16 * len(os.sched_getaffinity(0))


def test_run_refuses_more_ranks_than_this_machine_can_start(tmp_path, build_dir, launches, capsys):
    rc, out, err = run_in_process(capsys, "--build", build_dir, "--out", str(tmp_path / "out"), "--np", "100000")
    assert rc == 2 and launches == [] and not (tmp_path / "out").exists(), (out, err)
    assert err.startswith(f"partita run: error: --np 100000: more ranks than this machine can start (at most "
                          f"{LOCAL_RANK_LIMIT}: 16 per core"), err
    assert len(err.splitlines()) == 1, err
    # the largest allowed count is launched
    rc, out, err = run_in_process(capsys, "--build", build_dir, "--out", str(tmp_path / "out"),
                                  "--np", str(LOCAL_RANK_LIMIT))
    assert launches == [LOCAL_RANK_LIMIT], (out, err)


def test_run_refuses_a_suite_run_with_more_ranks_than_this_machine_can_start(tmp_path, build_dir, launches, capsys):
    suite = tmp_path / "big.toml"
    suite.write_text('[[run]]\nname = "wide"\nprogram = "partita-halo3d"\nnp = 100000\n')
    rc, out, err = run_in_process(capsys, "--build", build_dir, "--out", str(tmp_path / "out"), "--suite", str(suite))
    assert rc == 2 and launches == [] and not (tmp_path / "out").exists(), (out, err)
    assert err.startswith(f"partita run: error: run 'wide' of suite {suite}: np = 100000: more ranks than this machine "
                          f"can start (at most {LOCAL_RANK_LIMIT}"), err
    # --np replaces the suite's count
    run_in_process(capsys, "--build", build_dir, "--out", str(tmp_path / "out"), "--suite", str(suite), "--np", "4")
    assert launches == [4]


def test_run_with_a_launcher_places_ranks_elsewhere(tmp_path, build_dir, launches, capsys):
    # the launcher (e.g. srun) decides where ranks go: only a count no MPI rank can carry is refused
    rc, out, err = run_in_process(capsys, "--build", build_dir, "--out", str(tmp_path / "out"), "--launcher", "env",
                                  "--np", "100000")
    assert launches == [100000], (out, err)
    rc, out, err = run_in_process(capsys, "--build", build_dir, "--out", str(tmp_path / "out2"), "--launcher", "env",
                                  "--np", str(2**31))
    assert rc == 2 and launches == [100000] and "--np 2147483648: more ranks than an MPI job can have" in err, err


def fake_build(tmp_path, mpiexec_script: str):
    """A build description whose mpiexec is a shell script (`mpiexec_script`, its body) and whose programs
    are stubs: partita run launches it as it launches MPI, with no MPI at all."""
    build = tmp_path / "build"
    for sub in ("bin", "lib"):
        (build / sub).mkdir(parents=True)
    for f, text in ((build / "bin" / "partita-p2p", "#!/bin/sh\n"), (build / "lib" / "libpartita-mpi.so", ""),
                    (build / "mpiexec", "#!/bin/sh\n" + mpiexec_script)):
        f.write_text(text)
        f.chmod(0o755)
    (build / "partita-build.json").write_text(json.dumps({
        "schema": "partita.build/1", "bin_dir": str(build / "bin"), "lib_dir": str(build / "lib"),
        "mpiexec": str(build / "mpiexec"), "mpi_flavor": "mpich", "native_partitioned": True,
        "policies": ["none", "bulk", "model", "timer", "fixed"]}))
    return build


def one_run_suite(tmp_path, impl='["native"]'):
    suite = tmp_path / "one.toml"
    suite.write_text(f'[[run]]\nname = "p2p"\nprogram = "partita-p2p"\nimpl = {impl}\n')
    return suite


def still_running(pid: int) -> bool:
    try:  # a zombie is gone too: only its parent has not collected it yet
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("sig, rc, line", [(signal.SIGINT, 130, "partita: interrupted"),
                                           (signal.SIGTERM, 143, "partita: interrupted (SIGTERM)")])
def test_a_stopped_run_stops_its_launch(tmp_path, sig, rc, line):
    """mpiexec runs in a session of its own, so a terminal's Ctrl-C never reached it, and SIGTERM (e.g.
    `timeout 5 partita run`) ended partita at once: mpiexec and its ranks (here a `sleep`) ran on."""
    pidfile = tmp_path / "rank.pid"
    build = fake_build(tmp_path, f"sleep 300 &\necho $! > {pidfile}.new\nmv {pidfile}.new {pidfile}\nwait\n")
    p = subprocess.Popen([sys.executable, "-m", "partita.cli", "run", "--build", str(build), "--out",
                          str(tmp_path / "out"), "--suite", str(one_run_suite(tmp_path))],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={k: v for k, v in os.environ.items() if k != "PARTITA_LAUNCHER"},
                         # a Python whose SIGINT is ignored (a background job) ignores it too
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        for _ in range(600):
            if pidfile.exists() or p.poll() is not None:
                break
            time.sleep(0.05)
        assert pidfile.exists(), p.communicate()
        rank = int(pidfile.read_text())
        p.send_signal(sig)
        out, err = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == rc and line in err.splitlines() and "Traceback" not in err, (p.returncode, out, err)
    for _ in range(100):
        if not still_running(rank):
            break
        time.sleep(0.05)
    assert not still_running(rank), f"the launch's rank (pid {rank}) runs on after partita stopped"


def test_run_keeps_inherited_preload_and_settings_out_of_its_launches(tmp_path):
    """An inherited LD_PRELOAD made `--impl native` run libpartita, an inherited PARTITA_POLICY or
    PARTITA_PROGRESS_THREAD changed a run that neither the manifest nor the log recorded."""
    from partita.launch import CLI_VARIABLES
    build = fake_build(tmp_path, 'for a in "$@"; do out=$a; done\nenv > "$out.env"\n')
    inherited = {"LD_PRELOAD": "libm.so.6", "PARTITA_POLICY": "bulk", "PARTITA_PROGRESS_THREAD": "1"}
    # and whatever libpartita setting the environment of the tests has
    dropped = {**{k: v for k, v in os.environ.items() if k.startswith("PARTITA_") and k not in CLI_VARIABLES},
               **inherited}
    p = run_cli("run", "--build", str(build), "--out", str(tmp_path / "out"), "--impl", "native,partita:timer",
                "--suite", str(one_run_suite(tmp_path)), env={**inherited, "PARTITA_LAUNCHER": ""})
    assert "Traceback" not in p.stderr and p.returncode == 1, p.stderr  # the stub writes no result
    warnings = [l for l in p.stderr.splitlines() if l.startswith("partita run: warning: ")]
    assert len(warnings) == 1 and warnings[0].endswith(": " + ", ".join(sorted(dropped))), p.stderr
    folder = next((tmp_path / "out").glob("*-one"))
    assert json.loads((folder / "manifest.json").read_text())["dropped_env"] == dropped

    def launch_env(name):
        return dict(line.split("=", 1) for line in (folder / f"{name}.json.env").read_text().splitlines()
                    if "=" in line)
    native, timer = launch_env("p2p-native"), launch_env("p2p-partita_timer")
    assert not {"LD_PRELOAD", "PARTITA_POLICY", "PARTITA_PROGRESS_THREAD"} & set(native), native
    assert timer["LD_PRELOAD"] == str(build / "lib" / "libpartita-mpi.so") and timer["PARTITA_POLICY"] == "timer"
    assert "PARTITA_PROGRESS_THREAD" not in timer and native["PARTITA_BUILD"] == os.environ.get(
        "PARTITA_BUILD", str(build_info().path)), "partita's own settings stay"


@pytest.mark.parametrize("impl, twice", [
    ("native,native", "'native' twice"),
    ("partita:timer,partita:TIMER", "'partita:timer' twice, as 'partita:timer' and 'partita:TIMER'"),
    ("partita:fixed4,partita:fixed04", "'partita:fixed4' twice, as 'partita:fixed4' and 'partita:fixed04'"),
])
def test_run_refuses_one_implementation_twice(tmp_path, build_dir, impl, twice):
    # the second launch wrote over the first's result file, and the summary counted two
    p = run_cli("run", "--build", build_dir, "--out", str(tmp_path / "out"), "--impl", impl)
    assert_clean_error(p, "run", 2, f"--impl names the implementation {twice}")
    suite = one_run_suite(tmp_path, json.dumps(impl.split(",")))
    p = run_cli("run", "--build", build_dir, "--out", str(tmp_path / "out"), "--suite", str(suite))
    assert_clean_error(p, "run", 2, f"run 'p2p' of suite {suite}: 'impl' names the implementation {twice}")
    assert not (tmp_path / "out").exists()


def test_implementations_have_one_spelling():
    from partita.launch import LaunchError, canonical_impl
    assert canonical_impl("partita:TIMER") == "partita:timer"
    assert canonical_impl("partita:Fixed004@fabric") == "partita:fixed4@fabric"
    with pytest.raises(LaunchError, match="partita:fixed<N>"):
        canonical_impl("partita:FIXEDx")
    assert canonical_impl("native") == "native"


@pytest.mark.parametrize("args, option", [
    (["run", "--out", ""], "--out"),                     # wrote the results into the current folder
    (["run", "--suite", ""], "--suite"),
    (["report", "", "-o", "x.html"], "RESULTS_DIR"),
    (["summary", ""], "folder"),
    (["model", "--plot", ""], "--plot"),
    (["tune", "-o", ""], "-o/--output"),
    (["trace", "--out", "", "--", "true"], "--out"),
    (["trace", "export", "t", "--perfetto", ""], "--perfetto"),
])
def test_an_empty_path_is_refused(args, option):
    p = run_cli(*args)
    command = " ".join(args[:2]) if args[:2] == ["trace", "export"] else args[0]
    assert_clean_error(p, command, 2, f"argument {option}: an empty value is not allowed")


def test_run_with_a_partita_launcher_that_does_not_exist(tmp_path, build_dir):
    # every run was launched, and each failed; --launcher was refused before launching
    p = run_cli("run", "--build", build_dir, "--out", str(tmp_path), env={"PARTITA_LAUNCHER": "no-such-launcher-xyz -n"})
    assert_clean_error(p, "run", 2, "$PARTITA_LAUNCHER 'no-such-launcher-xyz -n': no such program")
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("where, words", [("folder", "a folder, not a suite file"),
                                          ("/dev/null", "not a regular file")])
def test_run_with_a_suite_path_that_is_no_file(tmp_path, build_dir, where, words):
    # both said "no such suite file" of a path that exists
    suite = str(tmp_path) if where == "folder" else where
    p = run_cli("run", "--build", build_dir, "--out", str(tmp_path / "out"), "--suite", suite)
    assert_clean_error(p, "run", 2, f"{suite}: {words}")
    assert not (tmp_path / "out").exists()


# -- LogGP parameter files -------------------------------------------------------------------

def test_loggp_file_with_a_duplicate_key(tmp_path):
    lib = library(build_info().lib_dir)
    f = tmp_path / "loggp.json"
    Params.from_segments([Segment(None, 2.0, 0.5, 0.75, 1.0, 0.001, 0.0)], lib=lib).save(f)
    text = f.read_text()
    assert Params.load(f, lib=lib).segments[0].L == 2.0  # the file as written is fine
    # the same key twice in the top-level object: which one counts is not said anywhere
    f.write_text(text.replace('"schema"', '"o_pready": 9.5, "schema"', 1))
    assert text.count('"o_pready"') == 1
    with pytest.raises(ModelError, match=r"duplicate key 'o_pready'") as e:
        Params.load(f, lib=lib)
    assert str(f) in str(e.value)
    p = run_cli("model", "--params", str(f), "-m", "1K:4K")
    assert_clean_error(p, "model", 2, str(f), "duplicate key 'o_pready'")


# -- odd but valid results -------------------------------------------------------------------

def test_compare_takes_a_suites_loggp_run_as_parameters_not_a_bad_result(tmp_path):
    """The paper suite's partita-loggp run writes LogGP parameters (partita.loggp/1): compare
    leaves it out, as summary and report do, instead of stopping on its schema."""
    from report_helpers import p2p, write_folder
    folders = []
    for name in ("a", "b"):
        f = write_folder(tmp_path / name, [("p2p", "native", p2p("native")), ("loggp", "native", "missing")])
        Params.from_segments([Segment(None, 0.2, 0.5, 0.4, 0.9, 1e-4, 2.5)],
                             lib=library(build_info().lib_dir)).save(f / "loggp-native.json")
        folders.append(str(f))
    p = run_cli("compare", *folders)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert "p2p" in p.stdout and "loggp" not in p.stdout


def test_compare_with_a_case_that_lacks_a_headline_metric(tmp_path):
    """The headline metrics come from the first case; a later case without one of them is
    compared on the metrics it has, not a KeyError."""
    full, lacking = result_doc(), result_doc()
    full["results"].append({**full["results"][0], "case": {"bytes": 4096, "partitions": 4}})
    lacking["results"].append({"case": {"bytes": 4096, "partitions": 4},
                               "metrics": {"perceived_bw": {"unit": "MB/s", "summary": {"median": 5.0}}}})
    a = results_folder(tmp_path / "a", json.dumps(lacking))
    b = results_folder(tmp_path / "b", json.dumps(full))
    for x, y in ((a, b), (b, a)):
        p = run_cli("compare", str(x), str(y))
        assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
        rows = p.stdout.splitlines()[1:]
        assert len(rows) == 1 and "bytes=1024" in rows[0] and rows[0].endswith("same"), p.stdout


@pytest.mark.parametrize("median", ["2.0", math.inf, pytest.param(10**400, id="10**400")])
def test_summary_all_with_a_median_that_is_not_a_number(tmp_path, median):
    """A median written as a string, Infinity (which Python's json reads) or an integer beyond any
    float is not a measurement: '-' in the tables (as the verdict and compare treat it), not a
    traceback or 'inf'."""
    folder = results_folder(tmp_path / "f", json.dumps(result_doc(median=median)))
    p = run_cli("summary", str(folder), "--all")
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert "- [1.90,2.10]" in p.stdout


@pytest.mark.parametrize("key, value", [("config", []), ("environment", "vm"), ("config", None)])
def test_result_whose_config_or_environment_is_not_an_object(tmp_path, key, value):
    folder = results_folder(tmp_path / "f", json.dumps({**result_doc(), key: value}))
    f = str(folder / "p2p-native.json")
    assert_clean_error(run_cli("summary", str(folder)), "summary", 1, f, f"'{key}'")
    assert_clean_error(run_cli("report", str(folder)), "report", 2, f, f"'{key}'")
    assert_clean_error(run_cli("compare", str(folder), str(folder)), "compare", 2, f, f"'{key}'")


@pytest.mark.parametrize("bad_median", [math.nan, math.inf, -math.inf])
def test_verdict_leaves_out_a_nan_or_infinite_median(tmp_path, bad_median):
    """A case whose median is NaN or infinite is not a measurement: the verdict's median over the
    cases is taken over the others, and it never takes (or hides) the best mark (-inf was the
    lowest overhead)."""
    from partita.report import verdict
    from report_helpers import p2p, write_folder
    bad = p2p("native", 1.0)
    for c in bad["results"]:
        if c["case"]["partitions"] > 1 and c["case"]["bytes"] < 1 << 20:   # two of the three cases
            c["metrics"]["overhead"]["summary"]["median"] = bad_median
    folder = write_folder(tmp_path / "f", [("p2p", "native", bad), ("p2p", "partita:model", p2p("partita:model", 2.0))])
    _, h = verdict([folder])
    rows = {r[0]: r[1] for r in h.rows}
    assert "nan" not in rows["native"] and "inf" not in rows["native"] and rows["native"].endswith("*"), rows
    assert not rows["partita:model"].endswith("*"), rows


def test_verdict_never_marks_an_infinite_bandwidth_best(tmp_path):
    """Higher is better for the perceived bandwidth: an Infinity median would be the best."""
    from partita.report import verdict
    from report_helpers import p2p, write_folder
    bad = p2p("partita:timer", 0.5, noisy=True)
    for c in bad["results"][:2]:        # two of the three sizes: the median over them
        c["metrics"]["perceived_bw"]["summary"]["median"] = math.inf
    folder = write_folder(tmp_path / "f", [("p2p", "native", p2p("native", 1.0, noisy=True)),
                                           ("p2p", "partita:timer", bad)])
    _, h = verdict([folder])
    col = h.header.index("perceived bw under a laggard")
    rows = {r[0]: r[col] for r in h.rows}
    assert rows["native"].endswith("*") and "inf" not in rows["partita:timer"], rows


@pytest.mark.parametrize("bad_median", [math.inf, -math.inf])
def test_compare_leaves_out_a_launch_whose_median_is_infinite(tmp_path, bad_median):
    """Repeated launches are pooled: a launch whose median is infinite measured nothing and does not
    widen the interval to infinity (which made compare say '?' where the samples say 'same')."""
    samples = [1.9, 2.0, 2.1, 2.0, 1.95, 2.05]
    b = tmp_path / "b"
    b.mkdir()
    runs = []
    for k, median in enumerate((2.0, bad_median), 1):
        doc = result_doc(median)
        doc["results"][0]["metrics"]["overhead"]["samples"] = samples
        (b / f"p2p-native-{k}.json").write_text(json.dumps(doc))
        runs.append({"name": "p2p", "impl": "native", "status": "ok", "result": f"p2p-native-{k}.json",
                     "launch": k, "launches": 2})
    (b / "manifest.json").write_text(json.dumps({"schema": "partita.run/1", "suite": "t", "runs": runs}))
    a = results_folder(tmp_path / "a", json.dumps(result_doc()))
    rows = compare_folders(a, b)
    assert len(rows) == 1 and rows[0]["verdict"] == "same", rows


@pytest.mark.parametrize("metric", ["overhead", "perceived_bw"])
@pytest.mark.parametrize("bad_median", [math.nan, math.inf])
def test_launch_check_speed_of_a_median_that_is_not_finite(metric, bad_median):
    """The per-launch policy checks take the best speed of a launch: a NaN or infinite median is
    no speed (an infinite bandwidth was the best, a NaN made the best arbitrary)."""
    from partita.launch_checks import speed
    case = {"case": {"bytes": 1024, "partitions": 4},
            "metrics": {metric: {"summary": {"median": bad_median}}, "t_pt2pt_us": {"summary": {"median": 2.0}}}}
    assert speed(case, metric) is None


@pytest.mark.parametrize("bound, value", [("ci95_lo", "1.0"), ("ci95_hi", [1.0]), ("ci95_hi", math.inf)])
def test_verdict_and_report_with_an_interval_bound_that_is_not_a_number(tmp_path, bound, value):
    """A CI bound that is not a finite number is no bound: the findings say no CIs were recorded and
    the figures draw no error bar, as for a missing one (a string stopped both with a TypeError)."""
    from report_helpers import p2p, write_folder
    bad = p2p("native", 1.0)
    for c in bad["results"]:
        c["metrics"]["overhead"]["summary"][bound] = value
    folder = write_folder(tmp_path / "f", [("p2p", "native", bad), ("p2p", "partita:model", p2p("partita:model", 0.5))])
    p = run_cli("summary", str(folder))
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert "no CIs recorded" in next(l for l in p.stdout.splitlines() if l.startswith("- overhead")), p.stdout
    p = run_cli("report", str(folder))
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr


# -- result fields of the wrong kind ---------------------------------------------------------

@pytest.mark.parametrize("field, value", [
    ("bytes", None), ("bytes", "1024"), ("bytes", 1024.0), ("bytes", -4), ("bytes", 0), ("bytes", True),
    ("bytes", 2**70), pytest.param("bytes", 10**400, id="bytes-10**400"),
    ("partitions", None), ("partitions", "4"), ("partitions", 2.5), ("partitions", 0), ("partitions", False),
    ("partitions", 2**40),
])
def test_result_case_with_a_size_or_partition_count_that_is_not_one(tmp_path, field, value):
    """A measured p2p case's bytes and partitions are whole numbers >= 1: missing (None here), a
    string, a float, a bool, below 1 or too large (bytes beyond int64 overflowed numpy and floats,
    2^40 partitions ran the model out of memory) stopped the summary and the report with a
    traceback (or drew nonsense); now one error line naming the file, the case and the field."""
    doc = result_doc()
    if value is None:
        del doc["results"][0]["case"][field]
    else:
        doc["results"][0]["case"][field] = value
    folder = results_folder(tmp_path / "f", json.dumps(doc))
    f = str(folder / "p2p-native.json")
    assert_clean_error(run_cli("summary", str(folder)), "summary", 1, f, "results[0]", f"'{field}'")
    assert_clean_error(run_cli("report", str(folder)), "report", 2, f, "results[0]", f"'{field}'")
    assert_clean_error(run_cli("compare", str(folder), str(folder)), "compare", 2, f, f"'{field}'")


def test_mech_case_without_a_partition_size(tmp_path):
    """The mechanisms figure keys its cases on the partition size: a measured mech case without one
    is an error (it stopped the report sorting None with numbers); a skipped case may lack it, as
    partita-mech writes one whose partition is larger than the buffer."""
    case = {"bytes": 1024, "partitions": 4, "threads": 1, "scheme": "ltr", "mechanism": "psend"}
    doc = result_doc(3000.0, 2900.0, 3100.0, benchmark="mech", metric="bandwidth", case=case)
    doc["results"].append({**doc["results"][0], "case": {**case, "partitions": 2, "partition_bytes": 512}})
    doc["results"].append({"case": {"bytes": 1024, "threads": 1}, "skipped": "partition larger than the buffer"})
    folder = results_folder(tmp_path / "f", json.dumps(doc))
    f = str(folder / "p2p-native.json")
    assert_clean_error(run_cli("summary", str(folder)), "summary", 1, f, "results[0]: case has no 'partition_bytes'")
    assert_clean_error(run_cli("report", str(folder)), "report", 2, f, "'partition_bytes'")
    doc["results"][0]["case"]["partition_bytes"] = 256
    (folder / "p2p-native.json").write_text(json.dumps(doc))
    for cmd in (["summary", str(folder)], ["report", str(folder)]):
        p = run_cli(*cmd)
        assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr


@pytest.mark.parametrize("metric", [["all"], {"overhead": 1}, 3])
def test_result_whose_config_metric_is_not_a_string(tmp_path, metric):
    """config.metric (partita-p2p --metric) picks the headline: a list or an object there stopped
    summary --all and compare with 'unhashable type'."""
    doc = result_doc()
    doc["config"]["metric"] = metric
    folder = results_folder(tmp_path / "f", json.dumps(doc))
    f = str(folder / "p2p-native.json")
    assert_clean_error(run_cli("summary", str(folder), "--all"), "summary", 1, f, "config 'metric'", "a string")
    assert_clean_error(run_cli("report", str(folder)), "report", 2, f, "config 'metric'")
    assert_clean_error(run_cli("compare", str(folder), str(folder)), "compare", 2, f, "config 'metric'")


def set_path(doc: dict, path: tuple, value) -> None:
    for k in path[:-1]:
        doc = doc[k]
    doc[path[-1]] = value


@pytest.mark.parametrize("path, value, words", [
    (("config", "compute_us"), "1000", "config 'compute_us'"),            # formatted with :g
    (("benchmark",), ["p2p"], "'benchmark'"),                             # a key of the headline table
    (("launches",), "3", "'launches'"),                                   # compared with 1
    (("headline_metrics",), 5, "'headline_metrics'"),                     # iterated
    (("program",), 5, "'program'"),                                       # the command when the manifest has none
    (("environment", "hosts"), [1, "a"], "environment 'hosts'"),          # sorted and joined
    (("results", 0, "skipped"), ["why"], "results[0]: 'skipped'"),        # a set of the reasons, sorted
])
def test_result_with_a_field_of_the_wrong_kind(tmp_path, path, value, words):
    doc = result_doc()
    doc["environment"] = {"ranks": 2}
    set_path(doc, path, value)
    manifest = {"schema": "partita.run/1", "suite": "t",   # no command: the report shows the program's
                "runs": [{"name": "p2p", "impl": "native", "status": "ok", "result": "p2p-native.json"}]}
    folder = results_folder(tmp_path / "f", json.dumps(doc), manifest)
    f = str(folder / "p2p-native.json")
    assert_clean_error(run_cli("summary", str(folder)), "summary", 1, f, words)
    assert_clean_error(run_cli("summary", str(folder), "--all"), "summary", 1, f, words)
    assert_clean_error(run_cli("report", str(folder)), "report", 2, f, words)
    assert_clean_error(run_cli("compare", str(folder), str(folder)), "compare", 2, f, words)


@pytest.mark.parametrize("path, value, words", [
    (("runs", 0, "launch"), "x", "runs[0]: 'launch'"),                    # int()
    (("runs", 0, "launches"), None, "runs[0]: 'launches'"),               # compared with 1
    (("runs", 0, "args"), 5, "runs[0]: 'args'"),                          # a tuple of them is a key
    (("runs", 0, "command"), [1, 2], "runs[0]: 'command'"),               # shortened for the report
    (("suite",), [1], "'suite'"),                                         # joined
    (("description",), 5, "'description'"),                               # HTML-escaped
    (("build",), "x", "'build'"),
    (("build", "lib_dir"), 5, "build 'lib_dir'"),                         # a path
    # a launch's own fields: an unknown status, no rank count, an exit code that is no number were taken
    (("runs", 0, "status"), "weird", "runs[0]: 'status' is 'weird', expected one of 'ok', 'failed', 'unavailable'"),
    (("runs", 0, "np"), -3, "runs[0]: 'np'"),
    (("runs", 0, "exit_code"), "x", "runs[0]: 'exit_code'"),
])
def test_manifest_with_a_field_of_the_wrong_kind(tmp_path, path, value, words):
    manifest = {"schema": "partita.run/1", "suite": "t", "description": "d", "build": {"lib_dir": "lib"},
                "runs": [{"name": "p2p", "impl": "native", "status": "ok", "result": "p2p-native.json", "launch": 1,
                          "launches": 1, "args": ["-i", "3"], "command": ["mpiexec", "partita-p2p", "-i", "3"],
                          "np": 2, "exit_code": 0}]}
    set_path(manifest, path, value)
    folder = results_folder(tmp_path / "f", json.dumps(result_doc()), manifest)
    f = str(folder / "manifest.json")
    assert_clean_error(run_cli("summary", str(folder)), "summary", 2, f, words)
    assert_clean_error(run_cli("report", str(folder)), "report", 2, f, words)
    assert_clean_error(run_cli("compare", str(folder), str(folder)), "compare", 2, f, words)


# -- partita advise on results -----------------------------------------------------------------

def p2p_doc_with_samples(t_part, t_last, noise="none", **environment):
    """A partita-p2p result as advise reads it: t_part_us and t_last_us samples per round."""
    doc = result_doc(case={"bytes": 4096, "partitions": 4, "threads": 1})
    doc["config"]["noise"] = noise
    doc["environment"] = {"mpi_library": "MPICH Version: 5.0.2", "partita_policy": None, **environment}
    doc["results"][0]["metrics"] = {
        name: {"unit": "us", "summary": {"median": 1.0}, "samples": samples}
        for name, samples in (("t_part_us", t_part), ("t_last_us", t_last))}
    return doc


@pytest.mark.parametrize("change, words", [
    ({"mpi_library": 5}, "environment 'mpi_library'"),          # 'in' on an int
    ({"partita_policy": ["model"]}, "environment 'partita_policy'"),
    ({"noise": ["delay:5"]}, "config 'noise'"),
    ({"noise": "delay:1.2.3"}, "config 'noise'"),                 # float('1.2.3')
    ({"noise": "delay:-5us"}, "config 'noise'"),
    ({"noise": "delay:nanus"}, "config 'noise'"),
])
def test_advise_result_with_a_field_of_the_wrong_kind(tmp_path, change, words):
    noise = change.pop("noise", "none")
    f = tmp_path / "p2p.json"
    f.write_text(json.dumps(p2p_doc_with_samples([5.0, 6.0], [1.0, 1.0], noise, **change)))
    assert_clean_error(run_cli("advise", str(f)), "advise", 2, "p2p.json", words)


@pytest.mark.parametrize("samples", [["a", "b"], [math.nan, math.nan], [math.inf, math.inf], [True, True], []])
def test_advise_on_samples_that_are_not_numbers(tmp_path, samples):
    """A sample that is not a finite number is no round (a string or infinity stopped advise with
    a traceback, NaN was advised on as a spread of 0); with no round left nothing is advised: an
    error, not exit 0."""
    f = tmp_path / "p2p.json"
    f.write_text(json.dumps(p2p_doc_with_samples(samples, [1.0] * len(samples))))
    assert_clean_error(run_cli("advise", str(f)), "advise", 2, "p2p.json", "no complete round")


def test_advise_on_a_trace_without_a_complete_round(tmp_path):
    from trace_helpers import rank_doc, write_trace
    s, r = good_trace_requests()
    s["rounds"], r["rounds"] = [], []
    folder = write_trace(tmp_path / "t", [rank_doc(0, 2, [s]), rank_doc(1, 2, [r])])
    assert_clean_error(run_cli("advise", str(folder)), "advise", 2, str(folder), "no complete round")
    # and the report's trace figure says so too (it was a ValueError traceback)
    from report_helpers import p2p, write_folder
    results = write_folder(tmp_path / "r", [("p2p", "native", p2p("native"))])
    assert_clean_error(run_cli("report", str(results), "--trace", str(folder)), "report", 2, "no send request")


# -- traces: partita trace, show, project ------------------------------------------------------

def good_trace_requests():
    from trace_helpers import recv_request, send_request
    s = send_request(1, 1, 7, [(0, [100, 200, 300, 5000], [0, 1, 0, 1], 9000)])
    r = recv_request(2, 0, 7, [(0, [6000, 6100, 6200, 7000], 8000)])
    return s, r


def trace_folder(path, mpi_time_ns=None, finalize_ns=10_000_000, **send_fields):
    from trace_helpers import rank_doc, write_trace
    s, r = good_trace_requests()
    s.update(send_fields)
    times = mpi_time_ns or {"p2p": 1_000_000, "collective": 0, "partitioned": 10_000}
    return write_trace(path, [rank_doc(0, 2, [s], mpi_time_ns=times, finalize_ns=finalize_ns),
                              rank_doc(1, 2, [r], mpi_time_ns=times, finalize_ns=finalize_ns)])


@pytest.mark.parametrize("speedup, words", [("1e-320", "out of range"),   # was a ZeroDivisionError
                                            ("inf", "positive finite number")])    # was projected as given
def test_project_with_a_speedup_out_of_range(tmp_path, speedup, words):
    folder = trace_folder(tmp_path / "t")
    assert_clean_error(run_cli("project", str(folder), "--speedup", speedup), "project", 2, words)


@pytest.mark.parametrize("times, finalize_ns", [
    ({"p2p": 1_000_000, "collective": 0, "partitioned": 0}, 0),               # no run time: a 0% share
    ({"p2p": 10**12, "collective": 0, "partitioned": 0}, 10_000_000),         # more than the run
])
def test_project_on_a_trace_whose_p2p_time_is_no_share(tmp_path, times, finalize_ns):
    folder = trace_folder(tmp_path / "t", times, finalize_ns)
    assert_clean_error(run_cli("project", str(folder), "--speedup", "2"), "project", 2,
                       str(folder / "rank-00000.json"), "no share of the run time")


@pytest.mark.parametrize("samples", [["a", "b"], [math.inf, math.inf], [True, True]])
def test_project_on_pattern_samples_that_are_not_numbers(tmp_path, samples):
    """--results: a time sample that is not a finite number is no measurement (a string stopped
    project with a traceback, infinity made the speedup inf, true counted as 1 us)."""
    doc = {"schema": "partita.result/1", "benchmark": "stencil", "results": [
        {"case": {"strategy": "single"}, "metrics": {"time_us": {"summary": {}, "samples": samples}}},
        {"case": {"strategy": "partitioned"}, "metrics": {"time_us": {"summary": {}, "samples": [1.0, 2.0]}}}]}
    f = tmp_path / "stencil.json"
    f.write_text(json.dumps(doc))
    p = run_cli("project", str(trace_folder(tmp_path / "t")), "--results", str(f))
    assert_clean_error(p, "project", 2, str(f), "no pattern benchmark result")


@pytest.mark.parametrize("fields, words", [
    ({"count": -1024, "bytes": -16384}, "'count' must be at least 0"),
    ({"type_size": -4, "bytes": -16384}, "'type_size' must be at least 0"),
])
def test_trace_request_of_a_negative_size(tmp_path, fields, words):
    folder = trace_folder(tmp_path / "t", **fields)
    for cmd in (["trace", "show", str(folder)], ["advise", str(folder)]):
        assert_clean_error(run_cli(*cmd), cmd[0] if cmd[0] != "trace" else "trace show", 2,
                           str(folder / "rank-00000.json"), words)


def test_trace_with_a_negative_mpi_time(tmp_path):
    folder = trace_folder(tmp_path / "t", {"p2p": -5, "collective": 0, "partitioned": 0})
    assert_clean_error(run_cli("project", str(folder), "--speedup", "2"), "project", 2,
                       str(folder / "rank-00000.json"), "mpi_time_ns.'p2p' must be at least 0")


def test_trace_show_with_an_unusable_loggp_file(tmp_path):
    """--loggp FILE asked for: unusable is an error, as in advise (it was a warning and exit 0)."""
    bad = tmp_path / "loggp.json"
    bad.write_text("{")
    assert_clean_error(run_cli("trace", "show", str(trace_folder(tmp_path / "t")), "--loggp", str(bad)),
                       "trace show", 2, str(bad))


@pytest.mark.parametrize("inside", [False, True])
def test_trace_out_where_no_folder_can_be(tmp_path, inside):
    blocker = tmp_path / "a-file"
    blocker.write_text("kept")
    out = blocker / "trace" if inside else blocker
    assert_clean_error(run_cli("trace", "--out", str(out), "--", "true"), "trace", 2, str(out))
    assert blocker.read_text() == "kept"


# -- the build description, suite files ---------------------------------------------------------

@pytest.mark.parametrize("content, words", [
    (b"[1, 2]", "a JSON list"),
    (bytes((i * 97 + 13) % 256 for i in range(512)), "not a readable build description"),
    (b'{"schema": "partita.build/1"}', "'bin_dir'"),
    (b'{"schema": "partita.build/1", "bin_dir": "b", "lib_dir": 5, "mpiexec": "m"}', "'lib_dir'"),
])
def test_build_description_that_is_not_one(tmp_path, content, words):
    build = tmp_path / "build"
    build.mkdir()
    (build / "partita-build.json").write_bytes(content)
    f = str(build / "partita-build.json")
    assert_clean_error(run_cli("run", "--build", str(build), "--out", str(tmp_path / "out")), "run", 2, f, words)
    assert_clean_error(run_cli("model", "--build", str(build)), "model", 2, f, words)
    assert_clean_error(run_cli("trace", "--build", str(build), "--", "true"), "trace", 2, f, words)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("content, words", [
    (bytes((i * 97 + 13) % 256 for i in range(512)), "not a readable suite file"),
    (b'[[run]]\nname = "p"\nprogram = "partita-p2p"\ntimeout = nan\n', "'timeout'"),
    (b'[[run]]\nname = "p"\nprogram = "partita-p2p"\ntimeout = inf\n', "'timeout'"),
    (b'[[run]]\nname = "p"\nprogram = "partita-p2p"\ntimeout = true\n', "'timeout'"),
    # listing a billion launches ran out of memory before any started
    (b'repeat = 1000000000\n[[run]]\nname = "p"\nprogram = "partita-p2p"\n', "'repeat' must be at most 1000"),
    (b'[[run]]\nname = "p"\nprogram = "partita-p2p"\nnp = ' + b"9" * 5000 + b"\n", "invalid TOML"),  # a traceback
    # ran as if they were not there
    (b'descriptionn = "x"\nnpp = 2\n[[run]]\nname = "p"\nprogram = "partita-p2p"\n', "unknown key(s) descriptionn, npp"),
    # no environment or command line carries these: a traceback, and a half-written results folder
    (b'[[run]]\nname = "p"\nprogram = "partita-p2p"\nenv = {PARTITA_PROGRESS_THREAD = 1}\n',
     "run 1: 'env' PARTITA_PROGRESS_THREAD = 1: the value must be a string"),
    (b'[[run]]\nname = "p"\nprogram = "partita-p2p"\nenv = {"BAD=NAME" = "x"}\n',
     "run 1: 'env' name 'BAD=NAME' is not a variable name"),
    (b'[[run]]\nname = "p"\nprogram = "partita-p2p"\nenv = {A = "x\\u0000"}\n', "run 1: 'env' A holds a NUL"),
    (b'[[run]]\nname = "p"\nprogram = "partita-p2p"\nargs = ["-x", "0\\u0000"]\n', "run 1: 'args' entry '0\\x00' holds a NUL"),
    # what the implementation chooses: `native` ran libpartita, partita:timer the bulk policy
    (b'[[run]]\nname = "p"\nprogram = "partita-p2p"\nenv = {LD_PRELOAD = "/x/libpartita-mpi.so"}\n',
     "run 1: 'env' sets LD_PRELOAD, which the implementation chooses"),
    (b'[[run]]\nname = "p"\nprogram = "partita-p2p"\nimpl = ["partita:timer"]\nenv = {PARTITA_POLICY = "bulk"}\n',
     "run 1: 'env' sets PARTITA_POLICY, which the implementation chooses"),
])
def test_suite_file_that_is_not_one(tmp_path, build_dir, content, words):
    suite = tmp_path / "s.toml"
    suite.write_bytes(content)
    p = run_cli("run", "--build", build_dir, "--out", str(tmp_path / "out"), "--suite", str(suite))
    assert_clean_error(p, "run", 2, str(suite), words)
    assert not (tmp_path / "out").exists()


# -- model and tune options ----------------------------------------------------------------------

@pytest.mark.parametrize("command", ["model", "tune"])
@pytest.mark.parametrize("option, value, words", [
    ("-p", "99999999999999999999", "--partitions"),      # OverflowError in the model's int
    ("-p", "1048577", "--partitions"),                   # beyond partita-p2p's limit
    ("-m", "1:1208925819614629174706176", "powers of two"),   # 2^80 bytes wrapped to nonsense
    ("-m", "1:" + "9" * 5000, "is not a size"),            # int() refused it: a message naming no input
    ("--delay", "1e10", "--delay"),   # beyond partita-p2p's 1e9 us: tune launched it, model printed 300 digits
    ("-m", "4611686018427387904:4611686018427387904", "from 1 byte to 1099511627776"),   # beyond the C programs' 1 TiB
])
def test_model_and_tune_option_beyond_their_limits(tmp_path, command, option, value, words):
    p = run_cli(command, option, value, *(["-o", str(tmp_path / "t.json")] if command == "tune" else []))
    assert_clean_error(p, command, 2, words)
    assert "running:" not in p.stderr and not (tmp_path / "t.json").exists()


def test_model_delay_with_no_late_partition_is_refused(tmp_path):
    # --pattern all has no delay: the table was printed as if --delay had not been given
    assert_clean_error(run_cli("model", "-m", "1K:4K", "-p", "4", "--pattern", "all", "--delay", "500"), "model",
                       2, "--pattern all")
    p = run_cli("model", "-m", "1K:4K", "-p", "4", "--pattern", "uniform", "--delay", "500")
    assert p.returncode == 0 and "500 us" in p.stdout, p.stderr


def test_tune_output_under_a_file_is_refused_before_measuring(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("kept")
    p = run_cli("tune", "-m", "4K:4K", "-p", "2", "--screen", "3", "-i", "3", "-o", str(blocker / "t.json"))
    assert_clean_error(p, "tune", 2, str(blocker / "t.json"))
    assert "running:" not in p.stderr and blocker.read_text() == "kept"


def test_tune_that_cannot_write_a_usable_table_keeps_the_old_one(tmp_path, monkeypatch, capsys):
    """The table was written in place and then checked: a table the reader refused (or a full disk)
    destroyed the one that was there."""
    from test_tune_cli import fake_runs
    from partita import cli
    from partita.commands import tune as tune_command
    from partita.model import tune as tuning
    out = tmp_path / "tuning.json"
    out.write_text("the table of an earlier search\n")
    monkeypatch.setattr(tuning, "run_cases", fake_runs({1: 10.0, 2: 12.0}, []))

    def refuse(path, lib=None):
        raise ModelError(f"{path}: refused")
    monkeypatch.setattr(tune_command, "Table", refuse)
    rc = cli.main(["tune", "--build", str(build_info().path), "-m", "4K:4K", "-p", "2", "--screen", "3",
                   "-i", "3", "-o", str(out)])
    assert rc == 2 and "cannot write a usable table" in capsys.readouterr().err
    assert out.read_text() == "the table of an earlier search\n"
    assert [f.name for f in tmp_path.iterdir()] == ["tuning.json"]    # no half-written file left


# -- compare on intervals that are no measurement ------------------------------------------------

@pytest.mark.parametrize("summary", [
    {"n": 0, "median": 2.0, "ci95_lo": 1.9, "ci95_hi": 2.1},     # a median of no sample
    {"n": "60", "median": 2.0, "ci95_lo": 1.9, "ci95_hi": 2.1},
    {"median": 2.0, "ci95_lo": 2.1, "ci95_hi": 1.9},             # bounds swapped: overlapped nothing
])
def test_compare_never_calls_a_zero_sample_or_swapped_interval_same(tmp_path, summary):
    a = results_folder(tmp_path / "a", json.dumps(result_doc()))
    doc = result_doc()
    doc["results"][0]["metrics"]["overhead"]["summary"] = summary
    b = results_folder(tmp_path / "b", json.dumps(doc))
    for x, y in ((a, b), (b, a)):
        rows = compare_folders(x, y)
        assert len(rows) == 1 and rows[0]["verdict"] == "?", rows


@pytest.mark.parametrize("launcher, words", [("'", "No closing quotation"),        # was a traceback
                                             ("", "--launcher is empty"),          # was mpiexec, silently
                                             ("no-such-launcher-xyz", "no such program")])
def test_loggp_with_a_launcher_that_cannot_be_used(tmp_path, launcher, words):
    """Checked before measuring, as partita run checks it."""
    out = tmp_path / "loggp.json"
    p = run_cli("loggp", "--launcher", launcher, "-o", str(out))
    assert_clean_error(p, "loggp", 2, words)
    assert not out.exists()


def test_summary_never_marks_a_median_of_no_sample_best(tmp_path):
    """A summary whose n is 0 holds numbers that measure nothing: the verdict leaves it out (its low
    overhead took the best mark and a finding said the CIs did not overlap), the tables show '-'."""
    from report_helpers import p2p, write_folder
    empty = p2p("partita:model", 0.1)
    for c in empty["results"]:
        for m in c["metrics"].values():
            m["summary"]["n"], m["samples"] = 0, []
    folder = write_folder(tmp_path / "f", [("p2p", "native", p2p("native", 1.0)), ("p2p", "partita:model", empty)])
    p = run_cli("summary", str(folder))
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert not any(l.startswith("partita:model") and l.endswith("*") for l in p.stdout.splitlines()), p.stdout
    assert "do not overlap" not in p.stdout
    p = run_cli("summary", str(folder), "--all")
    assert p.returncode == 0 and "- (no sample)" in p.stdout, p.stdout


def test_pooling_leaves_out_a_launch_of_no_sample():
    """A launch whose summary counts no sample widens no pooled interval (its median stretched it)."""
    from partita.pooling import pooled_summary
    s = pooled_summary([1.9, 2.0, 2.1] * 2, [{"summary": {"n": 6, "median": 2.0}}, {"summary": {"n": 0, "median": 50.0}}])
    assert s["launch_medians"] == [2.0] and s["ci95_hi"] < 50, s


def test_an_output_never_replaces_an_input(tmp_path):
    # `report -o R/manifest.json` wrote the report over the manifest it had just read, and
    # `trace export T --perfetto T/rank-00000.json` the timeline over the rank file
    folder = tmp_path / "r"
    results_folder(folder, json.dumps(result_doc()))
    manifest = (folder / "manifest.json").read_text()
    (folder / "p2p-native.log").write_text("the run's log\n")  # `report -o` wrote over a run's log too
    for target in ("manifest.json", "p2p-native.json", "p2p-native.log"):
        assert_clean_error(run_cli("report", str(folder), "-o", str(folder / target)), "report", 2, target)
    assert (folder / "manifest.json").read_text() == manifest
    assert (folder / "p2p-native.log").read_text() == "the run's log\n"
    trace = tmp_path / "t"
    trace.mkdir()
    rank = trace / "rank-00000.json"
    rank.write_text("{}")
    assert_clean_error(run_cli("trace", "export", str(trace), "--perfetto", str(rank)), "trace export", 2,
                       "rank-00000.json")
    assert rank.read_text() == "{}"


def test_a_plot_named_after_a_folder_and_an_empty_build_are_errors(tmp_path):
    # `model --plot DIR` wrote DIR.png beside the folder; `--build ''` quietly meant the default build
    folder = tmp_path / "figs"
    folder.mkdir()
    p = run_cli("model", "-m", "1K:4K", "-p", "4", "--plot", str(folder))
    assert "Traceback" not in p.stderr and p.returncode == 2 and "is a folder" in p.stderr, p.stderr
    assert not (tmp_path / "figs.png").exists()
    assert_clean_error(run_cli("model", "--build", "", "-m", "1K:4K", "-p", "4"), "model", 2, "--build ''")


def test_run_with_a_repeat_beyond_the_limit(tmp_path, build_dir):
    # the list of a billion launches ran out of memory (a MemoryError traceback, or a machine swapping)
    p = run_cli("run", "--build", build_dir, "--out", str(tmp_path), "--repeat", "1000000000", timeout=60)
    assert_clean_error(p, "run", 2, "--repeat must be at most 1000")
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("command, option, value", [
    (["model", "--validate", "-i", "3"], "--delays", "50,1e10"),
    (["model", "--validate"], "--iterations", "100000001"),   # partita-p2p's limit is 10^8
    (["tune", "-i", "3"], "--screen", "100000001"),
    (["tune", "--screen", "3"], "--iterations", "100000001"),
])
def test_measuring_option_beyond_the_benchmarks_limit_is_refused_before_measuring(tmp_path, command, option, value):
    # partita-p2p refused it only after the all-at-once cases (model) or the screening runs (tune) were measured
    p = run_cli(*command, option, value, "-m", "16K:16K", "-p", "4", *(["-o", str(tmp_path / "t.json")]
                                                                        if command[0] == "tune" else []))
    assert_clean_error(p, command[0], 2, option)
    assert "running:" not in p.stderr and not (tmp_path / "t.json").exists()


@pytest.mark.parametrize("t_part, t_last", [([1e308, 1e308], [-1e308, -1e308]),   # the spread overflowed: NaN
                                            ([1e20, 1e20], [1.0, 1.0])])          # advised on 0.0 us everywhere
def test_advise_on_samples_beyond_any_clock(tmp_path, t_part, t_last):
    f = tmp_path / "p2p.json"
    f.write_text(json.dumps(p2p_doc_with_samples(t_part, t_last)))
    assert_clean_error(run_cli("advise", str(f)), "advise", 2, "p2p.json", "no complete round")


@pytest.mark.parametrize("big", [str(10**30), "9" * 5000])  # an OverflowError; a ValueError in json.loads
def test_trace_with_an_integer_beyond_64_bits(tmp_path, big):
    folder = trace_folder(tmp_path / "t")
    rank = folder / "rank-00000.json"
    doc = json.loads(rank.read_text())
    doc["requests"][0]["rounds"][0]["start_ns"] = 123456789
    rank.write_text(json.dumps(doc).replace("123456789", big))
    for cmd in (["trace", "show", str(folder)], ["advise", str(folder)], ["project", str(folder), "--speedup", "2"],
                ["trace", "export", str(folder), "--perfetto", str(tmp_path / "p.json")]):
        name = " ".join(cmd[:2]) if cmd[0] == "trace" else cmd[0]
        assert_clean_error(run_cli(*cmd), name, 2, str(rank))
    assert not (tmp_path / "p.json").exists()


def test_trace_export_of_a_partition_whose_thread_is_unknown(tmp_path):
    # the reader takes a null ready_thread; the timeline stopped on it with a TypeError
    s, r = good_trace_requests()
    s["rounds"][0]["ready_thread"] = [None, 1, 0, 1]
    from trace_helpers import rank_doc, write_trace
    folder = write_trace(tmp_path / "t", [rank_doc(0, 2, [s]), rank_doc(1, 2, [r])])
    out = tmp_path / "p.json"
    p = run_cli("trace", "export", str(folder), "--perfetto", str(out))
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    names = {e["args"]["name"] for e in json.loads(out.read_text())["traceEvents"] if e["name"] == "thread_name"}
    assert {"thread ?", "thread 0", "thread 1"} <= names, names


def test_project_takes_a_suites_loggp_run_as_parameters_not_a_bad_result(tmp_path):
    """The paper suite's folder holds a partita-loggp run (LogGP parameters) beside its pattern runs:
    --results stopped on its schema, as compare once did."""
    doc = {"schema": "partita.result/1", "benchmark": "halo3d", "results": [
        {"case": {"strategy": s}, "metrics": {"time_us": {"summary": {}, "samples": [t]}}}
        for s, t in (("single", 100.0), ("partitioned", 50.0))]}
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "halo3d-native.json").write_text(json.dumps(doc))
    Params.from_segments([Segment(None, 0.2, 0.5, 0.4, 0.9, 1e-4, 2.5)],
                         lib=library(build_info().lib_dir)).save(folder / "loggp-native.json")
    runs = [{"name": n, "program": f"partita-{n}", "impl": "native", "status": "ok", "result": f"{n}-native.json"}
            for n in ("loggp", "halo3d")]
    (folder / "manifest.json").write_text(json.dumps({"schema": "partita.run/1", "suite": "t", "runs": runs}))
    p = run_cli("project", str(trace_folder(tmp_path / "t")), "--results", str(folder))
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert "s = 2 (halo3d: single" in p.stdout
    # a run of the folder that is no pattern benchmark: it was "no run named 'loggp' (runs: halo3d)"
    p = run_cli("project", str(trace_folder(tmp_path / "t2")), "--results", str(folder), "--run", "loggp")
    assert_clean_error(p, "project", 2, "'loggp' among its pattern benchmark runs (halo3d)")


def test_an_output_under_a_file_names_the_file(tmp_path):
    # mkdir said only "File exists", naming neither the file in the way nor what was wrong with it
    blocker = tmp_path / "a-file"
    blocker.write_text("kept")
    results = results_folder(tmp_path / "r", json.dumps(result_doc()))
    p = run_cli("tune", "-m", "4K:4K", "-p", "2", "-o", str(blocker / "sub" / "t.json"))
    assert_clean_error(p, "tune", 2, f"{blocker} is not a folder")
    p = run_cli("report", str(results), "-o", str(blocker / "r.html"))
    assert_clean_error(p, "report", 2, f"{blocker} is not a folder")
    assert blocker.read_text() == "kept"


@pytest.mark.parametrize("where", ["o_pready", "o_s"])
def test_loggp_file_with_a_cost_beyond_any_plausible_one(tmp_path, where):
    # the library reads any finite number: advise stopped on an infinite timer delta (OverflowError),
    # model printed 300-digit times
    f = tmp_path / "loggp.json"
    Params.from_segments([Segment(None, 0.2, 0.5, 0.4, 0.9, 1e-4, 2.5)], lib=library(build_info().lib_dir)).save(f)
    doc = json.loads(f.read_text())
    (doc if where == "o_pready" else doc["segments"][0])[where] = 1e308
    f.write_text(json.dumps(doc))
    samples = tmp_path / "p2p.json"
    samples.write_text(json.dumps(p2p_doc_with_samples([5.0, 6.0], [1.0, 1.0])))
    assert_clean_error(run_cli("advise", str(samples), "--loggp", str(f)), "advise", 2, str(f), where)
    assert_clean_error(run_cli("model", "--params", str(f), "-m", "1K:4K"), "model", 2, str(f), where)


def test_loggp_file_that_is_a_folder(tmp_path):
    # the library's reader said only "DIR: read error"
    assert_clean_error(run_cli("model", "--params", str(tmp_path), "-m", "1K:4K"), "model", 2, str(tmp_path),
                       "cannot read it (Is a directory)")


def test_trace_leaves_no_empty_default_folder(tmp_path, monkeypatch, capsys):
    """Without --out the folder results/<timestamp>-trace was made before the program ran and kept
    empty when it wrote no trace; a file named results stopped trace with a traceback."""
    from partita.cli import main
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PARTITA_BUILD", str(build_info().path))
    (tmp_path / "results").write_text("not a folder")
    assert main(["trace", "--", "true"]) == 2
    assert "partita trace: error: cannot create the trace folder in results" in capsys.readouterr().err
    (tmp_path / "results").unlink()
    assert main(["trace", "--", "true"]) == 1
    assert "wrote no trace" in capsys.readouterr().err
    assert not any((tmp_path / "results").iterdir())


def test_a_saved_table_follows_a_symlink_and_writes_through_a_device(tmp_path):
    """tune -o and loggp -o save through a file renamed into place: renamed onto a symlink it replaced
    the link, onto a device (-o /dev/null, as root) it replaced the device with a regular file."""
    from partita.results import write_json_atomically
    target = tmp_path / "table.json"
    target.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_json_atomically(link, {"a": 1})
    assert link.is_symlink() and json.loads(target.read_text()) == {"a": 1}
    if os.geteuid() == 0:  # a device node of its own (the machine's /dev/null is never risked)
        dev = tmp_path / "null"
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        write_json_atomically(dev, {"a": 1})
        assert stat.S_ISCHR(dev.stat().st_mode)
    assert sorted(f.name for f in tmp_path.iterdir()) == sorted(["table.json", "link.json"]
                                                                  + (["null"] if os.geteuid() == 0 else []))


def test_a_report_that_cannot_be_written_whole_leaves_the_last_one(tmp_path):
    """The report was written in place: a full disk (here a file size limit) left half a page where
    the last report was."""
    import resource
    import subprocess
    import sys
    folder = results_folder(tmp_path / "r", json.dumps(result_doc()))
    (folder / "report.html").write_text("the last report\n")

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    p = subprocess.run([sys.executable, "-m", "partita.cli", "report", str(folder)], capture_output=True, text=True,
                       env={**os.environ, "PARTITA_BUILD": str(build_info().path)}, preexec_fn=small_files,
                       timeout=300)
    assert_clean_error(p, "report", 2, str(folder / "report.html"))
    assert (folder / "report.html").read_text() == "the last report\n"
    assert sorted(f.name for f in folder.iterdir()) == ["manifest.json", "p2p-native.json", "report.html"]


@pytest.mark.parametrize("args, words", [
    (["status", "--hosts", "4"], "--hosts: only with `up`"),         # ignored: status of the 2-host cluster
    (["status", "--rate", "1gbit", "--mtu", "1500"], "--rate, --mtu: only with `up`"),
    (["up", "--rate", ""], "--rate is empty"),                       # cluster.sh: "line 171: 2: parameter null"
])
def test_cluster_options_that_would_do_nothing(args, words):
    assert_clean_error(run_cli("cluster", *args), "cluster", 2, words)


# -- outputs that break their input, or go where no folder is ----------------------------------

@pytest.mark.parametrize("option", ["--perfetto", "--plot"])
@pytest.mark.parametrize("name", ["rank-00000.json", "rank-00009.json", "sub/../rank-7.json"])
def test_trace_export_never_writes_a_rank_file_of_its_trace(tmp_path, option, name):
    # a new rank-*.json in the folder (or one written over) broke every later read of the trace
    folder = trace_folder(tmp_path / "t")
    (folder / "sub").mkdir()
    before = {f.name: f.read_text() for f in folder.glob("rank-*.json")}
    p = run_cli("trace", "export", str(folder), option, str(folder / name))
    assert_clean_error(p, "trace export", 2, f"{option} {folder / name}: a rank file of the trace folder")
    assert {f.name: f.read_text() for f in folder.glob("rank-*.json")} == before


@pytest.mark.parametrize("command, option", [(["report", "R", "-o"], "-o"), (["trace", "export", "T", "--plot"], "--plot"),
                                             (["trace", "export", "T", "--perfetto"], "--perfetto"),
                                             (["model", "-m", "1K:4K", "-p", "4", "--plot"], "--plot")])
def test_an_output_file_in_a_folder_that_does_not_exist(tmp_path, command, option):
    """report -o made the missing folders (at the file system's root too), trace export --plot failed
    with a bare '[Errno 2] ...': an output file's folder must exist."""
    target = tmp_path / "missing" / "deeper" / "out.png"
    folders = {"R": str(results_folder(tmp_path / "r", json.dumps(result_doc()))), "T": str(trace_folder(tmp_path / "t"))}
    p = run_cli(*[folders.get(w, w) for w in command], str(target))
    name = " ".join(command[:2]) if command[0] == "trace" else command[0]
    assert_clean_error(p, name, 2, f"{option} {target}: the folder {target.parent} does not exist")
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize("request_n", ["99", "-1"])
def test_trace_export_checks_the_request_without_plot_too(tmp_path, request_n):
    # --request was checked only with --plot, and silently ignored without it
    folder = trace_folder(tmp_path / "t")
    out = tmp_path / "p.json"
    p = run_cli("trace", "export", str(folder), "--perfetto", str(out), "--request", request_n)
    assert_clean_error(p, "trace export", 2, f"no send request number {request_n}: the trace has 1")
    assert not out.exists()
    p = run_cli("trace", "export", str(folder), "--plot", str(tmp_path / "p.png"), "--request", request_n)
    assert_clean_error(p, "trace export", 2, f"no send request number {request_n}: the trace has 1")


def test_trace_whose_rank_files_give_different_rank_counts(tmp_path):
    # analysed as "2 of 2 ranks"
    from trace_helpers import rank_doc, write_trace
    s, r = good_trace_requests()
    folder = write_trace(tmp_path / "t", [rank_doc(1, 2, [r]), rank_doc(5, 8, [s])])
    assert_clean_error(run_cli("trace", "show", str(folder)), "trace show", 2, str(folder / "rank-00005.json"),
                       "rank 5 of 8", "rank 1 of 2")


# -- exit status of what found nothing --------------------------------------------------------

def test_summary_of_a_folder_where_nothing_ran(tmp_path):
    from report_helpers import write_folder
    folder = write_folder(tmp_path / "f", [("p2p", "native", "failed"), ("p2p", "partita:model", "unavailable")])
    p = run_cli("summary", str(folder))
    assert_clean_error(p, "summary", 1, f"nothing ran in {folder}: none of its 2 launch(es) gave a result")
    assert "nothing ran" in p.stdout, p.stdout      # the verdict says so
    assert_clean_error(run_cli("summary", str(folder), "--all"), "summary", 1, "nothing ran")


def test_compare_of_folders_with_nothing_in_common(tmp_path):
    a = results_folder(tmp_path / "a", json.dumps(result_doc()))
    b = results_folder(tmp_path / "b", json.dumps(result_doc(case={"bytes": 4096, "partitions": 8})))
    assert_clean_error(run_cli("compare", str(a), str(b)), "compare", 1, "nothing in common to compare", str(a), str(b))


@pytest.mark.parametrize("command", ["model", "tune"])
@pytest.mark.parametrize("sizes, partitions", [("1:1", "2"), ("1:2", "3"), ("1K:4K", "1048576")])
def test_model_and_tune_sizes_of_fewer_bytes_than_partitions(tmp_path, command, sizes, partitions):
    # the model printed a table for a message of 1 byte in 2 partitions
    p = run_cli(command, "-m", sizes, "-p", partitions, *(["-o", str(tmp_path / "t.json")] if command == "tune" else []))
    assert_clean_error(p, command, 2, "fewer bytes than", f"at least {partitions} bytes")
    assert "running:" not in p.stderr and not (tmp_path / "t.json").exists()


def test_model_table_skips_the_sizes_a_partition_count_cannot_cut():
    # -m 1:4K -p 1,8: 1 partition takes every size, 8 partitions skip 1, 2 and 4 bytes (as partita-p2p does);
    # tune, which measures, refuses such a range instead (above: nothing can run)
    p = run_cli("model", "-m", "1:4K", "-p", "1,8")
    assert p.returncode == 0, p.stderr
    assert "8 user partitions: skipped 3 size(s) of fewer bytes than partitions" in p.stdout
    assert "1 user partitions: skipped" not in p.stdout
    t = run_cli("tune", "-m", "1:4K", "-p", "8")
    assert_clean_error(t, "tune", 2, "fewer bytes than partitions", "at least 8 bytes")
