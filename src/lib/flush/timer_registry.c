/* The timer-policy send requests (timer_registry.h), on a shared request list. */
#include "flush/timer_registry.h"

#include "flush/flush.h"
#include "flush/serial_atomics.h"
#include "request/request.h"
#include "request/request_list.h"

static pt_request_list timers = PT_REQUEST_LIST_INIT;

/* Called when a request is armed (the progress thread's kick): registered
 * by the lifecycle, which the flush layer does not call up into. */
static void (*_Atomic on_arm)(void);

void pt_timers_on_arm(void (*wake)(void)) { atomic_store(&on_arm, wake); }

void pt_timers_register(struct pt_request *req) { pt_list_add(&timers, req); }
void pt_timers_unregister(struct pt_request *req) { pt_list_remove(&timers, req); }
void pt_timers_hold(void) { pt_list_hold(&timers); }
void pt_timers_release(void) { pt_list_release(&timers); }
static atomic_int armed; /* requests armed */

int pt_timers_pending(void) { return atomic_load(&armed) > 0; }

void pt_timer_arm(struct pt_request *req)
{
    if (pt_exchange(&req->u.s.armed, 1, req->serial) == 0) {
        pt_fetch_add(&armed, 1, req->serial);
        void (*wake)(void) = atomic_load(&on_arm);
        if (wake && atomic_load_explicit(&req->u.s.watch_rounds, memory_order_relaxed) > 0)
            wake();
    }
}

void pt_timer_disarm(struct pt_request *req)
{
    if (pt_exchange(&req->u.s.armed, 0, req->serial) == 1)
        pt_fetch_add(&armed, -1, req->serial);
}

void pt_timer_begun(struct pt_request *req)
{
    /* Pairs with the fence in unwatch(): either that poll's second look saw
     * this mark, or this load sees the disarming and arms again. Serial
     * requests have no progress thread (it needs MPI_THREAD_MULTIPLE). */
    if (!req->serial)
        atomic_thread_fence(memory_order_seq_cst);
    if (!atomic_load_explicit(&req->u.s.armed, memory_order_relaxed))
        pt_timer_arm(req);
}

/* A split group sends every later partition at once, a whole one is gone:
 * neither can be overdue any more. */
void pt_timer_group_closed(struct pt_request *req)
{
    if (pt_fetch_add(&req->u.s.open_groups, -1, req->serial) == 1)
        pt_timer_disarm(req);
}

/* Flush the overdue groups of an armed request; it stays listed until freed.
 * The poll runs in the calling thread: the earliest due check is collected
 * per thread. */
static _Thread_local int64_t poll_due;

/* Nothing of req to watch (no group begun and still open): disarm it, so
 * that the progress thread can sleep until a mark begins a group, then look
 * again for a mark that raced with the disarming. */
static int64_t unwatch(pt_request *req)
{
    pt_timer_disarm(req);
    atomic_thread_fence(memory_order_seq_cst);
    int64_t due = pt_timer_flush_due(req);
    if (due != INT64_MAX)
        pt_timer_arm(req);
    return due;
}

static int visit(pt_request *req)
{
    if (atomic_load_explicit(&req->u.s.armed, memory_order_acquire)) {
        int64_t due = pt_timer_flush_due(req);
        if (due == INT64_MAX)
            due = unwatch(req);
        poll_due = due < poll_due ? due : poll_due;
    }
    return 0;
}

int64_t pt_timers_poll(void)
{
    poll_due = INT64_MAX;
    if (pt_timers_pending())
        pt_list_poll(&timers, visit);
    return poll_due;
}
