/* The fabric transport's process-wide side: its communicator, which provider
 * reaches which rank, the completion handlers that route immediates to
 * requests, background progress, and the operation table. */
#include "transport/fabric/fabric_transport.h"

#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "request/nap.h"
#include "request/request.h"
#include "request/settings.h"
#include "transport/fabric/fabric_ids.h"

static MPI_Comm fab_comm = MPI_COMM_NULL;
static int tag_ub = 32767;
static atomic_int next_tag;
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static void **live;
static int nlive, live_cap;
static atomic_int live_count;
static atomic_flag warned = ATOMIC_FLAG_INIT;
/* Per world rank: its host, and the providers it can open (wanted only). */
typedef struct rank_info {
    uint64_t host;
    uint64_t providers; /* PROV_* bits */
} rank_info;
static rank_info *ranks;
static int nranks, me, wanted;
enum { PROV_SHM = 1, PROV_TCP = 2, PROV_PINNED = 4 };

MPI_Comm pt_fab_comm(void) { return fab_comm; }
/* Two tags per request: the hello on the even one, the reply on the next
 * (a request to itself must not match its own hello with its reply). */
int pt_fab_next_tag(void) { return (int)(((unsigned)atomic_fetch_add(&next_tag, 2)) % (unsigned)tag_ub) & ~1; }
/* MPICH, for one, may finish a receive before it tells the sender (the
 * acknowledgement of its shared-memory single-copy protocol goes out in a
 * later progress call): a receiver that then polled only fabric requests
 * left that sender waiting for ever, and with it the rest of the sender's
 * round, whose credit the receiver's fabric request needed. An Iprobe on the
 * fabric's own communicator runs the engine once. Every 256th call: a poller
 * starved that way still nudges every few tens of microseconds, and a round
 * that completes in a few dozen calls never pays for it. */
#define NUDGE_EVERY 256
void pt_fab_nudge_mpi(void)
{
    static _Thread_local unsigned calls __attribute__((tls_model("initial-exec")));
    if (++calls % NUDGE_EVERY || fab_comm == MPI_COMM_NULL)
        return;
    int flag = 0;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, fab_comm, &flag, MPI_STATUS_IGNORE);
}
/* PARTITA_FABRIC_PROGRESS_THREAD: 0 or 1 (the default), read in MPI_Init. */
static int progress_wanted = 1;
static int pieces_wanted = 1;
int pt_fab_pieces_wanted(void) { return pieces_wanted; }

static int split_copy_wanted = 1;
int pt_fab_split_copy_wanted(void) { return split_copy_wanted; }

/* PARTITA_FABRIC_EARLY_SPLIT: -1 (auto), 0 or 1. */
static int early_split = -1;

static int read_early_split(char *err, size_t errlen)
{
    const char *v = getenv("PARTITA_FABRIC_EARLY_SPLIT");
    if (!v || !strcmp(v, "auto"))
        return 0;
    if (strcmp(v, "0") && strcmp(v, "1")) {
        snprintf(err, errlen, "PARTITA_FABRIC_EARLY_SPLIT='%s' is not auto, 0 or 1", v);
        return -1;
    }
    early_split = v[0] == '1';
    return 0;
}

static void start_progress_thread(void);

void pt_fab_register(void *obj)
{
    start_progress_thread();
    pthread_mutex_lock(&live_lock);
    if (nlive == live_cap) {
        int cap = live_cap ? 2 * live_cap : 16;
        void **p = realloc(live, (size_t)cap * sizeof *p);
        if (!p) { /* not helped in the background: its own progress still moves it */
            pthread_mutex_unlock(&live_lock);
            return;
        }
        live = p;
        live_cap = cap;
    }
    live[nlive++] = obj;
    atomic_store(&live_count, nlive);
    pthread_mutex_unlock(&live_lock);
}

