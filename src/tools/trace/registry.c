/* The registry of partitioned requests: an open-addressing table from the
 * MPI_Request handle (an int in MPICH, a pointer in Open MPI) to a small id.
 * Insertions (at MPI_Psend_init / MPI_Precv_init) take a lock; look-ups, on
 * every MPI_Pready, read it without one. Handles are never removed from the
 * table: a freed handle maps to -1, and MPI reusing it overwrites the id. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

enum { TABLE_SLOTS = 1 << 16, MAX_REQUESTS = TABLE_SLOTS / 2 };

typedef struct slot {
    _Atomic uint64_t key;  /* handle bits + 1 (0 = empty) */
    atomic_int id;
} slot;

static slot *table;
static ptr_request *requests;
static atomic_int nrequests;
static atomic_llong untracked;
static pthread_mutex_t insert_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t key_of(MPI_Request h)
{
    uint64_t k = 0;
    memcpy(&k, &h, sizeof h < sizeof k ? sizeof h : sizeof k);
    return k + 1;
}

static uint32_t hash(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (uint32_t)k & (TABLE_SLOTS - 1);
}

int ptr_registry_setup(void)
{
    table = calloc(TABLE_SLOTS, sizeof *table);
    requests = calloc(MAX_REQUESTS, sizeof *requests);
    return table && requests ? 0 : -1;
}

static slot *lookup(uint64_t k, int for_insert)
{
    for (uint32_t i = hash(k), n = 0; n < TABLE_SLOTS; i = (i + 1) & (TABLE_SLOTS - 1), n++) {
        uint64_t at = atomic_load_explicit(&table[i].key, memory_order_acquire);
        if (at == k)
            return &table[i];
        if (at == 0)
            return for_insert ? &table[i] : NULL;
    }
    return NULL;
}

int ptr_registry_add(MPI_Request handle, const ptr_request *info)
{
    if (!table)
        return -1;
    pthread_mutex_lock(&insert_lock);
    int id = atomic_load(&nrequests);
    slot *s = id < MAX_REQUESTS ? lookup(key_of(handle), 1) : NULL;
    unsigned char *seen = NULL;
    if (s && info->kind == 1 && info->partitions > 0 && !(seen = calloc((size_t)info->partitions, 1)))
        s = NULL;
    if (!s) {
        atomic_fetch_add(&untracked, 1);
        pthread_mutex_unlock(&insert_lock);
        return -1;
    }
    ptr_request *r = &requests[id];
    r->kind = info->kind;
    r->peer = info->peer;
    r->tag = info->tag;
    r->comm_size = info->comm_size;
    r->partitions = info->partitions;
    r->count = info->count;
    r->type_size = info->type_size;
    atomic_init(&r->starts, 0);
    r->arrived_seen = (_Atomic(unsigned char) *)seen;
    atomic_store(&nrequests, id + 1);
    atomic_store_explicit(&s->id, id, memory_order_release);
    atomic_store_explicit(&s->key, key_of(handle), memory_order_release);
    pthread_mutex_unlock(&insert_lock);
    return id;
}

int ptr_registry_find(MPI_Request handle)
{
    if (!table)
        return -1;
    slot *s = lookup(key_of(handle), 0);
    return s ? atomic_load_explicit(&s->id, memory_order_acquire) : -1;
}

void ptr_registry_forget(MPI_Request handle)
{
    slot *s = table ? lookup(key_of(handle), 0) : NULL;
    if (s)
        atomic_store(&s->id, -1);
}

ptr_request *ptr_registry_get(int id) { return &requests[id]; }
int ptr_registry_count(void) { return atomic_load(&nrequests); }
int64_t ptr_registry_untracked(void) { return atomic_load(&untracked); }
