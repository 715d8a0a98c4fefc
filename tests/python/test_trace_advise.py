"""partita advise: the timer's messages, the remapped ready times and the advice on synthetic patterns."""

from __future__ import annotations

import json

import pytest
from model_helpers import build_info
from test_trace_analysis import laggard_trace
from trace_helpers import rank_doc, send_request, write_trace

from partita.model import Params, library
from partita.trace.advise import (TIE_TOLERANCE, Candidate, advice_lines, advise_case, partition_counts,
                                  predict_round, remap_ready, timer_messages)
from partita.trace.reader import load_trace
from partita.trace.sources import SourceError, cases_from_trace, load_cases, native_policy


@pytest.fixture(scope="module")
def params() -> Params:
    return Params.default(library(build_info().lib_dir))


def test_timer_sends_a_group_whole_when_marked_within_delta():
    assert timer_messages(4096, 4, 1, [0, 1, 2, 3], 5.0) == ([4096], [3])


def test_timer_splits_runs_at_first_plus_delta_and_late_partitions_alone():
    sizes, times = timer_messages(8192, 8, 2, [0, 1, 50, 2, 0, 0, 0, 0], 5.0)
    # group 0 (0-3): runs {0,1} and {3} at 5, partition 2 alone at 50; group 1 whole at 0
    assert sizes == [2048, 1024, 1024, 4096] and times == [5.0, 50, 5.0, 0]


def test_remap_merges_to_the_last_and_splits_to_the_same():
    assert remap_ready([1, 5, 2, 3], 2) == [5, 3]
    assert remap_ready([1, 5], 4) == [1, 1, 5, 5]
    assert partition_counts(4096, 8) == [2, 4, 8, 16, 32]
    assert partition_counts(12, 3) == [3, 6, 12]


def test_none_candidate_is_the_models_one_message_per_partition(params):
    ready = [0.0, 0.0, 30.0, 0.0]
    t, n = predict_round(params, Candidate(4, "none", messages=4), 4 * 65536, ready)
    assert t == pytest.approx(params.grouped_us(4 * 65536, 4, 4, ready) - 30.0) and n == 4
    # the timer's messages depend on the marks: group 0 (0, 1) whole, group 1 split in two
    t, n = predict_round(params, Candidate(4, "timer", delta_us=5.0, messages=2), 4 * 65536, ready)
    sizes, times = timer_messages(4 * 65536, 4, 2, ready, 5.0)
    assert n == len(sizes) == 3 and t == pytest.approx(params.completion_us(sizes, times) - 30.0)


def test_advice_on_a_laggard_pattern(tmp_path, params):
    trace = laggard_trace(tmp_path, partitions=8, late_us=300, share=0.8, thread=5)
    [case] = cases_from_trace(trace)
    adv = advise_case(params, case)
    fastest = min(o.predicted_us for o in adv.outcomes)
    assert adv.best.predicted_us <= fastest * (1 + TIE_TOLERANCE) + 0.05
    # the trace says MPICH: its native path sends the whole buffer once every partition is ready
    assert adv.current.candidate.policy == "bulk" and adv.current.candidate.partitions == 8
    # every candidate's prediction is the model's median over the rounds
    assert {o.candidate.policy for o in adv.outcomes} >= {"none", "bulk", "model"}
    text = "\n".join(advice_lines(adv))
    assert "thread 5" in text and f"{case.laggard_delay_us:.0f} µs late in {case.laggard_share:.0%}" in text
    assert abs(case.laggard_delay_us - 300) < 30


def test_timer_candidate_uses_the_seed_delta(tmp_path, params):
    # 1 MiB in 8 partitions: the timer's groups are the model's layout, split at δ
    trace = laggard_trace(tmp_path, partitions=8, late_us=300, share=1.0, thread=7, stagger_us=2.0)
    docs = json.loads((trace.folder / "rank-00000.json").read_text())
    for q in docs["requests"]:
        q["count"], q["type_size"] = 131072, 1
        q["bytes"] = q["partitions"] * 131072
    (trace.folder / "rank-00000.json").write_text(json.dumps(docs))
    [case] = load_cases(trace.folder)[0]
    adv = advise_case(params, case)
    timers = [o.candidate for o in adv.outcomes if o.candidate.policy == "timer" and o.candidate.partitions == 8]
    assert case.min_delta_us == pytest.approx(12.0, abs=2.5)  # threads 0..6, 2 µs apart
    model_groups, cut = params.optimal_layout(8 * 131072, 8, 0.0)
    assert not cut and model_groups < 8  # a layout that holds partitions back, so a timer candidate exists
    assert timers and {c.messages for c in timers} == {model_groups}  # libpartita plans the timer as `model`
    assert round(case.min_delta_us) in {c.delta_us for c in timers}


