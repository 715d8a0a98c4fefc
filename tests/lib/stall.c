/* A round of many small partitions whose marking stalls once, early: under
 * the timer the stalled group is split, and everything after the stall must
 * still move as a few runs, not one message (and one posted receive tested
 * at every progress call) per partition. Run with 2 ranks:
 *   stall [-s SEND_PARTS] [-r RECV_PARTS] [-k MARK_BEFORE_STALL] [-d STALL_US] [-i ROUNDS]
 *         [-b BYTES_PER_SEND_PART] [-o 1] [-a AT_LEAST] [-z AT_MOST] [-c FROM_ROUND] [-w WHY_SAYS]
 * -o 1 marks the even partitions before the stall and the odd ones after it
 * (a laggard's partitions scattered) instead of the first MARK_BEFORE_STALL;
 * -a / -z check the sender's runs and lone partitions (Partita_Request_runs)
 * in every round (from round FROM_ROUND on with -c); -w checks that the sender's Partita_Request_why contains
 * WHY_SAYS. Every byte is checked; the timeout of the test is the hang
 * check. */
#include "ptest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("stall");
    int sparts = 150000, rparts = 1000, before = 10, rounds = 1, bytes = 1, odd_last = 0, at_least = -1,
        at_most = -1, stall_us = 2000, check_from = 0;
    const char *why_says = NULL;
    const ptest_int_option ints[] = {{"-s", &sparts}, {"-r", &rparts},   {"-k", &before},
                                     {"-d", &stall_us}, {"-i", &rounds},  {"-b", &bytes},
                                     {"-o", &odd_last}, {"-a", &at_least}, {"-z", &at_most},
                                     {"-c", &check_from}};
    const ptest_text_option texts[] = {{"-w", &why_says}};
    ptest_options(argc, argv, ints, sizeof ints / sizeof ints[0], texts, 1, "stall");
    if (sparts < 1 || rparts < 1 || sparts % rparts || before < 0 || before > sparts || rounds < 1 || bytes < 1 ||
        check_from < 0 || (size_t)sparts * (size_t)bytes > (1u << 30))
        ptest_usage("stall: need RECV_PARTS dividing SEND_PARTS, 0 <= MARK_BEFORE_STALL <= SEND_PARTS, "
                    "BYTES_PER_SEND_PART >= 1 and at most 1 GiB in all, FROM_ROUND >= 0");
    size_t total = (size_t)sparts * (size_t)bytes;
    unsigned char *buf = malloc(total);
    CHECK(buf != NULL, "out of memory for %zu bytes", total);
    MPI_Request req;
    if (rank == 0)
        OK(MPI_Psend_init(buf, sparts, bytes, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    else
        OK(MPI_Precv_init(buf, rparts, (MPI_Count)(total / (size_t)rparts), MPI_BYTE, 0, 3, MPI_COMM_WORLD,
                          MPI_INFO_NULL, &req));
    CHECK_PARTITA(req);
    for (int round = 0; round < rounds; round++) {
        if (rank == 0) {
            for (size_t i = 0; i < total; i++)
                buf[i] = (unsigned char)(i * 7 + (size_t)round);
            OK(MPI_Start(&req));
            for (int p = 0; p < (odd_last ? sparts : before); p += odd_last ? 2 : 1)
                OK(MPI_Pready(p, req));
            ptest_pause_us(stall_us); /* the marking thread stalls: the timer splits the group */
            for (int p = odd_last ? 1 : before; p < sparts; p += odd_last ? 2 : 1)
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
            char why[2048] = "";
            int (*why_of)(MPI_Request, char *, int) =
                (int (*)(MPI_Request, char *, int))dlsym(RTLD_DEFAULT, "Partita_Request_why");
            if (why_says && why_of)
                why_of(req, why, sizeof why);
            CHECK(!why_says || strstr(why, why_says), "round %d: the why text does not say '%s': %s", round,
                  why_says, why);
            CHECK(at_least < 0 || round < check_from || nruns >= at_least, "round %d: %d runs and lone partitions, expected at least %d",
                  round, nruns, at_least);
            CHECK(at_most < 0 || round < check_from || (nruns >= 0 && nruns <= at_most),
                  "round %d: %d runs and lone partitions, expected at most %d", round, nruns, at_most);
        } else {
            memset(buf, 0, total);
            OK(MPI_Start(&req));
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            int bad = 0;
            for (size_t i = 0; i < total; i++)
                bad += buf[i] != (unsigned char)(i * 7 + (size_t)round);
            CHECK(!bad, "round %d: %d bytes differ", round, bad);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    OK(MPI_Request_free(&req));
    free(buf);
    return ptest_finish("stall");
}
