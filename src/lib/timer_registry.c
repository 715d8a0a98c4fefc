/* A small list of timer-policy send requests; polling skips when another
 * thread is already at it (trylock), so it never makes a caller wait. */
#include "timer_registry.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "request.h"

typedef struct entry {
    struct pt_request *req;
    struct entry *next;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *list;
static atomic_int count;

void pt_timers_register(struct pt_request *req)
{
    entry *e = malloc(sizeof *e);
    if (!e)
        return; /* the request's own Test/Wait still flush it */
    e->req = req;
    pthread_mutex_lock(&lock);
    e->next = list;
    list = e;
    pthread_mutex_unlock(&lock);
    atomic_fetch_add(&count, 1);
}

void pt_timers_unregister(struct pt_request *req)
{
    pthread_mutex_lock(&lock);
    for (entry **p = &list; *p; p = &(*p)->next) {
        if ((*p)->req == req) {
            entry *e = *p;
            *p = e->next;
            free(e);
            atomic_fetch_sub(&count, 1);
            break;
        }
    }
    pthread_mutex_unlock(&lock);
}

int pt_timers_pending(void) { return atomic_load_explicit(&count, memory_order_relaxed) > 0; }

void pt_timers_poll(void)
{
    if (atomic_load_explicit(&count, memory_order_relaxed) == 0 || pthread_mutex_trylock(&lock))
        return;
    for (entry *e = list; e; e = e->next)
        if (atomic_load_explicit(&e->req->active, memory_order_acquire))
            pt_timer_flush_due(e->req);
    pthread_mutex_unlock(&lock);
}
