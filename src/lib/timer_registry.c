/* The timer-policy send requests (timer_registry.h), on a shared request list. */
#include "timer_registry.h"

#include "request.h"
#include "request_list.h"

static pt_request_list timers = PT_REQUEST_LIST_INIT;

void pt_timers_register(struct pt_request *req) { pt_list_add(&timers, req); }
void pt_timers_unregister(struct pt_request *req) { pt_list_remove(&timers, req); }
int pt_timers_pending(void) { return pt_list_pending(&timers); }

/* Flush the overdue groups of an active request; it stays listed until freed. */
static int visit(pt_request *req)
{
    if (atomic_load_explicit(&req->active, memory_order_acquire))
        pt_timer_flush_due(req);
    return 0;
}

void pt_timers_poll(void) { pt_list_poll(&timers, visit); }
