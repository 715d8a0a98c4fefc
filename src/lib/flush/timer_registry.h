/* Send requests under the timer policy, so that any partita call in the
 * process (Pready, Parrived, Test, Wait on any request) can flush their
 * overdue groups, and an optional progress thread can too. A request is
 * armed while one of its groups is begun (some partitions marked) and still
 * open, neither issued whole nor split (a split group sends each later
 * partition at once): only such a group can become overdue. The mark that
 * begins a group arms the request; a poll that finds nothing begun and open
 * disarms it, so the progress thread sleeps until the next group is begun
 * instead of polling a request that can have nothing overdue (a round whose
 * prompt groups have gone whole while the rest wait for a late thread's
 * first mark). */
#ifndef PARTITA_TIMER_REGISTRY_H
#define PARTITA_TIMER_REGISTRY_H

#include <stdint.h>

struct pt_request;

/* wake is called whenever a request becomes armed (the progress thread's kick). */
void pt_timers_on_arm(void (*wake)(void));
void pt_timers_register(struct pt_request *req);
void pt_timers_unregister(struct pt_request *req);
/* A registered request changes its layout (the adaptive policy's swap at
 * MPI_Start): polls, which read the live layout's groups, wait meanwhile. */
void pt_timers_hold(void);
void pt_timers_release(void);
/* Flush what is overdue; returns when the next check is due (CLOCK_MONOTONIC
 * ns; INT64_MAX: nothing pending, or another thread was polling). */
int64_t pt_timers_poll(void);
int pt_timers_pending(void); /* some request is armed */
void pt_timer_arm(struct pt_request *req);    /* a group begun (wakes the progress thread) */
/* A mark began a group (a chunk of it): arm the request unless it is armed. */
void pt_timer_begun(struct pt_request *req);
void pt_timer_disarm(struct pt_request *req); /* nothing begun and open, or the request goes away */
void pt_timer_group_closed(struct pt_request *req); /* a group issued whole or split: disarms after the last */

#endif
