"""Synthetic partita.trace/1 folders for the trace reader and analysis tests."""

from __future__ import annotations

import json
from pathlib import Path

FORMAT = "partita.trace/1"


def rank_doc(rank: int, size: int, requests: list[dict], offset_ns: int = 0, init_ns: int = 0,
             finalize_ns: int = 10_000_000, mpi_time_ns: dict | None = None, dropped_events: int = 0) -> dict:
    return {
        "format": FORMAT, "rank": rank, "size": size, "hostname": f"h{rank}",
        "mpi_library": "MPICH Version: 5.0.2", "thread_level": "MPI_THREAD_MULTIPLE",
        "preloaded_after": None,
        "clock": {"reference_rank": 0, "offset_ns": offset_ns, "uncertainty_ns": 0, "shared": offset_ns == 0},
        "wall": {"init_ns": init_ns, "finalize_ns": finalize_ns},
        "mpi_time_ns": mpi_time_ns or {"p2p": 0, "collective": 0, "partitioned": 0},
        "mpi_calls": {"p2p": 0, "collective": 0, "partitioned": 0},
        "overflow": {"dropped_events": dropped_events, "dropped_rounds": 0, "capacity_events": 1 << 20},
        "requests": requests,
    }


def send_request(id: int, peer: int, tag: int, rounds: list[tuple[int, list, list, int | None]],
                 count: int = 1024, type_size: int = 4, comm_size: int = 2) -> dict:
    """rounds: (start_ns, ready_ns list, ready_thread list, complete_ns)."""
    parts = len(rounds[0][1])
    return {"id": id, "kind": "send", "peer": peer, "tag": tag, "comm_size": comm_size,
            "partitions": parts, "count": count, "type_size": type_size, "bytes": parts * count * type_size,
            "rounds": [{"start_ns": s, "ready_ns": r, "ready_thread": t, "complete_ns": c}
                       for s, r, t, c in rounds]}


def recv_request(id: int, peer: int, tag: int, rounds: list[tuple[int, list, int | None]],
                 count: int = 1024, type_size: int = 4, comm_size: int = 2) -> dict:
    """rounds: (start_ns, arrived_ns list, complete_ns)."""
    parts = len(rounds[0][1])
    return {"id": id, "kind": "recv", "peer": peer, "tag": tag, "comm_size": comm_size,
            "partitions": parts, "count": count, "type_size": type_size, "bytes": parts * count * type_size,
            "rounds": [{"start_ns": s, "arrived_ns": a, "complete_ns": c} for s, a, c in rounds]}


def write_trace(folder: Path, docs: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for d in docs:
        (folder / f"rank-{d['rank']:05d}.json").write_text(json.dumps(d))
    return folder
