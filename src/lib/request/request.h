/* The partitioned request object, shared by the layers below the lifecycle
 * (flush/ marks and flushes the sender's groups, transport/ moves the bytes,
 * its private state hanging off `tp`), and the lifecycle's own calls. */
#ifndef PARTITA_REQUEST_H
#define PARTITA_REQUEST_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "request/handle_table.h"
#include "request/request_list.h"
#include "request/settings.h"

struct pt_transport_ops;
struct pt_run;
struct pt_recv_focus;

#define PT_CACHE_LINE 64

/* Sender: one transport message, which waits for the user partitions it
 * holds bytes of: a group of consecutive partitions, or one piece of a cut
 * plan, whose first and last partitions may be shared with the neighbouring
 * pieces. Its partitions are counted in chunks of up to 64 (pt_chunk);
 * `remaining` counts the chunks still incomplete and is touched only when a
 * chunk completes. Each group and each chunk has its own cache line. */
typedef struct pt_group {
    _Alignas(PT_CACHE_LINE) atomic_int remaining; /* chunks not yet complete this round */
    atomic_int state;                             /* timer: PT_GROUP_OPEN/WHOLE/SPLIT */
    atomic_int issued;                            /* 1 once this round's message is started */
    int nchunks;
    int first_chunk;                              /* its chunks are first_chunk .. first_chunk+nchunks-1 */
    int first;                                    /* the first user partition it waits for */
    atomic_int seen_marked;                       /* timer: partitions marked at the last check */
    atomic_int flushed_marked;                    /* timer, RUNS: partitions marked at the last flush */
    _Atomic int64_t seen_ns;                      /* timer: when that count last changed (or was flushed) */
    int ahead_end;                                /* timer: announced ahead up to this round (pt_ahead_in;
                                                     PT_RUNS_AHEAD; under split_lock) */
    int alone;                                    /* timer: announced ahead for this round, so each partition
                                                     goes alone at its own mark (set by MPI_Start) */
    _Atomic int64_t begun_ticks;                  /* timer, in a round that catches a stall at the last mark
                                                     (pt_send_side.catch_late): its first mark (pt_ticks; 0:
                                                     none yet) */
    atomic_int begun_late;                        /* timer: split at its first mark this round, as it began
                                                     late (pt_timer_split_if_late) */
} pt_group;

/* Up to 64 consecutive partitions of one group: MPI_Pready sets the
 * partition's bit with one atomic add, which also detects a partition marked
 * twice; the thread whose bit completes the mask completes the chunk. */
typedef struct pt_chunk {
    _Alignas(PT_CACHE_LINE) _Atomic uint64_t mask;
    uint64_t full;
    uint64_t shared; /* cut: partitions the next message(s) hold bytes of too */
    int group;
} pt_chunk;

/* Timer: a group is OPEN until sent whole (WHOLE) or split by a flush. A
 * split group with few partitions left (PT_LATE_MAX) sends each later one
 * alone on its late tag (SPLIT); with more left it goes on in headed runs,
 * flushed like an open group when its marking stalls, the rest sent by its
 * last contributor (RUNS): one message per late partition made 150,000
 * partitions take minutes. */
enum { PT_GROUP_OPEN = 0, PT_GROUP_WHOLE = 1, PT_GROUP_SPLIT = 2, PT_GROUP_RUNS = 3 };
#define PT_LATE_MAX 64
/* Timer: rounds after one that split in which the mark that begins a group
 * wakes the progress thread (see pt_timer_round_reset). */
#define PT_TIMER_WATCH_ROUNDS 16
/* A round's marking span (first group begun to last group handed over):
 * not seen, shorter than the late-begin pause, or as long or longer. */
enum { PT_SPAN_UNSEEN, PT_SPAN_QUICK, PT_SPAN_LONG };

/* Per user partition (sender, timer policy): 0 not ready, 1 ready, 2 sent in a run. */
enum { PT_PART_IDLE = 0, PT_PART_READY = 1, PT_PART_SENT = 2 };

