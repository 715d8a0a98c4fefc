#!/usr/bin/env bash
# cluster-mpiexec.sh: mpiexec across every host of the emulated cluster (scripts/cluster.sh).
#   cluster-mpiexec.sh [-n NP] PROGRAM ARGS...
# Runs the mpiexec on h0 with the ranks filling the hosts in order, ceil(NP/hosts) per host:
# MPICH's Hydra (its proxy on h0 is forked, the others start through cluster-launch.sh as
# -launcher-exec) or Open MPI's mpirun (cluster-launch.sh as PRRTE's ssh agent).
# Environment: MPIEXEC (default: mpiexec on PATH), UCX_TLS (default tcp,self),
# PARTITA_CLUSTER_NAME (default partita). The environment is forwarded to every rank.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
NAME=${PARTITA_CLUSTER_NAME:-partita}
state=/run/$NAME-cluster.env
[ -f "$state" ] || { echo "cluster-mpiexec.sh: error: cluster $NAME is not up (scripts/cluster.sh up)" >&2; exit 2; }
# shellcheck disable=SC1090
. "$state"
np=$CLUSTER_HOSTS
if [ "${1:-}" = -n ] || [ "${1:-}" = -np ]; then np=${2:?}; shift 2; fi
[ $# -ge 1 ] || { echo "cluster-mpiexec.sh: usage: cluster-mpiexec.sh [-n NP] PROGRAM ARGS..." >&2; exit 2; }
[[ $np =~ ^[1-9][0-9]*$ ]] || { echo "cluster-mpiexec.sh: error: -n needs a positive number, not '$np'" >&2; exit 2; }
ppn=$(((np + CLUSTER_HOSTS - 1) / CLUSTER_HOSTS))
MPIEXEC=${MPIEXEC:-mpiexec}
# UCX judges peers by the kernel's boot id, which the namespaces share, and would move the
# data by shared memory (cma/sysv); UCX_TLS=tcp,self makes it use the link
export UCX_TLS=${UCX_TLS:-tcp,self}
if [[ $("$MPIEXEC" --version 2>/dev/null || true) == *"Open MPI"* ]]; then
  # Open MPI: PRRTE's ssh agent is the same launcher; hosts with ppn slots each, filled in
  # order; the variables that select and tune the implementation are exported explicitly
  hosts=$(seq -s, -f "h%g:$ppn" 0 $((CLUSTER_HOSTS - 1)))
  exports=()
  for v in $(env | sed -n 's/^\(LD_PRELOAD\|PARTITA_[A-Z_]*\|UCX_[A-Z_]*\|OMP_[A-Z_]*\)=.*/\1/p'); do exports+=(-x "$v"); done
  extra=()
  [ "$(id -u)" = 0 ] && extra+=(--allow-run-as-root)
  exec bash "$here/cluster.sh" exec h0 "$MPIEXEC" "${extra[@]}" --prtemca plm_ssh_agent "bash $here/cluster-launch.sh" \
    --host "$hosts" -n "$np" "${exports[@]}" "$@"
fi
hosts=$(seq -s, -f 'h%g' 0 $((CLUSTER_HOSTS - 1)))
exec bash "$here/cluster.sh" exec h0 "$MPIEXEC" -launcher ssh -launcher-exec "$here/cluster-launch.sh" \
  -hosts "$hosts" -ppn "$ppn" -n "$np" "$@"
