"""The partita CLI: real help everywhere, suites, summaries, bad input."""

import json
import re
import subprocess
import sys

import pytest

from partita import cli
from partita.launch import LaunchError, failure_lines, impl_env, parse_impl
from partita.suite import SuiteError, builtin_suites, load_suite, parse_suite
from partita.summary import summarize_group


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "partita.cli", *args], capture_output=True, text=True, timeout=120)


def test_every_subcommand_has_help():
    parser = cli.build_parser()
    names = [a for a in parser._subparsers._group_actions[0].choices]
    assert "run" in names and "summary" in names
    for name in names:
        p = run_cli(name, "--help")
        assert p.returncode == 0, name
        assert f"usage: partita {name}" in p.stdout
        assert len(p.stdout.splitlines()) > 4, f"{name} --help is too thin"


def test_top_level_help_lists_commands():
    p = run_cli("--help")
    assert p.returncode == 0 and "run" in p.stdout


def test_builtin_suites_parse():
    assert "quick" in builtin_suites()
    for name in builtin_suites():
        s = load_suite(name)
        assert s.runs, name


@pytest.mark.parametrize("data,msg", [
    ({}, "no [[run]]"),
    ({"run": [{"program": "x"}]}, "'name'"),
    ({"run": [{"name": "a", "program": "x", "np": 0}]}, "'np'"),
    ({"run": [{"name": "a", "program": "x", "colour": 1}]}, "unknown key"),
    ({"run": [{"name": "a", "program": "x"}, {"name": "a", "program": "y"}]}, "duplicate"),
    ({"run": [{"name": "a", "program": "x", "timeout": -1}]}, "'timeout'"),
    ({"run": [{"name": "a", "program": "x", "env": ["A=1"]}]}, "'env'"),
    ({"run": [{"name": "a", "program": "x", "description": 3}]}, "'description'"),
])
def test_bad_suites(data, msg):
    with pytest.raises(SuiteError, match=re.escape(msg)):
        parse_suite(data, "t", "t.toml")


def test_unknown_suite_and_bad_file(tmp_path):
    with pytest.raises(SuiteError, match="unknown suite"):
        load_suite("nonesuch")
    f = tmp_path / "bad.toml"
    f.write_text("run = [ {")
    with pytest.raises(SuiteError, match="invalid TOML"):
        load_suite(str(f))


def test_run_reports_bad_suite_cleanly(tmp_path):
    p = run_cli("run", "--suite", str(tmp_path / "missing.toml"), "--out", str(tmp_path))
    assert p.returncode == 2 and "no such suite file" in p.stderr


def test_impl_names(build):
    assert parse_impl("native") == ("native", None)
    assert parse_impl("partita:timer") == ("partita", "timer")
    assert parse_impl("partita:timer@fabric") == ("partita", "timer@fabric")
    for bad in ("partita", "mpich", "partita:", "partita:timer@", "partita:timer@verbs", "partita:@fabric"):
        with pytest.raises(LaunchError):
            parse_impl(bad)
    if build.interposer.is_file():
        env = impl_env(build, "partita:fixed4")
        assert env["PARTITA_POLICY"] == "fixed" and env["PARTITA_TRANSPORT_PARTS"] == "4"
        assert "PARTITA_TRANSPORT" not in env
        env = impl_env(build, "partita:fixed4@fabric")
        assert env["PARTITA_POLICY"] == "fixed" and env["PARTITA_TRANSPORT_PARTS"] == "4"
        assert env["PARTITA_TRANSPORT"] == "fabric"
        assert impl_env(build, "partita:none@mpi")["PARTITA_TRANSPORT"] == "mpi"


def fake_result(values):
    return {"schema": "partita.result/1", "benchmark": "p2p", "config": {"iterations": 3},
            "results": [{"case": {"bytes": b, "partitions": 4},
                         "metrics": {"overhead": {"unit": "ratio", "summary": {"median": v, "ci95_lo": v - 0.1,
                                                                               "ci95_hi": v + 0.1}}}}
                        for b, v in values]}


OPEN_MPI_ABORT = """partita: PARTITA_POLICY='nope' is not one of none|bulk|static|model|timer|fixed|table|adaptive
partita: PARTITA_POLICY='nope' is not one of none|bulk|static|model|timer|fixed|table|adaptive
--------------------------------------------------------------------------
MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD
  Errorcode: 1
--------------------------------------------------------------------------
--------------------------------------------------------------------------
prterun has exited due to process rank 1 with PID 0 on node vm calling
"abort". This may have caused other processes in the application to be
terminated by signals sent by prterun (as reported here).
--------------------------------------------------------------------------
"""


