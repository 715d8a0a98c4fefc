"""Run a partita-mech command and check what it reports, not how fast it is.

    check_run.py FORMAT EXPECTED -- launcher... partita-mech args...

FORMAT is text, json or csv (the command must print that format to stdout).
Passes when the command exits 0, reports exactly EXPECTED measured cases (one per
size, partition count, scheme and mechanism), every one with the data check
passed, and (json, csv) every case has positive bandwidth and time medians and
bandwidth equal to bytes / time for every sample.
"""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
import sys


def fail(msg: str) -> None:
    print(f"check_run: {msg}", file=sys.stderr)
    sys.exit(1)


def check_text(out: str) -> int:
    rows = [line.split() for line in out.splitlines() if line and not line.startswith("#")]
    for row in rows:
        if row[-1] != "Pass":
            fail(f"case without a passed data check: {' '.join(row)}")
    return len(rows)


def check_json(out: str) -> int:
    doc = json.loads(out)
    if doc.get("benchmark") != "mech" or doc.get("schema") != "partita.result/1":
        fail("not a partita-mech result document")
    measured = [r for r in doc["results"] if "skipped" not in r]
    for r in measured:
        case = r["case"]
        if r["validation"] != "pass":
            fail(f"data check {r['validation']} in {case}")
        if case["partition_bytes"] * case["partitions"] != case["bytes"]:
            fail(f"partition bytes do not add up in {case}")
        bw, t = r["metrics"]["bandwidth"], r["metrics"]["time_us"]
        if not (bw["summary"]["median"] > 0 and t["summary"]["median"] > 0):
            fail(f"non-positive medians in {case}")
        for b, us in zip(bw["samples"], t["samples"]):
            if not math.isclose(b, case["bytes"] / us, rel_tol=1e-6):
                fail(f"bandwidth sample {b} is not bytes / time ({case['bytes']} / {us})")
        if len(bw["samples"]) != doc["config"]["iterations"]:
            fail(f"{len(bw['samples'])} samples, not {doc['config']['iterations']}, in {case}")
    return len(measured)


def check_csv(out: str) -> int:
    rows = list(csv.DictReader(io.StringIO(out)))
    cases = set()
    for row in rows:
        if row["validation"] != "pass":
            fail(f"data check {row['validation']} in {row}")
        if float(row["median"]) <= 0:
            fail(f"non-positive median in {row}")
        cases.add((row["bytes"], row["partitions"], row["scheme"], row["mechanism"]))
    metrics = {row["metric"] for row in rows}
    if metrics != {"bandwidth", "time_us", "sender_time_us"}:
        fail(f"unexpected metrics {sorted(metrics)}")
    return len(cases)


def main(argv: list[str]) -> int:
    fmt, expected = argv[1], int(argv[2])
    if argv[3] != "--":
        fail("usage: check_run.py FORMAT EXPECTED -- COMMAND...")
    proc = subprocess.run(argv[4:], capture_output=True, text=True, timeout=600)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        fail(f"command exited {proc.returncode}")
    checker = {"text": check_text, "json": check_json, "csv": check_csv}[fmt]
    got = checker(proc.stdout)
    if got != expected:
        fail(f"{got} measured cases reported, expected {expected}")
    print(f"check_run: ok ({got} cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
