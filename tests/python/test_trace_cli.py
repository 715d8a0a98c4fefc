"""partita trace / advise / project on the command line: output, and errors without tracebacks."""

from __future__ import annotations

from model_helpers import run_cli
from test_trace_analysis import laggard_trace
from trace_helpers import rank_doc, write_trace

from partita.commands.trace import preload_with_tracer


def no_traceback(p):
    assert "Traceback" not in p.stderr and "Traceback" not in p.stdout


def test_show_prints_the_analysis(tmp_path):
    t = laggard_trace(tmp_path)
    p = run_cli("trace", "show", str(t.folder), timeout=120)
    no_traceback(p)
    assert p.returncode == 0, p.stderr
    assert "laggard: thread 5 is last in" in p.stdout and "min δ" in p.stdout
    assert "MPI share of run time" in p.stdout


def test_show_names_a_corrupt_file(tmp_path):
    t = laggard_trace(tmp_path)
    (t.folder / "rank-00001.json").write_text('{"format": "partita.trace/1", "rank": 1, "si')
    p = run_cli("trace", "show", str(t.folder), timeout=120)
    no_traceback(p)
    assert p.returncode == 2
    assert "partita trace show: error:" in p.stderr and "rank-00001.json: truncated" in p.stderr


def test_advise_explains_itself(tmp_path):
    t = laggard_trace(tmp_path, partitions=8)
    p = run_cli("advise", str(t.folder), timeout=120)
    no_traceback(p)
    assert p.returncode == 0, p.stderr
    assert "your 8 partitions of 1KiB are ready within" in p.stdout and "thread 5" in p.stdout
    assert "expected time after the last MPI_Pready" in p.stdout and "*" in p.stdout


def test_advise_and_project_errors(tmp_path):
    for args in (["advise", str(tmp_path / "none")], ["project", str(tmp_path / "none"), "--speedup", "2"]):
        p = run_cli(*args, timeout=120)
        no_traceback(p)
        assert p.returncode == 2 and f"partita {args[0]}: error:" in p.stderr and "none" in p.stderr
    t = write_trace(tmp_path / "t", [rank_doc(0, 1, [])])
    p = run_cli("project", str(t), "--speedup", "0", timeout=120)
    no_traceback(p)
    assert p.returncode == 2 and "positive" in p.stderr
    p = run_cli("project", str(t), timeout=120)
    assert p.returncode == 2 and "--speedup" in p.stderr


def test_project_prints_the_projection_and_assumptions(tmp_path):
    t = write_trace(tmp_path / "t", [rank_doc(0, 1, [], finalize_ns=1_000_000,
                                              mpi_time_ns={"p2p": 500_000, "collective": 0, "partitioned": 0})])
    p = run_cli("project", str(t), "--speedup", "2", timeout=120)
    no_traceback(p)
    assert p.returncode == 0 and "projected application speedup: 1.333x" in p.stdout and "assumptions" in p.stdout


def test_trace_without_command_or_with_nothing_written(tmp_path):
    p = run_cli("trace", timeout=120)
    no_traceback(p)
    assert p.returncode == 2 and "nothing to run" in p.stderr
    # `true` never calls MPI_Finalize: no trace (or, without the tracer built, a clear error)
    p = run_cli("trace", "--out", str(tmp_path / "o"), "--", "true", timeout=120)
    no_traceback(p)
    assert p.returncode != 0 and "partita trace: error:" in p.stderr
    assert not (tmp_path / "o").exists(), "the empty trace folder it made was left behind"
    kept = tmp_path / "kept"  # a folder that was there before is the user's: it stays
    kept.mkdir()
    p = run_cli("trace", "--out", str(kept), "--", "true", timeout=120)
    assert p.returncode != 0 and kept.is_dir()
    p = run_cli("trace", "export", str(tmp_path), timeout=120)
    assert p.returncode == 2 and "nothing to export" in p.stderr


def test_preload_order():
    assert preload_with_tracer("/l/t.so", "", "before") == ("/l/t.so", False)
    assert preload_with_tracer("/l/t.so", "/a/x.so", "after") == ("/l/t.so:/a/x.so", False)
    assert preload_with_tracer("/l/t.so", "/b/libpartita-mpi.so:/a/x.so", "before") == \
        ("/l/t.so:/b/libpartita-mpi.so:/a/x.so", True)
    assert preload_with_tracer("/l/t.so", "/b/libpartita-mpi.so /a/x.so", "after") == \
        ("/b/libpartita-mpi.so:/l/t.so:/a/x.so", True)


