/* The fabric channel of the PRTT probe (loggp_channel.h): each message is an
 * RMA write with remote CQ data into the server's buffer, posted exactly as
 * libpartita's fabric transport posts a transport message (pt_fab_put:
 * injected, in injected pieces, or whole with a completion;
 * PARTITA_FABRIC_PIECES=0 as there; over shm from 1 MiB up split, the tail
 * with the remote data and the head a plain write the sender copies, then a
 * notice, PARTITA_FABRIC_SPLIT_COPY=0 as there: fabric_wire.h); the server
 * "receives" it by finding its completions on the completion queue; the
 * reply is a write back (an empty control message when it has no bytes). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/fabric/fabric_ctx.h"
#include "transport/fabric/fabric_wire.h"
#include "loggp_prtt.h"

typedef struct fab_state {
    pt_fab_ctx *ctx;
    pt_fab_mr mr;           /* our buffer: written by the peer, and sent from */
    fi_addr_t peer;
    uint64_t peer_base, peer_key;
    pt_fab_op op;           /* every write shares it: only the count of completions matters */
    pt_fab_op head_op;      /* a split message's head (plain write): its notice follows its completion */
    int head_done;
    long sent_done;         /* our writes completed locally */
    long arrived, consumed; /* remote writes and control messages in, and taken by recv/reply_recv */
    int failed;
} fab_state;

static fab_state st;
static char provider[PT_FAB_PROV_MAX];

static void on_write(pt_fab_ctx *ctx, uint64_t imm)
{
    (void)ctx, (void)imm;
    st.arrived++;
}

static void on_control(pt_fab_ctx *ctx, uint64_t imm, const void *payload, size_t len)
{
    (void)ctx, (void)imm, (void)payload, (void)len;
    st.arrived++;
}

