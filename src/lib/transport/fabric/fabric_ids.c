/* The id table (fabric_ids.h): 1024 lazily allocated chunks of 1024 slots.
 * Ids are handed out round-robin, so a late completion for a released id
 * finds NULL rather than the id's next owner until the counter wraps. */
#include "transport/fabric/fabric_ids.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "transport/fabric/fabric_wire.h"

#define CHUNK_BITS 10
#define CHUNK (1u << CHUNK_BITS)
#define NCHUNKS ((PT_IMM_ID_MAX + 1) / CHUNK)

typedef struct chunk {
    _Atomic(void *) slot[CHUNK];
} chunk;

static _Atomic(chunk *) chunks[NCHUNKS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next = 1;

static _Atomic(void *) *slot_of(uint32_t id, int create)
{
    chunk *c = atomic_load_explicit(&chunks[id >> CHUNK_BITS], memory_order_acquire);
    if (!c && create) {
        c = calloc(1, sizeof *c);
        if (!c)
            return NULL;
        atomic_store_explicit(&chunks[id >> CHUNK_BITS], c, memory_order_release);
    }
    return c ? &c->slot[id & (CHUNK - 1)] : NULL;
}

uint32_t pt_fab_id_new(void *obj)
{
    pthread_mutex_lock(&lock);
    uint32_t found = 0;
    for (uint32_t tries = 0; tries < PT_IMM_ID_MAX && !found; tries++) {
        uint32_t id = next;
        next = next == PT_IMM_ID_MAX ? 1 : next + 1;
        _Atomic(void *) *s = slot_of(id, 1);
        if (!s)
            break;
        if (!atomic_load_explicit(s, memory_order_relaxed)) {
            atomic_store_explicit(s, obj, memory_order_release);
            found = id;
        }
    }
    pthread_mutex_unlock(&lock);
    return found;
}

void *pt_fab_id_find(uint32_t id)
{
    if (id == 0 || id > PT_IMM_ID_MAX)
        return NULL;
    _Atomic(void *) *s = slot_of(id, 0);
    return s ? atomic_load_explicit(s, memory_order_acquire) : NULL;
}

void pt_fab_id_release(uint32_t id)
{
    _Atomic(void *) *s = id && id <= PT_IMM_ID_MAX ? slot_of(id, 0) : NULL;
    if (s)
        atomic_store_explicit(s, NULL, memory_order_release);
}
