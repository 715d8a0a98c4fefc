/* partita-sweep3d: the KBA wavefront of SST Ember's Sweep3D motif, moving real
 * data (docs/patterns.md). A 2-D process grid (x fastest) owns columns of
 * nx x ny x nz cells; z is cut into k-blocks of kba planes. One iteration runs 8
 * sweeps, the four xy-corners twice (the second pass can reverse k). In a sweep
 * every rank, for every k-block: receives the block's face from its upstream x
 * and y neighbours, computes, and sends its faces downstream.
 *   single       the main thread receives and sends one message per face and
 *                k-block; threads compute in a fork-join region in between
 *   multiple     each thread owns a part (strip) of every face and receives,
 *                computes and sends its part itself (MPI_THREAD_MULTIPLE)
 *   partitioned  one partitioned request per corner, direction and neighbour,
 *                with one partition per (k-block, thread); thread t computes its
 *                strip as soon as MPI_Parrived reports its upstream strips, then
 *                calls MPI_Pready: threads run ahead of each other (pipelining). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "harness/bench.h"
#include "harness/cache.h"
#include "harness/clock.h"
#include "harness/sizecheck.h"
#include "partita/config.h"
#include "patterns/counted.h"
#include "patterns/driver.h"
#include "patterns/grid.h"

enum { MODE_SINGLE, MODE_MULTIPLE, MODE_PARTITIONED };
static const char *const modes[] = {"single", "multiple", "partitioned", NULL};
static const char *const scalings[] = {"weak", "strong", NULL};
static const char *const sizings[] = {"ember", "physical", NULL};
#define MAX_THREAD_TAGS 1024 /* multiple: tag = face tag * 1024 + thread */

/* Corner c sweeps toward +x/-x (sx) and +y/-y (sy): Ember's order (0,0), (Px,0), (Px,Py), (0,Py). */
static const int sx[4] = {1, -1, -1, 1};
static const int sy[4] = {1, 1, -1, -1};

typedef struct sweep_config {
    pt_common c;
    pat_triple cells, dims;
    int scaling, kba, values, sizing, reverse_k;
    double cell_ns;
    pat_choice_list modes;
} sweep_config;

/* The faces of one corner in one axis: toward the downstream (send) or from the
 * upstream (recv) neighbour. Per k-block a slot of T parts of `count` elements. */
typedef struct face {
    int peer; /* -1: none */
    int tag;
    long n;     /* elements of one k-block's face */
    long count; /* ceil(n / T): one thread's part, one partition */
    double *buf;
    pat_req req;
} face;

typedef struct sweep {
    const pt_common *c;
    const sweep_config *cfg;
    const pat_grid *grid;
    int mode, T, nkb;
    face send[4][2], recv[4][2]; /* [corner][axis] */
    int dist[4];                 /* hops from the corner where the sweep starts */
    double compute_us;           /* per thread per k-block */
    pat_counter *cnt;
    MPI_Comm comm;
    MPI_Request *req; /* single: [2 nkb]; multiple: [thread][2 nkb] */
    int64_t *blocked; /* per thread: time waiting for upstream data in this iteration */
    long errors;
    long long payload, padding; /* per iteration, this rank */
} sweep;

