/* Handle -> partitioned request map. Lookups are lock-free (they sit on the
 * MPI_Pready path); inserts and removals take a mutex (init and free only). */
#ifndef PARTITA_HANDLE_TABLE_H
#define PARTITA_HANDLE_TABLE_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

struct pt_request;

int pt_table_insert(MPI_Request handle, struct pt_request *req); /* 0, or -1: out of memory */
void pt_table_remove(MPI_Request handle);
int pt_table_empty(void);
void pt_table_release(void); /* at finalize: frees retired tables */

/* The lookup is inline: it sits on the MPI_Pready path. */
typedef struct pt_table {
    unsigned bits;
    size_t used; /* live + tombstones (writers only) */
    _Atomic uintptr_t *keys;
    _Atomic(struct pt_request *) *vals;
    struct pt_table *retired_next;
} pt_table;

extern _Atomic(pt_table *) pt_table_current;
extern atomic_int pt_table_live;

#define PT_KEY_EMPTY ((uintptr_t)0)
#define PT_KEY_TOMB ((uintptr_t)1)

static inline uintptr_t pt_table_key(MPI_Request h)
{
    uintptr_t k = 0;
    memcpy(&k, &h, sizeof h < sizeof k ? sizeof h : sizeof k);
    return k;
}

static inline size_t pt_table_slot(uintptr_t k, unsigned bits)
{
    return (size_t)(((uint64_t)k * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

/* The table lookup, without the per-thread hint. */
static inline struct pt_request *pt_table_probe(uintptr_t k)
{
    if (atomic_load_explicit(&pt_table_live, memory_order_relaxed) == 0)
        return NULL;
    pt_table *t = atomic_load_explicit(&pt_table_current, memory_order_acquire);
    if (!t || k == PT_KEY_EMPTY || k == PT_KEY_TOMB)
        return NULL;
    size_t mask = ((size_t)1 << t->bits) - 1;
    for (size_t i = pt_table_slot(k, t->bits);; i = (i + 1) & mask) {
        uintptr_t cur = atomic_load_explicit(&t->keys[i], memory_order_acquire);
        if (cur == k)
            return atomic_load_explicit(&t->vals[i], memory_order_relaxed);
        if (cur == PT_KEY_EMPTY)
            return NULL;
    }
}

/* Each thread remembers its last hit: a program marks or polls one request
 * many times in a row, and the hint is two thread-local loads and one shared
 * one against the probe's seven loads and a multiply. A removal moves
 * pt_table_epoch on, which voids every thread's hint: a handle the MPI
 * library reuses after a free can then never find the old request. */
typedef struct pt_table_hint {
    uintptr_t key; /* PT_KEY_EMPTY: no hint */
    uintptr_t epoch;
    struct pt_request *val;
} pt_table_hint;

extern _Thread_local pt_table_hint pt_table_last __attribute__((tls_model("initial-exec")));
extern _Atomic uintptr_t pt_table_epoch;

static inline struct pt_request *pt_table_find(MPI_Request handle)
{
    uintptr_t k = pt_table_key(handle);
    pt_table_hint *h = &pt_table_last;
    uintptr_t epoch = atomic_load_explicit(&pt_table_epoch, memory_order_acquire);
    if (h->key == k && h->epoch == epoch)
        return h->val;
    struct pt_request *v = pt_table_probe(k);
    if (v) {
        h->key = k;
        h->epoch = epoch;
        h->val = v;
    }
    return v;
}

#endif
