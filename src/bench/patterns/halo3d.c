/* partita-halo3d: the 7-point halo exchange of SST Ember's Halo3D motif on real
 * data (docs/patterns.md). Every rank owns nx x ny x nz cells (weak scaling, as
 * Ember) or a share of a global grid (strong), computes, then exchanges its six
 * faces with the face neighbours, dimension by dimension (Ember) or all at once,
 * and optionally joins one Allreduce per iteration. Modes: single (the main
 * thread calls MPI; threads compute and pack), multiple (each thread sends and
 * receives its part of every face), partitioned (one partitioned request per
 * face, each thread packs its partition and calls MPI_Pready), persistent. */
#include <stdlib.h>
#include <string.h>

#include "harness/bench.h"
#include "harness/cache.h"
#include "harness/sizecheck.h"
#include "partita/config.h"
#include "patterns/driver.h"
#include "patterns/exchange.h"
#include "patterns/ghost.h"
#include "patterns/grid.h"

static const char *const modes[] = {"single", "multiple", "partitioned", "persistent", NULL};
static const pat_strategy mode_strategy[] = {PAT_NONBLOCKING, PAT_MULTIPLE, PAT_PARTITIONED, PAT_PERSISTENT};
static const char *const orders[] = {"dims", "all", NULL};
static const char *const scalings[] = {"weak", "strong", NULL};

typedef struct halo_config {
    pt_common c;
    pat_triple cells, dims, periodic;
    int scaling, fields, order, reduce;
    double cell_ns;
    pat_choice_list modes;
} halo_config;

static void configure(pt_cli *cli, halo_config *h)
{
    static const char details[] =
        "Per iteration: every thread computes (--compute US plus --cell-ns per cell and field, divided over the\n"
        "threads), then the six faces are exchanged with the face neighbours (no wrap-around unless --periodic),\n"
        "x then y then z (--order dims, as Ember) or all at once, then one MPI_Allreduce (--reduce 1, as Ember).\n"
        "Each face is one message of face cells x fields doubles; threads split every face into equal parts.\n"
        "Before timing, one exchange is checked: every ghost cell must hold the value of the cell it mirrors and\n"
        "no other cell may change; -c checks every iteration. Bytes are counted at the MPI calls.\n"
        "Noise: single, uniform and gaussian scale that compute, so they need --compute or --cell-ns above 0;\n"
        "delay:US adds US to one thread's compute, with or without them (then that thread alone is late).";
    pt_common_defaults(&h->c);
    h->cells = (pat_triple){{32, 32, 32}};
    h->dims = (pat_triple){{0, 0, 0}};
    h->periodic = (pat_triple){{0, 0, 0}};
    h->scaling = 0;
    h->fields = 1;
    h->order = 0;
    h->reduce = 1;
    h->cell_ns = 0.0;
    h->modes = (pat_choice_list){.choices = modes, .n = 3, .v = {0, 1, 2}};
    *cli = (pt_cli){.program = "partita-halo3d",
                    .summary = "7-point halo exchange (SST Ember Halo3D): single, multiple, partitioned, persistent.",
                    .details = details};
    pt_add_custom(cli, "grid", 'g', &h->cells, "NX,NY,NZ", "cells per rank (weak) or in total (strong); N = N,N,N",
                  pat_parse_cells, "32,32,32");
    pt_add_choice(cli, "scaling", 0, &h->scaling, "KIND", "weak: --grid per rank; strong: --grid is the whole domain",
                  scalings);
    pt_add_custom(cli, "dims", 0, &h->dims, "PX,PY,PZ", "process grid, 0 = chosen by MPI_Dims_create", pat_parse_dims,
                  "0,0,0");
    pt_add_custom(cli, "periodic", 0, &h->periodic, "X,Y,Z", "wrap around per dimension (0/1)", pat_parse_flags3,
                  "0,0,0");
    pt_add_int(cli, "fields", 0, &h->fields, "F", "values per cell", 1, 1 << 16);
    pt_add_choice(cli, "order", 0, &h->order, "ORDER", "dims: x, y, z one after another; all: all faces at once",
                  orders);
    pt_add_int(cli, "reduce", 0, &h->reduce, "0|1", "one MPI_Allreduce per iteration", 0, 1);
    pt_add_double(cli, "cell-ns", 0, &h->cell_ns, "NS", "compute per cell and field, nanoseconds (split over threads)",
                  0, 1e9);
    pt_add_custom(cli, "mode", 'M', &h->modes, "M[,M...]", "single, multiple, partitioned, persistent",
                  pat_parse_choice_list, "single,multiple,partitioned");
    pt_common_options(cli, &h->c, PT_COMMON_ALL);
}

static int min_face_cells(const pat_grid *g)
{
    int best = 0;
    for (int a = 0; a < 3; a++) {
        int face = 1;
        for (int b = 0; b < 3; b++)
            if (b != a)
                face *= g->local[b];
        if (g->dims[a] > 1 || g->periodic[a])
            best = best == 0 || face < best ? face : best;
    }
    return best;
}

