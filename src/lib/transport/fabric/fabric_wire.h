/* What the fabric transport puts on the wire besides the user's bytes.
 *
 * The immediate (64 bits of remote CQ data, on every write and control
 * message) names its kind and the request it is for, since one completion
 * queue serves every request of the process:
 *   bits 63-62  kind: PT_IMM_MESSAGE, PT_IMM_RUN, PT_IMM_CREDIT, PT_IMM_REPLY
 *   bits 61-42  the target side's request id (20 bits)
 *   bits 41-0   MESSAGE: the transport message's index (a message the
 *               sender splits, below, comes as two completions naming it)
 *               RUN: whether it goes in pieces by a message's limit (bit
 *               41: below), the run's first sender partition (bits 40-20)
 *               and its partition count (bits 19-0)
 *               CREDIT: the round it grants (low 42 bits)
 * Runs (timer policy) therefore need fewer than 2^21 sender partitions (a
 * longer run goes in writes of at most 2^20 - 1), and a process at most 2^20
 * live fabric requests per context. */
#ifndef PARTITA_FABRIC_WIRE_H
#define PARTITA_FABRIC_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "transport/fabric/fabric_ctx.h"

enum { PT_IMM_MESSAGE = 0, PT_IMM_RUN = 1, PT_IMM_CREDIT = 2, PT_IMM_REPLY = 3 };
#define PT_IMM_ID_BITS 20
#define PT_IMM_ID_MAX ((1u << PT_IMM_ID_BITS) - 1)
#define PT_IMM_PART_BITS 21
#define PT_IMM_PART_MAX ((1u << PT_IMM_PART_BITS) - 1)
#define PT_IMM_COUNT_BITS 20
#define PT_IMM_COUNT_MAX ((1u << PT_IMM_COUNT_BITS) - 1)
#define PT_IMM_RUN_MSG_PIECES (UINT64_C(1) << 41)
#define PT_IMM_LOW_MASK ((UINT64_C(1) << 42) - 1)

static inline uint64_t pt_imm(unsigned kind, uint32_t id, uint64_t low)
{
    return (uint64_t)kind << 62 | (uint64_t)(id & PT_IMM_ID_MAX) << 42 | (low & PT_IMM_LOW_MASK);
}
static inline uint64_t pt_imm_run_low(uint32_t first, uint32_t count)
{
    return (uint64_t)first << PT_IMM_COUNT_BITS | count;
}
static inline uint64_t pt_imm_run(uint32_t id, uint32_t first, uint32_t count)
{
    return pt_imm(PT_IMM_RUN, id, pt_imm_run_low(first, count));
}
static inline unsigned pt_imm_kind(uint64_t imm) { return (unsigned)(imm >> 62); }
static inline uint32_t pt_imm_id(uint64_t imm) { return (uint32_t)(imm >> 42) & PT_IMM_ID_MAX; }
static inline uint64_t pt_imm_low(uint64_t imm) { return imm & PT_IMM_LOW_MASK; }
static inline uint32_t pt_imm_run_first(uint64_t imm) { return (uint32_t)(imm >> PT_IMM_COUNT_BITS) & PT_IMM_PART_MAX; }
static inline uint32_t pt_imm_run_count(uint64_t imm) { return (uint32_t)imm & PT_IMM_COUNT_MAX; }
/* Whether a write goes in pieces by a run's limit, not a message's (below). */
static inline int pt_imm_run_pieces(uint64_t imm)
{
    return pt_imm_kind(imm) == PT_IMM_RUN && !(imm & PT_IMM_RUN_MSG_PIECES);
}

/* Pieces. A write of more than the piece size the sender names in its hello
 * (its provider's inject size, when that is at least PT_FAB_PIECE_MIN) goes
 * as injected writes of the piece size (the last one shorter), each with the
 * write's immediate, when it needs at most PT_FAB_PIECES_MAX of them, or at
 * most PT_FAB_RUN_PIECES_MAX for a run (the timer's partitions that go at
 * their marks once their group was split: a laggard's). The receiver knows
 * every write's length (a message's from the plan, a run's from its count)
 * and kind, so it counts the pieces by the same rule: nothing more on the
 * wire. Why: over shm a write above the inject size takes the provider's
 * copy-by-the-receiver path; one 8 KiB write took 1.2 times a plain MPI_Send
 * where two injected 4 KiB pieces took 0.8, and a laggard's 32 KiB partition
 * arrived 21 us after its mark whole against 4 in pieces (docs/library.md).
 * Messages keep the small limit: the marking thread pays for the copies, and
 * in the launches where the copies run slow (about 1 us a piece) up to 32
 * pieces per partition made `none`'s rounds twice as long. So does a run
 * flagged PT_IMM_RUN_MSG_PIECES: the round's last write (every sender
 * partition is queued with it) when the receiver is likely to have little
 * left to copy of the runs before it (fabric_send.c: lone_last_run). Pieces
 * pay where the sender's copies of one run overlap the receiver's of the
 * runs before it; a lone write has little to overlap. At 64 KiB in 2
 * partitions, the first half 100 us late (shm, 10 launches), the late 32 KiB
 * partition arrived 7.4-7.6 us after its mark in 8 pieces and 3.7-4.0 us as
 * one write, as `none`'s message does (docs/library.md, "The lone last run"). */
#define PT_FAB_PIECES_MAX 4u
#define PT_FAB_RUN_PIECES_MAX 32u
#define PT_FAB_PIECE_MIN 1024u
/* The largest write (a run's or a message's) that goes in pieces of this size. */
static inline size_t pt_fab_largest_in_pieces(size_t piece, int run)
{
    return piece * (run ? PT_FAB_RUN_PIECES_MAX : PT_FAB_PIECES_MAX);
}
static inline unsigned pt_fab_pieces(size_t len, size_t piece, int run)
{
    if (!piece || len <= piece || len > pt_fab_largest_in_pieces(piece, run))
        return 1;
    return (unsigned)((len + piece - 1) / piece);
}

