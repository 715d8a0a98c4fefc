/* Send requests under the timer policy, so that any partita call in the
 * process (Pready, Parrived, Test, Wait on any request) can flush their
 * overdue groups, and an optional progress thread can too. A request is
 * armed from the first MPI_Pready of a round until every group is issued
 * whole or split (a split group sends each later partition at once): only
 * then can a group be overdue, and only then is there work to poll. */
#ifndef PARTITA_TIMER_REGISTRY_H
#define PARTITA_TIMER_REGISTRY_H

#include <stdint.h>

struct pt_request;

void pt_timers_register(struct pt_request *req);
void pt_timers_unregister(struct pt_request *req);
/* Flush what is overdue; returns when the next check is due (CLOCK_MONOTONIC
 * ns; INT64_MAX: nothing pending, or another thread was polling). */
int64_t pt_timers_poll(void);
int pt_timers_pending(void); /* some request is armed */
void pt_timer_arm(struct pt_request *req);    /* first mark of the round (wakes the progress thread) */
void pt_timer_disarm(struct pt_request *req); /* no group open any more, or the request goes away */
void pt_timer_group_closed(struct pt_request *req); /* a group issued whole or split: disarms after the last */

#endif
