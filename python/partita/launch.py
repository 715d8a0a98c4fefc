"""Finding this build's programs and launching them as MPI jobs.

The build writes `partita-build.json` (paths, launcher, MPI flavour). An
"implementation" selects whose partitioned calls a run uses: `native` (the MPI
library's own) or `partita:<policy>` (libpartita-mpi.so preloaded, with
PARTITA_POLICY=<policy>).
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

BUILD_SCHEMA = "partita.build/1"
INTERPOSER = "libpartita-mpi.so"
TRACER = "libpartita-trace.so"


class LaunchError(RuntimeError):
    """A benchmark could not be run or gave no usable result."""


@dataclass
class BuildInfo:
    path: Path
    bin_dir: Path
    lib_dir: Path
    mpiexec: str
    numproc_flag: str
    mpi_flavor: str
    native_partitioned: bool
    fabric_transport: bool = False
    policies: tuple[str, ...] | None = None   # libpartita's policies; None: a build description without the list
    raw: dict = field(repr=False, default_factory=dict)

    @classmethod
    def find(cls, path: str | os.PathLike | None = None) -> "BuildInfo":
        """Read partita-build.json from `path`, $PARTITA_BUILD, or ./build."""
        candidates = []
        if path is not None and not str(path):  # --build '' quietly meant the default build
            raise LaunchError("the build folder is empty (--build ''): name the folder that holds partita-build.json")
        if path:
            candidates.append(Path(path))
        elif os.environ.get("PARTITA_BUILD"):
            candidates.append(Path(os.environ["PARTITA_BUILD"]))
        else:
            candidates += [Path.cwd() / "build", Path(__file__).resolve().parents[2] / "build"]
        for c in candidates:
            f = c / "partita-build.json" if c.is_dir() else c
            if f.is_file():
                return cls.load(f)
        where = ", ".join(str(c) for c in candidates)
        raise LaunchError(f"no partita build found (looked for partita-build.json in {where}); run `make` first")

    @classmethod
    def load(cls, file: Path) -> "BuildInfo":
        try:
            raw = json.loads(file.read_text())
        except (OSError, ValueError) as e:  # ValueError: not JSON, or not UTF-8 text
            raise LaunchError(f"{file}: not a readable build description ({e})") from e
        if not isinstance(raw, dict):
            raise LaunchError(f"{file}: not a readable build description (a JSON {type(raw).__name__}, "
                              "expected an object)")
        if raw.get("schema") != BUILD_SCHEMA:
            raise LaunchError(f"{file}: unexpected schema {raw.get('schema')!r}, expected {BUILD_SCHEMA}")
        for key in ("bin_dir", "lib_dir", "mpiexec"):
            if not isinstance(raw.get(key), str) or not raw[key]:
                raise LaunchError(f"{file}: {key!r} is {raw.get(key)!r}, expected a path; run `make` again")
        return cls(
            path=file.parent,
            bin_dir=Path(raw["bin_dir"]),
            lib_dir=Path(raw["lib_dir"]),
            mpiexec=raw["mpiexec"],
            numproc_flag=raw.get("mpiexec_numproc_flag") or "-n",
            mpi_flavor=raw.get("mpi_flavor", "other"),
            native_partitioned=bool(raw.get("native_partitioned")),
            fabric_transport=bool(raw.get("fabric_transport")),
            policies=_policies(raw.get("policies"), file),
            raw=raw,
        )

    def program(self, name: str) -> Path:
        p = self.bin_dir / name
        if not p.is_file():
            raise LaunchError(f"program {name} is not built (expected {p})")
        return p

    @property
    def interposer(self) -> Path:
        return self.lib_dir / INTERPOSER

    @property
    def tracer(self) -> Path:
        """The tracing library (libpartita-trace.so); LaunchError when it is not built."""
        p = self.lib_dir / TRACER
        if not p.is_file():
            raise LaunchError(f"the tracer is not built ({p} is missing); run `make` (it is built with libpartita)")
        return p


def _policies(value, file: Path) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not value or not all(isinstance(p, str) and p for p in value):
        raise LaunchError(f"{file}: 'policies' is {value!r}, expected a list of policy names; run `make` again")
    return tuple(value)


def check_policy(build: BuildInfo, impl: str) -> None:
    """LaunchError when partita:<policy> names a policy this build's libpartita does not have (libpartita
    would refuse it in MPI_Init of every launch), with the closest name; nothing to check for native, or
    for a build description that does not list the policies."""
    kind, policy = parse_impl(impl)
    if kind != "partita" or build.policies is None:
        return
    name = policy.partition("@")[0]
    base = "fixed" if name.startswith("fixed") else name  # partita:fixed4: parse_impl checked the 4
    if base.lower() in build.policies:
        return
    close = difflib.get_close_matches(base.lower(), build.policies, n=1)
    hint = f"; did you mean partita:{close[0]}?" if close else ""
    raise LaunchError(f"unknown implementation {impl!r}: this build's libpartita has no policy {name!r} (it has "
                      f"{', '.join(build.policies)}){hint}")


TRANSPORTS = ("mpi", "fabric", "auto")   # libpartita's PARTITA_TRANSPORT
MAX_TRANSPORT_PARTS = 1 << 30            # libpartita's limit on PARTITA_TRANSPORT_PARTS (partita:fixed<N>)


def parse_impl(impl: str) -> tuple[str, str | None]:
    """'native' -> ('native', None); 'partita:timer' -> ('partita', 'timer'); 'partita:timer@fabric'
    -> ('partita', 'timer@fabric'): libpartita with its fabric transport (impl_env)."""
    if impl == "native":
        return "native", None
    kind, _, policy = impl.partition(":")
    name, at, transport = policy.partition("@")
    if kind != "partita" or not name:
        raise LaunchError(f"unknown implementation {impl!r}: use native or partita:<policy> (e.g. partita:timer), "
                          "optionally partita:<policy>@<transport>")
    if at and transport not in TRANSPORTS:
        raise LaunchError(f"unknown implementation {impl!r}: the transport after @ is one of "
                          f"{', '.join(TRANSPORTS)} (e.g. partita:timer@fabric)")
    # fixed<N>: libpartita refuses any other N, or none, in MPI_Init, so every launch would fail
    n = name[len("fixed"):] if name.startswith("fixed") else None
    if n is not None and not (n.isascii() and n.isdigit() and len(n) <= 10 and 1 <= int(n) <= MAX_TRANSPORT_PARTS):
        raise LaunchError(f"unknown implementation {impl!r}: partita:fixed<N> takes a whole number of transport "
                          f"messages N from 1 to {MAX_TRANSPORT_PARTS} (e.g. partita:fixed4)")
    return kind, policy


def canonical_impl(impl: str) -> str:
    """The one spelling of an implementation: libpartita reads a policy name in any case and the N of
    fixed<N> as a number, so partita:TIMER is partita:timer and partita:fixed04 partita:fixed4.
    LaunchError for a name parse_impl refuses."""
    kind, _, policy = impl.partition(":")
    if kind == "partita":
        name, at, transport = policy.partition("@")
        impl = f"partita:{name.lower()}{at}{transport}"
    kind, policy = parse_impl(impl)
    if kind == "partita" and policy.startswith("fixed"):  # parse_impl checked the N
        name, at, transport = policy.partition("@")
        impl = f"partita:fixed{int(name[len('fixed'):])}{at}{transport}"
    return impl


def distinct_impls(impls: list[str], what: str) -> list[str]:
    """The implementations in their one spelling (canonical_impl); LaunchError when two name the same
    one: their launches would write the same result file, the second over the first."""
    seen: dict[str, str] = {}
    for impl in impls:
        c = canonical_impl(impl)
        if c in seen:
            same = f"'{c}' twice" if impl == seen[c] else f"'{c}' twice, as '{seen[c]}' and '{impl}'"
            raise LaunchError(f"{what} names the implementation {same}")
        seen[c] = impl
    return list(seen)


# What an implementation sets (impl_env): a suite's env may not set them, or `native` could run
# libpartita, or partita:timer another policy, under its own label
IMPL_VARIABLES = ("LD_PRELOAD", "PARTITA_POLICY", "PARTITA_TRANSPORT_PARTS", "PARTITA_TRANSPORT")
# Variables of the partita command itself and of its cluster launcher (scripts/cluster-mpiexec.sh),
# not settings of the ranks
CLI_VARIABLES = ("PARTITA_BUILD", "PARTITA_LAUNCHER", "PARTITA_CLUSTER_NAME", "PARTITA_MODEL_LIB")


def inherited_settings() -> dict[str, str]:
    """LD_PRELOAD and libpartita's PARTITA_* variables of partita's own environment. `partita run` keeps
    them out of every launch, whose suite and implementation say what it runs: an inherited LD_PRELOAD
    made `--impl native` run libpartita, an inherited PARTITA_POLICY changed a run that its results
    did not record."""
    return {k: v for k, v in sorted(os.environ.items())
            if (k == "LD_PRELOAD" or k.startswith("PARTITA_")) and k not in CLI_VARIABLES}


def impl_env(build: BuildInfo, impl: str) -> dict[str, str]:
    """Environment variables that select the implementation; partita:POLICY@TRANSPORT also sets
    libpartita's PARTITA_TRANSPORT."""
    check_policy(build, impl)
    kind, policy = parse_impl(impl)
    policy, _, transport = (policy or "").partition("@")
    if kind == "native":
        if not build.native_partitioned:
            raise LaunchError("this MPI has no native partitioned communication; use --impl partita:<policy>")
        return {}
    if not build.interposer.is_file():
        raise LaunchError(f"libpartita is not built ({build.interposer} is missing)")
    env = {"LD_PRELOAD": str(build.interposer), "PARTITA_POLICY": policy}
    if policy.startswith("fixed"):
        # partita:fixed4 -> fixed policy with 4 transport messages
        n = policy[len("fixed"):]
        env["PARTITA_POLICY"] = "fixed"
        if n:
            env["PARTITA_TRANSPORT_PARTS"] = n
    if transport:
        env["PARTITA_TRANSPORT"] = transport
    return env


