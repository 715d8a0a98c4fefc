/* The process-wide libfabric contexts (fabric_ctx.h). */
#include "transport/fabric/fabric_ctx.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/fabric/fabric_api.h"

#define PT_FAB_MAX_CTX 4   /* providers open at once */
#define PT_FAB_POOL 64     /* control receives kept posted */
#define PT_FAB_CQ_BATCH 16

typedef struct pool_slot {
    struct fi_context2 fi;
    char buf[PT_FAB_CTRL_MAX];
    int posted;
} pool_slot;

typedef struct peer_entry {
    size_t len;
    unsigned char name[PT_FAB_NAME_MAX];
    fi_addr_t addr;
} peer_entry;

struct pt_fab_ctx {
    pthread_mutex_t lock;
    const pt_fi_api *api;
    char provider[PT_FAB_PROV_MAX];
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_cq *cq;
    struct fid_av *av;
    struct fid_ep *ep;
    unsigned char name[PT_FAB_NAME_MAX];
    size_t namelen;
    pool_slot *pool;
    int pool_holes; /* some slot is unposted: repost_pool has work (not a scan of 64 slots every poll) */
    pt_fab_mr pool_mr;
    peer_entry *peers;
    int npeers, peers_cap;
    char scratch; /* source of zero-length control messages */
};

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static pt_fab_ctx *contexts[PT_FAB_MAX_CTX];
static _Atomic int ncontexts;
static pt_fab_handlers handlers;
static atomic_ullong next_key = 1;

void pt_fab_set_handlers(const pt_fab_handlers *h) { handlers = *h; }
const char *pt_fab_provider(const pt_fab_ctx *ctx) { return ctx->info->fabric_attr->prov_name; }
/* Every call into libfabric on a context happens under its lock: the place
 * to make the calling thread ready for it (fabric_api.h). */
void pt_fab_lock(pt_fab_ctx *ctx)
{
    pt_fi_thread();
    pthread_mutex_lock(&ctx->lock);
}
void pt_fab_unlock(pt_fab_ctx *ctx) { pthread_mutex_unlock(&ctx->lock); }
int pt_fab_trylock(pt_fab_ctx *ctx)
{
    pt_fi_thread();
    return pthread_mutex_trylock(&ctx->lock);
}
size_t pt_fab_inject_size(const pt_fab_ctx *ctx) { return ctx->info->tx_attr->inject_size; }
int pt_fab_needs_local_mr(const pt_fab_ctx *ctx) { return (ctx->info->domain_attr->mr_mode & FI_MR_LOCAL) != 0; }

size_t pt_fab_name(const pt_fab_ctx *ctx, const void **name)
{
    *name = ctx->name;
    return ctx->namelen;
}

const char *pt_fab_strerror(int rc)
{
    const pt_fi_api *api = pt_fi_load(NULL, 0);
    return api ? api->strerror(rc < 0 ? -rc : rc) : "libfabric not loaded";
}

/* The modes and capabilities this code handles. */
static struct fi_info *make_hints(const pt_fi_api *api, const char *provider)
{
    struct fi_info *h = api->dupinfo(NULL);
    if (!h)
        return NULL;
    h->caps = FI_MSG | FI_RMA | FI_WRITE | FI_REMOTE_WRITE | FI_SEND | FI_RECV;
    h->mode = FI_CONTEXT | FI_CONTEXT2 | FI_RX_CQ_DATA;
    h->ep_attr->type = FI_EP_RDM;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    h->fabric_attr->prov_name = (char *)provider; /* unhooked before fi_freeinfo (fabric_api.h) */
    return h;
}

static uint32_t request_version(const pt_fi_api *api)
{
    uint32_t built = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), have = api->version();
    return have < built ? have : built;
}

/* The first fi_info of provider with 64 bits of remote CQ data. libfabric
 * matches the name with layering: "tcp" finds "tcp;ofi_rxm". */
