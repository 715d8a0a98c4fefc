/* The waiting receive requests, polled with trylock only: a poll never makes
 * a caller wait for another thread. */
#include "setup_waiters.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "request.h"

typedef struct waiter {
    struct pt_request *req;
    struct waiter *next;
} waiter;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static waiter *list;
static atomic_int count;

void pt_waiters_add(struct pt_request *req)
{
    waiter *w = malloc(sizeof *w);
    if (!w)
        return; /* the request's own calls still process its set-up message */
    w->req = req;
    pthread_mutex_lock(&lock);
    w->next = list;
    list = w;
    pthread_mutex_unlock(&lock);
    atomic_fetch_add(&count, 1);
}

void pt_waiters_remove(struct pt_request *req)
{
    pthread_mutex_lock(&lock);
    for (waiter **p = &list; *p;) {
        if ((*p)->req == req) {
            waiter *w = *p;
            *p = w->next;
            free(w);
            atomic_fetch_sub(&count, 1);
        } else {
            p = &(*p)->next;
        }
    }
    pthread_mutex_unlock(&lock);
}

int pt_waiters_pending(void) { return atomic_load_explicit(&count, memory_order_relaxed) > 0; }

void pt_waiters_poll(void)
{
    if (atomic_load_explicit(&count, memory_order_relaxed) == 0 || pthread_mutex_trylock(&lock))
        return;
    for (waiter **p = &list; *p;) {
        pt_request *req = (*p)->req;
        int settled = 0;
        if (pthread_mutex_trylock(&req->progress_lock) == 0) {
            int active = atomic_load_explicit(&req->active, memory_order_acquire);
            if (active)
                pt_recv_progress(req, -1, -1);
            /* Done here once set up, unless runs of split groups may still come
             * this round (timer policy): those wait for the round to end. */
            settled = req->u.r.ready && (!req->u.r.split || !active || pt_recv_round_done(req));
            pthread_mutex_unlock(&req->progress_lock);
        }
        if (settled) {
            waiter *w = *p;
            *p = w->next;
            free(w);
            atomic_fetch_sub(&count, 1);
        } else {
            p = &(*p)->next;
        }
    }
    pthread_mutex_unlock(&lock);
}
