/* A stand-in for MPI libraries whose MPI_Abort returns (seen with MPICH
 * under some launchers): preloaded, its PMPI_Abort only says so and
 * returns, so a test can check that partita stops the program itself. It
 * needs only mpi.h, not the MPI library. */
#include <mpi.h>
#include <stdio.h>

int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    (void)comm;
    fprintf(stderr, "abort-returns: MPI_Abort(%d) returned\n", errorcode);
    return MPI_SUCCESS;
}