static void configure(pt_cli *cli, sweep_config *s)
{
    static const char details[] =
        "One iteration = 8 sweeps (corners (0,0), (Px,0), (Px,Py), (0,Py), twice). Per sweep and k-block a rank\n"
        "receives from its upstream x and y neighbours, computes, and sends to its downstream neighbours. The x face\n"
        "message has nx*kba*values doubles with --sizing ember (as Ember) or ny*kba*values with physical (the\n"
        "face really shared with the x neighbour); the y face the other one. Compute per k-block and thread:\n"
        "--compute US plus --cell-ns per cell and value of the block, divided over the threads. Threads own equal\n"
        "parts of every face (partitioned: padded to ceil(n/threads) doubles, reported). Every received value is\n"
        "checked in the first iteration (and all with -c): it encodes iteration, sweep, k-block and the sender's\n"
        "distance from the start corner, so data read before it arrived is caught. Bytes are counted at the MPI calls.\n"
        "Noise: single, uniform and gaussian scale that compute, so they need --compute or --cell-ns above 0;\n"
        "delay:US adds US to one thread's compute of every k-block, with or without them (then that thread alone\n"
        "is late).";
    pt_common_defaults(&s->c);
    s->cells = (pat_triple){{32, 32, 32}};
    s->dims = (pat_triple){{0, 0, 0}};
    s->scaling = 0;
    s->kba = 4;
    s->values = 8;
    s->sizing = 0;
    s->reverse_k = 0;
    s->cell_ns = 0.0;
    s->modes = (pat_choice_list){.choices = modes, .n = 3, .v = {0, 1, 2}};
    *cli = (pt_cli){.program = "partita-sweep3d",
                    .summary = "KBA wavefront sweep (SST Ember Sweep3D): single, multiple, partitioned.",
                    .details = details};
    pt_add_custom(cli, "grid", 'g', &s->cells, "NX,NY,NZ",
                  "cells per rank (weak) or nx, ny in total (strong; z is not decomposed)", pat_parse_cells, "32,32,32");
    pt_add_choice(cli, "scaling", 0, &s->scaling, "KIND", "weak: --grid per rank; strong: nx, ny divided over the grid",
                  scalings);
    pt_add_custom(cli, "dims", 0, &s->dims, "PX,PY", "process grid, 0 = chosen by MPI_Dims_create", pat_parse_dims2,
                  "0,0");
    pt_add_int(cli, "kba", 'k', &s->kba, "K", "k-blocking factor: planes per k-block (must divide nz)", 1, 1 << 24);
    pt_add_int(cli, "values", 0, &s->values, "V", "values (doubles) per cell: angles x groups", 1, 1 << 16);
    pt_add_choice(cli, "sizing", 0, &s->sizing, "KIND", "x message sized by nx (ember) or by ny (physical)", sizings);
    pt_add_flag(cli, "reverse-k", 0, &s->reverse_k, "the second pass of 4 sweeps runs the k-blocks from the top");
    pt_add_double(cli, "cell-ns", 0, &s->cell_ns, "NS", "compute per cell and value of a k-block, nanoseconds", 0, 1e9);
    pt_add_custom(cli, "mode", 'M', &s->modes, "M[,M...]", "single, multiple, partitioned", pat_parse_choice_list,
                  "single,multiple,partitioned");
    pt_common_options(cli, &s->c, PT_COMMON_ALL);
}

static inline long part_lo(const face *f, int t) { long v = (long)t * f->count; return v < f->n ? v : f->n; }
static inline long part_hi(const face *f, int t) { long v = (long)(t + 1) * f->count; return v < f->n ? v : f->n; }
static inline double *slot(const sweep *s, const face *f, int kb) { return f->buf + (size_t)kb * (size_t)s->T * (size_t)f->count; }

/* The value of element e of a k-block face sent in (iteration, sweep) by a rank
 * `dist` hops from the start corner: exact in a double (< 2^40 + fraction). */
static double value_of(long iter, int sw, int kb, int dist, long e)
{
    long long base = (((long long)(iter * 8 + sw) % 4096) << 28) + ((long long)(kb % 4096) << 16) + (dist % 65536);
    return (double)base + (double)(e % 1024) / 1024.0;
}

/* Thread t's work on k-block kb of sweep sw: check its part of the incoming
 * faces (when validating), compute, write its part of the outgoing faces. */
static void block_work(sweep *s, int corner, int sw, int kb, int t, long iter, int validate)
{
    long wrong = 0;
    if (validate)
        for (int a = 0; a < 2; a++) {
            const face *in = &s->recv[corner][a];
            if (in->peer < 0)
                continue;
            const double *b = slot(s, in, kb);
            for (long e = part_lo(in, t); e < part_hi(in, t); e++)
                wrong += b[e] != value_of(iter, sw, kb, s->dist[corner] - 1, e);
        }
    pat_compute(s->c, s->compute_us, t, (iter * 8 + sw) * s->nkb + kb);
    for (int a = 0; a < 2; a++) {
        face *out = &s->send[corner][a];
        if (out->peer < 0)
            continue;
        double *b = slot(s, out, kb);
        for (long e = part_lo(out, t); e < part_hi(out, t); e++)
            b[e] = value_of(iter, sw, kb, s->dist[corner], e);
    }
    if (wrong) {
#pragma omp atomic
        s->errors += wrong;
    }
}

static int kb_at(const sweep *s, int pass, int i) { return pass == 1 && s->cfg->reverse_k ? s->nkb - 1 - i : i; }

