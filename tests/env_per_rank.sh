#!/usr/bin/env bash
# env_per_rank.sh NAME VALUE0 VALUE1 PROGRAM [ARGS...]: run PROGRAM with the
# environment variable NAME set to VALUE0 on rank 0 and to VALUE1 on every
# other rank: one job whose ranks differ in one setting (e.g. LD_PRELOAD of
# different libpartita builds, or a bad value on one rank only).
set -u
rank=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-}}}
if [ -z "$rank" ]; then
  echo "env_per_rank.sh: the launcher set none of PMI_RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK" >&2
  exit 2
fi
name=$1 value=$3
[ "$rank" = 0 ] && value=$2
shift 3
export "$name=$value"
exec "$@"
