/* partita-stencil: a Comb-like 27-point ghost exchange (docs/patterns.md). The
 * neighbours come from box intersection (6 faces, 12 edges, 8 corners, with
 * periodic wrap-around), every partner rank gets one packed message with all its
 * boxes and variables, and the strategies are nonblocking (Isend/Irecv/Waitall),
 * persistent (Send_init/Recv_init/Startall), partitioned (Psend_init/Precv_init,
 * each thread packs its partition of every message and calls MPI_Pready; with
 * --early-unpack receivers unpack partitions as MPI_Parrived reports them) and
 * multiple (each thread sends its part of every message itself). */
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

static const char *const strategies[] = {"nonblocking", "persistent", "partitioned", "multiple", NULL};
static const pat_strategy strategy_of[] = {PAT_NONBLOCKING, PAT_PERSISTENT, PAT_PARTITIONED, PAT_MULTIPLE};
static const char *const scalings[] = {"strong", "weak", NULL};

typedef struct stencil_config {
    pt_common c;
    pat_triple cells, dims, periodic;
    int scaling, ghost, vars, partitions, early_unpack;
    double cell_ns;
    pat_choice_list strategies;
} stencil_config;

static void configure(pt_cli *cli, stencil_config *s)
{
    static const char details[] =
        "Per iteration: every thread computes (--compute US plus --cell-ns per owned cell and variable, divided\n"
        "over the threads) and packs its share of every message; the ghost cells of all 26 neighbour directions\n"
        "are exchanged, one message per partner rank (its boxes x variables, packed back to back), then unpacked.\n"
        "Partitioned: P partitions per message (--partitions, default = threads) of ceil(n/P) doubles; the\n"
        "padding P*ceil(n/P) - n is sent and reported. Before timing a sentinel check runs: every ghost cell must\n"
        "hold the value of the cell it mirrors and every other cell must be unchanged; -c checks every iteration.\n"
        "Phases (critical path, maximum over ranks): compute, pack+post, wait, unpack. Bytes are counted at the\n"
        "MPI calls.\n"
        "Noise: single, uniform and gaussian scale that compute, so they need --compute or --cell-ns above 0;\n"
        "delay:US adds US to one thread's compute, with or without them (then that thread alone is late).";
    pt_common_defaults(&s->c);
    s->cells = (pat_triple){{64, 64, 64}};
    s->dims = (pat_triple){{0, 0, 0}};
    s->periodic = (pat_triple){{1, 1, 1}};
    s->scaling = 0;
    s->ghost = 1;
    s->vars = 3;
    s->partitions = 0;
    s->early_unpack = 0;
    s->cell_ns = 0.0;
    s->strategies = (pat_choice_list){.choices = strategies, .n = 3, .v = {0, 1, 2}};
    *cli = (pt_cli){.program = "partita-stencil",
                    .summary = "27-point ghost exchange (Comb-like): nonblocking, persistent, partitioned, multiple.",
                    .details = details};
    pt_add_custom(cli, "grid", 'g', &s->cells, "NX,NY,NZ", "cells in total (strong) or per rank (weak); N = N,N,N",
                  pat_parse_cells, "64,64,64");
    pt_add_choice(cli, "scaling", 0, &s->scaling, "KIND", "strong: --grid is the whole domain; weak: per rank",
                  scalings);
    pt_add_custom(cli, "dims", 0, &s->dims, "PX,PY,PZ", "process grid, 0 = chosen by MPI_Dims_create", pat_parse_dims,
                  "0,0,0");
    pt_add_custom(cli, "periodic", 0, &s->periodic, "X,Y,Z", "wrap around per dimension (0/1)", pat_parse_flags3,
                  "1,1,1");
    pt_add_int(cli, "ghost", 0, &s->ghost, "G", "ghost width (cells)", 1, 1 << 16);
    pt_add_int(cli, "vars", 0, &s->vars, "V", "variables (separate arrays of doubles)", 1, 1 << 16);
    pt_add_custom(cli, "strategy", 'S', &s->strategies, "S[,S...]", "nonblocking, persistent, partitioned, multiple",
                  pat_parse_choice_list, "nonblocking,persistent,partitioned");
    pt_add_int(cli, "partitions", 'p', &s->partitions, "P", "partitions per message (0 = threads)", 0, 1 << 20);
    pt_add_flag(cli, "early-unpack", 0, &s->early_unpack, "partitioned: unpack each partition when MPI_Parrived reports it");
    pt_add_double(cli, "cell-ns", 0, &s->cell_ns, "NS", "compute per cell and variable, nanoseconds (split over threads)",
                  0, 1e9);
    pt_common_options(cli, &s->c, PT_COMMON_ALL);
}

