"""scripts/bench-transports.py: transports with settings of their own, side by side."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "bench-transports.py"
P2P = ["--", "-m", "4K:4K", "-p", "4", "--metric", "overhead", "-i", "3", "-x", "1"]


def _run(build, transports, timeout=120):
    return subprocess.run([sys.executable, str(SCRIPT), "--build", str(build.path), "--launches", "1",
                           "--transports", transports, *P2P], capture_output=True, text=True, timeout=timeout)


def test_each_transport_keeps_its_own_settings(build):
    p = _run(build, "mpi:PARTITA_POLICY=none,mpi:PARTITA_POLICY=bulk")
    assert p.returncode == 0, p.stderr
    header = next(line for line in p.stdout.splitlines() if line.lstrip().startswith("bytes"))
    assert "mpi:PARTITA_POLICY=none" in header and "mpi:PARTITA_POLICY=bulk" in header
    row = next(line for line in p.stdout.splitlines() if line.split()[:4] == ["4096", "4", "1", "overhead"])
    assert row.count("[") == 2  # one cell per transport


def test_a_setting_reaches_its_launch_only(build):
    # the first transport runs; the second's bad policy is refused by the library in its launch
    p = _run(build, "mpi,mpi:PARTITA_POLICY=nope")
    assert p.returncode != 0
    assert "mpi:PARTITA_POLICY=nope" in p.stderr and "PARTITA_POLICY='nope'" in p.stderr


def test_a_transport_setting_overrides_the_preloaded_interposer_and_env(build):
    # it used to crash with a TypeError when a transport named a variable already set
    p = subprocess.run([sys.executable, str(SCRIPT), "--build", str(build.path), "--launches", "1",
                        "--env", "PARTITA_POLICY=nope", "--transports",
                        f"mpi:PARTITA_POLICY=bulk,mpi:PARTITA_POLICY=none:LD_PRELOAD={build.path}/lib/libpartita-mpi.so",
                        *P2P], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr  # --env's bad policy reached neither launch
    assert "Traceback" not in p.stderr


def test_a_missing_preload_stops_before_any_launch(build):
    # the loader only warns about a missing LD_PRELOAD file: the launch would have measured MPI alone
    missing = build.path / "lib" / "no-such-interposer.so"
    p = _run(build, f"mpi,mpi:LD_PRELOAD={missing}", timeout=30)
    assert p.returncode != 0
    assert f"LD_PRELOAD names {missing}, which does not exist" in p.stderr
    assert "launch 1/1 done" not in p.stderr and p.stdout == ""


def test_an_env_setting_without_a_value_is_refused(build):
    p = subprocess.run([sys.executable, str(SCRIPT), "--build", str(build.path), "--env", "PARTITA_POLICY",
                        *P2P], capture_output=True, text=True, timeout=30)
    assert p.returncode != 0 and "--env 'PARTITA_POLICY' is not K=V" in p.stderr and "Traceback" not in p.stderr


def test_a_malformed_transport_stops_before_any_launch(build):
    p = _run(build, "mpi,fabric:oops", timeout=30)
    assert p.returncode != 0
    assert "'fabric:oops': 'oops' is not K=V" in p.stderr
    assert "launch 1/1 done" not in p.stderr and p.stdout == ""


def test_per_launch_lists_every_launch_in_order(build):
    p = subprocess.run([sys.executable, str(SCRIPT), "--build", str(build.path), "--launches", "2", "--per-launch",
                        "--transports", "mpi:PARTITA_POLICY=none,mpi:PARTITA_POLICY=bulk", *P2P],
                       capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    i = next(k for k, line in enumerate(lines) if line.split()[:4] == ["4096", "4", "1", "overhead"])
    for k, t in enumerate(["mpi:PARTITA_POLICY=none", "mpi:PARTITA_POLICY=bulk"]):
        head, _, values = lines[i + 1 + k].partition(f"per launch, {t}: ")
        assert not head.strip() and values, lines[i + 1 + k]
        launches = [float(x) for x in values.split()]
        assert len(launches) == 2 and all(x > 0 for x in launches)
        # the row's median is the median of exactly these
        cell = lines[i].split()[4 + 2 * k]
        assert abs(float(cell) - sum(launches) / 2) <= 2e-3 * float(cell) + 1e-4
