/* partita-p2p: the partitioned point-to-point metrics (overhead, perceived
 * bandwidth, application availability, early-bird share, MPI_Pready cost) between
 * a sender (rank 0) and a receiver (rank 1). Definitions: docs/metrics.md.
 *
 * Each case (message size m, send partitions P) alternates a reference iteration
 * (threads compute, join, one MPI_Send of m bytes) with a partitioned iteration
 * (threads compute, then MPI_Pready their partitions; the receiver stamps the
 * first MPI_Parrived == true of each partition): ABAB, never two loops. */
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "harness/bench.h"
#include "harness/cache.h"
#include "harness/clock.h"
#include "harness/clocksync.h"
#include "harness/sizecheck.h"
#include "p2p_metrics.h"

enum { METRIC_OVERHEAD, METRIC_BW, METRIC_AVAIL, METRIC_EARLY, METRIC_ARRIVAL, METRIC_PREADY, METRIC_ALL };
static const char *const metric_names[] = {"overhead", "perceived-bw", "availability", "early-bird", "early-arrival",
                                           "pready-cost", "all", NULL};
enum { SENDER = 0, RECEIVER = 1, TAG_REF = 100, TAG_PART = 101, TAG_STAMPS = 102 };
/* The sender waits this long after the start signal before computing, so the
 * receiver is surely polling when the first partition can arrive. Not timed. */
#define GUARD_NS 3000

typedef struct p2p_config {
    pt_common c;
    pt_size_range sizes;
    pt_int_list parts;
    int recv_parts; /* 0: same as send */
    int metric;
    int clock;      /* CLOCK_* */
    int stamps;     /* STAMPS_* */
    int mapping;    /* MAPPING_*: which partitions a thread owns */
} p2p_config;

enum { STAMPS_SPAN, STAMPS_EACH };
enum { MAPPING_ROUND_ROBIN, MAPPING_BLOCK };
static const char *const mapping_names[] = {"round-robin", "block", NULL};
static const char *const stamp_names[] = {"span", "each", NULL};

enum { CLOCK_AUTO, CLOCK_PINGPONG };
static const char *const clock_names[] = {"auto", "pingpong", NULL};

#define NCASE_METRICS 11

/* Everything measured in one case, on the sender after the receiver's stamps came in. */
typedef struct p2p_case {
    size_t bytes;
    int P, Q;
    int validation_errors;
    double *v[NCASE_METRICS];  /* per-iteration samples, in the order of case_metrics below */
    double *pready_ns;
    char plan[2048]; /* sender: libpartita's account of its plan (libpartita_plan), or "" */
} p2p_case;

static const struct { const char *name, *unit, *definition; } case_metrics[NCASE_METRICS] = {
    {"overhead", "ratio", "t_part / t_pt2pt: first MPI_Pready start to last partition arrival, over one MPI_Send from the join to its arrival (same iteration pair)"},
    {"perceived_bw", "MB/s", "m / t_last: bytes over the time from the start of the last MPI_Pready to the last arrival (MB = 1e6 bytes)"},
    {"availability", "%", "100 * max(0, 1 - t_after_join / t_pt2pt): share of the single send's time the application gets back"},
    {"early_bird", "%", "share of the union of [ready, arrival] intervals that lies before the join (the last thread finishing its compute)"},
    {"t_part_us", "us", "first MPI_Pready start to last partition arrival"},
    {"t_last_us", "us", "last MPI_Pready start to last partition arrival"},
    {"t_pt2pt_us", "us", "reference: join to arrival of one MPI_Send of m bytes (compute without noise)"},
    {"t_after_join_us", "us", "union of [ready, arrival] intervals after the join"},
    {"t_before_join_us", "us", "union of [ready, arrival] intervals before the join"},
    {"t_union_us", "us", "union of [ready, arrival] intervals"},
    {"early_arrival", "%", "share of the message (receive partitions) whose first MPI_Parrived == true came by the join: data really moved early"},
};

/* Partitions of thread t: round-robin t, t+T, t+2T, ... or a block of
 * consecutive ones (thread t owns [t*P/T, (t+1)*P/T)). */
static int owned_count(const p2p_config *cfg, int P, int t)
{
    int T = cfg->c.threads;
    if (cfg->mapping == MAPPING_BLOCK)
        return (int)((long)(t + 1) * P / T - (long)t * P / T);
    return (P - t + T - 1) / T;
}

static int owned(const p2p_config *cfg, int P, int t, int k)
{
    int T = cfg->c.threads;
    return cfg->mapping == MAPPING_BLOCK ? (int)((long)t * P / T) + k : t + k * T;
}

