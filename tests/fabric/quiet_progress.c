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
#include <dirent.h>
#include <time.h>

#include "fabric_round.h"

#define IDLE_MS 200
#define MAX_SWITCHES 600 /* 3 per ms; polling every 20 us is >= 2000 on an idle machine */

/* The thread of this process named `name`, or 0. */
static long thread_named(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    long tid = 0;
    while (d && !tid && (e = readdir(d))) {
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(comm, sizeof comm, f) && !strncmp(comm, name, strlen(name)) && comm[strlen(name)] == '\n')
            tid = atol(e->d_name);
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return tid;
}

/* The thread named `name`, waiting up to 5 s for it: a thread names itself
 * when it first runs, which on a loaded machine may come well after the
 * round that started it. */
static long thread_named_soon(const char *name)
{
    long tid = 0;
    struct timespec ms = {0, 1000000L};
    for (int i = 0; i < 5000 && !(tid = thread_named(name)); i++)
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

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("fabric-quiet-progress");
    if (argc != 1)
        ptest_usage("usage: partita-test-fabric-quiet-progress");
#ifndef __linux__
    if (rank == 0)
        printf("fabric-quiet-progress: SKIPPED: needs Linux's /proc/self/task\n");
    MPI_Finalize();
    return 77;
#endif
    MPI_Request req;
    fabric_pair_round(rank, 4, &req);
    long progress = thread_named_soon("pt-progress"), fabric = thread_named_soon("pt-fabric");
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
