"""Checks the trace folders written by libpartita-trace for traced_program.

    check_trace.py counts DIR P R T [--partita]     exact event counts of one run
    check_trace.py threads DIR P R T                new threads every round: T ids a round, reused
    check_trace.py overflow DIR P R                 dropped events reported, no half round
    check_trace.py same DIR_A DIR_B                 two runs recorded the same partitioned events
    check_trace.py files DIR                        every rank file is partita.trace/1 JSON
    check_trace.py calls DIR P2P COLLECTIVE         each rank counted exactly these MPI calls,
                                                    with time inside each category
    check_trace.py layouts DIR R [--split]          adaptive: every send round names its layout (--split: some
                                                    are groups the timer splits, beside the same unsplit)
    check_trace.py transport DIR NAME               both requests name libpartita's transport
                                                    NAME ("-": none, the native path)

With `-- LAUNCH...` after the arguments, the command is run first with
PARTITA_TRACE=DIR (the folder emptied before) and must exit 0.

Only the json module: the format is the contract (docs/trace.md), read here
independently of the Python reader.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

BARRIERS = 3  # traced_program's MPI_Barrier calls


def fail(msg: str) -> None:
    print(f"check_trace: {msg}", file=sys.stderr)
    sys.exit(1)


def load(folder: str) -> list[dict]:
    files = sorted(Path(folder).glob("rank-*.json"))
    if [f.name for f in files] != ["rank-00000.json", "rank-00001.json"]:
        fail(f"{folder}: expected rank-00000.json and rank-00001.json, found {[f.name for f in files]}")
    docs = []
    for f in files:
        doc = json.loads(f.read_text())
        if doc.get("format") != "partita.trace/1":
            fail(f"{f}: format is {doc.get('format')!r}")
        docs.append(doc)
    return docs


def one_request(doc: dict, kind: str) -> dict:
    reqs = doc["requests"]
    if len(reqs) != 1 or reqs[0]["kind"] != kind:
        fail(f"rank {doc['rank']}: expected one {kind} request, got {[r['kind'] for r in reqs]}")
    return reqs[0]


def check_counts(folder: str, P: int, R: int, T: int, partita: bool) -> None:
    send_doc, recv_doc = load(folder)
    for doc in (send_doc, recv_doc):
        if doc["overflow"]["dropped_events"] or doc["overflow"]["dropped_rounds"]:
            fail(f"rank {doc['rank']}: unexpected overflow {doc['overflow']}")
        if doc["mpi_calls"]["collective"] != BARRIERS or doc["mpi_calls"]["p2p"] != 1:
            fail(f"rank {doc['rank']}: mpi_calls {doc['mpi_calls']}, expected {BARRIERS} collective, 1 p2p")
        if not doc["wall"]["init_ns"] < doc["wall"]["finalize_ns"]:
            fail(f"rank {doc['rank']}: wall {doc['wall']}")
        if doc["clock"] != {"reference_rank": 0, "offset_ns": 0, "uncertainty_ns": 0, "shared": True}:
            fail(f"rank {doc['rank']}: one host, yet clock {doc['clock']}")
        if (doc["preloaded_after"] == "libpartita-mpi.so") != partita:
            fail(f"rank {doc['rank']}: preloaded_after {doc['preloaded_after']!r}")
    send, recv = one_request(send_doc, "send"), one_request(recv_doc, "recv")
    for req, peer in ((send, 1), (recv, 0)):
        expect = {"peer": peer, "tag": 7, "comm_size": 2, "partitions": P, "count": 16, "type_size": 8,
                  "bytes": P * 16 * 8}
        got = {k: req[k] for k in expect}
        if got != expect:
            fail(f"{req['kind']} request: {got} != {expect}")
        if len(req["rounds"]) != R:
            fail(f"{req['kind']} request: {len(req['rounds'])} rounds, expected {R}")
    owner: dict[int, int] = {}  # partition -> thread id
    for i, rnd in enumerate(send["rounds"]):
        if "arrived_ns" in rnd or len(rnd["ready_ns"]) != P or None in rnd["ready_ns"]:
            fail(f"send round {i}: not {P} ready stamps: {rnd}")
        if not all(rnd["start_ns"] <= t <= rnd["complete_ns"] for t in rnd["ready_ns"]):
            fail(f"send round {i}: a ready stamp outside start..complete")
        for p, th in enumerate(rnd["ready_thread"]):
            if owner.setdefault(p, th) != th:
                fail(f"send round {i}: partition {p} marked by thread {th}, before by {owner[p]}")
    # worker p % T marks partition p; the main thread (id 0: it started the
    # request first) marks none
    by_worker = {p % T: owner[p] for p in range(P)}
    if any(owner[p] != by_worker[p % T] for p in range(P)) or len(set(by_worker.values())) != min(T, P) \
            or 0 in by_worker.values():
        fail(f"thread ids per partition {owner} do not follow p % {T} on {T} worker threads")
    for i, rnd in enumerate(recv["rounds"]):
        if "ready_ns" in rnd or len(rnd["arrived_ns"]) != P or None in rnd["arrived_ns"]:
            fail(f"recv round {i}: not {P} arrivals: {rnd}")
        if rnd["complete_ns"] is None or not all(rnd["start_ns"] <= t <= rnd["complete_ns"] for t in rnd["arrived_ns"]):
            fail(f"recv round {i}: an arrival outside start..complete")
        ready = send["rounds"][i]["ready_ns"]
        if any(a < r for a, r in zip(rnd["arrived_ns"], ready)):
            fail(f"round {i}: a partition arrived before it was ready (one clock on one host)")
    print(f"check_trace: {R} rounds of {P} partitions, {T} threads: ok")


# The tracer hands the slot of an ended thread to a new one only once this many wait (events.c)
REUSE_AFTER = 16


def check_thread_reuse(folder: str, P: int, R: int, T: int) -> None:
    send = one_request(load(folder)[0], "send")
    if len(send["rounds"]) != R or any(None in rnd["ready_ns"] for rnd in send["rounds"]):
        fail(f"expected {R} rounds with {P} ready stamps")
    most = REUSE_AFTER + T  # ids 1.. of workers; the main thread is 0
    for i, rnd in enumerate(send["rounds"]):
        ids = set(rnd["ready_thread"])
        if len(ids) != min(T, P) or not ids <= set(range(1, most + 1)):
            fail(f"round {i}: thread ids {sorted(ids)}, expected {min(T, P)} different ones in 1..{most} "
                 "(each worker an id of its own, ids of ended threads reused)")
    print(f"check_trace: {R} rounds of new threads, each worker with an id of its own, ids at most {most}: ok")


def check_overflow(folder: str, P: int, R: int) -> None:
    docs = load(folder)
    send = one_request(docs[0], "send")
    ov = docs[0]["overflow"]
    if ov["dropped_events"] <= 0 or ov["dropped_rounds"] <= 0:
        fail(f"sender overflow not reported: {ov}")
    if not send["rounds"]:
        fail("no round was written: the capacity should hold the first rounds")
    if len(send["rounds"]) + ov["dropped_rounds"] != R:
        fail(f"{len(send['rounds'])} rounds written + {ov['dropped_rounds']} dropped != {R}")
    for rnd in send["rounds"]:
        if None in rnd["ready_ns"] or rnd["complete_ns"] is None:
            fail(f"a half round was written: {rnd}")
    print(f"check_trace: overflow {ov}: ok")


def events(folder: str) -> list:
    """What two runs of the same program must share: per rank and request, the
    rounds, which partitions have stamps, and the partitions per thread."""
    out = []
    for doc in load(folder):
        for req in doc["requests"]:
            key = {k: req[k] for k in ("kind", "peer", "tag", "partitions", "count", "type_size")}
            stamps = [[t is not None for t in rnd.get("ready_ns", rnd.get("arrived_ns"))] for rnd in req["rounds"]]
            groups = sorted({tuple(p for p, th in enumerate(rnd["ready_thread"]) if th == t)
                             for rnd in req["rounds"] for t in set(rnd["ready_thread"])}) if req["kind"] == "send" else []
            out.append((doc["rank"], key, stamps, groups, [r["complete_ns"] is not None for r in req["rounds"]]))
    return out


def check_layouts(folder: str, R: int, split: bool = False) -> None:
    """Under libpartita's adaptive policy every send round names its layout, and
    its exploration uses more than one; receive rounds name none. split: with a
    progress thread, some round used the candidate the timer splits ("split": true)
    and the same groups unsplit in another."""
    send_doc, recv_doc = load(folder)
    rounds = one_request(send_doc, "send")["rounds"]
    if len(rounds) != R:
        fail(f"{len(rounds)} send rounds, expected {R}")
    layouts = [rnd.get("layout") for rnd in rounds]
    if any(not isinstance(x, dict) or x.get("messages", 0) < 1 or not isinstance(x.get("cut"), bool)
           for x in layouts):
        fail(f"a send round without a layout: {layouts}")
    if len({(x["messages"], x["cut"]) for x in layouts}) < 2:
        fail(f"one layout in every round: {layouts}")
    split_groups = {x["messages"] for x in layouts if x.get("split")}
    if split and not split_groups & {x["messages"] for x in layouts if not x["cut"] and not x.get("split")}:
        fail(f"no round of groups split by the timer, beside the same groups unsplit: {layouts}")
    if not split and split_groups:
        fail(f"a round of groups split by the timer without a progress thread: {layouts}")
    if any("layout" in rnd for rnd in one_request(recv_doc, "recv")["rounds"]):
        fail("a receive round names a layout")
    print(f"check_trace: layouts of {R} rounds: ok")


def check_transport(folder: str, name: str) -> None:
    """Both requests name libpartita's transport; "-": no transport key (no libpartita)."""
    send_doc, recv_doc = load(folder)
    got = [one_request(send_doc, "send").get("transport"), one_request(recv_doc, "recv").get("transport")]
    want = [None, None] if name == "-" else [name, name]
    if got != want:
        fail(f"transport of the send and receive requests: {got}, expected {want}")
    print(f"check_trace: transport {name}: ok")


