/* When the timer splits a stalled group (2 ranks): with its default delta,
 * only when the early partitions' wire time can pay for the messages a split
 * adds (a run's header, a terminator, the late partitions alone); a group of
 * 1 KiB never, one of 256 KiB always, one of 64 KiB in 8 over the fabric
 * too (over MPI it is a cut into eager pieces, never split); with a delta
 * set, every group may be split. The sender marks the second half of the partitions, polls MPI_Test
 * for 5 ms (far past any default delta, so a split group is flushed then),
 * reads Partita_Request_runs, then marks the rest; the receiver checks every
 * byte. Both ranks read the built-in LogGP parameters from a file written
 * here, so the answer does not depend on a file `partita loggp` saved.
 * With the argument `thread` (run with PARTITA_PROGRESS_THREAD=1) a group
 * too small for a split to pay is split all the same, by the progress
 * thread alone: 1 KiB in 64 partitions, the sender asleep 5 ms (no MPI
 * call) after marking half of them, THREAD_ROUNDS (24) rounds; some round
 * must have sent runs before the rest was marked (a round that wakes no
 * thread sends the stalled group whole, and its 5 ms of marking make the
 * next round wake the thread at its first mark). With `thread-quick`, 40
 * rounds marked back to back come first, then a round whose marks of a
 * partition already marked (MPI_Pready, _range, _list) must be refused: the
 * rounds after quick ones skip the partition states (a plain round), and the
 * stalled rounds after must still be found; then the same with 256 KiB in
 * 64, a group a split pays for (its rounds arm nothing once it is not
 * watched).
 * With the argument `late`: a group that begins late, after a laggard, is
 * split at its first mark: 8 KiB in 8 partitions as 2 groups, delta 0; each
 * round marks the second group whole, then (late rounds) sleeps 1 ms with no
 * MPI call, so nothing checks for a stall, marks partition 0 and reads
 * Partita_Request_runs before marking the rest. Back-to-back rounds, with no
 * sleep, must not all split: a group begun right after another went is not
 * late (judged when this test's clock saw each of them marked in less than
 * the late-begin pause the why text names; not so under ThreadSanitizer).
 * Over MPI, whose runs are not cheap, the first late round announces
 * the group ahead: in the rounds after it that the why text names, it goes
 * alone from the start, late or not, and after them whole again. After more
 * quick rounds than the why text names the rule rests: a laggard's first
 * round sends the group whole, and the late rounds after it split it.
 * With the argument `pieces` (the MPI transport): a partition past MPI's
 * eager limit (8112 bytes in the built-in parameters) that goes alone after
 * a split goes in eager pieces, at most 8 a partition and 192 a group:
 * 20,000 bytes in 3 uneven ones, 8,000 bytes whole (eager already), 100,000
 * bytes whole (13 would be needed), 16 KiB in a group of 64 in 3, 8 KiB in a
 * group of 128 whole (256 pieces), 32 KiB in a group of 64 whole (320); the
 * why text says which, and the receiver checks every byte. */
#include <string.h>
#include <time.h>

#include "partita/partita.h"
#include "ptest_timer.h"

/* Runs the timer sent early for one round of total bytes in parts partitions
 * (rank 0; -1 on rank 1), delta from the info key or the model's (NULL). */
static int stalled_round(int rank, unsigned char *buf, size_t total, int parts, const char *delta, int tag,
                         char *why, int why_len)
{
    MPI_Info info;
    MPI_Request req;
    MPI_Info_create(&info);
    MPI_Info_set(info, "partita_policy", "timer");
    if (delta)
        MPI_Info_set(info, "partita_delta_us", delta);
    int count = (int)(total / (size_t)parts), runs = -1, flag = 0;
    if (rank == 0) {
        ptest_fill(buf, total, tag);
        OK(MPI_Psend_init(buf, parts, count, MPI_BYTE, 1, tag, MPI_COMM_WORLD, info, &req));
        OK(Partita_Request_why(req, why, why_len));
        OK(MPI_Start(&req));
        for (int p = parts / 2; p < parts; p++)
            OK(MPI_Pready(p, req));
        for (double t0 = ptest_now_s(); ptest_now_s() - t0 < 5e-3;)
            OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "%zu bytes in %d: complete before half its partitions were marked", total, parts);
        OK(Partita_Request_runs(req, &runs));
        for (int p = 0; p < parts / 2; p++)
            OK(MPI_Pready(p, req));
    } else {
        ptest_recv_start(buf, total, parts, tag, &req);
    }
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (rank == 1)
        ptest_check_bytes(buf, total, tag, delta ? "timer, delta set" : "timer, default delta");
    OK(MPI_Request_free(&req));
    MPI_Info_free(&info);
    return runs;
}

