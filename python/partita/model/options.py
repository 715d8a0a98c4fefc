"""Command-line values shared by `partita model` and `partita tune`."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from ..option_lists import list_entries
from .native import ModelError, Params, default_params_path

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
# The largest message size and partition count the model and partita-p2p take: sizes at most the
# C programs' limit, 1 TiB (pt_parse_bytes; 2^80 bytes wrapped to nonsense, 2^62 was modelled),
# partitions at most partita-p2p's own limit, 2^20, as results.py checks a result's (a count beyond
# a C int overflowed the model).
MAX_BYTES = 1 << 40
MAX_PARTITIONS = 1 << 20
# partita-p2p's own limit on a laggard's delay (--noise delay:US), 1000 s: beyond it the
# benchmark refuses the run, and the model's times lose every digit that tells candidates apart
MAX_DELAY_US = 1e9
# partita-p2p's own limit on --iterations: beyond it the benchmark refuses the run (after the
# searches' screening runs had been measured)
MAX_ITERATIONS = 10**8


def parse_bytes(text: str) -> int:
    # at most 40 digits, far beyond MAX_BYTES: int() refuses a number of more than 4300
    m = re.fullmatch(r"\s*(\d{1,40})\s*([KMG]?)(?:i?B)?\s*", text, re.IGNORECASE)
    if not m:
        raise ValueError(f"'{text}' is not a size (e.g. 4096, 64K, 1M)")
    return int(m.group(1)) * _UNITS[m.group(2).upper()]


def parse_size_range(text: str) -> tuple[int, int]:
    """MIN:MAX, both powers of two."""
    lo, sep, hi = text.partition(":")
    if not sep:
        raise ValueError(f"'{text}' is not MIN:MAX (e.g. 4K:1M)")
    a, b = parse_bytes(lo), parse_bytes(hi)
    for v in (a, b):
        if v < 1 or v & (v - 1) or v > MAX_BYTES:
            raise ValueError(f"sizes must be powers of two from 1 byte to {MAX_BYTES} (got {v} in '{text}')")
    if a > b:
        raise ValueError(f"MIN is larger than MAX in '{text}'")
    return a, b


def check_any_case_fits(rng: tuple[int, int], partitions: list[int]) -> None:
    """ValueError when no size has at least as many bytes as the fewest partitions: every (size,
    partitions) case would be a partition of less than a byte (the model's table skips such cases,
    as partita-p2p does)."""
    if rng[1] < min(partitions):
        raise ValueError(f"no case can run: the largest size (-m) is {rng[1]} bytes, fewer bytes than the fewest "
                         f"partitions (--partitions, {min(partitions)}); give sizes of at least {min(partitions)} bytes")


def check_partitions_fit(rng: tuple[int, int], partitions: list[int]) -> None:
    """ValueError when the smallest size has fewer bytes than the most partitions: a partition of less
    than a byte, a case partita-p2p skips ("fewer bytes than partitions"); the measuring commands
    (tune, model --validate) refuse it rather than leave holes in what they write."""
    if rng[0] < max(partitions):
        most = max(partitions)
        raise ValueError(f"fewer bytes than partitions: the smallest size (-m) is {rng[0]} bytes, cut into {most} "
                         f"partitions (--partitions); give sizes of at least {most} bytes")


def sizes_in(rng: tuple[int, int]) -> list[int]:
    out, s = [], rng[0]
    while s <= rng[1]:
        out.append(s)
        s *= 2
    return out


def parse_int_list(text: str, what: str, minimum: int = 1, maximum: int = MAX_PARTITIONS) -> list[int]:
    entries = list_entries(text, what)
    try:
        vals = [int(v) for v in entries]
    except ValueError:
        raise ValueError(f"{what} must be a comma-separated list of whole numbers (got '{text}')") from None
    if not vals or any(not minimum <= v <= maximum for v in vals):
        raise ValueError(f"{what} must be whole numbers from {minimum} to {maximum} (got '{text}')")
    return vals


def check_delay(value: float, what: str) -> None:
    if not 0 <= value <= MAX_DELAY_US:
        raise ValueError(f"{what} must be a number from 0 to {MAX_DELAY_US:g} us (got {value:g})")


def parse_float_list(text: str, what: str) -> list[float]:
    entries = list_entries(text, what)
    try:
        vals = [float(v) for v in entries]
    except ValueError:
        raise ValueError(f"{what} must be a comma-separated list of numbers (got '{text}')") from None
    if not vals or any(not 0 <= v <= MAX_DELAY_US for v in vals):
        raise ValueError(f"{what} must be numbers from 0 to {MAX_DELAY_US:g} (got '{text}')")
    return vals


def warn_if_busy(prog: str) -> None:
    """Timings on a machine busier than its cores are upper bounds: say so."""
    import os
    try:
        load = os.getloadavg()[0]
    except OSError:
        return
    cores = os.cpu_count() or 1
    if load > cores:
        print(f"{prog}: warning: the machine is busy (load {load:.1f} on {cores} cores): timings are disturbed; "
              "consider --quantile 0.2 (and more --passes for partita loggp)", file=sys.stderr)


def load_params(path: Path | None, prog: str, mpi_library: str | None = None) -> Params:
    """--params FILE must be usable; otherwise the file libpartita would use, or
    the built-in defaults with a warning when that file is unusable (those of
    `mpi_library`, a MPI_Get_library_version string, when given: libpartita's choice)."""
    if path is not None:
        return _plausible(Params.load(path), path)
    default, from_env = default_params_path()
    if default is not None and (from_env or default.exists()):
        try:
            return _plausible(Params.load(default), default)
        except ModelError as e:
            print(f"{prog}: warning: {e}; using built-in defaults", file=sys.stderr)
    return Params.default_for(mpi_library) if mpi_library else Params.default()


def _plausible(params: Params, path: Path) -> Params:
    """ModelError for a cost beyond MAX_DELAY_US (the library reads any finite number): the
    model's times overflowed (advise stopped on an infinite timer delta) or lost every digit."""
    costs = [("o_pready", params.o_pready)] + [
        (f"segment {i} {name}", getattr(seg, name))
        for i, seg in enumerate(params.segments) for name in ("L", "o_s", "o_r", "g", "G", "handshake_us")]
    for name, value in costs:
        if not value <= MAX_DELAY_US:
            raise ModelError(f"{path}: {name} is {value:g}, beyond any plausible cost (at most {MAX_DELAY_US:g})")
    return params
