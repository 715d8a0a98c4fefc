/* partita-latency: an OSU Micro-Benchmarks compatible partitioned latency test,
 * with the options and the output layout of OMB 7.5's osu_partitioned_latency
 * (written from its documented behaviour, no OMB code). Two ranks, one
 * MPI_Psend_init and one MPI_Precv_init each, the same partition count (-q) on
 * both sides. For every message size:
 *   pass 1 (pure communication): rank 0 starts its send, marks every partition
 *     ready back to back, waits, then receives the pong the same way; rank 1
 *     mirrors it. Latency = round trip / 2.
 *   pass 2 (overlap): the same round trip, but after each MPI_Start (and the
 *     MPI_Pready calls) rank 0 computes for the pass-1 latency before MPI_Wait,
 *     and times start/compute/test/wait. Rank 1 computes for 0 us: in OMB only
 *     the timing rank knows the pass-1 latency. A barrier ends every iteration.
 * Columns and their relation to partita-p2p's metrics: docs/latency.md. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "harness/bench.h"
#include "harness/cache.h"
#include "harness/clock.h"
#include "harness/sizecheck.h"
#include "latency_output.h"
#include "partita/config.h"

enum { TIMER = 0, PEER = 1, TAG = 1 };
/* OMB's defaults (osu_util.h): 10000 iterations / 100 warm-up up to 8 KiB, then 1000 / 10. */
#define OMB_LARGE_MESSAGE 8192
#define OMB_MAX_SIZE ((size_t)1 << 22)
#define OMB_PARTITIONS 8
#define MAX_PERCENTILES 5

typedef struct lat_config {
    pt_common c;          /* validate, cache, compute mode, format, output */
    size_t min_size, max_size;
    int partitions;       /* -q */
    int iterations;       /* -i; 0: OMB's default by size */
    int warmup;           /* -x; -1: OMB's default by size */
    int full;             /* -f */
    int validation_warmup; /* -u */
    int buffers;          /* -b, accepted for OMB scripts */
    int tail;             /* -z */
    pt_int_list percentiles;
    int test_calls;
} lat_config;

static const char *const buffer_names[] = {"single", "multiple", NULL};
static const char *const compute_modes[] = {"spin", "sleep", NULL};
static const char *const formats[] = {"text", "json", "csv", NULL};

/* OMB's -m: MAX, MIN:MAX, MIN: or :MAX, byte counts (K/M/G suffixes allowed). */
static int parse_omb_sizes(const char *arg, void *dest, char *err, size_t errlen)
{
    lat_config *cfg = dest;
    size_t lo = cfg->min_size, hi = cfg->max_size;
    const char *colon = strchr(arg, ':');
    char first[64];
    size_t n = colon ? (size_t)(colon - arg) : strlen(arg);
    if (n >= sizeof first || (colon && strchr(colon + 1, ':'))) {
        snprintf(err, errlen, "sizes are [MIN:]MAX, MIN: or :MAX (got '%s')", arg);
        return -1;
    }
    memcpy(first, arg, n);
    first[n] = '\0';
    if (!colon) {
        if (pt_parse_bytes(first, &hi, err, errlen))
            return -1;
    } else {
        if (n && pt_parse_bytes(first, &lo, err, errlen))
            return -1;
        if (colon[1] && pt_parse_bytes(colon + 1, &hi, err, errlen))
            return -1;
        if (!n && !colon[1]) {
            snprintf(err, errlen, "sizes are [MIN:]MAX, MIN: or :MAX (got '%s')", arg);
            return -1;
        }
    }
    if (lo < 1) {
        snprintf(err, errlen, "the smallest size must be at least 1 byte (got '%s')", arg);
        return -1;
    }
    if (hi > (size_t)INT_MAX) {
        snprintf(err, errlen, "at most %d bytes: MPI counts are int (got '%s')", INT_MAX, arg);
        return -1;
    }
    if (lo > hi) {
        snprintf(err, errlen, "the smallest size %zu is larger than the largest %zu (got '%s')", lo, hi, arg);
        return -1;
    }
    cfg->min_size = lo;
    cfg->max_size = hi;
    return 0;
}

/* --tail-percentiles: refused without -z, which alone uses it */
static const pt_option *percentiles_option;

