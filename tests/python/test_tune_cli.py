"""`partita tune`: early stopping, the table it writes, the model's gap, bad input."""

from __future__ import annotations

import json

import pytest

from model_helpers import build_info, run_cli
from partita.model import Params, Table, library
from partita.model import tune as tuning
from partita.model.experiments import Pattern


def fake_runs(times: dict[int, float], calls: list):
    """A benchmark whose median t_part for `transport` messages is times[transport] at every size."""
    def run(build, impl, pattern, P, lo, hi, iters, warm):
        t = 1 if impl == "partita:bulk" else P if impl == "partita:none" else int(impl[len("partita:fixed"):])
        calls.append((t, lo, hi, iters))
        out, m = {}, lo
        while m <= hi:
            med = times[t]
            out[m] = {"t_part_us": {"summary": {"median": med, "p05": med * 0.97, "p95": med * 1.03}}}
            m *= 2
        return out
    return run


def test_tune_stops_clearly_worse_candidates_and_keeps_the_best(monkeypatch, tmp_path):
    lib = library(build_info().lib_dir)
    params = Params.default(lib)
    calls: list = []
    # 1 and 2 close (both confirmed), 4 and 8 clearly worse (stopped after screening)
    monkeypatch.setattr(tuning, "run_cases", fake_runs({1: 10.0, 2: 10.4, 4: 20.0, 8: 40.0}, calls))
    entries = tuning.tune(None, params, (4096, 8192), [8], Pattern("all", 0.0), 30, 5, 1)
    assert [(e.bytes, e.partitions) for e in entries] == [(4096, 8), (8192, 8)]
    e = entries[0]
    assert e.best.transport == 1 and e.best.iterations == 30
    assert e.candidates[4].stopped_early and e.candidates[8].stopped_early
    assert not e.candidates[2].stopped_early
    confirmed = sorted({t for t, lo, hi, it in calls if it == 30})
    assert confirmed == [1, 2]
    # all ready at once: the model picks one message, which is the measured best
    assert e.model_transport == 1 and e.model_gap == 0.0
    doc = tuning.table_document(entries, Pattern("all", 0.0), params, 1.0)
    f = tmp_path / "t.json"
    f.write_text(json.dumps(doc))
    t = Table(f, lib)
    assert len(t) == 2 and t.lookup(4096, 8) == 1


def test_model_gap_is_relative_to_the_best(monkeypatch):
    params = Params.default(library(build_info().lib_dir))
    monkeypatch.setattr(tuning, "run_cases", fake_runs({1: 12.0, 2: 10.0}, []))
    [e] = tuning.tune(None, params, (4096, 4096), [2], Pattern("all", 0.0), 3, 3, 1)
    assert e.best.transport == 2 and e.model_transport == 1
    assert e.model_gap == pytest.approx(0.2)


@pytest.mark.parametrize("args, why", [
    (["-p", "1"], "--partitions"),
    (["-p", "4,,8"], "--partitions has an empty entry"),
    (["-m", "5:8"], "powers of two"),
    (["--screen", "1"], "--screen"),
    (["--delay", "inf"], "--delay"),
    (["--threads", "0"], "--threads: only with --delay"),
    (["--delay", "50", "--threads", "-1"], "--threads"),
    (["--delay", "50", "-p", "8,16", "--threads", "5000"], "--threads 5000: more threads than partitions"),
    (["--quantile", "1.5"], "--quantile"),
])
def test_tune_bad_input(args, why, tmp_path):
    """Refused before anything runs, and before the table's folder is made."""
    out = tmp_path / "new-folder" / "t.json"
    r = run_cli("tune", *args, "-o", str(out))
    assert r.returncode == 2 and "partita tune: error:" in r.stderr and why in r.stderr
    assert not out.parent.exists()


def test_tune_real_small_search(tmp_path):
    b = build_info()
    if not b.interposer.is_file():
        pytest.skip("libpartita-mpi.so is not built in this build")
    out = tmp_path / "tuning.json"
    r = run_cli("tune", "-m", "4K:8K", "-p", "2", "--screen", "3", "-i", "4", "-o", str(out), timeout=900)
    assert r.returncode == 0, r.stderr
    assert "model's choice within 5% of the measured best" in r.stdout
    assert len(Table(out, library(b.lib_dir))) == 2