static void corner_single(sweep *s, int corner, int pass, int sw, long iter, int validate)
{
    for (int i = 0; i < s->nkb; i++) {
        int kb = kb_at(s, pass, i);
        int64_t t0 = pt_now_ns();
        for (int a = 0; a < 2; a++) {
            face *in = &s->recv[corner][a];
            if (in->peer >= 0)
                MPI_Recv(slot(s, in, kb), (int)in->n, MPI_DOUBLE, in->peer, in->tag, s->comm, MPI_STATUS_IGNORE);
        }
        s->blocked[0] += pt_now_ns() - t0;
#pragma omp parallel num_threads(s->T)
        block_work(s, corner, sw, kb, omp_get_thread_num(), iter, validate);
        for (int a = 0; a < 2; a++) {
            face *out = &s->send[corner][a];
            s->req[2 * i + a] = MPI_REQUEST_NULL;
            if (out->peer >= 0)
                pat_isend(s->cnt, slot(s, out, kb), out->n, MPI_DOUBLE, out->peer, out->tag, s->comm, &s->req[2 * i + a]);
        }
    }
    MPI_Waitall(2 * s->nkb, s->req, MPI_STATUSES_IGNORE);
}

static void corner_multiple(sweep *s, int corner, int pass, int sw, long iter, int validate)
{
#pragma omp parallel num_threads(s->T)
    {
        int t = omp_get_thread_num();
        MPI_Request *rq = s->req + (size_t)t * 2 * (size_t)s->nkb;
        for (int i = 0; i < s->nkb; i++) {
            int kb = kb_at(s, pass, i);
            int64_t t0 = pt_now_ns();
            for (int a = 0; a < 2; a++) {
                face *in = &s->recv[corner][a];
                if (in->peer >= 0)
                    MPI_Recv(slot(s, in, kb) + part_lo(in, t), (int)(part_hi(in, t) - part_lo(in, t)), MPI_DOUBLE,
                             in->peer, in->tag * MAX_THREAD_TAGS + t, s->comm, MPI_STATUS_IGNORE);
            }
            s->blocked[t] += pt_now_ns() - t0;
            block_work(s, corner, sw, kb, t, iter, validate);
            for (int a = 0; a < 2; a++) {
                face *out = &s->send[corner][a];
                rq[2 * i + a] = MPI_REQUEST_NULL;
                if (out->peer >= 0)
                    pat_isend(s->cnt, slot(s, out, kb) + part_lo(out, t), part_hi(out, t) - part_lo(out, t), MPI_DOUBLE,
                              out->peer, out->tag * MAX_THREAD_TAGS + t, s->comm, &rq[2 * i + a]);
            }
        }
        MPI_Waitall(2 * s->nkb, rq, MPI_STATUSES_IGNORE);
    }
}

static void corner_partitioned(sweep *s, int corner, int pass, int sw, long iter, int validate)
{
    MPI_Request scratch[1];
    for (int a = 0; a < 2; a++) {
        if (s->recv[corner][a].peer >= 0)
            pat_startall(s->cnt, 1, &s->recv[corner][a].req, scratch);
        if (s->send[corner][a].peer >= 0)
            pat_startall(s->cnt, 1, &s->send[corner][a].req, scratch);
    }
#pragma omp parallel num_threads(s->T)
    {
        int t = omp_get_thread_num();
        for (int i = 0; i < s->nkb; i++) {
            int kb = kb_at(s, pass, i);
            int j = kb * s->T + t;
            int64_t t0 = pt_now_ns();
            for (int a = 0; a < 2; a++)
                if (s->recv[corner][a].peer >= 0)
                    pat_wait_arrived(&s->recv[corner][a].req, j);
            s->blocked[t] += pt_now_ns() - t0;
            block_work(s, corner, sw, kb, t, iter, validate);
            for (int a = 0; a < 2; a++)
                if (s->send[corner][a].peer >= 0)
                    pat_pready(s->cnt, j, &s->send[corner][a].req);
        }
    }
    for (int a = 0; a < 2; a++) {
        if (s->recv[corner][a].peer >= 0)
            pat_waitall(1, &s->recv[corner][a].req, scratch);
        if (s->send[corner][a].peer >= 0)
            pat_waitall(1, &s->send[corner][a].req, scratch);
    }
}

static void prepare(void *self, long iter, int validate)
{
    (void)self, (void)iter, (void)validate;
}

