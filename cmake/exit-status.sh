#!/usr/bin/env bash
# exit-status.sh CMD...: runs CMD and exits with its status; when that is not
# 0, first prints one line that the test's FAIL_REGULAR_EXPRESSION matches.
# A test with a PASS_REGULAR_EXPRESSION passes on its output alone (ctest
# ignores the exit status then), so a program that printed its verdict and
# then crashed (in MPI_Finalize, whose hook tears the transports down, or
# under a sanitizer) passed; through this it fails.
# 77 is the skip status (SKIP_RETURN_CODE) that some tests use.
"$@"
rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
  echo "exit-status: the test exited with status $rc after its output"
fi
exit "$rc"
