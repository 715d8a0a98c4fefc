#!/usr/bin/env bash
# build-mpi4py.sh SDIST TARGET PYTHON MPICC: build mpi4py from its source distribution
# against the MPI behind MPICC and install it into the folder TARGET (used through
# PYTHONPATH, so no virtual environment is changed). Skips the work when TARGET holds
# a build from the same sdist and compiler.
set -euo pipefail
sdist=${1:?usage: build-mpi4py.sh SDIST TARGET PYTHON MPICC}
target=${2:?}
python=${3:?}
mpicc=${4:?}
mpicc=$(command -v "$mpicc")
mpicc="$(cd "$(dirname "$mpicc")" && pwd)/$(basename "$mpicc")"   # pip builds in another folder
key="$(basename "$sdist") $(stat -L -c '%n %Y' "$mpicc")"   # a reinstalled MPI gets a fresh build
if [ -f "$target/.partita-built" ] && [ "$(cat "$target/.partita-built")" = "$key" ]; then exit 0; fi
printf '[peer-tests] building %s against %s (takes a minute or two, once)\n' "$(basename "$sdist")" "$mpicc"
rm -rf "$target"
mkdir -p "$target"
# -O0: the generated extension is huge; optimising it only costs build time here.
if ! env PATH="$(dirname "$mpicc"):$PATH" MPICC="$mpicc" CFLAGS="-O0 -g0" \
     timeout 1200 "$python" -m pip install --disable-pip-version-check -q --no-deps --target "$target" "$sdist" \
     >"$target.log" 2>&1; then
  tail -20 "$target.log" >&2
  printf '[peer-tests] building mpi4py failed; the log is %s\n' "$target.log" >&2
  exit 1
fi
echo "$key" >"$target/.partita-built"