static void run(void *self, long iter, int validate, pat_stamps *st)
{
    sweep *s = self;
    memset(s->blocked, 0, (size_t)s->T * sizeof *s->blocked);
    for (int pass = 0; pass < 2; pass++)
        for (int corner = 0; corner < 4; corner++) {
            int sw = pass * 4 + corner;
            if (s->mode == MODE_SINGLE)
                corner_single(s, corner, pass, sw, iter, validate);
            else if (s->mode == MODE_MULTIPLE)
                corner_multiple(s, corner, pass, sw, iter, validate);
            else
                corner_partitioned(s, corner, pass, sw, iter, validate);
        }
    st->has_blocked = 1;
    for (int t = 0; t < s->T; t++)
        st->blocked_ns = s->blocked[t] > st->blocked_ns ? s->blocked[t] : st->blocked_ns;
}

static long check(void *self, long iter)
{
    (void)iter;
    sweep *s = self;
    long e = s->errors;
    s->errors = 0;
    return e;
}

static void evict(void *self)
{
    sweep *s = self;
    for (int c = 0; c < 4; c++)
        for (int a = 0; a < 2; a++) {
            face *f[2] = {&s->send[c][a], &s->recv[c][a]};
            for (int k = 0; k < 2; k++)
                if (f[k]->buf)
                    pt_cache_evict(f[k]->buf, (size_t)s->nkb * (size_t)s->T * (size_t)f[k]->count * sizeof(double));
        }
}

/* Compute of one thread on one k-block: --compute plus --cell-ns per cell and value of
 * the block, divided over the threads (main checks the run's total before it starts). */
static double block_compute_us(const sweep_config *cfg, const pat_grid *g, int threads)
{
    double block = (double)g->local[0] * g->local[1] * cfg->kba * cfg->values;
    return cfg->c.compute_us + cfg->cell_ns * block / threads / 1e3;
}

/* Elements of one k-block's face in axis a (0: x, 1: y); a double, so that main can check
 * the product of the options before it becomes a count. */
static double face_elems(const sweep_config *cfg, const pat_grid *g, int a)
{
    int nx = g->local[0], ny = g->local[1];
    int cells = (cfg->sizing == 0) == (a == 0) ? nx : ny;
    return (double)cells * cfg->kba * cfg->values;
}

/* The neighbour a corner's face in axis a goes to (send) or comes from (recv); -1: none. */
static int face_peer(const pat_grid *g, int corner, int a, int send)
{
    int down[3] = {a == 0 ? sx[corner] : 0, a == 1 ? sy[corner] : 0, 0};
    int up[3] = {-down[0], -down[1], 0};
    return pat_grid_neighbour(g, send ? down : up);
}

/* Bytes of the face buffers setup_sweep allocates on this rank. */
static double buffer_bytes(const sweep_config *cfg, const pat_grid *g, int T)
{
    double total = 0.0, nkb = (double)(g->local[2] / cfg->kba);
    for (int corner = 0; corner < 4; corner++)
        for (int a = 0; a < 2; a++)
            for (int send = 0; send < 2; send++)
                if (face_peer(g, corner, a, send) >= 0)
                    total += nkb * T * ceil(face_elems(cfg, g, a) / T) * sizeof(double);
    return total;
}

