#!/usr/bin/env bash
# two_hosts.sh STEP: the steps of the ctest two_hosts tests (tests/two_hosts/CMakeLists.txt).
#   up        bring up a 2-host emulated cluster (scripts/cluster.sh) at $RATE
#   clock     partita-p2p --clock auto, 3 launches: each reports a ping-pong offset whose
#             interval [offset - uncertainty, offset + uncertainty] contains 0 (one kernel clock)
#   exchange IMPL   a partitioned exchange with -c validation, IMPL native or partita:POLICY
#   loggp     partita-loggp recovers the link rate: 8/G within 10% of $RATE (a slow link, so that a
#             busy machine does not slow the transfer below the link rate)
#   down      remove the cluster
#   prune     cluster.sh prune removes an idle cluster it matches once it is old enough, and
#             keeps a young one, a busy one (a process inside) and one it does not match
# Exit 77 (ctest's skip code) with one line when the machine cannot host the cluster.
# Environment (set by CMake): CLUSTER_SH, CLUSTER_MPIEXEC_SH, MPIEXEC, BIN_DIR, LIB_DIR,
# PARTITA_CLUSTER_NAME, RATE.
set -euo pipefail
step=${1:?step}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

skip_unless_possible() {
  local why
  if ! why=$(bash "$CLUSTER_SH" check 2>&1); then echo "two_hosts: SKIPPED: $why"; exit 77; fi
  # the version text in a variable: `mpiexec --version | grep -q` fails under pipefail when
  # grep stops reading early
  local version; version=$("$MPIEXEC" --version 2>/dev/null || true)
  if [[ ! $version =~ HYDRA|Hydra|hydra|"Open MPI" ]]; then
    echo "two_hosts: SKIPPED: $MPIEXEC is neither MPICH's Hydra nor Open MPI's mpirun (the launchers scripts/cluster-mpiexec.sh knows)"
    exit 77
  fi
}
require_up() {
  bash "$CLUSTER_SH" status >/dev/null || { echo "two_hosts: the cluster is not up (see the two_hosts.up test)"; exit 1; }
}
mpirun2() { timeout 90 bash "$CLUSTER_MPIEXEC_SH" -n 2 "$@"; }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $2" "$1"; }

skip_unless_possible
case "$step" in
  up)
    # the test clusters of build folders whose runs were killed before their `down` (a fresh
    # clone's CI folder is never used again): idle for 2 hours, they are nobody's
    bash "$CLUSTER_SH" prune --match 'pt[0-9a-f]{8}' --older-than 120
    bash "$CLUSTER_SH" up --hosts 2 --rate "$RATE" ;;
  down) bash "$CLUSTER_SH" down ;;
  clock)
    require_up
    for k in 1 2 3; do
      mpirun2 "$BIN_DIR/partita-p2p" -m 1K:1K -p 1 -i 5 -x 2 --clock auto -f json -o "$tmp/c.json"
      json "$tmp/c.json" '
c = d["clock"]
off, unc = c["offset_us"], c["uncertainty_us"]
print(f"launch '"$k"': offset {off:.3f} us +- {unc:.3f} us")
assert not c["shared"], "the ranks were on one node: the cluster launcher did not spread them"
assert abs(off) <= unc, "the offset interval does not contain the true offset 0"'
    done ;;
  exchange)
    require_up
    impl=${2:?exchange needs native or partita:POLICY}
    env=()
    if [ "$impl" != native ]; then env=(LD_PRELOAD="$LIB_DIR/libpartita-mpi.so" PARTITA_POLICY="${impl#partita:}"); fi
    env "${env[@]}" timeout 90 bash "$CLUSTER_MPIEXEC_SH" -n 2 "$BIN_DIR/partita-p2p" -m 8K:32K -p 2,8 -t 2 \
      --compute 20 --noise single:50 --compute-mode sleep -i 5 -x 1 -c -f json -o "$tmp/x.json"
    json "$tmp/x.json" '