void pt_fab_unregister(void *obj)
{
    pthread_mutex_lock(&live_lock);
    for (int i = 0; i < nlive; i++)
        if (live[i] == obj) {
            live[i] = live[--nlive];
            break;
        }
    atomic_store(&live_count, nlive);
    pthread_mutex_unlock(&live_lock);
}

static const char *pinned(void)
{
    const char *p = getenv("PARTITA_FABRIC_PROVIDER");
    return p && *p ? p : NULL;
}

static int same_host(int peer) { return ranks && peer >= 0 && peer < nranks && ranks[peer].host == ranks[me].host; }

int pt_fab_early_split(int peer_world) { return early_split < 0 ? !same_host(peer_world) : early_split; }

const char *pt_fabric_provider_for(int peer_world)
{
    return pinned() ? pinned() : same_host(peer_world) ? "shm" : "tcp;ofi_rxm";
}

static uint64_t provider_bit(const char *provider)
{
    return pinned() ? PROV_PINNED : !strcmp(provider, "shm") ? PROV_SHM : PROV_TCP;
}

int pt_fabric_reaches(int peer_world)
{
    if (!wanted || !ranks || peer_world < 0 || peer_world >= nranks)
        return 0;
    const char *prov = pt_fabric_provider_for(peer_world);
    uint64_t bit = provider_bit(prov);
    if (!strcmp(prov, "shm") && !same_host(peer_world))
        return 0;
    return (ranks[me].providers & bit) && (ranks[peer_world].providers & bit);
}

/* What this process can open, checked only when the fabric is wanted
 * (loading libfabric and asking its providers took 0.3-0.5 s here). */
static uint64_t local_providers(void)
{
    char err[256];
    if (pinned())
        return pt_fab_provider_available(pinned(), err, sizeof err) ? PROV_PINNED : 0;
    return (pt_fab_provider_available("shm", err, sizeof err) ? PROV_SHM : 0) |
           (pt_fab_provider_available("tcp;ofi_rxm", err, sizeof err) ? PROV_TCP : 0);
}

/* Routes an immediate to its request (payload: a control message's, or NULL). */
static void route(uint64_t imm, const void *payload, size_t len)
{
    int *obj = pt_fab_id_find(pt_imm_id(imm));
    unsigned kind = pt_imm_kind(imm);
    if (!obj)
        return; /* a request freed since: nothing waits for it */
    if (kind == PT_IMM_CREDIT && *obj == PT_FAB_SENDER)
        pt_fab_credit_in((pt_fab_send *)obj, pt_imm_low(imm));
    else if (kind == PT_IMM_REPLY && *obj == PT_FAB_SENDER && payload)
        pt_fab_reply_in((pt_fab_send *)obj, payload, len);
    else if ((kind == PT_IMM_MESSAGE || kind == PT_IMM_RUN) && *obj == PT_FAB_RECEIVER)
        pt_fab_arrival((pt_fab_recv *)obj, imm);
}

static void on_remote(pt_fab_ctx *ctx, uint64_t imm)
{
    (void)ctx;
    route(imm, NULL, 0);
}

static void on_control(pt_fab_ctx *ctx, uint64_t imm, const void *payload, size_t len)
{
    (void)ctx;
    route(imm, payload, len);
}

/* An error of no write of ours (e.g. a peer's write into us failed). */
static void on_error(pt_fab_ctx *ctx, int error, const char *what)
{
    if (!atomic_flag_test_and_set(&warned))
        fprintf(stderr, "partita: warning: libfabric completion error on provider %s: %s (%s)\n",
                pt_fab_provider(ctx), pt_fab_strerror(error), what ? what : "");
}

/* Open now, while every rank is in MPI_Init, the context of each provider
 * that reaches some rank, rather than in the first request that needs it.
 * Opening one is mostly creating its endpoint: 40 ms for tcp;ofi_rxm here,
 * 4 ms for shm. In a request, the sender opened its context in
 * MPI_Psend_init and the receiver its own only when the sender's set-up
 * message came, so the first round over tcp waited for both, one after the
 * other. A failure here is no error: the request that needs the provider
 * tries again and reports it. */
