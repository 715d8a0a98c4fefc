/* libpartita-trace: a PMPI interposition library recording partitioned
 * communication (format partita.trace/1, docs/trace.md). Shared declarations of
 * its parts: settings and state (state.c), per-thread event buffers
 * (events.c), the request registry (registry.c), the next definitions of the
 * wrapped calls (next.c), the rounds and the JSON file (writer.c) and the clock
 * offset (offset.c). */
#ifndef PTR_TRACE_H
#define PTR_TRACE_H
#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

#include "clock.h" /* pt_now_ns: the harness's CLOCK_MONOTONIC stamp */

#define PTR_EXPORT __attribute__((visibility("default")))
#define PTR_TLS __attribute__((tls_model("initial-exec"))) _Thread_local

/* ---- the event clock (ticks.c) ------------------------------------------- */
extern int ptr_use_tsc;
/* One clock read: TSC ticks or CLOCK_MONOTONIC ns (converted when written). */
static inline int64_t ptr_ticks(void)
{
#if defined(__x86_64__)
    if (__builtin_expect(ptr_use_tsc, 1))
        return (int64_t)__builtin_ia32_rdtsc();
#endif
    return pt_now_ns();
}
void ptr_ticks_setup(void);   /* at MPI_Init */
void ptr_ticks_finish(void);  /* at MPI_Finalize, before any conversion */
int64_t ptr_ticks_to_ns(int64_t ticks);
int64_t ptr_ticks_span_ns(int64_t ticks);

/* ---- events: one per call, one clock read each ---------------------------- */
/* EV_LAYOUT: libpartita's layout of a send round (a messages, b cut), stamped as its start. */
enum ptr_event_kind { EV_START, EV_READY, EV_READY_RANGE, EV_ARRIVED, EV_COMPLETE, EV_LAYOUT };

typedef struct ptr_event {
    int64_t t;        /* ptr_ticks() */
    int32_t req;      /* registry id */
    int32_t a, b;     /* partition (READY, ARRIVED) or low..high (READY_RANGE) */
    uint16_t kind;
    uint16_t thread;  /* small thread id, 0 = first thread seen */
} ptr_event;

enum { PTR_MAX_THREADS = 1024 };

/* Time and calls inside MPI, per category (mpi_time_ns / mpi_calls). */
enum ptr_category { CAT_P2P, CAT_COLLECTIVE, CAT_PARTITIONED, CAT_COUNT };

/* One per thread, preallocated at MPI_Init; written only by its thread. */
typedef struct ptr_thread {
    ptr_event *pos, *end;              /* the free part of the thread's current chunk */
    int64_t time_ns[CAT_COUNT];        /* in ticks */
    int64_t calls[CAT_COUNT];
    char pad[64];
} ptr_thread;

/* Capacity from PARTITA_TRACE_EVENTS; 0 on success, -1 with a message in err. */
int ptr_events_setup(const char *setting, char *err, int errlen);
/* The calling thread's slot (assigned at its first use), NULL beyond PTR_MAX_THREADS. */
ptr_thread *ptr_self(int *thread_id);
/* Appends one event of the calling thread; counts it as dropped when full. */
void ptr_record(int kind, int req, int a, int b, int64_t t);
/* Every recorded event (chunks in claim order; unused tails have req == -1). */
const ptr_event *ptr_events(int64_t *n);
int64_t ptr_events_capacity(void);
int64_t ptr_events_dropped(void);
int64_t ptr_first_drop_ns(void);   /* ticks of the first dropped event, INT64_MAX when none */
int ptr_thread_count(void);
const ptr_thread *ptr_thread_slot(int i);
/* Adds a call of category cat from t0 to t1 to the calling thread's totals. */
void ptr_account(int cat, int64_t t0, int64_t t1);

/* ---- request registry: MPI_Request handle -> id ------------------------- */
typedef struct ptr_request {
    int kind;                    /* 0 send, 1 recv */
    int peer, tag, comm_size, partitions;
    int64_t count, type_size;
    atomic_int starts;           /* MPI_Start calls: rounds begun */
    const char *transport;       /* libpartita's transport ("mpi", "fabric"); NULL: not known or not libpartita */
    _Atomic(unsigned char) *arrived_seen; /* recv: per partition, first flag=1 of this round taken */
} ptr_request;

/* Sets up the registry; 0 or -1 (out of memory). */
int ptr_registry_setup(void);
/* Registers a new partitioned request; its id, or -1 when the registry is full. */
int ptr_registry_add(MPI_Request handle, const ptr_request *info);
/* The id of a live partitioned request, -1 for any other handle. Lock-free. */
int ptr_registry_find(MPI_Request handle);
void ptr_registry_forget(MPI_Request handle);
ptr_request *ptr_registry_get(int id);
int ptr_registry_count(void);
int64_t ptr_registry_untracked(void);

/* ---- the next definitions of the wrapped calls (next.c) ----------------- */
/* The definition of `name` after the tracer's (dlsym RTLD_NEXT): libpartita-mpi's
 * when it is loaded after the tracer, else the MPI library's. Each wrapper file
 * resolves its calls once, in a constructor, so no call pays for the look-up. */
void *ptr_next(const char *name);
/* The file name (no folder) of the shared object defining f, or NULL. */
const char *ptr_library_of(void *f);

/* ---- state (state.c) ---------------------------------------------------- */
extern int ptr_active;           /* PARTITA_TRACE set and set-up done */
extern int64_t ptr_init_ns, ptr_finalize_ns;
/* Called after the underlying MPI_Init*; aborts with one clear line on bad settings. */
void ptr_after_init(void);
/* Called at MPI_Finalize entry; 0 or an MPI error code (file not written). */
int ptr_before_finalize(void);
/* Where MPI_Psend_init leads after the tracer: "libpartita-mpi.so" or NULL. */
const char *ptr_preloaded_after(void);

/* ---- output ---------------------------------------------------------------- */
typedef struct ptr_clock {
    int64_t offset_ns, uncertainty_ns;
    int shared;
} ptr_clock;
/* Collective over MPI_COMM_WORLD: this rank's offset against rank 0. */
void ptr_clock_offset(ptr_clock *out);
/* Make the trace folder (and its missing parents) at MPI_Init and check that
 * files can be made in it; else -1 with the reason in err. */
int ptr_dir_ready(const char *dir, char *err, size_t errlen);
/* Writes DIR/rank-NNNNN.json; 0, or -1 with a message on stderr naming the file. */
int ptr_write(const char *dir, int rank, int size, const ptr_clock *clock, const int64_t time_ns[CAT_COUNT],
              const int64_t calls[CAT_COUNT]);

#endif
