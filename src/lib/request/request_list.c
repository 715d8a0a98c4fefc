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

void pt_list_add(pt_request_list *l, pt_list_node *node, struct pt_request *req)
{
    /* Only the request's own calls list it, so a node found listed here
     * stays so (a poll may unlist it, never list it): no lock needed to see
     * that. It also lets a visit list its own request again, under the
     * poll's hold of the list. */
    if (node_on(node, l))
        return;
    lock_list(l);
    node->req = req;
    node->prev = NULL;
    node->next = l->head;
    if (l->head)
        l->head->prev = node;
    l->head = node;
    atomic_store_explicit(&node->on, l, memory_order_release);
    unlock_list(l);
    atomic_fetch_add(&l->count, 1);
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
    lock_list(l);
    if (node_on(node, l))
        unlink_node(l, node);
    unlock_list(l);
}

void pt_list_hold(pt_request_list *l) { lock_list(l); }
void pt_list_release(pt_request_list *l) { unlock_list(l); }

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
    for (pt_list_node *node = l->head; node;) {
        pt_list_node *after = node->next;
        int drop = visit(node->req);
        /* In a serial process a visit may change the list (no lock keeps it
         * out): go on from the node's next as it is now, unless the visit
         * took the node itself off. */
        int still = node_on(node, l);
        pt_list_node *next = still ? node->next : after;
        if (drop && still)
            unlink_node(l, node);
        node = next;
    }
    if (serial_process)
        l->polling = 0;
    else
        pthread_mutex_unlock(&l->lock);
}
