/* The progress thread: background progress, then a short sleep, until stopped. */
#include "request/progress_thread.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "partita/partita.h"
#include "request/errors.h"
#include "request/nap.h"
#include "request/runtime.h"

static pthread_t thread;
/* A timer check due sooner than this is waited for by spinning: waking from
 * a sleep took 30-55 us on the 2-core VM this was tuned on (an idle virtual
 * CPU is descheduled), so a 20 us sleep often ended 50 us later and a
 * group ready after 2 us was flushed just before its laggard came. The spin
 * yields the CPU at each turn, and only lasts from a group's last mark to its
 * flush, delta apart. */
#define SPIN_NS 100000L
static atomic_int running;
static atomic_int started; /* the thread has reached its loop */
static long interval_ns = 20000;
#define IDLE_NS 1000000L
/* Waits so far, for Partita_Progress_thread_waits: at the regular interval, and up to IDLE_NS. */
static atomic_llong short_waits, long_waits;

/* The idle wait: a kick (a timer request armed, the thread being stopped)
 * ends it early. */
static pt_nap idle_nap;

void pt_progress_thread_kick(void) { pt_nap_kick(&idle_nap); }

static int idle_over(void) { return pt_background_watched() || !atomic_load(&running); }

static void idle_wait(void)
{
    pt_nap_wait(&idle_nap, IDLE_NS, idle_over);
    pt_nap_take_kick(&idle_nap);
}

static void spin_until(int64_t due)
{
    while (pt_now_ns() < due && atomic_load_explicit(&running, memory_order_relaxed))
        sched_yield();
}

int pt_progress_thread_wanted(void)
{
    const char *v = getenv("PARTITA_PROGRESS_THREAD");
    return v && !strcmp(v, "1"); /* any other value but 0 stops MPI_Init (settings.c) */
}

static void *loop(void *arg)
{
    (void)arg;
#ifdef __linux__
    /* Linux lets a sleep overrun by the thread's timer slack, 50 us by
     * default: more than the interval, and enough for a laggard of 100 us to
     * arrive before a stalled group is seen twice and flushed. */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
    prctl(PR_SET_NAME, "pt-progress", 0UL, 0UL, 0UL); /* its name in top -H, gdb and /proc */
#endif
    /* With nothing to watch (no armed timer request, orphan or set-up
     * waiter: between rounds, while the application computes before its
     * first MPI_Pready, or in a process that only receives) the thread waits
     * for a kick, or IDLE_NS at most: on a node with no core to spare,
     * waking every interval would take CPU from the ranks themselves. */
    struct timespec pause = { 0, interval_ns }, lazy = { 0, IDLE_NS };
    atomic_store_explicit(&started, 1, memory_order_release);
    while (atomic_load_explicit(&running, memory_order_acquire)) {
        pt_background_next next;
        pt_background_poll(&next);
        if (!pt_background_watched()) {
            atomic_fetch_add_explicit(&long_waits, 1, memory_order_relaxed);
            idle_wait();
        } else if (next.timer_due - pt_now_ns() < SPIN_NS) {
            spin_until(next.timer_due);
        } else {
            atomic_fetch_add_explicit(next.regular ? &short_waits : &long_waits, 1, memory_order_relaxed);
            nanosleep(next.regular ? &pause : &lazy, NULL); /* lazy: receives their application polls */
        }
    }
    return NULL;
}

int Partita_Progress_thread_waits(long long *short_count, long long *long_count)
{
    if (!short_count || !long_count)
        return pt_fail_null("Partita_Progress_thread_waits", short_count ? "long_count" : "short_count");
    *short_count = atomic_load_explicit(&short_waits, memory_order_relaxed);
    *long_count = atomic_load_explicit(&long_waits, memory_order_relaxed);
    return MPI_SUCCESS;
}

int pt_progress_interval_load(char *err, unsigned long errlen)
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
    return 0;
}

/* MPI_Init returns once the thread has reached its loop (or after
 * STARTED_MAX_NS, without it: the thread exists and comes later). On a busy
 * machine a thread that has never run waits behind every runnable one: on
 * the 2-core VM, with three copies of lib.stall.timer-lone-large running at
 * once, that test failed in 6 of 720 runs, the thread created in MPI_Init
 * not having polled 40-60 ms later, so the groups stalled 20 ms in the
 * program's first rounds went whole; with this wait in 3 of 1500
 * (docs/library.md, "The progress thread's schedule"). */
#define STARTED_MAX_NS 10000000000LL
static void wait_started(void)
{
    int64_t until = pt_now_ns() + STARTED_MAX_NS;
    while (!atomic_load_explicit(&started, memory_order_acquire) && pt_now_ns() < until)
        sched_yield();
}

int pt_progress_thread_start(char *err, unsigned long errlen)
{
    int level = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&level);
    if (level < MPI_THREAD_MULTIPLE) {
        snprintf(err, errlen, "PARTITA_PROGRESS_THREAD needs MPI_THREAD_MULTIPLE, the MPI library provides less");
        return -1;
    }
    if (pt_nap_init(&idle_nap) != 0) {
        snprintf(err, errlen, "could not create the progress thread's idle wait");
        return -1;
    }
    atomic_store(&running, 1);
    if (pthread_create(&thread, NULL, loop, NULL) != 0) {
        atomic_store(&running, 0);
        pt_nap_destroy(&idle_nap);
        snprintf(err, errlen, "could not create the progress thread");
        return -1;
    }
    wait_started();
    return 0;
}

void pt_progress_thread_stop(void)
{
    if (atomic_exchange(&running, 0)) {
        pt_progress_thread_kick();
        pthread_join(thread, NULL);
        pt_nap_destroy(&idle_nap);
    }
}
