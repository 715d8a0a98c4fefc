/* The MPI point-to-point transport: each message is a persistent send and a
 * pre-posted persistent receive on its own tag of a private data
 * communicator (a duplicate of MPI_COMM_WORLD, peers addressed by world
 * rank). Under the timer policy a group may instead go in runs: headed runs
 * on the request's split tag, partitions alone on their late tags, and an
 * empty terminator on the group's tag, which completes the receiver's
 * whole-group receive (send.c, recv.c, recv_runs.c). */
#ifndef PARTITA_MPI_TRANSPORT_H
#define PARTITA_MPI_TRANSPORT_H

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>

#include "transport/transport.h"

struct pt_request;

extern const pt_transport_ops pt_mpi_transport;

/* The private twin of MPI_COMM_WORLD that carries all transport messages. */
MPI_Comm pt_data_comm(void);

/* Header of one run of a split group (timer policy), sent on the split tag
 * just before the run's data. A group's first flush of a round is a series
 * of headed runs, the last one flagged: the receiver then posts a receive on
 * the late tag of every other partition of the group, and the sender sends
 * each of those alone, without a header. Flagged AHEAD too (over this
 * transport every first flush is), the group goes alone from the start of
 * the next PT_AHEAD_ROUNDS rounds: the receiver posts its late receives at
 * MPI_Start and no whole-group receive, and the sender sends no terminator. */
enum { PT_RUN_ROUND, PT_RUN_GROUP, PT_RUN_FIRST, PT_RUN_COUNT, PT_RUN_FLAGS, PT_RUN_LEN };
#define PT_RUN_FLAG_LAST 1  /* the last headed run of the group's first flush */
#define PT_RUN_FLAG_AHEAD 2 /* with LAST: the group goes alone from the start of the next
                               PT_AHEAD_ROUNDS rounds (transport.h: PT_RUNS_AHEAD) */

/* Tags of a timer request past its ntrans group tags: the split tag carries
 * headed runs, and sender partition p sent alone goes on its own late tag. */
static inline int pt_split_tag(int tag_base, int ntrans) { return tag_base + ntrans; }
static inline int pt_late_tag(int tag_base, int ntrans, int p) { return tag_base + ntrans + 1 + p; }

/* A lone late partition past MPI's eager limit goes in `pieces` eager
 * messages on its late tag (MPI keeps their order), each below the limit
 * (pt_plan_late_pieces). Partitions of 8 KiB, just past MPICH's 8112
 * bytes, went as rendezvous messages, each waiting for a handshake: 32 late
 * ones took 89-101 us after the last mark, in 2 eager pieces each 2.5-5.4 us
 * (docs/library.md, "Late partitions in eager pieces"). Piece i of a
 * partition is balanced as the model's cut is: bytes from
 * ptm_piece_offset(part_bytes, pieces, i) on, on both sides. */
/* The transport's word of the set-up message (PT_HS_TRANSPORT_ARG): the
 * first data tag, and above bit 32 the pieces of a late partition less one
 * (so a request with whole late partitions sends its tag alone). */
static inline int64_t pt_mpi_word(int tag_base, int late_pieces)
{
    return (int64_t)tag_base | (int64_t)(late_pieces - 1) << 32;
}
static inline int pt_mpi_word_tag(int64_t word) { return (int)(word & 0x7fffffff); }
static inline int pt_mpi_word_pieces(int64_t word) { return (int)(word >> 32) + 1; }

typedef struct pt_mpi_send {
    MPI_Request *treq;        /* persistent sends, one per message */
    int nmsg;                 /* those that exist */
    int tag_base, tag_count;  /* data tags [tag_base, tag_base+tag_count) on the data comm */
    int completed_upto;       /* treq[0..completed_upto) known complete this round */
    /* timer policy: runs */
    pthread_mutex_t xlock;    /* xreq, nx, xhdr, nhdr; keeps each header next to its data */
    MPI_Request *xreq;        /* run headers, run data and terminators of this round */
    int *xdone;               /* xcap: indices MPI_Testsome returns (pt_mpi_send_drain) */
    int64_t *xhdr;            /* PT_RUN_LEN per header */
    int nx, xcap;             /* used / capacity of xreq */
    int xdone_upto;           /* xreq[0..xdone_upto) known complete (send.c: pt_mpi_send_progress) */
    int nhdr;                 /* headers used this round */
    int late_pieces;          /* eager messages a lone late partition goes in (1: whole) */
} pt_mpi_send;

