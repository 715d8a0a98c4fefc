"""The emulated cluster of scripts/cluster.sh: network namespaces as hosts, joined by a
rate-limited link, and the launcher that runs MPI jobs across them (docs/two-hosts.md).

`--cluster emulated:HOSTS[:RATE]` (e.g. emulated:2, emulated:2:1gbit) names one. A run uses
the cluster that is up when it has that many hosts and that rate (RATE given) and leaves it
up; when none is up it brings one up for the run and takes it down afterwards; a running
cluster of another shape is an error (never replaced behind the user's back).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .launch import BuildInfo, LaunchError

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
CLUSTER_SH = SCRIPTS / "cluster.sh"
CLUSTER_MPIEXEC_SH = SCRIPTS / "cluster-mpiexec.sh"
DEFAULT_RATE = "10gbit"
SKIP_CODE = 77  # cluster.sh: this machine cannot host a cluster (not root, no ip/tc)


@dataclass
class ClusterSpec:
    hosts: int
    rate: str | None  # None: whatever rate the running cluster has (DEFAULT_RATE for a new one)


def parse_spec(text: str) -> ClusterSpec:
    """'emulated:2' or 'emulated:2:1gbit' -> ClusterSpec."""
    m = re.fullmatch(r"emulated:(\d+)(?::(\d+(?:bit|kbit|mbit|gbit)))?", text.strip().lower())
    if not m or not 2 <= int(m.group(1)) <= 64:
        raise LaunchError(f"--cluster {text!r}: expected emulated:HOSTS[:RATE] with 2..64 hosts, "
                          "e.g. emulated:2 or emulated:2:1gbit")
    return ClusterSpec(int(m.group(1)), m.group(2))


def name() -> str:
    return os.environ.get("PARTITA_CLUSTER_NAME", "partita")


def _script(*args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["bash", str(CLUSTER_SH), *args], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise LaunchError(f"scripts/cluster.sh {' '.join(args)}: {e}") from e


def state() -> dict | None:
    """The running cluster's description (hosts, rate, ...) or None when it is down."""
    f = Path(f"/run/{name()}-cluster.env")
    if not f.is_file() or _script("status").returncode != 0:
        return None
    kv = dict(line.split("=", 1) for line in f.read_text().splitlines() if "=" in line)
    hosts = int(kv["CLUSTER_HOSTS"])
    return {"kind": "emulated", "name": kv["CLUSTER_NAME"], "hosts": [f"h{i}" for i in range(hosts)],
            "rate": kv["CLUSTER_RATE"], "rate_bits_per_s": int(kv["CLUSTER_RATE_BITS"]),
            "mtu": int(kv.get("CLUSTER_MTU", 0))}


def up(hosts: int, rate: str) -> dict:
    p = _script("up", "--hosts", str(hosts), "--rate", rate)
    if p.returncode != 0:
        why = (p.stdout + p.stderr).strip().splitlines()
        raise LaunchError(f"cannot bring up the emulated cluster: {why[-1] if why else 'exit %d' % p.returncode}")
    return state() or {}


def down() -> None:
    _script("down")


def launcher(build: BuildInfo) -> str:
    """The --launcher command that runs a job across the cluster (it gets -n NP PROGRAM ARGS)."""
    if build.mpi_flavor not in ("mpich", "openmpi"):
        raise LaunchError(f"the emulated cluster runs MPICH (Hydra) or Open MPI jobs; this build uses {build.mpi_flavor}")
    return f"env MPIEXEC={shlex.quote(build.mpiexec)} bash {shlex.quote(str(CLUSTER_MPIEXEC_SH))}"


@contextmanager
def session(spec: ClusterSpec, log=None):
    """Yield the description of a cluster matching `spec`: the running one, or a new one
    that is taken down on leaving (also after an error or an interrupt)."""
    have = state()
    if have:
        if len(have["hosts"]) != spec.hosts or (spec.rate is not None and have["rate"] != spec.rate):
            raise LaunchError(f"an emulated cluster of {len(have['hosts'])} hosts at {have['rate']} is up; "
                              f"use emulated:{len(have['hosts'])}:{have['rate']} or take it down first "
                              "(partita cluster down)")
        yield have
        return
    if log:
        print(f"partita: bringing up an emulated cluster of {spec.hosts} hosts at {spec.rate or DEFAULT_RATE}",
              file=log, flush=True)
    try:
        yield up(spec.hosts, spec.rate or DEFAULT_RATE)
    finally:
        down()