static int find_info(const pt_fi_api *api, const char *provider, struct fi_info **out, char *err, size_t errlen)
{
    struct fi_info *hints = make_hints(api, provider), *list = NULL;
    if (!hints) {
        snprintf(err, errlen, "fi_dupinfo failed");
        return -FI_ENOMEM;
    }
    int rc = api->getinfo(request_version(api), NULL, NULL, 0, hints, &list);
    hints->fabric_attr->prov_name = NULL;
    api->freeinfo(hints);
    if (rc) {
        snprintf(err, errlen, "libfabric provider '%s' with RMA writes is not available here (fi_getinfo: %s)",
                 provider, api->strerror(-rc));
        return rc;
    }
    for (struct fi_info *i = list; i; i = i->next)
        if (i->domain_attr->cq_data_size >= sizeof(uint64_t)) {
            *out = api->dupinfo(i);
            api->freeinfo(list);
            return *out ? 0 : -FI_ENOMEM;
        }
    api->freeinfo(list);
    snprintf(err, errlen, "libfabric provider '%s' offers less than 8 bytes of remote CQ data", provider);
    return -FI_ENODATA;
}

int pt_fab_provider_available(const char *provider, char *err, size_t errlen)
{
    const pt_fi_api *api = pt_fi_load(err, errlen);
    if (!api)
        return 0;
    struct fi_info *info = NULL;
    if (find_info(api, provider, &info, err, errlen))
        return 0;
    api->freeinfo(info);
    return 1;
}

/* Every change of a slot's posted state goes here, so that an unposted slot
 * always leaves pool_holes set for repost_pool. */
static void set_posted(pt_fab_ctx *ctx, pool_slot *s, int posted)
{
    s->posted = posted;
    if (!posted)
        ctx->pool_holes = 1;
}

/* A slot the provider had no room for stays unposted until the next poll. */
static int post_pool_slot(pt_fab_ctx *ctx, pool_slot *s)
{
    ssize_t rc = fi_recv(ctx->ep, s->buf, sizeof s->buf, ctx->pool_mr.desc, FI_ADDR_UNSPEC, &s->fi);
    set_posted(ctx, s, rc == 0);
    return rc == -FI_EAGAIN ? 0 : (int)rc;
}

static void repost_pool(pt_fab_ctx *ctx)
{
    if (!ctx->pool_holes)
        return;
    ctx->pool_holes = 0; /* set again by any slot left unposted */
    for (int i = 0; i < PT_FAB_POOL; i++)
        if (!ctx->pool[i].posted && post_pool_slot(ctx, &ctx->pool[i]))
            break;
}

static void close_fid(struct fid *f)
{
    if (f)
        fi_close(f);
}

static void destroy(pt_fab_ctx *ctx)
{
    pt_fab_mr_close(&ctx->pool_mr);
    close_fid(ctx->ep ? &ctx->ep->fid : NULL);
    close_fid(ctx->av ? &ctx->av->fid : NULL);
    close_fid(ctx->cq ? &ctx->cq->fid : NULL);
    close_fid(ctx->domain ? &ctx->domain->fid : NULL);
    close_fid(ctx->fabric ? &ctx->fabric->fid : NULL);
    if (ctx->info)
        ctx->api->freeinfo(ctx->info);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx->pool);
    free(ctx->peers);
    free(ctx);
}

#define STEP(call, what)                                                                                     \
    do {                                                                                                     \
        rc = (int)(call);                                                                                    \
        if (rc) {                                                                                            \
            snprintf(err, errlen, "libfabric %s on provider '%s' failed: %s", what, provider,                 \
                     api->strerror(-rc));                                                                    \
            goto fail;                                                                                       \
        }                                                                                                    \
    } while (0)

int pt_fab_env_flag(const char *name, int dflt, int *on, char *err, size_t errlen)
{
    const char *v = getenv(name);
    *on = dflt;
    if (!v)
        return 0;
    if (strcmp(v, "0") && strcmp(v, "1")) {
        snprintf(err, errlen, "%s='%s' is not 0 or 1", name, v);
        return -1;
    }
    *on = v[0] == '1';
    return 0;
}

/* PARTITA_FABRIC_SHM_SWEEP, read once: MPI_Init checks it (fabric_transport.c)
 * and the shm provider's first opening uses it; -1 until read. */
static int shm_sweep_on = -1;