def check_calls(folder: str, p2p: int, collective: int) -> None:
    for doc in load(folder):
        calls, time_ns = doc["mpi_calls"], doc["mpi_time_ns"]
        if calls["p2p"] != p2p or calls["collective"] != collective:
            fail(f"rank {doc['rank']}: mpi_calls {calls}, expected {p2p} p2p, {collective} collective")
        if time_ns["p2p"] <= 0 or time_ns["collective"] <= 0:
            fail(f"rank {doc['rank']}: mpi_time_ns {time_ns}, expected time in p2p and collective calls")
    print(f"check_trace: {p2p} p2p and {collective} collective calls on every rank: ok")


def run(folder: str, command: list[str]) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    done = subprocess.run(command, env={**os.environ, "PARTITA_TRACE": folder}, timeout=100)
    if done.returncode != 0:
        fail(f"{' '.join(command)} exited {done.returncode}")


def main(argv: list[str]) -> None:
    if "--" in argv:
        at = argv.index("--")
        run(argv[2], argv[at + 1:])
        argv = argv[:at]
    what = argv[1] if len(argv) > 1 else ""
    if what == "counts" and len(argv) in (6, 7):
        check_counts(argv[2], int(argv[3]), int(argv[4]), int(argv[5]), "--partita" in argv[6:])
    elif what == "threads" and len(argv) == 6:
        check_thread_reuse(argv[2], int(argv[3]), int(argv[4]), int(argv[5]))
    elif what == "overflow" and len(argv) == 5:
        check_overflow(argv[2], int(argv[3]), int(argv[4]))
    elif what == "same" and len(argv) == 4:
        a, b = events(argv[2]), events(argv[3])
        if a != b or not a:
            fail(f"{argv[2]} and {argv[3]} differ:\n{a}\n{b}")
        print("check_trace: the same partitioned events in both folders: ok")
    elif what == "layouts" and len(argv) in (4, 5) and argv[4:] in ([], ["--split"]):
        check_layouts(argv[2], int(argv[3]), argv[4:] == ["--split"])
    elif what == "transport" and len(argv) == 4:
        check_transport(argv[2], argv[3])
    elif what == "calls" and len(argv) == 5:
        check_calls(argv[2], int(argv[3]), int(argv[4]))
    elif what == "files" and len(argv) == 3:
        load(argv[2])
        print("check_trace: files ok")
    else:
        fail(__doc__)


if __name__ == "__main__":
    main(sys.argv)
