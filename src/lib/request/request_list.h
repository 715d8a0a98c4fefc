/* A small process-wide list of requests that every partita call looks at in
 * passing (set-up waiters, timer-policy senders). Polling uses trylock only,
 * so a poll never makes a caller wait for another thread. In a process whose
 * MPI calls never overlap (thread level below MPI_THREAD_MULTIPLE: no
 * progress thread either) a flag replaces the lock: a timer request's
 * receive is listed all round, so every MPI_Parrived that tests MPI polled
 * the list, and the lock's two atomic instructions were a good part of what
 * the timer cost a small message.
 *
 * The links live in the request (pt_list_node), so listing a request
 * allocates nothing: a receive that may split is listed and unlisted every
 * round, and a malloc, a free and a walk of the list per round were a
 * measurable part of the timer's cost with the progress thread. */
#ifndef PARTITA_REQUEST_LIST_H
#define PARTITA_REQUEST_LIST_H

#include <pthread.h>
#include <stdatomic.h>

struct pt_request;
struct pt_request_list;

/* A request's place on one list (a request is on one list at most: the
 * waiters hold receives, the timers senders). */
typedef struct pt_list_node {
    struct pt_request *req;
    struct pt_list_node *prev, *next;
    _Atomic(struct pt_request_list *) on; /* the list it is on, NULL when on none */
    atomic_int again;         /* added again during its visit: the visit may not drop it */
} pt_list_node;

typedef struct pt_request_list {
    pthread_mutex_t lock;
    pt_list_node *head;
    atomic_int count;
    int polling; /* serial process: a poll is under way (a visit does not poll the list again) */
} pt_request_list;

#define PT_REQUEST_LIST_INIT { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0 }

/* MPI calls in this process never overlap (set at init, before any list is used). */
void pt_lists_serial(int serial);

/* List req through its node; a request listed already stays listed once
 * (and a poll visiting it does not drop it). A visit may list and unlist
 * requests of the list it visits. */
void pt_list_add(pt_request_list *l, pt_list_node *node, struct pt_request *req);
void pt_list_remove(pt_request_list *l, pt_list_node *node);
int pt_list_pending(pt_request_list *l);
/* Whether node is all the list holds (a hint: another thread may change it). */
int pt_list_only(pt_request_list *l, const pt_list_node *node);
/* Keep polls (and changes of the list) out while a listed request changes
 * what a visit reads: the caller's hold ends with pt_list_release. */
void pt_list_hold(pt_request_list *l);
void pt_list_release(pt_request_list *l);
/* Call visit on every listed request (skipped when another thread is polling);
 * an entry whose visit returns 1 is removed. */
void pt_list_poll(pt_request_list *l, int (*visit)(struct pt_request *req));

#endif
