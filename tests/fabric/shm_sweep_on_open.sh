#!/usr/bin/env bash
# shm_sweep_on_open.sh MPIEXEC PROGRAM: a process that opens the shm provider
# removes the region (/dev/shm/PID:0:0) a killed process left, unless
# PARTITA_FABRIC_SHM_SWEEP=0; a bad value of it is an error. PROGRAM is an
# MPI program using the fabric (PARTITA_TRANSPORT=fabric, provider shm) that
# prints "all checks passed". Its output, not its exit status, says it ran:
# under ThreadSanitizer every MPI program of this MPICH wheel ends in a
# SIGSEGV in UCX's thread after its last line (a plain MPI_Init/Finalize too).
set -u
mpiexec=$1 program=$2
fail() { echo "shm-sweep-on-open: FAILED: $*"; exit 1; }
ran() { timeout 60 "$mpiexec" -n 2 "$program" 2>&1 | grep "all checks passed" >/dev/null; }
sh -c 'exit 0' &
dead=$!
wait "$dead"
kill -0 "$dead" 2>/dev/null && { echo "shm-sweep-on-open: SKIPPED: PID $dead was reused at once"; exit 77; }
region=/dev/shm/$dead:0:0
trap 'rm -f "$region"' EXIT
export PARTITA_TRANSPORT=fabric PARTITA_FABRIC_PROVIDER=shm

: >"$region"
PARTITA_FABRIC_SHM_SWEEP=0 ran || fail "the program failed with PARTITA_FABRIC_SHM_SWEEP=0"
[ -e "$region" ] || fail "PARTITA_FABRIC_SHM_SWEEP=0 removed $region all the same"

out=$(PARTITA_FABRIC_SHM_SWEEP=yes timeout 60 "$mpiexec" -n 2 "$program" 2>&1) && fail "PARTITA_FABRIC_SHM_SWEEP=yes was accepted"
grep -q "PARTITA_FABRIC_SHM_SWEEP='yes' is not 0 or 1" <<<"$out" || fail "no clear line for PARTITA_FABRIC_SHM_SWEEP=yes: $out"
[ -e "$region" ] || fail "a refused PARTITA_FABRIC_SHM_SWEEP removed $region"

ran || fail "the program failed"
[ -e "$region" ] && fail "$region, left by exited process $dead, is still there after the shm provider was opened"
echo "shm-sweep-on-open: all checks passed"
