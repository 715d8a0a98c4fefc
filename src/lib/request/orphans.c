/* Orphaned internal requests, completed from any partita progress call. */
#include "request/orphans.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct orphan {
    MPI_Request req;
    void *memory;
    struct orphan *next;
} orphan;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static orphan *list;
static atomic_int count;

int pt_orphan_add(MPI_Request req, void *memory)
{
    orphan *o = malloc(sizeof *o);
    if (!o)
        return MPI_ERR_NO_MEM;
    o->req = req;
    o->memory = memory;
    pthread_mutex_lock(&lock);
    o->next = list;
    list = o;
    pthread_mutex_unlock(&lock);
    atomic_fetch_add(&count, 1);
    return MPI_SUCCESS;
}

int pt_orphans_pending(void) { return atomic_load_explicit(&count, memory_order_relaxed) > 0; }

void pt_orphans_poll(void)
{
    if (atomic_load_explicit(&count, memory_order_relaxed) == 0 || pthread_mutex_trylock(&lock))
        return;
    for (orphan **p = &list; *p;) {
        int done = 0;
        PMPI_Test(&(*p)->req, &done, MPI_STATUS_IGNORE);
        if (done) {
            orphan *o = *p;
            *p = o->next;
            free(o->memory);
            free(o);
            atomic_fetch_sub(&count, 1);
        } else {
            p = &(*p)->next;
        }
    }
    pthread_mutex_unlock(&lock);
}

void pt_orphans_finalize(void)
{
    pthread_mutex_lock(&lock);
    while (list) {
        orphan *o = list;
        list = o->next;
        int done = 0;
        PMPI_Test(&o->req, &done, MPI_STATUS_IGNORE);
        if (!done) {
            /* Never matched: the partner never made its request. A send may
             * not be cancellable; then leave it rather than hang. */
            PMPI_Cancel(&o->req);
            for (int i = 0; i < 10000 && !done; i++)
                PMPI_Test(&o->req, &done, MPI_STATUS_IGNORE);
        }
        if (done)
            free(o->memory);
        free(o);
    }
    atomic_store(&count, 0);
    pthread_mutex_unlock(&lock);
}
