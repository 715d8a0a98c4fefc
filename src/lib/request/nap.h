/* A background thread's idle wait that another thread's kick ends early:
 * partita's progress thread (idle between rounds) and the fabric's (between
 * rounds of its requests) sleep on one of these instead of waking every few
 * microseconds, and MPI_Start or an armed timer kicks them. */
#ifndef PARTITA_NAP_H
#define PARTITA_NAP_H

#include <pthread.h>
#include <stdatomic.h>

typedef struct pt_nap {
    pthread_mutex_t lock;
    pthread_cond_t cond; /* times out on CLOCK_MONOTONIC */
    atomic_int napping;  /* the thread is in (or entering) its wait */
    atomic_int kicked;   /* a kick not taken yet */
} pt_nap;

/* 0, or an errno of the condition variable's creation. */
int pt_nap_init(pt_nap *n);
void pt_nap_destroy(pt_nap *n);
/* Ends the wait now, or the next one at once: the kick stays until taken. */
void pt_nap_kick(pt_nap *n);
/* Waits up to ns nanoseconds, until kicked or until done() says so (looked
 * at before each wait, under the lock a kick signals with). */
void pt_nap_wait(pt_nap *n, long ns, int (*done)(void));
/* Whether a kick came since the last take (and clears it). */
int pt_nap_take_kick(pt_nap *n);

#endif
