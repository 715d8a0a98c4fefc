/* Late partitions of a split group that arrive out of order (2 ranks, the
 * timer with delta 0). The sender marks the second half of 64 partitions,
 * drives the timer with MPI_Test until the receiver has seen that half (the
 * group is split), then marks partitions 31 down to 1, each sent alone, and
 * holds partition 0 back until the receiver says it has seen all of them.
 * The receiver keeps one receive per late partition in the order 0..31 and
 * tests them from the first pending one on: partition 0 never completes
 * before the go-ahead, so every other one must be found past it
 * (recv_runs.c, test_late's window). A receiver that only looked in order
 * would wait for partition 1 forever: the test's timeout. Three rounds, so
 * that each starts with the last round's receives gone; every byte is checked. */
#include "ptest.h"

#define PARTS 64
#define COUNT 4 /* ints per partition */
#define TAG_SEEN_EARLY 97
#define TAG_SEEN_LATE 98

static void fill(int *buf, int round)
{
    for (int i = 0; i < PARTS * COUNT; i++)
        buf[i] = round * 100000 + i;
}

static void sender_round(MPI_Request req, int round)
{
    int go = 0, flag = 0;
    MPI_Request seen;
    OK(MPI_Start(&req));
    for (int p = PARTS / 2; p < PARTS; p++)
        OK(MPI_Pready(p, req));
    OK(MPI_Irecv(&go, 1, MPI_INT, 1, TAG_SEEN_EARLY, MPI_COMM_WORLD, &seen));
    for (int done = 0; !done;) {
        OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "round %d: the send completed with partition 0 unmarked", round);
        OK(MPI_Test(&seen, &done, MPI_STATUS_IGNORE));
    }
    for (int p = PARTS / 2 - 1; p >= 1; p--)
        OK(MPI_Pready(p, req));
    OK(MPI_Recv(&go, 1, MPI_INT, 1, TAG_SEEN_LATE, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    OK(MPI_Pready(0, req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
}

static void receiver_round(MPI_Request req, const int *buf, int round)
{
    int go = 1, flag = 0;
    OK(MPI_Start(&req));
    for (int p = PARTS / 2; p < PARTS; p++)
        ptest_parrived_loop(req, p);
    OK(MPI_Send(&go, 1, MPI_INT, 0, TAG_SEEN_EARLY, MPI_COMM_WORLD));
    for (int p = 1; p < PARTS / 2; p++)
        ptest_parrived_loop(req, p);
    OK(MPI_Parrived(req, 0, &flag));
    CHECK(!flag, "round %d: partition 0 reported arrived before it was marked", round);
    OK(MPI_Send(&go, 1, MPI_INT, 0, TAG_SEEN_LATE, MPI_COMM_WORLD));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < PARTS * COUNT; i++)
        if (buf[i] != round * 100000 + i) {
            CHECK(0, "round %d: element %d is %d, not %d", round, i, buf[i], round * 100000 + i);
            break;
        }
}

/* Timer with delta 0, whatever PARTITA_POLICY says: every stalled group splits. */
static MPI_Request timer_request(int rank, int *buf)
{
    MPI_Info info;
    MPI_Request req;
    MPI_Info_create(&info);
    MPI_Info_set(info, "partita_policy", "timer");
    MPI_Info_set(info, "partita_delta_us", "0");
    ptest_pair_request(rank, buf, PARTS, COUNT, MPI_INT, 5, info, &req);
    MPI_Info_free(&info);
    return req;
}

int main(int argc, char **argv)
{
    static int buf[PARTS * COUNT];
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("late_order");
    MPI_Request req = timer_request(rank, buf);
    for (int round = 1; round <= 3; round++) {
        if (rank == 0) {
            fill(buf, round);
            sender_round(req, round);
        } else {
            memset(buf, 0, sizeof buf);
            receiver_round(req, buf, round);
        }
    }
    OK(MPI_Request_free(&req));
    return ptest_finish("late_order");
}
