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
 *   early_drain [-s PARTS] [-b BYTES_PER_PART] [-d PAUSE_US] [-i ROUNDS] [-o 1 | -w 1 | -f 1]
 * Every byte is checked; rounds after the first must have every early
 * partition in before the pause ended. With -f 1 (first-hand), in each
 * round after the first the sender tells the receiver when its early
 * partitions are marked; the receiver lets MPI progress (MPI_Iprobe, which
 * touches no partitioned request), then asks about each early partition,
 * last to first, so that every ask but a sweep's first tests MPI: each must
 * be reported by its second ask, as MPI_Parrived looks first-hand at what
 * carries its partition. Under the timer, a split group's receives posted
 * ahead were found only by the in-order cursor (waiting at the late
 * partition 0) and a rotating window of 8: 10 of 48 early partitions of 16
 * KiB were not reported so, in every round (transport/mpi/recv_runs.c:
 * test_focus). -o 1 and -w 1 are for 4 partitions
 * over the fabric, one transport message, the timer: with -o 1 the early
 * partitions the timer flushes when the marking stalls must go as a write
 * each (large partitions to a peer that takes a stall's runs in pieces:
 * transport/fabric/fabric_send.c, PT_FAB_EARLY_WRITE), with -w 1 as one
 * run in one write; in the rounds after the first the group is announced
 * ahead, each partition alone (flush/timer_flush.c, ahead_pays). The receiver prints in how many of its sweeps over the
 * partitions the early ones were first reported: as one write all in one,
 * when its last byte was in. */
#include <stdlib.h>

#include "partita/partita.h"
#include "ptest.h"

static int late(int p) { return p % 4 == 0; }

#define MARKED_TAG 8

static void send_round(MPI_Request req, unsigned char *buf, size_t part_bytes, int parts, int round, long pause_us,
                       int first_hand)
{
    for (size_t i = 0; i < part_bytes * (size_t)parts; i++)
        buf[i] = (unsigned char)(i * 13 + (size_t)round);
    OK(MPI_Start(&req));
    for (int p = 0; p < parts; p++)
        if (!late(p))
            OK(MPI_Pready(p, req));
    if (first_hand && round > 0)
        MPI_Send(NULL, 0, MPI_BYTE, 1, MARKED_TAG, MPI_COMM_WORLD);
    ptest_pause_us(pause_us);
    double pause_end = ptest_now_s();
    for (int p = 0; p < parts; p++)
        if (late(p))
            OK(MPI_Pready(p, req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_Send(&pause_end, 1, MPI_DOUBLE, 1, 9, MPI_COMM_WORLD);
}

/* -f 1: once the sender's early partitions are marked and MPI has had time
 * and progress calls to move them, each early partition asked about, last
 * to first, twice at most (an ask at or below the last missed partition
 * tests MPI: request/recv.c, miss_should_test). Returns how many were not
 * reported by then; marks in[] those that were. */
static int first_hand_misses(MPI_Request req, int parts, double *in)
{
    MPI_Recv(NULL, 0, MPI_BYTE, 0, MARKED_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ptest_pause_us(50000);
    for (int i = 0, flag; i < 1000; i++)
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    int missed = 0;
    for (int p = parts - 1; p >= 0; p--) {
        int flag = 0;
        if (late(p))
            continue;
        OK(MPI_Parrived(req, p, &flag));
        if (!flag) /* the first ask of a sweep may not test MPI: the one after it does */
            OK(MPI_Parrived(req, p, &flag));
        if (flag)
            in[p] = ptest_now_s();
        missed += !flag;
    }
    return missed;
}

/* Early partitions that came after the sender's pause ended; *sweeps: in
 * how many of the receiver's sweeps over the partitions the early ones were
 * first reported (1: all at once). */
static int recv_round(MPI_Request req, unsigned char *buf, size_t part_bytes, int parts, int round, double *in,
                      int *sweeps, int first_hand)
{
    OK(MPI_Start(&req));
    int last_sweep = -1, left = parts;
    *sweeps = 0;
    if (first_hand && round > 0) {
        int missed = first_hand_misses(req, parts, in), early = parts - (parts + 3) / 4; /* late(p): every fourth */
        printf("early_drain: round %d: %d early partitions not reported when asked\n", round, missed);
        CHECK(missed == 0, "round %d: %d of %d early partitions, in and asked about, were not reported", round,
              missed, early);
        left -= early - missed;
    }
    for (int sweep = 0; left > 0; sweep++)
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
    int parts = 64, bytes = 16384, pause_us = 50000, rounds = 4, in_pieces = 0, whole = 0, first_hand = 0;
    const ptest_int_option ints[] = {{"-s", &parts}, {"-b", &bytes}, {"-d", &pause_us}, {"-i", &rounds},
                                     {"-o", &in_pieces}, {"-w", &whole}, {"-f", &first_hand}};
    ptest_options(argc, argv, ints, sizeof ints / sizeof ints[0], NULL, 0, "early_drain");
    if (parts < 4 || bytes < 1 || pause_us < 0 || rounds < 2 || (size_t)parts * (size_t)bytes > (1u << 30))
        ptest_usage("early_drain: need PARTS >= 4, BYTES_PER_PART >= 1, PAUSE_US >= 0, ROUNDS >= 2, at most 1 GiB");
    if (first_hand && (pause_us < 100000 || in_pieces || whole))
        ptest_usage("early_drain: -f 1 needs PAUSE_US >= 100000 (the receiver waits 50 ms in it) and neither -o nor -w");
    unsigned char *buf = malloc((size_t)parts * (size_t)bytes);
    double *in = calloc((size_t)parts, sizeof *in);
    CHECK(buf && in, "out of memory");
    MPI_Request req;
    ptest_pair_request(rank, buf, parts, bytes, MPI_BYTE, 3, MPI_INFO_NULL, &req);
    int rounds_whole = 0;
    for (int round = 0; round < rounds; round++) {
        if (rank == 0) {
            send_round(req, buf, (size_t)bytes, parts, round, pause_us, first_hand);
            int writes = 0;
            if (in_pieces || whole) {
                writes = writes_of(req);
                printf("early_drain: round %d: %d fabric writes\n", round, writes);
            }
            /* -o 1: each early partition its own write (one run of three
             * whole would be 1), the late one too, whatever splits the
             * early ones' marks. -w 1: after the round whose stall split
             * the group, it is announced ahead: each partition alone at
             * its mark, one write each, in the rounds that follow. */
            CHECK(!(in_pieces || (whole && round > 0)) || writes == parts,
                  "round %d: %d fabric writes, not one per partition (%d)", round, writes, parts);
            rounds_whole += writes == 2;
        } else {
            int sweeps = 0, after = recv_round(req, buf, (size_t)bytes, parts, round, in, &sweeps, first_hand);
            /* (-o, -w: about the writes; the early partitions' timing is
             * shown, not checked, there) */
            CHECK(round == 0 || after == 0 || in_pieces || whole, "round %d: %d early partitions came only after the "
                  "pause", round, after);
            printf("early_drain: round %d: the early partitions first reported in %d sweeps\n", round, sweeps);
        }
    }
    /* -w 1: the early run one write, the late partition another, in the
     * round whose stall split the group (the first) */
    CHECK(rank == 1 || !whole || rounds_whole > 0, "no round sent its early run as one write");
    OK(MPI_Request_free(&req));
    free(buf);
    free(in);
    return ptest_finish("early_drain");
}