def test_p2p_result_file_as_input(tmp_path, params):
    doc = {"schema": "partita.result/1", "benchmark": "p2p",
           "environment": {"mpi_library": "MPICH Version: 5.0.2", "partita_policy": None},
           "config": {"noise": "delay:200us", "noise_thread": 0},
           "results": [{"case": {"bytes": 65536, "partitions": 8, "threads": 4},
                        "metrics": {"t_part_us": {"samples": [210.0, 205.0, 220.0]},
                                    "t_last_us": {"samples": [10.0, 5.0, 20.0]}}}]}
    f = tmp_path / "p2p.json"
    f.write_text(json.dumps(doc))
    [case], lib = load_cases(f)
    assert lib.startswith("MPICH") and case.partitions == 8 and len(case.rounds) == 3
    assert case.laggard_thread == 0 and case.laggard_share == 1.0 and case.laggard_delay_us == pytest.approx(200)
    adv = advise_case(params, case)
    assert adv.measured_now_us == pytest.approx(10.0)


def test_p2p_results_keep_the_runs_mapping_and_late_thread(tmp_path):
    """--mapping block --noise-thread 1 (the quick suite's noisy run maps blocks): the rounds were
    rebuilt with thread 0's round-robin partitions late (0, 2, 4, 6), not thread 1's block (4-7)."""
    doc = {"schema": "partita.result/1", "benchmark": "p2p",
           "environment": {"mpi_library": "MPICH Version: 5.0.2"},
           "config": {"noise": "delay:200us", "noise_thread": 1, "mapping": "block"},
           "results": [{"case": {"bytes": 65536, "partitions": 8, "threads": 2},
                        "metrics": {"t_part_us": {"samples": [210.0, 205.0]}, "t_last_us": {"samples": [10.0, 5.0]}}}]}
    f = tmp_path / "p2p.json"
    f.write_text(json.dumps(doc))
    [case], _ = load_cases(f)
    r = case.rounds[0]
    assert r.threads == [0, 0, 0, 0, 1, 1, 1, 1]
    assert [u for u, t in enumerate(r.ready_us) if t > 0] == [4, 5, 6, 7] and r.ready_us[7] == pytest.approx(200)
    assert case.laggard_thread == 1 and case.laggard_partitions == [4, 5, 6, 7]


def test_p2p_rounds_whose_clocks_disagree_are_left_out(tmp_path, params):
    """A last arrival before the last mark (t_last < 0) or a first mark after the last (t_part < t_last) is no
    round the model can replay: left out and said so; every round so is an error, not advice on nonsense."""
    def p2p(t_part, t_last):
        f = tmp_path / "p2p.json"
        f.write_text(json.dumps({"schema": "partita.result/1", "benchmark": "p2p", "config": {"noise": "none"},
                                 "results": [{"case": {"bytes": 65536, "partitions": 8, "threads": 1},
                                              "metrics": {"t_part_us": {"samples": t_part},
                                                          "t_last_us": {"samples": t_last}}}]}))
        return f
    [case], _ = load_cases(p2p([30.0, 40.0, 8.0, 35.0], [10.0, -5.0, 9.0, 12.0]))
    assert len(case.rounds) == 2 and "2 of 4 rounds left out" in case.label
    assert advise_case(params, case).measured_now_us == pytest.approx(11.0)
    with pytest.raises(SourceError, match="no usable round .*2 with t_last < 0 or t_part < t_last"):
        load_cases(p2p([30.0, 40.0], [-1.0, -2.0]))


def test_unusable_inputs(tmp_path):
    with pytest.raises(SourceError, match="no such trace"):
        load_cases(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceError, match="neither a trace folder"):
        load_cases(tmp_path / "empty")
    write_trace(tmp_path / "t", [rank_doc(0, 1, [send_request(0, 0, 0, [(0, [1], [0], 2)])])])
    with pytest.raises(SourceError, match="a rank file of a trace"):
        load_cases(tmp_path / "t" / "rank-00000.json")


def test_native_paths():
    assert native_policy("MPICH Version: 5.0.2")[0] == "bulk"
    assert native_policy("Open MPI v5.0.5, package: Open MPI")[0] == "none"
    assert native_policy(None)[0] == "none"


def test_a_single_threads_late_partition_is_named_and_the_table_stays_aligned(tmp_path, params):
    # one thread marks 4 partitions, partition 0 last and 200 us after the others (its first
    # partition computed last): the advice names partition 0, not "the last partition" (which reads
    # as partition 3), and the rows planned for the laggard, the longest, keep the columns aligned
    us = 1000
    rounds = [(i * 1_000_000, [i * 1_000_000 + 250 * us] + [i * 1_000_000 + (50 + u) * us for u in (1, 2, 3)],
               [0] * 4, i * 1_000_000 + 300 * us) for i in range(20)]
    trace = load_trace(write_trace(tmp_path / "t", [rank_doc(0, 2, [send_request(0, 1, 3, rounds)]),
                                                    rank_doc(1, 2, [])]))
    [case] = cases_from_trace(trace)
    assert case.laggard_thread is None and case.laggard_partitions == [0]
    lines = advice_lines(advise_case(params, case))
    assert any("except partition 0, " in x and "late in 100% of rounds" in x for x in lines), lines
    header = next(x for x in lines if "how it is sent" in x)
    rows = [x for x in lines[lines.index(header) + 1:] if not x.startswith("   (")]
    assert len(rows) > 4 and any("laggard" in x for x in rows)
    col = header.index("after last Pready") + len("after last Pready")   # every row's time ends under it
    assert all(x[:col].endswith(" µs") for x in rows), "\n".join([header] + rows)


