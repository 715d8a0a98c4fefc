/* partita-loggp: measure the LogGP parameters of this MPI between two ranks with
 * the parameterised round-trip method (PRTT) and write a partita.loggp/1 file
 * that libpartita and the partita CLI read (docs/model.md). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "loggp_prtt.h"
#include "partita/config.h"
#include "partita/model.h"

#define MAX_SIZES 256
/* The server's receive buffers when receives are posted ahead: n of them. */
#define MAX_SERVER_BUFFER ((size_t)1 << 30)

enum { API_ISEND, API_SEND };
static const char *const apis[] = {"isend", "send", NULL};
enum { TRANSPORT_MPI, TRANSPORT_FABRIC };
static const char *const transports[] = {"mpi", "fabric", NULL};
#define MAX_BYTES ((size_t)1 << 28)

typedef struct loggp_config {
    pt_common c;
    pt_size_range sizes;
    int count;          /* n of PRTT(n, d, s) */
    int refine;         /* extra sizes measured around each detected switch */
    int passes;         /* sweeps over all sizes; the least disturbed one counts */
    int max_segments;
    double budget_s;    /* time budget per size and phase */
    const char *save;   /* also write the parameter file here */
    double quantile;    /* statistic of the repetitions */
    int api;            /* API_ISEND or API_SEND */
    int transport;      /* TRANSPORT_MPI or TRANSPORT_FABRIC */
} loggp_config;

static const char details[] =
    "Method (Hoefler, Lichei, Rehm 2007): PRTT(n,d,s) = time for n messages of s bytes with d us between\n"
    "sends and one s-byte reply. Per size: PRTT(1,0,s), PRTT(n,0,s), PRTT(n,d,s) with d = PRTT(1,0,s), and\n"
    "the receive overhead timed on the receiver with the data already waiting. Medians of -i repetitions.\n"
    "o_s(s) = time inside MPI_Send during PRTT(n,d,s), timed directly (Netgauge's (PRTT(n,d,s) - PRTT(1,0,s))/(n-1)\n"
    "- d amplifies noise by d);  g + G(s-1) = (PRTT(n,0,s) - PRTT(1,0,s))/(n-1), fitted\n"
    "per protocol segment by least squares;  L = PRTT(1,0,s)/2 - o_s - o_r - G(s-1) (overheads removed).\n"
    "Protocol switches (eager -> rendezvous) are detected in the data and refined with extra sizes.\n"
    "With --transport fabric the transport's own switches are known and kept: the provider's inject size,\n"
    "the largest write that goes in pieces and (shm) the largest write whose copy is not split between both\n"
    "sides; switches are detected only beyond them.\n"
    "-f json writes the partita.loggp/1 parameter file; `partita loggp` saves it where libpartita finds it.";

static void configure(pt_cli *cli, loggp_config *cfg)
{
    memset(cli, 0, sizeof *cli);
    cli->program = "partita-loggp";
    cli->summary = "Measure LogGP parameters (L, o_s, o_r, g, G per protocol segment) between 2 ranks";
    cli->details = details;
    memset(cfg, 0, sizeof *cfg);
    pt_common_defaults(&cfg->c);
    cfg->sizes = (pt_size_range){1, 4u << 20};
    cfg->count = 10;
    cfg->refine = 0;
    cfg->max_segments = 4;
    cfg->budget_s = 2.0;
    cfg->passes = 3;
    cfg->c.iterations = 40;
    cfg->quantile = 0.5;
    pt_add_sizes(cli, "message-size", 'm', &cfg->sizes, "MIN:MAX", "message sizes, powers of two (K, M suffixes)");
    pt_add_int(cli, "count", 'n', &cfg->count, "N", "messages per parameterised round trip PRTT(n,d,s)", 2, 1000);
    pt_add_int(cli, "passes", 'p', &cfg->passes, "P",
               "sweeps over all sizes; per size and quantity the smallest pass median is kept (robust to a busy machine)", 1, 100);
    pt_add_int(cli, "refine", 0, &cfg->refine, "K", "extra sizes measured between the sizes around each protocol switch (measured after the main sweep)", 0, 16);
    pt_add_int(cli, "max-segments", 0, &cfg->max_segments, "S", "most protocol segments to report", 1, PTM_MAX_SEGMENTS);
    pt_add_double(cli, "budget", 0, &cfg->budget_s, "SEC", "time budget per size and phase (fewer repetitions for big sizes)", 0.01, 3600);
    pt_add_double(cli, "quantile", 0, &cfg->quantile, "Q",
                  "statistic of the repetitions: 0.5 the median (Netgauge), lower values resist a busy machine", 0, 1);
    pt_add_choice(cli, "api", 0, &cfg->api, "API",
                  "isend: MPI_Isend and receives posted ahead, as libpartita sends transport messages; "
                  "send: blocking MPI_Send/MPI_Recv as Netgauge", apis);
    pt_add_choice(cli, "transport", 0, &cfg->transport, "T",
                  "mpi: MPI point-to-point (--api); fabric: libfabric RMA writes with remote CQ data, posted as libpartita's "
                  "fabric transport posts them (injected up to the provider's inject size, in up to 4 injected pieces "
                  "above it, whole beyond; PARTITA_FABRIC_PIECES=0: never in pieces) (provider: PARTITA_FABRIC_PROVIDER, else shm on one host, tcp;ofi_rxm across hosts)",
                  transports);
    pt_add_string(cli, "save", 0, &cfg->save, "FILE", "also write the partita.loggp/1 parameter file to FILE");
    pt_common_options(cli, &cfg->c, PT_COMMON_ITER | PT_COMMON_OUTPUT);
}

