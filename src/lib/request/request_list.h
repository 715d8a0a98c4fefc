/* A small process-wide list of requests that every partita call looks at in
 * passing (set-up waiters, timer-policy senders). Polling uses trylock only,
 * so a poll never makes a caller wait for another thread. In a process whose
 * MPI calls never overlap (thread level below MPI_THREAD_MULTIPLE: no
 * progress thread either) a flag replaces the lock: a timer request's
 * receive is listed all round, so every MPI_Parrived that tests MPI polled
 * the list, and the lock's two atomic instructions were a good part of what
 * the timer cost a small message. */
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
    int polling; /* serial process: a poll is under way (a visit does not poll the list again) */
} pt_request_list;

#define PT_REQUEST_LIST_INIT { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0 }

/* MPI calls in this process never overlap (set at init, before any list is used). */
void pt_lists_serial(int serial);

/* Add req; on allocation failure it is simply not listed (its own calls still progress it). */
void pt_list_add(pt_request_list *l, struct pt_request *req);
void pt_list_remove(pt_request_list *l, struct pt_request *req);
int pt_list_pending(pt_request_list *l);
/* Keep polls (and changes of the list) out while a listed request changes
 * what a visit reads: the caller's hold ends with pt_list_release. */
void pt_list_hold(pt_request_list *l);
void pt_list_release(pt_request_list *l);
/* Call visit on every listed request (skipped when another thread is polling);
 * an entry whose visit returns 1 is removed. */
void pt_list_poll(pt_request_list *l, int (*visit)(struct pt_request *req));

#endif
