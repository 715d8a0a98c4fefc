"""The partita.trace/1 reader: validation with errors naming the file, offsets, send/receive pairing."""

from __future__ import annotations

import json

import pytest
from trace_helpers import rank_doc, recv_request, send_request, write_trace

from partita.trace.reader import TraceError, load_trace


def two_rank_trace(tmp_path, offset_ns=0):
    send = send_request(0, 1, 7, [(1000, [1100, 1200, None], [0, 1, None], 5000)], count=8)
    recv = recv_request(0, 0, 7, [(900, [2000, None, 2500], 6000)], count=8)
    return write_trace(tmp_path / "t", [rank_doc(0, 2, [send]),
                                        rank_doc(1, 2, [recv], offset_ns=offset_ns, init_ns=10, finalize_ns=90)])


def test_loads_ranks_requests_and_rounds(tmp_path):
    t = load_trace(two_rank_trace(tmp_path))
    assert [r.rank for r in t.ranks] == [0, 1]
    s = t.ranks[0].requests[0]
    assert (s.kind, s.peer, s.tag, s.partitions, s.count, s.type_size, s.bytes) == ("send", 1, 7, 3, 8, 4, 96)
    assert s.rounds[0].ready_ns == [1100, 1200, None]
    assert s.rounds[0].ready_thread == [0, 1, None]
    assert s.rounds[0].arrived_ns is None
    r = t.ranks[1].requests[0]
    assert r.rounds[0].arrived_ns == [2000, None, 2500] and r.rounds[0].ready_ns is None
    assert t.ranks[1].path.name == "rank-00001.json"


def test_offset_moves_every_time_onto_rank0_clock_and_keeps_none(tmp_path):
    t = load_trace(two_rank_trace(tmp_path, offset_ns=-500))
    rd = t.ranks[1].requests[0].rounds[0]
    assert (rd.start_ns, rd.arrived_ns, rd.complete_ns) == (400, [1500, None, 2000], 5500)
    assert (t.ranks[1].init_ns, t.ranks[1].finalize_ns, t.ranks[1].offset_ns) == (-490, -410, -500)
    assert t.ranks[0].requests[0].rounds[0].start_ns == 1000


def test_pairs_match_in_creation_order_per_triple(tmp_path):
    r = [(0, [1], [0], 1)]
    a = [(0, [1], 1)]
    docs = [rank_doc(0, 3, [send_request(0, 1, 5, r), send_request(1, 1, 5, r), send_request(2, 2, 5, r),
                            send_request(3, 1, 9, r)]),
            rank_doc(1, 3, [recv_request(0, 0, 5, a), recv_request(1, 0, 5, a)]),
            rank_doc(2, 3, [recv_request(0, 0, 6, a)])]
    t = load_trace(write_trace(tmp_path / "t", docs))
    got = [(s.id, None if q is None else (q.rank, q.id)) for s, q in t.pairs()]
    assert got == [(0, (1, 0)), (1, (1, 1)), (2, None), (3, None)]


def test_dropped_events_summed(tmp_path):
    t = load_trace(write_trace(tmp_path / "t", [rank_doc(0, 2, [], dropped_events=3),
                                                rank_doc(1, 2, [], dropped_events=4)]))
    assert t.dropped_events == 7


def test_missing_folder(tmp_path):
    with pytest.raises(TraceError, match="nowhere: no such trace folder"):
        load_trace(tmp_path / "nowhere")


def test_no_rank_files(tmp_path):
    (tmp_path / "other.json").write_text("{}")
    with pytest.raises(TraceError, match="no rank files"):
        load_trace(tmp_path)


@pytest.mark.parametrize("cut", [1, 7, 40, 120, 300])
def test_truncated_file_named(tmp_path, cut):
    folder = two_rank_trace(tmp_path)
    f = folder / "rank-00001.json"
    f.write_text(f.read_text()[:-cut])
    with pytest.raises(TraceError, match=r"rank-00001\.json: truncated JSON"):
        load_trace(folder)


def test_empty_file_is_truncated(tmp_path):
    folder = two_rank_trace(tmp_path)
    (folder / "rank-00000.json").write_text("")
    with pytest.raises(TraceError, match=r"rank-00000\.json: truncated"):
        load_trace(folder)


def test_corrupt_json_named(tmp_path):
    folder = two_rank_trace(tmp_path)
    (folder / "rank-00000.json").write_text('{"format": "partita.trace/1", oops}')
    with pytest.raises(TraceError, match=r"rank-00000\.json: not valid JSON"):
        load_trace(folder)