static void preamble(pat_report *rep, const halo_config *h, const pat_grid *g)
{
    const pt_ctx *ctx = rep->ctx;
    FILE *f = ctx->out;
    char dims[32];
    pat_grid_dims_text(g, dims, sizeof dims);
    if (h->c.format == PT_FORMAT_TEXT) {
        pt_text_preamble(f, ctx, &h->c, "Halo3D (7-point halo exchange)");
        fprintf(f, "# Process grid: %s, periodic %d,%d,%d\n", dims, g->periodic[0], g->periodic[1], g->periodic[2]);
        fprintf(f, "# Cells per rank: %dx%dx%d, global %dx%dx%d (%s scaling), %d field(s) of doubles\n", g->local[0],
                g->local[1], g->local[2], g->global[0], g->global[1], g->global[2], scalings[h->scaling], h->fields);
        fprintf(f, "# Exchange: faces %s, Allreduce %s; compute per cell and field: %g ns\n",
                h->order == 0 ? "dimension by dimension (x, y, z)" : "all at once", h->reduce ? "yes" : "no", h->cell_ns);
    } else if (h->c.format == PT_FORMAT_JSON) {
        pt_json *j = &rep->j;
        pt_json_init(j, f);
        pt_json_head(j, ctx, &h->c);
        pt_json_string(j, "scaling", scalings[h->scaling]);
        pt_json_string(j, "process_grid", dims);
        pt_json_array_begin(j, "periodic");
        for (int a = 0; a < 3; a++)
            pt_json_int(j, NULL, g->periodic[a]);
        pt_json_array_end(j);
        pt_json_array_begin(j, "cells_per_rank");
        for (int a = 0; a < 3; a++)
            pt_json_int(j, NULL, g->local[a]);
        pt_json_array_end(j);
        pt_json_array_begin(j, "cells_global");
        for (int a = 0; a < 3; a++)
            pt_json_int(j, NULL, g->global[a]);
        pt_json_array_end(j);
        pt_json_int(j, "fields", h->fields);
        pt_json_string(j, "order", orders[h->order]);
        pt_json_bool(j, "allreduce", h->reduce);
        pt_json_number(j, "cell_ns", h->cell_ns);
        pt_json_config_end(j);
    }
    pat_report_header(rep);
}

int main(int argc, char **argv)
{
    pt_cli cli;
    halo_config h;
    pt_ctx ctx = {.benchmark = "halo3d"};
    configure(&cli, &h);
    pt_start(&ctx, &cli, &h.c, argc, argv, 0);
    const pt_common *c = &h.c;
    pat_require_compute_for_noise(&ctx, c, h.cell_ns);
    pat_grid grid;
    char err[256] = "";
    if (pat_grid_setup(&grid, 3, ctx.size, ctx.rank, &h.dims, &h.cells, h.scaling == 1, &h.periodic, err, sizeof err))
        pt_fail(&ctx, "%s", err);
    pt_require_memory(&ctx, pat_field_footprint(grid.local, 1, h.fields) + pat_samples_footprint(&ctx, c),
                      "the cells and message buffers (--grid, --fields) and the samples (--iterations)");
    int face = min_face_cells(&grid);
    if (face > 0 && c->threads > face)
        pt_fail(&ctx, "more threads (%d) than cells in the smallest exchanged face (%d)", c->threads, face);
    for (int i = 0; i < h.modes.n; i++)
        if (mode_strategy[h.modes.v[i]] == PAT_PARTITIONED && !PARTITA_NATIVE_PARTITIONED)
            pt_fail(&ctx, "mode partitioned: this MPI library has no partitioned communication");
    pt_require_cold_cache(&ctx, c->cache == PT_CACHE_COLD);
    pt_require_omp_threads(&ctx, c->threads);
    pat_field field;
    int failed = pat_field_alloc(&field, grid.local, 1, h.fields) != 0;
    pt_check_all(&ctx, failed, "cannot allocate the cells");
    long long cells = (long long)grid.local[0] * grid.local[1] * grid.local[2] * h.fields;
    double compute_us = c->compute_us + h.cell_ns * (double)cells / c->threads / 1e3;
    pat_require_compute_time(&ctx, c, compute_us, 1, h.modes.n);
    pt_open_output(&ctx, c);
    pat_report rep = {.ctx = &ctx, .c = c, .phases = PAT_PHASES_EXCHANGE};
    if (ctx.rank == 0)
        preamble(&rep, &h, &grid);

    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    static const int dims_dirs[3][2] = {{0, 1}, {2, 3}, {4, 5}};
    static const int all_dirs[6] = {0, 1, 2, 3, 4, 5};
    int failures = 0;
    for (int i = 0; i < h.modes.n; i++) {
        pat_strategy s = mode_strategy[h.modes.v[i]];
        pat_exchange_spec specs[3];
        int nex = h.order == 0 ? 3 : 1;
        for (int e = 0; e < nex; e++)
            specs[e] = (pat_exchange_spec){.strategy = s, .threads = c->threads, .parts = 0, .per_partner = 0,
                                           .dirs = h.order == 0 ? dims_dirs[e] : all_dirs, .ndirs = h.order == 0 ? 2 : 6};
        pat_counter cnt = {0};
        pat_ghost_case gc;
        failed = pat_ghost_setup(&gc, c, &grid, &field, specs, nex, compute_us, h.reduce, comm, &cnt, err, sizeof err);
        pt_check_all(&ctx, failed, err);
        pat_case_ops ops = pat_ghost_ops(&gc);
        pat_result r = {.strategy = modes[h.modes.v[i]], .threads = c->threads,
                        .partitions = s == PAT_PARTITIONED ? c->threads : 0};
        pat_run_case(&ctx, c, &ops, &cnt, gc.payload, gc.padding, &r);
        failures += r.errors > 0;
        pat_report_case(&rep, &r);
        pat_result_free(&r);
        pat_ghost_free(&gc);
    }
    pat_report_end(&rep);
    MPI_Comm_free(&comm);
    pat_field_free(&field);
    pt_cache_teardown();
    if (failures && ctx.rank == 0)
        fprintf(stderr, "%s: error: the data check failed in %d mode(s)\n", ctx.program, failures);
    return pt_finish(&ctx, failures ? 1 : 0);
}
