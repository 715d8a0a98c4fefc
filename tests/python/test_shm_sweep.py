"""scripts/shm-sweep.sh removes only the shared-memory segments an aborted job
of this run left: newer than the stamp, older than 2 s, ours, unused. The
cases sweep a folder of their own, never the machine's /dev/shm."""

import os
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SWEEP = ROOT / "scripts" / "shm-sweep.sh"


def _segment(shm: Path, name: str, age_s: float) -> Path:
    path = shm / name
    path.write_bytes(b"\0" * 64)
    t = time.time() - age_s
    os.utime(path, (t, t))
    return path


def test_sweep_removes_only_this_runs_unused_segments(tmp_path):
    tag = f"partitatest{os.getpid()}"
    shm = tmp_path / "shm"
    shm.mkdir()
    stamp = tmp_path / "stamp"
    stamp.touch()
    t = time.time() - 60
    os.utime(stamp, (t, t))
    left = _segment(shm, f"mpich_shm_{tag}_0", 10)  # aborted job of this run
    left_ompi = _segment(shm, f"sm_segment.{tag}.0", 10)
    held = _segment(shm, f"mpich_shm_{tag}_1", 10)  # a live job still has it open
    older = _segment(shm, f"mpich_shm_{tag}_2", 120)  # before the run began
    fresh = _segment(shm, f"mpich_shm_{tag}_3", 0)  # a job may be about to map it
    other = _segment(shm, f"unrelated_{tag}", 10)  # not an MPI segment
    keep = [held, older, fresh, other]
    try:
        with open(held, "rb"):
            out = subprocess.run(["bash", str(SWEEP), str(stamp), str(shm)], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert not left.exists() and not left_ompi.exists()
        assert all(p.exists() for p in keep), [p.name for p in keep if not p.exists()]
        assert "removed 2 " in out.stdout, out.stdout
    finally:
        for p in [left, left_ompi, *keep]:
            p.unlink(missing_ok=True)


def test_sweep_without_stamp_is_a_usage_error():
    out = subprocess.run(["bash", str(SWEEP)], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "usage" in out.stderr
