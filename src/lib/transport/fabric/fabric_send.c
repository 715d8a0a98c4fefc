/* The fabric transport, sender (fabric_transport.h): messages and runs are
 * queued in order and posted while the receiver's reply and the round's
 * credit are in; MPI_Pready never waits for either. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner.h"
#include "request/clock.h"
#include "request/errors.h"
#include "request/request.h"
#include "transport/fabric/fabric_ids.h"
#include "transport/fabric/fabric_transport.h"

static pt_fab_send *state(const pt_request *req) { return req->tp; }

static void write_done(pt_fab_ctx *ctx, pt_fab_op *op, int error)
{
    (void)ctx;
    pt_fab_send *s = ((pt_fab_wop *)op)->owner;
    if (error) {
        int none = 0;
        atomic_compare_exchange_strong(&s->error, &none, error);
    }
    atomic_fetch_add_explicit(&s->completed, 1, memory_order_release);
}

/* Non-contiguous types: pack user partitions [first, end) into their place
 * in staging. Messages and runs never share a partition (the timer does not
 * cut), so packs of different threads never overlap. */
static int pack(pt_request *req, int first, int end)
{
    pt_fab_send *s = state(req);
    if (!s->staging || end <= first || req->type_size == 0)
        return MPI_SUCCESS;
    size_t elems = (size_t)(end - first) * (size_t)req->count;
    const char *in = req->buf + (MPI_Aint)first * req->count * req->extent;
    char *out = s->staging + (size_t)first * req->part_bytes;
    size_t batch = (size_t)INT_MAX / req->type_size; /* MPI_Pack takes int sizes */
    for (size_t done = 0; done < elems;) {
        size_t n = elems - done < batch ? elems - done : batch;
        int position = 0;
        int rc = PMPI_Pack(in + (MPI_Aint)done * req->extent, (int)n, req->type, out + done * req->type_size,
                           (int)(n * req->type_size), &position, req->comm);
        if (rc != MPI_SUCCESS)
            return rc;
        done += n;
    }
    return MPI_SUCCESS;
}

/* qlock held: may the round's writes go? */
static int ready(pt_fab_send *s)
{
    return s->connected && atomic_load_explicit(&s->credits, memory_order_acquire) >= s->round;
}

/* qlock held: post one queued item (a write that goes in pieces may have
 * been stopped midway by a full queue: it goes on from it->sent; of a split
 * message only the tail goes here). Returns 0, -FI_EAGAIN or a libfabric
 * error. */
static int post(pt_fab_send *s, pt_fab_pending *it)
{
    uint64_t imm = pt_fab_item_imm(s, it);
    int rc, completes = 0, n = atomic_load_explicit(&s->posted, memory_order_relaxed);
    s->wops[n].op.done = write_done;
    pt_fab_lock(s->ctx);
    if (pt_fab_item_split(s, it)) {
        rc = pt_fab_split_tail(s, it, imm, &s->wops[n].op);
        completes = 1;
    } else if (it->len == 0) {
        rc = pt_fab_control(s->ctx, s->dest, imm, NULL, 0, NULL, NULL); /* nothing to write: the immediate alone */
    } else {
        pt_fab_put_write w = {.src = s->src + it->offset, .desc = s->mr.desc, .len = it->len, .dest = s->dest,
                              .raddr = s->reply.base + it->offset, .key = s->reply.key, .imm = imm,
                              .piece = s->piece, .run = pt_imm_run_pieces(imm)};
        size_t before = it->sent;
        rc = pt_fab_put(s->ctx, &w, &it->sent, &s->wops[n].op, &completes);
        /* only a write in pieces advances it->sent: counted once, at its first piece */
        if (before == 0 && it->sent > 0)
            atomic_fetch_add_explicit(&s->pieced, 1, memory_order_relaxed);
    }
    pt_fab_unlock(s->ctx);
    if (rc == 0 && completes)
        atomic_store_explicit(&s->posted, n + 1, memory_order_release);
    return rc;
}

/* qlock held, in the application's progress only (an MPI call): the
 * receiver's refusal, if it sent one. */