/* The set-up message a sender sends once, at init, on the shadow communicator
 * with the user's tag: MPI's ordering then pairs requests in init order. It
 * names the transport (its index in transport/select.c), so the receiver
 * picks the same one, and carries one word of the transport's own
 * (PT_HS_TRANSPORT_ARG: the MPI transport's first data tag). */
#define PT_HS_MAX_CAND 4   /* adaptive policy: candidate layouts (planner/adapt.h) */
#define PT_HS_CAND_WORDS 3 /* per candidate: message count, cut flag, the transport's word */
enum {
    PT_HS_MAGIC, PT_HS_PARTS, PT_HS_NTRANS, PT_HS_PART_BYTES, PT_HS_TRANSPORT_ARG, PT_HS_FLAGS,
    PT_HS_POLICY, PT_HS_TRANSPORT,
    PT_HS_NCAND,    /* candidate layouts (1: NTRANS, FLAGS' cut and TRANSPORT_ARG are the only one) */
    PT_HS_ADAPT_ID, /* adaptive: the tag of the pair's schedule messages (request/adaptive.h) */
    PT_HS_CAND,     /* adaptive: PT_HS_CAND_WORDS per candidate, the first the same as NTRANS... */
    PT_HS_LEN = PT_HS_CAND + PT_HS_CAND_WORDS * PT_HS_MAX_CAND
};
#define PT_HS_MAGIC_VALUE 0x70617274697461LL /* "partita" */
#define PT_HS_FLAG_SPLIT 1                   /* timer policy: groups may be sent in runs */
#define PT_HS_FLAG_CUT 2                     /* the buffer is cut in byte-balanced pieces (planner.h) */

