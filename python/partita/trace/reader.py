"""Reading a partita.trace/1 folder: one `rank-<R>.json` per rank, written at MPI_Finalize.

`load_trace(folder)` validates every file (a bad one raises TraceError naming the file and
what is wrong in it) and returns a Trace whose times are all on rank 0's clock: each rank's
`clock.offset_ns` is added to every time it recorded (round times and the MPI_Init /
MPI_Finalize wall times); a missing time (null) stays None.
"""

from __future__ import annotations

import json
import reprlib
from collections import defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path

FORMAT = "partita.trace/1"
RANK_GLOB = "rank-*.json"
TIME_CLASSES = ("p2p", "collective", "partitioned")


class TraceError(ValueError):
    """A trace folder or one of its files cannot be used; the message names the file."""


@dataclass
class Round:
    start_ns: int
    complete_ns: int | None
    ready_ns: list[int | None] | None = None      # send requests only
    ready_thread: list[int | None] | None = None  # send requests only
    arrived_ns: list[int | None] | None = None    # receive requests only
    layout: tuple[int, bool, bool] | None = None  # send, under libpartita: (messages, cut, split) of the round

    def marked(self) -> list[tuple[int, int]]:
        """(MPI_Pready time, partition) of each partition this send round marked."""
        return [(t, p) for p, t in enumerate(self.ready_ns or []) if t is not None]


@dataclass
class Request:
    rank: int
    id: int
    kind: str  # 'send' | 'recv'
    peer: int
    tag: int
    comm_size: int
    partitions: int
    count: int
    type_size: int
    bytes: int
    rounds: list[Round] = field(default_factory=list)
    transport: str | None = None  # libpartita's transport ('mpi', 'fabric'); None: not known or native

    @property
    def partition_bytes(self) -> int:
        return self.count * self.type_size


@dataclass
class RankTrace:
    path: Path
    rank: int
    size: int
    hostname: str
    mpi_library: str
    thread_level: str
    preloaded_after: str | None
    offset_ns: int
    uncertainty_ns: int
    init_ns: int
    finalize_ns: int
    mpi_time_ns: dict[str, int]
    mpi_calls: dict[str, int]
    overflow: dict[str, int]
    requests: list[Request]

    @property
    def wall_ns(self) -> int:
        return self.finalize_ns - self.init_ns


@dataclass
class Trace:
    folder: Path
    ranks: list[RankTrace]

    @property
    def requests(self) -> list[Request]:
        return [q for r in self.ranks for q in r.requests]

    @property
    def dropped_events(self) -> int:
        return sum(r.overflow.get("dropped_events", 0) for r in self.ranks)

    @property
    def dropped_rounds(self) -> int:
        return sum(r.overflow.get("dropped_rounds", 0) for r in self.ranks)

    def pairs(self) -> list[tuple[Request, Request | None]]:
        """Each send request with its matching receive request, or None if no rank holds it.

        A send on rank A to peer B with tag T matches the receive on rank B from peer A with
        tag T, in creation order per (A, B, T) triple. Sends come in (rank, id) order.
        """
        recvs: dict[tuple[int, int, int], deque[Request]] = defaultdict(deque)
        for q in self.requests:
            if q.kind == "recv":
                recvs[(q.peer, q.rank, q.tag)].append(q)
        out = []
        for q in self.requests:
            if q.kind == "send":
                pending = recvs.get((q.rank, q.peer, q.tag))
                out.append((q, pending.popleft() if pending else None))
        return out


def is_rank_file(path: str | Path, folder: str | Path) -> bool:
    """Whether writing `path` writes a rank file of the trace `folder`, one there or a new one (every
    reader takes any RANK_GLOB file of the folder for a rank): a symlink counts as what it names."""
    target = Path(path).resolve()
    return target.parent == Path(folder).resolve() and target.match(RANK_GLOB)


def load_trace(folder: str | Path) -> Trace:
    """Load every rank file of a trace folder; raise TraceError on anything unusable."""
    folder = Path(folder)
    if not folder.is_dir():
        raise TraceError(f"{folder}: no such trace folder")
    files = sorted(folder.glob(RANK_GLOB))
    if not files:
        raise TraceError(f"{folder}: no rank files ({RANK_GLOB}); is this a folder written with PARTITA_TRACE?")
    ranks = [_load_rank(f) for f in files]
    seen: dict[int, Path] = {}
    for r in ranks:
        if r.rank in seen:
            raise TraceError(f"{r.path}: rank {r.rank} also in {seen[r.rank]}")
        if r.size != ranks[0].size:  # files of two runs, or a hand-edited one: no one program's ranks
            raise TraceError(f"{r.path}: rank {r.rank} of {r.size}, but {ranks[0].path} is rank {ranks[0].rank} "
                             f"of {ranks[0].size}: the files of one trace give one rank count")
        seen[r.rank] = r.path
    ranks.sort(key=lambda r: r.rank)
    return Trace(folder, ranks)


