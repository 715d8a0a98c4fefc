"""A trace folder as a Chrome / Perfetto timeline (the trace-event JSON format).

One process per rank, one track per (rank, thread). Each send partition is a
complete ("X") slice on the track of the thread that marked it ready, from its
MPI_Pready to its first MPI_Parrived == true on the receiver (both on rank 0's
clock; the reader applied the offsets). The laggard of a round (the partition
marked last, if alone at that instant) is named "LAGGARD p<N>" and coloured, so it stands out at a glance.
A partition whose arrival is unknown (no matching receive, or never polled true)
ends at the send's completion and is named "... (arrival unknown)". Each request's
rounds (MPI_Start to its completing Wait/Test) get a track of their own.

Slices on one track must nest; a thread's partitions overlap in time when several
are in flight, so a thread's slices are spread over as many lanes ("thread 2",
"thread 2 +1", ...) as needed, each partition in the first lane that is free. A rank's
tracks are numbered in (thread, lane) order, then its requests' rounds tracks: however
many lanes a thread needs, no two tracks share a number.
"""

from __future__ import annotations

import json
from pathlib import Path

from partita.results import write_text_atomically
from partita.trace.reader import Request, Trace

# Chrome's reserved colour names (Perfetto colours by name instead).
LAGGARD_COLOUR = "terrible"
PARTITION_COLOUR = "good"
ROUND_COLOUR = "grey"
UNKNOWN_THREAD = -1   # a partition whose ready_thread is null: on a track of its own


def _us(t_ns: int, origin_ns: int) -> float:
    return (t_ns - origin_ns) / 1000.0


def _origin(trace: Trace) -> int:
    starts = [rd.start_ns for q in trace.requests for rd in q.rounds]
    return min(starts + [r.init_ns for r in trace.ranks])


def round_arrivals(recv: Request | None, i: int) -> list | None:
    """The receiver's first MPI_Parrived == true per partition in round i, if it recorded the round."""
    return recv.rounds[i].arrived_ns if recv is not None and i < len(recv.rounds) else None


def arrival_of(send: Request, recv: Request | None, arrived: list | None, p: int) -> int | None:
    """When send partition p arrived: the first MPI_Parrived == true of the receive
    partition holding its last byte (the partition counts of the two sides may differ)."""
    if not arrived or recv is None or recv.partition_bytes <= 0:
        return None
    q = min(len(arrived) - 1, ((p + 1) * send.partition_bytes - 1) // recv.partition_bytes)
    return arrived[q]


def _last_marked(marked: list[tuple[int, int]]) -> int | None:
    """The partition marked last in a round; None when several share that instant (one
    MPI_Pready_range or MPI_Pready_list marked them): no partition lags the others."""
    last = max(t for t, _ in marked)
    at_last = [p for t, p in marked if t == last]
    return at_last[0] if len(at_last) == 1 else None


def _partition_slices(send: Request, recv: Request | None) -> list[dict]:
    """(thread, start, end, name, args, laggard) of every marked partition of a send request."""
    out = []
    for i, rd in enumerate(send.rounds):
        marked = rd.marked()
        if not marked:
            continue
        laggard = _last_marked(marked)
        arrived = round_arrivals(recv, i)
        for t, p in marked:
            end = arrival_of(send, recv, arrived, p)
            known = end is not None and end >= t
            if not known:
                end = rd.complete_ns if rd.complete_ns is not None and rd.complete_ns >= t else t
            name = f"{'LAGGARD ' if p == laggard else ''}p{p}{'' if known else ' (arrival unknown)'}"
            thread = rd.ready_thread[p] if rd.ready_thread else 0
            out.append({"thread": UNKNOWN_THREAD if thread is None else thread, "start": t, "end": end,
                        "name": name, "laggard": p == laggard,
                        "args": {"request": send.id, "peer": send.peer, "tag": send.tag, "round": i,
                                 "partition": p, "bytes": send.partition_bytes,
                                 "ready_to_arrival_us": (end - t) / 1000.0 if known else None}})
    return out


def _lanes(slices: list[dict]) -> None:
    """Gives every slice a lane of its thread where it overlaps no other slice."""
    ends: dict[int, list[int]] = {}
    for s in sorted(slices, key=lambda s: (s["start"], -s["end"])):
        lanes = ends.setdefault(s["thread"], [])
        for k, end in enumerate(lanes):
            if end <= s["start"]:
                s["lane"], lanes[k] = k, s["end"]
                break
        else:
            s["lane"] = len(lanes)
            lanes.append(s["end"])


def trace_events(trace: Trace) -> list[dict]:
    """The trace-event list (metadata first) of a loaded trace."""
    origin = _origin(trace)
    events: list[dict] = []
    for r in trace.ranks:
        events.append({"ph": "M", "name": "process_name", "pid": r.rank, "tid": 0,
                       "args": {"name": f"rank {r.rank} ({r.hostname})"}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": r.rank, "tid": 0,
                       "args": {"sort_index": r.rank}})
    slices_by_rank: dict[int, list[dict]] = {}
    for send, recv in trace.pairs():
        slices_by_rank.setdefault(send.rank, []).extend(_partition_slices(send, recv))
    tracks_of: dict[int, int] = {}  # rank -> its thread tracks; the rounds tracks come after them
    for rank, slices in slices_by_rank.items():
        _lanes(slices)
        tids = {key: tid for tid, key in enumerate(sorted({(s["thread"], s["lane"]) for s in slices}))}
        tracks_of[rank] = len(tids)
        for s in slices:
            events.append({"ph": "X", "cat": "partition", "name": s["name"], "pid": rank,
                           "tid": tids[s["thread"], s["lane"]],
                           "ts": _us(s["start"], origin), "dur": (s["end"] - s["start"]) / 1000.0,
                           "cname": LAGGARD_COLOUR if s["laggard"] else PARTITION_COLOUR, "args": s["args"]})
        for (thread, lane), tid in tids.items():
            events.append({"ph": "M", "name": "thread_name", "pid": rank, "tid": tid,
                           "args": {"name": f"thread {'?' if thread == UNKNOWN_THREAD else thread}"
                                            + (f" +{lane}" if lane else "")}})
            events.append({"ph": "M", "name": "thread_sort_index", "pid": rank, "tid": tid,
                           "args": {"sort_index": tid}})
    for q in trace.requests:
        tid = tracks_of.get(q.rank, 0) + q.id
        events.append({"ph": "M", "name": "thread_name", "pid": q.rank, "tid": tid,
                       "args": {"name": f"{q.kind} request {q.id} (peer {q.peer}, tag {q.tag}, "
                                        f"{q.partitions} x {q.partition_bytes} B)"}})
        for i, rd in enumerate(q.rounds):
            end = rd.complete_ns if rd.complete_ns is not None else rd.start_ns
            events.append({"ph": "X", "cat": "round", "name": f"round {i}", "pid": q.rank, "tid": tid,
                           "ts": _us(rd.start_ns, origin), "dur": (end - rd.start_ns) / 1000.0,
                           "cname": ROUND_COLOUR, "args": {"request": q.id, "round": i,
                                                           "completed": rd.complete_ns is not None}})
    return events


def write_perfetto(trace: Trace, path: str | Path) -> Path:
    """Writes the timeline of `trace` to `path` (open it in ui.perfetto.dev or chrome://tracing)."""
    path = Path(path)
    doc = {"traceEvents": trace_events(trace), "displayTimeUnit": "ns",
           "otherData": {"source": "partita.trace/1", "folder": str(trace.folder)}}
    write_text_atomically(path, json.dumps(doc))
    return path
