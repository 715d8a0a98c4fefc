/* A program that polls only a fabric request must still make MPI progress
 * (2 ranks, fabric transport): MPI_Test on a partitioned request is an MPI
 * call, and the MPI traffic the peer waits for may be what the fabric request
 * itself waits for.
 *   send: rank 1 posts a native MPI_Irecv of 4 MiB from rank 0, marks its
 *         fabric send request and polls it with MPI_Test. Rank 0 sends the
 *         4 MiB with a blocking MPI_Send (a rendezvous: it needs rank 1's MPI
 *         progress), and only then starts the fabric receive, whose credit
 *         rank 1's send waits for.
 *   recv: the same with the roles of the fabric request swapped: rank 0
 *         starts its fabric receive, posts the native receive and polls the
 *         fabric receive; rank 1 sends the 4 MiB, then starts and marks.
 * The fabric's own progress makes no MPI call: before libpartita nudged MPI
 * from a fabric request's progress, both modes hung at their first round
 * after the warm-up (the fabric request connected, so its set-up no longer
 * tested MPI). A round that is not done in 10 s is reported and the program
 * aborts, so a regression fails rather than hangs.
 * Usage: partita-test-fabric-mpi-progress send|recv */
#include "fabric_round.h"

#define ROUNDS 3
#define BIG ((size_t)4 << 20)
#define PARTS 8
#define PER 4096

/* Poll *req with MPI_Test only, for at most 10 s. */
static void poll_only(MPI_Request *req, const char *mode, int round)
{
    double t0 = ptest_now_s();
    for (int flag = 0; !flag;) {
        OK(MPI_Test(req, &flag, MPI_STATUS_IGNORE));
        if (!flag && ptest_now_s() - t0 > 10) {
            fprintf(stderr, "fabric-mpi-progress %s: round %d: MPI_Test on the fabric request made no progress in "
                    "10 s (the peer waits in MPI_Send for this rank's MPI progress)\n", mode, round);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("fabric-mpi-progress");
    if (argc != 2 || (strcmp(argv[1], "send") && strcmp(argv[1], "recv")))
        ptest_usage("usage: partita-test-fabric-mpi-progress send|recv");
    int fabric_sender = !strcmp(argv[1], "send") ? 1 : 0; /* the rank whose fabric request is polled */
    int poller = fabric_sender ? 1 : 0;
    char *big = malloc(BIG);
    static unsigned char buf[PARTS * PER];
    CHECK(big != NULL, "out of memory for %zu bytes", BIG);
    MPI_Request req;
    if (rank == fabric_sender)
        OK(MPI_Psend_init(buf, PARTS, PER, MPI_BYTE, 1 - rank, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    else
        OK(MPI_Precv_init(buf, PARTS, PER, MPI_BYTE, 1 - rank, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    for (int round = -1; round < ROUNDS; round++) { /* round -1: the warm-up that connects the request */
        memset(buf, rank == fabric_sender ? round + 2 : 0, sizeof buf);
        if (round < 0) {
            OK(MPI_Start(&req));
            if (rank == fabric_sender)
                OK(MPI_Pready_range(0, PARTS - 1, req));
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            continue;
        }
        if (rank == poller) {
            MPI_Request native;
            MPI_Irecv(big, (int)BIG, MPI_BYTE, 1 - rank, 7, MPI_COMM_WORLD, &native);
            OK(MPI_Start(&req));
            if (rank == fabric_sender)
                OK(MPI_Pready_range(0, PARTS - 1, req));
            poll_only(&req, argv[1], round);
            OK(MPI_Wait(&native, MPI_STATUS_IGNORE));
        } else {
            memset(big, round, BIG);
            MPI_Send(big, (int)BIG, MPI_BYTE, 1 - rank, 7, MPI_COMM_WORLD);
            OK(MPI_Start(&req));
            if (rank == fabric_sender)
                OK(MPI_Pready_range(0, PARTS - 1, req));
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        if (rank != fabric_sender) {
            long wrong = 0;
            for (size_t i = 0; i < sizeof buf; i++)
                wrong += buf[i] != (unsigned char)(round + 2);
            CHECK(wrong == 0, "round %d: %ld wrong bytes in the fabric request's buffer", round, wrong);
        }
        if (rank == poller) {
            long wrong = 0;
            for (size_t i = 0; i < BIG; i++)
                wrong += big[i] != (char)round;
            CHECK(wrong == 0, "round %d: %ld wrong bytes in the native message", round, wrong);
        }
    }
    fabric_expect_transport(req);
    OK(MPI_Request_free(&req));
    free(big);
    return ptest_finish("fabric-mpi-progress");
}
