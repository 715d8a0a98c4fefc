/* A round of many small partitions whose marking stalls once, early: under
 * the timer the stalled group is split, and everything after the stall must
 * still move as a few runs, not one message (and one posted receive tested
 * at every progress call) per partition. Run with 2 ranks:
 *   stall [-s SEND_PARTS] [-r RECV_PARTS] [-k MARK_BEFORE_STALL] [-d STALL_US] [-i ROUNDS]
 * Every byte is checked; the timeout of the test is the hang check. */
#include "ptest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("stall");
    int sparts = 150000, rparts = 1000, before = 10, rounds = 1;
    long stall_us = 2000;
    for (int i = 1; i + 1 < argc; i += 2) {
        int v = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "-s"))
            sparts = v;
        else if (!strcmp(argv[i], "-r"))
            rparts = v;
        else if (!strcmp(argv[i], "-k"))
            before = v;
        else if (!strcmp(argv[i], "-d"))
            stall_us = v;
        else if (!strcmp(argv[i], "-i"))
            rounds = v;
        else
            ptest_usage("stall: unknown option");
    }
    if (sparts < 1 || rparts < 1 || sparts % rparts || before < 0 || before > sparts || rounds < 1)
        ptest_usage("stall: need RECV_PARTS dividing SEND_PARTS, 0 <= MARK_BEFORE_STALL <= SEND_PARTS");
    unsigned char *buf = malloc((size_t)sparts);
    MPI_Request req;
    if (rank == 0)
        OK(MPI_Psend_init(buf, sparts, 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    else
        OK(MPI_Precv_init(buf, rparts, sparts / rparts, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    CHECK_PARTITA(req);
    for (int round = 0; round < rounds; round++) {
        if (rank == 0) {
            for (int p = 0; p < sparts; p++)
                buf[p] = (unsigned char)(p * 7 + round);
            OK(MPI_Start(&req));
            for (int p = 0; p < before; p++)
                OK(MPI_Pready(p, req));
            ptest_pause_us(stall_us); /* the marking thread stalls: the timer splits the group */
            for (int p = before; p < sparts; p++)
                OK(MPI_Pready(p, req));
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            int (*runs)(MPI_Request, int *) = (int (*)(MPI_Request, int *))dlsym(RTLD_DEFAULT, "Partita_Request_runs");
            int (*plan)(MPI_Request, int *, const char **) =
                (int (*)(MPI_Request, int *, const char **))dlsym(RTLD_DEFAULT, "Partita_Request_plan");
            int nruns = -1, nmsg = -1;
            if (runs && plan) {
                runs(req, &nruns);
                plan(req, &nmsg, NULL);
            }
            printf("stall: round %d: %d transport messages, %d runs and lone late partitions\n", round, nmsg, nruns);
        } else {
            memset(buf, 0, (size_t)sparts);
            OK(MPI_Start(&req));
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            int bad = 0;
            for (int p = 0; p < sparts; p++)
                bad += buf[p] != (unsigned char)(p * 7 + round);
            CHECK(!bad, "round %d: %d bytes differ", round, bad);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    OK(MPI_Request_free(&req));
    free(buf);
    return ptest_finish("stall");
}
