/* Writes that go in pieces (2 ranks, fabric transport; fabric_wire.h): a
 * write a little over the provider's inject size, up to a few times it, goes
 * as injected pieces, and the receiver counts them before it reports the
 * write. Partition sizes at the pieces' edges, in every round checked byte by
 * byte as soon as MPI_Parrived reports the partition (a write reported at its
 * first piece shows the rest of the round before) and again after MPI_Wait;
 * the sender marks the second half late, so the timer policy sends runs
 * (and rounds in which the sender polls through the pause while none of its
 * runs went in pieces: timer_run_pending).
 * Then rounds of 1024 partitions of 12 KiB marked back to back: under none,
 * 1024 writes of three pieces each, so the provider's inject queue fills and
 * writes are resumed midway. The sender's Partita_Request_why counts the
 * writes that went in pieces: a message in at most 4 (none's messages of a
 * partition too), a run of the timer's late partitions in up to 32, but the
 * round's last write as a message when the receiver is done with the writes
 * before it: in 2 partitions of 24 or 32 KiB, the second 2 ms late, each
 * round's writes in pieces are its runs less one.
 * Usage: partita-test-fabric-pieces */
#include "fabric_round.h"

#define ROUNDS 3

static unsigned char byte_of(size_t i, int round) { return (unsigned char)(i * 7 + (size_t)round * 31 + 1); }

/* The bytes of partition p that are not round's: 0 when all are. */
static long wrong_in(const unsigned char *buf, size_t part, int p, int round)
{
    long wrong = 0;
    for (size_t i = (size_t)p * part; i < (size_t)(p + 1) * part; i++)
        wrong += buf[i] != byte_of(i, round);
    return wrong;
}

/* The sender's piece size and its writes in pieces so far, from its why
 * text; piece 0 when every write goes whole. */
static void pieces_of(MPI_Request req, size_t *piece, long *pieced)
{
    char why[2048];
    OK(Partita_Request_why(req, why, sizeof why));
    *piece = 0, *pieced = 0;
    if (strstr(why, "every write goes whole"))
        return;
    const char *a = strstr(why, "a write over "), *b = strstr(why, " writes of this layout went in pieces");
    CHECK(a && b, "no pieces in the why text: %s", why);
    if (!a || !b) {
        *pieced = -1; /* matches no expectation */
        return;
    }
    *piece = (size_t)strtoull(a + strlen("a write over "), NULL, 10);
    *pieced = ptest_number_before(why, " writes of this layout went in pieces");
}

/* Whether a write of partitions of part bytes goes in pieces: it needs more
 * than one, and at most `most` (4 for a message, 32 for a run). */
static int in_pieces(size_t piece, size_t part, size_t most) { return piece && part > piece && part <= most * piece; }

/* Whether the timer's late partitions of part bytes, each a run of its own,
 * go in pieces: up to 32, unless the sender copies runs that long on both
 * sides instead (split copies over shm, from the size its why text names). */
static int late_run_in_pieces(MPI_Request req, size_t piece, size_t part)
{
    char why[2048];
    OK(Partita_Request_why(req, why, sizeof why));
    const char *a = strstr(why, "a timer run of ");
    size_t split = a ? (size_t)strtoull(a + strlen("a timer run of "), NULL, 10) : 0;
    return in_pieces(piece, part, 32) && !(split && part >= split);
}

