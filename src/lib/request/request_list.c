#include "request/request_list.h"

#include <stdlib.h>

typedef struct pt_list_entry {
    struct pt_request *req;
    struct pt_list_entry *next;
} pt_list_entry;

static int serial_process;

void pt_lists_serial(int serial) { serial_process = serial; }

static void lock_list(pt_request_list *l)
{
    if (!serial_process)
        pthread_mutex_lock(&l->lock);
}

static void unlock_list(pt_request_list *l)
{
    if (!serial_process)
        pthread_mutex_unlock(&l->lock);
}

void pt_list_add(pt_request_list *l, struct pt_request *req)
{
    pt_list_entry *e = malloc(sizeof *e);
    if (!e)
        return;
    e->req = req;
    lock_list(l);
    e->next = l->head;
    l->head = e;
    unlock_list(l);
    atomic_fetch_add(&l->count, 1);
}

/* Unlink *p; caller holds the lock. */
static void unlink_entry(pt_request_list *l, pt_list_entry **p)
{
    pt_list_entry *e = *p;
    *p = e->next;
    free(e);
    atomic_fetch_sub(&l->count, 1);
}

void pt_list_remove(pt_request_list *l, struct pt_request *req)
{
    lock_list(l);
    for (pt_list_entry **p = &l->head; *p;) {
        if ((*p)->req == req)
            unlink_entry(l, p);
        else
            p = &(*p)->next;
    }
    unlock_list(l);
}

void pt_list_hold(pt_request_list *l) { lock_list(l); }
void pt_list_release(pt_request_list *l) { unlock_list(l); }

int pt_list_pending(pt_request_list *l) { return atomic_load_explicit(&l->count, memory_order_relaxed) > 0; }

void pt_list_poll(pt_request_list *l, int (*visit)(struct pt_request *req))
{
    if (!pt_list_pending(l))
        return;
    if (serial_process) {
        if (l->polling)
            return;
        l->polling = 1;
    } else if (pthread_mutex_trylock(&l->lock)) {
        return;
    }
    for (pt_list_entry **p = &l->head; *p;) {
        if (visit((*p)->req))
            unlink_entry(l, p);
        else
            p = &(*p)->next;
    }
    if (serial_process)
        l->polling = 0;
    else
        pthread_mutex_unlock(&l->lock);
}
