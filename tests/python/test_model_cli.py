"""`partita model`: the table, the figure, bad input, and --validate's arithmetic."""

from __future__ import annotations

import pytest

from model_helpers import build_info, run_cli
from partita.model import Params, library
from partita.model import validate as validation
from partita.model.experiments import Pattern


def test_model_prints_table_and_plots(tmp_path):
    png = tmp_path / "fig.png"
    r = run_cli("model", "-m", "1K:64M", "-p", "16", "--delay", "4000", "--plot", str(png))
    assert r.returncode == 0, r.stderr
    assert "Optimal transport partitions (powers of two) for 16 user partitions" in r.stdout
    assert "gain vs bulk" in r.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_model_uses_the_given_parameter_file(tmp_path):
    p = Params.default(library(build_info().lib_dir))
    f = tmp_path / "p.json"
    p.save(f)
    r = run_cli("model", "--params", str(f), "-m", "1K:4K", "-p", "4")
    assert r.returncode == 0 and f"LogGP parameters: {f}" in r.stdout


@pytest.mark.parametrize("args, why", [
    (["--params", "/nonexistent/loggp.json"], "/nonexistent/loggp.json"),
    (["-m", "3:8"], "powers of two"),
    (["-p", "0"], "--partitions"),
    (["-p", "4,,8"], "--partitions has an empty entry (got '4,,8')"),
    (["-p", "4,"], "--partitions has an empty entry"),
    (["--validate", "--delays", "50,,500"], "--delays has an empty entry"),
    (["--delay", "-5"], "--delay"),
])
def test_model_bad_input(args, why):
    r = run_cli("model", *args)
    assert r.returncode == 2
    assert "partita model: error:" in r.stderr and why in r.stderr


@pytest.mark.parametrize("args, named", [
    (["--delays", "1,2,x"], "--delays"),
    (["--threads", "0"], "--threads"),
    (["--quantile", "2", "-i", "5"], "--iterations, --quantile"),
    (["--json", "cases.json"], "--json"),
    (["--validate", "--pattern", "all"], "--pattern"),
    (["--validate", "--delay", "100", "--plot", "x.png"], "--delay, --plot"),
])
def test_model_refuses_an_option_of_the_other_mode(args, named):
    """An option the mode would ignore is an error that names it, before anything is measured."""
    r = run_cli("model", *args)
    assert r.returncode == 2, r.stdout
    assert r.stderr.startswith(f"partita model: error: {named}: only "), r.stderr
    assert r.stdout == ""


def test_model_warns_on_a_corrupt_default_file(tmp_path):
    bad = tmp_path / "loggp.json"
    bad.write_text("{")
    r = run_cli("model", "-m", "1K:2K", "-p", "2", env={"PARTITA_LOGGP": str(bad)})
    assert r.returncode == 0
    assert "warning" in r.stderr and str(bad) in r.stderr and "built-in defaults" in r.stdout


def test_validation_errors_against_known_measurements(monkeypatch):
    """validate() compares the model with what the runs report: feed it runs whose
    exposed times are the model's own prediction times 1.1 (bulk) and 0.8 (none)
    and whose ready spread is 3 us more than asked."""
    params = Params.default(library(build_info().lib_dir))
    factor = {"partita:bulk": 1.1, "partita:none": 0.8}

    def fake_run(build, impl, pattern, P, lo, hi, iters, warm):
        t = 1 if impl == "partita:bulk" else P if impl == "partita:none" else int(impl[len("partita:fixed"):])
        spread = (pattern.delay_us if pattern.name == "laggard" else 0.0) + 3.0
        ready = pattern.ready(P, spread)
        out = {}
        m = lo
        while m <= hi:
            exposed = (params.grouped_us(m, P, t, ready) - spread) * factor.get(impl, 1.0)
            out[m] = {"t_part_us": {"summary": {"median": spread + exposed}},
                      "t_last_us": {"summary": {"median": exposed}}}
            m *= 2
        return out

    monkeypatch.setattr(validation, "run_cases", fake_run)
    cases = validation.validate(None, params, (16384, 32768), [4], [100.0], 5, 1)
    # 2 patterns x 3 groupings (1, 2, 4) x 2 sizes
    assert len(cases) == 12
    assert all(c.spread_us == pytest.approx(3.0 if c.pattern == "all-at-once" else 103.0) for c in cases)
    errs = {round(abs(c.error_last), 6) for c in cases}
    assert errs == {round(1 - 1 / 1.1, 6), round(1 / 0.8 - 1, 6), 0.0}
    s = validation.summary(cases)
    assert s["cases"] == 12 and s["median_abs_error_last"] == pytest.approx(1 - 1 / 1.1)
    doc = validation.as_json(cases, params, {})
    assert doc["schema"] == "partita.validation/1" and len(doc["cases"]) == 12
    assert Pattern("laggard", 100).bench_args(4)[-3:] == ["delay:100", "--noise-thread", "0"]
    assert Pattern("laggard", 100, threads=2).ready(5) == [100.0, 0.0, 100.0, 0.0, 100.0]
    assert Pattern("laggard", 100, threads=2).bench_args(5)[:2] == ["--threads", "2"]
    assert Pattern("all", 0).ready(3, 2.0) == [0.0, 1.0, 2.0]


