#ifndef PARTITA_WORLD_RANK_H
#define PARTITA_WORLD_RANK_H

#include <mpi.h>

/* Rank in MPI_COMM_WORLD of `rank` in comm (the remote group for an
 * intercommunicator); MPI_UNDEFINED when it has none. */
int pt_world_rank(MPI_Comm comm, int rank);

#endif