static void configure(pt_cli *cli, lat_config *cfg)
{
    static const char details[] =
        "OSU Micro-Benchmarks compatible: the options and the table of OMB 7.5's osu_partitioned_latency\n"
        "(# Size, Overall(us), Compute(us), Pure Comm.(us), Overlap(%); -f adds Compute, Coll. Init, MPI_Test,\n"
        "MPI_Wait, Pure Comm., Min Comm., Max Comm., Overlap, then partita's medians and 95% CIs).\n"
        "Runs on exactly 2 ranks. Sizes double from MIN to MAX; each size is sent as -q partitions of\n"
        "SIZE/q bytes (rounded down, as OMB); a size smaller than -q bytes is skipped.\n"
        "Pass 1 (Pure Comm.): round trip / 2 of MPI_Start, MPI_Pready of every partition, MPI_Wait and back.\n"
        "Pass 2 (Overall): the same round trip with rank 0 computing for the pass-1 latency after each\n"
        "MPI_Start/MPI_Pready; Overlap = max(0, 100 - (Overall - Compute) / Pure Comm. * 100).\n"
        "Figures are means over the iterations (as OMB). OMB options not supported here (-G, -D, -P, -T,\n"
        "-I, -d) are rejected as unknown. See docs/latency.md.";
    pt_common_defaults(&cfg->c);
    cfg->min_size = 1;
    cfg->max_size = OMB_MAX_SIZE;
    cfg->partitions = OMB_PARTITIONS;
    cfg->iterations = 0;
    cfg->warmup = -1;
    cfg->full = 0;
    cfg->validation_warmup = 0;
    cfg->buffers = 0;
    cfg->tail = 0;
    cfg->percentiles = (pt_int_list){.n = 3, .v = {50, 95, 99}};
    cfg->test_calls = 0;
    *cli = (pt_cli){.program = "partita-latency",
                    .summary = "OMB-compatible partitioned latency (osu_partitioned_latency's options and columns) between 2 ranks.",
                    .details = details};
    pt_add_custom(cli, "message-size", 'm', cfg, "[MIN:]MAX", "message sizes in bytes, doubling from MIN (MIN:, :MAX allowed)",
                  parse_omb_sizes, "1:4194304");
    pt_add_int(cli, "partitions", 'q', &cfg->partitions, "N", "partitions of every message, sender and receiver", 1,
               1 << 20);
    pt_add_int(cli, "iterations", 'i', &cfg->iterations, "N", "timed iterations per size and pass", 1, 1e8)->default_text =
        "10000, 1000 above 8192 bytes";
    pt_add_int(cli, "warmup", 'x', &cfg->warmup, "N", "untimed warm-up iterations per size and pass", 0, 1e8)->default_text =
        "100, 10 above 8192 bytes";
    pt_add_flag(cli, "full", 'f', &cfg->full,
                "full listing: Compute, Coll. Init, MPI_Test, MPI_Wait, Pure/Min/Max Comm., Overlap, then medians and 95% CIs");
    pt_common_options(cli, &cfg->c, PT_COMMON_VALIDATE | PT_COMMON_CACHE);
    pt_add_int(cli, "validation-warmup", 'u', &cfg->validation_warmup, "N",
               "untimed repetitions of each iteration before the timed one (OMB's -u)", 0, 10);
    pt_add_choice(cli, "buffer-num", 'b', &cfg->buffers, "single|multiple",
                  "OMB's buffer option; a latency test has one request pair, so both run the same exchange", buffer_names);
    pt_add_flag(cli, "tail-lat", 'z', &cfg->tail, "add tail-latency columns of Pure Comm. (--tail-percentiles)");
    percentiles_option = pt_add_int_list(cli, "tail-percentiles", 0, &cfg->percentiles, "P[,P...]",
                                         "percentiles of -z (at most 5; needs -z)", 1, 99);
    pt_add_int(cli, "test-calls", 0, &cfg->test_calls, "N",
               "MPI_Test calls spread over each compute phase (OMB's non-blocking -t; its partitioned test makes none)", 0,
               1000000);
    pt_add_choice(cli, "compute-mode", 0, &cfg->c.compute_mode, "MODE",
                  "the compute phase: spin (busy loop, as OMB) or sleep (clock_nanosleep)", compute_modes);
    pt_add_choice(cli, "format", 0, &cfg->c.format, "FMT", "output format (text is OMB's table)", formats);
    pt_add_string(cli, "output", 'o', &cfg->c.output, "FILE", "write results to FILE instead of standard output");
}

typedef struct lat_reqs {
    MPI_Request send, recv;
    unsigned char *sbuf, *rbuf;
    int parts, count;
} lat_reqs;