/* One round of req (total bytes in parts partitions, tag): the sender marks
 * the second half, sleeps pause_ns (no MPI call) when it is not 0, marks the
 * first `before` partitions of the first half and reads Partita_Request_runs,
 * then marks the rest; the receiver checks every byte. Returns the runs sent
 * by then (rank 0), and in *marking_s (when not NULL) the seconds from
 * before the first MPI_Pready to after the last. */
static int paused_round(int rank, MPI_Request *req, unsigned char *buf, size_t total, int parts, int tag,
                        long pause_ns, int before, const char *what, double *marking_s)
{
    int runs = 0;
    if (rank == 0) {
        ptest_fill(buf, total, tag);
        OK(MPI_Start(req));
        double t0 = ptest_now_s();
        for (int p = parts / 2; p < parts; p++)
            OK(MPI_Pready(p, *req));
        if (pause_ns)
            nanosleep(&(struct timespec){ 0, pause_ns }, NULL);
        for (int p = 0; p < before; p++)
            OK(MPI_Pready(p, *req));
        OK(Partita_Request_runs(*req, &runs));
        for (int p = before; p < parts / 2; p++)
            OK(MPI_Pready(p, *req));
        if (marking_s)
            *marking_s = ptest_now_s() - t0;
    } else {
        memset(buf, 0, total);
        OK(MPI_Start(req));
    }
    OK(MPI_Wait(req, MPI_STATUS_IGNORE));
    if (rank == 1)
        ptest_check_bytes(buf, total, tag, what);
    return runs;
}

/* A round after many quick ones (a plain round, flush/marking.c: no partition
 * states): a partition marked twice, a range and a list over it are still
 * refused, and mark nothing; the round then completes with every byte. */
static void plain_round_errors(int rank, MPI_Request *req, unsigned char *buf, size_t total, int parts, int tag)
{
    if (rank == 0) {
        ptest_fill(buf, total, tag);
        OK(MPI_Start(req));
        OK(MPI_Pready(0, *req));
        ptest_expect_says(MPI_Pready(0, *req), MPI_ERR_ARG, "MPI_Pready of a marked partition", "already marked", NULL);
        ptest_expect_says(MPI_Pready_range(0, 1, *req), MPI_ERR_ARG, "MPI_Pready_range over a marked partition",
                          "partition 0", NULL);
        int list[2] = { 1, 0 };
        ptest_expect_says(MPI_Pready_list(2, list, *req), MPI_ERR_ARG, "MPI_Pready_list with a marked entry",
                          "entry 1 of 2", NULL);
        for (int p = 1; p < parts; p++) /* partition 1 too: neither the range nor the list marked it */
            OK(MPI_Pready(p, *req));
    } else {
        memset(buf, 0, total);
        OK(MPI_Start(req));
    }
    OK(MPI_Wait(req, MPI_STATUS_IGNORE));
    if (rank == 1)
        ptest_check_bytes(buf, total, tag, "timer, a plain round with refused marks");
}

/* Stalled rounds the thread has to split one of. 12 were too few once under
 * AddressSanitizer with ctest -j2 (the thread got no core in any of them);
 * 5 ms each, so 24 cost 60 ms more. */
#define THREAD_ROUNDS 24

/* The `thread` mode: THREAD_ROUNDS rounds of 1 KiB in 64 partitions stalled
 * 5 ms by a sleep (or `total` bytes); returns the rounds that sent runs early
 * (rank 0). With `quick`, that many rounds marked back to back come first
 * (the rounds after them are plain until a stall is measured), then a round
 * of refused marks. */
