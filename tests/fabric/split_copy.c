/* Split copies (2 ranks, fabric transport; fabric_wire.h): over shm a
 * message of 1 MiB or more (a timer run of 64 KiB or more) goes as a tail the
 * receiver copies and a head the sender copies, then a notice; the receiver
 * reports the message when both are in. Sizes at the edge (1 MiB - 64 bytes
 * whole, 1 MiB and an odd length split), a message per partition (policy none: each
 * one split), several rounds with new contents, checked byte by byte as
 * soon as MPI_Parrived reports a partition and again after MPI_Wait; a
 * non-contiguous type (both sides staged); a rank sending 1 MiB to itself
 * (its own progress copies both halves); the second half marked late, so
 * the timer sends runs, which are split too. The sender's Partita_Request_why
 * counts the split messages under bulk (one message a round) and none (one
 * a partition); the other policies' layouts (pieces of a partition, or
 * adaptive's candidates) are checked by their bytes only.
 * With a pause, the sender first takes the round's credit (a barrier after
 * both MPI_Start, then an MPI_Test), so its MPI_Pready posts the tails at
 * once, and then waits that long between its last MPI_Pready and MPI_Wait:
 * with no progress thread the heads go only in MPI_Wait, so a receiver that
 * reported a message at its tail would see the head's bytes missing.
 * Usage: partita-test-fabric-split-copy on|off [PAUSE_MS] (off: no message
 * may be split, as with PARTITA_FABRIC_SPLIT_COPY=0 or a provider other than
 * shm) */
#include "fabric_round.h"

#define ROUNDS 3
#define SPLIT_MIN (1 << 20)   /* a message's */
#define RUN_SPLIT_MIN 65536   /* a timer run's */

static unsigned char byte_of(size_t i, int round) { return (unsigned char)(i * 11 + (size_t)round * 57 + 3); }

/* Split messages so far by the sender's why text; -1 when it names none. */
static long split_so_far(MPI_Request req)
{
    char why[2048];
    OK(Partita_Request_why(req, why, sizeof why));
    if (!strstr(why, "copied by both sides"))
        return -1;
    return ptest_number_before(why, " so far)");
}

static long wrong_bytes(const unsigned char *buf, size_t from, size_t to, int round)
{
    long wrong = 0;
    for (size_t i = from; i < to; i++)
        wrong += buf[i] != byte_of(i, round);
    return wrong;
}

static long pause_ms; /* of the sender, before MPI_Wait */

/* The sender's writes in its last round, by its why text. */
static long writes_last_round(MPI_Request req)
{
    char why[2048];
    OK(Partita_Request_why(req, why, sizeof why));
    return ptest_number_before(why, " writes in the current or last round");
}

/* What the sender's why text must count after rounds_of: the split messages
 * the policy makes (bulk: one a round, none: one a partition; the other
 * policies' layouts are checked by their bytes only). */
static void expect_split_messages(MPI_Request req, int on, size_t part, int parts)
{
    size_t bytes = part * (size_t)parts;
    long split = split_so_far(req), want = -1;
    if (on && ptest_policy_is("bulk"))
        want = bytes >= SPLIT_MIN ? ROUNDS : 0;
    else if (on && ptest_policy_is("none"))
        want = part >= SPLIT_MIN ? (long)parts * ROUNDS : 0;
    if (!on)
        CHECK(split == -1, "no message should be split, but %ld were", split);
    else if (want >= 0)
        CHECK(split == want, "%d partitions of %zu bytes: %ld split messages, not %ld", parts, part, split, want);
}

/* The same after late rounds: under the timer with split copies every write
 * of the last round is a run of at least part >= RUN_SPLIT_MIN bytes, so
 * each must have gone split (split_before: the count before that round). */