static void open_early(void)
{
    const char *tried[2] = { NULL, NULL }; /* shm and tcp;ofi_rxm, or the pinned one */
    for (int p = 0; p < nranks && !tried[1]; p++) {
        const char *prov = pt_fabric_reaches(p) ? pt_fabric_provider_for(p) : NULL;
        if (!prov || (tried[0] && !strcmp(tried[0], prov)))
            continue;
        tried[tried[0] ? 1 : 0] = prov;
        pt_fab_ctx *ctx;
        char why[256];
        pt_fab_open(prov, &ctx, why, sizeof why);
    }
}

static int fab_connect(char *err, size_t errlen)
{
    int sweep; /* used when the shm provider opens (fabric_ctx.c); checked here, so a bad value stops MPI_Init */
    if (pt_fab_env_flag("PARTITA_FABRIC_PROGRESS_THREAD", 1, &progress_wanted, err, errlen) ||
        pt_fab_shm_sweep_wanted(&sweep, err, errlen) ||
        pt_fab_env_flag("PARTITA_FABRIC_PIECES", 1, &pieces_wanted, err, errlen) ||
        pt_fab_env_flag("PARTITA_FABRIC_SPLIT_COPY", 1, &split_copy_wanted, err, errlen) ||
        read_early_split(err, errlen))
        return MPI_ERR_OTHER;
    int rc = PMPI_Comm_dup(MPI_COMM_WORLD, &fab_comm);
    if (rc != MPI_SUCCESS) {
        snprintf(err, errlen, "could not duplicate MPI_COMM_WORLD for the fabric transport");
        return rc;
    }
    PMPI_Comm_set_errhandler(fab_comm, MPI_ERRORS_RETURN);
    int *ub = NULL, flag = 0;
    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    tag_ub = (flag && ub) ? *ub : 32767;
    pt_fab_handlers h = {.remote_write = on_remote, .control = on_control, .error = on_error};
    pt_fab_set_handlers(&h);
    PMPI_Comm_rank(fab_comm, &me);
    PMPI_Comm_size(fab_comm, &nranks);
    pt_transport_choice t = pt_settings_global()->transport;
    wanted = t == PT_TRANSPORT_FABRIC || t == PT_TRANSPORT_AUTO;
    ranks = calloc((size_t)nranks, sizeof *ranks);
    rank_info mine = {.host = pt_fab_host_hash(), .providers = wanted ? local_providers() : 0};
    if (!ranks) {
        snprintf(err, errlen, "out of memory for the fabric transport's table of %d ranks", nranks);
        return MPI_ERR_NO_MEM;
    }
    /* Collective, like MPI_Init: every rank learns every host and provider set. */
    rc = PMPI_Allgather(&mine, 2, MPI_UINT64_T, ranks, 2, MPI_UINT64_T, fab_comm);
    if (rc != MPI_SUCCESS)
        snprintf(err, errlen, "the fabric transport's exchange of host names failed");
    else if (wanted)
        open_early();
    return rc;
}

static void stop_progress_thread(void);

/* Receive what nobody will: the hello of a receive freed before its set-up
 * message came, or a refusal to a freed send (MPICH refuses to free a
 * communicator with unmatched messages). */
static void drain_unmatched(void)
{
    for (;;) {
        int flag = 0, n = 0;
        MPI_Status st;
        if (PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, fab_comm, &flag, &st) != MPI_SUCCESS || !flag)
            return;
        PMPI_Get_count(&st, MPI_BYTE, &n);
        char *tmp = malloc(n > 0 ? (size_t)n : 1);
        if (!tmp)
            return;
        PMPI_Recv(tmp, n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, fab_comm, MPI_STATUS_IGNORE);
        free(tmp);
    }
}

static void fab_disconnect(void)
{
    stop_progress_thread();
    pt_fab_close_all();
    if (fab_comm != MPI_COMM_NULL) {
        drain_unmatched();
        PMPI_Comm_free(&fab_comm);
    }
    free(ranks);
    ranks = NULL;
    free(live);
    live = NULL;
    nlive = live_cap = 0;
}

