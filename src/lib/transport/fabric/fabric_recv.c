/* The fabric transport, receiver (fabric_transport.h): the hello, the
 * registration and the reply; a credit per round; arrivals from the
 * completion queue reported through the upcalls of transport.h. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner.h"
#include "request/errors.h"
#include "request/request.h"
#include "transport/fabric/fabric_ids.h"
#include "transport/fabric/fabric_transport.h"

static pt_fab_recv *state(const pt_request *req) { return req->tp; }

/* The round's deferred error (reported when it completes), with a reason. */
static void fail(pt_fab_recv *t, const char *fmt, const char *detail)
{
    pt_request *req = t->req;
    t->failed = 1;
    snprintf(t->why, sizeof t->why, fmt, detail);
    req->u.r.error = PT_E_TRANSPORT;
    req->u.r.error_call = t->why;
}

static void reply_done(pt_fab_ctx *ctx, pt_fab_op *op, int error)
{
    (void)ctx, (void)error;
    pt_fab_recv *t = (pt_fab_recv *)((char *)op - offsetof(pt_fab_recv, reply_op));
    atomic_store_explicit(&t->reply_done, 1, memory_order_release);
}

/* t->lock held: post the fabric reply once (retried after -FI_EAGAIN). */
static void post_reply(pt_fab_recv *t)
{
    if (!t->reply_due)
        return;
    int injected = sizeof t->reply <= pt_fab_inject_size(t->ctx);
    pt_fab_lock(t->ctx);
    int rc = pt_fab_control(t->ctx, t->src, pt_imm(PT_IMM_REPLY, t->hello.sender_id, 0), &t->reply, sizeof t->reply,
                            t->reply_mr.desc, &t->reply_op);
    pt_fab_unlock(t->ctx);
    if (rc == -FI_EAGAIN)
        return;
    t->reply_due = 0;
    if (rc)
        fail(t, "fabric transport: sending the reply to the sender failed: %s", pt_fab_strerror(rc));
    else if (injected)
        atomic_store_explicit(&t->reply_done, 1, memory_order_release);
}

/* The reply: over the fabric when all is well, else over MPI with the reason
 * the sender must report. */
static void reply(pt_fab_recv *t, int status)
{
    t->reply.status = status;
    t->reply.receiver_id = t->id;
    if (status == PT_FAB_ST_OK) {
        t->reply_op.done = reply_done;
        t->reply_due = 1;
        if (pt_fab_needs_local_mr(t->ctx))
            pt_fab_mr_reg(t->ctx, &t->reply, sizeof t->reply, FI_SEND, &t->reply_mr);
        post_reply(t);
        return;
    }
    atomic_store_explicit(&t->reply_done, 1, memory_order_relaxed);
    if (PMPI_Isend(&t->reply, (int)sizeof t->reply, MPI_BYTE, t->peer, t->tag + 1, t->comm, &t->reply_req) !=
        MPI_SUCCESS)
        fail(t, "fabric transport: MPI_Isend of the refusal to rank %s failed", "the sender");
}

/* The sender splits mid-sized writes into pieces of piece bytes: a counter
 * per message and per run (by its first partition). */
static int count_pieces(pt_fab_recv *t, size_t piece)
{
    t->msg_pieces = calloc((size_t)t->msgs_cap_round, 1);
    if (t->runs_cap)
        t->run_pieces = calloc((size_t)t->runs_cap, 1);
    if (!t->msg_pieces || (t->runs_cap && !t->run_pieces))
        return 0;
    t->piece = piece;
    return 1;
}

