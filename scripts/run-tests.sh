#!/usr/bin/env bash
# run-tests.sh: every test of the project, after bootstrap. Used by `make test` (and so CI).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
VENV=${VENV:-.venv}
BUILD_DIR=${BUILD_DIR:-build}
status=0
# aborted MPI jobs leave shared-memory segments behind: sweep this run's at exit
stamp=$(mktemp)
trap 'bash "$root/scripts/shm-sweep.sh" "$stamp"; rm -f "$stamp"' EXIT
echo "== C tests (ctest)"
(cd "$BUILD_DIR" && ctest --output-on-failure -j "${CTEST_J:-2}" --timeout 300) || status=1
echo "== Python tests (pytest)"
# the report's browser test needs Debian's chromium: installed here when root, else that test skips
bash scripts/install-chromium.sh
PARTITA_BUILD="$root/$BUILD_DIR" "$VENV/bin/python" -m pytest -q -rs tests/python || status=1
if [ -f tests/peer/run.sh ]; then
  echo "== peer conformance suites"
  bash tests/peer/run.sh --from-make-test || status=1
fi
exit $status
