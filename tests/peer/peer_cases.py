"""The peer suites' case lists: which program to start, with which arguments and ranks.

MPICH cases come from MPICH's own `testlist` files (plus our extra lines), pingping's from
the list MPICH's generator wrote at build time. mpi4py's unittest module is one MPI run
whose per-test outcomes become separate cases (see mpi4py_cases.py).
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Per-run time limits in seconds. Native runs take well under a second (pingping: ~10 s,
# the mpi4py module: ~2 s); the margins allow for busy-polling ranks on a shared 2-core machine.
TIMEOUT = {"mpich-part": 90, "mpich-threads": 90, "mpich-pingping": 240, "mpi4py": 300}

# pingping's DTPools cases take 3-40 s each on a busy 2-core machine: the quick level
# runs only these two (a struct type with gaps, a count that is no multiple of the 4
# partitions, and a receive that describes twice the data); the full level runs all 24.
PINGPING_QUICK = ["*-type=MPI_INT:4+MPI_DOUBLE:8 -sendcnt=17 -recvcnt=34 *",
                  "*-type=MPI_INT:4+MPI_DOUBLE:8 -sendcnt=262144 -recvcnt=524288 *"]

# The mpi4py module's cases; each MPI run must report all of them.
MPI4PY_MODULE = "test_p2p_buf_part"


@dataclass
class Case:
    suite: str
    name: str            # stable id used in results and the expectations file
    nprocs: int
    argv: list[str]      # program and arguments, without the launcher
    timeout: int
    env: dict[str, str] = field(default_factory=dict)


def parse_testlist(path: Path) -> list[tuple[str, int, list[str], dict[str, str]]]:
    """MPICH testlist lines: `program nprocs [arg=A] [timeLimit=S] [env=K=V] ...`."""
    entries = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        program, nprocs = words[0], int(words[1])
        args, opts = [], {}
        for word in words[2:]:
            key, _, value = word.partition("=")
            if key == "arg":
                args.append(value)
            else:
                opts[key] = value
        entries.append((program, nprocs, args, opts))
    return entries


def _mpich_cases(suite: str, lists: list[Path], bindir: Path, prefix: str = "") -> list[Case]:
    cases, seen = [], set()
    for testlist in lists:
        for program, nprocs, args, opts in parse_testlist(testlist):
            name = " ".join([program, *args]) + ("" if nprocs == 2 else f" np={nprocs}")
            if name in seen:   # the lists repeat some lines; one run each is enough
                continue
            seen.add(name)
            env = dict(e.split("=", 1) for e in opts.get("env", "").split(",") if "=" in e)
            timeout = max(TIMEOUT[suite], int(opts.get("timeLimit", 0)))
            cases.append(Case(suite, name, nprocs, [str(bindir / (prefix + program)), *args], timeout, env))
    return cases


def mpich_part(src: Path, bindir: Path) -> list[Case]:
    return _mpich_cases("mpich-part", [src / "part" / "testlist", HERE / "mpich-part-extra.testlist"], bindir)


def mpich_threads(src: Path, bindir: Path) -> list[Case]:
    return _mpich_cases("mpich-threads", [src / "threads" / "part" / "testlist"], bindir, prefix="threads_")


def mpich_pingping(bindir: Path, quick: bool) -> list[Case]:
    cases = _mpich_cases("mpich-pingping", [bindir / "pingping.testlist"], bindir)
    if quick:
        cases = [c for c in cases if any(fnmatch.fnmatchcase(c.name + " ", p) for p in PINGPING_QUICK)]
    return cases


def mpi4py_run(testdir: Path, python: str, outdir: Path, nprocs: int) -> Case:
    """One MPI run of the whole module; the runner splits its outcome into cases."""
    suite = "mpi4py" if nprocs == 2 else f"mpi4py-np{nprocs}"
    argv = [python, str(HERE / "mpi4py_cases.py"), str(testdir), MPI4PY_MODULE, str(outdir)]
    return Case(suite, MPI4PY_MODULE, nprocs, argv, TIMEOUT["mpi4py"])


def mpi4py_case_names(testdir: Path) -> list[str]:
    """Class.method names of the module's concrete test cases, read from its source.

    Subclasses inherit their base's test methods, so a class with a TestCase base gets
    the methods of every class it derives from in the module."""
    import ast

    tree = ast.parse((testdir / f"{MPI4PY_MODULE}.py").read_text(encoding="utf-8"))
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}

    def bases(cls):
        return [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in cls.bases]

    def methods(cls):
        own = [f.name for f in cls.body if isinstance(f, ast.FunctionDef) and f.name.startswith("test")]
        inherited = [m for b in bases(cls) if b in classes for m in methods(classes[b])]
        return inherited + [m for m in own if m not in inherited]

    def is_testcase(cls):
        return any(b == "TestCase" or (b in classes and is_testcase(classes[b])) for b in bases(cls))

    return [f"{name}.{m}" for name, cls in classes.items() if is_testcase(cls) for m in methods(cls)]