int pt_fab_shm_sweep_wanted(int *on, char *err, size_t errlen)
{
    if (shm_sweep_on < 0 && pt_fab_env_flag("PARTITA_FABRIC_SHM_SWEEP", 1, &shm_sweep_on, err, errlen)) {
        shm_sweep_on = -1;
        return -1;
    }
    *on = shm_sweep_on;
    return 0;
}

/* Before the shm provider makes this process's region: the regions killed
 * processes left (PARTITA_FABRIC_SHM_SWEEP=0 leaves them). */
static int sweep_shm(char *err, size_t errlen)
{
    int on;
    if (pt_fab_shm_sweep_wanted(&on, err, errlen))
        return -FI_EINVAL;
    if (on)
        pt_fab_shm_sweep("/dev/shm");
    return 0;
}

static int open_ctx(const pt_fi_api *api, const char *provider, pt_fab_ctx **out, char *err, size_t errlen)
{
    pt_fab_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx || !(ctx->pool = calloc(PT_FAB_POOL, sizeof *ctx->pool))) {
        free(ctx);
        snprintf(err, errlen, "out of memory");
        return -FI_ENOMEM;
    }
    pthread_mutex_init(&ctx->lock, NULL);
    ctx->api = api;
    snprintf(ctx->provider, sizeof ctx->provider, "%s", provider);
    int rc = find_info(api, provider, &ctx->info, err, errlen);
    if (rc)
        goto fail;
    if (!strcmp(ctx->info->fabric_attr->prov_name, "shm") && (rc = sweep_shm(err, errlen)) != 0)
        goto fail;
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_NONE};
    struct fi_av_attr ava = {.type = ctx->info->domain_attr->av_type};
    STEP(api->fabric(ctx->info->fabric_attr, &ctx->fabric, NULL), "fi_fabric");
    STEP(fi_domain(ctx->fabric, ctx->info, &ctx->domain, NULL), "fi_domain");
    STEP(fi_cq_open(ctx->domain, &cqa, &ctx->cq, NULL), "fi_cq_open");
    STEP(fi_av_open(ctx->domain, &ava, &ctx->av, NULL), "fi_av_open");
    STEP(fi_endpoint(ctx->domain, ctx->info, &ctx->ep, NULL), "fi_endpoint");
    STEP(fi_ep_bind(ctx->ep, &ctx->cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)");
    STEP(fi_ep_bind(ctx->ep, &ctx->av->fid, 0), "fi_ep_bind(av)");
    STEP(fi_enable(ctx->ep), "fi_enable");
    ctx->namelen = sizeof ctx->name;
    STEP(fi_getname(&ctx->ep->fid, ctx->name, &ctx->namelen), "fi_getname");
    if (pt_fab_needs_local_mr(ctx))
        STEP(pt_fab_mr_reg(ctx, ctx->pool, PT_FAB_POOL * sizeof *ctx->pool, FI_RECV, &ctx->pool_mr), "fi_mr_reg(pool)");
    for (int i = 0; i < PT_FAB_POOL; i++)
        STEP(post_pool_slot(ctx, &ctx->pool[i]), "fi_recv");
    *out = ctx;
    return 0;
fail:
    destroy(ctx);
    return rc ? rc : -FI_EOTHER;
}