/* Every phase of one size, on both ranks; rank 0 gets the sample. The first pass
 * fixes d = PRTT(1,0,s); later passes reuse it and keep the smaller medians:
 * interference from other processes only ever adds time. */
static void measure_size(loggp_probe *probe, const loggp_config *cfg, size_t s, int first, ptm_loggp_sample *io)
{
    int n = cfg->count, warm = cfg->c.warmup, reps = cfg->c.iterations;
    double p1 = loggp_prtt(probe, 1, 0.0, s, warm, reps, NULL);
    double d = p1;
    if (!first)
        d = io->delay_us;
    MPI_Bcast(&d, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    /* The slowest phase takes about n * 2 * d per repetition. */
    double per_rep_s = 2e-6 * n * d;
    int r = (int)fmin((double)reps, fmax(5.0, cfg->budget_s / fmax(per_rep_s, 1e-9)));
    int w = warm < r ? warm : r;
    double pn = loggp_prtt(probe, n, 0.0, s, w, r, NULL);
    double o_s;
    double pd = loggp_prtt(probe, n, d, s, w, r, &o_s);
    double o_r = loggp_recv_overhead(probe, n, d, s, w, r);
    if (first) {
        *io = (ptm_loggp_sample){ .bytes = s, .prtt1_us = p1, .prttn_us = pn, .prttd_us = pd, .delay_us = d,
                                  .o_r_us = o_r, .o_s_us = o_s };
    } else {
        io->prtt1_us = fmin(io->prtt1_us, p1);
        io->prttn_us = fmin(io->prttn_us, pn);
        io->prttd_us = fmin(io->prttd_us, pd);
        io->o_r_us = fmin(io->o_r_us, o_r);
        io->o_s_us = fmin(io->o_s_us, o_s);
    }
}

/* Every pass over sizes[0..count). */
static void measure_sizes(loggp_probe *probe, const loggp_config *cfg, const size_t *sizes, size_t count,
                          ptm_loggp_sample *out)
{
    for (int pass = 0; pass < cfg->passes; pass++)
        for (size_t i = 0; i < count; i++)
            measure_size(probe, cfg, sizes[i], pass == 0, &out[i]);
}

static int by_bytes(const void *a, const void *b)
{
    const ptm_loggp_sample *x = a, *y = b;
    return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

/* Sizes strictly between the last size of each segment and the first of the next,
 * spaced geometrically. Rank 0 decides; both ranks get the list. */
static int refinement_sizes(const ptm_loggp_sample *s, size_t n, int k, size_t *out, int rank)
{
    unsigned long long list[MAX_SIZES];
    int count = 0;
    if (rank == 0) {
        for (size_t i = 1; i < n && count + k < MAX_SIZES; i++) {
            if (s[i].segment == s[i - 1].segment || s[i].bytes - s[i - 1].bytes < 2)
                continue;
            double lo = (double)s[i - 1].bytes, ratio = (double)s[i].bytes / lo;
            for (int j = 1; j <= k; j++) {
                unsigned long long v = (unsigned long long)llround(lo * pow(ratio, (double)j / (k + 1)));
                if (v > s[i - 1].bytes && v < s[i].bytes && (count == 0 || v != list[count - 1]))
                    list[count++] = v;
            }
        }
    }
    MPI_Bcast(&count, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(list, count, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    for (int i = 0; i < count; i++)
        out[i] = (size_t)list[i];
    return count;
}

static void print_text(FILE *f, const pt_ctx *ctx, const loggp_config *cfg, const ptm_loggp_sample *s, size_t n,
                       const ptm_params *p)
{
    pt_text_preamble(f, ctx, &cfg->c, "LogGP (PRTT method)");
    fprintf(f, "# PRTT(n,d,s) with n = %d (%s), d = PRTT(1,0,s); %g-quantile of the repetitions, smallest of %d "
               "passes; times in us\n", cfg->count, cfg->transport == TRANSPORT_FABRIC ? "libfabric RMA writes with remote CQ data" :
               cfg->api == API_ISEND ? "MPI_Isend, receives posted ahead" : "MPI_Send/MPI_Recv", cfg->quantile, cfg->passes);
    fprintf(f, "%12s %11s %11s %11s %9s %9s %9s %9s %4s\n", "bytes", "PRTT(1,0)", "PRTT(n,0)", "PRTT(n,d)", "o_s",
            "o_r", "g+G(s-1)", "L", "seg");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%12zu %11.3f %11.3f %11.3f %9.3f %9.3f %9.3f %9.3f %4d\n", s[i].bytes, s[i].prtt1_us,
                s[i].prttn_us, s[i].prttd_us, s[i].o_s_us, s[i].o_r_us, s[i].gap_us, s[i].L_us, s[i].segment);
    fprintf(f, "# Segments (model parameters):\n");
    for (int j = 0; j < p->nseg; j++) {
        const ptm_segment *g = &p->seg[j];
        char range[64];
        if (j + 1 < p->nseg)
            snprintf(range, sizeof range, "<= %zu B", g->max_bytes);
        else
            snprintf(range, sizeof range, "> %zu B", j ? p->seg[j - 1].max_bytes : (size_t)0);
        fprintf(f, "#  %d  %-14s L=%.3f o_s=%.3f o_r=%.3f g=%.3f G=%.3g us/B (%.2f GB/s) handshake=%.3f\n", j, range,
                g->L, g->o_s, g->o_r, g->g, g->G, g->G > 0 ? 1e-3 / g->G : INFINITY, g->handshake_us);
    }
}

static const char *fabric_provider(void)
{
#if PARTITA_HAVE_FABRIC
    return loggp_fabric_provider();
#else
    return "";
#endif
}

/* The members the parameter file carries besides the model parameters. */
static char *extra_members(const pt_ctx *ctx, const loggp_config *cfg, const ptm_loggp_sample *s, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    char when[32];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    int fabric = cfg->transport == TRANSPORT_FABRIC;
    fprintf(f, "\"measurement\": {\"program\": \"partita-loggp\", \"created\": \"%s\", \"method\": \"PRTT\", "
               "\"n\": %d, \"transport\": \"%s\", \"api\": \"%s\", ",
            when, cfg->count, transports[cfg->transport], fabric ? "fi_writedata" : apis[cfg->api]);
    if (fabric)
        fprintf(f, "\"provider\": \"%s\", ", fabric_provider());
    fprintf(f, "\"passes\": %d, \"quantile\": %g, \"iterations\": %d, \"warmup\": %d, \"ranks_on_one_node\": %s,\n"
               "    \"mpi_library\": \"",
            cfg->passes, cfg->quantile, cfg->c.iterations, cfg->c.warmup, ctx->nodes == 1 ? "true" : "false");
    for (const char *c = ctx->library; *c; c++)
        if (*c != '"' && *c != '\\' && (unsigned char)*c >= 0x20)
            fputc(*c, f);
    fprintf(f, "\", \"o_pready_measured\": false},\n  \"sizes\": [\n");
    for (size_t i = 0; i < n; i++)
        fprintf(f,
                "    {\"bytes\": %zu, \"prtt1_us\": %.6g, \"prttn_us\": %.6g, \"prttd_us\": %.6g, \"delay_us\": %.6g, "
                "\"o_s_us\": %.6g, \"o_r_us\": %.6g, \"gap_us\": %.6g, \"L_us\": %.6g, \"segment\": %d}%s\n",
                s[i].bytes, s[i].prtt1_us, s[i].prttn_us, s[i].prttd_us, s[i].delay_us, s[i].o_s_us, s[i].o_r_us,
                s[i].gap_us, s[i].L_us, s[i].segment, i + 1 < n ? "," : "");
    fprintf(f, "  ]");
    fclose(f);
    return buf;
}

static int by_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* The powers of two from min to max, and the last size of each segment the
 * transport's known switches end (within [min, max]), ascending: a known
 * segment between two powers of two (shm's 16-64 KiB while messages split
 * from 64 KiB: only 32 KiB) would otherwise have one size and no bandwidth
 * term. */
static size_t sweep_sizes(size_t min, size_t max, const size_t *known, int nknown, size_t sizes[MAX_SIZES])
{
    size_t n = 0;
    for (size_t s = min; s <= max && n < MAX_SIZES; s *= 2) {
        sizes[n++] = s;
        if (s > max / 2)
            break;
    }
    for (int k = 0; k < nknown && n < MAX_SIZES; k++) {
        int have = known[k] < min || known[k] > max;
        for (size_t i = 0; i < n && !have; i++)
            have = sizes[i] == known[k];
        if (!have)
            sizes[n++] = known[k];
    }
    qsort(sizes, n, sizeof *sizes, by_size);
    return n;
}

int main(int argc, char **argv)
{
    pt_cli cli;
    loggp_config cfg;
    pt_ctx ctx = {.benchmark = "loggp"};
    configure(&cli, &cfg);
    pt_start(&ctx, &cli, &cfg.c, argc, argv, 0);
    if (ctx.size != 2)
        pt_fail(&ctx, "needs exactly 2 ranks (a client and a server), got %d", ctx.size);
    if (cfg.sizes.max > MAX_BYTES)
        pt_fail(&ctx, "--message-size: at most %zu bytes (got %zu)", MAX_BYTES, cfg.sizes.max);
    if (cfg.c.format == PT_FORMAT_CSV)
        pt_fail(&ctx, "--format csv is not supported: use text or json");
    /* Find out before a long measurement that the file cannot be written. */
    int writable = 1;
    if (ctx.rank == 0 && cfg.save) {
        int existed = access(cfg.save, F_OK) == 0;
        FILE *probe_file = fopen(cfg.save, "a");
        writable = probe_file != NULL;
        if (probe_file)
            fclose(probe_file);
        if (writable && !existed)
            remove(cfg.save); /* leave no empty file behind if the measurement fails */
    }
    MPI_Bcast(&writable, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!writable)
        pt_fail(&ctx, "%s: cannot write the parameter file", cfg.save);
    int fabric = cfg.transport == TRANSPORT_FABRIC;
    if (fabric && !PARTITA_HAVE_FABRIC)
        pt_fail(&ctx, "--transport fabric: this build has no fabric transport (libfabric was not found when it was "
                      "configured: install libfabric-dev and re-run make bootstrap)");
    /* The server's n buffers: checked on every rank (the options are the same), so that rank 0
     * says why and no output file is left behind. */
    size_t slot = (cfg.sizes.max + 63) / 64 * 64;
    if ((fabric || cfg.api == API_ISEND) && slot > MAX_SERVER_BUFFER / (size_t)cfg.count)
        pt_fail(&ctx, "--api isend and --transport fabric need %d receive buffers of %zu bytes (more than %zu): "
                "use a smaller --message-size maximum or --count, or --api send", cfg.count, slot, MAX_SERVER_BUFFER);
    pt_open_output(&ctx, &cfg.c);

    loggp_probe probe = {.rank = ctx.rank, .quantile = cfg.quantile};
    probe.ch = fabric ? NULL : cfg.api == API_ISEND ? &loggp_mpi_isend : &loggp_mpi_send;
    probe.slot = slot;
    size_t buf_bytes = probe.slot;
    /* receives posted ahead, or remote writes: the server keeps n buffers */
    if ((fabric || cfg.api == API_ISEND) && ctx.rank == 1)
        buf_bytes = probe.slot * (size_t)cfg.count;
    probe.buf = malloc(buf_bytes);
    probe.reqs = calloc((size_t)cfg.count, sizeof *probe.reqs);
    int reps_max = cfg.c.iterations > cfg.c.warmup ? cfg.c.iterations : cfg.c.warmup;
    probe.scratch = malloc(sizeof(double) * 2 * (size_t)(reps_max + 1));
    ptm_loggp_sample *samples = calloc(MAX_SIZES, sizeof *samples);
    /* agreed: a rank short of memory alone must not leave the other waiting (or end it with MPI_Abort) */
    char msg[512];
    snprintf(msg, sizeof msg, "out of memory for %zu bytes of buffers on rank %d", buf_bytes, ctx.rank);
    pt_check_all(&ctx, !probe.buf || !probe.scratch || !samples || !probe.reqs, msg);
    memset(probe.buf, 0x5a, buf_bytes);
#if PARTITA_HAVE_FABRIC
    if (fabric) {
        char why[512] = "";
        probe.ch = loggp_fabric_open(&probe, probe.slot, probe.slot * (size_t)cfg.count, ctx.nodes == 1, why, sizeof why);
        if (!probe.ch)
            pt_fail(&ctx, "--transport fabric: %s", why);
    }
#endif

    size_t known[LOGGP_FABRIC_SWITCHES_MAX];
    int nknown = 0;
#if PARTITA_HAVE_FABRIC
    if (fabric)
        nknown = loggp_fabric_switches(known);
#endif
    size_t sizes[MAX_SIZES];
    size_t n = sweep_sizes(cfg.sizes.min, cfg.sizes.max, known, nknown, sizes);
    measure_sizes(&probe, &cfg, sizes, n, samples);
    ptm_params params;
    char err[512];
    /* rank 0 derives; both ranks learn whether it could */
    int underived = ctx.rank == 0 &&
        ptm_loggp_derive_known(samples, n, cfg.count, cfg.max_segments, known, nknown, &params, err, sizeof err);
    if (underived)
        snprintf(msg, sizeof msg, "cannot derive LogGP parameters: %.400s", err);
    pt_check_all(&ctx, underived, msg);
    if (cfg.refine > 0) {
        size_t extra[MAX_SIZES];
        int k = refinement_sizes(samples, n, cfg.refine, extra, ctx.rank);
        if (k > MAX_SIZES - (int)n)
            k = MAX_SIZES - (int)n;
        measure_sizes(&probe, &cfg, extra, (size_t)k, samples + n);
        n += (size_t)k;
        if (k > 0 && ctx.rank == 0) {
            qsort(samples, n, sizeof *samples, by_bytes);
            underived = ptm_loggp_derive_known(samples, n, cfg.count, cfg.max_segments, known, nknown, &params, err,
                                               sizeof err);
            if (underived)
                snprintf(msg, sizeof msg, "cannot derive LogGP parameters: %.400s", err);
        }
        pt_check_all(&ctx, underived, msg);
    }

    int status = 0;
    if (ctx.rank == 0) {
        params.o_pready = 0.0; /* not measured by this tool (docs/model.md) */
        /* G of 0 in every segment (-m 1:8: the sizes are too small to show a cost per
         * byte) makes the model price all bytes as free: say so, it was saved without a
         * word. (A segment of small sizes fits G = 0 in an ordinary run.) */
        size_t lo = SIZE_MAX, hi = 0;
        int priced = 0;
        for (size_t k = 0; k < n; k++)
            lo = samples[k].bytes < lo ? samples[k].bytes : lo, hi = samples[k].bytes > hi ? samples[k].bytes : hi;
        for (int i = 0; i < params.nseg; i++)
            priced |= params.seg[i].G > 0;
        if (!priced)
            fprintf(stderr,
                    "partita-loggp: warning: G is 0 in every segment, no cost per byte was seen (sizes %zu to %zu "
                    "bytes): the model will take bytes as free; measure larger sizes too (-m)\n", lo, hi);
        char *extra = extra_members(&ctx, &cfg, samples, n);
        if (cfg.c.format == PT_FORMAT_JSON) {
            if (ptm_params_write(ctx.out, &params, extra, err, sizeof err)) {
                fprintf(stderr, "partita-loggp: error: %s\n", err);
                status = 2;
            }
        } else {
            print_text(ctx.out, &ctx, &cfg, samples, n, &params);
        }
        if (cfg.save && ptm_params_save(cfg.save, &params, extra, err, sizeof err)) {
            fprintf(stderr, "partita-loggp: error: %s\n", err);
            status = 2;
        }
        free(extra);
    }
#if PARTITA_HAVE_FABRIC
    if (fabric)
        loggp_fabric_close(&probe);
#endif
    free(probe.buf);
    free(probe.reqs);
    free(probe.scratch);
    free(samples);
    return pt_finish(&ctx, status);
}