static int thread_rounds(int rank, unsigned char *buf, size_t total, int quick, char *why, int why_len)
{
    const int parts = 64, rounds = THREAD_ROUNDS;
    MPI_Info info;
    MPI_Request req;
    MPI_Info_create(&info);
    MPI_Info_set(info, "partita_policy", "timer");
    int split_rounds = 0;
    ptest_pair_request(rank, buf, parts, (int)(total / parts), MPI_BYTE, 40, info, &req);
    if (rank == 0)
        OK(Partita_Request_why(req, why, why_len));
    if (quick) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        for (int round = 0; round < quick; round++)
            paused_round(rank, &req, buf, total, parts, 40, 0, 0, "timer, quick rounds", NULL);
        plain_round_errors(rank, &req, buf, total, parts, 41);
    }
    for (int round = 0; round < rounds; round++)
        split_rounds += paused_round(rank, &req, buf, total, parts, 40 + round, 5000000, 0,
                                     "timer, split by the progress thread", NULL) > 0;
    OK(MPI_Request_free(&req));
    MPI_Info_free(&info);
    return split_rounds;
}

/* The `late` mode, one request of 8 KiB in 8 partitions as 2 groups (delta
 * 0), `rounds` rounds: those with lagged[round] set are late (group 0
 * begins 1 ms after group 1 went), the others marked back to back.
 * runs[round] (rank 0): whether the round had sent runs when partition 0
 * was marked; marking_s[round] how long its marking took.
 * Runs are cheap over the fabric only (fabric: PARTITA_TRANSPORT=fabric);
 * over MPI, *ahead is the number of rounds after a late one that the why
 * text says group 0 then goes alone from the start (0: it says none),
 * *rests_after after how many quick rounds in a row the late-begin rule rests
 * and *pause_s the late-begin pause it names. */
static void late_begun_rounds(int rank, int fabric, unsigned char *buf, int rounds, const int *lagged, int *runs,
                              double *marking_s, int *ahead, int *rests_after, double *pause_s)
{
    const int parts = 8;
    const size_t total = 8192;
    MPI_Info info;
    MPI_Request req;
    MPI_Info_create(&info);
    MPI_Info_set(info, "partita_policy", "timer");
    MPI_Info_set(info, "partita_delta_us", "0");
    MPI_Info_set(info, "partita_transport_parts", "2");
    ptest_pair_request(rank, buf, parts, (int)(total / parts), MPI_BYTE, 50, info, &req);
    *ahead = 0;
    if (rank == 0) { /* Partita_Request_why says so */
        char why[768] = "";
        OK(Partita_Request_why(req, why, sizeof why));
        CHECK(strstr(why, "begins"), "why says '%s'", why);
        const char *next = strstr(why, "in the next ");
        if (next)
            *ahead = atoi(next + strlen("in the next "));
        const char *rests = strstr(why, " quicker ones in a row"); /* "after N quicker ones in a row" */
        while (rests && rests > why && strncmp(rests, "after ", 6))
            rests--;
        *rests_after = rests && !strncmp(rests, "after ", 6) ? atoi(rests + strlen("after ")) : 0;
        CHECK(*rests_after > 0, "why does not say after how many quick rounds the late-begin rule rests: '%s'", why);
        const char *begins = strstr(why, " that begins "); /* "... that begins 25.0 us or more after ..." */
        *pause_s = begins ? atof(begins + strlen(" that begins ")) * 1e-6 : 0;
        CHECK(*pause_s > 0, "why does not name the late-begin pause: '%s'", why);
        CHECK((next == NULL) == fabric, "why says '%s'", why);
    }
    for (int round = 0; round < rounds; round++)
        runs[round] = paused_round(rank, &req, buf, total, parts, 50 + round, lagged[round] ? 1000000 : 0, 1,
                                   lagged[round] ? "timer, a group begun late" : "timer, no laggard",
                                   &marking_s[round]) > 0;
    OK(MPI_Request_free(&req));
    MPI_Info_free(&info);
}

