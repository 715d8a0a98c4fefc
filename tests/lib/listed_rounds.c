/* A receive that may be split (timer policy) is listed, for its round, among
 * the receives that every partita call progresses in passing: its runs must
 * be received while its application is elsewhere. Its own MPI_Parrived,
 * MPI_Test and MPI_Wait leave it out of that pass (they progress it right
 * after) and take it off the list when its round completes; each round's
 * MPI_Start lists it again. Listing once took an entry from the heap, and a
 * completion that did not unlist it grew the list (and the heap, and every
 * later call's pass over it) by one entry a round. The links now live in
 * the request, so listing allocates nothing: a program that keeps one
 * request for many rounds must not see the heap grow by anything a round
 * leaves behind.
 * 2 ranks, no progress thread (it would clear the list itself); rank 0 marks
 * PARTS partitions back to back, rank 1 completes each round by polling
 * MPI_Parrived over every partition and then MPI_Wait (argument `wait`) or by
 * MPI_Test alone (`test`). After WARM rounds the receiver notes its heap in
 * use (mallinfo2), runs ROUNDS more and checks it grew by less than GROWTH
 * bytes (16 bytes a round would be 320,000); every byte
 * of every round is checked.
 * Usage: partita-test-listed_rounds wait|test */
#include <malloc.h>

#include "ptest.h"

#define PARTS 4
#define PER 256
#define WARM 500
#define ROUNDS 20000
#define GROWTH (64 * 1024)

static int value(int round, int i) { return round * 7919 + i; }

static void send_round(MPI_Request req, int *buf, int round)
{
    for (int i = 0; i < PARTS * PER; i++)
        buf[i] = value(round, i);
    OK(MPI_Start(&req));
    OK(MPI_Pready_range(0, PARTS - 1, req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
}

/* Returns the number of wrong values. */
static int receive_round(MPI_Request req, int *buf, int round, int by_test)
{
    OK(MPI_Start(&req));
    if (by_test) {
        for (int flag = 0; !flag;)
            OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
    } else {
        for (int left = PARTS; left;) {
            left = PARTS;
            for (int p = 0; p < PARTS; p++) {
                int flag = 0;
                OK(MPI_Parrived(req, p, &flag));
                left -= flag;
            }
        }
        OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    int wrong = 0;
    for (int i = 0; i < PARTS * PER; i++)
        wrong += buf[i] != value(round, i);
    return wrong;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("listed_rounds");
    int by_test = argc == 2 && !strcmp(argv[1], "test");
    if (argc != 2 || !(by_test || !strcmp(argv[1], "wait")))
        ptest_usage("usage: partita-test-listed_rounds wait|test");
    static int buf[PARTS * PER];
    MPI_Request req;
    ptest_pair_request(rank, buf, PARTS, PER, MPI_INT, 0, MPI_INFO_NULL, &req);
    long wrong = 0;
    size_t before = 0;
    for (int round = 0; round < WARM + ROUNDS; round++) {
        if (round == WARM)
            before = mallinfo2().uordblks;
        if (rank == 0)
            send_round(req, buf, round);
        else
            wrong += receive_round(req, buf, round, by_test);
    }
    if (rank == 1) {
        size_t after = mallinfo2().uordblks;
        long grew = (long)after - (long)before;
        printf("receiver heap in use: %zu bytes after %d rounds, %zu after %d more (%+ld)\n", before, WARM, after,
               ROUNDS, grew);
        CHECK(grew < GROWTH, "the heap grew by %ld bytes over %d rounds of one request (at most %d)", grew, ROUNDS,
              GROWTH);
        CHECK(wrong == 0, "%ld wrong values", wrong);
    }
    OK(MPI_Request_free(&req));
    return ptest_finish("listed_rounds");
}
