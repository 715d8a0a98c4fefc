#!/usr/bin/env bash
# sanitize.sh: build libpartita, its interposer and its conformance tests with
# AddressSanitizer + UndefinedBehaviorSanitizer and, separately, with
# ThreadSanitizer (each in its own build folder), then run the conformance
# tests (ctest label `lib`, and `fabric` when the fabric transport is built,
# but partita-loggp's) under each. Any sanitizer report fails the run.
# Used by `make sanitize`.
#
# Environment: VENV, BUILD_DIR (the sanitizer folders are $BUILD_DIR-asan and
# $BUILD_DIR-tsan), MPICC (default: the venv's mpicc), CTEST_J (default 2),
# SANITIZE_KINDS (default "asan tsan").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
VENV=${VENV:-.venv}
BUILD_DIR=${BUILD_DIR:-build}
MPICC=${MPICC:-$root/$VENV/bin/mpicc}
CTEST_J=${CTEST_J:-2}
SANITIZE_KINDS=${SANITIZE_KINDS:-asan tsan}
say() { printf '[sanitize] %s\n' "$*"; }

if ! command -v "$MPICC" >/dev/null 2>&1; then
  echo "sanitize: MPICC=$MPICC is not an MPI compiler wrapper (run make bootstrap first)" >&2
  exit 2
fi
mpicc_path=$(command -v "$MPICC")
supp="$root/scripts/sanitize-tsan.supp"

status=0
# aborted MPI jobs leave shared-memory segments behind: sweep this run's at exit
stamp=$(mktemp)
trap 'bash "$root/scripts/shm-sweep.sh" "$stamp"; rm -f "$stamp"' EXIT
for kind in $SANITIZE_KINDS; do
  case "$kind" in
    asan) flags="address,undefined" ;;
    tsan) flags="thread" ;;
    *) echo "sanitize: unknown kind '$kind' (asan or tsan)" >&2; exit 2 ;;
  esac
  dir="$BUILD_DIR-$kind"
  say "$kind: configuring and building in $dir"
  mkdir -p "$dir"
  cmake -S . -B "$dir" -DMPI_C_COMPILER="$mpicc_path" -DMPIEXEC_EXECUTABLE="$(dirname "$mpicc_path")/mpiexec" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPARTITA_SANITIZE="$flags" >"$dir/sanitize-configure.log" 2>&1 \
    || { cat "$dir/sanitize-configure.log"; exit 1; }
  cmake --build "$dir" -j "$(nproc)" --target partita-lib-tests >"$dir/sanitize-build.log" 2>&1 \
    || { grep -E "error|Error" "$dir/sanitize-build.log" | head -20; exit 1; }
  say "$kind: running the conformance tests"
  # MPI's own allocations are not ours to judge: no leak checking (the MPI
  # library is not instrumented); every real report aborts the process.
  # The preloaded variant is left out: a sanitizer runtime must come first in
  # the process, which LD_PRELOAD of an instrumented library cannot give.
  # UCX (MPICH's network layer) patches mmap/madvise/malloc, which crashes
  # under ThreadSanitizer; turn its memory hooks off (harmless for shared memory).
  # The soak's cases may take many times their usual time instrumented.
  if ! (cd "$dir" && \
        UCX_MEM_MMAP_HOOK_MODE=none UCX_MEM_MALLOC_HOOKS=no UCX_MEM_EVENTS=no \
        PARTITA_SOAK_DEADLINE_S=240 \
        ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1" \
        UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
        TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp" \
        ctest -L "lib|fabric" -E "preload|fabric.loggp" -j "$CTEST_J" --timeout 300 --output-on-failure); then
    status=1
    say "$kind: FAILED"
  else
    say "$kind: clean"
  fi
done
exit $status
