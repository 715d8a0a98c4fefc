#include "request/request_list.h"

#include <stddef.h>

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

static int node_on(const pt_list_node *node, const pt_request_list *l)
{
    return atomic_load_explicit(&node->on, memory_order_acquire) == l;
}

/* The list this thread polls or holds, if any: a visit may list or unlist
 * requests of the list it is visiting, whose lock its thread holds already. */
static _Thread_local pt_request_list *held_here __attribute__((tls_model("initial-exec")));

void pt_list_add(pt_request_list *l, pt_list_node *node, struct pt_request *req)
{
    /* Under the lock even when it is listed already: a poll may be visiting
     * it now and drop it on what it saw before this call, so `again`, which
     * the poll reads after the visit, is written where the poll's lock
     * orders it. */
    int inside = held_here == l;
    if (!inside)
        lock_list(l);
    if (node_on(node, l)) {
        atomic_store_explicit(&node->again, 1, memory_order_relaxed);
    } else {
        node->req = req;
        node->prev = NULL;
        node->next = l->head;
        if (l->head)
            l->head->prev = node;
        l->head = node;
        atomic_store_explicit(&node->on, l, memory_order_release);
        atomic_fetch_add(&l->count, 1);
    }
    if (!inside)
        unlock_list(l);
}

/* Unlink node; caller holds the lock. */
static void unlink_node(pt_request_list *l, pt_list_node *node)
{
    if (node->prev)
        node->prev->next = node->next;
    else
        l->head = node->next;
    if (node->next)
        node->next->prev = node->prev;
    node->prev = node->next = NULL;
    atomic_store_explicit(&node->on, NULL, memory_order_release);
    atomic_fetch_sub(&l->count, 1);
}

void pt_list_remove(pt_request_list *l, pt_list_node *node)
{
    if (!node_on(node, l)) /* only a poll unlists it behind its owner's back: then it is off already */
        return;
    int inside = held_here == l;
    if (!inside)
        lock_list(l);
    if (node_on(node, l))
        unlink_node(l, node);
    if (!inside)
        unlock_list(l);
}

void pt_list_hold(pt_request_list *l)
{
    lock_list(l);
    held_here = l;
}

void pt_list_release(pt_request_list *l)
{
    held_here = NULL;
    unlock_list(l);
}

int pt_list_pending(pt_request_list *l) { return atomic_load_explicit(&l->count, memory_order_relaxed) > 0; }

int pt_list_only(pt_request_list *l, const pt_list_node *node)
{
    return atomic_load_explicit(&l->count, memory_order_relaxed) == 1 && node_on(node, l);
}

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
    pt_request_list *outer = held_here;
    held_here = l;
    for (pt_list_node *node = l->head; node;) {
        pt_list_node *after = node->next;
        atomic_store_explicit(&node->again, 0, memory_order_relaxed);
        int drop = visit(node->req) && !atomic_load_explicit(&node->again, memory_order_relaxed);
        /* A visit may change the list: go on from the node's next as it is
         * now, or, when the visit took the node itself off, from the next
         * it had (if that is still listed: else this poll ends here). */
        int still = node_on(node, l);
        pt_list_node *next = still ? node->next : after && node_on(after, l) ? after : NULL;
        if (drop && still)
            unlink_node(l, node);
        node = next;
    }
    held_here = outer;
    if (serial_process)
        l->polling = 0;
    else
        pthread_mutex_unlock(&l->lock);
}