def _load_rank(path: Path) -> RankTrace:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise TraceError(f"{path}: unreadable ({e})") from e
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        # a document cut short fails at its very end, or inside a string it never closes
        if e.pos >= len(text.rstrip()) or e.msg.startswith("Unterminated string"):
            raise TraceError(f"{path}: truncated JSON (the file ends at byte {len(text)} mid-document; "
                             "did the program end before MPI_Finalize?)") from e
        raise TraceError(f"{path}: not valid JSON ({e})") from e
    except ValueError as e:  # an integer of more digits than Python converts (4300)
        raise TraceError(f"{path}: not valid JSON ({e})") from e
    try:
        return _rank_from(path, doc)
    except _Bad as e:
        raise TraceError(f"{path}: {e}") from None


class _Bad(Exception):
    """A validation failure inside one file (turned into TraceError with the file name)."""


def _get(d: dict, key: str, where: str):
    if key not in d:
        raise _Bad(f"missing key {where}{key!r}")
    return d[key]


def _is_int64(v) -> bool:
    """What the tracer writes (int64_t): a larger JSON integer overflowed the analysis's floats."""
    return isinstance(v, int) and not isinstance(v, bool) and -(1 << 63) <= v < 1 << 63


def _int(d: dict, key: str, where: str = "", nullable: bool = False) -> int | None:
    v = _get(d, key, where)
    if v is None and nullable:
        return None
    if not _is_int64(v):
        raise _Bad(f"{where}{key!r} must be an integer{' or null' if nullable else ''} (64 bits), "
                   f"not {reprlib.repr(v)}")
    return v


def _str(d: dict, key: str, where: str = "") -> str:
    v = _get(d, key, where)
    if not isinstance(v, str):
        raise _Bad(f"{where}{key!r} must be a string, not {v!r}")
    return v


def _obj(d: dict, key: str, where: str = "") -> dict:
    v = _get(d, key, where)
    if not isinstance(v, dict):
        raise _Bad(f"{where}{key!r} must be an object, not {type(v).__name__}")
    return v


def _counters(d: dict, key: str, names: tuple[str, ...]) -> dict[str, int]:
    o = _obj(d, key)
    counters = {k: _int(o, k, f"{key}.") for k in names}
    for k, v in counters.items():
        if v < 0:   # a time or a count: a negative one is no measurement
            raise _Bad(f"{key}.{k!r} must be at least 0, not {v}")
    return counters | {k: v for k, v in o.items() if k not in names and isinstance(v, int)}


def _rank_from(path: Path, doc) -> RankTrace:
    if not isinstance(doc, dict):
        raise _Bad(f"expected a JSON object, found {type(doc).__name__}")
    fmt = doc.get("format")
    if fmt != FORMAT:
        raise _Bad(f"format is {fmt!r}, expected {FORMAT!r}")
    rank = _int(doc, "rank")
    size = _int(doc, "size")
    if not 0 <= rank < size:
        raise _Bad(f"rank {rank} is outside 0..{size - 1}")
    clock = _obj(doc, "clock")
    offset = _int(clock, "offset_ns", "clock.")
    uncertainty = _int(clock, "uncertainty_ns", "clock.")
    wall = _obj(doc, "wall")
    init_ns = _int(wall, "init_ns", "wall.")
    finalize_ns = _int(wall, "finalize_ns", "wall.")
    if finalize_ns < init_ns:
        raise _Bad(f"wall.finalize_ns ({finalize_ns}) is before wall.init_ns ({init_ns})")
    preloaded = doc.get("preloaded_after")
    if preloaded is not None and not isinstance(preloaded, str):
        raise _Bad(f"'preloaded_after' must be a string or null, not {preloaded!r}")
    reqs = _get(doc, "requests", "")
    if not isinstance(reqs, list):
        raise _Bad(f"'requests' must be a list, not {type(reqs).__name__}")
    return RankTrace(
        path=path, rank=rank, size=size,
        hostname=_str(doc, "hostname"), mpi_library=_str(doc, "mpi_library"),
        thread_level=_str(doc, "thread_level"), preloaded_after=preloaded,
        offset_ns=offset, uncertainty_ns=uncertainty,
        init_ns=init_ns + offset, finalize_ns=finalize_ns + offset,
        mpi_time_ns=_counters(doc, "mpi_time_ns", TIME_CLASSES),
        mpi_calls=_counters(doc, "mpi_calls", TIME_CLASSES),
        overflow=_counters(doc, "overflow", ("dropped_events", "dropped_rounds", "capacity_events")),
        requests=[_request_from(q, i, rank, offset) for i, q in enumerate(reqs)],
    )