static void expect_split_runs(MPI_Request req, int on, size_t part, int parts, long split_before)
{
    long split = split_so_far(req), writes = writes_last_round(req);
    if (!on)
        CHECK(split == -1, "half late: no write should be split, but %ld were", split);
    else if (ptest_policy_is("timer")) {
        CHECK(writes > 1, "half late, %d partitions of %zu bytes: the timer sent the last round in %ld write(s), "
              "not in runs", parts, part, writes);
        CHECK(split - split_before == writes, "half late, %d partitions of %zu bytes: %ld of the last round's %ld "
              "writes split", parts, part, split - split_before, writes);
    }
}

#define LATE_POLL_US 3000

/* ROUNDS rounds of parts partitions of part bytes, every byte checked as soon
 * as MPI_Parrived reports a partition and again after MPI_Wait. With late,
 * the sender marks the first half, then polls its request with MPI_Test for
 * LATE_POLL_US (the timer splits the stalled group in that call: the early
 * half goes as a run), then marks the rest (under the timer each partition
 * alone, a run of one). With a pause, the sender first takes the round's
 * credit and waits that long before MPI_Wait (the file's header). */
static void rounds_of(int rank, int on, size_t part, int parts, int late)
{
    size_t bytes = part * (size_t)parts;
    unsigned char *buf = malloc(bytes);
    CHECK(buf != NULL, "out of memory for %zu bytes", bytes);
    MPI_Request req;
    ptest_pair_request(rank, buf, parts, (int)part, MPI_BYTE, late ? 10 : 7, MPI_INFO_NULL, &req);
    const char *what = late ? "half late, " : "";
    long split_before = 0;
    for (int round = 0; round < ROUNDS; round++) {
        if (rank == 0) {
            for (size_t i = 0; i < bytes; i++)
                buf[i] = byte_of(i, round);
            split_before = split_so_far(req);
            OK(MPI_Start(&req));
            int flag;
            if (pause_ms) {
                OK(MPI_Barrier(MPI_COMM_WORLD));
                OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE)); /* reads the credit the receiver sent */
            }
            for (int p = 0; p < parts; p++) {
                if (late && p == parts / 2)
                    for (double end = ptest_now_s() + LATE_POLL_US * 1e-6; ptest_now_s() < end;)
                        OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE)); /* half is not marked: never complete */
                OK(MPI_Pready(p, req));
            }
            if (pause_ms) /* heads left to progress go only in MPI_Wait (no progress thread) */
                ptest_pause_us(pause_ms * 1000);
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            continue;
        }
        memset(buf, 0, bytes);
        OK(MPI_Start(&req));
        if (pause_ms)
            OK(MPI_Barrier(MPI_COMM_WORLD));
        long early = 0;
        for (int p = 0; p < parts; p++) {
            ptest_parrived_loop(req, p);
            early += wrong_bytes(buf, (size_t)p * part, (size_t)(p + 1) * part, round);
        }
        OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        long wrong = wrong_bytes(buf, 0, bytes, round);
        CHECK(early == 0, "%s%d partitions of %zu bytes, round %d: %ld bytes not in when MPI_Parrived said so", what,
              parts, part, round, early);
        CHECK(wrong == 0, "%s%d partitions of %zu bytes, round %d: %ld wrong bytes", what, parts, part, round, wrong);
    }
    if (rank == 0) {
        fabric_expect_transport(req);
        if (late)
            expect_split_runs(req, on, part, parts, split_before);
        else
            expect_split_messages(req, on, part, parts);
    }
    OK(MPI_Request_free(&req));
    free(buf);
}

/* Every other int of n pairs: the type is not contiguous, so both sides
 * stage it; the gaps of the receive buffer keep their -1. */
