#!/usr/bin/env bash
# cluster-launch.sh: Hydra's "ssh" for the emulated cluster of scripts/cluster.sh.
# mpiexec -launcher ssh -launcher-exec scripts/cluster-launch.sh -hosts h0,h1 ... calls it as
#   cluster-launch.sh [ssh options] HOST COMMAND-WORDS...
# and, like ssh, it runs the words joined by spaces through a shell, here inside HOST's
# namespace with HOST as its hostname.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done  # ssh options (Hydra passes -x)
[ $# -ge 2 ] || { echo "cluster-launch.sh: usage: cluster-launch.sh [-opts] HOST COMMAND..." >&2; exit 2; }
host=$1; shift
exec bash "$here/cluster.sh" exec "$host" sh -c "$*"
