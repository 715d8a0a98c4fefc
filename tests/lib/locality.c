/* Locality and progress (2 ranks): init, Start and Pready never wait for the
 * peer, and a receiver that only calls MPI_Parrived completes.
 *  1. the sender does init, Start and every Pready before the receiver even
 *     calls MPI_Precv_init (it tells the receiver afterwards);
 *  2. the receiver does init and Start before the sender calls
 *     MPI_Psend_init, then loops on MPI_Parrived only. */
#include "ptest.h"

#define N 4096
#define PARTS 8

static int check(const double *b, int k)
{
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += b[i] != k + i;
    return wrong;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("locality");
    static double buf[N];
    MPI_Request req;
    int token = 0;
    for (int k = 0; k < 2; k++) {
        int sender_first = k == 0;
        if (rank == 0) {
            for (int i = 0; i < N; i++)
                buf[i] = k + i;
            if (!sender_first)
                MPI_Recv(&token, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            OK(MPI_Psend_init(buf, PARTS, N / PARTS, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
            CHECK_PARTITA(req);
            OK(MPI_Start(&req));
            for (int p = PARTS - 1; p >= 0; p--)
                OK(MPI_Pready(p, req));
            if (sender_first)
                MPI_Send(&token, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            memset(buf, 0, sizeof buf);
            if (sender_first)
                MPI_Recv(&token, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            OK(MPI_Precv_init(buf, PARTS, N / PARTS, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
            OK(MPI_Start(&req));
            if (!sender_first)
                MPI_Send(&token, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
            for (int p = 0; p < PARTS; p++)
                ptest_parrived_loop(req, p);
            CHECK(check(buf, k) == 0, "case %d: wrong data after every partition arrived", k);
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        OK(MPI_Request_free(&req));
    }
    return ptest_finish("locality");
}
