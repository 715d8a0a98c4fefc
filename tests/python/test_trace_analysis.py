"""The arrival-pattern analysis on synthetic traces with known answers."""

from __future__ import annotations

import random

import pytest
from trace_helpers import rank_doc, recv_request, send_request, write_trace

from partita.trace.advise import pattern_sentence
from partita.trace.analysis import analyse, min_delta_us, rank_shares, round_patterns
from partita.trace.reader import load_trace
from partita.trace.show import brief_line, request_lines

US = 1000  # ns


def laggard_trace(tmp_path, partitions=16, rounds=50, late_us=300, share=0.8, thread=5, jitter_us=12,
                  stagger_us=0.0, seed=3, threads_per_partition=1, name="t"):
    """Each thread marks its partitions `jitter_us` apart at most (plus `stagger_us` x
    its number); in `share` of the rounds thread `thread` is `late_us` late."""
    rng = random.Random(seed)
    T = partitions // threads_per_partition
    sends = []
    for i in range(rounds):
        start = i * 10_000 * US
        late = rng.random() < share
        thread_t = [start + 50 * US + int((rng.uniform(0, jitter_us) + stagger_us * t) * US) for t in range(T)]
        if late:
            thread_t[thread] += late_us * US
        owner = [u % T for u in range(partitions)]
        ready = [thread_t[owner[u]] + (u // T) * 100 for u in range(partitions)]
        sends.append((start, ready, owner, max(ready) + 20 * US))
    doc = rank_doc(0, 2, [send_request(0, 1, 3, sends, count=256)])
    return load_trace(write_trace(tmp_path / name, [doc, rank_doc(1, 2, [])]))


def test_laggard_found_with_its_delay_within_10_percent(tmp_path):
    a = analyse(laggard_trace(tmp_path))[0]
    assert a.laggard.thread == 5
    assert 0.75 <= a.laggard.share <= 0.9
    assert abs(a.laggard.delay_us - 300) / 300 < 0.10
    assert a.spread_others_us < 13 and a.spread_us > 290


def test_laggard_thread_with_several_partitions(tmp_path):
    a = analyse(laggard_trace(tmp_path, partitions=16, threads_per_partition=4, thread=2))[0]
    assert a.laggard.thread == 2 and a.laggard.partitions == [2, 6, 10, 14]
    assert abs(a.laggard.delay_us - 300) / 300 < 0.10


def test_no_laggard_when_threads_are_alike(tmp_path):
    a = analyse(laggard_trace(tmp_path, share=0.0))[0]
    assert a.laggard.share < 0.3  # the last thread changes from round to round
    assert a.laggard.delay_us < 12


def test_partitions_marked_at_once_have_no_laggard(tmp_path):
    # one MPI_Pready_range per round: every partition has the same ready time; show and the
    # brief line called partition 0 "last in 100% of rounds, 0.0 µs after the others"
    sends = [(r * 100 * US, [(r * 100 + 5) * US] * 8, [0] * 8, (r * 100 + 30) * US) for r in range(5)]
    t = load_trace(write_trace(tmp_path / "t", [rank_doc(0, 2, [send_request(0, 1, 3, sends)]),
                                                rank_doc(1, 2, [])]))
    a = analyse(t)[0]
    assert not a.laggard.is_late
    shown = "\n".join(request_lines(a))
    assert "laggard: none" in shown and "is last in" not in shown
    assert "no laggard" in brief_line(a) and "laggard last partition" not in brief_line(a)


def test_seed_min_delta_on_a_constructed_pattern(tmp_path):
    # per round: (start, ready offsets from start in µs); each partition its own thread
    rounds = [(0, [10, 20, 30, 500]), (1000, [14, 22, 40, 600]), (5000, [12, 400, 26, 35])]
    sends = [(s * US, [(s + r) * US for r in rs], [0, 1, 2, 3], None) for s, rs in rounds]
    t = load_trace(write_trace(tmp_path / "t", [rank_doc(0, 2, [send_request(0, 1, 0, sends)])]))
    # laggards: partition 3, 3, 1. Means without them: p0 12, p1 21, p2 32, p3 35 -> 35 - 12
    assert min_delta_us(round_patterns(t.ranks[0].requests[0])) == pytest.approx(23.0)
    assert analyse(t)[0].min_delta_us == pytest.approx(23.0)


def test_min_delta_rises_with_partition_count(tmp_path):
    # threads start 1 µs apart in turn (the seed's atomic counter), one random thread 300 µs late
    deltas = []
    for p in (4, 8, 16, 32):
        t = laggard_trace(tmp_path, partitions=p, thread=p - 1, share=1.0, jitter_us=2, stagger_us=1.0,
                          name=f"p{p}")
        deltas.append(analyse(t)[0].min_delta_us)
    assert all(b > a for a, b in zip(deltas, deltas[1:])), deltas


def test_receiver_order_and_measured_early_share(tmp_path):
    ready = [1000, 2000, 3000, 9000]
    arrived = [9500, 9400, 3500, 9600]  # the receiver saw partition 2 first
    send = send_request(0, 1, 4, [(0, ready, [0, 1, 2, 3], 9700)])
    recv = recv_request(0, 0, 4, [(0, arrived, 9800)])
    t = load_trace(write_trace(tmp_path / "t", [rank_doc(0, 2, [send]), rank_doc(1, 2, [recv])]))
    a = analyse(t)[0]
    assert a.recv is not None and a.arrival_order == [2, 1, 0, 3] and a.arrival_in_ready_order == 0.0
    assert a.early_share_measured == pytest.approx(0.25)
    assert a.after_last_us == pytest.approx(0.6)


def test_receiver_order_with_fewer_receive_partitions(tmp_path):
    """4 send partitions marked in order, received as 2 partitions that arrive in order: the
    receive order was compared with the 4 send partitions' order and never matched (0%)."""
    rounds = [(0, [1000, 2000, 3000, 4000], [0, 0, 0, 0], 9000), (10_000, [11_000, 12_000, 13_000, 14_000],
                                                                 [0, 0, 0, 0], 19_000)]
    send = send_request(0, 1, 4, rounds, count=1024)
    recv = recv_request(0, 0, 4, [(0, [2500, 4500], 9000), (10_000, [14_600, 14_500], 19_000)], count=2048)
    t = load_trace(write_trace(tmp_path / "t", [rank_doc(0, 2, [send]), rank_doc(1, 2, [recv])]))
    a = analyse(t)[0]
    assert a.arrival_in_ready_order == pytest.approx(0.5)  # round 0 in order, round 1 not


def test_modelled_early_share(tmp_path):
    from model_helpers import build_info
    from partita.model import Params, library
    params = Params.default(library(build_info().lib_dir))
    late = [(0, [0, 0, 0, 5_000_000], [0, 1, 2, 3], None)]
    together = [(0, [0, 0, 0, 0], [0, 1, 2, 3], None)]
    docs = [rank_doc(0, 2, [send_request(0, 1, 0, late), send_request(1, 1, 1, together)])]
    a_late, a_together = analyse(load_trace(write_trace(tmp_path / "t", docs)), params)
    assert a_late.early_share_model == pytest.approx(0.75)  # all but the laggard's partition
    assert a_together.early_share_model == 0.0


def test_incomplete_round_left_out(tmp_path):
    sends = [(0, [10, 20], [0, 1], 30), (100, [110, None], [0, None], None)]
    t = load_trace(write_trace(tmp_path / "t", [rank_doc(0, 2, [send_request(0, 1, 0, sends)])]))
    assert len(analyse(t)[0].rounds) == 1


def test_mpi_share_per_rank(tmp_path):
    docs = [rank_doc(0, 2, [], init_ns=0, finalize_ns=1_000_000,
                     mpi_time_ns={"p2p": 200_000, "collective": 100_000, "partitioned": 50_000}),
            rank_doc(1, 2, [], init_ns=0, finalize_ns=2_000_000,
                     mpi_time_ns={"p2p": 0, "collective": 0, "partitioned": 0})]
    s0, s1 = rank_shares(load_trace(write_trace(tmp_path / "t", docs)))
    assert s0.mpi_share == pytest.approx(0.35) and s0.p2p_share == pytest.approx(0.25)
    assert s1.mpi_share == 0.0 and s1.wall_us == 2000


def test_median_delta_ignores_one_descheduled_round(tmp_path):
    rounds = [(0, [0, 10, 20, 500]), (1000, [0, 10, 20, 500]), (2000, [0, 10, 20, 500]), (3000, [0, 10, 2020, 2500])]
    sends = [(s * US, [(s + r) * US for r in rs], [0, 1, 2, 3], None) for s, rs in rounds]
    t = load_trace(write_trace(tmp_path / "t", [rank_doc(0, 2, [send_request(0, 1, 0, sends)])]))
    a = analyse(t)[0]
    assert a.min_delta_us == pytest.approx(20 + 2000 / 4)  # the seed's means: partition 2's mean moves
    assert a.min_delta_median_us == pytest.approx(20.0)


def test_the_mpi_share_says_what_partitioned_time_leaves_out(tmp_path):
    """A receiver that spins on MPI_Parrived showed 'partitioned 0.1%' with no word that the tracer
    does not time MPI_Pready and MPI_Parrived (docs/trace.md)."""
    from partita.trace.show import share_lines

    t = laggard_trace(tmp_path, rounds=3)
    assert any("MPI_Parrived" in line and "not measured" in line for line in share_lines(t))
    empty = load_trace(write_trace(tmp_path / "none", [rank_doc(0, 1, [])]))
    assert not any("MPI_Parrived" in line for line in share_lines(empty))


def test_partitions_marked_at_one_instant_arrive_in_ready_order_whatever_their_order(tmp_path):
    """One MPI_Pready_range marks all four at once; the receiver sees 3, 2, 1, 0: no partition came
    before one marked earlier, yet the index order was taken for the ready order (0% of rounds)."""
    send = send_request(0, 1, 4, [(0, [1000] * 4, [0] * 4, 9000)])
    recv = recv_request(0, 0, 4, [(0, [5400, 5300, 5200, 5100], 9000)])
    t = load_trace(write_trace(tmp_path / "t", [rank_doc(0, 2, [send]), rank_doc(1, 2, [recv])]))
    assert analyse(t)[0].arrival_in_ready_order == 1.0


def test_the_laggard_is_known_by_its_partitions_not_its_thread_id(tmp_path):
    """The worker marking partitions 2 and 6 is 300 µs late in every round. Its tracer id changes:
    a new thread every round takes an ended thread's id (rank 0), and rank 1's threads have ids of
    their own. By id it was 'last in 50% of rounds' on rank 0, and pooled over both ranks for advise
    no thread was late in half the rounds."""
    from partita.trace.sources import cases_from_trace

    def sends(ids_per_round):
        out = []
        for r, ids in enumerate(ids_per_round):
            start = r * 10_000 * US
            worker = [start + (50 + (300 if w == 2 else w)) * US for w in range(4)]
            out.append((start, [worker[p % 4] + (p // 4) * 100 for p in range(8)],
                        [ids[p % 4] for p in range(8)], start + 900 * US))
        return out
    rank0 = sends([[1, 2, 3, 4], [2, 1, 4, 3], [3, 4, 1, 2], [4, 3, 2, 1]])
    rank1 = sends([[4, 2, 3, 1]] * 4)
    t = load_trace(write_trace(tmp_path / "t", [rank_doc(0, 2, [send_request(0, 1, 5, rank0)]),
                                                rank_doc(1, 2, [send_request(0, 0, 5, rank1)])]))
    a = analyse(t)[0]
    assert a.laggard.share == 1.0 and a.laggard.partitions == [2, 6]
    assert a.laggard.delay_us == pytest.approx(296, abs=1)
    [case] = cases_from_trace(t)
    assert case.laggard_share == 1.0 and case.laggard_partitions == [2, 6]
    # no id names it: it is named by its partitions (it was 'thread 3', an id every worker had)
    assert "laggard the thread marking partitions 2, 6 (100% of rounds" in brief_line(a)
    assert "the thread marking partitions 2, 6" in pattern_sentence(case)
    # a laggard that kept its id is named by it
    steady = load_trace(write_trace(tmp_path / "s", [rank_doc(0, 2, [send_request(0, 1, 5, rank1)])]))
    assert "laggard thread 3 (100% of rounds" in brief_line(analyse(steady)[0])
