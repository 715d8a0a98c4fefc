/* The flush layer, sender side: WHEN a message or a run of ready partitions
 * goes. A group's message goes at its last mark (marking.c: MPI_Pready*);
 * under the timer policy a group whose marking stalls goes early in runs
 * (timer_flush.c), watched through the process-wide registry
 * (timer_registry.h). What goes is handed to the request's transport
 * (transport/transport.h). */
#ifndef PARTITA_FLUSH_H
#define PARTITA_FLUSH_H

#include <stdatomic.h>
#include <stdint.h>

#include "request/request.h"

/* A pause this long between two hand-overs of a round's groups means a
 * laggard held the rest of the round back (not a preempted marking thread,
 * nor a long send): the timer splits a group that begins after it
 * (timer_flush.c), and the adaptive policy does not charge the round for
 * hand-overs made before it (marking.c). */
#define PT_LAGGARD_PAUSE_NS 25000

/* The messages are planned (req->u.s: ntrans, cut, bound): build the marking
 * state, and the timer's when may_split (the timer policy, or the adaptive
 * policy's split candidate) and splitting the groups can pay (then the
 * request is registered). Reports its errors as MPI_Psend_init's. */
int pt_flush_init(pt_request *req, int may_split);
/* A round begins: nothing is marked; starts the transport's round too. */
void pt_flush_start(pt_request *req);
/* Off the timers' list (their polls read the transport's state too, to
 * drain early sends): before the transport's state goes. */
void pt_flush_detach(pt_request *req);
/* The marking and timer state; the request is off the timers' list already
 * (pt_flush_detach, or the adaptive policy's one unregistering for all its
 * layouts). */
void pt_flush_destroy(pt_request *req);
/* Every group of the round has been handed to the transport. */
static inline int pt_flush_all_issued(pt_request *req)
{
    return atomic_load_explicit(&req->u.s.groups_done, memory_order_acquire) >= req->u.s.ntrans;
}
/* Timer: flush the overdue groups; returns when a check is next due
 * (CLOCK_MONOTONIC ns; INT64_MAX: nothing pending). */
int64_t pt_timer_flush_due(pt_request *req);

#endif