static int fab_pending(void) { return atomic_load_explicit(&live_count, memory_order_relaxed) > 0; }

/* Whether the request a live state belongs to is in a round. */
static int in_round(void *obj)
{
    const struct pt_request *req =
        *(int *)obj == PT_FAB_SENDER ? ((pt_fab_send *)obj)->req : ((pt_fab_recv *)obj)->req;
    return atomic_load_explicit(&req->active, memory_order_acquire);
}

/* Help every live request (with_mpi: from an application thread). Returns
 * whether anything is going on: completions read, a request in a round, or
 * one that still owes something (the fabric's thread keeps polling then). */
static int help_all(int with_mpi)
{
    int n = pt_fab_poll_all(64), busy = n > 0;
    if (with_mpi && n >= 0 && n < 64) /* all read (a full batch may have left more) */
        pt_fab_queues_read();
    pthread_mutex_lock(&live_lock);
    for (int i = 0; i < nlive; i++) {
        if (*(int *)live[i] == PT_FAB_SENDER)
            busy |= pt_fab_send_help(live[i]);
        else
            busy |= pt_fab_recv_help(live[i], with_mpi);
        busy |= in_round(live[i]);
    }
    pthread_mutex_unlock(&live_lock);
    return busy;
}

static void fab_poll(void)
{
    if (atomic_load_explicit(&live_count, memory_order_relaxed))
        help_all(1);
}

/* The fabric's progress thread: what an RDMA NIC does by itself, here every
 * PROGRESS_US while a fabric request is in a round or owes something: it
 * reads the completion queues (credits, replies, arrivals, local
 * completions) and posts queued messages whose credit came, so that a
 * sender blocked in another MPI call (MPI_Recv, a collective) still sends,
 * and a receiver's sender still sees its credit. It makes no MPI call.
 * Otherwise, LINGER_POLLS after the last thing it saw, it naps (IDLE_US at
 * most): a program that keeps persistent requests between rounds should
 * not pay 40 ms of CPU a second per rank for them, as it did when the
 * thread polled every PROGRESS_US for as long as a request lived. A round's
 * MPI_Start wakes it (pt_fab_wake); the linger covers the moment between
 * the transport's start and the request becoming active. */
#define PROGRESS_US 100
#define IDLE_US 5000
#define LINGER_POLLS 20
static pthread_t progress_thread;
static atomic_int progress_started; /* read by partita's progress thread (fab_self_progressed) */
static atomic_int progress_stop;
static pthread_mutex_t progress_start_lock = PTHREAD_MUTEX_INITIALIZER;
static pt_nap nap;
static atomic_int nap_ready; /* set under progress_start_lock */

void pt_fab_wake(void)
{
    if (nap_ready)
        pt_nap_kick(&nap);
}

static int stopping(void) { return atomic_load(&progress_stop); }

static void *progress_main(void *arg)
{
    (void)arg;
#ifdef __linux__
    prctl(PR_SET_NAME, "pt-fabric", 0UL, 0UL, 0UL); /* its name in top -H, gdb and /proc */
#endif
    int linger = 0;
    while (!atomic_load_explicit(&progress_stop, memory_order_relaxed)) {
        int busy = atomic_load_explicit(&live_count, memory_order_relaxed) > 0 && help_all(0);
        busy |= pt_nap_take_kick(&nap);
        linger = busy ? LINGER_POLLS : linger - (linger > 0);
        if (linger) {
            struct timespec ts = {0, PROGRESS_US * 1000L};
            nanosleep(&ts, NULL);
        } else {
            pt_nap_wait(&nap, IDLE_US * 1000L, stopping);
        }
    }
    return NULL;
}

static void start_progress_thread(void)
{
    pthread_mutex_lock(&progress_start_lock);
    if (!nap_ready)
        nap_ready = pt_nap_init(&nap) == 0;
    if (!progress_started && progress_wanted && nap_ready)
        atomic_store(&progress_started, pthread_create(&progress_thread, NULL, progress_main, NULL) == 0);
    pthread_mutex_unlock(&progress_start_lock);
}

