/* Read-modify-write on the marking path, cheap for serial requests. A serial
 * request's MPI calls never overlap (the thread level is below
 * MPI_THREAD_MULTIPLE, so no progress thread either): a relaxed load and
 * store do what the atomic operation does, and the locked instruction was
 * most of what the timer's per-round bookkeeping cost a small message. The
 * thread level is the process's, so a counter shared by all requests may use
 * them too. */
#ifndef PARTITA_FLUSH_SERIAL_ATOMICS_H
#define PARTITA_FLUSH_SERIAL_ATOMICS_H

#include <stdatomic.h>

/* *a = v; returns the value before. */
static inline int pt_exchange(atomic_int *a, int v, int serial)
{
    if (!serial)
        return atomic_exchange(a, v);
    int before = atomic_load_explicit(a, memory_order_relaxed);
    atomic_store_explicit(a, v, memory_order_relaxed);
    return before;
}

/* *a += d; returns the value before. */
static inline int pt_fetch_add(atomic_int *a, int d, int serial)
{
    if (!serial)
        return atomic_fetch_add(a, d);
    int before = atomic_load_explicit(a, memory_order_relaxed);
    atomic_store_explicit(a, before + d, memory_order_relaxed);
    return before;
}

/* If *a == *expected, *a = v and true; else *expected = *a and false. */
static inline int pt_compare_exchange(atomic_int *a, int *expected, int v, int serial)
{
    if (!serial)
        return atomic_compare_exchange_strong(a, expected, v);
    int now = atomic_load_explicit(a, memory_order_relaxed);
    if (now != *expected) {
        *expected = now;
        return 0;
    }
    atomic_store_explicit(a, v, memory_order_relaxed);
    return 1;
}

#endif
