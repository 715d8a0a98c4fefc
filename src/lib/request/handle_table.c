/* Open-addressing hash table keyed by the handle's bit pattern. MPI_Request is
 * an int (MPICH), a pointer (Open MPI, the MPI ABI): the value is only ever
 * copied into an integer key, never interpreted. Resizing publishes a new
 * table and keeps the old one until finalize, so a reader never sees freed
 * memory. */
#include "request/handle_table.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

_Atomic(pt_table *) pt_table_current;
atomic_int pt_table_live;
_Atomic uintptr_t pt_table_epoch;
_Thread_local pt_table_hint pt_table_last __attribute__((tls_model("initial-exec")));
static pt_table *retired;
static pthread_mutex_t writer = PTHREAD_MUTEX_INITIALIZER;

static pt_table *table_new(unsigned bits)
{
    pt_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->bits = bits;
    t->keys = calloc((size_t)1 << bits, sizeof *t->keys);
    t->vals = calloc((size_t)1 << bits, sizeof *t->vals);
    if (!t->keys || !t->vals) {
        free(t->keys);
        free(t->vals);
        free(t);
        return NULL;
    }
    return t;
}

static void put(pt_table *t, uintptr_t k, struct pt_request *v)
{
    size_t mask = ((size_t)1 << t->bits) - 1;
    for (size_t i = pt_table_slot(k, t->bits);; i = (i + 1) & mask) {
        uintptr_t cur = atomic_load_explicit(&t->keys[i], memory_order_relaxed);
        if (cur == PT_KEY_EMPTY || cur == PT_KEY_TOMB) {
            atomic_store_explicit(&t->vals[i], v, memory_order_relaxed);
            atomic_store_explicit(&t->keys[i], k, memory_order_release);
            if (cur == PT_KEY_EMPTY)
                t->used++;
            return;
        }
    }
}

/* Called with the writer lock: make room for one more key. */
static int reserve(void)
{
    pt_table *t = atomic_load_explicit(&pt_table_current, memory_order_relaxed);
    if (t && (t->used + 1) * 2 <= ((size_t)1 << t->bits))
        return 0;
    unsigned bits = t ? t->bits : 10;
    while ((size_t)(atomic_load(&pt_table_live) + 1) * 4 > ((size_t)1 << bits))
        bits++;
    pt_table *n = table_new(bits);
    if (!n)
        return -1;
    if (t) {
        for (size_t i = 0; i < ((size_t)1 << t->bits); i++) {
            uintptr_t k = atomic_load_explicit(&t->keys[i], memory_order_relaxed);
            if (k != PT_KEY_EMPTY && k != PT_KEY_TOMB)
                put(n, k, atomic_load_explicit(&t->vals[i], memory_order_relaxed));
        }
        t->retired_next = retired;
        retired = t;
    }
    atomic_store_explicit(&pt_table_current, n, memory_order_release);
    return 0;
}

int pt_table_insert(MPI_Request handle, struct pt_request *req)
{
    pthread_mutex_lock(&writer);
    int rc = reserve();
    if (rc == 0) {
        put(atomic_load_explicit(&pt_table_current, memory_order_relaxed), pt_table_key(handle), req);
        atomic_fetch_add(&pt_table_live, 1);
    }
    pthread_mutex_unlock(&writer);
    return rc;
}

static _Atomic uintptr_t *find_slot(pt_table *t, uintptr_t k, size_t *index)
{
    size_t mask = ((size_t)1 << t->bits) - 1;
    for (size_t i = pt_table_slot(k, t->bits);; i = (i + 1) & mask) {
        uintptr_t cur = atomic_load_explicit(&t->keys[i], memory_order_acquire);
        if (cur == k) {
            *index = i;
            return &t->keys[i];
        }
        if (cur == PT_KEY_EMPTY)
            return NULL;
    }
}

void pt_table_remove(MPI_Request handle)
{
    pthread_mutex_lock(&writer);
    pt_table *t = atomic_load_explicit(&pt_table_current, memory_order_relaxed);
    size_t i;
    if (t && find_slot(t, pt_table_key(handle), &i)) {
        atomic_store_explicit(&t->vals[i], NULL, memory_order_relaxed);
        atomic_store_explicit(&t->keys[i], PT_KEY_TOMB, memory_order_release);
        atomic_fetch_sub(&pt_table_live, 1);
        atomic_fetch_add_explicit(&pt_table_epoch, 1, memory_order_release);
    }
    pthread_mutex_unlock(&writer);
}

int pt_table_empty(void) { return atomic_load_explicit(&pt_table_live, memory_order_relaxed) == 0; }

void pt_table_release(void)
{
    pthread_mutex_lock(&writer);
    while (retired) {
        pt_table *t = retired;
        retired = t->retired_next;
        free(t->keys);
        free(t->vals);
        free(t);
    }
    pthread_mutex_unlock(&writer);
}
