"""ctypes binding to libpartita-model.so: the one implementation of the PLogGP
model, the LogGP parameter file and the tuning table (include/partita/model.h)."""

from __future__ import annotations

import ctypes
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

MAX_SEGMENTS = 8
LOGGP_SCHEMA = "partita.loggp/1"
TUNING_SCHEMA = "partita.tuning/1"
LIBRARY = "libpartita-model.so"

PATTERNS = {"all": 0, "laggard": 1, "uniform": 2}


class ModelError(RuntimeError):
    """The model library or one of its files could not be used."""


class _Segment(ctypes.Structure):
    _fields_ = [("max_bytes", ctypes.c_size_t), ("L", ctypes.c_double), ("o_s", ctypes.c_double),
                ("o_r", ctypes.c_double), ("g", ctypes.c_double), ("G", ctypes.c_double),
                ("handshake_us", ctypes.c_double)]


class _Params(ctypes.Structure):
    _fields_ = [("nseg", ctypes.c_int), ("seg", _Segment * MAX_SEGMENTS), ("o_pready", ctypes.c_double),
                ("max_eager_messages", ctypes.c_int), ("source", ctypes.c_char * 256)]


@dataclass(frozen=True)
class Segment:
    max_bytes: int | None  # None: no upper bound
    L: float
    o_s: float
    o_r: float
    g: float
    G: float
    handshake_us: float

    @property
    def gstar(self) -> float:
        return max(self.g, self.o_s, self.o_r)


def _find_library(lib_dir: str | os.PathLike | None) -> Path:
    """$PARTITA_MODEL_LIB, then lib_dir, then the build found by the launcher."""
    env = os.environ.get("PARTITA_MODEL_LIB")
    if env:
        return Path(env)
    if lib_dir is None:
        from ..launch import BuildInfo, LaunchError
        try:
            lib_dir = BuildInfo.find().lib_dir
        except LaunchError as e:
            raise ModelError(f"cannot find {LIBRARY}: {e}") from e
    return Path(lib_dir) / LIBRARY


class Library:
    """The loaded shared library with typed entry points."""

    def __init__(self, path: Path):
        try:
            self.dll = ctypes.CDLL(str(path))
        except OSError as e:
            raise ModelError(f"cannot load the model library {path}: {e}") from e
        d = self.dll
        P = ctypes.POINTER(_Params)
        dbl, sz, i32 = ctypes.c_double, ctypes.c_size_t, ctypes.c_int
        dptr, szptr, chp = ctypes.POINTER(dbl), ctypes.POINTER(sz), ctypes.c_char_p
        sig = {
            "ptm_params_default": (None, [P]),
            "ptm_params_default_for": (None, [P, chp]),
            "ptm_params_load": (i32, [chp, P, chp, sz]),
            "ptm_params_check": (i32, [P, chp, sz]),
            "ptm_params_default_path": (i32, [chp, sz]),
            "ptm_params_transport_path": (i32, [ctypes.c_char_p, chp, sz]),
            "ptm_params_save": (i32, [chp, P, chp, chp, sz]),
            "ptm_completion_us": (dbl, [P, sz, szptr, dptr]),
            "ptm_arrivals_us": (dbl, [P, sz, szptr, dptr, dptr]),
            "ptm_pattern_ready": (i32, [i32, i32, dbl, dptr]),
            "ptm_grouped_us": (dbl, [P, sz, i32, i32, dptr, dptr]),
            "ptm_cut_us": (dbl, [P, sz, i32, i32, dptr, dptr]),
            "ptm_too_many_eager": (i32, [P, sz, ctypes.c_longlong]),
            "ptm_optimal_transport": (i32, [P, sz, i32, dbl]),
            "ptm_optimal_layout": (i32, [P, sz, i32, dbl, i32, ctypes.POINTER(i32)]),
            "ptm_optimal_transport_ready": (i32, [P, sz, i32, dptr, i32, dptr]),
            "ptm_default_delta_us": (dbl, [P, sz]),
            "ptm_timer_delta_us": (dbl, [P, sz, i32]),
            "ptm_fit_line": (i32, [sz, dptr, dptr, dptr, dptr, dptr, dptr]),
            "ptm_detect_segments": (i32, [sz, dptr, dptr, i32, dbl, i32, szptr]),
            "ptm_table_load": (ctypes.c_void_p, [chp, chp, sz]),
            "ptm_table_lookup": (i32, [ctypes.c_void_p, sz, i32]),
            "ptm_table_size": (sz, [ctypes.c_void_p]),
            "ptm_table_free": (None, [ctypes.c_void_p]),
        }
        for name, (res, args) in sig.items():
            fn = getattr(d, name)
            fn.restype = res
            fn.argtypes = args


