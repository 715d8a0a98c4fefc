/* The clock offset of this rank against rank 0, with the harness's ping-pong
 * estimate (src/bench/harness/clocksync.c, compiled into this library): rank 0
 * measures each other rank in turn; ranks on rank 0's host share its
 * CLOCK_MONOTONIC (offset 0, shared). */
#include <string.h>
#include <unistd.h>

#include "clocksync.h"
#include "trace.h"

enum { SYNC_ROUNDS = 50, HOST_LEN = 256 };

void ptr_clock_offset(ptr_clock *out)
{
    int rank, size;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    char host[HOST_LEN] = {0}, host0[HOST_LEN] = {0};
    gethostname(host, HOST_LEN - 1);
    memcpy(host0, host, HOST_LEN);
    PMPI_Bcast(host0, HOST_LEN, MPI_CHAR, 0, MPI_COMM_WORLD);
    int same = strcmp(host, host0) == 0;
    *out = (ptr_clock){0, 0, 1};
    pt_clock_offset off;
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            int same_r;
            PMPI_Recv(&same_r, 1, MPI_INT, r, 31002, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            pt_clock_sync(MPI_COMM_WORLD, r, 1, same_r, SYNC_ROUNDS, &off);
        }
        return;
    }
    PMPI_Send(&same, 1, MPI_INT, 0, 31002, MPI_COMM_WORLD);
    pt_clock_sync(MPI_COMM_WORLD, 0, 0, same, SYNC_ROUNDS, &off);
    /* from this side, pt_clock_sync's offset is rank 0's clock minus ours */
    *out = (ptr_clock){off.offset_ns, off.uncert_ns, off.shared};
}
