/* A rank of a communicator as a rank of MPI_COMM_WORLD. Its own file because
 * libpartita-trace.so compiles it in too (src/tools/trace). */
#include "request/world_rank.h"

int pt_world_rank(MPI_Comm comm, int rank)
{
    int inter = 0, out = MPI_UNDEFINED;
    MPI_Group g, world;
    PMPI_Comm_test_inter(comm, &inter);
    if ((inter ? PMPI_Comm_remote_group(comm, &g) : PMPI_Comm_group(comm, &g)) != MPI_SUCCESS)
        return MPI_UNDEFINED;
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    PMPI_Group_translate_ranks(g, 1, &rank, world, &out);
    PMPI_Group_free(&g);
    PMPI_Group_free(&world);
    return out;
}
