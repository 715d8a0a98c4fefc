"""Byte accounting test of the pattern programs.

Runs one program once per variant under the PMPI byte counter (LD_PRELOAD) and
checks that (1) the bytes the program reports as counted equal the bytes the
counter saw at the MPI calls, summed over ranks, (2) every variant moves the
same payload per iteration, and (3) counted = payload + padding per iteration.
With --corrupt it instead expects every variant's data check to fail.

usage: check_bytes.py --launch "MPIEXEC -n N" --np N --lib LIB --variant-option=--mode
                      --variants a,b,c [--corrupt] -- PROGRAM ARGS...
"""
import argparse
import glob
import json
import os
import shlex
import subprocess
import sys
import tempfile


def run_variant(args, program, variant, workdir):
    prefix = os.path.join(workdir, f"count-{variant}")
    out = os.path.join(workdir, f"{variant}.json")
    env = [f"LD_PRELOAD={args.lib}", f"PATTERNS_BYTECOUNT={prefix}"]
    if args.corrupt:
        env.append("PATTERNS_CORRUPT=1")
    cmd = (shlex.split(args.launch) + ["env"] + env + program
           + [args.variant_option, variant, "--format", "json", "--output", out])
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    counted = 0
    files = glob.glob(prefix + ".*")
    for path in files:
        with open(path) as f:
            fields = f.read().split()
            counted += int(fields[fields.index("bytes") + 1])
    return proc, out, counted, len(files)


def read_results(path):
    with open(path) as f:
        return json.load(f)["results"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--launch", required=True)
    p.add_argument("--np", type=int, required=True)
    p.add_argument("--lib", required=True)
    p.add_argument("--variant-option", required=True)
    p.add_argument("--variants", required=True)
    p.add_argument("--corrupt", action="store_true")
    p.add_argument("--expect-padding", default="", help="variants whose partitions must need padding")
    p.add_argument("--timeout", type=int, default=150)
    p.add_argument("program", nargs=argparse.REMAINDER)
    args = p.parse_args()
    program = [a for a in args.program if a != "--"]
    failures = []
    payloads = {}
    with tempfile.TemporaryDirectory() as workdir:
        for variant in args.variants.split(","):
            proc, out, counted, nfiles = run_variant(args, program, variant, workdir)
            if args.corrupt:
                ok = proc.returncode != 0 and os.path.exists(out) and any(
                    r["validation"] == "fail" for r in read_results(out))
                print(f"{variant}: exit {proc.returncode}, corrupted data {'detected' if ok else 'NOT detected'}")
                if not ok:
                    failures.append(f"{variant}: a corrupted send was not detected\n{proc.stderr}")
                continue
            if proc.returncode != 0:
                failures.append(f"{variant}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
                continue
            if nfiles != args.np:
                failures.append(f"{variant}: {nfiles} of {args.np} ranks wrote their byte count")
            result = read_results(out)[0]
            b = result["bytes"]
            payloads[variant] = b["payload_per_iteration"]
            print(f"{variant}: PMPI counted {counted} B, program reports {b['counted_total']} B in total; "
                  f"per iteration {b['counted_per_iteration']} = payload {b['payload_per_iteration']} "
                  f"+ padding {b['padding_per_iteration']}; validation {result['validation']}")
            if result["validation"] != "pass":
                failures.append(f"{variant}: validation {result['validation']}")
            if counted != b["counted_total"]:
                failures.append(f"{variant}: PMPI counted {counted} bytes, the program reports {b['counted_total']}")
            if b["counted_per_iteration"] != b["payload_per_iteration"] + b["padding_per_iteration"]:
                failures.append(f"{variant}: counted per iteration is not payload + padding")
            if variant in args.expect_padding.split(",") and b["padding_per_iteration"] <= 0:
                failures.append(f"{variant}: padding expected for this problem, none reported")
            if b["rank_iteration_spread"] != 0:
                failures.append(f"{variant}: the bytes of a rank differ between iterations")
    if len(set(payloads.values())) > 1:
        failures.append(f"variants move different payloads: {payloads}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