static void ready_all(const lat_reqs *r)
{
    for (int p = 0; p < r->parts; p++)
        MPI_Pready(p, r->send);
}

/* One round trip without compute: rank 0 pings, rank 1 pongs. */
static void round_trip(lat_reqs *r, int rank)
{
    if (rank == TIMER) {
        MPI_Start(&r->send);
        ready_all(r);
        MPI_Wait(&r->send, MPI_STATUS_IGNORE);
        MPI_Start(&r->recv);
        MPI_Wait(&r->recv, MPI_STATUS_IGNORE);
    } else {
        MPI_Start(&r->recv);
        MPI_Wait(&r->recv, MPI_STATUS_IGNORE);
        MPI_Start(&r->send);
        ready_all(r);
        MPI_Wait(&r->send, MPI_STATUS_IGNORE);
    }
}

/* Compute for us microseconds, calling MPI_Test on req `calls` times at even
 * intervals; returns the nanoseconds spent in MPI_Test. */
static int64_t compute_and_test(const lat_config *cfg, double us, MPI_Request *req)
{
    if (cfg->test_calls == 0) {
        pt_compute_us(cfg->c.compute_mode, us);
        return 0;
    }
    int64_t in_test = 0;
    for (int k = 0; k < cfg->test_calls; k++) {
        pt_compute_us(cfg->c.compute_mode, us / cfg->test_calls);
        int flag = 0;
        int64_t t = pt_now_ns();
        MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        in_test += pt_now_ns() - t;
    }
    return in_test;
}

/* One round trip with compute; times[] gets the OMB figures (ns, whole trip). */
static void overlap_trip(const lat_config *cfg, lat_reqs *r, int rank, double compute_us, int64_t times[LAT_NMETRICS])
{
    int sender = rank == TIMER;
    MPI_Request *first = sender ? &r->send : &r->recv, *second = sender ? &r->recv : &r->send;
    int64_t t0 = pt_now_ns();
    MPI_Start(first);
    if (sender)
        ready_all(r);
    int64_t init = pt_now_ns() - t0;
    int64_t t = pt_now_ns();
    int64_t test = compute_and_test(cfg, compute_us, first);
    int64_t comp = pt_now_ns() - t;
    t = pt_now_ns();
    MPI_Wait(first, MPI_STATUS_IGNORE);
    int64_t wait = pt_now_ns() - t;
    t = pt_now_ns();
    MPI_Start(second);
    if (!sender)
        ready_all(r);
    init += pt_now_ns() - t;
    t = pt_now_ns();
    test += compute_and_test(cfg, compute_us, second);
    comp += pt_now_ns() - t;
    t = pt_now_ns();
    MPI_Wait(second, MPI_STATUS_IGNORE);
    wait += pt_now_ns() - t;
    times[LAT_OVERALL] = pt_now_ns() - t0;
    times[LAT_COMPUTE] = comp;
    times[LAT_INIT] = init;
    times[LAT_TEST] = test;
    times[LAT_WAIT] = wait;
}

/* Byte pattern of the data check: iteration, direction and position. */
static inline unsigned char pattern(long iter, int from, size_t i)
{
    return (unsigned char)((size_t)iter * 131u + (size_t)from * 59u + i * 7u + (i >> 9));
}

static void fill(unsigned char *buf, size_t n, long iter, int from)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = pattern(iter, from, i);
}

static int check(const unsigned char *buf, size_t n, long iter, int from)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] != pattern(iter, from, i))
            return 1;
    return 0;
}

static void prepare(const lat_config *cfg, lat_reqs *r, int rank, long iter)
{
    size_t n = (size_t)r->parts * (size_t)r->count;
    if (cfg->c.validate) {
        fill(r->sbuf, n, iter, rank);
        memset(r->rbuf, 0, n);
    }
    if (cfg->c.cache == PT_CACHE_COLD) {
        pt_cache_flush_thread();
        pt_cache_evict(r->sbuf, n);
        pt_cache_evict(r->rbuf, n);
    }
}

