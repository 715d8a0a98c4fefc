/* Helpers of the tests that count a library thread's wake-ups from outside
 * (Linux: /proc/self/task): the thread of this process with a given name,
 * and its context switches so far. A thread that polls every 20 us makes
 * thousands a second; one that waits up to 1 ms at a time, about a thousand
 * at most. */
#ifndef PARTITA_PTEST_THREADS_H
#define PARTITA_PTEST_THREADS_H

#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Elsewhere than on Linux: the test `name` says it is skipped (rank 0) and
 * every rank exits 77 (ctest's SKIP_RETURN_CODE). */
static inline void ptest_require_proc_tasks(int rank, const char *name)
{
#ifndef __linux__
    if (rank == 0)
        printf("%s: SKIPPED: needs Linux's /proc/self/task\n", name);
    MPI_Finalize();
    exit(77);
#else
    (void)rank, (void)name;
#endif
}

/* The thread of this process named `name`, or 0. */
static inline long ptest_thread_named(const char *name)
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
 * call that started it. */
static inline long ptest_thread_named_soon(const char *name)
{
    long tid = 0;
    struct timespec ms = {0, 1000000L};
    for (int i = 0; i < 5000 && !(tid = ptest_thread_named(name)); i++)
        nanosleep(&ms, NULL);
    return tid;
}

/* Thread tid's voluntary and involuntary context switches so far (-1: unknown). */
static inline void ptest_thread_switches(long tid, long out[2])
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

/* Switches made between two readings, voluntary and involuntary in made[];
 * their sum, or -1 when a reading failed. */
static inline long ptest_switches_between(const long before[2], const long after[2], long made[2])
{
    made[0] = after[0] - before[0], made[1] = after[1] - before[1];
    return before[0] < 0 || before[1] < 0 || after[0] < 0 || after[1] < 0 ? -1 : made[0] + made[1];
}

#endif
