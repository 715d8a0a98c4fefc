"""Shared by the model/loggp/tune tests: the build under test and a CLI runner."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from partita.launch import BuildInfo, LaunchError


def build_info() -> BuildInfo:
    try:
        return BuildInfo.find()
    except LaunchError as e:  # the tests need a build: say so instead of skipping
        pytest.fail(f"no partita build for the model tests: {e}")


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.setdefault("PARTITA_BUILD", str(build_info().path))
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "partita.cli", *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout, cwd=Path(__file__).resolve().parents[2])
