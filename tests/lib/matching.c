/* Matching and isolation (2 ranks, rank 0 sends, rank 1 receives):
 *  - requests pair in init order per (communicator, peer, tag), whatever the start order;
 *  - different tags pair by tag, different communicators by communicator;
 *  - partita's internal traffic never matches a user receive (a wildcard
 *    MPI_Irecv posted before everything receives only the user's own message);
 *  - MPI_Pready does not wait for the receiver (the receiver first waits in
 *    MPI_Recv for a message the sender sends after its Pready calls). */
#include "ptest.h"

#define N 64

static void fill(double *b, int k, int n)
{
    for (int i = 0; i < n; i++)
        b[i] = k * 1000 + i;
}

static int bad(const double *b, int k, int n)
{
    int wrong = 0;
    for (int i = 0; i < n; i++)
        wrong += b[i] != k * 1000 + i;
    return wrong;
}

/* Three pairs: sender init order 0,1,2 on (comms[k], tags[k]); receiver inits in
 * `rorder`; the sender starts them in the order 2,0,1. */
static void three_pairs(int rank, MPI_Comm comms[3], const int tags[3], const int rorder[3], const char *what)
{
    static double buf[3][N];
    MPI_Request req[3];
    if (rank == 0) {
        for (int k = 0; k < 3; k++) {
            fill(buf[k], k, N);
            OK(MPI_Psend_init(buf[k], 2, N / 2, MPI_DOUBLE, 1, tags[k], comms[k], MPI_INFO_NULL, &req[k]));
            CHECK_PARTITA(req[k]);
        }
        const int sorder[3] = { 2, 0, 1 };
        for (int i = 0; i < 3; i++) {
            OK(MPI_Start(&req[sorder[i]]));
            OK(MPI_Pready_range(0, 1, req[sorder[i]]));
        }
        OK(MPI_Waitall(3, req, MPI_STATUSES_IGNORE));
    } else {
        for (int i = 0; i < 3; i++) {
            int k = rorder[i];
            memset(buf[k], 0, sizeof buf[k]);
            OK(MPI_Precv_init(buf[k], 4, N / 4, MPI_DOUBLE, 0, tags[k], comms[k], MPI_INFO_NULL, &req[k]));
        }
        OK(MPI_Startall(3, req));
        MPI_Status st[3];
        OK(MPI_Waitall(3, req, st));
        for (int k = 0; k < 3; k++) {
            CHECK(bad(buf[k], k, N) == 0, "%s: pair %d got another pair's data", what, k);
            CHECK(st[k].MPI_SOURCE == 0 && st[k].MPI_TAG == tags[k] && st[k].MPI_ERROR == MPI_SUCCESS,
                  "%s: pair %d status source %d tag %d error %d", what, k, st[k].MPI_SOURCE, st[k].MPI_TAG,
                  st[k].MPI_ERROR);
        }
    }
    for (int k = 0; k < 3; k++)
        OK(MPI_Request_free(&req[k]));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("matching");

    /* A wildcard receive posted first must only ever see the user's message. */
    int user_msg = -1;
    MPI_Request wild = MPI_REQUEST_NULL;
    if (rank == 1)
        MPI_Irecv(&user_msg, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &wild);

    MPI_Comm same[3] = { MPI_COMM_WORLD, MPI_COMM_WORLD, MPI_COMM_WORLD };
    const int one_tag[3] = { 5, 5, 5 }, in_order[3] = { 0, 1, 2 }, reversed[3] = { 2, 1, 0 };
    three_pairs(rank, same, one_tag, in_order, "same tag, init order");
    const int tags[3] = { 1, 2, 3 };
    three_pairs(rank, same, tags, reversed, "different tags, reversed init");
    MPI_Comm dups[3];
    for (int k = 0; k < 3; k++)
        MPI_Comm_dup(MPI_COMM_WORLD, &dups[k]);
    three_pairs(rank, dups, one_tag, reversed, "different communicators, reversed init");
    for (int k = 0; k < 3; k++)
        MPI_Comm_free(&dups[k]);

    /* MPI_Pready must not block: the receiver sits in MPI_Recv until the
     * sender's zero-byte message, which follows the Pready calls (on another
     * communicator, away from the wildcard receive). */
    double data[N];
    MPI_Request req;
    MPI_Comm other;
    MPI_Comm_dup(MPI_COMM_WORLD, &other);
    if (rank == 0) {
        fill(data, 9, N);
        OK(MPI_Psend_init(data, 4, N / 4, MPI_DOUBLE, 1, 0, other, MPI_INFO_NULL, &req));
        OK(MPI_Start(&req));
        for (int p = 0; p < 4; p++)
            OK(MPI_Pready(p, req));
        OK(MPI_Send(NULL, 0, MPI_BYTE, 1, 0, other));
        OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        memset(data, 0, sizeof data);
        OK(MPI_Precv_init(data, 4, N / 4, MPI_DOUBLE, 0, 0, other, MPI_INFO_NULL, &req));
        MPI_Status st;
        OK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 0, other, &st));
        OK(MPI_Start(&req));
        OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(bad(data, 9, N) == 0, "data after a non-blocking Pready");
    }
    OK(MPI_Request_free(&req));
    MPI_Comm_free(&other);

    /* Now the user's own message for the wildcard receive. */
    if (rank == 0) {
        int v = 4242;
        OK(MPI_Send(&v, 1, MPI_INT, 1, 77, MPI_COMM_WORLD));
    } else {
        MPI_Status st;
        OK(MPI_Wait(&wild, &st));
        CHECK(user_msg == 4242 && st.MPI_TAG == 77, "wildcard receive got %d with tag %d: internal traffic leaked",
              user_msg, st.MPI_TAG);
    }
    return ptest_finish("matching");
}