/* Returns 0, or -1 when a buffer cannot be allocated. */
static int setup_sweep(sweep *s, const sweep_config *cfg, const pat_grid *g, int mode, pat_counter *cnt, MPI_Comm comm)
{
    const pt_common *c = &cfg->c;
    memset(s, 0, sizeof *s);
    s->c = c;
    s->cfg = cfg;
    s->grid = g;
    s->mode = mode;
    s->T = c->threads;
    s->nkb = g->local[2] / cfg->kba;
    s->cnt = cnt;
    s->comm = comm;
    s->compute_us = block_compute_us(cfg, g, s->T);
    pat_init_op ops[16];
    int failed = 0;
    int nops = 0;
    for (int corner = 0; corner < 4; corner++) {
        s->dist[corner] = (sx[corner] > 0 ? g->coords[0] : g->dims[0] - 1 - g->coords[0]) +
                          (sy[corner] > 0 ? g->coords[1] : g->dims[1] - 1 - g->coords[1]);
        for (int a = 0; a < 2; a++) {
            face *f[2] = {&s->send[corner][a], &s->recv[corner][a]};
            f[0]->peer = face_peer(g, corner, a, 1);
            f[1]->peer = face_peer(g, corner, a, 0);
            for (int k = 0; k < 2; k++) {
                f[k]->tag = corner * 2 + a;
                f[k]->n = (long)face_elems(cfg, g, a); /* main checked it fits an int */
                f[k]->count = (f[k]->n + s->T - 1) / s->T;
                f[k]->req.req = MPI_REQUEST_NULL;
                if (f[k]->peer < 0)
                    continue;
                f[k]->buf = calloc((size_t)s->nkb * (size_t)s->T * (size_t)f[k]->count, sizeof(double));
                failed |= f[k]->buf == NULL;
                ops[nops++] = (pat_init_op){f[k]->peer, f[k]->tag, k == 0, (corner * 2 + a) * 2 + k};
            }
            if (f[0]->peer >= 0) {
                s->payload += 8LL * s->nkb * f[0]->n * 2; /* both passes */
                if (mode == MODE_PARTITIONED)
                    s->padding += 8LL * s->nkb * (f[0]->count * s->T - f[0]->n) * 2;
            }
        }
    }
    size_t nreq = (size_t)2 * (size_t)s->nkb * (mode == MODE_MULTIPLE ? (size_t)s->T : 1);
    s->req = calloc(nreq, sizeof *s->req);
    s->blocked = calloc((size_t)s->T, sizeof *s->blocked);
    if (failed || !s->req || !s->blocked)
        return -1;
    if (mode != MODE_PARTITIONED)
        return 0;
    pat_sort_inits(ops, nops, g->rank);
    for (int k = 0; k < nops; k++) {
        int idx = ops[k].index, is_send = idx % 2 == 0, corner = idx / 4, a = (idx / 2) % 2;
        face *f = is_send ? &s->send[corner][a] : &s->recv[corner][a];
        int parts = s->nkb * s->T;
        if (is_send)
            pat_psend_init(&f->req, f->buf, parts, f->count, MPI_DOUBLE, f->peer, f->tag, comm);
        else
            pat_precv_init(&f->req, f->buf, parts, f->count, MPI_DOUBLE, f->peer, f->tag, comm);
    }
    return 0;
}

static void free_sweep(sweep *s)
{
    for (int c = 0; c < 4; c++)
        for (int a = 0; a < 2; a++) {
            face *f[2] = {&s->send[c][a], &s->recv[c][a]};
            for (int k = 0; k < 2; k++) {
                pat_req_free(&f[k]->req);
                free(f[k]->buf);
            }
        }
    free(s->req);
    free(s->blocked);
}

static void preamble(pat_report *rep, const sweep_config *s, const pat_grid *g, int nkb)
{
    const pt_ctx *ctx = rep->ctx;
    FILE *f = ctx->out;
    char dims[32];
    pat_grid_dims_text(g, dims, sizeof dims);
    if (s->c.format == PT_FORMAT_TEXT) {
        pt_text_preamble(f, ctx, &s->c, "Sweep3D (KBA wavefront)");
        fprintf(f, "# Process grid: %s (x fastest), z not decomposed\n", dims);
        fprintf(f, "# Cells per rank: %dx%dx%d (%s scaling), %d values per cell, kba %d -> %d k-blocks per sweep\n",
                g->local[0], g->local[1], g->local[2], scalings[s->scaling], s->values, s->kba, nkb);
        fprintf(f, "# Sweeps per iteration: 8 (4 corners twice%s), message sizing %s\n",
                s->reverse_k ? ", k reversed in the second pass" : "", sizings[s->sizing]);
        fprintf(f, "# Compute per k-block and thread: %g us + %g ns per cell and value (split over threads)\n",
                s->c.compute_us, s->cell_ns);
    } else if (s->c.format == PT_FORMAT_JSON) {
        pt_json *j = &rep->j;
        pt_json_init(j, f);
        pt_json_head(j, ctx, &s->c);
        pt_json_string(j, "scaling", scalings[s->scaling]);
        pt_json_string(j, "process_grid", dims);
        pt_json_array_begin(j, "cells_per_rank");
        for (int a = 0; a < 3; a++)
            pt_json_int(j, NULL, g->local[a]);
        pt_json_array_end(j);
        pt_json_int(j, "kba", s->kba);
        pt_json_int(j, "kblocks", nkb);
        pt_json_int(j, "values", s->values);
        pt_json_string(j, "sizing", sizings[s->sizing]);
        pt_json_bool(j, "reverse_k", s->reverse_k);
        pt_json_number(j, "cell_ns", s->cell_ns);
        pt_json_string(j, "compute_unit", "per k-block and thread");
        pt_json_config_end(j);
    }
    pat_report_header(rep);
}

