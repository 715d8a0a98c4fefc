/* Between rounds a fabric request stays alive, and neither progress thread
 * may poll it (2 ranks, PARTITA_TRANSPORT=fabric): partita's thread
 * ("pt-progress", with PARTITA_PROGRESS_THREAD=1) leaves the fabric to the
 * fabric's own thread and waits idle (its idle wait is 1 ms), not every
 * 20 us as it did; the fabric's thread ("pt-fabric") polls every 100 us only
 * while a round is open or something is owed, and otherwise naps (5 ms at
 * most, woken by MPI_Start), not every 100 us for as long as the request
 * lives as it did. On 2 cores polling threads slow the ranks themselves, and
 * an idle program should not burn CPU. Counted from outside: each thread's
 * context switches over 200 ms of idleness (/proc/self/task/TID/status).
 * Polling every 20 or 100 us makes thousands; an idle wait or a nap about
 * 200 and 40. The bound is far from both; a loaded machine only makes the
 * count smaller. A second window is taken when the first exceeds it.
 * Then a round that only the fabric's thread can move after its nap
 * (round_while_asleep). Run without PARTITA_PROGRESS_THREAD=1 for that
 * check to mean it: partita's thread would move the round too.
 * Linux only (exit 77 elsewhere).
 * Usage: partita-test-fabric-quiet-progress */
#include <time.h>

#include "fabric_round.h"
#include "../lib/ptest_threads.h"

#define IDLE_MS 200
#define MAX_SWITCHES 600 /* 3 per ms; polling every 20 us is >= 2000 on an idle machine */

/* The thread named `name`, waiting up to 5 s for it: a thread names itself
 * when it first runs, which on a loaded machine may come well after the
 * round that started it. */
static long thread_named_soon(const char *name)
{
    long tid = 0;
    struct timespec ms = {0, 1000000L};
    for (int i = 0; i < 5000 && !(tid = ptest_thread_named(name)); i++)
        nanosleep(&ms, NULL);
    return tid;
}

/* Thread tid's voluntary and involuntary context switches so far (-1: unknown). */
static void switches(long tid, long out[2])
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%ld/status", tid);
    FILE *f = fopen(path, "r");
    out[0] = out[1] = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "voluntary_ctxt_switches: %ld", &out[0]) != 1)
            sscanf(line, "nonvoluntary_ctxt_switches: %ld", &out[1]);
    if (f)
        fclose(f);
}

/* Context switches of thread tid over IDLE_MS of idleness: voluntary and
 * involuntary in made[0], made[1]; their sum, or -1 when unreadable. */
static long idle_switches(long tid, long made[2])
{
    long before[2], after[2];
    switches(tid, before);
    struct timespec idle = {0, IDLE_MS * 1000000L};
    nanosleep(&idle, NULL); /* the request alive, no round, no MPI call */
    switches(tid, after);
    made[0] = after[0] - before[0], made[1] = after[1] - before[1];
    return before[0] < 0 || before[1] < 0 || after[0] < 0 || after[1] < 0 ? -1 : made[0] + made[1];
}

/* Checks that thread `name` (tid) did not poll over two idle windows at most. */
static void expect_quiet(int rank, const char *name, long tid, const char *why)
{
    /* Two windows: a passing disturbance (another job's burst) may spoil
     * one; a thread that polls spoils both. */
    long made[2][2], total[2] = {0, 0};
    for (int w = 0; w < 2 && (w == 0 || total[0] > MAX_SWITCHES); w++) {
        total[w] = idle_switches(tid, made[w]);
        CHECK(total[w] >= 0, "rank %d: cannot read the %s thread's context switches", rank, name);
        printf("fabric-quiet-progress: rank %d: %s switched %ld times in %d ms (%ld voluntary, %ld not)\n", rank,
               name, total[w], IDLE_MS, made[w][0], made[w][1]);
    }
    long fewest = total[0] <= MAX_SWITCHES ? total[0] : total[1];
    CHECK(fewest <= MAX_SWITCHES,
          "rank %d: %s switched %ld and %ld times in two windows of %d ms with only an idle fabric request alive "
          "(at most %d expected: %s)",
          rank, name, total[0], total[1], IDLE_MS, MAX_SWITCHES, why);
}

/* After the idle windows: a round of 16 KiB that only the sender's fabric
 * thread can move. The sender marks every partition at once and sleeps
 * SLEEP_MS, making no MPI call; the receiver starts the round (its credit)
 * LATE_MS after the marks, then sleeps too. So the write waits for a
 * credit that comes while the sender's application sleeps, and the
 * receive buffer must hold the data before the receiver calls MPI again:
 * the fabric's thread must wake from the nap it took while idle. */
#define SLEEP_MS 300
#define LATE_MS 50
static void round_while_asleep(int rank)
{
    enum { N = 2048 };
    static double buf[N];
    for (int i = 0; i < N; i++)
        buf[i] = rank == 0 ? 1000.0 + i : -1.0;
    MPI_Request req;
    ptest_pair_request(rank, buf, 4, N / 4, MPI_DOUBLE, 5, MPI_INFO_NULL, &req);
    OK(MPI_Start(&req));
    if (rank == 0)
        OK(MPI_Pready_range(0, 3, req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE)); /* round 1 connects both sides */
    struct timespec idle = {0, IDLE_MS * 1000000L}, late = {0, LATE_MS * 1000000L},
                    asleep = {0, SLEEP_MS * 1000000L};
    nanosleep(&idle, NULL); /* long enough for the fabric's thread to nap */
    for (int i = 0; i < N; i++)
        buf[i] = rank == 0 ? 2000.0 + i : -1.0;
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1)
        nanosleep(&late, NULL);
    OK(MPI_Start(&req));
    if (rank == 0)
        OK(MPI_Pready_range(0, 3, req));
    nanosleep(&asleep, NULL);
    if (rank == 1) {
        int bad = 0;
        for (int i = 0; i < N; i++)
            bad += *(volatile double *)&buf[i] != 2000.0 + i;
        CHECK(!bad, "rank 1: %d of %d values not in after %d ms in which neither rank made an MPI call (the sender's "
              "fabric thread must post a write whose credit comes after it napped)", bad, N, SLEEP_MS);
    }
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    OK(MPI_Request_free(&req));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank_no_args("fabric-quiet-progress", "fabric-quiet-progress", argc);
#ifndef __linux__
    if (rank == 0)
        printf("fabric-quiet-progress: SKIPPED: needs Linux's /proc/self/task\n");
    MPI_Finalize();
    return 77;
#endif
    MPI_Request req;
    fabric_pair_round(rank, 4, &req);
    const char *wanted = getenv("PARTITA_PROGRESS_THREAD");
    int partita_thread = wanted && !strcmp(wanted, "1");
    long progress = partita_thread ? thread_named_soon("pt-progress") : 0, fabric = thread_named_soon("pt-fabric");
    CHECK(progress > 0 || !partita_thread, "rank %d: no thread named pt-progress (PARTITA_PROGRESS_THREAD=1)", rank);
    CHECK(fabric > 0, "rank %d: no thread named pt-fabric (the fabric's progress thread)", rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (partita_thread)
        expect_quiet(rank, "partita's progress thread", progress,
                     "it must not poll what the fabric's own thread polls");
    expect_quiet(rank, "the fabric's progress thread", fabric, "with no round open and nothing owed it naps");
    MPI_Barrier(MPI_COMM_WORLD);
    round_while_asleep(rank);
    OK(MPI_Request_free(&req));
    return ptest_finish("fabric-quiet-progress");
}