def _request_from(q, i: int, rank: int, offset: int) -> Request:
    where = f"requests[{i}]."
    if not isinstance(q, dict):
        raise _Bad(f"requests[{i}] must be an object, not {type(q).__name__}")
    kind = _str(q, "kind", where)
    if kind not in ("send", "recv"):
        raise _Bad(f"{where}'kind' must be 'send' or 'recv', not {kind!r}")
    n = {k: _int(q, k, where) for k in ("id", "peer", "tag", "comm_size", "partitions", "count",
                                         "type_size", "bytes")}
    if n["partitions"] < 1:
        raise _Bad(f"{where}'partitions' must be at least 1, not {n['partitions']}")
    for k in ("count", "type_size"):
        if n[k] < 0:
            raise _Bad(f"{where}{k!r} must be at least 0, not {n[k]}")
    if n["bytes"] != n["partitions"] * n["count"] * n["type_size"]:
        raise _Bad(f"{where}'bytes' is {n['bytes']}, not partitions*count*type_size = "
                   f"{n['partitions'] * n['count'] * n['type_size']}")
    rounds = _get(q, "rounds", where)
    if not isinstance(rounds, list):
        raise _Bad(f"{where}'rounds' must be a list, not {type(rounds).__name__}")
    transport = q.get("transport")
    if transport is not None and (not isinstance(transport, str) or not transport):
        raise _Bad(f"{where}'transport' must be a transport's name, not {transport!r}")
    return Request(rank=rank, kind=kind, **n, transport=transport,
                   rounds=[_round_from(r, f"{where}rounds[{j}].", kind, n["partitions"], offset)
                           for j, r in enumerate(rounds)])


def _times(r: dict, key: str, where: str, partitions: int, shift: int) -> list[int | None]:
    v = _get(r, key, where)
    if not isinstance(v, list) or len(v) != partitions:
        got = f"{len(v)} entries" if isinstance(v, list) else type(v).__name__
        raise _Bad(f"{where}{key!r} must be a list of {partitions} entries (one per partition), got {got}")
    out = []
    for k, t in enumerate(v):
        if t is not None and not _is_int64(t):
            raise _Bad(f"{where}{key}[{k}] must be an integer or null (64 bits), not {reprlib.repr(t)}")
        out.append(None if t is None else t + shift)
    return out


def _layout(r, where: str) -> tuple[int, bool, bool] | None:
    """The optional `layout` of a send round: libpartita's messages, cut flag and (optional, false when
    absent) split flag: groups that the timer splits when their marking stalls."""
    v = r.get("layout")
    if v is None:
        return None
    if (not isinstance(v, dict) or not isinstance(v.get("messages"), int) or isinstance(v.get("messages"), bool)
            or v["messages"] < 1 or not isinstance(v.get("cut"), bool)
            or not isinstance(v.get("split", False), bool) or (v["cut"] and v.get("split", False))):
        raise _Bad(f"{where}'layout' must be {{\"messages\": n >= 1, \"cut\": true|false[, \"split\": true|false, "
                   f"not with a cut]}}, not {v!r}")
    return v["messages"], v["cut"], v.get("split", False)


def _round_from(r, where: str, kind: str, partitions: int, offset: int) -> Round:
    if not isinstance(r, dict):
        raise _Bad(f"{where[:-1]} must be an object, not {type(r).__name__}")
    start = _int(r, "start_ns", where)
    complete = _int(r, "complete_ns", where, nullable=True)
    rd = Round(start_ns=start + offset, complete_ns=None if complete is None else complete + offset)
    if kind == "send":
        rd.ready_ns = _times(r, "ready_ns", where, partitions, offset)
        rd.ready_thread = _times(r, "ready_thread", where, partitions, 0)
        rd.layout = _layout(r, where)
    else:
        rd.arrived_ns = _times(r, "arrived_ns", where, partitions, offset)
    return rd