static void on_error(pt_fab_ctx *ctx, int error, const char *what)
{
    fprintf(stderr, "partita-loggp: libfabric completion error on %s: %s (%s)\n", pt_fab_provider(ctx),
            pt_fab_strerror(error), what ? what : "");
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void on_done(pt_fab_ctx *ctx, pt_fab_op *op, int error)
{
    (void)op;
    if (error)
        on_error(ctx, error, "local write completion");
    st.sent_done++;
}

static void on_head_done(pt_fab_ctx *ctx, pt_fab_op *op, int error)
{
    (void)op;
    if (error)
        on_error(ctx, error, "local completion of a split message's head");
    st.head_done = 1;
}

static void poll_once(void) { pt_fab_poll(st.ctx, 64, 0); }

static size_t piece;       /* as the transport's sender splits its writes (fabric_wire.h) */
static size_t split_min;   /* as the transport's sender splits its copies (0: none) */
static long writes_posted; /* that complete: injected writes and pieces do not */

/* Lock held: an empty control message with imm (a reply, or a split message's notice). */
static int notice(uint64_t imm)
{
    int rc;
    while ((rc = pt_fab_control(st.ctx, st.peer, imm, NULL, 0, NULL, NULL)) == -FI_EAGAIN)
        pt_fab_poll(st.ctx, 64, 1);
    return rc;
}

/* Lock held: a split message as the transport's sender posts it when its
 * progress follows at once (fabric_split.c): the tail with imm, the head
 * plain, and after the head's local completion (over shm: in the peer's
 * buffer) the notice. */
static int write_split(loggp_probe *p, size_t offset, size_t s, uint64_t imm)
{
    size_t head = pt_fab_split_head(s);
    uint64_t raddr = st.peer_base + offset;
    int rc;
    while ((rc = pt_fab_write(st.ctx, p->buf + head, s - head, st.mr.desc, st.peer, raddr + head, st.peer_key, imm,
                              &st.op)) == -FI_EAGAIN)
        pt_fab_poll(st.ctx, 64, 1);
    if (rc)
        return rc;
    writes_posted++;
    st.head_done = 0;
    while ((rc = pt_fab_write_plain(st.ctx, p->buf, head, st.mr.desc, st.peer, raddr, st.peer_key, &st.head_op)) ==
           -FI_EAGAIN)
        pt_fab_poll(st.ctx, 64, 1);
    while (rc == 0 && !st.head_done)
        pt_fab_poll(st.ctx, 64, 1);
    return rc ? rc : notice(imm);
}

static void write_to_peer(loggp_probe *p, size_t offset, size_t s, uint64_t imm)
{
    pt_fab_lock(st.ctx);
    int rc, completes = 0;
    if (s == 0)
        rc = notice(imm);
    else if (pt_fab_is_split(s, split_min))
        rc = write_split(p, offset, s, imm);
    else {
        pt_fab_put_write w = {.src = p->buf, .desc = st.mr.desc, .len = s, .dest = st.peer,
                              .raddr = st.peer_base + offset, .key = st.peer_key, .imm = imm, .piece = piece};
        size_t sent = 0;
        while ((rc = pt_fab_put(st.ctx, &w, &sent, &st.op, &completes)) == -FI_EAGAIN)
            pt_fab_poll(st.ctx, 64, 1);
    }
    pt_fab_unlock(st.ctx);
    if (rc) {
        fprintf(stderr, "partita-loggp: fi_writedata/fi_inject_writedata: %s\n", pt_fab_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    writes_posted += completes;
}

static size_t peer_piece;     /* the peer's piece size: a write of s bytes arrives in pt_fab_pieces(s, it) */
static size_t peer_split_min; /* and its split size: such a write arrives as tail and notice */

/* Wait for the next arrival of s bytes (a write, its pieces, a split message's
 * tail and notice, or an empty reply). */
static void take_arrival(size_t s)
{
    long n = !s ? 1 : pt_fab_is_split(s, peer_split_min) ? 2 : (long)pt_fab_pieces(s, peer_piece, 0);
    while (st.arrived < st.consumed + n)
        poll_once();
    st.consumed += n;
}

static void send_write(loggp_probe *p, int i, size_t s)
{
    write_to_peer(p, (size_t)i * p->slot, s, pt_imm(PT_IMM_MESSAGE, 0, (uint64_t)i));
}

static void complete_writes(loggp_probe *p, int n)
{
    (void)p, (void)n;
    while (st.sent_done < writes_posted)
        poll_once();
}

static void prepare(loggp_probe *p, int n, size_t s) { (void)p, (void)n, (void)s; }
static void recv_write(loggp_probe *p, int i, size_t s) { (void)p, (void)i, take_arrival(s); }
static void reply_send(loggp_probe *p, size_t s)
{
    write_to_peer(p, 0, s, pt_imm(PT_IMM_MESSAGE, 0, 0));
}
static void reply_recv(loggp_probe *p, size_t s) { (void)p, take_arrival(s); }

/* The server's reply writes complete off the clock. */
static void next_round(loggp_probe *p, int n, size_t s)
{
    (void)n, (void)s;
    complete_writes(p, 0);
}

static const loggp_channel fabric_channel = {
    .name = "fabric", .send = send_write, .complete_sends = complete_writes, .prepare = prepare,
    .recv = recv_write, .reply_send = reply_send, .reply_recv = reply_recv, .next_round = next_round};

const char *loggp_fabric_provider(void) { return provider; }

int loggp_fabric_switches(size_t known[LOGGP_FABRIC_SWITCHES_MAX])
{
    int n = 0;
    known[n++] = pt_fab_inject_size(st.ctx);
    if (piece)
        known[n++] = pt_fab_largest_in_pieces(piece, 0);
    if (split_min > known[n - 1] + 1)
        known[n++] = split_min - 1;
    return n;
}

/* Whether ok holds on both ranks (each step of the set-up stops on both or on neither). */
static int both_ok(int ok)
{
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

typedef struct exchange {
    uint64_t base, key, piece, split_min;
    uint32_t namelen;
    unsigned char name[PT_FAB_NAME_MAX];
} exchange;

const loggp_channel *loggp_fabric_open(loggp_probe *p, size_t client_bytes, size_t server_bytes, int same_host,
                                       char *err, size_t errlen)
{
    /* checked by both ranks together, before anything else: a rank that stops
     * alone would leave the other waiting in the address exchange below */
    int pieces_wanted, split_wanted;
    int ok = pt_fab_env_flag("PARTITA_FABRIC_PIECES", 1, &pieces_wanted, err, errlen) == 0;
    if (!both_ok(ok)) {
        if (ok)
            snprintf(err, errlen, "the other rank's PARTITA_FABRIC_PIECES is not 0 or 1");
        return NULL;
    }
    ok = pt_fab_env_flag("PARTITA_FABRIC_SPLIT_COPY", 1, &split_wanted, err, errlen) == 0;
    if (!both_ok(ok)) {
        if (ok)
            snprintf(err, errlen, "the other rank's PARTITA_FABRIC_SPLIT_COPY is not 0 or 1");
        return NULL;
    }
    const char *env = getenv("PARTITA_FABRIC_PROVIDER");
    snprintf(provider, sizeof provider, "%s", env && *env ? env : same_host ? "shm" : "tcp;ofi_rxm");
    /* both ranks see a difference: with one pinned to shm and the other to tcp, the address
     * exchange below failed with "fi_av_insert ... failed", which did not say why */
    char other[PT_FAB_PROV_MAX];
    MPI_Sendrecv(provider, sizeof provider, MPI_CHAR, 1 - p->rank, 0, other, sizeof other, MPI_CHAR, 1 - p->rank, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    other[sizeof other - 1] = '\0';
    if (strcmp(provider, other)) {
        snprintf(err, errlen, "the ranks use different libfabric providers ('%s' on rank %d, '%s' on rank %d): "
                 "set the same PARTITA_FABRIC_PROVIDER on both", provider, p->rank, other, 1 - p->rank);
        return NULL;
    }
    pt_fab_handlers h = {.remote_write = on_write, .control = on_control, .error = on_error};
    pt_fab_set_handlers(&h);
    st.op.done = on_done;
    st.head_op.done = on_head_done;
    int rc = pt_fab_open(provider, &st.ctx, err, errlen);
    ok = rc == 0;
    if (!both_ok(ok)) {
        if (ok)
            snprintf(err, errlen, "the other rank cannot open libfabric provider '%s'", provider);
        return NULL;
    }
    size_t bytes = p->rank == 0 ? client_bytes : server_bytes;
    rc = pt_fab_mr_reg(st.ctx, p->buf, bytes, FI_REMOTE_WRITE | FI_WRITE, &st.mr);
    ok = rc == 0;
    if (!both_ok(ok)) {
        snprintf(err, errlen, "fi_mr_reg of %zu bytes on '%s' failed%s%s", bytes, provider, ok ? " on the other rank" : ": ",
                 ok ? "" : pt_fab_strerror(rc));
        return NULL;
    }
    piece = pt_fab_piece_size(st.ctx, pieces_wanted);
    split_min = pt_fab_split_size(provider, split_wanted, 0); /* the probe sends messages only */
    exchange mine = {.base = st.mr.base, .key = st.mr.key, .piece = piece, .split_min = split_min}, theirs;
    const void *name;
    mine.namelen = (uint32_t)pt_fab_name(st.ctx, &name);
    memcpy(mine.name, name, mine.namelen);
    MPI_Sendrecv(&mine, sizeof mine, MPI_BYTE, 1 - p->rank, 0, &theirs, sizeof theirs, MPI_BYTE, 1 - p->rank, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    st.peer_base = theirs.base;
    st.peer_key = theirs.key;
    peer_piece = theirs.piece;
    peer_split_min = theirs.split_min;
    pt_fab_lock(st.ctx);
    rc = pt_fab_peer(st.ctx, theirs.name, theirs.namelen, &st.peer);
    pt_fab_unlock(st.ctx);
    if (!both_ok(rc == 0)) {
        snprintf(err, errlen, "fi_av_insert of the peer's address on '%s' failed", provider);
        return NULL;
    }
    snprintf(provider, sizeof provider, "%s", pt_fab_provider(st.ctx));
    return &fabric_channel;
}

void loggp_fabric_close(loggp_probe *p)
{
    (void)p;
    if (!st.ctx)
        return;
    complete_writes(p, 0);
    /* the peer may still need our progress for its last writes: close together, polling */
    MPI_Request r;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    for (int done = 0; !done; poll_once())
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    /* every completion belongs to a message take_arrival counted: one more
     * means the two sides disagree on how a message arrives (its pieces, or
     * a split message's two), and the times above counted the wrong ones */
    if (st.arrived > st.consumed) {
        fprintf(stderr, "partita-loggp: error: %ld fabric completions more than the messages sent make: the ranks "
                "disagree on how a message arrives (pieces, split copies)\n", st.arrived - st.consumed);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    pt_fab_mr_close(&st.mr);
    pt_fab_close_all();
    st.ctx = NULL;
}
