"""The Perfetto timeline and the arrival-pattern figure of a synthetic trace."""

from __future__ import annotations

import json

import pytest
from trace_helpers import rank_doc, recv_request, send_request, write_trace

from partita.trace.perfetto import write_perfetto
from partita.trace.plot import arrival_figure, estimated_bandwidth, plot_arrivals
from partita.trace.reader import load_trace

P, ROUNDS = 4, 3


def synthetic(tmp_path, recv_offset_ns=0):
    """Rank 0 sends 4 partitions to rank 1 (tag 5) in 3 rounds; threads 0 and 1
    mark them alternately, partition 3 is 50 µs late (the laggard); every
    partition arrives 2 µs after its ready, except partition 1 of the last round
    (never polled true)."""
    sends, recvs = [], []
    for r in range(ROUNDS):
        start = 1_000_000 * (r + 1)
        ready = [start + 1_000 + 100 * p for p in range(P)]
        ready[3] += 50_000
        arrived = [t + 2_000 for t in ready]
        if r == ROUNDS - 1:
            arrived[1] = None
        sends.append((start, ready, [p % 2 for p in range(P)], max(ready) + 3_000))
        recvs.append((start - recv_offset_ns, [None if a is None else a - recv_offset_ns for a in arrived],
                      max(ready) + 3_000 - recv_offset_ns))
    docs = [rank_doc(0, 2, [send_request(0, 1, 5, sends)]),
            rank_doc(1, 2, [recv_request(0, 0, 5, recvs)], offset_ns=recv_offset_ns)]
    return load_trace(write_trace(tmp_path / "trace", docs))


def slices(doc, cat):
    return [e for e in doc["traceEvents"] if e["ph"] == "X" and e.get("cat") == cat]


def test_perfetto_one_slice_per_partition_from_ready_to_arrival(tmp_path):
    out = write_perfetto(synthetic(tmp_path), tmp_path / "t.json")
    doc = json.loads(out.read_text())
    parts = slices(doc, "partition")
    assert len(parts) == P * ROUNDS
    assert all(e["pid"] == 0 for e in parts)
    known = [e for e in parts if e["args"]["ready_to_arrival_us"] is not None]
    assert len(known) == P * ROUNDS - 1
    assert all(e["dur"] == pytest.approx(2.0) for e in known)
    unknown = [e for e in parts if "arrival unknown" in e["name"]]
    assert [(e["args"]["round"], e["args"]["partition"]) for e in unknown] == [(ROUNDS - 1, 1)]
    # the laggard: partition 3 in every round, named and coloured apart
    laggards = [e for e in parts if e["name"].startswith("LAGGARD")]
    assert [e["args"]["partition"] for e in laggards] == [3] * ROUNDS
    assert {e["cname"] for e in laggards} != {e["cname"] for e in parts if e not in laggards}
    assert len(slices(doc, "round")) == 2 * ROUNDS  # one per round on each side


def track_names(doc) -> dict:
    return {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}


def test_perfetto_tracks_per_rank_and_thread_never_overlap(tmp_path):
    doc = json.loads(write_perfetto(synthetic(tmp_path), tmp_path / "t.json").read_text())
    names = {(e["pid"], e["args"]["name"]) for e in doc["traceEvents"] if e["name"] == "process_name"}
    assert names == {(0, "rank 0 (h0)"), (1, "rank 1 (h1)")}
    by_track: dict = {}
    for e in slices(doc, "partition"):
        by_track.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    # threads 0 and 1 each have their own track (or lanes of it)
    assert {track_names(doc)[key].split(" +")[0] for key in by_track} == {"thread 0", "thread 1"}
    for spans in by_track.values():
        spans.sort()
        assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:]))


def test_perfetto_applies_the_receivers_clock_offset(tmp_path):
    # the receiver's clock is 7 ms behind: the reader shifts it, so the slices stay 2 µs long
    doc = json.loads(write_perfetto(synthetic(tmp_path, recv_offset_ns=7_000_000), tmp_path / "t.json").read_text())
    known = [e for e in slices(doc, "partition") if e["args"]["ready_to_arrival_us"] is not None]
    assert known and all(e["dur"] == pytest.approx(2.0) for e in known)


