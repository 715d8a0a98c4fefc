"""Parse osu_partitioned_latency output the way an OSU Micro-Benchmarks user's
script does, and check partita-latency against that layout.

    omb_parse.py MODE -- launcher... partita-latency args...

The parser knows only OMB's documented layout: '#' lines are comments, the last
comment line before the data is the header ("# Size" in 10 columns, then one
20-column field per value), data rows split on white space, column 0 is the size
and the next four are Overall, Compute, Pure Comm. and Overlap (-f: eight fields
after Overall). MODE says what else to expect:

  default   the four OMB columns only; sizes double; overlap in [0, 100]
  full      -f: OMB's nine columns, then partita's medians and 95% CIs
  validate  -c: a Validation column, every row Pass
  tail      -z: P50/P95/P99 tail columns after Overlap, ordered

Every mode also checks: the rows start at the first size >= the partition count
(-q, default 8) and end at the -m maximum, and Overall and Pure Comm. are > 0.
"""

from __future__ import annotations

import re
import subprocess
import sys

OMB_HEADER = ["Overall(us)", "Compute(us)", "Pure Comm.(us)", "Overlap(%)"]
OMB_FULL = ["Overall(us)", "Compute(us)", "Coll. Init(us)", "MPI_Test(us)", "MPI_Wait(us)", "Pure Comm.(us)",
            "Min Comm.(us)", "Max Comm.(us)", "Overlap(%)"]
PARTITA_CI = ["Overall Med.(us)", "Ovl. CI95 lo(us)", "Ovl. CI95 hi(us)", "Comm. Med.(us)", "Comm. CI95 lo(us)",
              "Comm. CI95 hi(us)"]


def fail(msg: str) -> None:
    print(f"omb_parse: {msg}", file=sys.stderr)
    sys.exit(1)


def header_fields(line: str) -> list[str]:
    """OMB's header: '# Size' left-aligned in 10 columns, then 20-wide right-aligned names."""
    if not line.startswith("# Size"):
        fail(f"the header does not start with '# Size': {line!r}")
    rest = line[10:]
    if len(rest) % 20:
        fail(f"the header is not 10 + n*20 columns wide ({len(line)}): {line!r}")
    return [rest[i:i + 20].strip() for i in range(0, len(rest), 20)]


def parse(out: str) -> tuple[list[str], list[list[str]]]:
    header, rows = None, []
    for line in out.splitlines():
        if not line.strip():
            continue
        if line.startswith("#"):
            if line.startswith("# Size"):
                header = header_fields(line)
            continue
        rows.append(line.split())
    if header is None:
        fail("no '# Size' header line")
    if not rows:
        fail("no data rows")
    return header, rows


def option(args: list[str], letter: str, default: str) -> str:
    for i, a in enumerate(args):
        if a == f"-{letter}" and i + 1 < len(args):
            return args[i + 1]
    return default


def byte_count(text: str) -> int:
    """A -m bound: a whole number with an optional K, M or G (powers of 1024)."""
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    return int(text[:-1] if scale > 1 else text) * scale


def main() -> None:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        fail("usage: omb_parse.py MODE -- launcher... partita-latency args...")
    mode, cmd = sys.argv[1], sys.argv[3:]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=150)
    except subprocess.TimeoutExpired:
        fail("the run timed out")
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        fail(f"the run exited {proc.returncode}")
    header, rows = parse(proc.stdout)

    expected = list(OMB_FULL if mode == "full" else OMB_HEADER)
    if mode == "validate":
        expected.append("Validation")
    if mode == "tail":
        expected += ["P50 Tail Lat(us)", "P95 Tail Lat(us)", "P99 Tail Lat(us)"]
    if mode == "full":
        expected += PARTITA_CI
    if header != expected:
        fail(f"header columns {header} != {expected}")

    parts = int(option(cmd, "q", "8"))
    sizes = option(cmd, "m", "1:4194304")
    lo, hi = (byte_count(x) for x in sizes.split(":"))
    first = lo
    while first < parts:
        first *= 2
    want_sizes = []
    s = first
    while s <= hi:
        want_sizes.append(s)
        s *= 2
    got_sizes = []
    for row in rows:
        if len(row) != len(expected) + 1:
            fail(f"row has {len(row)} fields, header {len(expected) + 1}: {row}")
        got_sizes.append(int(row[0]))
        values = {name: row[i + 1] for i, name in enumerate(expected)}
        nums = {k: float(v) for k, v in values.items() if k != "Validation"}
        if not (nums["Overall(us)"] > 0 and nums["Pure Comm.(us)"] > 0):
            fail(f"non-positive Overall or Pure Comm.: {row}")
        if not 0 <= nums["Overlap(%)"] <= 100:
            fail(f"Overlap outside [0, 100]: {row}")
        if nums["Compute(us)"] < 0:
            fail(f"negative Compute: {row}")
        # OMB's definition, recomputed from the printed (2-decimal) columns
        overlap = max(0.0, 100 - (nums["Overall(us)"] - nums["Compute(us)"]) / nums["Pure Comm.(us)"] * 100)
        ratio = abs(nums["Overall(us)"] - nums["Compute(us)"]) / nums["Pure Comm.(us)"]
        slack = (1 + ratio) * 100 * 0.01 / nums["Pure Comm.(us)"] + 0.02  # 2-decimal rounding
        if abs(overlap - nums["Overlap(%)"]) > slack:
            fail(f"Overlap {nums['Overlap(%)']} is not OMB's formula ({overlap:.2f}): {row}")
        if mode == "full":
            if not nums["Min Comm.(us)"] <= nums["Pure Comm.(us)"] <= nums["Max Comm.(us)"]:
                fail(f"Pure Comm. (a mean) outside [Min, Max]: {row}")
            for what in ("Ovl.", "Comm."):
                med = nums["Overall Med.(us)" if what == "Ovl." else "Comm. Med.(us)"]
                if not nums[f"{what} CI95 lo(us)"] <= med <= nums[f"{what} CI95 hi(us)"]:
                    fail(f"{what} median outside its 95% CI: {row}")
            for k in ("Coll. Init(us)", "MPI_Test(us)", "MPI_Wait(us)"):
                if nums[k] < 0:
                    fail(f"negative {k}: {row}")
        if mode == "validate" and values["Validation"] != "Pass":
            fail(f"data check failed: {row}")
        if mode == "tail":
            p = [nums[f"P{q} Tail Lat(us)"] for q in (50, 95, 99)]
            if p != sorted(p):
                fail(f"tail percentiles not ordered: {row}")
    if got_sizes != want_sizes:
        fail(f"sizes {got_sizes} != {want_sizes} (sizes below -q {parts} bytes are skipped)")
    if not re.search(r"^# Partitions: %d$" % parts, proc.stdout, re.M):
        fail("the preamble does not state the partition count")
    print(f"omb_parse: ok ({len(rows)} rows, mode {mode})")


if __name__ == "__main__":
    main()