def unknown_policy(impl: str, env: dict[str, str], stderr: str) -> str | None:
    """Why a failed launch of partita:<policy> was no measurement at all: the preloaded libpartita
    refused PARTITA_POLICY in MPI_Init with its one-line message (a policy another branch adds, e.g.
    `adaptive`, in a build without it), or PARTITA_TRANSPORT=fabric in a build without libfabric;
    None for any other failure."""
    policy = env.get("PARTITA_POLICY")
    if not impl.startswith("partita:") or not policy:
        return None
    lines = stderr.splitlines()
    line = next((ln for ln in lines if f"PARTITA_POLICY='{policy}' is not one of" in ln), None)
    if line is not None:
        return f"this build's libpartita has no policy {policy!r} ({line.strip()})"
    # partita:POLICY@fabric in a build without libfabric (scripts/bootstrap.sh adds it as root)
    line = next((ln for ln in lines if "transport 'fabric' asked for, but this libpartita was built without it" in ln),
                None)
    if env.get("PARTITA_TRANSPORT") == "fabric" and line is not None:
        return f"this build's libpartita has no fabric transport ({line.strip()})"
    return None


def check_launcher(launcher: str | None) -> None:
    """The launcher a launch uses (--launcher, else a non-empty $PARTITA_LAUNCHER: launch_command) must
    parse and its program must exist: LaunchError otherwise."""
    what = "--launcher"
    if launcher is None:
        launcher, what = os.environ.get("PARTITA_LAUNCHER") or None, "$PARTITA_LAUNCHER"
        if launcher is None:
            return
    try:
        words = shlex.split(launcher)
    except ValueError as e:
        raise LaunchError(f"{what} {launcher!r}: {e}") from e
    if not words:
        raise LaunchError(f"{what} is empty")
    if shutil.which(words[0]) is None:
        raise LaunchError(f"{what} {launcher!r}: no such program {words[0]!r}")