int pt_fab_recv_whole(pt_fab_recv *t, uint64_t imm)
{
    if (!t->piece && !t->split_min && !t->run_split_min)
        return 1;
    size_t len;
    unsigned char *in;
    int run = pt_imm_kind(imm) == PT_IMM_RUN;
    if (!run) {
        uint64_t j = pt_imm_low(imm);
        if (j >= (uint64_t)t->msgs_cap_round)
            return 1; /* names nothing: counted as bad by the caller */
        len = t->tstart[j + 1] - t->tstart[j];
        in = &t->msg_pieces[j];
    } else {
        uint32_t first = pt_imm_run_first(imm), count = pt_imm_run_count(imm);
        if (!t->run_pieces || count == 0 || (uint64_t)first + count > (uint64_t)t->runs_cap)
            return 1;
        len = (size_t)count * t->part_bytes;
        in = &t->run_pieces[first];
    }
    unsigned n = pt_fab_splits(len, run, t->split_min, t->run_split_min) ? 2
                 : pt_fab_pieces(len, t->piece, pt_imm_run_pieces(imm));
    if (n > 1 && ++*in < n)
        return 0;
    *in = 0;
    return 1;
}

/* The hello is in: open the sender's provider, register where the bytes
 * land, learn the sender's address, reply. */
static void connect(pt_fab_recv *t)
{
    const pt_fab_hello *h = &t->hello;
    char err[256] = "";
    if (h->magic != PT_FAB_HELLO_MAGIC || h->ncand < 1 || h->cand[0].namelen > PT_FAB_NAME_MAX ||
        !memchr(h->cand[0].provider, 0, sizeof h->cand[0].provider)) {
        fail(t, "fabric transport: malformed hello from the sender%s", "");
        reply(t, PT_FAB_ST_ADDRESS);
        return;
    }
    const char *provider = h->cand[0].provider;
    t->split_min = h->split_min;
    t->run_split_min = h->run_split_min;
    if ((h->piece || h->split_min || h->run_split_min) && !count_pieces(t, h->piece)) {
        fail(t, "fabric transport: out of memory for counting the sender's pieces%s", "");
        reply(t, PT_FAB_ST_REGISTER);
        return;
    }
    if (!strcmp(provider, "shm") && h->host != pt_fab_host_hash()) {
        fail(t, "fabric transport: the sender asks for provider shm from another host%s", "");
        reply(t, PT_FAB_ST_NO_PROVIDER);
        return;
    }
    if (pt_fab_open(provider, &t->ctx, err, sizeof err)) {
        fail(t, "fabric transport: %s", err);
        reply(t, PT_FAB_ST_NO_PROVIDER);
        return;
    }
    int rc = t->bytes ? pt_fab_mr_reg(t->ctx, t->dest, t->bytes, FI_REMOTE_WRITE, &t->mr) : 0;
    if (rc) {
        fail(t, "fabric transport: registering the receive buffer failed: %s", pt_fab_strerror(rc));
        reply(t, PT_FAB_ST_REGISTER);
        return;
    }
    pt_fab_lock(t->ctx);
    rc = pt_fab_peer(t->ctx, h->cand[0].name, h->cand[0].namelen, &t->src);
    pt_fab_unlock(t->ctx);
    if (rc) {
        fail(t, "fabric transport: fi_av_insert of the sender's address failed: %s", pt_fab_strerror(rc));
        reply(t, PT_FAB_ST_ADDRESS);
        return;
    }
    t->reply.base = t->mr.base;
    t->reply.key = t->mr.key;
    t->reply.bytes = t->bytes;
    const void *name;
    t->reply.namelen = (uint32_t)pt_fab_name(t->ctx, &name);
    memcpy(t->reply.name, name, t->reply.namelen);
    reply(t, PT_FAB_ST_OK);
    t->connected = !t->failed;
}

