#!/usr/bin/env bash
# expect-error.sh TIMEOUT REGEX CMD...: passes when CMD exits non-zero within TIMEOUT
# seconds (a hang is a failure) and its combined output matches the extended REGEX.
set -u
limit=$1 regex=$2
shift 2
# timeout's own codes (124, 137 once killed) are also exit codes a job can end
# with (Open MPI's launcher exits with the aborting rank's error code modulo
# 256: one of libpartita's error codes read 124), so a hang is also told by
# the time it took.
run() {
  local began=$SECONDS
  # NUL bytes dropped before bash reads them (Open MPI's abort output has some,
  # and bash warns for each): the job's own exit code is kept.
  out=$(timeout -k 5 "$limit" "$@" 2>&1 </dev/null | tr -d '\000'; exit "${PIPESTATUS[0]}")
  rc=$?
  if { [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; } && [ $((SECONDS - began)) -ge "$limit" ]; then timed_out=1; else timed_out=0; fi
}
run "$@"
# A job that aborts at start-up sometimes shows nothing at all, not even
# MPI_Abort's own line (MPICH's launcher, ctest -j 2: trace.bad-events, twice in 3 full
# runs on one day); a program's error always prints something, so try once more.
if [ -z "$out" ] && [ "$rc" -ne 0 ] && [ "$timed_out" -eq 0 ]; then
  echo "expect-error: exit $rc with no output at all (the launcher lost it?); running once more" >&2
  run "$@"
fi
printf '%s\n' "$out"
if [ "$timed_out" -eq 1 ]; then echo "expect-error: timed out after ${limit}s" >&2; exit 1; fi
if [ "$rc" -eq 0 ]; then echo "expect-error: exited 0, an error was expected" >&2; exit 1; fi
if ! printf '%s\n' "$out" | grep -Eq -- "$regex"; then echo "expect-error: output does not match /$regex/" >&2; exit 1; fi
echo "expect-error: ok (exit $rc)"
