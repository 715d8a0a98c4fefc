/* The libfabric transport: every message, and every run of the timer policy,
 * is one RMA write with remote CQ data (fi_writedata) from the sender's
 * buffer into the receiver's registered buffer; the immediate names the
 * receiving request and the message, or the run's first partition and count
 * (fabric_wire.h). docs/library.md, "The fabric transport", has the protocol:
 *
 *   set-up   The sender opens the process's endpoint for the provider (shm
 *            with a peer on its host, else tcp;ofi_rxm; PARTITA_FABRIC_PROVIDER
 *            pins one), and sends a hello (provider, its endpoint address, its
 *            request id) on the transport's own communicator, on a tag it
 *            names in the set-up message. The receiver, once it has the
 *            set-up message and the hello, opens the same provider, registers
 *            the buffer the bytes land in (the user's, or the staging buffer
 *            of a non-contiguous type) and replies with its address, the
 *            buffer's key and address and its request id. Neither side waits:
 *            each picks the other's message up in its progress.
 *   credit   The receiver's MPI_Start grants the round: an empty control
 *            message (immediate CREDIT, round number) to the sender. A message
 *            marked before its round's credit (or before the reply) is queued
 *            and posted by progress as soon as both are in.
 *   arrival  The receiver's completion queue reports each write with its
 *            immediate (a write of a few inject sizes comes as injected
 *            pieces, which it counts: fabric_wire.h); the request's progress
 *            turns them into the upcalls pt_recv_message_done / pt_recv_parts_in.
 *   split    Over shm a message of 1 MiB or more, or a timer run of 64 KiB
 *            or more, goes as a tail the receiver copies and a head the
 *            sender copies (in MPI_Pready for a run of up to 128 KiB, else in
 *            its progress), then a notice (fabric_split.c, fabric_wire.h).
 *   sender   The round is complete locally when every write posted in it has
 *            its local completion. A non-contiguous type is packed into a
 *            staging buffer, each message's partitions just before it goes. */
#ifndef PARTITA_FABRIC_TRANSPORT_H
#define PARTITA_FABRIC_TRANSPORT_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/fabric/fabric_ctx.h"
#include "transport/fabric/fabric_wire.h"
#include "transport/transport.h"

struct pt_request;

extern const pt_transport_ops pt_fabric_transport;

/* Whether the fabric can serve a request to world rank peer (auto): the
 * process wants the fabric (PARTITA_TRANSPORT fabric or auto at MPI_Init, when
 * every rank checked its providers), and the provider for that peer (shm on
 * one host, tcp;ofi_rxm across hosts) is available on both. */
int pt_fabric_reaches(int peer_world);
/* The provider for world rank peer (PARTITA_FABRIC_PROVIDER, else by host). */
const char *pt_fabric_provider_for(int peer_world);

/* Objects an immediate names: a sender or a receiver state. */
enum { PT_FAB_SENDER = 1, PT_FAB_RECEIVER = 2 };

/* One write's completion context. */
typedef struct pt_fab_wop {
    pt_fab_op op;
    struct pt_fab_send *owner;
    int item;             /* a split message's head write: its queue item (fabric_split.c); else -1 */
    int notice_owed;      /* ... written, its notice not yet posted (the provider's queue was full) */
} pt_fab_wop;

/* A message or run, queued until the reply and the round's credit are in
 * (and the provider has room); its immediate gets the receiver's id when it
 * is posted. */
typedef struct pt_fab_pending {
    size_t offset, len; /* bytes of the round */
    unsigned kind;      /* PT_IMM_MESSAGE or PT_IMM_RUN */
    uint64_t low;       /* the immediate's low bits */
    size_t sent;        /* of a write that goes in pieces: bytes posted (a full queue stops it midway) */
} pt_fab_pending;

