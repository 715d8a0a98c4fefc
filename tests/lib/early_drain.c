/* Partitions sent early arrive while the marking pauses. A laggard holds
 * back every fourth partition; the others are marked back to back, then the
 * marking thread sleeps. After the first round the timer sends each
 * partition alone at its mark (its split announced ahead), in eager pieces
 * past MPI's eager limit, and MPICH's shared-memory path holds back what
 * does not fit the receiver's queue until the sender calls MPI again: with
 * no drain by partita's progress thread, a third to a half of the early
 * partitions came only after the laggard (transport/mpi/send.c:
 * pt_mpi_send_drain). Under `none` with small partitions (eager, one
 * message each) the receiver's own polls were the fault: MPI_Parrived's
 * sweeps tested only the late first message, and every early partition was
 * reported after the pause though its data was in (transport/mpi/recv.c:
 * test_window). The ranks share CLOCK_MONOTONIC (one node): the
 * receiver stamps each partition's first MPI_Parrived == true, the sender
 * sends the time its pause ended after the round. Run with 2 ranks:
 *   early_drain [-s PARTS] [-b BYTES_PER_PART] [-d PAUSE_US] [-i ROUNDS] [-o 1 | -w 1]
 * Every byte is checked; rounds after the first must have every early
 * partition in before the pause ended. -o 1 and -w 1 are for 4 partitions
 * over the fabric, one transport message, the timer: with -o 1 the early
 * partitions the timer flushes when the marking stalls must go as a write
 * each (large partitions to a peer that takes a stall's runs in pieces:
 * transport/fabric/fabric_send.c, PT_FAB_EARLY_WRITE), with -w 1 as one
 * run in one write. The receiver prints in how many of its sweeps over the
 * partitions the early ones were first reported: as one write all in one,
 * when its last byte was in. */
#include <stdlib.h>

#include "partita/partita.h"
#include "ptest.h"

static int late(int p) { return p % 4 == 0; }

static void send_round(MPI_Request req, unsigned char *buf, size_t part_bytes, int parts, int round, long pause_us)
{
    for (size_t i = 0; i < part_bytes * (size_t)parts; i++)
        buf[i] = (unsigned char)(i * 13 + (size_t)round);
    OK(MPI_Start(&req));
    for (int p = 0; p < parts; p++)
        if (!late(p))
            OK(MPI_Pready(p, req));
    ptest_pause_us(pause_us);
    double pause_end = ptest_now_s();
    for (int p = 0; p < parts; p++)
        if (late(p))
            OK(MPI_Pready(p, req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_Send(&pause_end, 1, MPI_DOUBLE, 1, 9, MPI_COMM_WORLD);
}

/* Early partitions that came after the sender's pause ended; *sweeps: in
 * how many of the receiver's sweeps over the partitions the early ones were
 * first reported (1: all at once). */
static int recv_round(MPI_Request req, unsigned char *buf, size_t part_bytes, int parts, int round, double *in,
                      int *sweeps)
{
    OK(MPI_Start(&req));
    int last_sweep = -1;
    *sweeps = 0;
    for (int left = parts, sweep = 0; left > 0; sweep++)
        for (int p = 0; p < parts; p++) {
            int flag = 0;
            if (in[p] == 0 && MPI_Parrived(req, p, &flag) == MPI_SUCCESS && flag) {
                in[p] = ptest_now_s();
                left--;
                if (!late(p) && sweep != last_sweep) {
                    last_sweep = sweep;
                    ++*sweeps;
                }
            }
        }
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    size_t bad = 0;
    for (size_t i = 0; i < part_bytes * (size_t)parts; i++)
        bad += buf[i] != (unsigned char)(i * 13 + (size_t)round);
    CHECK(bad == 0, "round %d: %zu bytes differ", round, bad);
    double pause_end;
    MPI_Recv(&pause_end, 1, MPI_DOUBLE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int after = 0;
    for (int p = 0; p < parts; p++) {
        after += !late(p) && in[p] > pause_end;
        in[p] = 0;
    }
    printf("early_drain: round %d: %d early partitions came after the pause\n", round, after);
    return after;
}

/* The sender's fabric writes in the round just completed, from its why text
 * (transport/fabric/fabric_send.c: pt_fab_describe); -1 when it has none. */
static int writes_of(MPI_Request req)
{
    char why[2048];
    OK(Partita_Request_why(req, why, sizeof why));
    return (int)ptest_number_before(why, " writes in the current or last round");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("early_drain");
    int parts = 64, bytes = 16384, pause_us = 50000, rounds = 4, in_pieces = 0, whole = 0;
    const ptest_int_option ints[] = {{"-s", &parts}, {"-b", &bytes}, {"-d", &pause_us}, {"-i", &rounds},
                                     {"-o", &in_pieces}, {"-w", &whole}};
    ptest_options(argc, argv, ints, sizeof ints / sizeof ints[0], NULL, 0, "early_drain");
    if (parts < 4 || bytes < 1 || pause_us < 0 || rounds < 2 || (size_t)parts * (size_t)bytes > (1u << 30))
        ptest_usage("early_drain: need PARTS >= 4, BYTES_PER_PART >= 1, PAUSE_US >= 0, ROUNDS >= 2, at most 1 GiB");
    unsigned char *buf = malloc((size_t)parts * (size_t)bytes);
    double *in = calloc((size_t)parts, sizeof *in);
    CHECK(buf && in, "out of memory");
    MPI_Request req;
    ptest_pair_request(rank, buf, parts, bytes, MPI_BYTE, 3, MPI_INFO_NULL, &req);
    int rounds_whole = 0;
    for (int round = 0; round < rounds; round++) {
        if (rank == 0) {
            send_round(req, buf, (size_t)bytes, parts, round, pause_us);
            int writes = 0;
            if (in_pieces || whole) {
                writes = writes_of(req);
                printf("early_drain: round %d: %d fabric writes\n", round, writes);
            }
            /* -o 1: each early partition its own write (one run of three
             * whole would be 1), the late one too, whatever splits the
             * early ones' marks: every round after the first */
            CHECK(round == 0 || !in_pieces || writes == parts, "round %d: %d fabric writes, not one per partition (%d)",
                  round, writes, parts);
            rounds_whole += round > 0 && writes == 2;
        } else {
            int sweeps = 0, after = recv_round(req, buf, (size_t)bytes, parts, round, in, &sweeps);
            /* (-o, -w: about the writes; the early partitions' timing is
             * shown, not checked, there) */
            CHECK(round == 0 || after == 0 || in_pieces || whole, "round %d: %d early partitions came only after the "
                  "pause", round, after);
            printf("early_drain: round %d: the early partitions first reported in %d sweeps\n", round, sweeps);
        }
    }
    /* -w 1: the early run one write, the late partition another, in some
     * round after the first (a marking thread preempted between two marks
     * for longer than delta splits the run in another) */
    CHECK(rank == 1 || !whole || rounds_whole > 0, "no round after the first sent its early run as one write");
    OK(MPI_Request_free(&req));
    free(buf);
    free(in);
    return ptest_finish("early_drain");
}