typedef struct pt_send_side {
    int ntrans;              /* transport messages: groups of consecutive partitions, or the cut's pieces */
    int cut;                 /* the buffer is cut in byte-balanced pieces (PT_HS_FLAG_CUT) */
    int *bound;              /* ntrans+1 group boundaries in user partitions (groups only) */
    pt_group *groups;        /* ntrans, cache-line aligned */
    pt_chunk *chunks;        /* nchunks, cache-line aligned */
    int nchunks;
    uint32_t *slot;          /* per user partition: chunk << 6 | bit, in the first message it has bytes in */
    atomic_uchar *part;      /* timer and MPI_PROC_NULL only: per user partition, PT_PART_* */
    atomic_uchar *marks;     /* this round's: part, or NULL in a plain round (a split request's round
                                run as under `model`: timer_flush.c, pt_timer_round_reset) */
    atomic_int groups_done;  /* groups whose last contributor has issued everything */
    atomic_int armed;        /* timer: a group begun and still open (timer_registry.h) */
    atomic_int undrained;    /* timer: sends handed to the transport early this round, some of
                                which it may hold back (timer_registry.h: pt_timer_sent_early) */
    _Atomic int64_t early_ticks; /* timer: when the latest of those was handed over (pt_ticks) */
    atomic_int open_groups;  /* timer: groups neither issued whole nor split this round */
    /* timer policy */
    int split;                  /* PT_HS_FLAG_SPLIT negotiated */
    int64_t delta_ns;           /* how long a partly ready group may wait */
    pthread_mutex_t split_lock; /* orders claims of partitions and the sends of runs */
    int lock_made;              /* split_lock is initialised */
    unsigned char *headed;      /* per group: its first flush went out this round (under split_lock) */
    struct pt_run *runbuf;      /* runs being handed to the transport (under split_lock) */
    int nruns;                  /* runs and lone partitions sent early this round */
    int any_alone;              /* a group goes alone this round (pt_group.alone; set by MPI_Start) */
    atomic_int alone_sent;      /* partitions of such groups their marks sent (without split_lock) */
    int stall_flushed;          /* of those, sent by a flush of a stalled group (the others by a
                                   group that began late): only these make the progress thread watch */
    atomic_int watch_rounds;    /* rounds left in which a mark that begins a group wakes the
                                   progress thread (timer_flush.c: pt_timer_round_reset) */
    int thread_only;            /* too small for a split to pay: split only under a laggard, by the
                                   progress thread or, without it, announced ahead (pt_flush_init) */
    int unarmed_round;          /* its marks neither arm nor disarm this round: a progress thread runs
                                   and is not woken, or none runs and the groups are too small for
                                   the application's polls to split (timer_flush.c: pt_timer_round_reset) */
    int catch_late;             /* no progress thread, and the round before took the late-begin pause:
                                   each group stamps its first mark, and one whose marking took that
                                   pause is announced ahead at its last (pt_timer_split_if_stalled) */
    int lone_waits;             /* a partition sent alone would wait for a rendezvous handshake
                                   (pt_plan_lone_waits, over a transport whose runs are not cheap):
                                   a split sends the rest of its group in runs (timer_flush.c) */
    _Atomic int64_t last_issue_ticks; /* when this round's latest group was handed over (pt_ticks; 0: none yet
                                         or not stamped: a round in which late_on is clear) */
    int late_on;                   /* this round's hand-overs are stamped and its groups' beginnings
                                      checked for a late one (timer_flush.c: update_late_watch) */
    int late_rounds;               /* rounds left with late_on set */
    atomic_int begun_late_now;     /* some group began late this round (pt_timer_split_if_late) */
    atomic_int stalled_now;        /* catch_late: some group's marking took the late-begin pause this round */
    int after_stall;               /* ... in the round before: such a group is split at its last mark
                                      (pt_timer_split_if_stalled) */
    int after_late;                /* some group began late in the round before: one that begins late
                                      this round carries the late begin on to the next group
                                      (timer_flush.c: pt_timer_handed_over) */
    int span_unseen;               /* a plain round whose span is not measured (PT_PLAIN_SPAN_EVERY) */
    _Atomic int64_t span_from_ticks; /* when this round's first group began (pt_ticks; 0: not yet) */
    atomic_int span;               /* PT_SPAN_*: how long this round's marking took, as its last
                                      hand-over saw it */
    int64_t late_begin_ticks;      /* a group that begins this long (pt_ticks; pt_timer_late_begin_ns
                                      in ns) after it begins late and is split at once
                                      (pt_timer_split_if_late; 0: the request never splits) */
    atomic_int ahead_max;          /* the largest groups[].ahead_end (PT_RUNS_AHEAD) */
    atomic_int any_split;          /* a group of this round was split or went to runs: only then do
                                      marks look at their group's state (flush/marking.c: mark) */
    int round;                  /* Start count - 1 */
    /* adaptive policy (request/adaptive.h): when the round's first and last
     * hand-over of a message began, and how long the hand-overs before the
     * last took together, stamped by the flush layer */
    struct pt_adapt_send *adapt;
    int adapt_measure;          /* this round is measured (planner/adapt.h: pta_measured_round) */
    _Atomic int64_t adapt_first_ns, adapt_last_ns, adapt_before_cost_ns;
    _Atomic int64_t adapt_prev_end_ns; /* when the last hand-over before the last ended */
    /* The timer's two layouts of a cut (planner.h: pt_plan_timer_candidates) are judged as its
     * laggard check judges them, from the last mark: after a laggard's pause no hand-over is
     * charged (adaptive: only those before the pause are not). adapt_pause_ns: this round's
     * longest such pause, 0 when it paused for none (a laggard, which the adaptive policy's
     * choice also weighs: planner/adapt.h, pta_add_round). */
    int adapt_pause_ends_charges;
    _Atomic int64_t adapt_pause_ns;
} pt_send_side;