@pytest.mark.parametrize("stderr, want", [
    # Open MPI's closing notices came last and hid the reason
    (OPEN_MPI_ABORT, "partita: PARTITA_POLICY='nope' is not one of none|bulk|static|model|timer|fixed|table|adaptive"),
    ("partita-loggp: error: --message-size: got '5:3'\n   Process name: [prterun-vm-1@1,0]\n   Exit code:    2\n",
     "partita-loggp: error: --message-size: got '5:3'"),
    # MPICH's abort lines go; a failure with no message of its own keeps its last lines
    ("Abort(1) on node 0 (rank 0 in comm 0): application called MPI_Abort\n", "Abort(1) on node 0 (rank 0 in comm 0): "
     "application called MPI_Abort"),
    ("a\nb\nc\nd\ne\nf\ng\n", "c\nd\ne\nf\ng"),
])
def test_failure_lines_name_the_reason_not_the_launcher(stderr, want):
    assert failure_lines("", stderr) == want


def test_summary_puts_implementations_side_by_side():
    text = summarize_group("p2p", {"native": fake_result([(1024, 2.5), (2048, 3.0)]),
                                   "partita:timer": fake_result([(1024, 1.1)])})
    lines = text.splitlines()
    assert "native" in lines[1] and "partita:timer" in lines[1]
    row1024 = next(l for l in lines if l.startswith("1024"))
    assert "2.50 [2.40,2.60]" in row1024 and "1.10 [1.00,1.20]" in row1024
    row2048 = next(l for l in lines if l.startswith("2048"))
    assert row2048.rstrip().endswith("-"), "a case one implementation lacks shows '-'"


def test_summary_command_rejects_non_results(tmp_path):
    p = run_cli("summary", str(tmp_path))
    assert p.returncode == 2 and "manifest.json" in p.stderr


def write_folder(path, values):
    path.mkdir()
    (path / "p2p-native.json").write_text(json.dumps(fake_result(values)))
    (path / "manifest.json").write_text(json.dumps({
        "schema": "partita.run/1", "suite": "t",
        "runs": [{"name": "p2p", "impl": "native", "status": "ok", "result": "p2p-native.json"}]}))


def test_compare_marks_significant_changes(tmp_path):
    from partita.compare import compare_folders
    write_folder(tmp_path / "a", [(1024, 2.0), (2048, 3.0)])
    write_folder(tmp_path / "b", [(1024, 2.05), (2048, 1.0)])
    rows = {r["case"]["bytes"]: r for r in compare_folders(tmp_path / "a", tmp_path / "b")}
    assert rows[1024]["verdict"] == "same"          # CIs [1.9,2.1] and [1.95,2.15] overlap
    assert rows[2048]["verdict"] == "lower"
    assert rows[2048]["ratio"] == pytest.approx(1 / 3)
    p = run_cli("compare", str(tmp_path / "a"), str(tmp_path / "b"))
    assert p.returncode == 0 and "lower" in p.stdout
    p = run_cli("compare", str(tmp_path / "a"), str(tmp_path / "nothing"))
    assert p.returncode == 2 and "manifest.json" in p.stderr


def test_compare_rows_tell_the_cases_apart(tmp_path):
    """A pattern run's cases differ by strategy, a mech run's by mechanism and scheme: the rows
    showed bytes, partitions and threads only, so halo3d's single and multiple read alike."""
    from partita.compare import compare_folders, format_rows
    from report_helpers import mech, pattern, write_folder as write_results

    runs = [("halo3d", "native", pattern("halo3d", {"single": 400.0, "multiple": 300.0, "partitioned": 250.0})),
            ("mech", "native", mech())]
    a, b = write_results(tmp_path / "a", runs), write_results(tmp_path / "b", runs)
    rows = format_rows(compare_folders(a, b)).splitlines()[1:]
    keys = [tuple(line.split()[:4]) for line in rows]  # run, impl, case, metric
    assert len(keys) == len(set(keys)), "two rows of one run and metric with the same case"
    assert any("strategy=multiple" in line for line in rows)
    assert any("scheme=random" in line and "mechanism=psend" in line for line in rows)
    assert not any("partition_bytes" in line for line in rows), "bytes and partitions determine it"


def test_compare_names_the_settings_that_differ(tmp_path):
    """p2p-noise with delay:200us and compute 300 us against delay:500us and 1000 us: compare matched the
    cases by size and called early_bird 'higher' without a word that the runs measured other things."""
    from report_helpers import write_folder as write_results

    a_doc, b_doc = p2p_result(noise="delay:200us", compute=300), p2p_result(noise="delay:500us", compute=1000)
    a = write_results(tmp_path / "a", [("p2p-noise", "native", a_doc)])
    b = write_results(tmp_path / "b", [("p2p-noise", "native", b_doc)])
    p = run_cli("compare", str(a), str(b))
    assert p.returncode == 0, p.stderr
    note = next(line for line in p.stdout.splitlines() if line.startswith("# note: p2p-noise (native)"))
    assert "compute_us 300 -> 1000" in note and "noise delay:200us -> delay:500us" in note
    p = run_cli("compare", str(a), str(a))
    assert "# note" not in p.stdout


