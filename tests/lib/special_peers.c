/* MPI_PROC_NULL peers and self-sends (any number of ranks, each on its own):
 *  - partitioned requests to and from MPI_PROC_NULL complete at once; the
 *    receive status says source MPI_PROC_NULL, count 0;
 *  - a rank sends to itself on MPI_COMM_WORLD and on MPI_COMM_SELF. */
#include "ptest.h"

#define PARTS 5
#define PER 3

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double out[PARTS * PER], in[PARTS * PER];
    MPI_Request s, r;
    MPI_Status st;
    int flag;

    OK(MPI_Psend_init(out, PARTS, PER, MPI_DOUBLE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    OK(MPI_Precv_init(in, PARTS, PER, MPI_DOUBLE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    CHECK_PARTITA(s);
    for (int round = 0; round < 3; round++) {
        OK(MPI_Start(&r));
        OK(MPI_Start(&s));
        OK(MPI_Parrived(r, PARTS - 1, &flag));
        CHECK(flag, "Parrived from MPI_PROC_NULL must be true");
        OK(MPI_Pready_range(0, PARTS - 1, s));
        OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        OK(MPI_Wait(&r, &st));
        int count = -1;
        MPI_Get_count(&st, MPI_DOUBLE, &count);
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL && count == 0, "PROC_NULL status: source %d count %d", st.MPI_SOURCE,
              count);
    }
    OK(MPI_Request_free(&s));
    OK(MPI_Request_free(&r));

    MPI_Comm comms[2] = { MPI_COMM_WORLD, MPI_COMM_SELF };
    for (int c = 0; c < 2; c++) {
        int me;
        MPI_Comm_rank(comms[c], &me);
        OK(MPI_Precv_init(in, PARTS, PER, MPI_DOUBLE, me, 2, comms[c], MPI_INFO_NULL, &r));
        OK(MPI_Psend_init(out, PARTS, PER, MPI_DOUBLE, me, 2, comms[c], MPI_INFO_NULL, &s));
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < PARTS * PER; i++)
                out[i] = 10 * round + i + c;
            memset(in, 0, sizeof in);
            OK(MPI_Start(&r));
            OK(MPI_Start(&s));
            for (int p = PARTS - 1; p >= 0; p--)
                OK(MPI_Pready(p, s));
            for (int p = 0; p < PARTS; p++) {
                ptest_parrived_loop(r, p);
                CHECK(in[p * PER] == 10 * round + p * PER + c, "self-send comm %d partition %d", c, p);
            }
            MPI_Request both[2] = { s, r };
            OK(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
        }
        OK(MPI_Request_free(&s));
        OK(MPI_Request_free(&r));
    }
    return ptest_finish("special_peers");
}