assert not d["clock"]["shared"], "the ranks were on one node"
v = [r["validation"] for r in d["results"]]
print(f"{len(v)} cases across the link, validation: {sorted(set(v))}")
assert v and all(x == "pass" for x in v)' ;;
  loggp)
    require_up
    flavor=mpich; [[ $("$MPIEXEC" --version 2>/dev/null || true) == *"Open MPI"* ]] && flavor=openmpi
    mpirun2 "$BIN_DIR/partita-loggp" -m 128K:512K -i 5 -x 1 --passes 1 --budget 1 -f json -o "$tmp/l.json"
    bits=$(. "/run/$PARTITA_CLUSTER_NAME-cluster.env"; echo "$CLUSTER_RATE_BITS")
    json "$tmp/l.json" '
G = d["segments"][-1]["G"]          # us per byte
rate = 8e6 / G
print(f"G = {G:.6g} us/B: {rate/1e9:.3f} Gbit/s measured, '"$bits"' bit/s configured")
assert abs(rate / '"$bits"' - 1) <= 0.10 or "'"$flavor"'" == "openmpi", "the LogGP rate is not within 10% of the link rate"'
    if [ "$flavor" = openmpi ]; then
      # ob1/tcp adds a gap g of about 2 ms per message at these sizes, which the 3-size fit
      # trades against G (measured 0.22-0.25 Gbit/s at 200 Mbit/s): reported, not asserted
      echo "two_hosts: SKIPPED: the rate check is calibrated for MPICH over UCX (see docs/two-hosts.md)"; exit 77
    fi ;;
  prune)
    # three clusters of names of their own (they match no test cluster's `pt` + 8 hex digits)
    tag=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
    idle=pz${tag}a busy=pz${tag}b other=py${tag}c
    gone() { ! ip netns list | grep -qE "^$1-(sw|h[0-9]+)( |$)"; }
    cleanup() {
      [ -n "${sleeper:-}" ] && kill "$sleeper" 2>/dev/null; wait 2>/dev/null || true
      for c in "$idle" "$busy" "$other"; do PARTITA_CLUSTER_NAME=$c bash "$CLUSTER_SH" down >/dev/null; done
      rm -rf "$tmp"
    }
    trap cleanup EXIT
    for c in "$idle" "$busy" "$other"; do PARTITA_CLUSTER_NAME=$c bash "$CLUSTER_SH" up --rate 1gbit >/dev/null; done
    ip netns exec "$busy-h1" sleep 60 &
    sleeper=$!
    sleep 0.2
    # just made: nothing is old enough
    bash "$CLUSTER_SH" prune --match "pz${tag}[ab]" --older-than 60 | tee "$tmp/young"
    grep -q "keeping cluster $idle: made less than 60 minutes ago" "$tmp/young"
    ! gone "$idle" || { echo "two_hosts: prune removed a cluster made just now"; exit 1; }
    # old enough (0 minutes): the idle one goes; the busy one and the unmatched one stay
    bash "$CLUSTER_SH" prune --match "pz${tag}[ab]" --older-than 0 | tee "$tmp/old"
    grep -q "removing cluster $idle" "$tmp/old"
    gone "$idle" || { echo "two_hosts: prune left the idle cluster $idle"; exit 1; }
    [ ! -e "/run/$idle-cluster.env" ] || { echo "two_hosts: prune left $idle's state file"; exit 1; }
    grep -q "keeping cluster $busy: a process runs in it" "$tmp/old"
    ! gone "$busy" || { echo "two_hosts: prune removed a cluster with a process in it"; exit 1; }
    ! gone "$other" || { echo "two_hosts: prune removed a cluster its pattern does not match"; exit 1; }
    echo "two_hosts: prune removed the idle cluster and kept the young, the busy and the unmatched ones" ;;
  *) echo "two_hosts.sh: unknown step $step" >&2; exit 2 ;;
esac