static void configure(pt_cli *cli, p2p_config *cfg)
{
    static const char details[] =
        "Runs on exactly 2 ranks: rank 0 sends, rank 1 receives. For every message size m (powers of two in\n"
        "MIN:MAX) and every P in --partitions, reference iterations (T threads compute, join, one MPI_Send of m\n"
        "bytes) alternate with partitioned iterations (each thread computes, then calls MPI_Pready for its\n"
        "partitions, round-robin by default: thread t owns t, t+T, ...; --mapping block gives each thread\n"
        "consecutive partitions; the receiver polls MPI_Parrived). Cases with\n"
        "m smaller than P or Q bytes, or m not divisible by P and Q, are skipped and listed as skipped (a command\n"
        "line where every case would be skipped is refused).\n"
        "Noise: single, uniform and gaussian scale --compute, so they need --compute > 0 (refused with --compute 0);\n"
        "delay:US adds US to one thread's compute, with or without --compute (--compute 0: that thread alone is late).\n"
        "A percentage or delay of 0 is refused (--noise none is that run), and so is --seed when nothing is drawn at\n"
        "random (only uniform, gaussian and --noise-thread random draw).\n"
        "Metrics (per iteration, then median / p05 / p95 / mean / stdev / 95% CI of the median):\n"
        "  overhead      t_part / t_pt2pt (first Pready start to last arrival, over one send's join to arrival)\n"
        "  perceived-bw  m / (last arrival - start of the last Pready), MB/s\n"
        "  availability  100 * max(0, 1 - t_after_join / t_pt2pt), percent\n"
        "  early-bird    percent of the partitioned communication (union of [ready, arrival]) before the join\n"
        "  early-arrival percent of the message whose partitions arrived by the join (data that really moved early)\n"
        "  pready-cost   nanoseconds per MPI_Pready call, T threads calling concurrently, no compute\n"
        "Time stamps: CLOCK_MONOTONIC, shared by both ranks on one node; across nodes the receiver's clock offset\n"
        "is estimated by ping-pong and its uncertainty reported. See docs/metrics.md.";
    pt_common_defaults(&cfg->c);
    cfg->sizes = (pt_size_range){1024, 1 << 20};
    cfg->parts = (pt_int_list){.n = 3, .v = {1, 8, 64}};
    cfg->recv_parts = 0;
    cfg->metric = METRIC_ALL;
    cfg->clock = CLOCK_AUTO;
    cfg->stamps = STAMPS_SPAN;
    cfg->mapping = MAPPING_ROUND_ROBIN;
    *cli = (pt_cli){.program = "partita-p2p",
                    .summary = "Partitioned point-to-point metrics between 2 ranks (overhead, perceived bandwidth, availability, early-bird, Pready cost).",
                    .details = details};
    pt_add_sizes(cli, "message-size", 'm', &cfg->sizes, "MIN:MAX", "total message bytes, powers of two (K, M, G suffixes)");
    pt_add_int_list(cli, "partitions", 'p', &cfg->parts, "P[,P...]", "send partitions (each >= --threads)", 1, 1 << 20);
    pt_add_int(cli, "recv-partitions", 'q', &cfg->recv_parts, "Q", "receive partitions (0: same as P)", 0, 1 << 20);
    pt_add_choice(cli, "metric", 0, &cfg->metric, "NAME",
                  "the metric to report (all: every one; given twice, the last wins)", metric_names);
    pt_add_choice(cli, "clock", 0, &cfg->clock, "HOW",
                  "comparing the ranks' time stamps: auto (one shared clock on one node, ping-pong offset estimate across nodes) "
                  "or pingpong (always estimate)", clock_names);
    pt_add_choice(cli, "mapping", 0, &cfg->mapping, "HOW",
                  "partitions of each thread: round-robin (thread t owns t, t+T, ...) or block (consecutive partitions)",
                  mapping_names);
    pt_add_choice(cli, "ready-stamps", 0, &cfg->stamps, "HOW",
                  "start of each MPI_Pready: span (each thread reads the clock before its first and before its last call, "
                  "both exact, and spreads the calls between evenly over that span) or each (one clock read per call: "
                  "exact for every partition, but adds about one clock read per partition to the partitioned time)",
                  stamp_names);
    pt_common_options(cli, &cfg->c, PT_COMMON_ALL);
}

/* Byte pattern of the data check: depends on iteration and position. */
static inline unsigned char pattern(long iter, size_t i) { return (unsigned char)((size_t)iter * 131u + i * 7u + (i >> 9)); }

