/* What the fabric tests share: the check that a request went over the
 * fabric transport, and a common first step, one round of a pair request (8
 * partitions of 8 doubles, rank 0 to rank 1) that must have gone over it.
 * The request stays allocated in *req. */
#ifndef PARTITA_TEST_FABRIC_ROUND_H
#define PARTITA_TEST_FABRIC_ROUND_H

#include "../lib/ptest.h"
#include "partita/partita.h"

/* The request went over the fabric transport (a receiver knows it from the
 * set-up message). */
static inline void fabric_expect_transport(MPI_Request req)
{
    const char *name = "";
    OK(Partita_Request_transport(req, &name));
    CHECK(!strcmp(name, "fabric"), "transport %s, expected fabric", name);
}

static inline void fabric_pair_round(int rank, int tag, MPI_Request *req)
{
    static double buf[64];
    ptest_pair_request(rank, buf, 8, 8, MPI_DOUBLE, tag, MPI_INFO_NULL, req);
    OK(MPI_Start(req));
    if (rank == 0)
        OK(MPI_Pready_range(0, 7, *req));
    OK(MPI_Wait(req, MPI_STATUS_IGNORE));
    fabric_expect_transport(*req);
}

#endif
