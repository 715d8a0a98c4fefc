/* partita's progress thread leaves the fabric to the fabric's own thread
 * (2 ranks, PARTITA_TRANSPORT=fabric, PARTITA_PROGRESS_THREAD=1). Between
 * rounds a fabric request stays alive, and the fabric's thread ("pt-fabric")
 * polls it; partita's thread ("pt-progress"), with nothing else to watch,
 * must wait idle (its idle wait is 1 ms), not poll every 20 us as it did:
 * on 2 cores the two polling threads slowed the ranks themselves. Counted
 * from outside: the thread's context switches over 200 ms of idleness
 * (/proc/self/task/TID/status). Polling every 20 us makes thousands; an idle
 * wait about 200. The bound is far from both; a loaded machine only makes
 * the count smaller. A second window is taken when the first exceeds it.
 * Linux only (exit 77 elsewhere).
 * Usage: partita-test-fabric-quiet-progress */
#include <time.h>

#include "../lib/ptest_threads.h"
#include "fabric_round.h"

#define IDLE_MS 200
#define MAX_SWITCHES 600 /* 3 per ms; polling every 20 us is >= 2000 on an idle machine */

/* Context switches of thread tid over IDLE_MS of idleness: voluntary and
 * involuntary in made[0], made[1]; their sum, or -1 when unreadable. */
static long idle_switches(long tid, long made[2])
{
    long before[2], after[2];
    ptest_thread_switches(tid, before);
    struct timespec idle = {0, IDLE_MS * 1000000L};
    nanosleep(&idle, NULL); /* the request alive, no round, no MPI call */
    ptest_thread_switches(tid, after);
    return ptest_switches_between(before, after, made);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("fabric-quiet-progress");
    if (argc != 1)
        ptest_usage("usage: partita-test-fabric-quiet-progress");
    ptest_require_proc_tasks(rank, "fabric-quiet-progress");
    MPI_Request req;
    fabric_pair_round(rank, 4, &req);
    long progress = ptest_thread_named_soon("pt-progress"), fabric = ptest_thread_named_soon("pt-fabric");
    CHECK(progress > 0, "rank %d: no thread named pt-progress (PARTITA_PROGRESS_THREAD=1)", rank);
    CHECK(fabric > 0, "rank %d: no thread named pt-fabric (the fabric's progress thread)", rank);
    MPI_Barrier(MPI_COMM_WORLD);
    /* Two windows: a passing disturbance (another job's burst) may spoil
     * one; a thread that polls spoils both. */
    long made[2][2], total[2] = {0, 0};
    for (int w = 0; w < 2 && (w == 0 || total[0] > MAX_SWITCHES); w++) {
        total[w] = idle_switches(progress, made[w]);
        CHECK(total[w] >= 0, "rank %d: cannot read the thread's context switches", rank);
        printf("fabric-quiet-progress: rank %d: partita's progress thread switched %ld times in %d ms (%ld voluntary, "
               "%ld not)\n",
               rank, total[w], IDLE_MS, made[w][0], made[w][1]);
    }
    long fewest = total[0] <= MAX_SWITCHES ? total[0] : total[1];
    CHECK(fewest <= MAX_SWITCHES,
          "rank %d: partita's progress thread switched %ld and %ld times in two windows of %d ms with only an idle "
          "fabric request alive (at most %d expected: it must not poll what the fabric's own thread polls)",
          rank, total[0], total[1], IDLE_MS, MAX_SWITCHES);
    OK(MPI_Request_free(&req));
    return ptest_finish("fabric-quiet-progress");
}