/* What the sender's writes in pieces must be after its rounds. */
static void expect_pieced(MPI_Request req, size_t part, int parts, long late_us, int rounds)
{
    size_t piece;
    long pieced;
    pieces_of(req, &piece, &pieced);
    int fits = in_pieces(piece, part, 4);
    if (parts == 1) /* one message */
        CHECK(pieced == (fits ? rounds : 0), "1 partition of %zu bytes, pieces of %zu: %ld writes in pieces, not %d",
              part, piece, pieced, fits ? rounds : 0);
    else if (ptest_policy_is("none")) /* a message per partition */
        CHECK(pieced == (fits ? (long)parts * rounds : 0),
              "none, %d partitions of %zu bytes, pieces of %zu: %ld writes in pieces, not %ld", parts, part, piece,
              pieced, fits ? (long)parts * rounds : 0L);
    else if (ptest_policy_is("timer") && late_us && late_run_in_pieces(req, piece, part))
        CHECK(pieced > 0, "timer, %d partitions of %zu bytes, half late, %d rounds: no late run went in pieces of %zu",
              parts, part, rounds, piece);
}

/* The sender's pause of late_us: asleep, or polling its request with
 * MPI_Test, whose checks split a stalled group in the calling thread. */
static void pause_us(MPI_Request *req, long late_us, int polling)
{
    if (!polling) {
        ptest_pause_us(late_us);
        return;
    }
    int flag = 0;
    for (double end = ptest_now_s() + late_us * 1e-6; ptest_now_s() < end;)
        OK(MPI_Test(req, &flag, MPI_STATUS_IGNORE)); /* never complete: half of it is not marked yet */
}

/* One round: the sender marks the partitions in order (the second half
 * late_us late), the receiver checks each partition as MPI_Parrived reports
 * it and all of them again after MPI_Wait. */
static void one_round(int rank, MPI_Request *req, unsigned char *buf, size_t part, int parts, long late_us,
                      int polling, int round)
{
    size_t bytes = part * (size_t)parts;
    if (rank == 0) {
        for (size_t i = 0; i < bytes; i++)
            buf[i] = byte_of(i, round);
        OK(MPI_Start(req));
        for (int p = 0; p < parts; p++) {
            if (late_us && p == parts / 2)
                pause_us(req, late_us, polling);
            OK(MPI_Pready(p, *req));
        }
        OK(MPI_Wait(req, MPI_STATUS_IGNORE));
        return;
    }
    OK(MPI_Start(req));
    long early = 0;
    for (int p = 0; p < parts; p++) {
        int flag = 0;
        while (!flag)
            OK(MPI_Parrived(*req, p, &flag));
        early += wrong_in(buf, part, p, round);
    }
    OK(MPI_Wait(req, MPI_STATUS_IGNORE));
    long wrong = 0;
    for (int p = 0; p < parts; p++)
        wrong += wrong_in(buf, part, p, round);
    CHECK(early == 0, "%d partitions of %zu bytes, round %d: %ld bytes not in yet when MPI_Parrived said so", parts,
          part, round, early);
    CHECK(wrong == 0, "%d partitions of %zu bytes, round %d: %ld wrong bytes", parts, part, round, wrong);
}

/* Whether the timer has yet to send a late run in pieces (rank 0 decides,
 * both ranks learn it). The timer splits a stalled group when its progress
 * thread looks at it twice within the pause; with the 2 cores shared with
 * other tests that thread got no core in time in every round of a size (in
 * CI at 2 ms; under 5 busy loops, in 9 rounds, 6 of them 20 ms late). Such a
 * case gets more rounds in which the sender polls through the pause. */
static int timer_run_pending(int rank, MPI_Request req, size_t part)
{
    int pending = 0;
    if (rank == 0) {
        size_t piece;
        long pieced;
        pieces_of(req, &piece, &pieced);
        pending = ptest_policy_is("timer") && late_run_in_pieces(req, piece, part) && pieced == 0;
    }
    OK(MPI_Bcast(&pending, 1, MPI_INT, 0, MPI_COMM_WORLD));
    return pending;
}

#define POLLED_ROUNDS 4 /* at most, after ROUNDS */
#define POLLED_LATE_US 2000