def p2p_result(noise: str, compute: int) -> dict:
    from report_helpers import p2p

    doc = p2p("native", noisy=True)
    doc["config"] |= {"noise": noise, "compute_us": compute}
    return doc


def test_run_description_is_kept():
    s = parse_suite({"run": [{"name": "a", "program": "x", "description": "Fig. 4, 1/10 scale"},
                             {"name": "b", "program": "x"}]}, "t", "t.toml")
    assert [r.description for r in s.runs] == ["Fig. 4, 1/10 scale", ""]


def test_suite_env_is_kept():
    s = parse_suite({"run": [{"name": "a", "program": "x", "env": {"PARTITA_PROGRESS_THREAD": "1"}}]}, "t", "t.toml")
    assert s.runs[0].env == {"PARTITA_PROGRESS_THREAD": "1"}


def test_an_interrupted_run_keeps_the_launches_that_finished(tmp_path, monkeypatch):
    """Ctrl-C during a long suite: the launches that finished are recorded in the manifest, so
    summary, compare and report still read them."""
    from partita import runner
    from partita.launch import BuildInfo, RunOutcome
    from partita.results import load_run_dir
    from report_helpers import p2p

    suite = parse_suite({"run": [{"name": "p2p", "program": "partita-p2p", "repeat": 3}]}, "t", "t.toml")
    calls = []

    def fake_run_program(build, program, args, json_out=None, **kw):
        calls.append(json_out)
        if len(calls) == 3:
            raise KeyboardInterrupt
        json_out.write_text(json.dumps(p2p()))
        return RunOutcome(["prog"], {}, 0, "", "", p2p())

    monkeypatch.setattr(runner, "run_program", fake_run_program)
    monkeypatch.setattr(runner, "impl_env", lambda build, impl: {})
    build = BuildInfo(tmp_path, tmp_path, tmp_path, "mpiexec", "-n", "mpich", True)
    with pytest.raises(KeyboardInterrupt):
        runner.run_suite(suite, build, tmp_path, log=open(tmp_path / "progress.txt", "w"))
    manifest = load_run_dir(tmp_path)
    assert [(r["launch"], r["status"]) for r in manifest["runs"]] == [(1, "ok"), (2, "ok")]
    assert "finished" not in manifest       # the suite did not end
    p = run_cli("summary", str(tmp_path))
    assert p.returncode == 0 and "# verdict of" in p.stdout, p.stderr


def test_each_launch_gets_its_number_where_the_suite_asks(tmp_path, monkeypatch):
    """partita-adapt-bench's -l relabels its implementations in the rounds' order: every launch of the
    library suite ran it with none (-l 0), so all five shared one order. "{launch}" in a run's args is
    the launch number in the command; the manifest keeps the args as written, which is how the summary
    pools the launches of one run."""
    from partita import runner
    from partita.launch import BuildInfo, RunOutcome
    from partita.results import load_run_dir
    from report_helpers import p2p

    suite = parse_suite({"run": [{"name": "p2p", "program": "partita-p2p", "repeat": 3,
                                  "args": ["-i", "5", "-l", "{launch}"]}]}, "t", "t.toml")
    commands = []

    def fake_run_program(build, program, args, json_out=None, **kw):
        commands.append(list(args))
        json_out.write_text(json.dumps(p2p()))
        return RunOutcome([program, *args], {}, 0, "", "", p2p())

    monkeypatch.setattr(runner, "run_program", fake_run_program)
    monkeypatch.setattr(runner, "impl_env", lambda build, impl: {})
    build = BuildInfo(tmp_path, tmp_path, tmp_path, "mpiexec", "-n", "mpich", True)
    runner.run_suite(suite, build, tmp_path, log=open(tmp_path / "progress.txt", "w"))
    assert commands == [["-i", "5", "-l", str(k)] for k in (1, 2, 3)]
    manifest = load_run_dir(tmp_path)
    assert [r["args"] for r in manifest["runs"]] == [["-i", "5", "-l", "{launch}"]] * 3
    assert [r["command"][-1] for r in manifest["runs"]] == ["1", "2", "3"]


def test_the_side_by_side_runs_number_their_launches():
    """Every partita-adapt-bench run of a built-in suite passes its launch number as -l."""
    for name in builtin_suites():
        for run in load_suite(name).runs:
            if run.program == "partita-adapt-bench":
                assert "-l" in run.args and run.args[run.args.index("-l") + 1] == "{launch}", (name, run.name)


def test_python_dash_m_partita_runs_the_command():
    """`python -m partita` ended with "No module named partita.__main__"."""
    p = subprocess.run([sys.executable, "-m", "partita", "--help"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.startswith("usage: partita")