def test_plot_writes_a_png(tmp_path):
    out = plot_arrivals(synthetic(tmp_path), tmp_path / "arrivals.png")
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5_000
    out2 = plot_arrivals(synthetic(tmp_path), tmp_path / "one.png", request=0, bandwidth=1e9)
    assert out2.stat().st_size > 5_000


def test_plot_rejects_an_unknown_request(tmp_path):
    with pytest.raises(ValueError, match="no send request number 3"):
        plot_arrivals(synthetic(tmp_path), tmp_path / "x.png", request=3)
    assert not (tmp_path / "x.png").exists()


def test_plot_without_a_suffix_returns_the_file_written(tmp_path):
    out = plot_arrivals(synthetic(tmp_path), tmp_path / "arrivals")
    assert out == tmp_path / "arrivals.png" and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_estimated_bandwidth_comes_from_each_rounds_last_partition(tmp_path):
    """An aggregated message: every partition arrives 2 us after the last one is marked, the first
    three 100 us before that. Only the last one's time says how fast the bytes move."""
    sends, recvs = [], []
    for r in range(ROUNDS):
        start = 1_000_000 * (r + 1)
        ready = [start + 1_000, start + 1_100, start + 1_200, start + 101_200]
        arrived = [max(ready) + 2_000] * P
        sends.append((start, ready, [0] * P, max(ready) + 3_000))
        recvs.append((start, arrived, max(ready) + 3_000))
    docs = [rank_doc(0, 2, [send_request(0, 1, 5, sends)]), rank_doc(1, 2, [recv_request(0, 0, 5, recvs)])]
    trace = load_trace(write_trace(tmp_path / "trace", docs))
    part_bytes = trace.pairs()[0][0].partition_bytes
    assert estimated_bandwidth(trace) == pytest.approx(part_bytes / 2e-6)


@pytest.mark.parametrize("parts, height", [(4, 0.8), (64, 1.0)])
def test_bars_of_many_partitions_touch(tmp_path, parts, height):
    """With gaps, 64 partitions' bars aliased into stripes that hid the data."""
    import matplotlib.pyplot as plt

    sends = [(1_000_000, [1_001_000 + 100 * p for p in range(parts)], [0] * parts, 1_100_000)]
    recvs = [(1_000_000, [1_050_000] * parts, 1_100_000)]
    docs = [rank_doc(0, 2, [send_request(0, 1, 5, sends)]), rank_doc(1, 2, [recv_request(0, 0, 5, recvs)])]
    fig = arrival_figure(load_trace(write_trace(tmp_path / "trace", docs)))
    bars = fig.axes[0].patches
    assert len(bars) == 2 * parts and {round(b.get_height(), 6) for b in bars} == {height}
    plt.close(fig)


def test_plot_says_when_no_transfer_is_known(tmp_path):
    """The receiver only waited (no MPI_Parrived arrival anywhere): no transfer can be measured or
    estimated. The legend claimed a measured transfer, and bars with none were drawn empty."""
    import matplotlib.pyplot as plt

    sends = [(1_000_000 * r, [1_000_000 * r + 1_000 + 100 * p for p in range(P)], [0] * P, 1_000_000 * r + 9_000)
             for r in range(1, ROUNDS + 1)]
    recvs = [(1_000_000 * r, [None] * P, 1_000_000 * r + 9_000) for r in range(1, ROUNDS + 1)]
    docs = [rank_doc(0, 2, [send_request(0, 1, 5, sends)]), rank_doc(1, 2, [recv_request(0, 0, 5, recvs)])]
    fig = arrival_figure(load_trace(write_trace(tmp_path / "trace", docs)))
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert not any("MPI_Parrived true" in t for t in labels)
    assert any(t.startswith("transfer not drawn") for t in labels)
    assert fig.axes[0].get_xlim()[0] == 0
    plt.close(fig)