static void strided(int rank, int n)
{
    int *buf = malloc(2 * (size_t)n * sizeof *buf);
    CHECK(buf != NULL, "out of memory for %d ints", 2 * n);
    MPI_Datatype every_other;
    OK(MPI_Type_vector(n, 1, 2, MPI_INT, &every_other));
    OK(MPI_Type_commit(&every_other));
    MPI_Request req;
    ptest_pair_request(rank, buf, 1, 1, every_other, 8, MPI_INFO_NULL, &req);
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < 2 * n; i++)
            buf[i] = rank == 0 ? i * 3 + round : -1;
        OK(MPI_Start(&req));
        if (rank == 0)
            OK(MPI_Pready(0, req));
        OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (rank == 1) {
            long wrong = 0;
            for (int i = 0; i < 2 * n; i++)
                wrong += buf[i] != (i % 2 ? -1 : i * 3 + round);
            CHECK(wrong == 0, "strided type of %d ints, round %d: %ld wrong ints", n, round, wrong);
        }
    }
    OK(MPI_Request_free(&req));
    OK(MPI_Type_free(&every_other));
    free(buf);
}

/* Each rank sends 1 MiB in 2 partitions to itself on MPI_COMM_SELF. */
static void to_self(int on)
{
    enum { PART = 1 << 19, PARTS = 2 };
    unsigned char *out = malloc((size_t)PART * PARTS), *in = malloc((size_t)PART * PARTS);
    CHECK(out && in, "out of memory");
    MPI_Request s, r;
    OK(MPI_Psend_init(out, PARTS, PART, MPI_BYTE, 0, 9, MPI_COMM_SELF, MPI_INFO_NULL, &s));
    OK(MPI_Precv_init(in, PARTS, PART, MPI_BYTE, 0, 9, MPI_COMM_SELF, MPI_INFO_NULL, &r));
    for (int round = 0; round < ROUNDS; round++) {
        for (size_t i = 0; i < (size_t)PART * PARTS; i++)
            out[i] = byte_of(i, round);
        memset(in, 0, (size_t)PART * PARTS);
        OK(MPI_Start(&r));
        OK(MPI_Start(&s));
        OK(MPI_Pready_range(0, PARTS - 1, s));
        OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        long wrong = wrong_bytes(in, 0, (size_t)PART * PARTS, round);
        CHECK(wrong == 0, "to itself, round %d: %ld wrong bytes", round, wrong);
    }
    fabric_expect_transport(s);
    long split = split_so_far(s);
    if (!on)
        CHECK(split == -1, "to itself: no message should be split, but %ld were", split);
    else if (ptest_policy_is("bulk"))
        CHECK(split == ROUNDS, "to itself: %ld split messages, not %d", split, ROUNDS);
    OK(MPI_Request_free(&s));
    OK(MPI_Request_free(&r));
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("fabric-split-copy");
    if (argc < 2 || argc > 3 || (strcmp(argv[1], "on") && strcmp(argv[1], "off")) ||
        (argc == 3 && (pause_ms = atol(argv[2])) <= 0))
        ptest_usage("usage: partita-test-fabric-split-copy on|off [PAUSE_MS > 0]");
    int on = !strcmp(argv[1], "on");
    rounds_of(rank, on, SPLIT_MIN - 64, 1, 0); /* below the split size: one write */
    rounds_of(rank, on, SPLIT_MIN, 1, 0);
    rounds_of(rank, on, 349526, 3, 0);         /* 1048578 bytes: head and tail of odd lengths */
    rounds_of(rank, on, SPLIT_MIN, 4, 0);
    rounds_of(rank, on, RUN_SPLIT_MIN, 4, 0);  /* messages of a partition each (none) under the size */
    rounds_of(rank, on, ((size_t)3 << 20) + 8, 2, 0);
    rounds_of(rank, on, RUN_SPLIT_MIN, 4, 1);  /* late runs whose heads MPI_Pready copies */
    rounds_of(rank, on, (size_t)1 << 18, 4, 1); /* and whose heads progress copies */
    strided(rank, 1 << 15);                 /* 128 KiB of ints packed */
    to_self(on);
    return ptest_finish("fabric-split-copy");
}