static void take_refusal(pt_request *req)
{
    pt_fab_send *s = state(req);
    int flag = 0;
    if (s->connected || s->status || s->why[0] || s->reply_req == MPI_REQUEST_NULL)
        return;
    if (PMPI_Test(&s->reply_req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        snprintf(s->why, sizeof s->why, "MPI_Test of the receiver's fabric reply failed");
        return;
    }
    if (flag) {
        s->status = s->refusal.status ? s->refusal.status : PT_FAB_ST_ADDRESS;
        snprintf(s->why, sizeof s->why, "rank %d cannot use the fabric transport with provider '%s' (%s)", req->peer,
                 s->hello->cand[0].provider,
                 s->status == PT_FAB_ST_NO_PROVIDER ? "the provider is not available there or does not reach this host"
                 : s->status == PT_FAB_ST_REGISTER ? "registering its receive buffer failed"
                                                   : "our endpoint address is unusable there");
    }
}

/* s's qlock held: the receiver's reply, if it came over the fabric (no MPI
 * call: the fabric's progress thread runs this too). */
static void take_reply(pt_fab_send *s)
{
    const pt_request *req = s->req;
    if (s->connected || s->status || s->why[0] || !atomic_load_explicit(&s->reply_in, memory_order_acquire))
        return;
    size_t bytes = (size_t)req->partitions * req->part_bytes;
    int rc;
    if (s->reply.bytes < bytes || s->reply.namelen > PT_FAB_NAME_MAX) {
        snprintf(s->why, sizeof s->why, "the receiver's fabric reply is malformed");
        return;
    }
    pt_fab_lock(s->ctx);
    rc = pt_fab_peer(s->ctx, s->reply.name, s->reply.namelen, &s->dest);
    pt_fab_unlock(s->ctx);
    if (rc) {
        snprintf(s->why, sizeof s->why, "fi_av_insert of rank %d's address failed: %s", req->peer, pt_fab_strerror(rc));
        return;
    }
    s->connected = 1;
}

/* qlock held: post what may go. */
static int drain(pt_fab_send *s)
{
    while (s->qhead < s->qtail && ready(s)) {
        int rc = post(s, &s->queue[s->qhead]);
        if (rc == -FI_EAGAIN)
            return 0; /* the provider's queue is full: the next progress retries */
        if (rc)
            return rc;
        s->qhead++;
    }
    return 0;
}

/* s's qlock held: everything progress can do for this state without MPI.
 * (Under the adaptive policy a request has one state per candidate layout:
 * always the one whose lock is held, not necessarily the request's current.) */
static int advance(pt_fab_send *s)
{
    take_reply(s);
    int rc = drain(s); /* what another poll's credit already let go: no completion queue read first */
    if (rc == 0) {
        pt_fab_poll(s->ctx, 64, 0);
        rc = drain(s);
    }
    return rc;
}

void pt_fab_send_failed(pt_fab_send *s, int rc)
{
    int none = 0;
    atomic_compare_exchange_strong(&s->error, &none, rc);
}

/* Whether the MPI_Pready that hands over a message whose round's credit is
 * not known yet reads the completion queue for it (and posts the write at
 * once) or leaves the message to the next progress (the sender's next MPI
 * call, background progress, the fabric's thread). The read and the post
 * cost 0.4-1 us (shm); MPI's own MPI_Pready copies up to 64 KiB eagerly
 * (6-7 us) but only starts larger messages (0.3-0.9 us). Over shm, 8
 * interleaved launches each: leaving messages of 128 KiB-4 MiB to progress
 * took MPI_Pready from 420-810 to 50-65 ns per round of one partition and
 * cost the round's time 0-4% (1 partition: 1.015 -> 1.053 of one MPI_Send at
 * 128 KiB, 1.017 -> 1.037 at 256 KiB, within 1% from 512 KiB); at 64 KiB it
 * cost 5% and saved nothing against MPI, so small messages still go at once.
 * A laggard's perceived bandwidth and early-bird share did not change
 * (4 threads, one 1 ms late, 6 launches). */
#define PT_FAB_POLL_IN_PREADY_MAX ((size_t)64 << 10)

/* The receiver copies a piece's worth of bytes in about this long (the
 * probe's writes in pieces follow each other every 0.55 us a piece over
 * shm). What it decides is after how many runs of 32 KiB marked back to
 * back the last one still goes lone (lone_last_run), on the 2-core VM:
 * with 1000 ns after 2, not 4 (256 KiB in 8 partitions, half of them 100
 * us late: timer/none@fabric by t_last 1.30 [1.18-1.39], 12 launches);
 * with 750 ns after 4 (1.55 [1.46-2.50]) but not 16 (partita-p2p's
 * laggard at 2 MiB in 64: 0.96-0.98x of 1000 ns' in three campaigns of
 * 10-15 launches, inside its range each time); with 550 ns after 16 too
 * (0.91x there, below its range). */
#define PT_FAB_PIECE_COPY_NS 750

/* qlock held, for a run of len bytes just queued: PT_IMM_RUN_MSG_PIECES if
 * it is the round's last write (every sender partition is queued) and the
 * receiver's copying left of the runs before it is at most this run's own
 * (what the sender's copies of its pieces would overlap), else 0
 * (fabric_wire.h). The receiver is taken to copy a piece's worth in
 * PT_FAB_PIECE_COPY_NS, from when each run of more than a piece is queued.
 * So a last run right after one or a few others is lone, and one after
 * many of a laggard's partitions marked back to back is not: under
 * partita-p2p's laggard (4 threads, one 1 ms late, 10 launches), at 2 MiB
 * in 64 partitions (the late thread's 16 of 32 KiB back to back) sending
 * the last run as one write regardless took perceived bandwidth to 0.77x
 * of pieces; with this rule 1.00x, and 1.20x at 256 KiB in 8 (its 2 back
 * to back; docs/library.md, "The lone last run"). */
static uint64_t lone_last_run(pt_fab_send *s, size_t len)
{
    if (!s->piece || len <= s->piece)
        return 0; /* one write by either limit: no clock read, and not counted as the receiver's work */
    int64_t now = pt_ticks();
    int64_t copy = (int64_t)((len + s->piece - 1) / s->piece) * s->piece_copy_ticks;
    int64_t left = s->run_ticks ? s->copy_left_ticks - (now - s->run_ticks) : 0;
    if (left < 0)
        left = 0;
    s->run_ticks = now;
    s->copy_left_ticks = left + copy;
    return s->parts_queued == s->req->partitions && left <= copy ? PT_IMM_RUN_MSG_PIECES : 0;
}

/* Queue bytes [offset, offset + len) with its immediate; post it if it may go. */
static int submit(pt_request *req, size_t offset, size_t len, unsigned kind, uint64_t low, int parts)
{
    pt_fab_send *s = state(req);
    pthread_mutex_lock(&s->qlock);
    int rc = 0;
    if (s->qtail == s->qcap) {
        rc = -FI_EOVERFLOW; /* more than a round holds: a bug above the seam */
    } else {
        s->parts_queued += parts;
        if (kind == PT_IMM_RUN)
            low |= lone_last_run(s, len);
        s->queue[s->qtail++] = (pt_fab_pending){.offset = offset, .len = len, .kind = kind, .low = low};
        rc = ready(s) ? drain(s) : len <= PT_FAB_POLL_IN_PREADY_MAX ? advance(s) : 0;
        if (rc == 0)
            rc = pt_fab_split_heads(s, 1);
    }
    pthread_mutex_unlock(&s->qlock);
    if (rc)
        pt_fab_send_failed(s, rc); /* reported by send_progress, with the call that finds it */
    return MPI_SUCCESS;
}

int pt_fab_send_message(pt_request *req, int j)
{
    pt_fab_send *s = state(req);
    const pt_send_side *ss = &req->u.s;
    if (s->staging && !ss->cut) {
        int rc = pack(req, ss->bound[j], ss->bound[j + 1]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return submit(req, s->off[j], s->off[j + 1] - s->off[j], PT_IMM_MESSAGE, (uint64_t)j,
                  ss->cut ? 0 : ss->bound[j + 1] - ss->bound[j]);
}

/* A stall's runs (PT_RUNS_EARLY) to a peer on another host go in writes of
 * whole partitions of at least this many bytes (PARTITA_FABRIC_EARLY_SPLIT):
 * the receiver reports a run's partitions when its write completes, and a
 * run of the early partitions as one write hid them all until its last byte
 * was in. Across two hosts on a 1 Gbit/s link (tcp;ofi_rxm, 1 MiB in 4
 * partitions, 4 threads, one 4 ms late) the three early quarters went as one
 * 768 KiB write, 6.3 ms on the link: none had arrived when the laggard
 * joined, where the MPI transport, sending each alone, had 2 of the 4 in.
 * 64 KiB is half a millisecond on such a link and keeps runs of small
 * partitions one write. On one host (shm) the writes are memory copies that
 * a laggard's pause mostly covers anyway, and cutting a long run cost: at 8
 * MiB in 64 partitions, half of them 100 us late, the timer's last
 * partition came 2x later with 128 KiB writes (docs/library.md, "Early runs
 * in pieces"). The runs after a group's last mark stay whole: the receiver
 * waits for all of them anyway. */
#define PT_FAB_EARLY_WRITE ((size_t)64 << 10)

/* Partitions per write of a run: all of them (up to what the immediate's
 * count holds), or for a stall's runs to a peer that takes them in pieces
 * (early_write) as many as make that many bytes (at least one). */
static int run_write_parts(const pt_request *req, int flags)
{
    size_t w = state(req)->early_write;
    if (!(flags & PT_RUNS_EARLY) || w == 0 || req->part_bytes == 0)
        return PT_IMM_COUNT_MAX;
    if (req->part_bytes >= w)
        return 1;
    return (int)((w + req->part_bytes - 1) / req->part_bytes);
}

/* Each run is one write naming its first partition and count (a stall's
 * long runs several: run_write_parts); no terminator: the receiver counts a
 * group's partitions (transport.h). */
int pt_fab_send_runs(pt_request *req, int g, const pt_run *runs, int n, int flags)
{
    (void)g;
    int most = run_write_parts(req, flags);
    for (int k = 0; k < n; k++) {
        int rc = pack(req, runs[k].first, runs[k].first + runs[k].count);
        if (rc != MPI_SUCCESS)
            return rc;
        for (int p = runs[k].first, end = runs[k].first + runs[k].count; p < end;) {
            int count = end - p < most ? end - p : most;
            size_t off = (size_t)p * req->part_bytes, len = (size_t)count * req->part_bytes;
            uint64_t low = pt_imm_run_low((uint32_t)p, (uint32_t)count);
            if ((rc = submit(req, off, len, PT_IMM_RUN, low, count)) != MPI_SUCCESS)
                return rc;
            p += count;
        }
    }
    return MPI_SUCCESS;
}

/* qlock held: nothing of the round is left to post or to complete (a head
 * whose notice is still owed has not counted as completed yet). */
static int settled(pt_fab_send *s)
{
    return s->qhead == s->qtail && s->head_next == s->qhead &&
           atomic_load_explicit(&s->completed, memory_order_acquire) ==
               atomic_load_explicit(&s->posted, memory_order_acquire);
}

int pt_fab_send_help(pt_fab_send *s)
{
    if (pthread_mutex_trylock(&s->qlock))
        return 1; /* its own progress is at it */
    int rc = advance(s);
    if (rc == 0)
        rc = pt_fab_split_heads(s, 0);
    int owes = !settled(s);
    pthread_mutex_unlock(&s->qlock);
    if (rc)
        pt_fab_send_failed(s, rc);
    return owes;
}

int pt_fab_send_finish_group(pt_request *req, int g)
{
    (void)req, (void)g;
    return MPI_SUCCESS;
}

void pt_fab_send_start(pt_request *req)
{
    pt_fab_send *s = state(req);
    pthread_mutex_lock(&s->qlock);
    /* The request's round, as the receiver's credit counts it: under the
     * adaptive policy this layout's state is not used in every round. */
    s->round = req->u.s.round + 1;
    s->qhead = s->qtail = 0;
    s->head_next = 0;
    s->parts_queued = 0;
    s->run_ticks = 0;
    atomic_store_explicit(&s->posted, 0, memory_order_relaxed);
    atomic_store_explicit(&s->completed, 0, memory_order_relaxed);
    pthread_mutex_unlock(&s->qlock);
    pt_fab_wake(); /* its credit may come while the application is elsewhere */
}

int pt_fab_send_progress(pt_request *req, int all_issued, int *done)
{
    pt_fab_send *s = state(req);
    char why[sizeof s->why];
    pthread_mutex_lock(&s->qlock);
    take_refusal(req);
    int rc = advance(s);
    if (rc == 0)
        rc = pt_fab_split_heads(s, 0);
    *done = all_issued && settled(s);
    memcpy(why, s->why, sizeof why); /* the progress thread writes it under qlock too */
    pthread_mutex_unlock(&s->qlock);
    if (!*done)
        pt_fab_nudge_mpi();
    if (rc)
        pt_fab_send_failed(s, rc);
    int err = atomic_load(&s->error);
    if (why[0])
        return pt_fail(req->comm, PT_E_TRANSPORT, pt_call_name(), "fabric transport: %s", why);
    if (err)
        return pt_fail(req->comm, PT_E_TRANSPORT, pt_call_name(), "fabric transport: a write to rank %d failed: %s",
                       req->peer, pt_fab_strerror(err));
    return MPI_SUCCESS;
}

int pt_fab_send_init(pt_request *req)
{
    pt_send_side *ss = &req->u.s;
    int P = req->partitions, N = ss->ntrans;
    if (ss->split && (unsigned)P > PT_IMM_PART_MAX)
        return pt_fail(req->comm, PT_E_TRANSPORT, "MPI_Psend_init",
                       "the fabric transport names a run's partitions in 21 bits: the timer policy takes at most %u "
                       "partitions on it, not %d (use PARTITA_TRANSPORT=mpi or another policy)",
                       PT_IMM_PART_MAX, P);
    pt_fab_send *s = calloc(1, sizeof *s);
    if (!s)
        return pt_fail(req->comm, PT_E_NO_MEM, "MPI_Psend_init", "out of memory");
    req->tp = s;
    s->kind = PT_FAB_SENDER;
    s->req = req;
    pthread_mutex_init(&s->qlock, NULL);
    s->reply_req = s->hello_req = MPI_REQUEST_NULL;
    s->qcap = N + (ss->split ? P : 0);
    s->queue = malloc((size_t)s->qcap * sizeof *s->queue);
    s->wops = calloc(2 * (size_t)s->qcap, sizeof *s->wops); /* a split message has two writes */
    s->off = malloc(((size_t)N + 1) * sizeof *s->off);
    s->hello = calloc(1, sizeof *s->hello);
    size_t bytes = (size_t)P * req->part_bytes;
    if (!req->contiguous && bytes)
        s->staging = malloc(bytes);
    if (!s->queue || !s->wops || !s->off || !s->hello || (!req->contiguous && bytes && !s->staging))
        return pt_fail(req->comm, PT_E_NO_MEM, "MPI_Psend_init", "out of memory for %d fabric messages", s->qcap);
    for (int k = 0; k < 2 * s->qcap; k++) {
        s->wops[k].op.done = write_done;
        s->wops[k].owner = s;
        s->wops[k].item = -1;
    }
    for (int j = 0; j <= N; j++) {
        s->off[j] = pt_plan_message_offset(req->part_bytes, P, N, ss->cut, j);
        if (j && s->off[j] - s->off[j - 1] > INT_MAX) /* the receive plan takes no more */
            return pt_fail(req->comm, PT_E_TOO_BIG, "MPI_Psend_init",
                           "a transport message of %zu bytes (partitions of %zu bytes) is over INT_MAX bytes, which "
                           "partita cannot split", s->off[j] - s->off[j - 1], req->part_bytes);
    }
    s->src = s->staging ? s->staging : req->buf + req->true_lb;
    s->peer = req->peer_world;
    s->comm = pt_fab_comm();
    const char *provider = pt_fabric_provider_for(s->peer);
    char err[256] = "";
    int rc = pt_fab_open(provider, &s->ctx, err, sizeof err);
    if (rc)
        return pt_fail(req->comm, PT_E_TRANSPORT, "MPI_Psend_init", "fabric transport: %s", err);
    if (bytes && pt_fab_needs_local_mr(s->ctx) &&
        (rc = pt_fab_mr_reg(s->ctx, (void *)s->src, bytes, FI_WRITE, &s->mr)))
        return pt_fail(req->comm, PT_E_TRANSPORT, "MPI_Psend_init", "fabric transport: registering %zu bytes: %s",
                       bytes, pt_fab_strerror(rc));
    if (!(s->id = pt_fab_id_new(s)))
        return pt_fail(req->comm, PT_E_TRANSPORT, "MPI_Psend_init",
                       "fabric transport: more than %u requests at once", PT_IMM_ID_MAX);
    pt_fab_hello *h = s->hello;
    h->magic = PT_FAB_HELLO_MAGIC;
    h->sender_id = s->id;
    h->host = pt_fab_host_hash();
    h->ncand = 1;
    s->piece = pt_fab_piece_size(s->ctx, pt_fab_pieces_wanted());
    s->piece_copy_ticks = pt_ticks_from_ns(PT_FAB_PIECE_COPY_NS);
    s->early_write = pt_fab_early_split(s->peer) ? PT_FAB_EARLY_WRITE : 0;
    h->piece = (uint32_t)s->piece;
    s->split_min = pt_fab_split_size(provider, pt_fab_split_copy_wanted(), 0);
    s->run_split_min = pt_fab_split_size(provider, pt_fab_split_copy_wanted(), 1);
    h->split_min = (uint32_t)s->split_min;
    h->run_split_min = (uint32_t)s->run_split_min;
    snprintf(h->cand[0].provider, sizeof h->cand[0].provider, "%s", provider);
    const void *name;
    h->cand[0].namelen = (uint32_t)pt_fab_name(s->ctx, &name);
    memcpy(h->cand[0].name, name, h->cand[0].namelen);
    s->tag = pt_fab_next_tag();
    /* Local: the hello is small; the receive waits for a refusal, which a
     * receiver that can use the fabric never sends (its reply comes over it). */
    rc = PMPI_Isend(h, (int)sizeof *h, MPI_BYTE, s->peer, s->tag, s->comm, &s->hello_req);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Irecv(&s->refusal, (int)sizeof s->refusal, MPI_BYTE, s->peer, s->tag + 1, s->comm, &s->reply_req);
    if (rc != MPI_SUCCESS)
        return pt_fail_mpi(req->comm, rc, "MPI_Psend_init", "MPI_Isend/MPI_Irecv of the fabric hello");
    req->hs_buf[PT_HS_TRANSPORT_ARG] = s->tag;
    pt_fab_register(s);
    return MPI_SUCCESS;
}

void pt_fab_send_destroy(pt_request *req)
{
    pt_fab_send *s = state(req);
    if (!s)
        return;
    pt_fab_unregister(s);
    pt_fab_forget(s->ctx, s->id);
    if (s->reply_req != MPI_REQUEST_NULL)
        pt_complete_or_cancel_recv(&s->reply_req);
    int flag = 1;
    if (s->hello_req != MPI_REQUEST_NULL) {
        PMPI_Test(&s->hello_req, &flag, MPI_STATUS_IGNORE);
        if (!flag)
            PMPI_Request_free(&s->hello_req); /* the hello outlives us (left allocated) */
    }
    if (flag)
        free(s->hello);
    pt_fab_mr_close(&s->mr);
    pthread_mutex_destroy(&s->qlock);
    free(s->queue);
    free(s->wops);
    free(s->off);
    free(s->staging);
    free(s);
    req->tp = NULL;
}

void pt_fab_describe(const pt_request *req, char *text, size_t len)
{
    pt_fab_send *s = state(req);
    if (!req->is_send || !s) {
        snprintf(text, len, "%s", "");
        return;
    }
    int n = !s->piece ? snprintf(text, len, " (every write goes whole")
                      : snprintf(text, len,
                                 " (a write over %zu bytes goes as injected pieces of that size: up to %u of them for a "
                                 "message, up to %u for a run of partitions sent at their marks after a split, unless "
                                 "it is the round's last write and the receiver has little left to copy of those "
                                 "before it (then as a message); %ld writes of this layout went in pieces so far",
                                 s->piece, PT_FAB_PIECES_MAX, PT_FAB_RUN_PIECES_MAX,
                                 atomic_load_explicit(&s->pieced, memory_order_relaxed));
    if (n >= 0 && (size_t)n < len && s->split_min) {
        char where[64] = "";
        if (s->piece)
            snprintf(where, sizeof where, "in MPI_Pready for a run of up to %zu bytes, else ",
                     pt_fab_largest_in_pieces(s->piece, 1));
        n += snprintf(text + n, len - (size_t)n, "; a message of %zu bytes or more and a timer run of %zu bytes or "
                      "more are copied by both sides, the receiver the second half, this side the first (%sin its "
                      "progress after MPI_Pready; %ld so far)",
                      s->split_min, s->run_split_min, where, atomic_load_explicit(&s->split, memory_order_relaxed));
    }
    if (n >= 0 && (size_t)n < len && req->u.s.split && s->early_write)
        n += snprintf(text + n, len - (size_t)n, "; the runs sent when marking stalls are cut into writes of "
                      "whole partitions, %zu bytes or more each", s->early_write);
    pthread_mutex_lock(&s->qlock);
    int writes = s->qtail; /* each queued item is one write (or control message), in pieces or not */
    pthread_mutex_unlock(&s->qlock);
    if (n >= 0 && (size_t)n < len)
        snprintf(text + n, len - (size_t)n, "; %d writes in the current or last round)", writes);
}