/* Split copies. Over shm a write with remote data is copied by the
 * receiver's progress (the provider's CMA path, process_vm_readv there),
 * while a plain write is copied by the writer in the call. A message or a
 * run of at least the split sizes the sender names in its hello goes as its
 * tail [head, len) in one write with the immediate, which the receiver
 * copies, and its head [0, head) in a plain write the sender copies (in
 * MPI_Pready for a run of up to 128 KiB, else in its next progress:
 * fabric_split.c), followed, once that write has completed locally, by an
 * empty control message with the same immediate: the receiver reports the
 * message or run at the second of the two (a run's count kept by its first
 * partition, as for pieces). The two halves move on both cores at once (4
 * MiB from one process into another: 448 us copied by one side, 253 half by
 * each), but (likely) the head's lines end up in the sender's cache, where
 * the receiver's next access to them (its MPI_Send's or its own reads) has
 * to fetch them: a message splits from 1 MiB, where it paid in the round's time
 * (docs/library.md, "Both sides copy"); below, one write the receiver copies
 * was faster (64-256 KiB: 0.69-0.75 of the split's time). A timer run, sent
 * only when marking stalls (a laggard), splits from 64 KiB: under a laggard
 * that was faster than pieces (both sides copy every byte) up to 128 KiB and
 * than one write above ("Runs copied by both sides"). */
#define PT_FAB_SPLIT_MIN ((size_t)1 << 20)
#define PT_FAB_RUN_SPLIT_MIN ((size_t)64 << 10)
static inline size_t pt_fab_split_head(size_t len) { return (len / 2) & ~(size_t)63; }
static inline int pt_fab_is_split(size_t len, size_t split_min) { return split_min && len >= split_min; }
/* By the rule above, for both sides: a write of len bytes (a run's: run),
 * with the sender's split sizes. */
static inline int pt_fab_splits(size_t len, int run, size_t split_min, size_t run_split_min)
{
    return pt_fab_is_split(len, run ? run_split_min : split_min);
}

/* The piece size a sender names in its hello: its provider's inject size when
 * pieces are wanted (PARTITA_FABRIC_PIECES) and that size is large enough. */
size_t pt_fab_piece_size(const pt_fab_ctx *ctx, int wanted);
/* The split size a sender names in its hello for messages, or for runs (run):
 * by the rule above over shm when split copies are wanted
 * (PARTITA_FABRIC_SPLIT_COPY), else 0 (none). */
size_t pt_fab_split_size(const char *provider, int wanted, int run);

/* One write of len bytes from src (registered as desc) to raddr on dest, with
 * immediate imm, split by the rule above with this piece size. */
typedef struct pt_fab_put_write {
    const char *src;
    void *desc;
    size_t len;
    fi_addr_t dest;
    uint64_t raddr, key, imm;
    size_t piece;
    int run; /* in pieces by a run's limit (pt_imm_run_pieces of its immediate) */
} pt_fab_put_write;

/* Post the bytes of w from *sent on (fabric_put.c; the context's lock held).
 * Pieces advance *sent, so after -FI_EAGAIN a later call goes on where this
 * one stopped. *completes says whether a completion on op will follow (a
 * whole write) or the bytes were copied out already (injected). Returns 0, a
 * negative libfabric error or -FI_EAGAIN when the provider's queue is full. */
int pt_fab_put(pt_fab_ctx *ctx, const pt_fab_put_write *w, size_t *sent, pt_fab_op *op, int *completes);

/* Sender -> receiver, with the set-up message: who to answer and on which
 * providers. The receiver picks the first candidate it can open (shm only when
 * both run on the same host). */
#define PT_FAB_HELLO_MAGIC 0x66616231u /* "fab1" */
#define PT_FAB_MAX_CAND 2
typedef struct pt_fab_hello {
    uint32_t magic;
    uint32_t sender_id;  /* immediate id of credits and the reply */
    uint64_t host;       /* hash of the sender's host name */
    uint32_t ncand;
    uint32_t reply_tag;  /* for a reply over MPI, if the transport uses one */
    uint32_t piece;      /* bytes of a piece (0: every write goes whole) */
    uint32_t split_min;  /* messages of this many bytes or more come split (0: none) */
    uint32_t run_split_min; /* and runs of this many (0: none) */
    struct {
        char provider[PT_FAB_PROV_MAX];
        uint32_t namelen;
        unsigned char name[PT_FAB_NAME_MAX];
    } cand[PT_FAB_MAX_CAND];
} pt_fab_hello;

/* Receiver -> sender: where to write. status != 0: the receiver cannot take
 * the fabric (a PT_FAB_ST_* reason), and the sender reports it. */
enum { PT_FAB_ST_OK = 0, PT_FAB_ST_NO_PROVIDER = 1, PT_FAB_ST_REGISTER = 2, PT_FAB_ST_ADDRESS = 3 };
typedef struct pt_fab_reply {
    uint64_t base;        /* remote address of the receive buffer's byte 0 */
    uint64_t key;
    uint64_t bytes;       /* bytes the receiver takes */
    uint32_t receiver_id; /* immediate id of the writes */
    int32_t status;
    uint32_t cand;        /* which hello candidate it chose */
    uint32_t pad;
    unsigned char name[PT_FAB_NAME_MAX]; /* the receiver's endpoint address */
    uint32_t namelen;
} pt_fab_reply;

/* A hash of this host's name (FNV-1a), to tell shared-memory peers. */
uint64_t pt_fab_host_hash(void);

#endif