# Ranks that all start on this machine (no launcher placing them elsewhere) share its cores,
# oversubscribed: RANKS_PER_CORE per core is far more than any timing survives, and a count
# beyond it is a typo (--np 2000 for 20) that would start thousands of processes.
RANKS_PER_CORE = 16
MPI_MAX_RANKS = 2**31 - 1  # ranks are C ints


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask), else the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def check_rank_count(np: int, what: str, on_this_machine: bool) -> None:
    """LaunchError when np ranks cannot be launched: more than an MPI job can have, or, when they
    all start on this machine, more than RANKS_PER_CORE per usable core. `what` names the count."""
    if np > MPI_MAX_RANKS:
        raise LaunchError(f"{what}: more ranks than an MPI job can have (at most {MPI_MAX_RANKS})")
    if on_this_machine:
        cores = usable_cores()
        if np > RANKS_PER_CORE * cores:
            raise LaunchError(f"{what}: more ranks than this machine can start (at most {RANKS_PER_CORE * cores}: "
                              f"{RANKS_PER_CORE} per core, {cores} core(s); --launcher places ranks on other nodes)")


def launch_command(build: BuildInfo, program: str, args: list[str], np: int,
                   env: dict[str, str], launcher: str | None = None) -> list[str]:
    """The command line that runs `program` on np ranks with `env` exported. Without a
    launcher, $PARTITA_LAUNCHER is one (so that every command, e.g. `partita model
    --validate`, can run across hosts)."""
    exe = str(build.program(program))
    launcher = launcher or os.environ.get("PARTITA_LAUNCHER") or None
    if launcher:
        # e.g. "srun" or "srun --mpi=pmix": the environment is inherited
        return shlex.split(launcher) + ["-n", str(np), exe, *args]
    cmd = [build.mpiexec, build.numproc_flag, str(np)]
    if build.mpi_flavor == "openmpi":
        if os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        cmd.append("--oversubscribe")
        for k in env:
            cmd += ["-x", k]
    return cmd + [exe, *args]