typedef struct pt_fab_send {
    int kind;                 /* PT_FAB_SENDER */
    struct pt_request *req;
    uint32_t id;              /* credits name it */
    pt_fab_ctx *ctx;
    MPI_Comm comm;            /* the transport's communicator */
    int tag;                  /* hello and reply */
    int peer;                 /* world rank */
    pt_fab_hello *hello;      /* kept alive past the request if its send never completes */
    pt_fab_reply reply;       /* from the receiver, over the fabric (control message PT_IMM_REPLY) */
    atomic_int reply_in;
    pt_fab_reply refusal;     /* or over MPI, when the receiver cannot use the fabric */
    MPI_Request hello_req, reply_req;
    int connected;            /* reply in and usable (under qlock) */
    size_t *off;              /* ntrans+1 byte offsets of the messages */
    fi_addr_t dest;
    const char *src;          /* byte 0 of the round: the user's buffer, or staging */
    size_t piece;             /* bytes of a piece (fabric_wire.h), 0: every write goes whole */
    size_t early_write;       /* bytes per write of a stall's runs (PT_FAB_EARLY_WRITE), 0: whole */
    atomic_long pieced;       /* writes that went in pieces (Partita_Request_why) */
    size_t split_min;         /* messages of this many bytes or more are copied by both sides (fabric_split.c),
                                 0: none */
    size_t run_split_min;     /* timer runs of this many bytes or more too, 0: none */
    int head_next;            /* the queue's items before it have their heads out or have none (whole writes);
                                 split items from it up to qhead have only their tails out */
    atomic_int notices_owed;  /* heads written whose notice is still to be posted */
    atomic_long split;        /* messages and runs copied by both sides so far (Partita_Request_why) */
    char *staging;            /* non-contiguous types: packed here */
    pt_fab_mr mr;             /* of src, when the provider wants local registration */
    atomic_int credits;       /* rounds granted */
    int round;                /* rounds started */
    pthread_mutex_t qlock;    /* the queue, connected; held while posting */
    pt_fab_pending *queue;
    int qhead, qtail, qcap;
    int parts_queued;         /* sender partitions queued this round (the run that makes them all is
                                 the round's last write: fabric_send.c, lone_last_run) */
    int64_t run_ticks;        /* when this round's latest run was queued (pt_ticks; 0: none yet) */
    int64_t copy_left_ticks;  /* ... and the receiver's copying of the round's runs left then */
    int64_t piece_copy_ticks; /* PT_FAB_PIECE_COPY_NS in ticks */
    pt_fab_wop *wops;         /* qcap of them, one per write of a round */
    atomic_int posted;        /* writes (and empty control messages) posted this round */
    atomic_int completed;     /* their local completions */
    atomic_int error;         /* a libfabric error code (< 0) of a write, or 0 */
    int status;               /* the reply's PT_FAB_ST_* when not OK */
    char why[160];            /* a failure found in progress, reported by send_progress */
} pt_fab_send;

typedef struct pt_fab_recv {
    int kind;                 /* PT_FAB_RECEIVER */
    struct pt_request *req;
    pthread_mutex_t lock;     /* the set-up and the credit: the request's progress and background progress */
    uint32_t id;              /* writes name it */
    pt_fab_ctx *ctx;
    MPI_Comm comm;
    int tag, peer;
    pt_fab_hello hello;
    pt_fab_reply reply;       /* over the fabric when all is well, else over MPI (reply_req) */
    MPI_Request hello_req, reply_req;
    pt_fab_op reply_op;       /* the fabric reply's completion, when it is not injected */
    pt_fab_mr reply_mr;
    int reply_due;            /* the fabric reply is still to be posted */
    atomic_int reply_done;    /* ... and has completed (the buffer may go) */
    int connected;            /* hello in, buffer registered, reply sent */
    fi_addr_t src;            /* the sender's endpoint (credits) */
    char *dest;               /* where this layout's bytes land (registered as mr) */
    size_t bytes;             /* ... and how many the sender sends */
    pt_fab_mr mr;
    int credit_due;           /* the round's credit is still to be sent */
    int failed;               /* the fabric cannot serve it (why says how) */
    atomic_int settled;       /* connected and owing nothing (fabric_recv.c: note_settled) */
    char why[200];
    /* Arrivals, written by whichever thread reads the completion queue (under
     * the context's lock), read by the request's progress: each queue holds
     * at most one round's entries (writes come only after the credit, which
     * comes only after the previous round completed). */
    int *msgs;                /* message indices: msgs_cap_round of them */
    int msgs_cap_round;
    atomic_int nmsgs;
    int msgs_seen;
    uint32_t *runs;           /* first, count pairs: sparts of them at most */
    atomic_int nruns;
    int runs_seen;
    int runs_cap;
    atomic_int bad;           /* immediates naming nothing of this round */
    /* Pieces (fabric_wire.h): the sender's piece size (from the hello), this
     * layout's message offsets and partition bytes (the request's may be
     * another layout's when a piece comes), and the pieces in so far of each
     * message and of each run by its first partition (under the context's
     * lock; back to 0 when the write is whole, so no reset per round). */
    size_t piece;
    size_t split_min;         /* messages of this many bytes or more come as two completions (fabric_wire.h) */
    size_t run_split_min;     /* and runs of this many */
    size_t *tstart, part_bytes;
    unsigned char *msg_pieces, *run_pieces;
} pt_fab_recv;