static void stop_progress_thread(void)
{
    if (!progress_started)
        return;
    atomic_store(&progress_stop, 1);
    pt_fab_wake(); /* from its nap */
    pthread_join(progress_thread, NULL);
    atomic_store(&progress_started, 0);
}

void pt_fab_credit_in(pt_fab_send *s, uint64_t round)
{
    int have = atomic_load_explicit(&s->credits, memory_order_relaxed);
    while ((uint64_t)have < round &&
           !atomic_compare_exchange_weak_explicit(&s->credits, &have, (int)round, memory_order_release,
                                                  memory_order_relaxed))
        ;
}

void pt_fab_reply_in(pt_fab_send *s, const void *payload, size_t len)
{
    if (len != sizeof s->reply || atomic_load_explicit(&s->reply_in, memory_order_relaxed))
        return;
    memcpy(&s->reply, payload, sizeof s->reply);
    atomic_store_explicit(&s->reply_in, 1, memory_order_release);
}

void pt_fab_arrival(pt_fab_recv *r, uint64_t imm)
{
    if (!pt_fab_recv_whole(r, imm))
        return;
    if (pt_imm_kind(imm) == PT_IMM_MESSAGE) {
        int n = atomic_load_explicit(&r->nmsgs, memory_order_relaxed);
        if (r->msgs && n < r->msgs_cap_round) {
            r->msgs[n] = (int)pt_imm_low(imm);
            atomic_store_explicit(&r->nmsgs, n + 1, memory_order_release);
            return;
        }
    } else {
        int n = atomic_load_explicit(&r->nruns, memory_order_relaxed);
        if (r->runs && n < r->runs_cap) {
            r->runs[2 * n] = pt_imm_run_first(imm);
            r->runs[2 * n + 1] = pt_imm_run_count(imm);
            atomic_store_explicit(&r->nruns, n + 1, memory_order_release);
            return;
        }
    }
    atomic_fetch_add(&r->bad, 1);
}

void pt_fab_forget(pt_fab_ctx *ctx, uint32_t id)
{
    if (!id)
        return;
    if (ctx)
        pt_fab_lock(ctx);
    pt_fab_id_release(id);
    if (ctx)
        pt_fab_unlock(ctx);
}

/* With the fabric's own thread polling every PROGRESS_US, partita's progress
 * thread (PARTITA_PROGRESS_THREAD=1) need not poll for the fabric too: when
 * it did, every 20 us while fabric requests existed, the two threads and the
 * ranks shared 2 cores, and under a laggard over shm the round's last
 * partition took 255 us after its mark instead of 7 (64 KiB in 8 partitions,
 * 4 threads; even the reference MPI_Send went from 8 to 167 us). Waits in
 * the application still poll the fabric (pending). */
static int fab_self_progressed(void) { return atomic_load_explicit(&progress_started, memory_order_relaxed); }

const pt_transport_ops pt_fabric_transport = {
    .name = "fabric",
    .cheap_runs = 1,
    .init = fab_connect,
    .finalize = fab_disconnect,
    .pending = fab_pending,
    .poll = fab_poll,
    .self_progressed = fab_self_progressed,
    .send_init = pt_fab_send_init,
    .send_start = pt_fab_send_start,
    .send_message = pt_fab_send_message,
    .send_runs = pt_fab_send_runs,
    .send_finish_group = pt_fab_send_finish_group,
    .send_progress = pt_fab_send_progress,
    .send_destroy = pt_fab_send_destroy,
    .recv_setup = pt_fab_recv_setup,
    .recv_start = pt_fab_recv_start,
    .recv_progress = pt_fab_recv_progress,
    .recv_settled = pt_fab_recv_settled,
    .recv_destroy = pt_fab_recv_destroy,
    .describe = pt_fab_describe,
};
