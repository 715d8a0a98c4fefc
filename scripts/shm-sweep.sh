#!/usr/bin/env bash
# shm-sweep.sh STAMP [DIR]: remove the MPI shared-memory segments that this
# run of the tests left in DIR (default /dev/shm; the tests use a folder of
# their own).
#
# A job that ends in MPI_Abort never unlinks its node's segment (MPICH:
# mpich_shm_*, Open MPI: sm_segment.*, libfabric's shm provider of the fabric
# transport: PID:N:N, 16 MiB each). The tests of bad input abort on
# purpose, so every `make test` used to leave a few MB of RAM behind until
# reboot. A segment is removed only when all of these hold:
#   - it is newer than STAMP (a file touched when the run began);
#   - it is ours;
#   - no process maps it or holds it open;
#   - it is more than 2 s old (no job is between creating and mapping it).
# Other jobs' segments, and anything older than this run, are left alone.
set -u
stamp=${1:?usage: shm-sweep.sh STAMP [DIR]}
dir=${2:-/dev/shm}
[ -d "$dir" ] && [ -f "$stamp" ] || exit 0
dir=$(cd "$dir" && pwd -P) # the form /proc shows
now=$(date +%s)
in_use=$( { cat /proc/[0-9]*/maps 2>/dev/null | awk '{print $6}'
            find /proc/[0-9]*/fd -maxdepth 1 -type l -lname "$dir/*" -printf '%l\n' 2>/dev/null; } |
          grep -F "$dir/" | sort -u)
removed=0
while IFS= read -r -d '' seg; do
  [ $((now - $(stat -c %Y "$seg"))) -gt 2 ] || continue
  grep -qxF "$seg" <<<"$in_use" && continue
  rm -f "$seg" && removed=$((removed + 1))
done < <(find "$dir" -maxdepth 1 -type f -user "$(id -u)" -newer "$stamp" \
           \( -name 'mpich_shm_*' -o -name 'sm_segment.*' -o -regex '.*/[0-9]+:[0-9]+:[0-9]+' \) -print0)
[ "$removed" -eq 0 ] || echo "shm-sweep: removed $removed shared-memory segments left by aborted MPI jobs"
