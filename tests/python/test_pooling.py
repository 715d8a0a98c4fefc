"""Repeated launches: the suite's `repeat`, the launch order, and pooling in summaries and comparisons."""

import io
import json
import math
import re

import pytest

from partita.compare import compare_folders, format_rows
from partita.pooling import pool_launches
from partita.report import print_run_summary
from partita.runner import launch_order
from partita.stats import median_ci95, quantile_sorted, summarize
from partita.suite import SuiteError, parse_suite


def result(samples: list[float], validation="pass") -> dict:
    """A partita-p2p-like result with one case and one metric."""
    return {"schema": "partita.result/1", "benchmark": "p2p", "program": "partita-p2p",
            "environment": {"ranks": 2, "mpi_library": "test"}, "config": {"iterations": len(samples),
                                                                          "metric": "overhead"},
            "results": [{"case": {"bytes": 4096, "partitions": 4, "threads": 16}, "validation": validation,
                         "metrics": {"overhead": {"unit": "ratio", "definition": "d", "samples": samples,
                                                  "summary": summarize(samples)}}}]}


def test_summary_statistics():
    s = summarize([5, 1, 4, 2, 3, None])  # a null sample (not a number) is left out
    assert s["n"] == 5 and s["median"] == 3 and s["min"] == 1 and s["max"] == 5
    assert s["mean"] == 3 and math.isclose(s["stdev"], math.sqrt(2.5))
    assert (s["ci95_lo"], s["ci95_hi"]) == (1, 5)  # n < 6: [min, max]
    x = list(range(1, 101))
    assert quantile_sorted(x, 0.05) == pytest.approx(5.95)
    lo, hi = median_ci95(x)  # j = floor(50 - 9.8) = 40, k = ceil(51 + 9.8) = 61
    assert (lo, hi) == (40, 61)
    assert summarize([])["median"] is None


def test_pooled_median_and_interval_cover_every_launch():
    a = result([1.0 + 0.001 * i for i in range(50)])   # launch 1: median ~1.02
    b = result([2.0 + 0.001 * i for i in range(50)])   # launch 2: median ~2.02
    p = pool_launches([a, b])
    s = p["results"][0]["metrics"]["overhead"]["summary"]
    assert p["launches"] == 2 and s["n"] == 100
    assert len(p["results"][0]["metrics"]["overhead"]["samples"]) == 100
    assert s["launch_medians"] == [a["results"][0]["metrics"]["overhead"]["summary"]["median"],
                                   b["results"][0]["metrics"]["overhead"]["summary"]["median"]]
    # the pooled CI alone would sit between the launches; it is widened to both medians
    assert s["ci95_lo"] <= min(s["launch_medians"]) and s["ci95_hi"] >= max(s["launch_medians"])
    assert 1.0 < s["median"] < 2.1
    # the inputs are not changed
    assert len(a["results"][0]["metrics"]["overhead"]["samples"]) == 50


def test_one_launch_is_left_as_it_is():
    a = result([1.0, 2.0, 3.0])
    assert pool_launches([a]) is a


def test_a_failed_validation_in_any_launch_fails_the_pool():
    p = pool_launches([result([1.0] * 10), result([1.0] * 10, validation="fail")])
    assert p["results"][0]["validation"] == "fail"


def test_suite_repeat_parsing_and_interleaved_order():
    s = parse_suite({"repeat": 2, "run": [{"name": "a", "program": "x", "impl": ["n", "m"]},
                                          {"name": "b", "program": "y", "repeat": 1}]}, "t", "t.toml")
    assert [r.repeat for r in s.runs] == [2, 1]
    order = [(r.name, impl, k) for r, impl, k, _ in launch_order(s)]
    assert order == [("a", "n", 1), ("a", "m", 1), ("a", "n", 2), ("a", "m", 2), ("b", "native", 1)]
    assert [(r.name, k, n) for r, _, k, n in launch_order(s, ["z"], 3)] == \
        [("a", 1, 3), ("a", 2, 3), ("a", 3, 3), ("b", 1, 3), ("b", 2, 3), ("b", 3, 3)]


@pytest.mark.parametrize("data", [{"repeat": 0, "run": [{"name": "a", "program": "x"}]},
                                  {"run": [{"name": "a", "program": "x", "repeat": "3"}]},
                                  {"run": [{"name": "a", "program": "x", "repeat": True}]}])
def test_bad_repeat(data):
    with pytest.raises(SuiteError, match=re.escape("'repeat' must be a positive whole number")):
        parse_suite(data, "t", "t.toml")


def folder(tmp_path, name, launches: dict[str, list[list[float]]]):
    """A results folder as `partita run` writes it: impl -> the samples of each launch."""
    d = tmp_path / name
    d.mkdir()
    runs = []
    for impl, per_launch in launches.items():
        for k, samples in enumerate(per_launch, 1):
            f = f"ovh-{impl}-{k}.json"
            (d / f).write_text(json.dumps(result(samples)))
            runs.append({"name": "ovh", "program": "partita-p2p", "impl": impl, "status": "ok", "result": f,
                         "launch": k, "launches": len(per_launch)})
    (d / "manifest.json").write_text(json.dumps({"schema": "partita.run/1", "suite": "t", "runs": runs}))
    return d


def test_summary_and_compare_pool_the_launches(tmp_path):
    d = folder(tmp_path, "r", {"native": [[3.0] * 20, [5.0] * 20], "model": [[1.0] * 20, [1.2] * 20]})
    text = io.StringIO()
    print_run_summary(d, json.loads((d / "manifest.json").read_text()), out=text)
    out = text.getvalue()
    assert "over 2 launches x 20 iterations" in out
    row = [line for line in out.splitlines() if line.startswith("4096")][0]
    assert "4.00 [3.00,5.00]" in row and "1.10 [1.00,1.20]" in row
    other = folder(tmp_path, "s", {"native": [[4.0] * 20], "model": [[1.1] * 20]})
    rows = {r["impl"]: r for r in compare_folders(d, other)}
    assert rows["native"]["a"] == 4.0 and rows["native"]["verdict"] == "same"
    assert rows["model"]["a"] == pytest.approx(1.1)
    # a long case label never runs into the next column
    for line in format_rows(list(rows.values())).splitlines():
        assert len(re.split(r"\s{2,}", line.strip())) == 8, line