/* Rounds [from, to) of runs[] that sent runs early. */
static int split_rounds(const int *runs, int from, int to)
{
    int n = 0;
    for (int k = from; k < to; k++)
        n += runs[k];
    return n;
}

/* Rounds [from, to) whose marking took limit seconds or more (marking_s[]). */
static int slow_rounds(const double *marking_s, int from, int to, double limit)
{
    int n = 0;
    for (int k = from; k < to; k++)
        n += marking_s[k] >= limit;
    return n;
}

int main(int argc, char **argv)
{
    char path[512];
    ptm_params params;
    if (ptest_builtin_loggp("timer_split", &params, path, sizeof path))
        return 1;
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("timer_split");
    const char *transport = getenv("PARTITA_TRANSPORT");
    int fabric = transport && !strcmp(transport, "fabric");
    static unsigned char buf[256 << 10];
    if (argc > 1 && !strcmp(argv[1], "late")) {
        /* 4 quick rounds, 6 late ones, then quick rounds past the ahead window
         * and past the quick rounds after which the late-begin rule rests;
         * then REPS times LATE2 late ones and AFTER quick ones */
        enum { QUICK = 4, LATE = 6, AFTER = 40, LATE2 = 3, REPS = 3, FIRST = QUICK + LATE + AFTER,
               ROUNDS = FIRST + REPS * (LATE2 + AFTER) };
        int runs[ROUNDS] = { 0 }, lagged[ROUNDS] = { 0 }, ahead = 0, rests_after = 0;
        double marking_s[ROUNDS] = { 0 }, pause_s = 0;
        for (int round = 0; round < ROUNDS; round++)
            lagged[round] = (round >= QUICK && round < QUICK + LATE) || (round >= FIRST && (round - FIRST) %
                                                                         (LATE2 + AFTER) < LATE2);
        late_begun_rounds(rank, fabric, buf, ROUNDS, lagged, runs, marking_s, &ahead, &rests_after, &pause_s);
        if (rank == 0) {
            const char *tp = fabric ? "fabric" : "mpi";
            /* Back to back is the test's intent, not a promise of the machine:
             * a request's first rounds touch pages for the first time, and
             * under ThreadSanitizer they took 25-430 us. A round whose marking
             * took the late-begin pause by this test's own clock may rightly
             * split group 0 (the library's interval, hand-over to first mark,
             * lies inside it), and the rounds after a split send it alone or
             * announce it ahead, quick or not: so the stretch is judged only
             * when every round of it was marked in less. */
            int slow = slow_rounds(marking_s, 0, QUICK, pause_s);
            if (!slow)
                CHECK(split_rounds(runs, 0, QUICK) < QUICK, "%s: %d of %d rounds marked back to back (each in under "
                      "%.1f us) split a group at its first mark", tp, split_rounds(runs, 0, QUICK), QUICK,
                      pause_s * 1e6);
            else
                printf("timer_split: not checked whether rounds marked back to back split: %d of the first %d took "
                       "the late-begin pause of %.1f us to mark (a slow or busy machine)\n", slow, QUICK,
                       pause_s * 1e6);
            CHECK(split_rounds(runs, QUICK, QUICK + LATE) == LATE,
                  "%s: %d of %d rounds whose group 0 began 1 ms late split it at once", tp,
                  split_rounds(runs, QUICK, QUICK + LATE), LATE);
            /* Over MPI the first late round announces group 0 ahead: in the
             * `ahead` rounds after it, it goes alone from the start even when
             * nothing is late; then it goes whole again. */
            int window_end = fabric ? QUICK + LATE : QUICK + 1 + ahead;
            CHECK(fabric || (ahead >= 1 && window_end + 4 <= QUICK + LATE + AFTER),
                  "mpi: the why text names %d rounds ahead", ahead);
            if (!fabric && window_end > QUICK + LATE)
                CHECK(split_rounds(runs, QUICK + LATE, window_end) == window_end - QUICK - LATE,
                      "mpi: %d of the %d quick rounds in the window announced ahead sent partition 0 alone",
                      split_rounds(runs, QUICK + LATE, window_end), window_end - QUICK - LATE);
            int tail = QUICK + LATE + AFTER - window_end;
            CHECK(split_rounds(runs, window_end, QUICK + LATE + AFTER) < tail,
                  "%s: %d of %d quick rounds after the late ones (and after any window announced ahead) split",
                  tp, split_rounds(runs, window_end, QUICK + LATE + AFTER), tail);
            /* After that many quick rounds in a row the late-begin rule rests
             * (its clock reads cost the quick rounds): the laggard's first
             * round sends group 0 whole, and wakes the rule for the rounds
             * after it, which split it at once (or, over MPI, send it alone,
             * announced ahead by the first of them). Quick means a marking
             * span under the 25 us of a late begin, which the machine does
             * not promise (over tcp under ctest -j2 a round was stretched
             * past it; under ThreadSanitizer every round is): so a laggard's
             * first round must be whole only when the rounds before it
             * that decide were quick by this test's own clock too (under
             * QUICK_S, which spans more than the library's span does). */
            const double QUICK_S = 20e-6;
            CHECK(AFTER - (window_end - QUICK - LATE) > rests_after, "the test's quick stretch (%d rounds) is not "
                  "longer than the %d after which the rule rests", AFTER - (window_end - QUICK - LATE), rests_after);
            int judged = 0;
            for (int rep = 0; rep < REPS; rep++) {
                int again = FIRST + rep * (LATE2 + AFTER);
                int quick_before = slow_rounds(marking_s, again - rests_after, again, QUICK_S) == 0;
                judged += quick_before;
                if (quick_before)
                    CHECK(runs[again] == 0, "%s: the first late round after %d quick ones (marked in under %.0f us "
                          "each) split group 0 at its first mark: the late-begin rule did not rest", tp,
                          rests_after, QUICK_S * 1e6);
                CHECK(split_rounds(runs, again + 1, again + LATE2) == LATE2 - 1,
                      "%s: %d of the %d late rounds after the first one of laggard %d back split group 0 at once",
                      tp, split_rounds(runs, again + 1, again + LATE2), LATE2 - 1, rep + 1);
            }
            if (!judged)
                printf("timer_split: not checked whether the late-begin rule rests: in none of %d stretches were "
                       "the last %d rounds marked in under %.0f us each (a slow or busy machine)\n", REPS,
                       rests_after, QUICK_S * 1e6);
        }
        ptest_builtin_loggp_remove(path);
        return ptest_finish("timer_split");
    }
    if (argc > 1 && !strcmp(argv[1], "pieces")) {
        const struct { size_t total; int parts; int pieces; } cases[] = {
            { 160000, 8, 3 },       /* 20,000-byte partitions: pieces of 6666, 6667, 6667 bytes */
            { 256000, 32, 1 },      /* 8,000 bytes: eager whole */
            { 200000, 2, 1 },       /* 100,000 bytes: 13 pieces would be needed */
            { 1 << 20, 64, 3 },     /* 16 KiB, one group (the model's one message): 192 pieces */
            { 1 << 20, 128, 1 },    /* 8 KiB, one group: 256 pieces */
            { 2 << 20, 64, 1 },     /* 32 KiB, one group: 320 pieces */
        };
        unsigned char *big = malloc(2 << 20);
        CHECK(big != NULL, "no memory for 2 MiB");
        for (int i = 0; big && i < (int)(sizeof cases / sizeof cases[0]); i++) {
            char why[1024] = "";
            int runs = stalled_round(rank, big, cases[i].total, cases[i].parts, "0", 60 + i, why, sizeof why);
            if (rank != 0)
                continue;
            size_t part = cases[i].total / (size_t)cases[i].parts;
            CHECK(runs >= 1, "%zu bytes in %d partitions, delta 0: no run sent early", cases[i].total,
                  cases[i].parts);
            char says[64];
            snprintf(says, sizeof says, "goes in %d eager pieces", cases[i].pieces);
            CHECK((strstr(why, says) != NULL) == (cases[i].pieces > 1) &&
                      (cases[i].pieces > 1 || !strstr(why, "eager pieces")),
                  "%zu-byte partitions: want %d pieces, why says '%s'", part, cases[i].pieces, why);
            CHECK(strstr(why, "1 message, planned at init"), "%zu bytes: the model planned another layout: '%s'",
                  cases[i].total, why);
        }
        free(big);
        ptest_builtin_loggp_remove(path);
        return ptest_finish("timer_split");
    }
    if (argc > 1 && (!strcmp(argv[1], "thread") || !strcmp(argv[1], "thread-quick"))) {
        char why[512] = "";
        int quick = strcmp(argv[1], "thread") ? 40 : 0;
        int split_rounds = thread_rounds(rank, buf, 1024, quick, why, sizeof why);
        if (quick) { /* and a group a split pays for, whose quick rounds arm nothing either */
            char big_why[1024] = "";
            int big_splits = thread_rounds(rank, buf, 256 << 10, quick, big_why, sizeof big_why);
            CHECK(rank != 0 || big_splits >= 1, "256 KiB in 64, stalled 5 ms after %d quick rounds: no round of %d "
                  "sent runs early", quick, THREAD_ROUNDS);
            CHECK(rank != 0 || strstr(big_why, "in the rounds that wake the progress thread"), "why says '%s'",
                  big_why);
        }
        if (rank == 0) {
            CHECK(split_rounds >= 1, "1 KiB in 64, stalled 5 ms by a sleep after %d quick rounds: no round of %d "
                  "sent runs early", quick, THREAD_ROUNDS);
            CHECK(strstr(why, "is split") && strstr(why, "only by the progress thread"), "why says '%s'", why);
            /* the model's delta for 16-byte partitions is well under 1 us: the floor holds it */
            const char *d = strstr(why, "no new mark for ");
            CHECK(d && strtod(d + strlen("no new mark for "), NULL) >= PTM_TIMER_DELTA_MIN_US,
                  "the default delta is below %.1f us: why says '%s'", PTM_TIMER_DELTA_MIN_US, why);
        }
        ptest_builtin_loggp_remove(path);
        return ptest_finish("timer_split");
    }
    const struct { size_t total; int parts; const char *delta; int splits; } cases[] = {
        { 1024, 64, NULL, 0 },        /* one eager group: a split only adds messages */
        { 4096, 2, NULL, 0 },
        { 1024, 64, "0", 1 },         /* a delta set: split as asked */
        { 256 << 10, 8, NULL, 1 },    /* 128 KiB ready early: worth its messages */
        { 64 << 10, 8, NULL, -1 },    /* MPI: eager pieces (a cut), never split, measured against 8 groups
                                         (one message per partition: nothing to split either); the fabric:
                                         one write, split */
        { 64 << 10, 64, NULL, -1 },   /* past the eager burst too, up to 64 partitions */
    };
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        int splits = cases[i].splits >= 0 ? cases[i].splits : fabric;
        char why[1024] = "";
        int runs = stalled_round(rank, buf, cases[i].total, cases[i].parts, cases[i].delta, 10 + i, why, sizeof why);
        if (rank != 0)
            continue;
        CHECK(splits ? runs >= 1 : runs == 0, "%zu bytes in %d, delta %s: %d runs sent early, expected %s",
              cases[i].total, cases[i].parts, cases[i].delta ? cases[i].delta : "default", runs,
              splits ? "some" : "none");
        /* Partita_Request_why says which, and over which transport: a group
         * too small for a split to pay is split at its last mark after a
         * laggard's pause (no progress thread here), never by these polls */
        const char *says = splits                ? "is split"
                           : cases[i].splits < 0 ? "measures it against one message per partition"
                                                 : "none runs: a group of at most 64 partitions whose marking took";
        /* ... and over the fabric that a split group goes alone in the
         * rounds after (announced ahead, as over MPI) */
        CHECK(strstr(why, says) && (!fabric || strstr(why, "a split group of at most 64 partitions goes alone")) &&
                  strstr(why, fabric ? "; transport fabric" : "; transport mpi"),
              "%zu bytes in %d, delta %s: why says '%s'", cases[i].total, cases[i].parts,
              cases[i].delta ? cases[i].delta : "default", why);
    }
    ptest_builtin_loggp_remove(path);
    return ptest_finish("timer_split");
}
