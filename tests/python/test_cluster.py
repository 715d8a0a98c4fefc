"""The emulated cluster's CLI side: --cluster specs, bad input, the launcher it builds.
(Bringing hosts up needs root: the ctest two_hosts tests do that.)"""

import subprocess
import sys

import pytest

from partita import cluster
from partita.launch import LaunchError


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "partita.cli", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("text,hosts,rate", [("emulated:2", 2, None), ("emulated:4:1gbit", 4, "1gbit"),
                                             ("Emulated:2:500MBIT", 2, "500mbit")])
def test_spec_parses(text, hosts, rate):
    s = cluster.parse_spec(text)
    assert (s.hosts, s.rate) == (hosts, rate)


@pytest.mark.parametrize("text", ["emulated", "emulated:1", "emulated:65", "real:2", "emulated:2:fast", "emulated:x"])
def test_bad_spec_is_refused(text):
    with pytest.raises(LaunchError, match="emulated:HOSTS"):
        cluster.parse_spec(text)


def test_launcher_runs_the_cluster_script_with_this_builds_mpiexec(build):
    if build.mpi_flavor not in ("mpich", "openmpi"):
        with pytest.raises(LaunchError, match="Hydra"):
            cluster.launcher(build)
        return
    cmd = cluster.launcher(build)
    assert f"MPIEXEC={build.mpiexec}" in cmd and cmd.endswith("cluster-mpiexec.sh")
    assert cluster.CLUSTER_MPIEXEC_SH.is_file() and cluster.CLUSTER_SH.is_file()


def test_run_refuses_bad_cluster_and_cluster_with_launcher():
    p = run_cli("run", "--cluster", "emulated:1")
    assert p.returncode == 2 and "partita run: error: --cluster 'emulated:1'" in p.stderr
    p = run_cli("run", "--cluster", "emulated:2", "--launcher", "srun")
    assert p.returncode == 2 and "exclude each other" in p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("args,message", [(["--rate", "3x"], "rate '3x': unit must be bit, kbit, mbit or gbit"),
                                          (["--hosts", "1"], "--hosts must be 2..64"),
                                          (["--mtu", "100"], "--mtu must be 1280..65535")])
def test_cluster_up_refuses_bad_input_before_touching_anything(args, message):
    p = run_cli("cluster", "up", *args)
    assert p.returncode == 2
    assert f"partita cluster: error: {message}" in p.stderr and "Traceback" not in p.stderr


def test_partita_launcher_environment_variable_is_the_default_launcher(build, monkeypatch):
    from partita.launch import launch_command
    monkeypatch.setenv("PARTITA_LAUNCHER", "env X=1 my-launcher --flag")
    cmd = launch_command(build, "partita-p2p", ["-i", "1"], 4, {})
    assert cmd[:6] == ["env", "X=1", "my-launcher", "--flag", "-n", "4"] and cmd[-2:] == ["-i", "1"]
    assert launch_command(build, "partita-p2p", [], 2, {}, launcher="srun")[:3] == ["srun", "-n", "2"]
    monkeypatch.delenv("PARTITA_LAUNCHER")
    assert launch_command(build, "partita-p2p", [], 2, {})[0] == build.mpiexec