_LIB: dict[Path, Library] = {}


def library(lib_dir: str | os.PathLike | None = None) -> Library:
    path = _find_library(lib_dir).resolve()
    if path not in _LIB:
        if not path.is_file():
            raise ModelError(f"the model library {path} is not built (run `make`)")
        _LIB[path] = Library(path)
    return _LIB[path]


def _doubles(values: Sequence[float]):
    return (ctypes.c_double * len(values))(*values)


def _reject_duplicate_keys(path: str | os.PathLike) -> None:
    """ModelError naming the file and the key when an object of a parameter file repeats a key:
    the C reader silently keeps the first one, so such a file does not say what it means."""
    def pairs(items: list[tuple[str, object]]) -> dict:
        seen = set()
        for key, _ in items:
            if key in seen:
                raise ModelError(f"{path}: duplicate key {key!r} in a JSON object")
            seen.add(key)
        return dict(items)
    try:
        json.loads(Path(path).read_bytes(), object_pairs_hook=pairs)
    except (OSError, ValueError):
        return  # unreadable or not JSON: the C reader reports why, in its own words


PTM_ANY_PIECES = 1 << 20  # no limit of ours: the model's PTM_MAX_CUT_MESSAGES applies


class Params:
    """A LogGP parameter set (partita.loggp/1) and the PLogGP model evaluated on it."""

    def __init__(self, raw: _Params, lib: Library):
        self._raw = raw
        self._lib = lib

    # -- construction -----------------------------------------------------
    @classmethod
    def default(cls, lib: Library | None = None) -> "Params":
        lib = lib or library()
        raw = _Params()
        lib.dll.ptm_params_default(ctypes.byref(raw))
        return cls(raw, lib)

    @classmethod
    def default_for(cls, mpi_version: str, lib: Library | None = None) -> "Params":
        """The built-in set libpartita plans with under this MPI library (its version string)."""
        lib = lib or library()
        raw = _Params()
        lib.dll.ptm_params_default_for(ctypes.byref(raw), mpi_version.encode(errors="replace"))
        return cls(raw, lib)

    @classmethod
    def load(cls, path: str | os.PathLike, lib: Library | None = None) -> "Params":
        """Load a parameter file; ModelError (naming the file) when it is unusable."""
        lib = lib or library()
        _reject_duplicate_keys(path)
        raw = _Params()
        err = ctypes.create_string_buffer(512)
        if lib.dll.ptm_params_load(os.fsencode(path), ctypes.byref(raw), err, len(err)) != 0:
            raise ModelError(err.value.decode(errors="replace"))
        return cls(raw, lib)

    @classmethod
    def from_segments(cls, segments: Sequence[Segment], o_pready: float = 0.0,
                      lib: Library | None = None, max_eager_messages: int = 0) -> "Params":
        lib = lib or library()
        if not 1 <= len(segments) <= MAX_SEGMENTS:
            raise ModelError(f"need 1 to {MAX_SEGMENTS} segments")
        raw = _Params()
        raw.nseg = len(segments)
        raw.o_pready = o_pready
        raw.max_eager_messages = max_eager_messages  # 0: the library's default
        for i, s in enumerate(segments):
            mb = s.max_bytes if s.max_bytes is not None and i + 1 < len(segments) else ctypes.c_size_t(-1).value
            raw.seg[i] = _Segment(mb, s.L, s.o_s, s.o_r, s.g, s.G, s.handshake_us)
        raw.source = b"constructed"
        err = ctypes.create_string_buffer(256)
        if lib.dll.ptm_params_check(ctypes.byref(raw), err, len(err)) != 0:
            raise ModelError(f"invalid parameters: {err.value.decode()}")
        return cls(raw, lib)

    # -- accessors ----------------------------------------------------------
    @property
    def source(self) -> str:
        return self._raw.source.decode(errors="replace")

    @property
    def o_pready(self) -> float:
        return self._raw.o_pready

    @property
    def max_eager_messages(self) -> int:
        """Most eager messages a layout may send at once (0 in a constructed set: the default)."""
        return self._raw.max_eager_messages

    @property
    def segments(self) -> list[Segment]:
        out = []
        for i in range(self._raw.nseg):
            s = self._raw.seg[i]
            last = i + 1 == self._raw.nseg
            out.append(Segment(None if last else int(s.max_bytes), s.L, s.o_s, s.o_r, s.g, s.G, s.handshake_us))
        return out

    def save(self, path: str | os.PathLike, extra_members: str | None = None) -> None:
        err = ctypes.create_string_buffer(512)
        extra = extra_members.encode() if extra_members else None
        if self._lib.dll.ptm_params_save(os.fsencode(path), ctypes.byref(self._raw), extra, err, len(err)) != 0:
            raise ModelError(err.value.decode(errors="replace"))

    # -- the model --------------------------------------------------------
    def completion_us(self, msg_bytes: Sequence[int], ready_us: Sequence[float]) -> float:
        t, _ = self.arrivals_us(msg_bytes, ready_us)
        return t

    def arrivals_us(self, msg_bytes: Sequence[int], ready_us: Sequence[float]) -> tuple[float, list[float]]:
        n = len(msg_bytes)
        if n == 0 or len(ready_us) != n:
            raise ValueError("need one ready time per message and at least one message")
        arr = (ctypes.c_double * n)()
        t = self._lib.dll.ptm_arrivals_us(ctypes.byref(self._raw), n, (ctypes.c_size_t * n)(*msg_bytes),
                                          _doubles(ready_us), arr)
        if t < 0:
            raise ValueError("invalid message sizes or ready times")
        return t, list(arr)

    def pattern_ready(self, pattern: str, user_parts: int, delay_us: float) -> list[float]:
        if pattern not in PATTERNS:
            raise ValueError(f"unknown pattern {pattern!r} (use {', '.join(PATTERNS)})")
        out = (ctypes.c_double * max(user_parts, 1))()
        if self._lib.dll.ptm_pattern_ready(PATTERNS[pattern], user_parts, delay_us, out) != 0:
            raise ValueError(f"invalid pattern arguments: {user_parts} partitions, delay {delay_us}")
        return list(out)

    def grouped_us(self, total_bytes: int, user_parts: int, transport: int,
                   user_ready: Sequence[float] | None = None) -> float:
        ready = _doubles(user_ready) if user_ready is not None else None
        if user_ready is not None and len(user_ready) != user_parts:
            raise ValueError("need one ready time per user partition")
        t = self._lib.dll.ptm_grouped_us(ctypes.byref(self._raw), total_bytes, user_parts, transport, ready, None)
        if t < 0:
            raise ValueError(f"invalid grouping: {transport} transport of {user_parts} user partitions")
        return t

    def cut_us(self, total_bytes: int, user_parts: int, transport: int,
               user_ready: Sequence[float] | None = None) -> float:
        """Completion time of the buffer cut into `transport` byte-balanced messages."""
        if user_ready is not None and len(user_ready) != user_parts:
            raise ValueError("need one ready time per user partition")
        ready = _doubles(user_ready) if user_ready is not None else None
        t = self._lib.dll.ptm_cut_us(ctypes.byref(self._raw), total_bytes, user_parts, transport, ready, None)
        if t < 0:
            raise ValueError(f"invalid cut: {transport} pieces of {total_bytes} bytes in {user_parts} partitions")
        return t

    def too_many_eager(self, total_bytes: int, messages: int) -> bool:
        """Whether the model leaves out this many eager messages (its eager-burst cap)."""
        return bool(self._lib.dll.ptm_too_many_eager(ctypes.byref(self._raw), total_bytes, messages))

    def optimal_transport(self, total_bytes: int, user_parts: int, delay_us: float) -> int:
        return self._lib.dll.ptm_optimal_transport(ctypes.byref(self._raw), total_bytes, user_parts, delay_us)

    def optimal_layout(self, total_bytes: int, user_parts: int, delay_us: float) -> tuple[int, bool]:
        """Messages libpartita's model policy uses for a contiguous buffer, and
        whether they cut it (byte-balanced pieces, which may straddle partition
        boundaries) rather than group whole partitions; the model caps the pieces."""
        cut = ctypes.c_int()
        n = self._lib.dll.ptm_optimal_layout(ctypes.byref(self._raw), total_bytes, user_parts, delay_us,
                                             PTM_ANY_PIECES, ctypes.byref(cut))
        return n, bool(cut.value)

    def optimal_transport_ready(self, total_bytes: int, user_parts: int, user_ready: Sequence[float] | None,
                                pow2_only: bool = False) -> tuple[int, float]:
        best = ctypes.c_double()
        ready = _doubles(user_ready) if user_ready is not None else None
        n = self._lib.dll.ptm_optimal_transport_ready(ctypes.byref(self._raw), total_bytes, user_parts, ready,
                                                      int(pow2_only), ctypes.byref(best))
        if n <= 0:
            raise ValueError("invalid arguments to the optimal transport search")
        return n, best.value

    def default_delta_us(self, group_bytes: int) -> float:
        return self._lib.dll.ptm_default_delta_us(ctypes.byref(self._raw), group_bytes)

    def timer_delta_us(self, group_bytes: int, group_parts: int) -> float:
        """libpartita's default δ for a group (ptm_timer_delta_us, floor included)."""
        return self._lib.dll.ptm_timer_delta_us(ctypes.byref(self._raw), group_bytes, group_parts)


