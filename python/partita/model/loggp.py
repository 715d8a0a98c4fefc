"""Running partita-loggp and presenting its partita.loggp/1 parameter file."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from ..launch import BuildInfo, LaunchError, child_env, failure_lines, launch_command
from .native import LOGGP_SCHEMA, ModelError, Params, gbps

PROGRAM = "partita-loggp"


def measure(build: BuildInfo, args: list[str], np: int = 2, timeout: float = 1800,
            launcher: str | None = None) -> tuple[dict, Params]:
    """Run partita-loggp with JSON output; return the document and the parameters as the C reader sees them."""
    with tempfile.TemporaryDirectory(prefix="partita-loggp-") as tmp:
        out = Path(tmp) / "loggp.json"
        cmd = launch_command(build, PROGRAM, [*args, "--format", "json", "--output", str(out)], np, {}, launcher)
        try:
            p = subprocess.run(cmd, env=child_env({}), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise LaunchError(f"{PROGRAM} timed out after {timeout:g} s") from e
        except OSError as e:  # the launcher itself cannot be started
            raise LaunchError(f"cannot start {cmd[0]}: {e.strerror or e}") from e
        if p.returncode != 0:
            raise LaunchError(f"{PROGRAM} failed with exit {p.returncode}: {failure_lines(p.stdout, p.stderr, 3)}")
        try:
            doc = json.loads(out.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise LaunchError(f"{PROGRAM} wrote no readable parameter file ({e})") from e
        params = Params.load(out)  # the library's own reader must accept it
    if doc.get("schema") != LOGGP_SCHEMA:
        raise ModelError(f"{PROGRAM} wrote schema {doc.get('schema')!r}, expected {LOGGP_SCHEMA}")
    return doc, params


def format_segments(params: Params) -> list[str]:
    lines = [f"{'segment':>8} {'sizes':>18} {'L':>8} {'o_s':>8} {'o_r':>8} {'g':>8} {'g*':>8} "
             f"{'G (us/B)':>10} {'GB/s':>7} {'handshake':>9}"]
    lo = 0
    for i, s in enumerate(params.segments):
        rng = f"{lo + 1}..{s.max_bytes}" if s.max_bytes is not None else f">= {lo + 1}"
        lines.append(f"{i:>8} {rng:>18} {s.L:8.3f} {s.o_s:8.3f} {s.o_r:8.3f} {s.g:8.3f} {s.gstar:8.3f} "
                     f"{s.G:10.3g} {gbps(s.G):7.2f} {s.handshake_us:9.3f}")
        lo = s.max_bytes or lo
    return lines


def format_sizes(doc: dict) -> list[str]:
    sizes = doc.get("sizes") or []
    if not sizes:
        return []
    lines = [f"{'bytes':>10} {'PRTT(1,0)':>10} {'PRTT(n,0)':>10} {'PRTT(n,d)':>11} {'o_s':>8} {'o_r':>8} "
             f"{'g+G(s-1)':>9} {'L':>8} {'seg':>4}"]
    for s in sizes:
        lines.append(f"{s['bytes']:>10} {s['prtt1_us']:10.3f} {s['prttn_us']:10.3f} {s['prttd_us']:11.3f} "
                     f"{s['o_s_us']:8.3f} {s['o_r_us']:8.3f} {s['gap_us']:9.3f} {s['L_us']:8.3f} {s['segment']:>4}")
    return lines