/* fabric_send.c, fabric_recv.c */
int pt_fab_send_init(struct pt_request *req);
void pt_fab_send_start(struct pt_request *req);
int pt_fab_send_message(struct pt_request *req, int j);
int pt_fab_send_runs(struct pt_request *req, int g, const pt_run *runs, int n, int flags);
int pt_fab_send_finish_group(struct pt_request *req, int g);
int pt_fab_send_progress(struct pt_request *req, int all_issued, int *done);
/* fabric_send.c: record a write's failure (reported by the request's progress). */
void pt_fab_send_failed(pt_fab_send *s, int rc);
/* A queued item's immediate (the receiver's id is known once it replied). */
static inline uint64_t pt_fab_item_imm(const pt_fab_send *s, const pt_fab_pending *it)
{
    return pt_imm(it->kind, s->reply.receiver_id, it->low);
}
/* Whether a queued item, a message or a run, goes split (fabric_wire.h). */
static inline int pt_fab_item_split(const pt_fab_send *s, const pt_fab_pending *it)
{
    return pt_fab_splits(it->len, it->kind == PT_IMM_RUN, s->split_min, s->run_split_min);
}
/* fabric_split.c (s's qlock held): post a split item's tail, the part the
 * receiver copies (op: the tail's completion), and the heads this side
 * copies, in order: every one from the sender's progress; from MPI_Pready
 * (in_pready) only those of runs of up to the largest run in pieces. */
int pt_fab_split_tail(pt_fab_send *s, const pt_fab_pending *it, uint64_t imm, pt_fab_op *op);
int pt_fab_split_heads(pt_fab_send *s, int in_pready);
/* PARTITA_FABRIC_SPLIT_COPY: 1 (the default) or 0, read in MPI_Init. */
int pt_fab_split_copy_wanted(void);
void pt_fab_send_destroy(struct pt_request *req);
int pt_fab_recv_setup(struct pt_request *req);
int pt_fab_recv_start(struct pt_request *req);
int pt_fab_recv_progress(struct pt_request *req, const pt_recv_focus *focus);
int pt_fab_recv_settled(const struct pt_request *req);
void pt_fab_recv_destroy(struct pt_request *req);

/* fabric_transport.c: the handlers' side (under the context's lock). */
void pt_fab_credit_in(pt_fab_send *s, uint64_t round);
void pt_fab_reply_in(pt_fab_send *s, const void *payload, size_t len);
void pt_fab_arrival(pt_fab_recv *r, uint64_t imm);
/* fabric_recv.c, under the context's lock: whether the write imm names is
 * whole with this completion (a piece of one still missing others is not). */
int pt_fab_recv_whole(pt_fab_recv *t, uint64_t imm);
/* fabric_send.c: what Partita_Request_why says of a fabric send request's pieces. */
void pt_fab_describe(const struct pt_request *req, char *text, size_t len);
/* PARTITA_FABRIC_PIECES: 1 (the default) or 0 (every write goes whole), read in MPI_Init. */
int pt_fab_pieces_wanted(void);
/* PARTITA_FABRIC_EARLY_SPLIT (read in MPI_Init): whether a stall's runs to
 * world rank peer go in several writes (fabric_send.c, PT_FAB_EARLY_WRITE):
 * auto (the default) when the peer is on another host, 1 always, 0 never. */
int pt_fab_early_split(int peer_world);
/* The transport's communicator and a fresh pair of tags on it (hello on the
 * even tag, the reply on tag + 1). */
MPI_Comm pt_fab_comm(void);
int pt_fab_next_tag(void);
/* From an application thread whose fabric request is still in progress:
 * every few calls, run MPI's progress engine once. The fabric's own progress
 * makes no MPI call, and a program that only polls a fabric request must not
 * starve MPI traffic the peer waits for (tests/fabric/mpi_progress.c). */
void pt_fab_nudge_mpi(void);
/* Release an id so that no handler sees its object any more (takes the
 * context's lock when there is one). */
void pt_fab_forget(pt_fab_ctx *ctx, uint32_t id);
/* The live requests, which background progress (pt_transport_ops.poll)
 * helps: a receiver's set-up and credit, a sender's reply and queued
 * messages, while the application waits on something else (a process that
 * sends to itself waits on the send first). obj is a sender or receiver
 * state; unregistering waits for a background pass that uses it. */
void pt_fab_register(void *obj);
void pt_fab_unregister(void *obj);
/* What background progress does for one of them (skipped when another
 * thread is at it); with_mpi: also what needs an MPI call (the receiver's
 * hello; never from the fabric's own progress thread). Returns 1 when it
 * still owes something (queued or unfinished writes, a reply or credit
 * still to post) or was skipped, else 0. */
int pt_fab_send_help(pt_fab_send *s);
int pt_fab_recv_help(pt_fab_recv *t, int with_mpi);
/* A round begins: wake the fabric's progress thread if it naps. */
void pt_fab_wake(void);

#endif