def default_params_path(lib: Library | None = None, transport: str = "mpi") -> tuple[Path | None, bool]:
    """Where the library looks by default for a transport's parameters: ($PARTITA_LOGGP or the XDG path,
    from_env) for mpi; ($PARTITA_LOGGP_FABRIC or loggp-fabric.json next to it) for fabric."""
    lib = lib or library()
    buf = ctypes.create_string_buffer(1024)
    rc = lib.dll.ptm_params_transport_path(transport.encode(), buf, len(buf))
    if rc < 0:
        return None, False
    return Path(buf.value.decode()), rc == 1


def fit_line(x: Sequence[float], y: Sequence[float], w: Sequence[float] | None = None) -> tuple[float, float, float]:
    lib = library()
    a, b, rms = ctypes.c_double(), ctypes.c_double(), ctypes.c_double()
    if lib.dll.ptm_fit_line(len(x), _doubles(x), _doubles(y), _doubles(w) if w else None, ctypes.byref(a),
                            ctypes.byref(b), ctypes.byref(rms)) != 0:
        raise ValueError("the fit is undetermined (fewer than 2 distinct x)")
    return a.value, b.value, rms.value


class Table:
    """A partita.tuning/1 table loaded by the C reader (what libpartita's table policy sees)."""

    def __init__(self, path: str | os.PathLike, lib: Library | None = None):
        self._lib = lib or library()
        err = ctypes.create_string_buffer(512)
        self._ptr = self._lib.dll.ptm_table_load(os.fsencode(path), err, len(err))
        if not self._ptr:
            raise ModelError(err.value.decode(errors="replace"))

    def lookup(self, total_bytes: int, user_parts: int) -> int:
        return self._lib.dll.ptm_table_lookup(self._ptr, total_bytes, user_parts)

    def __len__(self) -> int:
        return self._lib.dll.ptm_table_size(self._ptr)

    def __del__(self):
        if getattr(self, "_ptr", None):
            self._lib.dll.ptm_table_free(self._ptr)
            self._ptr = None


def fmt_bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return f"{n}B"


def gbps(G: float) -> float:
    return 1e-3 / G if G > 0 else math.inf