def test_laggard_of_no_delay_runs_without_noise():
    """partita-p2p refuses --noise delay:0, which adds nothing: the laggard pattern 0 us late (`partita model
    --validate --delays 0`) is its threads without noise, not a run that stops with that error."""
    assert Pattern("laggard", 0.0, threads=2).bench_args(4) == ["--threads", "2", "--compute", "0",
                                                               "--compute-mode", "sleep"]
    assert Pattern("laggard", 0.0, threads=2).ready(4) == [0.0, 0.0, 0.0, 0.0]
    assert Pattern("laggard", 0.5).bench_args(2)[-4:] == ["--noise", "delay:0.5", "--noise-thread", "0"]


def test_quantile_of_samples():
    from partita.model.experiments import quantile
    m = {"t": {"summary": {"median": 99.0}, "samples": [4.0, 1.0, 3.0, 2.0, 5.0]}}
    assert quantile(m, "t") == 99.0            # the harness's median
    assert quantile(m, "t", 0.25) == 2.0
    assert quantile(m, "t", 0.1) == pytest.approx(1.4)
    assert quantile(m, "t", 0.0) == 1.0


def test_model_plot_names_the_file_it_writes_and_refuses_an_unknown_format(tmp_path):
    r = run_cli("model", "-m", "1K:4K", "-p", "4", "--plot", str(tmp_path / "fig"))
    assert r.returncode == 0, r.stderr
    assert f"figure: {tmp_path / 'fig.png'}" in r.stdout       # matplotlib adds .png: say so
    assert (tmp_path / "fig.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("name, why", [
    ("fig.txt", "matplotlib cannot write a .txt figure"),
    ("folder", "is a folder"),
    ("no/fig.png", "does not exist"),
])
def test_model_plot_that_cannot_be_written_is_refused_before_the_table(tmp_path, name, why):
    (tmp_path / "folder").mkdir()
    r = run_cli("model", "-m", "1K:4K", "-p", "4", "--plot", str(tmp_path / name))
    assert "Traceback" not in r.stderr and r.returncode == 2, r.stderr
    assert r.stderr.startswith("partita model: error: --plot ") and why in r.stderr, r.stderr
    assert r.stdout == ""  # no table printed before the error
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder"]


def test_model_plot_needs_a_size_the_first_partition_count_fits():
    r = run_cli("model", "-m", "1:2", "-p", "4,1", "--plot", "never.png")
    assert r.returncode == 2 and "no size of at least 4 bytes to plot for 4 partitions" in r.stderr, r.stderr
    assert r.stdout == ""


