"""Suites: small TOML files listing benchmark runs (python/partita/suites/*.toml).

    description = "..."
    np = 2                        # default ranks
    [[run]]
    name = "p2p"                  # unique within the suite
    program = "partita-p2p"
    args = ["-m", "1K:1M"]
    np = 2                        # optional
    impl = ["native", "partita:timer"]   # optional, default ["native"]
    timeout = 120                 # seconds, optional (default 600)
    env = {PARTITA_PROGRESS_THREAD = "1"}   # optional: extra environment of every run
    description = "..."           # optional: what the run reproduces and how it is scaled down
                                  # (kept in the results folder's manifest)
    repeat = 3                    # optional (also at the top, for every run): launches of every
                                  # implementation, interleaved, pooled in the summary (default 1)
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path


class SuiteError(ValueError):
    pass


@dataclass
class RunSpec:
    name: str
    program: str
    args: list[str]
    np: int
    impls: list[str]
    timeout: float
    env: dict[str, str] = field(default_factory=dict)
    repeat: int = 1
    description: str = ""


@dataclass
class Suite:
    name: str
    description: str
    runs: list[RunSpec] = field(default_factory=list)


def builtin_suites() -> list[str]:
    return sorted(p.name[:-5] for p in resources.files("partita.suites").iterdir() if p.name.endswith(".toml"))


def load_suite(name_or_path: str) -> Suite:
    """A built-in suite by name (quick, patterns, ...) or a TOML file by path."""
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        if not path.is_file():
            raise SuiteError(f"{path}: no such suite file")
        try:
            text = path.read_text()
        except (OSError, ValueError) as e:  # ValueError: not UTF-8 text
            raise SuiteError(f"{path}: not a readable suite file ({e})") from e
        label, name = str(path), path.stem
    else:
        res = resources.files("partita.suites") / f"{name_or_path}.toml"
        if not res.is_file():
            raise SuiteError(f"unknown suite {name_or_path!r}; built-in suites: {', '.join(builtin_suites())}")
        text, label, name = res.read_text(), f"suite {name_or_path}", name_or_path
    try:
        data = tomllib.loads(text)
    except ValueError as e:  # TOMLDecodeError, or an integer of more digits than Python converts (4300)
        raise SuiteError(f"{label}: invalid TOML ({e})") from e
    return parse_suite(data, name, label)


# Launches of every implementation of a run: a thousand already take hours on the quick suite; a
# larger count is a typo, whose list of launches alone ran out of memory before any started.
MAX_REPEAT = 1000


def positive_int(value, what: str, most: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise SuiteError(f"{what} must be a positive whole number")
    if most is not None and value > most:
        raise SuiteError(f"{what} must be at most {most}, not {value}")
    return value


def parse_suite(data: dict, name: str, label: str) -> Suite:
    default_np = data.get("np", 2)
    default_repeat = positive_int(data.get("repeat", 1), f"{label}: 'repeat'", MAX_REPEAT)
    runs = data.get("run")
    if not isinstance(runs, list) or not runs:
        raise SuiteError(f"{label}: no [[run]] entries")
    suite = Suite(name=name, description=str(data.get("description", "")))
    seen = set()
    for i, r in enumerate(runs, 1):
        where = f"{label}, run {i}"
        if not isinstance(r, dict):
            raise SuiteError(f"{where}: must be a table")
        unknown = set(r) - {"name", "program", "args", "np", "impl", "timeout", "env", "repeat",
                         "description"}
        if unknown:
            raise SuiteError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        for key in ("name", "program"):
            if not isinstance(r.get(key), str) or not r[key]:
                raise SuiteError(f"{where}: '{key}' must be a non-empty string")
        if r["name"] in seen:
            raise SuiteError(f"{where}: duplicate run name {r['name']!r}")
        seen.add(r["name"])
        args = r.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, (str, int, float)) for a in args):
            raise SuiteError(f"{where}: 'args' must be a list of strings")
        np = positive_int(r.get("np", default_np), f"{where}: 'np'")
        repeat = positive_int(r.get("repeat", default_repeat), f"{where}: 'repeat'", MAX_REPEAT)
        impls = r.get("impl", ["native"])
        if isinstance(impls, str):
            impls = [impls]
        if not isinstance(impls, list) or not impls or not all(isinstance(x, str) for x in impls):
            raise SuiteError(f"{where}: 'impl' must be a list of implementation names")
        timeout = r.get("timeout", 600)
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not 0 < timeout < math.inf:
            raise SuiteError(f"{where}: 'timeout' must be a finite positive number of seconds")
        env = r.get("env", {})
        if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, (str, int)) for k, v in env.items()):
            raise SuiteError(f"{where}: 'env' must be a table of NAME = \"value\"")
        description = r.get("description", "")
        if not isinstance(description, str):
            raise SuiteError(f"{where}: 'description' must be a string")
        suite.runs.append(RunSpec(r["name"], r["program"], [str(a) for a in args], np, impls, float(timeout),
                                  {k: str(v) for k, v in env.items()}, repeat, description))
    return suite
