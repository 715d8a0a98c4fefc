"""Hostile input to the partita CLI: every case ends in a `partita CMD: error: ...` line that
names the file or value and a non-zero exit, never a traceback or a silent success."""

from __future__ import annotations

import json
import math

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


def result_doc(median=2.0, lo=1.9, hi=2.1):
    return {"schema": "partita.result/1", "benchmark": "p2p", "config": {"iterations": 3},
            "results": [{"case": {"bytes": 1024, "partitions": 4},
                         "metrics": {"overhead": {"unit": "ratio",
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


@pytest.mark.parametrize("impl", ["bogus", "partita:", "native,partita", ","])
def test_run_with_a_bad_implementation(tmp_path, build_dir, impl):
    p = run_cli("run", "--build", build_dir, "--out", str(tmp_path), "--impl", impl)
    assert_clean_error(p, "run", 2, "implementation")
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


def test_summary_all_with_a_median_that_is_not_a_number(tmp_path):
    """A median written as a string is not a number: '-' in the tables (as the verdict and
    compare treat it), not a traceback."""
    folder = results_folder(tmp_path / "f", json.dumps(result_doc(median="2.0")))
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


def test_verdict_leaves_out_a_nan_median(tmp_path):
    """A case whose median is NaN is not a measurement: the verdict's median over the cases is
    taken over the others, and the NaN never takes (or hides) the best mark."""
    from partita.report import verdict
    from report_helpers import p2p, write_folder
    bad = p2p("native", 1.0)
    for c in bad["results"]:
        if c["case"]["partitions"] > 1 and c["case"]["bytes"] < 1 << 20:   # two of the three cases
            c["metrics"]["overhead"]["summary"]["median"] = math.nan
    folder = write_folder(tmp_path / "f", [("p2p", "native", bad), ("p2p", "partita:model", p2p("partita:model", 2.0))])
    _, h = verdict([folder])
    rows = {r[0]: r[1] for r in h.rows}
    assert "nan" not in rows["native"] and rows["native"].endswith("*"), rows
    assert not rows["partita:model"].endswith("*"), rows
