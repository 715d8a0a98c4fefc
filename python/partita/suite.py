"""Suites: small TOML files listing benchmark runs (python/partita/suites/*.toml).

    description = "..."
    np = 2                        # default ranks
    [[run]]
    name = "p2p"                  # unique within the suite
    program = "partita-p2p"
    args = ["-m", "1K:1M"]        # "{launch}" in an entry becomes the launch number (1, 2, ...)
    np = 2                        # optional
    impl = ["native", "partita:timer"]   # optional, default ["native"]
    timeout = 120                 # seconds, optional (default 600)
    env = {PARTITA_PROGRESS_THREAD = "1"}   # optional: extra environment of every run (strings; not
                                            # LD_PRELOAD, PARTITA_POLICY, ...: IMPL_VARIABLES, which the
                                            # implementation sets)
    description = "..."           # optional: what the run reproduces and how it is scaled down
                                  # (kept in the results folder's manifest)
    repeat = 3                    # optional (also at the top, for every run): launches of every
                                  # implementation, interleaved, pooled in the summary (default 1)
"""

from __future__ import annotations

import math
import re
import reprlib
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from .launch import IMPL_VARIABLES


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
        if not path.exists():
            raise SuiteError(f"{path}: no such suite file")
        if path.is_dir():
            raise SuiteError(f"{path}: a folder, not a suite file (a TOML file)")
        if not path.is_file():  # /dev/null, a FIFO: never a suite, and a FIFO would block the read
            raise SuiteError(f"{path}: not a regular file, so not a suite file (a TOML file)")
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


# An environment variable's name as a shell writes it: anything else (`BAD=NAME`, "") cannot be passed on
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_env(env, where: str) -> dict[str, str]:
    """A run's `env`: names of variables, string values, nothing the implementation chooses (IMPL_VARIABLES)."""
    if not isinstance(env, dict):
        raise SuiteError(f"{where}: 'env' must be a table of NAME = \"value\"")
    for k, v in env.items():
        if not ENV_NAME.fullmatch(k):
            raise SuiteError(f"{where}: 'env' name {k!r} is not a variable name (letters, digits and _, "
                             "not starting with a digit)")
        if k in IMPL_VARIABLES:
            raise SuiteError(f"{where}: 'env' sets {k}, which the implementation chooses (the run's 'impl' or "
                             "--impl: native, partita:<policy>[@<transport>], partita:fixed<N>)")
        if not isinstance(v, str):
            raise SuiteError(f"{where}: 'env' {k} = {reprlib.repr(v)}: the value must be a string "
                             f"({k} = \"...\")")
        if "\0" in v:
            raise SuiteError(f"{where}: 'env' {k} holds a NUL character, which no environment can carry")
    return env


def parse_suite(data: dict, name: str, label: str) -> Suite:
    unknown = set(data) - {"description", "np", "repeat", "run"}
    if unknown:
        raise SuiteError(f"{label}: unknown key(s) {', '.join(sorted(unknown))}")
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
        if "\0" in r["program"]:
            raise SuiteError(f"{where}: 'program' holds a NUL character")
        args = r.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, (str, int, float)) for a in args):
            raise SuiteError(f"{where}: 'args' must be a list of strings")
        nul = next((a for a in args if "\0" in str(a)), None)
        if nul is not None:
            raise SuiteError(f"{where}: 'args' entry {nul!r} holds a NUL character, which no command line can carry")
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
        env = check_env(r.get("env", {}), where)
        description = r.get("description", "")
        if not isinstance(description, str):
            raise SuiteError(f"{where}: 'description' must be a string")
        suite.runs.append(RunSpec(r["name"], r["program"], [str(a) for a in args], np, impls, float(timeout),
                                  dict(env), repeat, description))
    return suite
