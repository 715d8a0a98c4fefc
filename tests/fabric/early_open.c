/* The fabric transport opens its provider's context in MPI_Init, not in the
 * first request that needs it (2 ranks, PARTITA_TRANSPORT=fabric,
 * PARTITA_FABRIC_PROVIDER=shm). Seen from outside: libfabric's shm provider
 * maps a region of its own, /dev/shm/PID:..., when its endpoint is made. It
 * must be mapped right after MPI_Init. If it is not mapped even after a
 * round has gone over the fabric, this libfabric names its regions
 * otherwise and nothing can be seen: the test says so and skips (exit 77).
 * Usage: partita-test-fabric-early-open */
#include <unistd.h>

#include "fabric_round.h"

/* Whether this process maps a file /dev/shm/PID:... of its own pid. */
static int own_region_mapped(void)
{
    char prefix[64], line[1024];
    snprintf(prefix, sizeof prefix, "/dev/shm/%d:", (int)getpid());
    FILE *f = fopen("/proc/self/maps", "r");
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, prefix) != NULL;
    if (f)
        fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("fabric-early-open");
    if (argc != 1)
        ptest_usage("usage: partita-test-fabric-early-open");
    int at_init = own_region_mapped();
    MPI_Request req;
    fabric_pair_round(rank, 3, &req);
    OK(MPI_Request_free(&req));
    int after_round = own_region_mapped(), seen = 0;
    MPI_Allreduce(&after_round, &seen, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!seen) {
        if (rank == 0)
            printf("fabric-early-open: SKIPPED: this libfabric's shm provider maps no /dev/shm/PID:... region "
                   "(nothing to observe)\n");
        MPI_Finalize();
        return 77;
    }
    CHECK(at_init, "rank %d: the shm provider's region was mapped only by the first request, not in MPI_Init", rank);
    return ptest_finish("fabric-early-open");
}