static void fill_range(unsigned char *buf, size_t lo, size_t hi, long iter)
{
    for (size_t i = lo; i < hi; i++)
        buf[i] = pattern(iter, i);
}

static int check_buffer(const unsigned char *buf, size_t n, long iter)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] != pattern(iter, i))
            return 1;
    return 0;
}

static void make_cold(const pt_common *c, void *buf, size_t bytes)
{
    if (c->cache != PT_CACHE_COLD)
        return;
#pragma omp parallel num_threads(c->threads)
    pt_cache_flush_thread();
    pt_cache_evict(buf, bytes);
}

/* Reference iteration: returns (sender) the join stamp or (receiver) the arrival stamp. */
static int64_t reference_iteration(const pt_ctx *ctx, const p2p_config *cfg, unsigned char *buf, size_t m, long iter,
                                   int *errors)
{
    const pt_common *c = &cfg->c;
    make_cold(c, buf, m);
    if (ctx->rank == RECEIVER) {
        MPI_Request r;
        MPI_Irecv(buf, (int)m, MPI_BYTE, SENDER, TAG_REF, MPI_COMM_WORLD, &r);
        MPI_Barrier(MPI_COMM_WORLD);
        /* poll like the partitioned receiver polls MPI_Parrived, so both detect arrival alike */
        int done = 0;
        while (!done)
            MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        int64_t t = pt_now_ns();
        if (c->validate)
            *errors += check_buffer(buf, m, iter);
        return t;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    pt_compute_until(c->compute_mode, pt_now_ns() + GUARD_NS);
#pragma omp parallel num_threads(c->threads)
    {
        int t = omp_get_thread_num();
        if (c->validate) {
            size_t lo = m * (size_t)t / (size_t)c->threads, hi = m * (size_t)(t + 1) / (size_t)c->threads;
            fill_range(buf, lo, hi, iter);
        }
        pt_compute_us(c->compute_mode, c->compute_us);
    }
    int64_t join = pt_now_ns();
    MPI_Send(buf, (int)m, MPI_BYTE, RECEIVER, TAG_REF, MPI_COMM_WORLD);
    return join;
}

#define STAMP_BATCH 16

/* Give the partitions found arrived since the last clock read one stamp, now,
 * and empty the list. */
static void stamp_pending(int64_t *arrival, const int *pending_q, int *pending)
{
    if (*pending) {
        int64_t now = pt_now_ns();
        for (int i = 0; i < *pending; i++)
            arrival[pending_q[i]] = now;
        *pending = 0;
    }
}

/* Partitioned iteration. Sender: fills ready[P] and compute_end[T]; receiver: arrival[Q]. */
static void partitioned_iteration(const pt_ctx *ctx, const p2p_config *cfg, MPI_Request *req, unsigned char *buf,
                                  size_t m, int P, int Q, long iter, int64_t *ready, int64_t *compute_end,
                                  int64_t *arrival, char *arrived, int *pending_q, int *errors)
{
    const pt_common *c = &cfg->c;
    make_cold(c, buf, m);
    MPI_Start(req);
    if (ctx->rank == RECEIVER) {
        memset(arrived, 0, (size_t)Q);
        MPI_Barrier(MPI_COMM_WORLD);
        /* A clock read costs about 20 ns: one per arrived partition made the
         * 512th partition of a message that completes all 512 at once look
         * 10 us late. Arrivals seen since the last read share the next one
         * (taken every STAMP_BATCH arrivals and at the end of each sweep), an
         * upper bound of each partition's detection by a few Parrived calls. */
        int remaining = Q, pending = 0;
        while (remaining > 0) {
            for (int q = 0; q < Q; q++) {
                if (arrived[q])
                    continue;
                int flag = 0;
                MPI_Parrived(*req, q, &flag);
                if (flag) {
                    arrived[q] = 1;
                    pending_q[pending++] = q;
                    remaining--;
                    if (pending == STAMP_BATCH)
                        stamp_pending(arrival, pending_q, &pending);
                }
            }
            stamp_pending(arrival, pending_q, &pending);
        }
        MPI_Wait(req, MPI_STATUS_IGNORE);
        if (c->validate)
            *errors += check_buffer(buf, m, iter);
        return;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    pt_compute_until(c->compute_mode, pt_now_ns() + GUARD_NS);
    size_t pbytes = m / (size_t)P;
#pragma omp parallel num_threads(c->threads)
    {
        int t = omp_get_thread_num();
        int n = owned_count(cfg, P, t);
        if (c->validate)
            for (int k = 0; k < n; k++) {
                int j = owned(cfg, P, t, k);
                fill_range(buf, (size_t)j * pbytes, (size_t)(j + 1) * pbytes, iter);
            }
        pt_compute_us(c->compute_mode, pt_noise_draw_us(&c->noise, c->compute_us, (uint64_t)c->seed, t, c->threads, iter));
        int64_t now = pt_now_ns();
        compute_end[t] = now;
        if (cfg->stamps == STAMPS_EACH) {
            for (int k = 0; k < n; k++) {
                int j = owned(cfg, P, t, k);
                ready[j] = now;
                MPI_Pready(j, *req);
                now = pt_now_ns();
            }
        } else {
            /* Two clock reads per thread instead of one per partition: at the
             * start of the first call (the end of the compute) and of the last;
             * the calls between are taken to start evenly in between. The
             * first and the last start, all that t_part and t_last read, are
             * exact. The second read used to follow the last call, whose start
             * was then taken to be at (n-1)/n of the span: a last call longer
             * than the others (one that sends what its group left) read as a
             * shorter t_last, and one shorter as a longer t_last. */
            for (int k = 0; k + 1 < n; k++)
                MPI_Pready(owned(cfg, P, t, k), *req);
            int64_t last = n > 1 ? pt_now_ns() : now;
            if (n > 0)
                MPI_Pready(owned(cfg, P, t, n - 1), *req);
            for (int k = 0; k < n; k++)
                ready[owned(cfg, P, t, k)] = n > 1 ? now + (last - now) * k / (n - 1) : now;
        }
    }
    MPI_Wait(req, MPI_STATUS_IGNORE);
}

/* MPI_Pready cost: T threads ready all P partitions back to back; ns per call. */
static double pready_iteration(const pt_ctx *ctx, const p2p_config *cfg, MPI_Request *req, int P, double *per_thread)
{
    const pt_common *c = &cfg->c;
    MPI_Start(req);
    MPI_Barrier(MPI_COMM_WORLD);
    if (ctx->rank == RECEIVER) {
        MPI_Wait(req, MPI_STATUS_IGNORE);
        return 0.0;
    }
#pragma omp parallel num_threads(c->threads)
    {
        int t = omp_get_thread_num();
        int calls = 0;
#pragma omp barrier
        int64_t t0 = pt_now_ns();
        for (int n = owned_count(cfg, P, t); calls < n; calls++)
            MPI_Pready(owned(cfg, P, t, calls), *req);
        int64_t t1 = pt_now_ns();
        per_thread[t] = calls ? (double)(t1 - t0) / calls : NAN;
    }
    MPI_Wait(req, MPI_STATUS_IGNORE);
    double sum = 0.0;
    int n = 0;
    for (int t = 0; t < c->threads; t++)
        if (!isnan(per_thread[t]))
            sum += per_thread[t], n++;
    return n ? sum / n : NAN;
}

static const char *skip_reason(size_t m, int P, int Q, int T)
{
    if (P < T)
        return "fewer partitions than threads";
    if (m < (size_t)P || m < (size_t)Q)
        return "fewer bytes than partitions";
    if (m % (size_t)P || m % (size_t)Q)
        return "size not divisible by the partition count";
    return NULL;
}

/* Bytes a case allocates on one rank: the message buffer and, per iteration, the stamps
 * (ready per send partition, arrival per receive partition, compute end per thread) and
 * the samples of every metric. */
static double case_bytes(size_t m, int P, int Q, int T, int N)
{
    return (double)m + 8.0 * N * ((double)P + Q + T + 2 + NCASE_METRICS + 1) + 16.0 * ((double)P + Q + T);
}

/* libpartita's account of what it sent and why (Partita_Request_why: the
 * layout, for the adaptive policy its candidates and last decision) when
 * it is preloaded; "" under the MPI library's own partitioned calls. Looked
 * up at run time: the program is the MPI library's as much as libpartita's. */
static void libpartita_plan(MPI_Request req, char *text, int len)
{
    int (*why)(MPI_Request, char *, int);
    *(void **)&why = dlsym(RTLD_DEFAULT, "Partita_Request_why"); /* POSIX's way to a function pointer */
    if (!why || why(req, text, len) != MPI_SUCCESS)
        text[0] = '\0';
}

static void run_case(pt_ctx *ctx, const p2p_config *cfg, const pt_clock_offset *clk, size_t m, int P, int Q,
                     p2p_case *out)
{
    const pt_common *c = &cfg->c;
    int T = c->threads;
    long total = (long)c->warmup + c->iterations;
    int N = c->iterations;
    /* page-aligned: the copy speed of shared-memory transports depends on it */
    unsigned char *buf = aligned_alloc(4096, (m + 4095) / 4096 * 4096);
    int64_t *ready = calloc((size_t)P * (size_t)N, sizeof *ready);
    int64_t *compute_end = calloc((size_t)T * (size_t)N, sizeof *compute_end);
    int64_t *arrival = calloc((size_t)Q * (size_t)N, sizeof *arrival);
    int64_t *ref = calloc((size_t)N, sizeof *ref);
    int64_t *scratch = calloc((size_t)(P > Q ? P : Q) + (size_t)T, sizeof *scratch);
    char *arrived = calloc((size_t)Q, 1);
    int *pending_q = calloc((size_t)Q, sizeof *pending_q);
    double *per_thread = calloc((size_t)T, sizeof *per_thread);
    int do_pready = cfg->metric == METRIC_PREADY || cfg->metric == METRIC_ALL;
    /* the sender's: the samples of every metric and the receiver's reference arrivals */
    int64_t *ref_arrival = ctx->rank == SENDER ? calloc((size_t)N, sizeof *ref_arrival) : NULL;
    int failed = !buf || !ready || !compute_end || !arrival || !ref || !scratch || !arrived || !pending_q ||
                 !per_thread || (ctx->rank == SENDER && !ref_arrival);
    for (int k = 0; k < NCASE_METRICS; k++)
        failed |= !(out->v[k] = calloc((size_t)N, sizeof(double)));
    out->pready_ns = do_pready ? calloc((size_t)N, sizeof(double)) : NULL;
    failed |= do_pready && !out->pready_ns;
    /* agreed before any rank touches what it may not have got */
    char msg[128];
    snprintf(msg, sizeof msg, "cannot allocate the buffers of %zu bytes in %d/%d partitions", m, P, Q);
    pt_check_all(ctx, failed, msg);
    memset(buf, 0, m);
    int errors = 0;

    MPI_Request req;
    if (ctx->rank == SENDER)
        MPI_Psend_init(buf, P, (MPI_Count)(m / (size_t)P), MPI_BYTE, RECEIVER, TAG_PART, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    else
        MPI_Precv_init(buf, Q, (MPI_Count)(m / (size_t)Q), MPI_BYTE, SENDER, TAG_PART, MPI_COMM_WORLD, MPI_INFO_NULL, &req);

    out->bytes = m;
    out->P = P;
    out->Q = Q;

    for (long it = 0; it < total; it++) {
        long k = it - c->warmup; /* timed index, negative during warm-up */
        long slot = k < 0 ? 0 : k;
        int64_t r = reference_iteration(ctx, cfg, buf, m, it, &errors);
        if (k >= 0)
            ref[slot] = r;
        int64_t *rd = k >= 0 ? ready + (size_t)slot * (size_t)P : scratch;
        int64_t *ce = k >= 0 ? compute_end + (size_t)slot * (size_t)T : scratch + (P > Q ? P : Q);
        int64_t *ar = k >= 0 ? arrival + (size_t)slot * (size_t)Q : scratch;
        partitioned_iteration(ctx, cfg, &req, buf, m, P, Q, it, rd, ce, ar, arrived, pending_q, &errors);
    }
    if (ctx->rank == SENDER) /* after the measured rounds (the adaptive policy's decisions are made), before
                              * MPI_Pready's own rounds, whose marking differs */
        libpartita_plan(req, out->plan, (int)sizeof out->plan);
    if (do_pready)
        for (long it = 0; it < total; it++) {
            double ns = pready_iteration(ctx, cfg, &req, P, per_thread);
            if (it >= c->warmup && ctx->rank == SENDER)
                out->pready_ns[it - c->warmup] = ns;
        }
    MPI_Request_free(&req);

    /* The receiver's stamps travel to the sender, which computes the metrics. */
    if (ctx->rank == RECEIVER) {
        MPI_Send(arrival, Q * N, MPI_INT64_T, SENDER, TAG_STAMPS, MPI_COMM_WORLD);
        MPI_Send(ref, N, MPI_INT64_T, SENDER, TAG_STAMPS, MPI_COMM_WORLD);
    } else {
        MPI_Recv(arrival, Q * N, MPI_INT64_T, RECEIVER, TAG_STAMPS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(ref_arrival, N, MPI_INT64_T, RECEIVER, TAG_STAMPS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++) {
            int64_t *arr = arrival + (size_t)i * (size_t)Q;
            for (int q = 0; q < Q; q++)
                arr[q] -= clk->offset_ns; /* receiver clock -> sender clock */
            p2p_stamps s = {.bytes = m, .send_parts = P, .recv_parts = Q, .threads = T,
                            .ready = ready + (size_t)i * (size_t)P, .compute_end = compute_end + (size_t)i * (size_t)T,
                            .arrival = arr, .pt2pt_ns = ref_arrival[i] - clk->offset_ns - ref[i]};
            p2p_iteration x;
            p2p_compute_iteration(&s, &x);
            double vals[NCASE_METRICS] = {x.overhead, x.perceived_bw, x.availability, x.early_bird, x.t_part_us,
                                          x.t_last_us, x.t_pt2pt_us, x.t_after_join_us, x.t_before_join_us,
                                          x.t_union_us, x.early_arrival};
            for (int k = 0; k < NCASE_METRICS; k++)
                out->v[k][i] = vals[k];
        }
    }
    free(ref_arrival);
    MPI_Allreduce(&errors, &out->validation_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    free(buf);
    free(ready);
    free(compute_end);
    free(arrival);
    free(ref);
    free(scratch);
    free(arrived);
    free(pending_q);
    free(per_thread);
}

/* Text columns: the --metric choice that shows them, the case metric, the header. */
static const struct { int choice, k; const char *header; } columns[] = {
    {METRIC_OVERHEAD, 0, "Overhead(x) [95% CI]"},   {METRIC_BW, 1, "PerceivedBW(MB/s) [95% CI]"},
    {METRIC_AVAIL, 2, "Availability(%) [95% CI]"},  {METRIC_EARLY, 3, "EarlyBird(%) [95% CI]"},
    {METRIC_ARRIVAL, 10, "EarlyArrival(%) [95% CI]"},
};
#define NCOLUMNS (int)(sizeof columns / sizeof columns[0])

static int shown(int metric, int column) { return metric == METRIC_ALL || metric == columns[column].choice; }

static pt_metric metric_of(const p2p_case *pc, int k, int n)
{
    return (pt_metric){case_metrics[k].name, case_metrics[k].unit, case_metrics[k].definition, pc->v[k], (size_t)n};
}

static pt_metric pready_metric(const p2p_case *pc, int n)
{
    return (pt_metric){"pready_ns", "ns", "nanoseconds per MPI_Pready call: T threads ready all P partitions back to back, mean over threads",
                       pc->pready_ns, (size_t)n};
}

static void write_json_case(pt_json *j, const p2p_config *cfg, const p2p_case *pc)
{
    int n = cfg->c.iterations;
    pt_json_object_begin(j, NULL);
    pt_json_object_begin(j, "case");
    pt_json_int(j, "bytes", (long long)pc->bytes);
    pt_json_int(j, "partitions", pc->P);
    pt_json_int(j, "recv_partitions", pc->Q);
    pt_json_int(j, "threads", cfg->c.threads);
    pt_json_int(j, "partition_bytes", (long long)(pc->bytes / (size_t)pc->P));
    pt_json_object_end(j);
    pt_json_string(j, "validation", cfg->c.validate ? (pc->validation_errors ? "fail" : "pass") : "skipped");
    if (pc->plan[0])
        pt_json_string(j, "plan", pc->plan);
    pt_json_object_begin(j, "metrics");
    for (int k = 0; k < NCASE_METRICS; k++) {
        pt_metric m = metric_of(pc, k, n);
        pt_json_metric(j, &m);
    }
    if (pc->pready_ns) {
        pt_metric m = pready_metric(pc, n);
        pt_json_metric(j, &m);
    }
    pt_json_object_end(j);
    pt_json_object_end(j);
}

static void text_header(FILE *f, const p2p_config *cfg)
{
    fprintf(f, "%-10s %8s %8s", "# Size", "Parts", "RParts");
    for (int i = 0; i < NCOLUMNS; i++)
        if (shown(cfg->metric, i))
            fprintf(f, " %28s", columns[i].header);
    if (cfg->metric == METRIC_PREADY || cfg->metric == METRIC_ALL)
        fprintf(f, " %28s", "Pready(ns) [95% CI]");
    fprintf(f, " %10s\n", "Validation");
}

static void text_row(FILE *f, const p2p_config *cfg, const p2p_case *pc)
{
    int n = cfg->c.iterations;
    fprintf(f, "%-10zu %8d %8d", pc->bytes, pc->P, pc->Q);
    for (int i = 0; i < NCOLUMNS; i++)
        if (shown(cfg->metric, i)) {
            pt_metric m = metric_of(pc, columns[i].k, n);
            pt_text_metric_cell(f, &m, 28);
        }
    if (pc->pready_ns) {
        pt_metric m = pready_metric(pc, n);
        pt_text_metric_cell(f, &m, 28);
    }
    fprintf(f, " %10s\n", cfg->c.validate ? (pc->validation_errors ? "Fail" : "Pass") : "-");
}

static void csv_rows(FILE *f, const pt_ctx *ctx, const p2p_config *cfg, const p2p_case *pc)
{
    char b[32], p[16], q[16], t[16];
    snprintf(b, sizeof b, "%zu", pc->bytes);
    snprintf(p, sizeof p, "%d", pc->P);
    snprintf(q, sizeof q, "%d", pc->Q);
    snprintf(t, sizeof t, "%d", cfg->c.threads);
    const char *vals[] = {b, p, q, t};
    for (int k = 0; k < NCASE_METRICS; k++) {
        pt_metric m = metric_of(pc, k, cfg->c.iterations);
        pt_csv_row(f, ctx, 4, vals, &m);
    }
    if (pc->pready_ns) {
        pt_metric m = pready_metric(pc, cfg->c.iterations);
        pt_csv_row(f, ctx, 4, vals, &m);
    }
}

static void free_case(p2p_case *pc)
{
    for (int k = 0; k < NCASE_METRICS; k++)
        free(pc->v[k]);
    free(pc->pready_ns);
}

int main(int argc, char **argv)
{
    pt_cli cli;
    p2p_config cfg;
    pt_ctx ctx = {.benchmark = "p2p"};
    configure(&cli, &cfg);
    pt_start(&ctx, &cli, &cfg.c, argc, argv, 0);
    const pt_common *c = &cfg.c;
    if (ctx.size != 2)
        pt_fail(&ctx, "needs exactly 2 ranks (a sender and a receiver), got %d", ctx.size);
    for (int i = 0; i < cfg.parts.n; i++)
        if (cfg.parts.v[i] < c->threads)
            pt_fail(&ctx, "--partitions %d is smaller than --threads %d: every thread needs at least one partition",
                    cfg.parts.v[i], c->threads);
    /* delay with no compute stays: one thread late (the model's laggard) */
    pt_require_compute_for_noise(&ctx, c, c->compute_us > 0.0, "--compute 0", "--compute US");
    /* the reference MPI_Send carries the whole message in one int count of bytes */
    if (cfg.sizes.max > (size_t)INT_MAX)
        pt_fail(&ctx, "--message-size: at most 1G bytes (got %zu): the reference MPI_Send of m bytes takes an int "
                "count (at most %d)", cfg.sizes.max, INT_MAX);
    double most_bytes = 0.0;
    for (int i = 0; i < cfg.parts.n; i++) {
        int Q = cfg.recv_parts ? cfg.recv_parts : cfg.parts.v[i];
        double b = case_bytes(cfg.sizes.max, cfg.parts.v[i], Q, c->threads, c->iterations);
        most_bytes = b > most_bytes ? b : most_bytes;
        pt_require_int_count(&ctx, (double)Q * c->iterations,
                             "the arrival stamps the receiver sends (receive partitions x --iterations)");
    }
    pt_require_memory(&ctx, most_bytes, "the message buffer and stamps (--message-size, --partitions, --iterations)");
    /* a run in which every case is skipped measures nothing: say so, not exit 0 (as partita-mech) */
    const char *skipped_why = NULL;
    int runnable = 0;
    for (size_t m = cfg.sizes.min; m <= cfg.sizes.max; m *= 2) {
        for (int i = 0; i < cfg.parts.n; i++) {
            const char *why = skip_reason(m, cfg.parts.v[i], cfg.recv_parts ? cfg.recv_parts : cfg.parts.v[i],
                                          c->threads);
            runnable += !why;
            skipped_why = skipped_why ? skipped_why : why;
        }
        if (m > cfg.sizes.max / 2)
            break;
    }
    if (!runnable)
        pt_fail(&ctx, "no case can run: every (size, partitions) pair is skipped (e.g. %s)", skipped_why);
    pt_require_cold_cache(&ctx, c->cache == PT_CACHE_COLD);
    pt_require_omp_threads(&ctx, c->threads);
    pt_open_output(&ctx, c);

    int same_node = ctx.nodes == 1 && cfg.clock == CLOCK_AUTO;
    pt_clock_offset clk;
    pt_clock_sync(MPI_COMM_WORLD, ctx.rank == SENDER ? RECEIVER : SENDER, ctx.rank == SENDER, same_node, 200, &clk);

    FILE *out = ctx.out;
    pt_json j;
    if (ctx.rank == SENDER) {
        if (c->format == PT_FORMAT_TEXT) {
            pt_text_preamble(out, &ctx, c, "Partitioned Point-to-Point");
            fprintf(out, "# Clock: %s\n", clk.shared ? "CLOCK_MONOTONIC shared by both ranks (one node)"
                                                     : "per-node CLOCK_MONOTONIC, receiver offset estimated by ping-pong");
            if (!clk.shared)
                fprintf(out, "# Clock offset: %.3f us +- %.3f us\n", clk.offset_ns / 1e3, clk.uncert_ns / 1e3);
            fprintf(out, "# Values: median [95%% confidence interval of the median] over %d iterations\n", c->iterations);
            text_header(out, &cfg);
        } else if (c->format == PT_FORMAT_JSON) {
            pt_json_init(&j, out);
            pt_json_head(&j, &ctx, c);
            pt_json_object_begin(&j, "message_size");
            pt_json_int(&j, "min", (long long)cfg.sizes.min);
            pt_json_int(&j, "max", (long long)cfg.sizes.max);
            pt_json_object_end(&j);
            pt_json_array_begin(&j, "partitions");
            for (int i = 0; i < cfg.parts.n; i++)
                pt_json_int(&j, NULL, cfg.parts.v[i]);
            pt_json_array_end(&j);
            pt_json_int(&j, "recv_partitions", cfg.recv_parts);
            pt_json_string(&j, "metric", metric_names[cfg.metric]);
            pt_json_string(&j, "clock", clock_names[cfg.clock]);
            pt_json_string(&j, "ready_stamps", stamp_names[cfg.stamps]);
            pt_json_string(&j, "mapping", mapping_names[cfg.mapping]);
            pt_json_config_end(&j);
            pt_json_object_begin(&j, "clock");
            pt_json_bool(&j, "shared", clk.shared);
            pt_json_number(&j, "offset_us", clk.offset_ns / 1e3);
            pt_json_number(&j, "uncertainty_us", clk.uncert_ns / 1e3);
            pt_json_object_end(&j);
            pt_json_array_begin(&j, "results");
        } else {
            static const char *const cols[] = {"bytes", "partitions", "recv_partitions", "threads"};
            pt_csv_header(out, 4, cols);
        }
    }

    int failures = 0;
    for (size_t m = cfg.sizes.min; m <= cfg.sizes.max; m *= 2) {
        for (int i = 0; i < cfg.parts.n; i++) {
            int P = cfg.parts.v[i];
            int Q = cfg.recv_parts ? cfg.recv_parts : P;
            const char *why = skip_reason(m, P, Q, c->threads);
            if (why) {
                if (ctx.rank == SENDER && c->format == PT_FORMAT_TEXT)
                    fprintf(out, "# skipped: %zu bytes, %d/%d partitions: %s\n", m, P, Q, why);
                if (ctx.rank == SENDER && c->format == PT_FORMAT_JSON) {
                    pt_json_object_begin(&j, NULL);
                    pt_json_object_begin(&j, "case");
                    pt_json_int(&j, "bytes", (long long)m);
                    pt_json_int(&j, "partitions", P);
                    pt_json_int(&j, "recv_partitions", Q);
                    pt_json_int(&j, "threads", c->threads);
                    pt_json_object_end(&j);
                    pt_json_string(&j, "skipped", why);
                    pt_json_object_end(&j);
                }
                continue;
            }
            p2p_case pc = {0};
            run_case(&ctx, &cfg, &clk, m, P, Q, &pc);
            failures += pc.validation_errors > 0;
            if (ctx.rank == SENDER) {
                if (c->format == PT_FORMAT_TEXT)
                    text_row(out, &cfg, &pc);
                else if (c->format == PT_FORMAT_JSON)
                    write_json_case(&j, &cfg, &pc);
                else
                    csv_rows(out, &ctx, &cfg, &pc);
                fflush(out);
            }
            free_case(&pc);
        }
        if (m > cfg.sizes.max / 2)
            break; /* no overflow past MAX */
    }
    if (ctx.rank == SENDER && c->format == PT_FORMAT_JSON) {
        pt_json_array_end(&j);
        pt_json_object_end(&j);
    }
    if (failures && ctx.rank == SENDER)
        fprintf(stderr, "%s: error: data validation failed in %d case(s)\n", ctx.program, failures);
    pt_cache_teardown();
    return pt_finish(&ctx, failures ? 1 : 0);
}