static void rounds_of(int rank, size_t part, int parts, long late_us)
{
    size_t bytes = part * (size_t)parts;
    unsigned char *buf = malloc(bytes);
    CHECK(buf != NULL, "out of memory for %zu bytes", bytes);
    MPI_Request req;
    ptest_pair_request(rank, buf, parts, (int)part, MPI_BYTE, 9, MPI_INFO_NULL, &req);
    int round = 0;
    for (; round < ROUNDS; round++)
        one_round(rank, &req, buf, part, parts, late_us, 0, round);
    int more = 0;
    for (; late_us && parts > 1 && more < POLLED_ROUNDS && timer_run_pending(rank, req, part); more++)
        one_round(rank, &req, buf, part, parts, POLLED_LATE_US, 1, round++);
    if (rank == 0 && more)
        printf("fabric-pieces: %d partitions of %zu bytes: %d more rounds, %d us late, polled\n", parts, part, more,
               POLLED_LATE_US);
    fabric_expect_transport(req);
    if (rank == 0)
        expect_pieced(req, part, parts, late_us, round);
    OK(MPI_Request_free(&req));
    free(buf);
}

/* 2 partitions of part bytes (over a message's limit of pieces, within a
 * run's, under the size of a split copy), the second 2 ms late: partition 0
 * alone is the only run that is not the round's last write, and the last
 * goes long after it, so every round's writes in pieces are its runs less
 * one (none in a round without runs: one message, whole). The timer must
 * split in some round (polled rounds if its progress thread got no core in
 * time). */
static void last_run_rounds(int rank, size_t part)
{
    unsigned char *buf = malloc(2 * part);
    CHECK(buf != NULL, "out of memory for %zu bytes", 2 * part);
    MPI_Request req;
    ptest_pair_request(rank, buf, 2, (int)part, MPI_BYTE, 9, MPI_INFO_NULL, &req);
    int split_rounds = 0;
    for (int round = 0; round < ROUNDS || (round < ROUNDS + POLLED_ROUNDS && !split_rounds); round++) {
        int polled = round >= ROUNDS;
        size_t piece = 0;
        long before = 0, after = 0;
        int runs = 0;
        if (rank == 0)
            pieces_of(req, &piece, &before);
        one_round(rank, &req, buf, part, 2, polled ? POLLED_LATE_US : 2000, polled, round);
        if (rank == 0) {
            pieces_of(req, &piece, &after);
            OK(Partita_Request_runs(req, &runs));
            long want = piece && runs > 1 ? runs - 1 : 0;
            CHECK(after - before == want,
                  "2 partitions of %zu bytes, the second late, round %d: %d runs, %ld writes in pieces, not %ld "
                  "(the round's last write goes as a message: whole)", part, round, runs, after - before, want);
            split_rounds += runs > 0;
        }
        OK(MPI_Bcast(&split_rounds, 1, MPI_INT, 0, MPI_COMM_WORLD));
    }
    fabric_expect_transport(req);
    if (rank == 0 && ptest_policy_is("timer"))
        CHECK(split_rounds > 0, "2 partitions of %zu bytes, the second late: the timer never split in %d rounds",
              part, ROUNDS + POLLED_ROUNDS);
    OK(MPI_Request_free(&req));
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("fabric-pieces");
    if (argc != 1)
        ptest_usage("usage: partita-test-fabric-pieces");
    /* around shm's 4 KiB inject size: whole, 2, 3 and 4 pieces, over the
     * limit of a message, and around a run's 32 */
    static const size_t parts_of[] = {4095, 4096, 4097, 8192, 8193, 12289, 16384, 16385, 24576, 32768, 131072, 131073};
    for (size_t k = 0; k < sizeof parts_of / sizeof *parts_of; k++) {
        rounds_of(rank, parts_of[k], 1, 0);
        rounds_of(rank, parts_of[k], 8, 2000);
    }
    rounds_of(rank, 12288, 1024, 0); /* 3072 pieces marked back to back */
    last_run_rounds(rank, 24576);
    last_run_rounds(rank, 32768);
    return ptest_finish("fabric-pieces");
}
