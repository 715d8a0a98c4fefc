/* The progress thread: background progress, then a short sleep, until stopped. */
#include "progress_thread.h"

#include <errno.h>
#include <pthread.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "runtime.h"

static pthread_t thread;
static atomic_int running;
static long interval_ns = 20000;
#define IDLE_NS 1000000L

int pt_progress_thread_wanted(void)
{
    const char *v = getenv("PARTITA_PROGRESS_THREAD");
    return v && (!strcmp(v, "1") || !strcmp(v, "yes") || !strcmp(v, "on"));
}

static void *loop(void *arg)
{
    (void)arg;
#ifdef __linux__
    /* Linux lets a sleep overrun by the thread's timer slack, 50 us by
     * default: more than the interval, and enough for a laggard of 100 us to
     * arrive before a stalled group is seen twice and flushed. */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
#endif
    /* With nothing to watch (no timer request, orphan or set-up waiter: a
     * process that only receives, say) the thread naps for IDLE_NS instead:
     * on a node with no core to spare, waking every interval would take CPU
     * from the ranks themselves. */
    struct timespec pause = { 0, interval_ns }, idle = { 0, IDLE_NS };
    while (atomic_load_explicit(&running, memory_order_acquire)) {
        pt_background_progress();
        nanosleep(pt_background_work() ? &pause : &idle, NULL);
    }
    return NULL;
}

int pt_progress_thread_start(char *err, unsigned long errlen)
{
    const char *v = getenv("PARTITA_PROGRESS_US");
    if (v && *v) {
        char *end;
        errno = 0;
        double us = strtod(v, &end);
        if (end == v || *end || errno || !(us >= 1 && us <= 1e6)) {
            snprintf(err, errlen, "PARTITA_PROGRESS_US='%s' is not a number of microseconds in [1, 1e6]", v);
            return -1;
        }
        interval_ns = (long)(us * 1e3);
    }
    int level = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&level);
    if (level < MPI_THREAD_MULTIPLE) {
        snprintf(err, errlen, "PARTITA_PROGRESS_THREAD needs MPI_THREAD_MULTIPLE, the MPI library provides less");
        return -1;
    }
    atomic_store(&running, 1);
    if (pthread_create(&thread, NULL, loop, NULL) != 0) {
        atomic_store(&running, 0);
        snprintf(err, errlen, "could not create the progress thread");
        return -1;
    }
    return 0;
}

void pt_progress_thread_stop(void)
{
    if (atomic_exchange(&running, 0))
        pthread_join(thread, NULL);
}