def test_advise_help_names_each_native_path_and_every_candidate():
    """The help said every count is sent 'one message per partition (what the MPI library does
    natively)': MPICH's native path is one message once every partition is ready, a candidate the
    help left out."""
    p = run_cli("advise", "--help", timeout=120)
    assert p.returncode == 0
    text = " ".join(p.stdout.split())
    assert "what the MPI library does natively" not in text
    assert "one message once every partition is ready (at P only: libpartita's bulk; MPICH's native path)" in text
    assert max(len(line) for line in p.stdout.splitlines()) <= 100, "the description is wrapped"
    p = run_cli("project", "--help", timeout=120)  # the same raw formatter: one 312-character line
    assert p.returncode == 0 and max(len(line) for line in p.stdout.splitlines()) <= 100


def test_trace_usage_lists_every_form_with_its_options():
    """The usage line left out show's --loggp and export's --request (one 126-character line)."""
    p = run_cli("trace", "--help", timeout=120)
    assert p.returncode == 0
    usage = p.stdout.split("\n\n")[0]
    assert "show DIR [--loggp FILE]" in usage and "[--request N]" in usage and "[--build DIR]" in usage
    assert max(len(line) for line in usage.splitlines()) <= 100


def test_export_with_a_figure_suffix_matplotlib_cannot_write_writes_nothing(tmp_path):
    """--plot out.txt failed after the timeline was written: exit 2 with one of two outputs."""
    t = laggard_trace(tmp_path, rounds=3)
    timeline = tmp_path / "timeline.json"
    p = run_cli("trace", "export", str(t.folder), "--perfetto", str(timeline), "--plot", str(tmp_path / "a.txt"),
                timeout=120)
    no_traceback(p)
    assert p.returncode == 2 and "txt" in p.stderr
    assert not timeline.exists()


def test_export_of_a_trace_with_nothing_to_draw_writes_no_timeline(tmp_path):
    """No partitioned send: --plot fails; the timeline had been written first (exit 2, one output)."""
    t = write_trace(tmp_path / "t", [rank_doc(0, 2, []), rank_doc(1, 2, [])])
    timeline = tmp_path / "timeline.json"
    p = run_cli("trace", "export", str(t), "--perfetto", str(timeline), "--plot", str(tmp_path / "a.png"), timeout=120)
    no_traceback(p)
    assert p.returncode == 2 and "no send request with a recorded round" in p.stderr
    assert not timeline.exists()


def test_options_of_running_a_program_are_refused_with_show_and_export(tmp_path):
    """`partita trace --out X show DIR` printed the analysis and ignored --out (and --order, --build)."""
    t = laggard_trace(tmp_path, rounds=3)
    for words in (["--out", str(tmp_path / "o"), "show", str(t.folder)],
                  ["--order", "after", "export", str(t.folder), "--plot", str(tmp_path / "x.png")]):
        p = run_cli("trace", *words, timeout=120)
        no_traceback(p)
        assert p.returncode == 2 and "for running a program" in p.stderr and words[0] in p.stderr
    assert not (tmp_path / "x.png").exists()


def test_export_of_a_trace_without_partitioned_requests_writes_no_empty_timeline(tmp_path):
    """A program that never made a partitioned request: --perfetto wrote a timeline of two process
    names and nothing else, and said 'timeline: FILE'."""
    t = write_trace(tmp_path / "t", [rank_doc(0, 2, []), rank_doc(1, 2, [])])
    timeline = tmp_path / "timeline.json"
    p = run_cli("trace", "export", str(t), "--perfetto", str(timeline), timeout=120)
    no_traceback(p)
    assert p.returncode == 2 and "no partitioned request" in p.stderr and not timeline.exists()


def test_tracing_a_program_without_partitioned_calls_points_to_project_not_advise(tmp_path):
    """The closing line sent the user to `partita advise`, which then fails: no partitioned send."""
    import json
    import sys

    docs = json.dumps([rank_doc(0, 2, []), rank_doc(1, 2, [])])
    writer = ("import json, os, sys\n"
              "for d in json.loads(sys.argv[1]):\n"
              "    name = os.path.join(os.environ['PARTITA_TRACE'], 'rank-%05d.json' % d['rank'])\n"
              "    open(name, 'w').write(json.dumps(d))\n")
    p = run_cli("trace", "--out", str(tmp_path / "t"), "--", sys.executable, "-c", writer, docs, timeout=120)
    no_traceback(p)
    assert p.returncode == 0, p.stderr
    assert "partita advise" not in p.stdout and "partita project" in p.stdout


def test_order_after_without_libpartita_preloaded_is_refused(tmp_path):
    """--order after with no libpartita-mpi.so in LD_PRELOAD was ignored: the program ran on the MPI
    library alone, traced as if nothing had been asked."""
    import sys

    out = tmp_path / "t"
    p = run_cli("trace", "--order", "after", "--out", str(out), "--", sys.executable, "-c", "pass",
                env={"LD_PRELOAD": ""}, timeout=120)
    no_traceback(p)
    assert p.returncode == 2 and "--order after: LD_PRELOAD holds no libpartita-mpi.so" in p.stderr
    assert not out.exists()
