#!/usr/bin/env bash
# expect-error.sh TIMEOUT REGEX CMD...: passes when CMD exits non-zero within TIMEOUT
# seconds (a hang is a failure) and its combined output matches the extended REGEX.
set -u
limit=$1 regex=$2
shift 2
out=$(timeout -k 5 "$limit" "$@" 2>&1 </dev/null)
rc=$?
# A job that aborts at start-up sometimes shows nothing at all, not even
# MPI_Abort's own line (MPICH's launcher, ctest -j 2: trace.bad-events, twice in 3 full
# runs on one day); a program's error always prints something, so try once more.
if [ -z "$out" ] && [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ]; then
  echo "expect-error: exit $rc with no output at all (the launcher lost it?); running once more" >&2
  out=$(timeout -k 5 "$limit" "$@" 2>&1 </dev/null)
  rc=$?
fi
printf '%s\n' "$out"
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then echo "expect-error: timed out after ${limit}s" >&2; exit 1; fi
if [ "$rc" -eq 0 ]; then echo "expect-error: exited 0, an error was expected" >&2; exit 1; fi
if ! printf '%s\n' "$out" | grep -Eq -- "$regex"; then echo "expect-error: output does not match /$regex/" >&2; exit 1; fi
echo "expect-error: ok (exit $rc)"