typedef struct pt_recv_side {
    int ready;               /* set-up message processed */
    int64_t hs[PT_HS_LEN];   /* the set-up message */
    int sparts;              /* sender's partitions */
    int ntrans;              /* transport messages per round (the sender's nmsg) */
    size_t sent_bytes;       /* bytes the sender sends per round */
    size_t *tstart;          /* ntrans+1 byte offsets of the transport messages */
    int *plo, *phi;          /* per transport message: receiver partitions it overlaps */
    int *need;               /* per receiver partition: overlapping messages (template) */
    int *missing;            /* per receiver partition: overlapping messages still missing */
    atomic_uchar *arrived;   /* per receiver partition */
    int narrived;            /* receiver partitions arrived this round */
    unsigned char *tdone;    /* per transport message, this round: every byte of it is in */
    int ndone;
    atomic_uint app_polls;   /* times the application made it test MPI (Parrived, Test, Wait): a hint */
    unsigned app_polls_seen; /* background progress (under the waiters' list lock): the count it last saw */
    int64_t app_quiet_ns;    /* and since when it has seen that count unchanged (0: not yet timed) */
    atomic_uint misses;      /* MPI_Parrived misses since MPI was last tested */
    atomic_int last_miss;    /* the partition of the last miss */
    char *staging;           /* non-contiguous receive types: bytes land here first */
    char *dest;              /* where byte 0 of the message lands (user buffer or staging) */
    int error;               /* pt_err kind detected (e.g. PT_E_TRUNCATE), reported at completion
                                (pt_recv_error_stops: whether the data still flows) */
    int error_code;          /* PT_E_INTERNAL: the internal call's code, and its name */
    const char *error_call;
    /* timer policy: groups that may come in runs (the group accounting) */
    int split;
    int *group_missing;      /* per transport message: sender partitions not yet in (runs) */
    unsigned char *sin;      /* per sender partition, this round: in, by a run */
    int round;               /* Start count - 1 */
    int deferred;            /* adaptive: this round's receives wait for the sender's schedule */
    int adapt_measure;       /* adaptive: this round is measured (counts adapt_true) */
    atomic_int adapt_true;   /* adaptive: MPI_Parrived calls that said true this round */
    struct pt_adapt_recv *adapt; /* adaptive policy: candidate layouts, the sender's schedule (request/adaptive.h) */
} pt_recv_side;

typedef struct pt_request {
    MPI_Request handle;      /* the user's handle (a never-started proxy request) */
    int is_send;
    int serial;              /* thread level below MULTIPLE: no two MPI calls run at once */
    atomic_int active;       /* between Start and completion */
    int proc_null;           /* peer is MPI_PROC_NULL: every round completes at once */
    int complete_pending;    /* the round finished; Wait/Test has not reported it yet */
    /* what the user described */
    char *buf;
    int partitions;
    MPI_Count count;         /* elements per partition */
    MPI_Datatype type;       /* our own duplicate: the user may free theirs */
    int peer, tag;
    MPI_Comm comm;
    /* derived */
    size_t type_size;
    MPI_Aint extent, true_lb;
    int contiguous;          /* the whole buffer is one contiguous byte range */
    size_t part_bytes;       /* bytes of one user partition */
    int peer_world;          /* peer's rank in the data communicator */
    MPI_Comm shadow;         /* private twin of comm for the set-up message */
    pt_settings settings;
    pthread_mutex_t progress_lock; /* serialises MPI calls on this request's internals (pt_progress_lock) */
    int64_t *hs_buf;         /* set-up message buffer (owned by the orphan list once freed) */
    MPI_Request hs_req;
    pt_list_node listing;    /* its place on the waiters' (receive) or the timers' (send) list */
    const struct pt_transport_ops *tp_ops; /* how this request's bytes move (transport/transport.h) */
    void *tp;                /* that transport's private state */
    union {
        pt_send_side s;
        pt_recv_side r;
    } u;
} pt_request;

/* request.c */
static inline pt_request *pt_lookup(MPI_Request handle)
{
    return handle == MPI_REQUEST_NULL ? NULL : pt_table_find(handle);
}
void pt_fill_empty_status(MPI_Status *status);
/* A posted receive that may never be matched (its partner went away):
 * complete it, cancelling it unless it has its message. Returns 1 when it
 * had received its message after all. The handle is left as MPI leaves it
 * (MPI_REQUEST_NULL unless persistent). */
int pt_complete_or_cancel_recv(MPI_Request *r);
/* The request's current (or last) round, counted from 1 (0: never started). */
static inline int pt_request_round(const pt_request *req)
{
    return (req->is_send ? req->u.s.round : req->u.r.round) + 1;
}
int pt_request_start(pt_request *req);
/* Progress and report: returns MPI_SUCCESS and sets *done when the round is
 * complete (then the request becomes inactive and *status is filled). */