static void run_case(pt_ctx *ctx, const lat_config *cfg, lat_case *lc)
{
    int rank = ctx->rank, peer = rank == TIMER ? PEER : TIMER;
    lat_reqs r = {.parts = cfg->partitions, .count = lc->partition_bytes};
    size_t n = (size_t)r.parts * (size_t)r.count;
    r.sbuf = malloc(n);
    r.rbuf = malloc(n);
    int failed = !r.sbuf || !r.rbuf;
    for (int k = 0; k < LAT_NMETRICS && !failed; k++)
        failed = !(lc->v[k] = calloc((size_t)lc->iterations, sizeof(double)));
    char msg[128];
    snprintf(msg, sizeof msg, "cannot allocate the buffers of a %zu-byte message", n);
    pt_check_all(ctx, failed, msg);
    memset(r.sbuf, 0, n);
    memset(r.rbuf, 0, n);
    MPI_Psend_init(r.sbuf, r.parts, r.count, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r.send);
    MPI_Precv_init(r.rbuf, r.parts, r.count, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r.recv);
    MPI_Barrier(MPI_COMM_WORLD);

    int errors = 0;
    long total = (long)lc->warmup + lc->iterations;
    /* pass 1: pure communication */
    for (long i = 0; i < total; i++) {
        prepare(cfg, &r, rank, i);
        int64_t trip = 0;
        for (int j = 0; j <= cfg->validation_warmup; j++) {
            int64_t t0 = pt_now_ns();
            round_trip(&r, rank);
            trip = pt_now_ns() - t0;
        }
        if (cfg->c.validate)
            errors += check(r.rbuf, n, i, peer);
        if (i >= lc->warmup && rank == TIMER)
            lc->v[LAT_PURE_COMM][i - lc->warmup] = pt_ns_to_us(trip) / 2.0;
    }
    /* the compute phase lasts the mean pass-1 latency on the timing rank, 0 on the other (as OMB) */
    double compute_us = 0.0;
    if (rank == TIMER) {
        pt_summary s;
        pt_summarize(lc->v[LAT_PURE_COMM], (size_t)lc->iterations, &s);
        compute_us = s.mean;
    }
    /* pass 2: overlap */
    for (long i = 0; i < total; i++) {
        prepare(cfg, &r, rank, total + i);
        int64_t times[LAT_NMETRICS] = {0};
        for (int j = 0; j <= cfg->validation_warmup; j++) {
            overlap_trip(cfg, &r, rank, compute_us, times);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        if (cfg->c.validate)
            errors += check(r.rbuf, n, total + i, peer);
        if (i >= lc->warmup && rank == TIMER)
            for (int k = LAT_OVERALL; k < LAT_NMETRICS; k++)
                lc->v[k][i - lc->warmup] = pt_ns_to_us(times[k]) / 2.0;
    }
    MPI_Request_free(&r.send);
    MPI_Request_free(&r.recv);
    int all_errors = 0;
    MPI_Allreduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    lc->validation_errors = cfg->c.validate ? all_errors : -1;
    free(r.sbuf);
    free(r.rbuf);
}

static void text_preamble(FILE *f, const pt_ctx *ctx, const lat_config *cfg)
{
    fprintf(f, "\n# OSU MPI Partitioned Latency Test layout (OMB 7.5), partita-latency v%s\n", PARTITA_VERSION);
    fprintf(f, "# MPI library: %s\n", ctx->library);
    fprintf(f, "# Ranks: %d on %d node%s\n", ctx->size, ctx->nodes, ctx->nodes == 1 ? "" : "s");
    pt_text_implementation(f);
    fprintf(f, "# Partitions: %d\n", cfg->partitions);
    fprintf(f, "# Compute: the pass-1 latency on rank 0 (%s), %d MPI_Test calls\n",
            compute_modes[cfg->c.compute_mode], cfg->test_calls);
    fprintf(f, "# Overall = Coll. Init + Compute + MPI_Test + MPI_Wait (means over the iterations)\n\n");
}

static void json_preamble(pt_json *j, const pt_ctx *ctx, const lat_config *cfg)
{
    pt_json_init(j, ctx->out);
    pt_json_head(j, ctx, &cfg->c);
    pt_json_object_begin(j, "message_size");
    pt_json_int(j, "min", (long long)cfg->min_size);
    pt_json_int(j, "max", (long long)cfg->max_size);
    pt_json_object_end(j);
    pt_json_int(j, "partitions", cfg->partitions);
    pt_json_bool(j, "omb_default_iterations", cfg->iterations == 0);
    pt_json_int(j, "validation_warmup", cfg->validation_warmup);
    pt_json_int(j, "test_calls", cfg->test_calls);
    pt_json_config_end(j);
    pt_json_array_begin(j, "results");
}

int main(int argc, char **argv)
{
    pt_cli cli;
    lat_config cfg;
    pt_ctx ctx = {.benchmark = "latency"};
    configure(&cli, &cfg);
    pt_start(&ctx, &cli, &cfg.c, argc, argv, 0);
    if (ctx.size != 2)
        pt_fail(&ctx, "needs exactly 2 ranks (OMB's partitioned latency is a 2-rank ping-pong), got %d", ctx.size);
    if ((size_t)cfg.partitions > cfg.max_size)
        pt_fail(&ctx, "-q %d partitions: larger than the largest message (%zu bytes), so every size would have an "
                "empty partition; use -q at most %zu or a larger -m",
                cfg.partitions, cfg.max_size, cfg.max_size);
    if (percentiles_option->given && !cfg.tail)
        pt_fail(&ctx, "--tail-percentiles applies to the tail-latency columns only: add -z (--tail-lat)");
    if (cfg.percentiles.n > MAX_PERCENTILES)
        pt_fail(&ctx, "--tail-percentiles: at most %d percentiles (got %d)", MAX_PERCENTILES, cfg.percentiles.n);
    /* refused up front, not by the OOM killer halfway through the sizes */
    double most_iterations = cfg.iterations ? cfg.iterations : 10000;
    pt_require_memory(&ctx, 2.0 * (double)cfg.max_size + LAT_NMETRICS * most_iterations * sizeof(double),
                      "the send and receive buffers of the largest message (-m) and its samples");
    pt_require_cold_cache(&ctx, cfg.c.cache == PT_CACHE_COLD);
    pt_open_output(&ctx, &cfg.c);
    /* the JSON head records the iteration counts of the smallest size */
    int small = cfg.min_size <= OMB_LARGE_MESSAGE;
    cfg.c.iterations = cfg.iterations ? cfg.iterations : small ? 10000 : 1000;
    cfg.c.warmup = cfg.warmup >= 0 ? cfg.warmup : small ? 100 : 10;

    lat_view view = {.partitions = cfg.partitions, .full = cfg.full, .validate = cfg.c.validate, .tail = cfg.tail,
                     .npercentiles = cfg.percentiles.n, .percentiles = cfg.percentiles.v};
    FILE *out = ctx.out;
    pt_json j;
    if (ctx.rank == TIMER) {
        if (cfg.c.format == PT_FORMAT_TEXT) {
            text_preamble(out, &ctx, &cfg);
            lat_text_header(out, &view);
        } else if (cfg.c.format == PT_FORMAT_JSON) {
            json_preamble(&j, &ctx, &cfg);
        } else {
            static const char *const cols[] = {"bytes", "partitions", "partition_bytes"};
            pt_csv_header(out, 3, cols);
        }
        fflush(out);
    }

    int failures = 0;
    for (size_t m = cfg.min_size; m <= cfg.max_size; m *= 2) {
        lat_case lc = {.bytes = m, .partition_bytes = (int)(m / (size_t)cfg.partitions)};
        if (lc.partition_bytes > 0) { /* OMB skips a size smaller than its partition count */
            int large = m > OMB_LARGE_MESSAGE;
            lc.iterations = cfg.iterations ? cfg.iterations : large ? 1000 : 10000;
            lc.warmup = cfg.warmup >= 0 ? cfg.warmup : large ? 10 : 100;
            run_case(&ctx, &cfg, &lc);
            failures += lc.validation_errors > 0;
            if (ctx.rank == TIMER) {
                if (cfg.c.format == PT_FORMAT_TEXT)
                    lat_text_row(out, &view, &lc);
                else if (cfg.c.format == PT_FORMAT_JSON)
                    lat_json_case(&j, &lc, cfg.partitions);
                else
                    lat_csv_rows(out, &ctx, &lc, cfg.partitions);
                fflush(out);
            }
            for (int k = 0; k < LAT_NMETRICS; k++)
                free(lc.v[k]);
        }
        if (m > cfg.max_size / 2)
            break; /* no overflow past MAX */
    }
    if (ctx.rank == TIMER && cfg.c.format == PT_FORMAT_JSON) {
        pt_json_array_end(&j);
        pt_json_object_end(&j);
    }
    if (failures && ctx.rank == TIMER)
        fprintf(stderr, "%s: error: data validation failed in %d size(s)\n", ctx.program, failures);
    pt_cache_teardown();
    return pt_finish(&ctx, failures ? 1 : 0);
}
