/* partita's progress thread paces its looks at a send request whose stalled
 * group it has flushed and which has nothing new to send (2 ranks,
 * PARTITA_PROGRESS_THREAD=1, the timer, built-in LogGP parameters). Each
 * round: the sender marks half of its partitions, sleeps LATE_MS with no MPI
 * call and counts its progress thread's waits at the regular interval
 * (Partita_Progress_thread_waits) over WINDOW_MS of that, starting SETTLE_MS
 * in (the flush is long done), then marks the other half. A second
 * round is run when the first is out of bounds (a passing disturbance may
 * starve the thread in one). Every byte is checked. Two cases:
 *
 * runs (default): 1 MiB in 8 partitions over MPI, 128 KiB each: one sent
 * alone would wait for MPI's rendezvous handshake, and is too small for its
 * copy to dwarf that wait (from 256 KiB partitions go alone again; this case
 * was 4 MiB in 4 until then): a split group sends the
 * rest of its partitions in runs (PT_GROUP_RUNS), at its last mark or when
 * its marking stalls again, so the thread keeps looking at it. Its next look
 * used to be due at the flush's time, already past, and the thread looked
 * again at once, without a pause, until the laggard came back: a core taken
 * from the ranks for the whole pause (at 8 MiB in 8 partitions the marking
 * thread's 100 us sleep lasted 0.5-2.4 ms in a quarter to half of the rounds
 * on the 2-core VM). Before the fix: 0 waits in the window; after: 1392-2066
 * on the 2-core VM (MPICH, Open MPI, ASan, TSan). A thread that sleeps its
 * interval (20 us) and looks makes hundreds; the test asks for at least
 * MIN_WAITS, one a millisecond.
 *
 * split: 16 KiB in 8 partitions (any transport: PARTITA_TRANSPORT; both plan
 * groups of 2-3 partitions), delta 0 (PARTITA_DELTA_US=0): the first
 * partition is marked, its group stalls and is split; then the last one,
 * whose mark begins another group and so has the request watched again: the
 * thread looks at the split group once more, then splits the second. A split
 * group sends each later partition at its mark, so nothing is left to look
 * at and the thread must wait idle (its long wait), not at its regular
 * interval. The split group, stalled again with nothing new since its flush,
 * used to be due for another look 200 us on (the recheck of a group that
 * goes on in runs), so the request stayed watched and the thread woke every
 * 20 us until the laggard came back: 3,300-3,700 regular waits in the window,
 * over MPI and the fabric (shm, tcp); 0 after the fix. The same happened
 * whenever a flush took longer than delta (over the fabric, 96 KiB of a
 * 128 KiB group in injected pieces against delta 5 us: 101,407 regular waits
 * in 3,000 rounds of a 1 ms laggard, 0-1 after the fix). The test asks for
 * at most MAX_SPLIT_WAITS, one in 4 ms.
 * Usage: partita-test-quiet_sender [runs|split] */
#include <string.h>

#include "partita/partita.h"
#include "ptest_timer.h"

#define LATE_MS 150
#define SETTLE_MS 20
#define WINDOW_MS 100
#define MIN_WAITS 100
#define MAX_SPLIT_WAITS 25
#define FIRST_MS 5

typedef struct quiet_case {
    const char *name, *transport; /* transport: the info key's value, NULL for the environment's */
    size_t total;
    int parts;
    const char *plan_says; /* what Partita_Request_why must say: the case is the one meant */
    int in_runs;           /* the rest goes in runs (watched, paced) rather than at its marks (idle) */
} quiet_case;

static const quiet_case cases[] = {
    {"runs", "mpi", 1 << 20, 8, "in runs", 1},
    {"split", NULL, 16 << 10, 8, "each later one at its mark", 0},
};

/* Rank 0, after a round: the checks that the round was the case meant. */
static void check_case(const quiet_case *c, MPI_Request req, int early)
{
    char why[1024] = "";
    OK(Partita_Request_why(req, why, sizeof why));
    CHECK(strstr(why, c->plan_says) != NULL, "%s: the plan does not say '%s', the case this test is about: %s",
          c->name, c->plan_says, why);
    int flushes = c->in_runs ? 1 : 2;
    CHECK(early >= flushes, "%s: %d runs or lone partitions went before their group's last mark "
          "(Partita_Request_runs; at least %d expected): the flushes this test is about did not happen", c->name,
          early, flushes);
}