static void try_connect(pt_fab_recv *t)
{
    if (t->connected || t->failed)
        return;
    int flag = 0;
    if (PMPI_Test(&t->hello_req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        fail(t, "fabric transport: MPI_Test of the sender's hello failed%s", "");
    else if (flag)
        connect(t);
}

/* t->lock held: the reply if it is still due, then the round's credit, once
 * connected (an empty control message). No MPI call: the fabric's progress
 * thread runs this too. */
static void grant(pt_fab_recv *t)
{
    if (!t->connected)
        return;
    post_reply(t);
    if (!t->credit_due || t->reply_due)
        return;
    pt_fab_lock(t->ctx);
    uint64_t round = (uint64_t)t->req->u.r.round + 1; /* the request's round: a layout's state may skip some */
    int rc = pt_fab_control(t->ctx, t->src, pt_imm(PT_IMM_CREDIT, t->hello.sender_id, round), NULL, 0, NULL, NULL);
    pt_fab_unlock(t->ctx);
    if (rc == 0)
        t->credit_due = 0;
    else if (rc != -FI_EAGAIN)
        fail(t, "fabric transport: sending the round's credit failed: %s", pt_fab_strerror(rc));
}

/* t->lock held: whether the request is connected and owes nothing (no
 * reply to post or to complete over MPI, the round's credit sent). Until
 * the next MPI_Start nothing under t->lock is left to do, and the polls
 * skip it: its two lock pairs in each MPI_Parrived that finds nothing, and
 * background progress's trylock of every receive, were a third of such a
 * call's time (perf: half of it in pthread_mutex_*; 145 ns a call on one
 * partition, shm). */
static void note_settled(pt_fab_recv *t)
{
    int settled = t->connected && !t->failed && !t->reply_due && !t->credit_due && t->reply_req == MPI_REQUEST_NULL;
    atomic_store_explicit(&t->settled, settled, memory_order_release);
}

int pt_fab_recv_setup(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    pt_fab_recv *t = calloc(1, sizeof *t);
    if (!t) {
        r->error = PT_E_NO_MEM;
        return MPI_SUCCESS;
    }
    req->tp = t;
    t->kind = PT_FAB_RECEIVER;
    t->req = req;
    pthread_mutex_init(&t->lock, NULL);
    t->hello_req = t->reply_req = MPI_REQUEST_NULL;
    t->tag = (int)r->hs[PT_HS_TRANSPORT_ARG];
    t->dest = r->dest; /* this layout's (adaptive: each candidate has its own plan) */
    t->bytes = r->sent_bytes;
    t->peer = req->peer_world;
    t->comm = pt_fab_comm();
    t->msgs_cap_round = r->ntrans;
    t->msgs = malloc((size_t)r->ntrans * sizeof *t->msgs);
    t->part_bytes = (size_t)r->hs[PT_HS_PART_BYTES];
    t->tstart = malloc(((size_t)r->ntrans + 1) * sizeof *t->tstart);
    if (t->tstart && r->tstart)
        memcpy(t->tstart, r->tstart, ((size_t)r->ntrans + 1) * sizeof *t->tstart);
    if (r->hs[PT_HS_FLAGS] & PT_HS_FLAG_SPLIT) {
        t->runs_cap = r->sparts;
        t->runs = malloc(2 * (size_t)r->sparts * sizeof *t->runs);
    }
    if (!t->msgs || !t->tstart || (t->runs_cap && !t->runs)) {
        r->error = PT_E_NO_MEM;
        return MPI_SUCCESS;
    }
    if (r->hs[PT_HS_TRANSPORT_ARG] < 0 || r->hs[PT_HS_TRANSPORT_ARG] >= INT32_MAX) {
        r->error = PT_E_SETUP;
        return MPI_SUCCESS;
    }
    if (!(t->id = pt_fab_id_new(t))) {
        fail(t, "fabric transport: more than %s requests at once", "2^20");
        return MPI_SUCCESS;
    }
    if (PMPI_Irecv(&t->hello, (int)sizeof t->hello, MPI_BYTE, t->peer, t->tag, t->comm, &t->hello_req) !=
        MPI_SUCCESS) {
        fail(t, "fabric transport: MPI_Irecv of the sender's hello failed%s", "");
        return MPI_SUCCESS;
    }
    pthread_mutex_lock(&t->lock);
    try_connect(t);
    note_settled(t);
    pthread_mutex_unlock(&t->lock);
    pt_fab_register(t);
    return MPI_SUCCESS;
}

int pt_fab_recv_start(pt_request *req)
{
    pt_fab_recv *t = state(req);
    t->msgs_seen = t->runs_seen = 0;
    atomic_store_explicit(&t->nmsgs, 0, memory_order_relaxed);
    atomic_store_explicit(&t->nruns, 0, memory_order_relaxed);
    pthread_mutex_lock(&t->lock);
    t->credit_due = 1;
    try_connect(t);
    grant(t);
    note_settled(t);
    pthread_mutex_unlock(&t->lock);
    pt_fab_wake(); /* the round's writes may come while the application is elsewhere */
    return MPI_SUCCESS;
}

int pt_fab_recv_progress(pt_request *req, const pt_recv_focus *focus)
{
    (void)focus; /* the completion queue reports every message: nothing to look at first-hand */
    pt_fab_recv *t = state(req);
    pt_recv_side *r = &req->u.r;
    int settled = atomic_load_explicit(&t->settled, memory_order_acquire);
    if (!settled) {
        pthread_mutex_lock(&t->lock);
        try_connect(t);
        int connected = t->connected;
        pthread_mutex_unlock(&t->lock);
        if (!connected)
            return MPI_SUCCESS;
    }
    pt_fab_poll_again(t->ctx, 64);
    if (!settled) {
        pthread_mutex_lock(&t->lock);
        grant(t);
        if (t->reply_req != MPI_REQUEST_NULL) {
            int flag = 0;
            PMPI_Test(&t->reply_req, &flag, MPI_STATUS_IGNORE);
        }
        note_settled(t);
        pthread_mutex_unlock(&t->lock);
    }
    int n = atomic_load_explicit(&t->nmsgs, memory_order_acquire);
    for (; t->msgs_seen < n; t->msgs_seen++) {
        int j = t->msgs[t->msgs_seen];
        if (j >= 0 && j < r->ntrans)
            pt_recv_message_done(req, j);
    }
    n = atomic_load_explicit(&t->nruns, memory_order_acquire);
    for (; t->runs_seen < n; t->runs_seen++) {
        int first = (int)t->runs[2 * t->runs_seen], count = (int)t->runs[2 * t->runs_seen + 1];
        if (count > 0 && first + count <= r->sparts)
            pt_recv_parts_in(req, pt_plan_group_of(r->sparts, r->ntrans, first), first, count);
    }
    pt_fab_nudge_mpi();
    return MPI_SUCCESS;
}

int pt_fab_recv_help(pt_fab_recv *t, int with_mpi)
{
    if (atomic_load_explicit(&t->settled, memory_order_acquire))
        return 0;
    if (pthread_mutex_trylock(&t->lock))
        return 1;
    if (with_mpi)
        try_connect(t);
    grant(t);
    int owes = t->reply_due || t->credit_due;
    note_settled(t);
    pthread_mutex_unlock(&t->lock);
    return owes;
}

int pt_fab_recv_settled(const pt_request *req)
{
    (void)req;
    return 1; /* nothing but the data itself: no terminators */
}

void pt_fab_recv_destroy(pt_request *req)
{
    pt_fab_recv *t = state(req);
    if (!t)
        return;
    pt_fab_unregister(t);
    /* the fabric reply's buffer is ours until it completed */
    for (int spins = 0; t->ctx && !t->reply_due && !atomic_load(&t->reply_done) && spins < 1000000; spins++)
        pt_fab_poll(t->ctx, 16, 0);
    pt_fab_forget(t->ctx, t->id);
    if (t->hello_req != MPI_REQUEST_NULL)
        pt_complete_or_cancel_recv(&t->hello_req);
    if (t->reply_req != MPI_REQUEST_NULL)
        PMPI_Wait(&t->reply_req, MPI_STATUS_IGNORE); /* a posted receive is waiting for it on the sender */
    pt_fab_mr_close(&t->mr);
    pt_fab_mr_close(&t->reply_mr);
    pthread_mutex_destroy(&t->lock);
    free(t->msgs);
    free(t->runs);
    free(t->tstart);
    free(t->msg_pieces);
    free(t->run_pieces);
    free(t);
    req->tp = NULL;
}
