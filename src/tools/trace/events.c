/* Per-thread event buffers. One pool of PARTITA_TRACE_EVENTS events is
 * allocated at MPI_Init; a thread claims chunks of it with one atomic add per
 * chunk, then appends without lock or allocation. When the pool is used up the
 * events are counted as dropped and the time of the first drop is kept, so the
 * writer can leave out every round that may have lost events. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "trace.h"

enum { CHUNK_EVENTS = 512 };
static long long chunk_events; /* CHUNK_EVENTS, smaller for a small capacity so every thread gets some */
#define DEFAULT_CAPACITY 1048576LL

static ptr_event *pool;
static int64_t capacity;
static atomic_llong pool_next;      /* first unclaimed event */
static atomic_llong dropped;
static atomic_llong first_drop_ns = INT64_MAX;
static ptr_thread *threads;         /* PTR_MAX_THREADS slots */
static atomic_int thread_count;
static PTR_TLS int my_id = -1;
static PTR_TLS ptr_thread *me;
/* Slots of threads that ended, for later new threads: a program that starts
 * a thread per iteration must not run out of the PTR_MAX_THREADS slots. They
 * are handed out oldest first, and only once REUSE_AFTER of them wait: given
 * back at once, the ended thread's slot went to the next one, so workers that
 * a round starts one after the other (each ending before the next calls MPI)
 * all showed as one thread. A waiting slot keeps at most one partly used chunk. */
enum { REUSE_AFTER = 16 };
static pthread_key_t slot_key;
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
static int free_ids[PTR_MAX_THREADS], free_head, nfree; /* a ring, oldest at free_head */
static atomic_int any_free;

static void thread_ended(void *slot)
{
    pthread_mutex_lock(&free_lock);
    free_ids[(free_head + nfree++) % PTR_MAX_THREADS] = (int)((ptr_thread *)slot - threads);
    atomic_store(&any_free, nfree >= REUSE_AFTER);
    pthread_mutex_unlock(&free_lock);
}

/* A new slot id, or (past REUSE_AFTER waiting, or with no new one left) the
 * oldest slot given back; once per thread, not per call. */
static int take_id(void)
{
    int id = -1;
    if (atomic_load(&any_free) || atomic_load(&thread_count) >= PTR_MAX_THREADS) {
        pthread_mutex_lock(&free_lock);
        if (nfree) {
            id = free_ids[free_head];
            free_head = (free_head + 1) % PTR_MAX_THREADS;
            nfree--;
        }
        atomic_store(&any_free, nfree >= REUSE_AFTER);
        pthread_mutex_unlock(&free_lock);
    }
    return id >= 0 ? id : atomic_fetch_add(&thread_count, 1);
}

int ptr_events_setup(const char *setting, char *err, int errlen)
{
    capacity = DEFAULT_CAPACITY;
    if (setting && *setting) {
        char *end;
        errno = 0;
        long long v = strtoll(setting, &end, 10);
        if (errno || *end || v < 1 || v > (1LL << 34)) {
            snprintf(err, (size_t)errlen,
                     "PARTITA_TRACE_EVENTS='%s' is not a number of events between 1 and 17179869184", setting);
            return -1;
        }
        capacity = v;
    }
    chunk_events = capacity / 64 < CHUNK_EVENTS ? (capacity / 64 > 0 ? capacity / 64 : 1) : CHUNK_EVENTS;
    pool = malloc((size_t)capacity * sizeof *pool); /* pages are touched only when used */
    threads = aligned_alloc(64, PTR_MAX_THREADS * sizeof *threads);
    if (!pool || !threads) {
        snprintf(err, (size_t)errlen, "cannot allocate %lld trace events (PARTITA_TRACE_EVENTS)", (long long)capacity);
        return -1;
    }
    for (int i = 0; i < PTR_MAX_THREADS; i++)
        threads[i] = (ptr_thread){0};
    if (pthread_key_create(&slot_key, thread_ended) != 0) {
        snprintf(err, (size_t)errlen, "cannot create a thread-specific key");
        return -1;
    }
    return 0;
}

ptr_thread *ptr_self(int *thread_id)
{
    if (__builtin_expect(me != NULL, 1)) {
        *thread_id = my_id;
        return me;
    }
    if (!threads)
        return NULL;
    if (my_id < 0)
        my_id = take_id();
    *thread_id = my_id;
    if (my_id >= PTR_MAX_THREADS)
        return NULL;
    me = &threads[my_id];
    pthread_setspecific(slot_key, me); /* gives the slot back when the thread ends */
    return me;
}

static void drop(int64_t t)
{
    atomic_fetch_add(&dropped, 1);
    long long seen = atomic_load(&first_drop_ns);
    while (t < seen && !atomic_compare_exchange_weak(&first_drop_ns, &seen, t)) {
    }
}

/* A new chunk for thread slot s; 0 when the pool is used up. */
static int claim(ptr_thread *s)
{
    long long at = atomic_fetch_add(&pool_next, chunk_events);
    if (at >= capacity)
        return 0;
    long long end = at + chunk_events < capacity ? at + chunk_events : capacity;
    for (long long i = at; i < end; i++)
        pool[i].req = -1; /* marks the tail a thread may leave unused */
    s->pos = pool + at;
    s->end = pool + end;
    return 1;
}

void ptr_record(int kind, int req, int a, int b, int64_t t)
{
    int id;
    ptr_thread *s = ptr_self(&id);
    if (__builtin_expect(!s || (s->pos == s->end && !claim(s)), 0)) {
        drop(t);
        return;
    }
    *s->pos++ = (ptr_event){.t = t, .req = req, .a = a, .b = b, .kind = (uint16_t)kind, .thread = (uint16_t)id};
}

void ptr_account(int cat, int64_t t0, int64_t t1)
{
    int id;
    ptr_thread *s = ptr_self(&id);
    if (!s)
        return;
    s->time_ns[cat] += t1 - t0;
    s->calls[cat]++;
}

const ptr_event *ptr_events(int64_t *n)
{
    long long used = atomic_load(&pool_next);
    *n = used < capacity ? used : capacity;
    return pool;
}

int64_t ptr_events_capacity(void) { return capacity; }
int64_t ptr_events_dropped(void) { return atomic_load(&dropped); }
int64_t ptr_first_drop_ns(void) { return atomic_load(&first_drop_ns); }

int ptr_thread_count(void)
{
    int n = atomic_load(&thread_count);
    return n < PTR_MAX_THREADS ? n : PTR_MAX_THREADS;
}

const ptr_thread *ptr_thread_slot(int i) { return &threads[i]; }
