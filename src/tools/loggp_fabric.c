/* The fabric channel of the PRTT probe (loggp_channel.h): each message is one
 * RMA write with remote CQ data into the server's buffer, as libpartita's
 * fabric transport sends a transport message; the server "receives" it by
 * finding its completion on the completion queue; the reply is a write back
 * (an empty control message when it has no bytes). */
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

static void poll_once(void) { pt_fab_poll(st.ctx, 64, 0); }

static void write_to_peer(loggp_probe *p, size_t offset, size_t s, uint64_t imm)
{
    pt_fab_lock(st.ctx);
    int rc;
    if (s == 0)
        while ((rc = pt_fab_control(st.ctx, st.peer, imm, NULL, 0, NULL, NULL)) == -FI_EAGAIN)
            pt_fab_poll(st.ctx, 64, 1);
    else
        while ((rc = pt_fab_write(st.ctx, p->buf, s, st.mr.desc, st.peer, st.peer_base + offset, st.peer_key, imm,
                                  &st.op)) == -FI_EAGAIN)
            pt_fab_poll(st.ctx, 64, 1);
    pt_fab_unlock(st.ctx);
    if (rc) {
        fprintf(stderr, "partita-loggp: fi_writedata/fi_injectdata: %s\n", pt_fab_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Wait for the next arrival (a write or an empty reply). */
static void take_arrival(void)
{
    while (st.arrived <= st.consumed)
        poll_once();
    st.consumed++;
}

static long writes_posted;

static void send_write(loggp_probe *p, int i, size_t s)
{
    write_to_peer(p, (size_t)i * p->slot, s, pt_imm(PT_IMM_MESSAGE, 0, (uint64_t)i));
    writes_posted += s > 0;
}

static void complete_writes(loggp_probe *p, int n)
{
    (void)p, (void)n;
    while (st.sent_done < writes_posted)
        poll_once();
}

static void prepare(loggp_probe *p, int n, size_t s) { (void)p, (void)n, (void)s; }
static void recv_write(loggp_probe *p, int i, size_t s) { (void)p, (void)i, (void)s, take_arrival(); }
static void reply_send(loggp_probe *p, size_t s)
{
    write_to_peer(p, 0, s, pt_imm(PT_IMM_MESSAGE, 0, 0));
    writes_posted += s > 0;
}
static void reply_recv(loggp_probe *p, size_t s) { (void)p, (void)s, take_arrival(); }

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

typedef struct exchange {
    uint64_t base, key;
    uint32_t namelen;
    unsigned char name[PT_FAB_NAME_MAX];
} exchange;

const loggp_channel *loggp_fabric_open(loggp_probe *p, size_t client_bytes, size_t server_bytes, int same_host,
                                       char *err, size_t errlen)
{
    const char *env = getenv("PARTITA_FABRIC_PROVIDER");
    snprintf(provider, sizeof provider, "%s", env && *env ? env : same_host ? "shm" : "tcp;ofi_rxm");
    pt_fab_handlers h = {.remote_write = on_write, .control = on_control, .error = on_error};
    pt_fab_set_handlers(&h);
    st.op.done = on_done;
    int rc = pt_fab_open(provider, &st.ctx, err, errlen), ok = rc == 0, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        if (ok)
            snprintf(err, errlen, "the other rank cannot open libfabric provider '%s'", provider);
        return NULL;
    }
    size_t bytes = p->rank == 0 ? client_bytes : server_bytes;
    rc = pt_fab_mr_reg(st.ctx, p->buf, bytes, FI_REMOTE_WRITE | FI_WRITE, &st.mr);
    ok = rc == 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        snprintf(err, errlen, "fi_mr_reg of %zu bytes on '%s' failed%s%s", bytes, provider, ok ? " on the other rank" : ": ",
                 ok ? "" : pt_fab_strerror(rc));
        return NULL;
    }
    exchange mine = {.base = st.mr.base, .key = st.mr.key}, theirs;
    const void *name;
    mine.namelen = (uint32_t)pt_fab_name(st.ctx, &name);
    memcpy(mine.name, name, mine.namelen);
    MPI_Sendrecv(&mine, sizeof mine, MPI_BYTE, 1 - p->rank, 0, &theirs, sizeof theirs, MPI_BYTE, 1 - p->rank, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    st.peer_base = theirs.base;
    st.peer_key = theirs.key;
    pt_fab_lock(st.ctx);
    rc = pt_fab_peer(st.ctx, theirs.name, theirs.namelen, &st.peer);
    pt_fab_unlock(st.ctx);
    ok = rc == 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
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
    pt_fab_mr_close(&st.mr);
    pt_fab_close_all();
    st.ctx = NULL;
}