def edit(folder, rank, change):
    f = folder / f"rank-{rank:05d}.json"
    d = json.loads(f.read_text())
    change(d)
    f.write_text(json.dumps(d))


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(format="partita.trace/2"), "format is 'partita.trace/2', expected 'partita.trace/1'"),
    (lambda d: d.pop("format"), "format is None"),
    (lambda d: d.pop("wall"), "missing key 'wall'"),
    (lambda d: d["clock"].pop("offset_ns"), "missing key clock.'offset_ns'"),
    (lambda d: d.update(rank="0"), "'rank' must be an integer"),
    (lambda d: d.update(rank=True), "'rank' must be an integer"),
    (lambda d: d.update(rank=5), "rank 5 is outside 0..1"),
    (lambda d: d.update(requests={}), "'requests' must be a list"),
    (lambda d: d["requests"][0].pop("peer"), r"missing key requests\[0\].'peer'"),
    (lambda d: d["requests"][0].update(kind="bcast"), "'kind' must be 'send' or 'recv'"),
    (lambda d: d["requests"][0].update(bytes=1), "'bytes' is 1, not partitions"),
    (lambda d: d["requests"][0]["rounds"][0]["ready_ns"].pop(), r"rounds\[0\].'ready_ns' must be a list of 3"),
    (lambda d: d["requests"][0]["rounds"][0]["ready_ns"].__setitem__(0, 1.5), r"ready_ns\[0\] must be an integer"),
    (lambda d: d["requests"][0]["rounds"][0].pop("ready_thread"), "missing key .*'ready_thread'"),
    (lambda d: d["requests"][0]["rounds"][0].update(start_ns=None), "'start_ns' must be an integer"),
    (lambda d: d["mpi_time_ns"].pop("p2p"), r"missing key mpi_time_ns.'p2p'"),
    (lambda d: d.update(hostname=3), "'hostname' must be a string"),
])
def test_invalid_content_named(tmp_path, change, message):
    folder = two_rank_trace(tmp_path)
    edit(folder, 0, change)
    with pytest.raises(TraceError, match=r"rank-00000\.json: .*" + message):
        load_trace(folder)


def test_recv_round_needs_arrivals(tmp_path):
    folder = two_rank_trace(tmp_path)
    edit(folder, 1, lambda d: d["requests"][0]["rounds"][0].pop("arrived_ns"))
    with pytest.raises(TraceError, match=r"rank-00001\.json: missing key .*'arrived_ns'"):
        load_trace(folder)


def test_duplicate_rank(tmp_path):
    folder = two_rank_trace(tmp_path)
    (folder / "rank-00002.json").write_text((folder / "rank-00001.json").read_text())
    with pytest.raises(TraceError, match="rank 1 also in"):
        load_trace(folder)


def test_round_layout_read_when_present(tmp_path):
    """libpartita's tracer stack names each send round's layout (adaptive policy)."""
    req = send_request(0, 1, 5, [(0, [10, 20], [0, 0], 50), (100, [110, 120], [0, 0], 150)])
    req["rounds"][0]["layout"] = {"messages": 2, "cut": False}
    req["rounds"][1]["layout"] = {"messages": 3, "cut": True}
    t = load_trace(write_trace(tmp_path / "t", [rank_doc(0, 2, [req]), rank_doc(1, 2, [])]))
    assert [r.layout for r in t.ranks[0].requests[0].rounds] == [(2, False, False), (3, True, False)]
    req["rounds"][0]["layout"] = {"messages": 2, "cut": False, "split": True}  # adaptive's split candidate
    t = load_trace(write_trace(tmp_path / "s", [rank_doc(0, 2, [req]), rank_doc(1, 2, [])]))
    assert t.ranks[0].requests[0].rounds[0].layout == (2, False, True)
    plain = send_request(0, 1, 5, [(0, [10, 20], [0, 0], 50)])
    t = load_trace(write_trace(tmp_path / "u", [rank_doc(0, 2, [plain]), rank_doc(1, 2, [])]))
    assert t.ranks[0].requests[0].rounds[0].layout is None


@pytest.mark.parametrize("bad", [{"messages": 0, "cut": False}, {"messages": 2}, {"messages": True, "cut": False}, 3,
                                 {"messages": 2, "cut": False, "split": 1}, {"messages": 2, "cut": True, "split": True}])
def test_bad_round_layout_rejected(tmp_path, bad):
    req = send_request(0, 1, 5, [(0, [10, 20], [0, 0], 50)])
    req["rounds"][0]["layout"] = bad
    with pytest.raises(TraceError, match="'layout' must be"):
        load_trace(write_trace(tmp_path / "t", [rank_doc(0, 2, [req]), rank_doc(1, 2, [])]))


def test_request_transport_read_when_present(tmp_path):
    """Under libpartita the tracer names each request's transport; natively there is none."""
    req = send_request(0, 1, 5, [(0, [10, 20], [0, 0], 50)])
    req["transport"] = "fabric"
    plain = send_request(0, 1, 5, [(0, [10, 20], [0, 0], 50)])
    t = load_trace(write_trace(tmp_path / "t", [rank_doc(0, 2, [req, plain]), rank_doc(1, 2, [])]))
    assert [q.transport for q in t.ranks[0].requests] == ["fabric", None]


@pytest.mark.parametrize("bad", ["", 3, ["mpi"]])
def test_bad_request_transport_rejected(tmp_path, bad):
    req = send_request(0, 1, 5, [(0, [10, 20], [0, 0], 50)])
    req["transport"] = bad
    with pytest.raises(TraceError, match="'transport' must be"):
        load_trace(write_trace(tmp_path / "t", [rank_doc(0, 2, [req]), rank_doc(1, 2, [])]))