int main(int argc, char **argv)
{
    pt_cli cli;
    sweep_config s;
    pt_ctx ctx = {.benchmark = "sweep3d"};
    configure(&cli, &s);
    pt_start(&ctx, &cli, &s.c, argc, argv, 0);
    const pt_common *c = &s.c;
    pat_require_compute_for_noise(&ctx, c, s.cell_ns);
    pat_grid grid;
    char err[256] = "";
    if (pat_grid_setup(&grid, 2, ctx.size, ctx.rank, &s.dims, &s.cells, s.scaling == 1, NULL, err, sizeof err))
        pt_fail(&ctx, "%s", err);
    if (grid.local[2] % s.kba != 0)
        pt_fail(&ctx, "--kba %d does not divide nz = %d", s.kba, grid.local[2]);
    long smallest = (long)(grid.local[0] < grid.local[1] ? grid.local[0] : grid.local[1]) * s.kba;
    if (c->threads > smallest)
        pt_fail(&ctx, "more threads (%d) than cells in a k-block face (%ld)", c->threads, smallest);
    /* single mode sends a whole k-block face in one call; the other modes one thread's part */
    int whole_face = 0;
    for (int i = 0; i < s.modes.n; i++)
        whole_face |= s.modes.v[i] == MODE_SINGLE;
    for (int a = 0; a < 2; a++) {
        double n = face_elems(&s, &grid, a);
        pt_require_int_count(&ctx, whole_face ? n : ceil(n / c->threads),
                             a == 0 ? "the x face of a k-block (--grid, --kba, --values)"
                                    : "the y face of a k-block (--grid, --kba, --values)");
    }
    pt_require_int_count(&ctx, (double)(grid.local[2] / s.kba) * c->threads, "the partitions of a request (k-blocks x threads)");
    pt_require_memory(&ctx, buffer_bytes(&s, &grid, c->threads) + pat_samples_footprint(&ctx, c),
                      "the face buffers (--grid, --kba, --values, --threads) and the samples (--iterations)");
    for (int i = 0; i < s.modes.n; i++)
        if (s.modes.v[i] == MODE_PARTITIONED && !PARTITA_NATIVE_PARTITIONED)
            pt_fail(&ctx, "mode partitioned: this MPI library has no partitioned communication");
    pt_require_cold_cache(&ctx, c->cache == PT_CACHE_COLD);
    pt_require_omp_threads(&ctx, c->threads);
    int nkb = grid.local[2] / s.kba;
    pat_require_compute_time(&ctx, c, block_compute_us(&s, &grid, c->threads), 8.0 * nkb, s.modes.n);
    pt_open_output(&ctx, c);
    pat_report rep = {.ctx = &ctx, .c = c, .phases = PAT_PHASES_SWEEP};
    if (ctx.rank == 0)
        preamble(&rep, &s, &grid, nkb);

    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int failures = 0;
    for (int i = 0; i < s.modes.n; i++) {
        int mode = s.modes.v[i];
        pat_counter cnt = {0};
        sweep sw;
        int failed = setup_sweep(&sw, &s, &grid, mode, &cnt, comm) != 0;
        pt_check_all(&ctx, failed, "cannot allocate the face buffers");
        pat_case_ops ops = {.self = &sw, .prepare = prepare, .run = run, .check = check, .evict = evict};
        pat_result r = {.strategy = modes[mode], .threads = c->threads,
                        .partitions = mode == MODE_PARTITIONED ? nkb * c->threads : 0};
        pat_run_case(&ctx, c, &ops, &cnt, sw.payload, sw.padding, &r);
        failures += r.errors > 0;
        pat_report_case(&rep, &r);
        pat_result_free(&r);
        free_sweep(&sw);
    }
    pat_report_end(&rep);
    MPI_Comm_free(&comm);
    pt_cache_teardown();
    if (failures && ctx.rank == 0)
        fprintf(stderr, "%s: error: the data check failed in %d mode(s)\n", ctx.program, failures);
    return pt_finish(&ctx, failures ? 1 : 0);
}