int pt_request_test(pt_request *req, int *done, MPI_Status *status);
/* Like pt_request_test but leaves the request active (Request_get_status). */
int pt_request_peek(pt_request *req, int *done, MPI_Status *status);
int pt_request_wait(pt_request *req, MPI_Status *status);
int pt_request_free(MPI_Request *handle);

/* send.c (sender lifecycle: plan, marking state, transport, set-up message) */
int pt_send_init(pt_request *req);
void pt_send_start(pt_request *req);
int pt_send_progress(pt_request *req, int *done);
void pt_send_destroy(pt_request *req);

/* recv.c (receiver lifecycle) */
int pt_recv_init(pt_request *req);
int pt_recv_start(pt_request *req);
/* Progress the receive side: the set-up message, then the transport's
 * progress (its in-order scan and, with a focus, what carries one
 * partition: pt_recv_focus_of). Call with progress_lock held. */
int pt_recv_progress(pt_request *req, const struct pt_recv_focus *focus);
int pt_recv_round_done(const pt_request *req);
/* A split receive whose runs may still come this round: it needs background
 * progress while the application is elsewhere (setup_waiters.c). */
int pt_recv_runs_may_come(const pt_request *req);
/* Every receive partition was reported arrived this round. */
int pt_recv_all_arrived(const pt_request *req);
void pt_recv_destroy(pt_request *req);
void pt_recv_fill_status(const pt_request *req, MPI_Status *status);
/* Report the round's deferred error (r->error) through the handler, naming call. */
int pt_recv_report_error(pt_request *req, const char *call);
/* The application tested MPI for this receive (Parrived, Test, Wait); and,
 * asked by background progress (the waiters' list), whether it has done so
 * lately: then background progress (the progress thread) leaves the request
 * alone. A second thread driving MPI next to a polling one only contends
 * with it: on 2 cores, copies of late partitions ran up to 5x slower.
 * "Lately": since background progress last asked, or within
 * PT_APP_POLLING_NS of its first look that found no new test. The
 * application's side is a counter, not a clock read: a timer request's
 * receive is on the waiters' list all round, and two clock reads per
 * MPI_Parrived that tests MPI cost 1 KiB in 8 partitions about 10%. */
void pt_recv_app_polled(pt_request *req);
int pt_recv_app_polling(pt_request *req);
#define PT_APP_POLLING_NS 100000

/* recv_plan.c (the receive plan: which receive partitions each message
 * covers, arrival, unpacking; the upcalls of transport.h) */
/* The set-up message is in r->hs and valid: build the plan. Records a
 * deferred error in r->error (reported when the round completes). */
void pt_recv_plan_build(pt_request *req);
/* A round begins: nothing is in yet (partitions no data comes for are). */
void pt_recv_plan_reset(pt_request *req);
void pt_recv_plan_free(pt_request *req);
/* Partition p lies wholly past the data the sender sends (PT_E_SHORT): it never arrives. */
int pt_recv_past_data(const pt_request *req, int p);
/* What carries receive partition p (transport/transport.h), for MPI_Parrived
 * to have the transport look at first-hand; 0 when nothing can (the plan is
 * not built, or the round's data no longer flows). */
int pt_recv_focus_of(const pt_request *req, int p, struct pt_recv_focus *focus);
/* The sender partitions [*first, *end) holding receive partition p's bytes
 * (those that come at all; empty when none do). */
void pt_recv_sender_span(const pt_request *req, int p, int *first, int *end);

/* The progress lock is taken only when MPI calls may overlap. A serial
 * request's calls never do (the application serialises them, and a progress
 * thread makes the level MULTIPLE), and the lock and unlock were two atomic
 * operations in every MPI_Parrived poll. */
static inline int pt_progress_trylock(pt_request *req)
{
    return req->serial ? 0 : pthread_mutex_trylock(&req->progress_lock);
}
static inline void pt_progress_lock(pt_request *req)
{
    if (!req->serial)
        pthread_mutex_lock(&req->progress_lock);
}
static inline void pt_progress_unlock(pt_request *req)
{
    if (!req->serial)
        pthread_mutex_unlock(&req->progress_lock);
}

#endif
