/* The partitioned request object and the calls the send and receive sides
 * implement for the generic request lifecycle (request.c). */
#ifndef PARTITA_REQUEST_H
#define PARTITA_REQUEST_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "handle_table.h"
#include "settings.h"

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

/* Per user partition (sender, timer policy): 0 not ready, 1 ready, 2 sent in a run. */
enum { PT_PART_IDLE = 0, PT_PART_READY = 1, PT_PART_SENT = 2 };

/* The set-up message a sender sends once, at init, on the shadow communicator
 * with the user's tag: MPI's ordering then pairs requests in init order. */
enum {
    PT_HS_MAGIC, PT_HS_PARTS, PT_HS_NTRANS, PT_HS_PART_BYTES, PT_HS_TAG_BASE, PT_HS_FLAGS,
    PT_HS_POLICY, PT_HS_LEN
};
#define PT_HS_MAGIC_VALUE 0x70617274697461LL /* "partita" */
#define PT_HS_FLAG_SPLIT 1                   /* timer policy: groups may be sent in runs */
#define PT_HS_FLAG_CUT 2                     /* the buffer is cut in byte-balanced pieces (planner.h) */

/* Header of one run of a split group (timer policy), sent on the split tag
 * just before the run's data. A group's first flush of a round is a series
 * of headed runs, the last one flagged: the receiver then posts a receive on
 * the late tag of every other partition of the group, and the sender sends
 * each of those alone, without a header. */
enum { PT_RUN_ROUND, PT_RUN_GROUP, PT_RUN_FIRST, PT_RUN_COUNT, PT_RUN_FLAGS, PT_RUN_LEN };
#define PT_RUN_FLAG_LAST 1 /* the last headed run of the group's first flush */

typedef struct pt_send_side {
    int ntrans;              /* transport messages: groups of consecutive partitions, or the cut's pieces */
    int cut;                 /* the buffer is cut in byte-balanced pieces (PT_HS_FLAG_CUT) */
    int nmsg;                /* transport messages that exist (ntrans once set up) */
    int *bound;              /* ntrans+1 group boundaries in user partitions (groups only) */
    pt_group *groups;        /* ntrans, cache-line aligned */
    pt_chunk *chunks;        /* nchunks, cache-line aligned */
    int nchunks;
    uint32_t *slot;          /* per user partition: chunk << 6 | bit, in the first message it has bytes in */
    MPI_Request *treq;       /* persistent sends, one per message */
    atomic_uchar *part;      /* timer and MPI_PROC_NULL only: per user partition, PT_PART_* */
    atomic_int groups_done;  /* groups whose last contributor has issued everything */
    atomic_int armed;        /* timer: a group begun and still open (timer_registry.h) */
    atomic_int open_groups;  /* timer: groups neither issued whole nor split this round */
    int tag_base, tag_count; /* data tags [tag_base, tag_base+tag_count) on the data comm */
    /* timer policy */
    int split;                  /* PT_HS_FLAG_SPLIT negotiated */
    int64_t delta_ns;           /* how long a partly ready group may wait */
    pthread_mutex_t split_lock; /* orders header+data pairs on the split tag */
    MPI_Request *xreq;          /* run headers, run data and terminators of this round */
    int64_t *xhdr;              /* PT_RUN_LEN per header */
    unsigned char *headed;      /* per group: its first flush went out this round (under split_lock) */
    int nx, xcap;               /* used / capacity of xreq (under split_lock) */
    int nhdr;                   /* headers used this round */
    int nruns;                  /* runs and lone partitions sent early this round */
    int round;                  /* Start count - 1, sent in the runs' headers */
    int completed_upto;         /* treq[0..completed_upto) known complete this round */
} pt_send_side;

/* Tags of a timer request past its ntrans group tags: the split tag carries
 * headed runs, and sender partition p sent alone goes on its own late tag. */
static inline int pt_split_tag(int tag_base, int ntrans) { return tag_base + ntrans; }
static inline int pt_late_tag(int tag_base, int ntrans, int p) { return tag_base + ntrans + 1 + p; }

