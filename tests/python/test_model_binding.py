"""The Python binding runs the C model: hand-computed cases, files, tables."""

from __future__ import annotations

import json

import pytest

from model_helpers import build_info
from partita.model import ModelError, Params, Segment, Table, library
from partita.model.options import parse_bytes, parse_float_list, parse_int_list, parse_size_range, sizes_in
from partita.model.tables import Choice, pow2_counts, table1_ranges


@pytest.fixture(scope="module")
def lib():
    return library(build_info().lib_dir)


@pytest.fixture()
def params(lib):
    seg = Segment(None, L=2.0, o_s=0.5, o_r=0.75, g=1.0, G=0.001, handshake_us=0.0)
    return Params.from_segments([seg], lib=lib)


def test_single_message_is_loggp(params):
    # o_s + G(k-1) + L + o_r
    assert params.completion_us([1001], [0.0]) == pytest.approx(0.5 + 1.0 + 2.0 + 0.75)


def test_two_back_to_back_messages(params):
    # o_s + 2G(k-1) + max(g, o_s, o_r) + L + o_r
    assert params.completion_us([1001, 1001], [0.0, 0.0]) == pytest.approx(0.5 + 2.0 + 1.0 + 2.0 + 0.75)


def test_laggard_exposes_only_its_own_bytes(params):
    n, k = 8, 1001
    ready = params.pattern_ready("laggard", n, 100.0)
    assert ready == [0.0] * 7 + [100.0]
    fine = params.grouped_us(n * k, n, n, ready)
    bulk = params.grouped_us(n * k, n, 1, ready)
    assert fine == pytest.approx(100.0 + 4.25)
    assert bulk - fine == pytest.approx(0.001 * (n * k - k))
    t, arrivals = params.arrivals_us([k] * n, ready)
    assert t == pytest.approx(fine)
    assert arrivals[0] == pytest.approx(4.25) and arrivals[1] == pytest.approx(6.25)


def test_optimal_transport(params):
    assert params.optimal_transport(1 << 20, 16, 0.0) == 1
    assert params.optimal_transport(1 << 20, 16, 4000.0) == 16
    assert params.optimal_transport(1 << 20, 16, 300.0) == 2
    t, best = params.optimal_transport_ready(12 * 100000, 12, [0.0] * 11 + [1e5], pow2_only=True)
    assert t in (1, 2, 4) and best > 1e5
    assert params.default_delta_us(100) == pytest.approx(1.0 - 0.001)
    assert params.timer_delta_us(100, 4) == pytest.approx(5.0)  # libpartita's floor


def test_bad_model_arguments(params):
    with pytest.raises(ValueError):
        params.grouped_us(3, 4, 5)  # more messages than bytes
    with pytest.raises(ValueError):
        params.pattern_ready("sideways", 4, 1.0)
    with pytest.raises(ValueError):
        params.arrivals_us([10], [0.0, 1.0])
    with pytest.raises(ModelError):
        Params.from_segments([Segment(None, -1, 0, 0, 0, 0, 0)])


def test_params_file_round_trip(tmp_path, lib):
    segs = [Segment(8192, 0.2, 0.3, 0.25, 0.4, 1.5e-4, 0.0), Segment(None, 0.2, 0.5, 0.4, 0.9, 1e-4, 2.5)]
    p = Params.from_segments(segs, o_pready=0.125, lib=lib, max_eager_messages=24)
    f = tmp_path / "loggp.json"
    p.save(f, '"note": "round trip"')
    doc = json.loads(f.read_text())
    assert doc["schema"] == "partita.loggp/1" and doc["note"] == "round trip"
    assert doc["max_eager_messages"] == 24
    q = Params.load(f, lib=lib)
    assert q.segments == segs and q.o_pready == 0.125 and q.source == str(f)
    assert q.max_eager_messages == 24
    # A constructed set without a limit is written with the library's default.
    Params.from_segments(segs, lib=lib).save(f)
    assert json.loads(f.read_text())["max_eager_messages"] == 16


@pytest.mark.parametrize("text, why", [
    (None, "No such file"),
    ("{not json", "invalid JSON"),
    ('{"schema": "partita.loggp/9", "segments": []}', "unsupported schema"),
    ('{"schema": "partita.loggp/1", "segments": [{"L": 1}]}', "missing"),
])
def test_bad_params_file_names_the_file(tmp_path, lib, text, why):
    f = tmp_path / "bad.json"
    if text is not None:
        f.write_text(text)
    with pytest.raises(ModelError) as e:
        Params.load(f, lib=lib)
    assert str(f) in str(e.value) and why in str(e.value)


def test_tuning_table(tmp_path, lib):
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"schema": "partita.tuning/1", "entries": [
        {"bytes": 65536, "user_partitions": 8, "transport_partitions": 2}]}))
    t = Table(f, lib=lib)
    assert len(t) == 1 and t.lookup(65536, 8) == 2 and t.lookup(65536, 4) == 0 and t.lookup(1 << 20, 8) == 0
    f.write_text('{"schema": "partita.tuning/1", "entries": [{"bytes": 1}]}')
    with pytest.raises(ModelError, match="entry 0"):
        Table(f, lib=lib)


def test_table1_ranges():
    rows = [Choice(1 << s, t, 0, 0, 0, t, False) for s, t in [(10, 1), (11, 1), (12, 2), (13, 4), (14, 4)]]
    assert table1_ranges(rows) == [("<= 2KiB", 1), ("4KiB", 2), (">= 8KiB", 4)]
    assert pow2_counts(12) == [1, 2, 4]


def test_option_parsing():
    assert parse_bytes("64K") == 65536 and parse_bytes("1M") == 1 << 20
    assert parse_size_range("4K:16K") == (4096, 16384)
    assert sizes_in((4096, 16384)) == [4096, 8192, 16384]
    for bad in ("3:8", "8:4", "x:1", "1K"):
        with pytest.raises(ValueError):
            parse_size_range(bad)
    with pytest.raises(ValueError):
        parse_int_list("4,0", "--partitions")
    with pytest.raises(ValueError):
        parse_float_list("1,nan", "--delays")


def test_optimal_layout_cuts_below_the_eager_limit(lib):
    """The library's layout search may cut partitions; the paper's grouped search never does."""
    p = Params.default(lib)
    assert p.optimal_transport(8192, 1, 0.0) == 1
    n, cut = p.optimal_layout(16384, 1, 0.0)
    assert n > 1 and cut and 16384 // n >= 512   # pieces, none below PTM_MIN_PIECE_BYTES
    assert p.optimal_layout(1 << 20, 1, 0.0) == (1, False)  # far above the switch one message wins
    # 8 partitions of 8 KiB: the fewest eager pieces straddle partition boundaries.
    n, cut = p.optimal_layout(65536, 8, 0.0)
    assert cut and n % 8 != 0 and -(-65536 // n) <= p.segments[0].max_bytes