/* Rank 0: mark the partitions [first, end). */
static void mark_range(MPI_Request req, int first, int end)
{
    for (int p = first; p < end; p++)
        OK(MPI_Pready(p, req));
}

/* Rank 0: one round; returns the progress thread's waits at its regular
 * interval in the window of its pause. The runs case marks the second half
 * first. The split case marks the first partition, waits FIRST_MS (its group
 * is flushed and split), then the last one, which begins another group (the
 * request is watched again, and the thread looks at the split group once
 * more), then pauses and marks the rest. */
static long long send_round(const quiet_case *c, MPI_Request req)
{
    long long before, after, long_waits;
    if (c->in_runs) {
        mark_range(req, c->parts / 2, c->parts);
    } else {
        mark_range(req, 0, 1);
        ptest_pause_us(FIRST_MS * 1000L);
        mark_range(req, c->parts - 1, c->parts);
    }
    ptest_pause_us(SETTLE_MS * 1000L);
    OK(Partita_Progress_thread_waits(&before, &long_waits));
    ptest_pause_us(WINDOW_MS * 1000L);
    OK(Partita_Progress_thread_waits(&after, &long_waits));
    ptest_pause_us((LATE_MS - SETTLE_MS - WINDOW_MS) * 1000L);
    if (c->in_runs)
        mark_range(req, 0, c->parts / 2);
    else
        mark_range(req, 1, c->parts - 1);
    return after - before;
}

/* Whether w regular waits in the window are what the case asks for. */
static int in_bounds(const quiet_case *c, long long w)
{
    return c->in_runs ? w >= MIN_WAITS : w >= 0 && w <= MAX_SPLIT_WAITS;
}

int main(int argc, char **argv)
{
    ptm_params params;
    char loggp[512];
    if (ptest_builtin_loggp("quiet-sender", &params, loggp, sizeof loggp))
        return 1;
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("quiet-sender");
    const quiet_case *c = argc == 1 ? &cases[0] : NULL;
    for (size_t k = 0; argc == 2 && k < sizeof cases / sizeof cases[0]; k++)
        if (!strcmp(argv[1], cases[k].name))
            c = &cases[k];
    if (!c)
        ptest_usage("usage: partita-test-quiet_sender [runs|split]");
    static unsigned char buf[4 << 20];
    const int tag = 11;
    MPI_Request req = MPI_REQUEST_NULL;
    long long waits[2] = { -1, -1 };
    int again = 1, early = 0;
    for (int w = 0; w < 2 && again; w++) {
        /* A new request each round: over MPI a split group goes alone from
         * the start of the rounds after (announced ahead), with no flush. */
        if (req != MPI_REQUEST_NULL)
            OK(MPI_Request_free(&req));
        ptest_timer_pair(buf, c->total, c->parts, tag, rank, c->transport, &req);
        if (rank == 1)
            memset(buf, 0, c->total);
        OK(MPI_Start(&req));
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            waits[w] = send_round(c, req);
        OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (rank == 0) {
            OK(Partita_Request_runs(req, &early));
            check_case(c, req, early);
        }
        if (rank == 1)
            ptest_check_bytes(buf, c->total, tag, c->name);
        if (rank == 0) {
            printf("quiet-sender: %s: round %d: the sender's progress thread waited %lld times at its regular "
                   "interval in %d ms of its application's pause\n", c->name, w + 1, waits[w], WINDOW_MS);
            again = !in_bounds(c, waits[w]);
        }
        MPI_Bcast(&again, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    if (rank == 0) {
        long long kept = waits[1] >= 0 && in_bounds(c, waits[1]) ? waits[1] : waits[0];
        if (c->in_runs)
            CHECK(in_bounds(c, kept),
                  "the sender's progress thread waited %lld and %lld times at its regular interval in two windows of "
                  "%d ms of its application's pause (at least %d expected): it looked at a flushed group that had "
                  "nothing new without pausing",
                  waits[0], waits[1], WINDOW_MS, MIN_WAITS);
        else
            CHECK(in_bounds(c, kept),
                  "the sender's progress thread waited %lld and %lld times at its regular interval in two windows of "
                  "%d ms of its application's pause (at most %d expected): it kept looking at a split group whose "
                  "later partitions go at their marks",
                  waits[0], waits[1], WINDOW_MS, MAX_SPLIT_WAITS);
    }
    OK(MPI_Request_free(&req));
    ptest_builtin_loggp_remove(loggp);
    return ptest_finish("quiet-sender");
}