/* Receiver, per sender partition of a split group (timer policy). */
enum { PT_SP_NONE = 0, PT_SP_RUN = 1, PT_SP_LATE = 2, PT_SP_IN = 3 };

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
    MPI_Request *treq;       /* persistent receive of each whole group */
    unsigned char *tdone;    /* per transport message, this round */
    int ndone;
    int scan_from;           /* transport messages before it are all done this round */
    _Atomic int64_t app_polled_ns; /* when the application last made it test MPI (Parrived, Test, Wait) */
    atomic_uint misses;      /* MPI_Parrived misses since MPI was last tested */
    atomic_int last_miss;    /* the partition of the last miss */
    char *staging;           /* non-contiguous receive types: bytes land here first */
    char *dest;              /* where byte 0 of the message lands (user buffer or staging) */
    int tag_base;
    int error;               /* pt_err kind detected (e.g. PT_E_TRUNCATE), reported at completion */
    int error_code;          /* PT_E_INTERNAL: the internal call's code, and its name */
    const char *error_call;
    /* timer policy: runs of split groups */
    int split;
    int64_t hdr_in[PT_RUN_LEN];  /* header being received */
    int64_t run_hdr[PT_RUN_LEN]; /* header of the run being received (or stashed) */
    MPI_Request hdr_req, run_req;
    int hdr_posted, run_posted, have_stash;
    int *group_missing;      /* per transport message: partitions still to come in runs */
    unsigned char *sstate;   /* per sender partition, this round: PT_SP_* */
    MPI_Request *lreq;       /* posted receives of lone late partitions (first nlate used) */
    int *lpart;              /* the sender partition of each */
    int *lidx;               /* MPI_Testsome's indices */
    int nlate;
    int late_from;           /* where the next test of lreq starts (recv_runs.c: test_late) */
    unsigned char *group_split; /* per transport message: its terminator came (it is in runs) */
    int round;                  /* Start count - 1, compared with the runs' headers */
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
/* The request's current (or last) round, counted from 1 (0: never started). */
int pt_request_round(const pt_request *req);
int pt_request_start(pt_request *req);
/* Progress and report: returns MPI_SUCCESS and sets *done when the round is
 * complete (then the request becomes inactive and *status is filled). */
int pt_request_test(pt_request *req, int *done, MPI_Status *status);
/* Like pt_request_test but leaves the request active (Request_get_status). */
int pt_request_peek(pt_request *req, int *done, MPI_Status *status);
int pt_request_wait(pt_request *req, MPI_Status *status);
int pt_request_free(MPI_Request *handle);

/* send_side.c */
int pt_send_init(pt_request *req);
void pt_send_start(pt_request *req);
int pt_send_progress(pt_request *req, int *done);
void pt_send_destroy(pt_request *req);
int pt_issue_group(pt_request *req, int g);
/* Isend user partitions [first, end) on the data communicator. */
int pt_send_span_isend(pt_request *req, int first, int end, int tag, MPI_Request *out);

/* recv_side.c */
int pt_recv_init(pt_request *req);
int pt_recv_start(pt_request *req);
/* Progress the receive side: test the transport messages in order up to the
 * first one missing, and, when lo >= 0, messages lo..hi too (those of one
 * partition). Call with progress_lock held. */
int pt_recv_progress(pt_request *req, int lo, int hi);
int pt_recv_round_done(const pt_request *req);
/* Every receive partition was reported arrived this round. */
int pt_recv_all_arrived(const pt_request *req);
void pt_recv_destroy(pt_request *req);
void pt_recv_fill_status(const pt_request *req, MPI_Status *status);
/* Report the round's deferred error (r->error) through the handler, naming call. */
int pt_recv_report_error(pt_request *req, const char *call);
void pt_recv_message_done(pt_request *req, int j);
/* The application tested MPI for this receive (Parrived, Test, Wait); and
 * whether it did so within PT_APP_POLLING_NS: then background progress
 * (the progress thread) leaves the request alone. A second thread driving
 * MPI next to a polling one only contends with it: on 2 cores, copies of
 * late partitions ran up to 5x slower. */
void pt_recv_app_polled(pt_request *req);
int pt_recv_app_polling(const pt_request *req);
#define PT_APP_POLLING_NS 100000
void pt_recv_partition_in(pt_request *req, int p);

/* timer_flush.c (sender) */
/* Flush the overdue groups; returns when a check is next due
 * (CLOCK_MONOTONIC ns; INT64_MAX: nothing pending). */
int64_t pt_timer_flush_due(pt_request *req);
/* Partition p of a group the timer already split became ready: send it now. */
int pt_timer_send_late(pt_request *req, int g, int p);
int pt_timer_finish_group(pt_request *req, int g);
int pt_timer_alloc(pt_request *req);
void pt_timer_free(pt_request *req);
void pt_timer_round_reset(pt_request *req);
/* All run and terminator sends of the round completed? */
int pt_timer_runs_complete(pt_request *req, int *done);

/* recv_runs.c (receiver side of split groups) */
int pt_runs_setup(pt_request *req);
int pt_runs_round_start(pt_request *req);
int pt_runs_progress(pt_request *req);
void pt_runs_destroy(pt_request *req);
/* Group j's whole-group receive got the empty terminator: it comes in runs. */
void pt_runs_terminator(pt_request *req, int j);

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
