/* The fabric tests' common first step: one round of a pair request (8
 * partitions of 8 doubles, rank 0 to rank 1) that must have gone over the
 * fabric transport. The request stays allocated in *req. */
#ifndef PARTITA_TEST_FABRIC_ROUND_H
#define PARTITA_TEST_FABRIC_ROUND_H

#include "../lib/ptest.h"
#include "partita/partita.h"

static inline void fabric_pair_round(int rank, int tag, MPI_Request *req)
{
    static double buf[64];
    ptest_pair_request(rank, buf, 8, 8, MPI_DOUBLE, tag, MPI_INFO_NULL, req);
    OK(MPI_Start(req));
    if (rank == 0)
        OK(MPI_Pready_range(0, 7, *req));
    OK(MPI_Wait(req, MPI_STATUS_IGNORE));
    const char *name = "";
    OK(Partita_Request_transport(*req, &name));
    CHECK(!strcmp(name, "fabric"), "transport %s, expected fabric", name);
}

#endif