@pytest.mark.parametrize("args, why", [
    (["-m", "1K:4K", "--json", "cases.json"], "--json"),                 # only --validate writes cases
    (["--validate", "--plot", "fig.png"], "--plot"),                     # --validate draws nothing
    (["--validate", "--json", "."], "is a directory"),                   # refused before measuring
])
def test_model_options_that_would_be_ignored_are_refused(tmp_path, args, why):
    r = run_cli(*[a if a not in ("cases.json", "fig.png", ".") else str(tmp_path / a) for a in ["model", *args]])
    assert "Traceback" not in r.stderr and r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith("partita model: error: ") and why in r.stderr, r.stderr
    assert "running:" not in r.stderr and list(tmp_path.iterdir()) == []


def test_validate_json_that_cannot_be_written_is_a_clear_error(tmp_path, monkeypatch, capsys):
    from partita import cli

    folder = tmp_path / "out"
    folder.mkdir()

    def fake_run(build, impl, pattern, P, lo, hi, iters, warm):
        # the folder, there when the run started, goes away while it measures: a file there now
        if folder.is_dir():
            folder.rmdir()
            folder.write_text("")
        return {m: {"t_part_us": {"summary": {"median": 10.0}}, "t_last_us": {"summary": {"median": 5.0}}}
                for m in (lo, hi)}

    monkeypatch.setattr(validation, "run_cases", fake_run)
    rc = cli.main(["model", "--validate", "-m", "16K:32K", "-p", "4", "--delays", "50",
                   "--json", str(folder / "cases.json")])
    out, err = capsys.readouterr()
    assert rc == 2 and "median absolute error" in out      # the measurements were printed first
    assert f"partita model: error: cannot write {folder / 'cases.json'}" in err, err


@pytest.mark.parametrize("where, why", [
    ("no-such-folder/cases.json", "the folder {parent} does not exist"),
    ("a-file/cases.json", "{parent} is not a folder"),
])
def test_validate_json_whose_folder_is_missing_is_refused_before_measuring(tmp_path, monkeypatch, capsys, where, why):
    """The folder of --json was only found missing when the results were written, after every measurement."""
    from partita import cli

    measured = []
    monkeypatch.setattr(validation, "run_cases", lambda *a: measured.append(a) or {})
    (tmp_path / "a-file").write_text("")
    target = tmp_path / where
    rc = cli.main(["model", "--validate", "-m", "16K:32K", "-p", "4", "--delays", "50", "--json", str(target)])
    out, err = capsys.readouterr()
    assert rc == 2 and measured == [] and out == "", (out, err)
    assert err == f"partita model: error: --json {target}: {why.format(parent=target.parent)}\n", err


def test_the_defaults_the_help_states_are_the_ones_applied(monkeypatch, capsys):
    """Each mode's defaults are stated once: the help quotes them, a run without options uses them."""
    from partita import cli

    help_text = run_cli("model", "--help").stdout
    help_text = " ".join(help_text.split())  # argparse wraps it
    for said in ("(default 1K:256M; with --validate 16K:256K)", "(default 32; with --validate 4,8)",
                 "(default laggard)", "(default 4000)", "(default 50,500)", "default 2,", "(default 30)",
                 "(default 0.5,"):
        assert said in help_text, said
    r = run_cli("model")
    assert r.returncode == 0, r.stderr
    assert "for 32 user partitions, one partition 4000 us late:" in r.stdout
    sizes = [line.split()[0] for line in r.stdout.split("gain vs bulk")[1].strip().splitlines()]
    assert sizes[1] == "1KiB" and sizes[-1] == "256MiB", sizes  # (sizes[0]: the header's last word)

    measured = []

    def fake_run(build, impl, pattern, P, lo, hi, iters, warm):
        measured.append((pattern, P, lo, hi, iters))
        return {m: {"t_part_us": {"summary": {"median": 10.0}}, "t_last_us": {"summary": {"median": 5.0}}}
                for m in (lo, hi)}

    monkeypatch.setattr(validation, "run_cases", fake_run)
    assert cli.main(["model", "--validate"]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    assert {m[1] for m in measured} == {4, 8} and {(m[2], m[3]) for m in measured} == {(16384, 262144)}
    assert {m[4] for m in measured} == {30}
    assert "measured 0.5-quantile" in out
    assert {(m[0].delay_us, m[0].threads) for m in measured if m[0].name == "laggard"} == {(50.0, 2), (500.0, 2)}
