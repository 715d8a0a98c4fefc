#!/usr/bin/env bash
# preload_per_rank.sh LIB0 LIB1 PROGRAM [ARGS...]: run PROGRAM with LIB0
# preloaded on rank 0 and LIB1 on every other rank: one job whose ranks load
# different libpartita builds.
set -u
rank=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-}}}
if [ -z "$rank" ]; then
  echo "preload_per_rank.sh: the launcher set none of PMI_RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK" >&2
  exit 2
fi
lib=$2
[ "$rank" = 0 ] && lib=$1
shift 2
LD_PRELOAD=$lib exec "$@"