/* Receiver, per sender partition of a split group (timer policy). */
enum { PT_SP_NONE = 0, PT_SP_RUN = 1, PT_SP_LATE = 2 };

typedef struct pt_mpi_recv {
    MPI_Request *treq;        /* persistent receive of each whole message */
    int nreq;                 /* those that exist */
    int tag_base;
    unsigned char *tin;       /* per message, this round: its receive completed */
    int nin;
    int scan_from;            /* messages before it have all completed this round */
    int window_from;          /* where the next poll's window of messages past the scan begins */
    /* timer policy: runs of split groups (recv_runs.c) */
    int split;
    int64_t hdr_in[PT_RUN_LEN];  /* header being received */
    int64_t run_hdr[PT_RUN_LEN]; /* header of the run being received (or stashed) */
    MPI_Request hdr_req, run_req;
    int hdr_posted, run_posted, have_stash;
    int hdr_skipped;          /* progress calls since the header receive was last tested */
    int64_t hdr_quiet_until;  /* pt_ticks: the header receive is not tested before (recv_runs.c; 0: over) */
    unsigned char *sstate;   /* per sender partition, this round: PT_SP_* */
    int late_pieces;         /* receives per lone late partition (the sender's pieces) */
    MPI_Request *lreq;       /* posted receives of lone late partitions' pieces (first nlate used;
                                MPI_REQUEST_NULL once found complete) */
    int *lpart;              /* the sender partition of each */
    unsigned char *lleft;    /* per sender partition: its pieces not yet in */
    int *lfirst;             /* per sender partition with late receives: the first of them in lreq */
    int *lidx;               /* MPI_Testsome's indices */
    int nlate;
    int late_done;           /* those before it have all completed (recv_runs.c: test_late) */
    int late_from;           /* where the next window test of later ones starts */
    int late_early;          /* those past late_done found complete already (MPI_REQUEST_NULL) */
    int *ahead_end;          /* per group: announced ahead up to this round (pt_ahead_in) */
    int ahead_max;           /* the largest of them */
    int all_ahead;           /* this round every group was announced ahead: no header can come for it */
} pt_mpi_recv;

/* Receives are tested in order from a cursor and, past the first one still
 * pending, in a rotating window (recv.c: test_window, recv_runs.c:
 * test_late): the next window of at most `width` receives of [first, n),
 * from where the last one ended (*from), starting over at first past the
 * end. Sets *lo to its first index and *from past it; returns its length
 * (0: nothing past the cursor). */
static inline int pt_mpi_next_window(int *from, int first, int n, int width, int *lo)
{
    *lo = *from >= first && *from < n ? *from : first;
    int w = n - *lo < width ? n - *lo : width;
    w = w > 0 ? w : 0;
    *from = *lo + w;
    return w;
}

/* The operations (send.c, recv.c). */
int pt_mpi_send_init(struct pt_request *req);
void pt_mpi_send_start(struct pt_request *req);
int pt_mpi_send_message(struct pt_request *req, int j);
int pt_mpi_send_runs(struct pt_request *req, int g, const pt_run *runs, int n, int flags);
int pt_mpi_send_finish_group(struct pt_request *req, int g);
int pt_mpi_send_progress(struct pt_request *req, int all_issued, int *done);
int pt_mpi_send_drain(struct pt_request *req);
void pt_mpi_send_destroy(struct pt_request *req);
int pt_mpi_recv_setup(struct pt_request *req);
int pt_mpi_recv_start(struct pt_request *req);
int pt_mpi_recv_progress(struct pt_request *req, const pt_recv_focus *focus);
int pt_mpi_recv_settled(const struct pt_request *req);
int pt_mpi_recv_runs_may_come(const struct pt_request *req);
void pt_mpi_recv_destroy(struct pt_request *req);

/* Isend user partitions [first, end) on the data communicator (send.c). */
int pt_mpi_span_isend(struct pt_request *req, int first, int end, int tag, MPI_Request *out);

/* recv_runs.c */
int pt_mpi_runs_setup(struct pt_request *req);
int pt_mpi_runs_round_start(struct pt_request *req);
int pt_mpi_runs_progress(struct pt_request *req, const pt_recv_focus *focus);
void pt_mpi_runs_destroy(struct pt_request *req);

#endif
