"""Reading benchmark results (partita.result/1 JSON) and run folders (partita.run/1)."""

from __future__ import annotations

import json
import os
import reprlib
import stat
import tempfile
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from .stats import number

RESULT_SCHEMA = "partita.result/1"
# partita-loggp runs in a suite write a parameter file (docs/model.md), not a result
PARAMS_SCHEMA = "partita.loggp/1"
RUN_SCHEMA = "partita.run/1"

# Metrics a summary shows first, per benchmark; others fall back to the
# result's own "headline_metrics" or its first three metrics.
HEADLINES = {
    "p2p": ["overhead", "perceived_bw", "availability", "early_bird", "early_arrival"],
}


class ResultError(ValueError):
    pass


def read_json(path: Path, what: str) -> dict:
    """A JSON object from a file; ResultError naming the file when it cannot be read, is not
    JSON (random bytes, bad text) or is not an object."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:  # ValueError: JSONDecodeError and UnicodeDecodeError
        raise ResultError(f"{path}: not a readable {what} ({e})") from e
    if not isinstance(data, dict):
        raise ResultError(f"{path}: not a readable {what} (a JSON {type(data).__name__}, expected an object)")
    return data


@dataclass(frozen=True)
class Kind:
    """What a field of a result or a manifest must be: `what` as an error says it, and its test."""
    what: str
    test: Callable[[object], bool]


LARGEST = (1 << 63) - 1     # what the C benchmarks write counts as (long long); numpy's int64 too


def count(least: int, most: int = LARGEST) -> Kind:
    what = f"a whole number >= {least}" if most == LARGEST else f"a whole number from {least} to {most}"
    # JSON true and false are ints in Python: never a count
    return Kind(what, lambda v: isinstance(v, int) and not isinstance(v, bool) and least <= v <= most)


STRING = Kind("a string", lambda v: isinstance(v, str))
STRING_OR_NULL = Kind("a string or null", lambda v: v is None or isinstance(v, str))
STRINGS = Kind("a list of strings", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v))
NUMBER = Kind("a finite number", lambda v: number(v) is not None)
OBJECT = Kind("an object", lambda v: isinstance(v, dict))

# The fields the summaries, the report and compare read, and what each must be when present (a
# hand-made file's string, list or bool there stopped them with a TypeError); the C benchmarks
# and `partita run` always write them so.
RESULT_FIELDS = {"benchmark": STRING, "program": STRING, "launches": count(1), "headline_metrics": STRINGS,
                 "config": OBJECT, "environment": OBJECT}
CONFIG_FIELDS = {"metric": STRING, "compute_us": NUMBER, "noise": STRING}
ENVIRONMENT_FIELDS = {"hosts": STRINGS, "mpi_library": STRING_OR_NULL,
                      "partita_policy": STRING_OR_NULL}
ENTRY_FIELDS = {"skipped": STRING}
# the patterns write partitions 0 for a strategy that does not partition
CASE_FIELDS = {"bytes": count(1), "partitions": count(0), "recv_partitions": count(1), "partition_bytes": count(1),
               "threads": count(1)}
# What every measured case of a benchmark has: the findings, the figures and the model key, sort
# and divide its cases by these (a p2p message in 0 partitions is no message). The model figure
# plans for a p2p run's largest partition count: partita-p2p's own limit, 2^20, bounds its work
# (2^24 took minutes, 2^40 ran out of memory).
MEASURED_CASE_FIELDS = {"p2p": {"bytes": count(1), "partitions": count(1, 1 << 20)},
                        "side-by-side": {"bytes": count(1), "partitions": count(1)},
                        "mech": {"bytes": count(1), "partition_bytes": count(1)}}
MANIFEST_FIELDS = {"suite": STRING, "description": STRING, "build": OBJECT}
BUILD_FIELDS = {"lib_dir": STRING}
STATUSES = ("ok", "failed", "unavailable")   # what `partita run` writes of a launch
STATUS = Kind("one of " + ", ".join(map(repr, STATUSES)), lambda v: v in STATUSES)
WHOLE = Kind("a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool))   # an exit code: -1, -9 too
RUN_FIELDS = {"status": STATUS, "np": count(1), "exit_code": WHOLE, "duration_s": NUMBER, "launch": count(1),
              "launches": count(1), "args": STRINGS, "command": STRINGS}


def check_fields(where: str, obj: dict, fields: dict[str, Kind], needed: Collection[str] = ()) -> None:
    """ResultError when a field of obj is not of its kind, or one of `needed` is missing."""
    for name, kind in fields.items():
        if name not in obj:
            if name in needed:
                raise ResultError(f"{where} has no {name!r}")
        elif not kind.test(obj[name]):
            raise ResultError(f"{where} {name!r} is {reprlib.repr(obj[name])}, expected {kind.what}")


def _check_case(path: Path, i: int, case, benchmark: str | None) -> None:
    where = f"{path}: results[{i}]"
    if not isinstance(case, dict):
        raise ResultError(f"{where} is not an object")
    check_fields(f"{where}:", case, ENTRY_FIELDS)
    labels = case.get("case", {})
    if not isinstance(labels, dict) or any(isinstance(v, (dict, list)) for v in labels.values()):
        raise ResultError(f"{where}: 'case' is not an object of plain values")
    needed = {} if "skipped" in case else MEASURED_CASE_FIELDS.get(benchmark, {})
    check_fields(f"{where}: case", labels, CASE_FIELDS | needed, needed)
    metrics = case.get("metrics", {})
    if not isinstance(metrics, dict):
        raise ResultError(f"{where}: 'metrics' is not an object")
    for name, m in metrics.items():
        if not isinstance(m, dict) or not isinstance(m.get("summary", {}), dict):
            raise ResultError(f"{where}: metric {name!r} is not an object with a 'summary' object")
        if not isinstance(m.get("samples") or [], list):
            raise ResultError(f"{where}: metric {name!r}: 'samples' is not a list")


# What a results or trace folder holds that no command may write over: its results, manifest and
# rank files, and its runs' logs (the report, `report.html`, is its own output and is rewritten)
INPUT_SUFFIXES = (".json", ".log")


def replaces_input(out: Path, folders: Collection[Path]) -> bool:
    """Whether writing `out` would replace a file of INPUT_SUFFIXES inside one of `folders` (a result,
    manifest or rank file the command reads, or a run's log): an output must never destroy its input."""
    try:
        target = out.resolve()
        return target.suffix in INPUT_SUFFIXES and target.is_file() and any(
            target.is_relative_to(f.resolve()) for f in folders)
    except OSError:
        return False


def folder_blocker(target: Path) -> Path | None:
    """What stops the folder of `target` from being used or made (saving makes it): the nearest path
    above the file that exists, when it is not a folder (a file of that name); else None. (mkdir
    says only 'File exists' there.)"""
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return None if folder.is_dir() else folder


def output_file_problem(path: Path | None, option: str) -> str | None:
    """What stops writing the output file a user named with `option`, as one line naming both: a file
    where its folder should be (folder_blocker), or a folder that does not exist, which is never made (a
    mistyped folder was made silently, at the file system's root too). None without a file (path None)
    or when its folder is there."""
    if path is None:
        return None
    blocker = folder_blocker(path)
    if blocker is not None:
        return f"{option} {path}: {blocker} is not a folder"
    if not path.parent.is_dir():
        return f"{option} {path}: the folder {path.parent} does not exist"
    return None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_json_atomically(path: Path, doc, check: Callable[[Path], object] | None = None) -> None:
    """write_text_atomically of doc as JSON."""
    write_text_atomically(path, json.dumps(doc, indent=1) + "\n", check)


def write_text_atomically(path: Path, text: str, check: Callable[[Path], object] | None = None) -> None:
    """Write text to path through a file beside it, renamed into place: a reader never sees
    half a file, and a failed write, or a `check` of the new file that raises, leaves what was at
    path as it was (and no file beside it). The folder must exist."""
    # a symlink is followed (it was replaced by the file); a device or a FIFO (-o /dev/stdout) is
    # written through: renamed onto, it became a regular file (/dev/null, as root)
    path = Path(os.path.realpath(path))
    through = path.exists() and not path.is_file()
    fd, name = tempfile.mkstemp(dir=None if through else path.parent, prefix=f".{path.name}.", suffix=".new")
    tmp = Path(name)
    try:
        with open(fd, "w") as f:  # closing it writes the rest: a full disk fails here too
            f.write(text)
        # the mode of the file replaced, else the umask's (mkstemp makes it 0600)
        os.chmod(tmp, stat.S_IMODE(path.stat().st_mode) if path.is_file() else 0o666 & ~_umask())
        if check is not None:
            check(tmp)
        if through:
            path.write_text(text)
        else:
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def is_params_file(path: Path) -> bool:
    """Whether a run's output is a LogGP parameter file (a suite's partita-loggp run)."""
    try:
        return read_json(path, "result").get("schema") == PARAMS_SCHEMA
    except ResultError:
        return False


def load_result(path: Path) -> dict:
    """A partita.result/1 document, checked as far as the summaries and comparisons read it."""
    data = read_json(path, "result")
    if data.get("schema") != RESULT_SCHEMA:
        raise ResultError(f"{path}: schema {data.get('schema')!r} is not {RESULT_SCHEMA}")
    check_fields(f"{path}:", data, RESULT_FIELDS)
    check_fields(f"{path}: config", data.get("config", {}), CONFIG_FIELDS)
    check_fields(f"{path}: environment", data.get("environment", {}), ENVIRONMENT_FIELDS)
    if not isinstance(data.get("results"), list):
        raise ResultError(f"{path}: 'results' is {type(data.get('results')).__name__}, expected a list of cases")
    for i, case in enumerate(data["results"]):
        _check_case(path, i, case, data.get("benchmark"))
    return data


# partita-p2p --metric NAME -> the metric it reports
P2P_METRIC_CHOICE = {"overhead": "overhead", "perceived-bw": "perceived_bw", "availability": "availability",
                     "early-bird": "early_bird", "early-arrival": "early_arrival", "pready-cost": "pready_ns"}


def headline_metrics(result: dict) -> list[str]:
    names = HEADLINES.get(result.get("benchmark", ""), result.get("headline_metrics"))
    chosen = result.get("config", {}).get("metric")
    if result.get("benchmark") == "p2p" and chosen in P2P_METRIC_CHOICE:
        names = [P2P_METRIC_CHOICE[chosen]]
    elif result.get("benchmark") == "p2p" and chosen == "all":
        names = names + ["pready_ns"]
    measured = [c for c in result.get("results", []) if "metrics" in c]
    if not measured:
        return []
    available = list(measured[0]["metrics"])
    if names:
        return [n for n in names if n in available]
    return available[:3]


@dataclass(frozen=True)
class CaseRow:
    key: tuple
    labels: dict
    skipped: str | None


def case_key(case: dict) -> tuple:
    return tuple(sorted((k, v) for k, v in case.items()))


def cases(result: dict) -> list[dict]:
    return list(result.get("results", []))


def load_run_dir(path: Path) -> dict:
    """The manifest of a results folder written by `partita run`."""
    f = Path(path) / "manifest.json"
    data = read_json(f, "run manifest")
    if data.get("schema") != RUN_SCHEMA:
        raise ResultError(f"{f}: schema {data.get('schema')!r} is not {RUN_SCHEMA}")
    check_fields(f"{f}:", data, MANIFEST_FIELDS)
    check_fields(f"{f}: build", data.get("build", {}), BUILD_FIELDS)
    runs = data.get("runs")
    if not isinstance(runs, list):
        raise ResultError(f"{f}: 'runs' is {type(runs).__name__}, expected a list")
    for i, r in enumerate(runs):
        if not isinstance(r, dict) or not all(isinstance(r.get(k), str) for k in ("name", "impl", "status")):
            raise ResultError(f"{f}: runs[{i}] is not an object with the strings 'name', 'impl' and 'status'")
        if r.get("result") is not None and not isinstance(r["result"], str):
            raise ResultError(f"{f}: runs[{i}]: 'result' is not a file name")
        check_fields(f"{f}: runs[{i}]:", r, RUN_FIELDS)
    return data


def nothing_ran(manifest: dict) -> bool:
    """Whether no launch of a results folder gave a result: each failed or was unavailable (or none is listed)."""
    return not any(r.get("status") == "ok" for r in manifest.get("runs", []))


def unreadable_results(folder: Path, manifest: dict) -> list[str]:
    """Why each result file the manifest lists as ok cannot be used (empty when all can)."""
    errors = []
    for r in manifest["runs"]:
        if r.get("status") == "ok" and r.get("result") and not is_params_file(Path(folder) / r["result"]):
            try:
                load_result(Path(folder) / r["result"])
            except ResultError as e:
                errors.append(str(e))
    return errors
