/* The timer-policy send requests (timer_registry.h), on a shared request list. */
#include "flush/timer_registry.h"

#include "flush/flush.h"
#include "flush/serial_atomics.h"
#include "request/clock.h"
#include "request/request.h"
#include "request/request_list.h"
#include "transport/transport.h"

static pt_request_list timers = PT_REQUEST_LIST_INIT;

/* Called when a request is armed (the progress thread's kick): registered
 * by the lifecycle, which the flush layer does not call up into. */
static void (*_Atomic on_arm)(void);

void pt_timers_on_arm(void (*wake)(void)) { atomic_store(&on_arm, wake); }

static atomic_int armed;     /* requests armed */
static atomic_int undrained; /* requests with early sends to drain */

/* The request's early sends are (to be) drained: off the count. */
static void drained(struct pt_request *req)
{
    if (pt_exchange(&req->u.s.undrained, 0, req->serial) == 1)
        pt_fetch_add(&undrained, -1, req->serial);
}

/* The request has early sends that may not be complete: on the count. An
 * exchange, not a load first: a drain clears the flag before it looks at
 * the sends, so a send handed over after that look sets it again. */
static void undrained_now(struct pt_request *req)
{
    if (pt_exchange(&req->u.s.undrained, 1, req->serial) == 0)
        pt_fetch_add(&undrained, 1, req->serial);
}

void pt_timers_register(struct pt_request *req) { pt_list_add(&timers, &req->listing, req); }
void pt_timers_unregister(struct pt_request *req)
{
    pt_list_remove(&timers, &req->listing);
    pt_timer_disarm(req);
    drained(req);
}
void pt_timers_hold(void) { pt_list_hold(&timers); }
void pt_timers_release(void) { pt_list_release(&timers); }

int pt_timers_pending(void) { return atomic_load(&armed) > 0 || atomic_load(&undrained) > 0; }

void pt_timer_arm(struct pt_request *req)
{
    if (pt_exchange(&req->u.s.armed, 1, req->serial) == 0) {
        pt_fetch_add(&armed, 1, req->serial);
        void (*wake)(void) = atomic_load(&on_arm);
        if (wake && atomic_load_explicit(&req->u.s.watch_rounds, memory_order_relaxed) > 0)
            wake();
    }
}

void pt_timer_sent_early(struct pt_request *req)
{
    pt_send_side *s = &req->u.s;
    if (!req->tp_ops->send_drain)
        return; /* a transport that holds nothing back (the fabric's) */
    atomic_store_explicit(&s->early_ticks, pt_ticks(), memory_order_relaxed);
    undrained_now(req);
}

void pt_timer_disarm(struct pt_request *req)
{
    if (pt_exchange(&req->u.s.armed, 0, req->serial) == 1)
        pt_fetch_add(&armed, -1, req->serial);
}

void pt_timer_begun(struct pt_request *req)
{
    if (req->u.s.unarmed_round)
        return;
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
    if (req->u.s.unarmed_round)
        return; /* nothing was armed */
    if (pt_fetch_add(&req->u.s.open_groups, -1, req->serial) == 1)
        pt_timer_disarm(req);
}

/* Flush the overdue groups of an armed request; it stays listed until freed.
 * The poll runs in the calling thread: the earliest due check is collected
 * per thread. */
static _Thread_local int64_t poll_due __attribute__((tls_model("initial-exec")));

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

/* A request's early sends are drained once none has been handed over for
 * PT_DRAIN_QUIET_NS: while threads still mark, their own sends drive MPI,
 * and a drain beside them held the transport's lock that each of their
 * sends takes (a laggard's marks, 1-2 us apart, came unevenly); until then
 * the progress thread sleeps its interval between looks rather than turn
 * beside a laggard's last send and the application's wait. While the sends
 * move they are looked at again every PT_DRAIN_RECHECK_NS: the poller turns
 * (yielding the CPU) rather than sleeps. */
#define PT_DRAIN_QUIET_NS 10000
#define PT_DRAIN_RECHECK_NS 2000
/* Sends that did not move at a look wait for the receiver (a rendezvous
 * handshake it has not answered): looking again at once would take a core
 * for the whole pause, as the RUNS recheck once did (timer_flush.c:
 * PT_TIMER_RECHECK_NS), so the next look is this far off, past the progress
 * thread's spin window: it sleeps its regular interval. A safeguard: with
 * libpartita's progress thread on both ranks the receiver's answers the
 * handshake while its application computes (lib.progress-thread.quiet-sender
 * waited 3,657-3,727 times in 100 ms with the receiver asleep, with and
 * without this rule). */
#define PT_DRAIN_STALLED_NS 200000

static void drain(pt_request *req)
{
    int64_t since = pt_ticks() - atomic_load_explicit(&req->u.s.early_ticks, memory_order_relaxed);
    int64_t wait_ns = PT_DRAIN_RECHECK_NS;
    if (since < pt_ticks_from_ns(PT_DRAIN_QUIET_NS)) {
        wait_ns = PT_DRAIN_STALLED_NS; /* past the spin window: the thread sleeps its interval */
    } else {
        drained(req); /* before the look: a send handed over meanwhile counts again */
        int moved = req->tp_ops->send_drain(req);
        if (moved > 0)
            return;
        undrained_now(req);
        if (moved < 0)
            wait_ns = PT_DRAIN_STALLED_NS;
    }
    int64_t due = pt_now_ns() + wait_ns;
    poll_due = due < poll_due ? due : poll_due;
}

static int visit(pt_request *req)
{
    if (atomic_load_explicit(&req->u.s.undrained, memory_order_acquire))
        drain(req);
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