def test_perfetto_a_thread_with_a_thousand_lanes_keeps_its_tracks(tmp_path):
    """Thread 0 has 1100 partitions in flight at once, thread 1 one: tracks numbered thread * 1000
    + lane put thread 0's lane 1000 on thread 1's track, two overlapping slices named thread 1."""
    parts = 1100
    ready = [1_000_000 + p for p in range(parts)]
    sends = [(1_000_000, ready, [0] * (parts - 1) + [1], 9_000_000)]
    recvs = [(1_000_000, [5_000_000 + p for p in range(parts)], 9_000_000)]
    docs = [rank_doc(0, 2, [send_request(0, 1, 5, sends, count=1)]),
            rank_doc(1, 2, [recv_request(0, 0, 5, recvs, count=1)])]
    doc = json.loads(write_perfetto(load_trace(write_trace(tmp_path / "trace", docs)), tmp_path / "t.json")
                     .read_text())
    names = track_names(doc)
    by_track: dict = {}
    for e in slices(doc, "partition") + slices(doc, "round"):
        by_track.setdefault((e["pid"], e["tid"]), []).append(e)
    assert all(len(v) == 1 for k, v in by_track.items() if k[0] == 0 and v[0]["cat"] == "partition")
    thread1 = [e for k, v in by_track.items() if names.get(k) == "thread 1" for e in v]
    assert [e["args"]["partition"] for e in thread1] == [parts - 1]
    # 1099 lanes of thread 0, thread 1 and the request's rounds: every track of rank 0 named apart
    assert len({n for (pid, _), n in names.items() if pid == 0}) == parts + 1


def test_plot_says_which_requests_it_leaves_out(tmp_path):
    """Eight send requests, the first one never started: the figure drew the first six of the
    list (five with rounds) and said nothing of the others; with the first six unstarted it
    found nothing to draw."""
    import matplotlib.pyplot as plt

    started = [(1_000_000, [1_001_000 + 100 * p for p in range(P)], [0] * P, 1_100_000)]
    unstarted = send_request(0, 1, 0, started) | {"rounds": []}
    sends = [unstarted] + [send_request(i, 1, i, started) for i in range(1, 8)]
    docs = [rank_doc(0, 2, sends), rank_doc(1, 2, [])]
    fig = arrival_figure(load_trace(write_trace(tmp_path / "trace", docs)))
    assert len(fig.axes) == 6
    assert "the first 6 of 7 send requests" in fig._suptitle.get_text()
    plt.close(fig)
    late = [send_request(i, 1, i, started) | {"rounds": []} for i in range(6)] + [send_request(6, 1, 6, started)]
    fig = arrival_figure(load_trace(write_trace(tmp_path / "late", [rank_doc(0, 2, late), rank_doc(1, 2, [])])))
    assert len(fig.axes) == 1 and fig._suptitle is None
    plt.close(fig)


def test_perfetto_names_no_laggard_when_the_last_marks_tie(tmp_path):
    """One MPI_Pready_range marks every partition at one instant: the highest partition was named
    LAGGARD and coloured apart in every round."""
    sends = [(1_000_000 * r, [1_000_000 * r + 1_000] * P, [0] * P, 1_000_000 * r + 9_000) for r in range(1, 4)]
    recvs = [(1_000_000 * r, [1_000_000 * r + 5_000] * P, 1_000_000 * r + 9_000) for r in range(1, 4)]
    docs = [rank_doc(0, 2, [send_request(0, 1, 5, sends)]), rank_doc(1, 2, [recv_request(0, 0, 5, recvs)])]
    doc = json.loads(write_perfetto(load_trace(write_trace(tmp_path / "trace", docs)), tmp_path / "t.json")
                     .read_text())
    parts = slices(doc, "partition")
    assert len(parts) == 3 * P and not any(e["name"].startswith("LAGGARD") for e in parts)