def child_env(extra: dict[str, str], drop: Collection[str] = ()) -> dict[str, str]:
    """partita's environment without the variables `drop` names, with `extra` set."""
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    # Idle OpenMP threads sleep instead of spinning at barriers: with more threads
    # than cores (sleep compute mode) a spinning thread would keep a core from
    # the thread that still computes. No measured interval spans a barrier.
    env.setdefault("OMP_WAIT_POLICY", "passive")
    env.update(extra)
    return env


def failure_lines(stdout: str, stderr: str, most: int = 5) -> str:
    """Why a launch failed, in at most `most` lines: the program's and libpartita's own
    messages (`...: error: ...`, `partita: ...`) when it printed any, else the last lines it
    printed. The launcher's framed notices (Open MPI's blocks between dashed lines: "MPI_ABORT
    was invoked", "prterun has exited ...") and MPICH's `Abort(...)` lines are left out: they
    say that the job ended, not why, and being last they hid the reason."""
    lines, framed = [], False
    for line in (stderr or stdout or "").splitlines():
        if line.startswith("-----"):
            framed = not framed
            continue
        if not framed and line.strip() and not line.startswith("Abort("):
            lines.append(line.rstrip())
    own = [x for x in lines if ": error:" in x or x.startswith("partita")]
    own = list(dict.fromkeys(own))  # every rank may print the same line
    picked = own[:most] if own else lines[-most:]
    return "\n".join(picked) or (stderr or stdout or "").strip()[-400:]


@dataclass
class RunOutcome:
    command: list[str]
    env: dict[str, str]
    returncode: int
    stdout: str
    stderr: str
    result: dict | None


def run_in_group(cmd: list[str], env: dict[str, str], timeout: float) -> tuple[subprocess.CompletedProcess, bool]:
    """Run cmd in a process group of its own: what it printed and whether it outlasted the timeout.
    Then the whole group is killed, the launcher and every rank it started on this host (killing
    only the launcher can leave ranks running, spinning on a core), and what it printed until
    then is kept (the last lines before a hang say where it hung). So it is when partita is
    interrupted, and the interruption goes on."""
    timed_out = False
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                          stdin=subprocess.DEVNULL, start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except BaseException as e:
            # past the timeout, or partita itself stopped (Ctrl-C; SIGTERM, which cli.main raises): the
            # group is in a session of its own, so no terminal's Ctrl-C reaches it, and it is killed here
            with contextlib.suppress(ProcessLookupError):  # already gone
                os.killpg(proc.pid, signal.SIGKILL)
            if not isinstance(e, subprocess.TimeoutExpired):
                raise
            timed_out = True
            out, err = proc.communicate()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err), timed_out


def run_program(build: BuildInfo, program: str, args: list[str], np: int = 2, impl: str = "native",
                env: dict[str, str] | None = None, timeout: float = 600, launcher: str | None = None,
                json_out: Path | None = None, drop: Collection[str] = ()) -> RunOutcome:
    """Run a harness benchmark with JSON output and return what happened (never raises on a failed run).
    `drop`: variables of partita's environment the launch does not get (child_env)."""
    extra = impl_env(build, impl)
    extra.update(env or {})
    tmp = None
    if json_out is None:
        tmp = tempfile.NamedTemporaryFile(prefix="partita-", suffix=".json", delete=False)
        tmp.close()
        json_out = Path(tmp.name)
    full_args = [*args, "--format", "json", "--output", str(json_out)]
    cmd = launch_command(build, program, full_args, np, extra, launcher)
    try:
        p, timed_out = run_in_group(cmd, child_env(extra, drop), timeout)
        rc, out, err = p.returncode, p.stdout or "", p.stderr or ""
        if timed_out:
            rc = -1
            err += f"\n[partita] timed out after {timeout:g} s (the launch and its ranks were killed)"
    except OSError as e:  # the launcher itself cannot be started
        rc, out, err = 127, "", f"[partita] cannot start {cmd[0]}: {e.strerror or e}"
    result = None
    try:
        if json_out.is_file() and json_out.stat().st_size > 0:
            result = json.loads(json_out.read_text())
    except ValueError as e:  # not JSON, or not text at all
        err += f"\n[partita] {json_out}: unreadable result ({e})"
    finally:
        if tmp is not None:
            json_out.unlink(missing_ok=True)
    return RunOutcome(cmd, extra, rc, out, err, result)


def run_benchmark(build: BuildInfo, program: str, args: list[str], np: int = 2, impl: str = "native",
                  env: dict[str, str] | None = None, timeout: float = 600, launcher: str | None = None) -> dict:
    """Run a harness benchmark and return its parsed JSON result; raise LaunchError when it fails."""
    o = run_program(build, program, args, np, impl, env, timeout, launcher)
    if o.returncode != 0 or o.result is None:
        why = failure_lines(o.stdout, o.stderr)
        raise LaunchError(f"{program} {' '.join(args)} ({impl}) failed with exit {o.returncode}: {why}")
    return o.result
