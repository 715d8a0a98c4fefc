#!/usr/bin/env bash
# cluster-mpiexec.sh: mpiexec across every host of the emulated cluster (scripts/cluster.sh).
#   cluster-mpiexec.sh [-n NP] PROGRAM ARGS...
# Runs Hydra's mpiexec on h0 (its proxy there is forked, the others start through
# cluster-launch.sh) with the ranks filling the hosts in order, ceil(NP/hosts) per host (-ppn).
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
hosts=$(seq -s, -f 'h%g' 0 $((CLUSTER_HOSTS - 1)))
MPIEXEC=${MPIEXEC:-mpiexec}
# UCX judges peers by the kernel's boot id, which the namespaces share, and would move the
# data by shared memory (cma/sysv); UCX_TLS=tcp,self makes it use the link
export UCX_TLS=${UCX_TLS:-tcp,self}
exec bash "$here/cluster.sh" exec h0 "$MPIEXEC" -launcher ssh -launcher-exec "$here/cluster-launch.sh" \
  -hosts "$hosts" -ppn "$ppn" -n "$np" "$@"
