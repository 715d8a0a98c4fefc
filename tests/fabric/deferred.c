/* Messages an MPI_Pready leaves to progress (2 ranks, fabric transport): a
 * message over 64 KiB whose round's credit the sender has not seen yet is
 * queued, not posted, by the MPI_Pready that completes it. It must still go
 * while the sender blocks in a call partita does not see (here a plain
 * MPI_Recv of the receiver's report): the fabric's progress thread posts it.
 * Smaller messages read the completion queue in MPI_Pready; both sizes are
 * checked byte by byte, over several rounds.
 * Usage: partita-test-fabric-deferred */
#include "fabric_round.h"

#define ROUNDS 4

static unsigned char byte_of(size_t i, int round) { return (unsigned char)(i * 13 + (size_t)round); }

static void rounds_of(int rank, size_t bytes, int parts)
{
    unsigned char *buf = malloc(bytes);
    CHECK(buf != NULL, "out of memory for %zu bytes", bytes);
    MPI_Request req;
    int count = (int)(bytes / (size_t)parts);
    if (rank == 0)
        OK(MPI_Psend_init(buf, parts, count, MPI_BYTE, 1, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    else
        OK(MPI_Precv_init(buf, parts, count, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    for (int round = 0; round < ROUNDS; round++) {
        long wrong = -1;
        if (rank == 0) {
            for (size_t i = 0; i < bytes; i++)
                buf[i] = byte_of(i, round);
            OK(MPI_Start(&req));
            for (int p = 0; p < parts; p++)
                OK(MPI_Pready(p, req));
            /* blocked outside partita until the receiver has every byte */
            MPI_Recv(&wrong, 1, MPI_LONG, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            CHECK(wrong == 0, "%zu bytes in %d partitions, round %d: %ld wrong bytes", bytes, parts, round, wrong);
        } else {
            memset(buf, 0, bytes);
            OK(MPI_Start(&req));
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            wrong = 0;
            for (size_t i = 0; i < bytes; i++)
                wrong += buf[i] != byte_of(i, round);
            MPI_Send(&wrong, 1, MPI_LONG, 0, 6, MPI_COMM_WORLD);
        }
    }
    fabric_expect_transport(req);
    OK(MPI_Request_free(&req));
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("fabric-deferred");
    if (argc != 1)
        ptest_usage("usage: partita-test-fabric-deferred");
    rounds_of(rank, (size_t)1 << 20, 1);  /* one 1 MiB write: left to progress */
    rounds_of(rank, (size_t)1 << 20, 16); /* the model's groups of it */
    rounds_of(rank, (size_t)8 << 10, 2);  /* small: posted from MPI_Pready */
    return ptest_finish("fabric-deferred");
}
