"""Start one peer-suite case under an MPI launcher, with or without the interposer.

Every run has a time limit (`timeout -k`), its own session so that stray ranks of a
killed launcher can be ended by process group, and stdin from /dev/null (Hydra's
mpiexec reads stdin).
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

# Open MPI as root on a 2-core machine; the same settings as cmake/PartitaTesting.cmake.
OPENMPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "true", "PRTE_MCA_rmaps_default_mapping_policy": ":oversubscribe",
    "OMPI_MCA_btl": "self,vader,tcp",
}
# The dynamic loader only warns when a preload fails; such a run did not test libpartita.
PRELOAD_FAILED = "cannot be preloaded"


@dataclass
class Launcher:
    mpiexec: str
    flavour: str                 # "mpich" (Hydra) or "openmpi"

    def command(self, nprocs: int, preload: str | None, argv: list[str]) -> list[str]:
        cmd = [self.mpiexec, "-n", str(nprocs)]
        if self.flavour == "openmpi":
            cmd += ["--oversubscribe"]
            if preload:
                cmd += ["-x", f"LD_PRELOAD={preload}"]
        elif preload:
            # Only the ranks get the interposer, not mpiexec and its proxies.
            cmd += ["-genv", "LD_PRELOAD", preload]
        return cmd + argv

    def environment(self, extra: dict[str, str]) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PARTITA_") and k != "LD_PRELOAD"}
        if self.flavour == "openmpi":
            env.update(OPENMPI_ENV)
        env["MPITEST_RETURN_WITH_CODE"] = "yes"   # MPICH's harness: errors give a non-zero exit too
        env.update(extra)
        return env


@dataclass
class RunOutcome:
    returncode: int
    timed_out: bool
    seconds: float
    output: str


# Launcher start-up failures that say nothing about the program: the run is repeated once.
# (Open MPI's PMIx server can fail to start when another Open MPI job starts at the same time.)
LAUNCHER_FLAKES = ("PMIx server's listener thread failed to start",)


def run(cmd: list[str], env: dict[str, str], timeout: int, cwd: Path, log: Path) -> RunOutcome:
    """Run cmd with a hard time limit; write a log with the command, output and status."""
    outcome = _run_once(cmd, env, timeout, cwd, log)
    if any(flake in outcome.output for flake in LAUNCHER_FLAKES):
        first = log.read_text(encoding="utf-8")
        outcome = _run_once(cmd, env, timeout, cwd, log)
        log.write_text(f"[launcher failed to start; repeated once]\n{first}\n{log.read_text(encoding='utf-8')}",
                       encoding="utf-8")
    return outcome


def _run_once(cmd: list[str], env: dict[str, str], timeout: int, cwd: Path, log: Path) -> RunOutcome:
    started = time.monotonic()
    proc = subprocess.Popen(["timeout", "-k", "5", str(timeout), *cmd], cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout + 30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
    finally:
        _end_stragglers(proc.pid)
    seconds = time.monotonic() - started
    text = out.decode("utf-8", errors="replace")
    timed_out = proc.returncode in (124, 137, -9)
    log.parent.mkdir(parents=True, exist_ok=True)
    shown_env = " ".join(f"{k}={v}" for k, v in sorted(env.items()) if k.startswith("PARTITA_"))
    log.write_text(f"$ {shown_env} {' '.join(cmd)}\n{text}\n[exit {proc.returncode}"
                   f"{', timed out after %ds' % timeout if timed_out else ''}, {seconds:.1f}s]\n",
                   encoding="utf-8")
    return RunOutcome(proc.returncode, timed_out, seconds, text)


def _end_stragglers(pgid: int) -> None:
    """Ranks of a killed launcher can outlive it in the session we created for it."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def probe_preload(launcher: Launcher, probe: Path, preload: str, env: dict[str, str], log: Path) -> str | None:
    """None when every probed MPI entry point resolves to the interposer, else why not."""
    if not Path(preload).is_file():
        return f"interposer {preload} does not exist (build it first)"
    outcome = run(launcher.command(1, preload, [str(probe)]), env, 60, probe.parent, log)
    lines = [line.split() for line in outcome.output.splitlines() if line.startswith("MPI_")]
    if outcome.returncode != 0 or not lines:
        said = next((line.strip() for line in outcome.output.splitlines() if line.strip()), "no output")
        return f"probe run failed (exit {outcome.returncode}: {said[:160]}); see {log}"
    elsewhere = [name for name, *where in lines if not where or Path(where[0]).name != Path(preload).name]
    if elsewhere:
        return f"not provided by {Path(preload).name}: {', '.join(elsewhere)}"
    return None