int pt_fab_open(const char *provider, pt_fab_ctx **out, char *err, size_t errlen)
{
    int n = atomic_load_explicit(&ncontexts, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (strcmp(contexts[i]->provider, provider) == 0) {
            *out = contexts[i];
            return 0;
        }
    const pt_fi_api *api = pt_fi_load(err, errlen);
    if (!api)
        return -FI_ENOSYS;
    if (strlen(provider) >= PT_FAB_PROV_MAX) {
        snprintf(err, errlen, "libfabric provider name '%s' is longer than %d bytes", provider, PT_FAB_PROV_MAX - 1);
        return -FI_EINVAL;
    }
    pthread_mutex_lock(&ctx_lock);
    int rc = 0;
    n = atomic_load_explicit(&ncontexts, memory_order_relaxed);
    for (int i = 0; i < n; i++)
        if (strcmp(contexts[i]->provider, provider) == 0) {
            *out = contexts[i];
            goto done;
        }
    if (n == PT_FAB_MAX_CTX) {
        snprintf(err, errlen, "more than %d libfabric providers in one process", PT_FAB_MAX_CTX);
        rc = -FI_ENOSPC;
        goto done;
    }
    rc = open_ctx(api, provider, out, err, errlen);
    if (!rc) {
        contexts[n] = *out;
        atomic_store_explicit(&ncontexts, n + 1, memory_order_release);
    }
done:
    pthread_mutex_unlock(&ctx_lock);
    return rc;
}

void pt_fab_close_all(void)
{
    pthread_mutex_lock(&ctx_lock);
    int n = atomic_exchange(&ncontexts, 0);
    for (int i = 0; i < n; i++) {
        destroy(contexts[i]);
        contexts[i] = NULL;
    }
    pthread_mutex_unlock(&ctx_lock);
}

int pt_fab_peer(pt_fab_ctx *ctx, const void *name, size_t len, fi_addr_t *out)
{
    if (len > PT_FAB_NAME_MAX)
        return -FI_EINVAL;
    for (int i = 0; i < ctx->npeers; i++)
        if (ctx->peers[i].len == len && memcmp(ctx->peers[i].name, name, len) == 0) {
            *out = ctx->peers[i].addr;
            return 0;
        }
    if (ctx->npeers == ctx->peers_cap) {
        int cap = ctx->peers_cap ? 2 * ctx->peers_cap : 16;
        peer_entry *p = realloc(ctx->peers, (size_t)cap * sizeof *p);
        if (!p)
            return -FI_ENOMEM;
        ctx->peers = p;
        ctx->peers_cap = cap;
    }
    fi_addr_t a = FI_ADDR_NOTAVAIL;
    int n = fi_av_insert(ctx->av, name, 1, &a, 0, NULL);
    if (n != 1)
        return n < 0 ? n : -FI_EADDRNOTAVAIL;
    peer_entry *e = &ctx->peers[ctx->npeers++];
    e->len = len;
    memcpy(e->name, name, len);
    e->addr = a;
    *out = a;
    return 0;
}

int pt_fab_mr_reg(pt_fab_ctx *ctx, void *buf, size_t len, uint64_t access, pt_fab_mr *out)
{
    pt_fi_thread();
    memset(out, 0, sizeof *out);
    uint64_t mode = ctx->info->domain_attr->mr_mode;
    int remote = (access & (FI_REMOTE_WRITE | FI_REMOTE_READ)) != 0;
    out->base = (mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)buf : 0;
    if (len == 0 || (!remote && !(mode & FI_MR_LOCAL)))
        return 0;
    uint64_t requested = (mode & FI_MR_PROV_KEY) ? 0 : atomic_fetch_add(&next_key, 1);
    int rc = fi_mr_reg(ctx->domain, buf, len, access, 0, requested, 0, &out->mr, NULL);
    if (rc)
        return rc;
    if (mode & FI_MR_ENDPOINT) {
        if ((rc = fi_mr_bind(out->mr, &ctx->ep->fid, 0)) || (rc = fi_mr_enable(out->mr))) {
            fi_close(&out->mr->fid);
            out->mr = NULL;
            return rc;
        }
    }
    out->desc = fi_mr_desc(out->mr);
    out->key = (mode & FI_MR_PROV_KEY) ? fi_mr_key(out->mr) : requested;
    return 0;
}

void pt_fab_mr_close(pt_fab_mr *m)
{
    pt_fi_thread();
    if (m->mr)
        fi_close(&m->mr->fid);
    m->mr = NULL;
}

int pt_fab_write(pt_fab_ctx *ctx, const void *buf, size_t len, void *desc, fi_addr_t dest, uint64_t raddr,
                 uint64_t key, uint64_t imm, pt_fab_op *op)
{
    return (int)fi_writedata(ctx->ep, buf, len, desc, imm, dest, raddr, key, op);
}

int pt_fab_write_plain(pt_fab_ctx *ctx, const void *buf, size_t len, void *desc, fi_addr_t dest, uint64_t raddr,
                       uint64_t key, pt_fab_op *op)
{
    return (int)fi_write(ctx->ep, buf, len, desc, dest, raddr, key, op);
}

int pt_fab_inject_write(pt_fab_ctx *ctx, const void *buf, size_t len, fi_addr_t dest, uint64_t raddr, uint64_t key,
                        uint64_t imm)
{
    if (len > ctx->info->tx_attr->inject_size)
        return -FI_EMSGSIZE;
    return (int)fi_inject_writedata(ctx->ep, buf, len, imm, dest, raddr, key);
}

int pt_fab_control(pt_fab_ctx *ctx, fi_addr_t dest, uint64_t imm, const void *payload, size_t len, void *desc,
                   pt_fab_op *op)
{
    if (len > PT_FAB_CTRL_MAX)
        return -FI_EMSGSIZE;
    if (len <= ctx->info->tx_attr->inject_size)
        return (int)fi_injectdata(ctx->ep, len ? payload : &ctx->scratch, len, imm, dest);
    return (int)fi_senddata(ctx->ep, payload, len, desc, imm, dest, op);
}

static pool_slot *as_pool_slot(pt_fab_ctx *ctx, void *op_context)
{
    pool_slot *s = op_context;
    return s >= ctx->pool && s < ctx->pool + PT_FAB_POOL ? s : NULL;
}

static void dispatch(pt_fab_ctx *ctx, const struct fi_cq_data_entry *e)
{
    pool_slot *slot = as_pool_slot(ctx, e->op_context);
    if (e->flags & FI_REMOTE_WRITE) {
        if (handlers.remote_write)
            handlers.remote_write(ctx, e->data);
    } else if (e->flags & FI_RECV) {
        if (handlers.control && slot)
            handlers.control(ctx, (e->flags & FI_REMOTE_CQ_DATA) ? e->data : 0, slot->buf, e->len);
    } else if (e->op_context) {
        pt_fab_op *op = e->op_context;
        op->done(ctx, op, 0);
    }
    if (slot)
        set_posted(ctx, slot, 0);
}

static void dispatch_error(pt_fab_ctx *ctx)
{
    struct fi_cq_err_entry err = {0};
    if (fi_cq_readerr(ctx->cq, &err, 0) != 1)
        return;
    pool_slot *slot = as_pool_slot(ctx, err.op_context);
    int code = err.err ? -err.err : -FI_EOTHER;
    if (!slot && err.op_context && !(err.flags & (FI_REMOTE_WRITE | FI_RECV))) {
        pt_fab_op *op = err.op_context;
        op->done(ctx, op, code);
        return;
    }
    if (handlers.error)
        handlers.error(ctx, code, fi_cq_strerror(ctx->cq, err.prov_errno, err.err_data, NULL, 0));
    if (slot)
        set_posted(ctx, slot, 0);
}

int pt_fab_poll(pt_fab_ctx *ctx, int max, int locked)
{
    if (!locked && pt_fab_trylock(ctx))
        return 0;
    int handled = 0, rc = 0;
    while (handled < max) {
        struct fi_cq_data_entry e[PT_FAB_CQ_BATCH];
        ssize_t n = fi_cq_read(ctx->cq, e, PT_FAB_CQ_BATCH);
        if (n == -FI_EAGAIN)
            break;
        if (n == -FI_EAVAIL) {
            dispatch_error(ctx);
            handled++;
            continue;
        }
        if (n < 0) {
            rc = (int)n;
            break;
        }
        for (ssize_t i = 0; i < n; i++)
            dispatch(ctx, &e[i]);
        handled += (int)n;
    }
    repost_pool(ctx);
    if (handlers.resume)
        handlers.resume(ctx);
    if (!locked)
        pt_fab_unlock(ctx);
    return rc ? rc : handled;
}

static _Thread_local int queues_fresh __attribute__((tls_model("initial-exec")));

void pt_fab_queues_read(void) { queues_fresh = 1; }

int pt_fab_poll_again(pt_fab_ctx *ctx, int max)
{
    if (queues_fresh) {
        queues_fresh = 0;
        return 0;
    }
    return pt_fab_poll(ctx, max, 0);
}

int pt_fab_poll_all(int max)
{
    int n = atomic_load_explicit(&ncontexts, memory_order_acquire), total = 0;
    for (int i = 0; i < n; i++) {
        int rc = pt_fab_poll(contexts[i], max, 0);
        if (rc < 0)
            return rc;
        total += rc;
    }
    return total;
}
