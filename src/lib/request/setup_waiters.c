/* The waiting receive requests (setup_waiters.h), on a shared request list. */
#include "request/setup_waiters.h"

#include "request/request.h"
#include "request/request_list.h"

static pt_request_list waiters = PT_REQUEST_LIST_INIT;

void pt_waiters_add(struct pt_request *req) { pt_list_add(&waiters, &req->listing, req); }
void pt_waiters_remove(struct pt_request *req) { pt_list_remove(&waiters, &req->listing); }
int pt_waiters_pending(void) { return pt_list_pending(&waiters); }

/* Whether this thread's poll met a receive that needs background help, and
 * the request its caller progresses right after the poll (initial-exec: read
 * on every visit, and a general-dynamic variable costs a look-up call each). */
static _Thread_local int poll_help __attribute__((tls_model("initial-exec")));
static _Thread_local const pt_request *poll_own __attribute__((tls_model("initial-exec")));

/* Progress one waiting receive; 1 once it no longer needs the list. */
static int visit(pt_request *req)
{
    /* Its caller's own progress comes next (MPI_Parrived, Test, Wait): a
     * second lock and look here made each MPI_Parrived of a receive that may
     * split cost more than one of `none`'s; the round's completion takes it
     * off the list (request.c: progress_step). */
    if (req == poll_own)
        return 0;
    int settled = 0;
    if (pt_progress_trylock(req) == 0) {
        int active = atomic_load_explicit(&req->active, memory_order_acquire);
        /* Set up, and the application polls it: leave it to the application. */
        if (active && !(req->u.r.ready && pt_recv_app_polling(req))) {
            pt_recv_progress(req, NULL);
            poll_help = 1;
        }
        /* Done here once set up, unless runs of split groups may still come
         * this round (timer policy): those wait for the round to end. */
        settled = req->u.r.ready && !req->u.r.deferred &&
                  (!active || !pt_recv_runs_may_come(req) || pt_recv_round_done(req));
        pt_progress_unlock(req);
    }
    /* Busy: another thread is progressing it now, as an application that
     * polls does, so the regular interval is not asked for. A split receive
     * stays listed all round, and an application polling MPI_Parrived in a
     * loop holds the lock most of the time: asking then kept the progress
     * thread polling MPI every 20 us through a long transfer, on a machine
     * with no idle core (the timer at 8 MiB in 64 partitions under a
     * laggard: 0.73-1.0 of `none`'s speed, 1.0-1.1 without the thread). */
    return settled;
}

int pt_waiters_poll(const pt_request *own)
{
    poll_help = 0;
    /* The caller's own request alone on the list (a receive that may split,
     * polled by its application): nothing for the poll to do, and its
     * trylock was a good part of what each MPI_Parrived cost. */
    if (own && pt_list_only(&waiters, &own->listing))
        return 0;
    poll_own = own;
    pt_list_poll(&waiters, visit);
    return poll_help;
}
