/* A small process-wide list of requests that every partita call looks at in
 * passing (set-up waiters, timer-policy senders). Polling uses trylock only,
 * so a poll never makes a caller wait for another thread. */
#ifndef PARTITA_REQUEST_LIST_H
#define PARTITA_REQUEST_LIST_H

#include <pthread.h>
#include <stdatomic.h>

struct pt_request;
struct pt_list_entry;

typedef struct pt_request_list {
    pthread_mutex_t lock;
    struct pt_list_entry *head;
    atomic_int count;
} pt_request_list;

#define PT_REQUEST_LIST_INIT { PTHREAD_MUTEX_INITIALIZER, NULL, 0 }

/* Add req; on allocation failure it is simply not listed (its own calls still progress it). */
void pt_list_add(pt_request_list *l, struct pt_request *req);
void pt_list_remove(pt_request_list *l, struct pt_request *req);
int pt_list_pending(pt_request_list *l);
/* Call visit on every listed request (skipped when another thread is polling);
 * an entry whose visit returns 1 is removed. */
void pt_list_poll(pt_request_list *l, int (*visit)(struct pt_request *req));

#endif