def test_keep_partitions_limits_the_candidates(tmp_path, params):
    [case] = cases_from_trace(laggard_trace(tmp_path, partitions=8))
    adv = advise_case(params, case, keep_partitions=True)
    assert {o.candidate.partitions for o in adv.outcomes} == {8}
    assert len({o.candidate.partitions for o in advise_case(params, case).outcomes}) > 1


def test_one_thread_marking_in_a_loop_has_no_laggard(tmp_path, params):
    # one thread marks 8 partitions 0.1 µs apart: the last one is always last, by 0.1 µs; that
    # made a laggard "0.0 µs late in 100% of rounds" and a second model row planned for it
    trace = laggard_trace(tmp_path, partitions=8, share=0.0, jitter_us=0, threads_per_partition=8)
    [case] = cases_from_trace(trace)
    assert case.laggard_share >= 0.5 and case.laggard_delay_us < 1.0
    adv = advise_case(params, case)
    rows = [(o.candidate.partitions, o.candidate.describe()) for o in adv.outcomes]
    assert len(rows) == len(set(rows)), f"a row twice: {rows}"
    assert not any(o.candidate.delay_us for o in adv.outcomes)
    text = "\n".join(advice_lines(adv))
    assert "late in" not in text and "(none is late)" in text


def test_the_timer_with_nothing_to_split_is_the_current_setting(params):
    """Under libpartita's timer, at a count where the timer has no candidate of its own (it sends the
    model's layout), there was no current setting: the advice told the user to switch to
    another policy predicted no faster, without a comparison."""
    from partita.trace.advise import Case
    from partita.trace.analysis import RoundPattern

    rounds = [RoundPattern(0.0, [0.0], [0], None, 3.0) for _ in range(5)]
    adv = advise_case(params, Case("timer run", 4096, 1, rounds, "timer", "libpartita's timer policy"))
    assert adv.current is not None and adv.current.candidate.policy == "model"
    assert adv.best is adv.current
    assert "keep what you do (libpartita's timer policy, which sends the model's layout here" in \
        "\n".join(advice_lines(adv))


def test_a_current_setting_the_model_does_not_cover_is_said(params):
    from partita.trace.advise import Case
    from partita.trace.analysis import RoundPattern

    rounds = [RoundPattern(0.0, [0.0, 0.0, 0.0, 80.0], [0, 0, 0, 1], None, 90.0) for _ in range(5)]
    adv = advise_case(params, Case("static run", 1 << 20, 4, rounds, "static", "libpartita's static policy"))
    assert adv.current is None
    text = "\n".join(advice_lines(adv))
    assert "now: libpartita's static policy, which the model does not cover" in text


def test_advice_times_under_a_microsecond_tell_current_and_advised_apart(params):
    """'0.8 µs instead of 0.8 µs now, 1.1x faster': one decimal hid the difference the gain was about."""
    from partita.trace.advise import Advice, Case, Outcome
    from partita.trace.analysis import RoundPattern, fmt_us

    assert fmt_us(0.75) == "0.75 µs" and fmt_us(0.82) == "0.82 µs" and fmt_us(3.25) == "3.2 µs"
    case = Case("c", 4096, 8, [RoundPattern(0.0, [0.0] * 8, [0] * 8, None, 1.0)], "timer", "libpartita's timer policy")
    cur, best = Outcome(Candidate(8, "timer", delta_us=5.0, messages=1, default_delta=True), 0.82), \
        Outcome(Candidate(8, "none", messages=8), 0.75)
    text = "\n".join(advice_lines(Advice(case, [cur, best], best, cur)))
    assert "0.75 µs instead of 0.82 µs now" in text and "1.09x faster" in text


def test_per_request_with_p2p_results_is_refused(tmp_path):
    """--per-request on partita-p2p results was ignored without a word."""
    f = tmp_path / "p2p.json"
    f.write_text(json.dumps({"schema": "partita.result/1", "benchmark": "p2p", "config": {"noise": "none"},
                             "results": [{"case": {"bytes": 4096, "partitions": 4, "threads": 1},
                                          "metrics": {"t_part_us": {"samples": [3.0]},
                                                      "t_last_us": {"samples": [1.0]}}}]}))
    assert len(load_cases(f)[0]) == 1
    with pytest.raises(SourceError, match="--per-request applies to a trace folder"):
        load_cases(f, per_request=True)