static void preamble(pat_report *rep, const stencil_config *s, const pat_grid *g, int partitions)
{
    const pt_ctx *ctx = rep->ctx;
    FILE *f = ctx->out;
    char dims[32];
    pat_grid_dims_text(g, dims, sizeof dims);
    if (s->c.format == PT_FORMAT_TEXT) {
        pt_text_preamble(f, ctx, &s->c, "Stencil (27-point ghost exchange)");
        fprintf(f, "# Process grid: %s, periodic %d,%d,%d\n", dims, g->periodic[0], g->periodic[1], g->periodic[2]);
        fprintf(f, "# Cells: global %dx%dx%d, per rank %dx%dx%d (%s scaling), ghost width %d, %d variable(s)\n",
                g->global[0], g->global[1], g->global[2], g->local[0], g->local[1], g->local[2], scalings[s->scaling],
                s->ghost, s->vars);
        fprintf(f, "# Partitioned: %d partition(s) per message, %s; compute per cell and variable: %g ns\n", partitions,
                s->early_unpack ? "early unpack (MPI_Parrived)" : "unpack after MPI_Waitall", s->cell_ns);
    } else if (s->c.format == PT_FORMAT_JSON) {
        pt_json *j = &rep->j;
        pt_json_init(j, f);
        pt_json_head(j, ctx, &s->c);
        pt_json_string(j, "scaling", scalings[s->scaling]);
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
        pt_json_int(j, "ghost", s->ghost);
        pt_json_int(j, "vars", s->vars);
        pt_json_int(j, "partitions", partitions);
        pt_json_bool(j, "early_unpack", s->early_unpack);
        pt_json_number(j, "cell_ns", s->cell_ns);
        pt_json_config_end(j);
    }
    pat_report_header(rep);
}

int main(int argc, char **argv)
{
    pt_cli cli;
    stencil_config s;
    pt_ctx ctx = {.benchmark = "stencil"};
    configure(&cli, &s);
    pt_start(&ctx, &cli, &s.c, argc, argv, 0);
    const pt_common *c = &s.c;
    pat_require_compute_for_noise(&ctx, c, s.cell_ns);
    pat_grid grid;
    char err[256] = "";
    if (pat_grid_setup(&grid, 3, ctx.size, ctx.rank, &s.dims, &s.cells, s.scaling == 0, &s.periodic, err, sizeof err))
        pt_fail(&ctx, "%s", err);
    pt_require_memory(&ctx, pat_field_footprint(grid.local, s.ghost, s.vars) + pat_samples_footprint(&ctx, c),
                      "the cells and message buffers (--grid, --ghost, --vars) and the samples (--iterations)");
    long long owned = (long long)grid.local[0] * grid.local[1] * grid.local[2];
    if (c->threads > owned)
        pt_fail(&ctx, "more threads (%d) than cells per rank (%lld)", c->threads, owned);
    for (int a = 0; a < 3; a++)
        if (s.ghost > grid.local[a])
            pt_fail(&ctx, "ghost width %d is larger than the %d cell%s per rank in %c", s.ghost, grid.local[a],
                    grid.local[a] == 1 ? "" : "s", "xyz"[a]);
    int partitions = s.partitions > 0 ? s.partitions : c->threads;
    int any_partitioned = 0;
    for (int i = 0; i < s.strategies.n; i++)
        if (strategy_of[s.strategies.v[i]] == PAT_PARTITIONED) {
            any_partitioned = 1;
            if (!PARTITA_NATIVE_PARTITIONED)
                pt_fail(&ctx, "strategy partitioned: this MPI library has no partitioned communication");
        }
    /* options of the partitioned strategy alone: without it they would be ignored without a word */
    if (!any_partitioned && s.partitions > 0)
        pt_fail(&ctx, "--partitions applies to the partitioned strategy only, which --strategy does not list");
    if (!any_partitioned && s.early_unpack)
        pt_fail(&ctx, "--early-unpack applies to the partitioned strategy only, which --strategy does not list");
    pt_require_cold_cache(&ctx, c->cache == PT_CACHE_COLD);
    pt_require_omp_threads(&ctx, c->threads);
    pat_field field;
    int failed = pat_field_alloc(&field, grid.local, s.ghost, s.vars) != 0;
    pt_check_all(&ctx, failed, "cannot allocate the cells");
    double compute_us = c->compute_us + s.cell_ns * (double)(owned * s.vars) / c->threads / 1e3;
    pat_require_compute_time(&ctx, c, compute_us, 1, s.strategies.n);
    pt_open_output(&ctx, c);
    pat_report rep = {.ctx = &ctx, .c = c, .phases = PAT_PHASES_EXCHANGE};
    if (ctx.rank == 0)
        preamble(&rep, &s, &grid, partitions);

    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int dirs[PAT_NDIRS];
    for (int d = 0; d < PAT_NDIRS; d++)
        dirs[d] = d;
    int failures = 0;
    for (int i = 0; i < s.strategies.n; i++) {
        pat_strategy st = strategy_of[s.strategies.v[i]];
        pat_exchange_spec spec = {.strategy = st, .threads = c->threads, .parts = partitions,
                                  .early_unpack = s.early_unpack, .per_partner = 1, .dirs = dirs, .ndirs = PAT_NDIRS};
        pat_counter cnt = {0};
        pat_ghost_case gc;
        failed = pat_ghost_setup(&gc, c, &grid, &field, &spec, 1, compute_us, 0, comm, &cnt, err, sizeof err);
        pt_check_all(&ctx, failed, err);
        pat_case_ops ops = pat_ghost_ops(&gc);
        const char *name = strategies[s.strategies.v[i]];
        if (st == PAT_PARTITIONED && s.early_unpack)
            name = "partitioned-eu";
        pat_result r = {.strategy = name, .threads = c->threads, .partitions = st == PAT_PARTITIONED ? partitions : 0};
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
        fprintf(stderr, "%s: error: the data check failed in %d strategy(ies)\n", ctx.program, failures);
    return pt_finish(&ctx, failures ? 1 : 0);
}
