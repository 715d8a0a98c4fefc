#include "bench.h"
#include "cache.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <omp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "partita/config.h"

static const char *const compute_modes[] = {"spin", "sleep", NULL};
static const char *const cache_modes[] = {"hot", "cold", NULL};
static const char *const formats[] = {"text", "json", "csv", NULL};

void pt_common_defaults(pt_common *c)
{
    memset(c, 0, sizeof *c);
    c->iterations = 100;
    c->warmup = 10;
    c->threads = 1;
    c->compute_us = 0.0;
    c->noise.kind = PT_NOISE_NONE;
    c->noise.pct = 10.0;
    c->noise.thread = 0;
    c->noise_thread_opt = 0;
    c->compute_mode = PT_COMPUTE_SPIN;
    c->cache = PT_CACHE_HOT;
    c->seed = 1;
    c->format = PT_FORMAT_TEXT;
}

static int parse_noise(const char *arg, void *dest, char *err, size_t errlen)
{
    return pt_noise_parse(arg, (pt_noise *)dest, err, errlen);
}

static int parse_noise_thread(const char *arg, void *dest, char *err, size_t errlen)
{
    if (strcmp(arg, "random") == 0) {
        *(int *)dest = -1;
        return 0;
    }
    if (pt_parse_int(arg, 0, 1 << 20, (int *)dest, err, errlen) == 0)
        return 0;
    snprintf(err, errlen, "'%s' is neither a thread number nor 'random'", arg);
    return -1;
}

static int parse_seed(const char *arg, void *dest, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long long v = strtoll(arg, &end, 10);
    if (end == arg || *end != '\0' || errno || v < 0) {
        snprintf(err, errlen, "'%s' is not a non-negative whole number", arg);
        return -1;
    }
    *(long long *)dest = v;
    return 0;
}

void pt_common_options(pt_cli *cli, pt_common *c, int which)
{
    if (which & PT_COMMON_ITER) {
        pt_add_int(cli, "iterations", 'i', &c->iterations, "N", "timed iterations per case", 1, 1e8);
        pt_add_int(cli, "warmup", 'x', &c->warmup, "N", "untimed warm-up iterations per case", 0, 1e8);
    }
    if (which & PT_COMMON_VALIDATE)
        pt_add_flag(cli, "validate", 'c', &c->validate, "check the received data in every iteration");
    if (which & PT_COMMON_THREADS)
        pt_add_int(cli, "threads", 't', &c->threads, "T", "threads per rank (T > 1 needs MPI_THREAD_MULTIPLE)", 1, 1024);
    if (which & PT_COMMON_COMPUTE) {
        pt_add_double(cli, "compute", 0, &c->compute_us, "US", "compute time per thread per iteration, microseconds", 0, 1e8);
        pt_add_custom(cli, "noise", 0, &c->noise, "MODEL",
                      "noise model: none, single[:PCT], uniform[:PCT], gaussian[:PCT] (PCT above 0, default 10) or "
                      "delay:US (US above 0: one thread US longer)",
                      parse_noise, "none");
        pt_add_custom(cli, "noise-thread", 0, &c->noise_thread_opt, "N|random",
                      "the thread single/delay noise slows down: a fixed one, or a random one per iteration",
                      parse_noise_thread, "0");
        pt_add_choice(cli, "compute-mode", 0, &c->compute_mode, "MODE",
                      "compute emulation: spin (busy loop) or sleep (clock_nanosleep: more threads than cores)", compute_modes);
        c->seed_option = pt_add_custom(cli, "seed", 0, &c->seed, "N",
                                       "random seed of uniform and gaussian noise and of --noise-thread random "
                                       "(refused with other noise)", parse_seed, "1");
    }
    if (which & PT_COMMON_CACHE)
        pt_add_choice(cli, "cache", 0, &c->cache, "STATE", "cache state at the start of every iteration", cache_modes);
    if (which & PT_COMMON_OUTPUT) {
        pt_add_choice(cli, "format", 'f', &c->format, "FMT", "output format", formats);
        pt_add_string(cli, "output", 'o', &c->output, "FILE", "write results to FILE instead of standard output");
    }
}

const char *pt_thread_level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    }
    return "unknown";
}

const char *pt_compute_mode_name(int mode) { return compute_modes[mode == PT_COMPUTE_SLEEP]; }

static void vreport(const pt_ctx *ctx, int with_rank, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (with_rank)
        fprintf(stderr, "%s: error (rank %d): %s\n", ctx->program, ctx->rank, msg);
    else
        fprintf(stderr, "%s: error: %s\n", ctx->program, msg);
    fflush(stderr);
}

void pt_fail(pt_ctx *ctx, const char *fmt, ...)
{
    if (ctx->rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        vreport(ctx, 0, fmt, ap);
        va_end(ap);
    }
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
        MPI_Finalize();
    exit(2);
}

void pt_abort(pt_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(ctx, 1, fmt, ap);
    va_end(ap);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2); /* not reached */
}

static void gather_hosts(pt_ctx *ctx)
{
    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    int len = 0;
    MPI_Get_processor_name(name, &len);
    ctx->hosts = calloc((size_t)ctx->size, MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, ctx->hosts, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  MPI_COMM_WORLD);
    ctx->nodes = 0;
    for (int r = 0; r < ctx->size; r++) {
        int seen = 0;
        for (int q = 0; q < r && !seen; q++)
            seen = strcmp(ctx->hosts + (size_t)q * MPI_MAX_PROCESSOR_NAME,
                          ctx->hosts + (size_t)r * MPI_MAX_PROCESSOR_NAME) == 0;
        ctx->nodes += !seen;
    }
}

/* FNV-1a over the arguments (not the program's path), 62 bits so that its
 * negation fits: ranks compare it with one MPI_MIN. */
static long long command_line_hash(int argc, char **argv)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 1; i < argc; i++)
        for (const unsigned char *p = (const unsigned char *)argv[i];; p++) {
            h = (h ^ *p) * 1099511628211ULL; /* the terminating 0 separates the arguments */
            if (!*p)
                break;
        }
    return (long long)(h >> 2);
}

void pt_agree_on_arguments(pt_ctx *ctx, const char *parse_error, int argc, char **argv)
{
    long long h = command_line_hash(argc, argv), mine[2] = {h, -h}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    if (all[0] != -all[1])
        pt_fail(ctx, "the ranks were given different arguments; every rank must run the same command line");
    pt_check_all(ctx, parse_error != NULL, parse_error);
}

void pt_start(pt_ctx *ctx, pt_cli *cli, pt_common *c, int argc, char **argv, int force_multiple)
{
    char err[512] = "";
    /* Parse before MPI_Init: the thread level to ask for depends on --threads. */
    int parsed = pt_cli_parse(cli, argc, argv, err, sizeof err);
    ctx->program = cli->program;
    ctx->argc = argc;
    ctx->argv = argv;
    ctx->out = NULL;
    int want_multiple = force_multiple || (parsed == PT_PARSE_OK && c->threads > 1);
    ctx->thread_requested = want_multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED;
    MPI_Init_thread(&argc, &argv, ctx->thread_requested, &ctx->thread_provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &ctx->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ctx->size);
    pt_agree_on_arguments(ctx, parsed == PT_PARSE_ERROR ? err : NULL, argc, argv);
    if (parsed == PT_PARSE_HELP || parsed == PT_PARSE_VERSION) {
        if (ctx->rank == 0) {
            if (parsed == PT_PARSE_HELP)
                pt_cli_print_help(cli, stdout);
            else
                printf("%s (partita) %s\n", cli->program, PARTITA_VERSION);
            fflush(stdout);
        }
        MPI_Finalize();
        exit(0);
    }
    c->noise.thread = c->noise_thread_opt;
    /* only single and delay slow one thread down: with another model the thread given would be ignored */
    if (c->noise_thread_opt != 0 && c->noise.kind != PT_NOISE_SINGLE && c->noise.kind != PT_NOISE_DELAY) {
        char model[64];
        pt_noise_format(&c->noise, model, sizeof model);
        pt_fail(ctx, "--noise-thread applies to the single and delay noise models only (--noise is %s)", model);
    }
    if (c->noise.thread >= c->threads && c->noise.kind != PT_NOISE_NONE)
        pt_fail(ctx, "--noise-thread %d does not exist with --threads %d", c->noise.thread, c->threads);
    /* the seed feeds the draws of uniform and gaussian noise and of the random thread of single and
     * delay: with no noise, or one fixed thread slowed down, nothing is drawn and --seed would be ignored */
    int one_thread = c->noise.kind == PT_NOISE_SINGLE || c->noise.kind == PT_NOISE_DELAY;
    int draws = c->noise.kind == PT_NOISE_UNIFORM || c->noise.kind == PT_NOISE_GAUSSIAN ||
                (one_thread && c->noise.thread < 0);
    if (c->seed_option && c->seed_option->given && !draws) {
        char model[64], thread[40] = "";
        pt_noise_format(&c->noise, model, sizeof model);
        if (one_thread)
            snprintf(thread, sizeof thread, " --noise-thread %d", c->noise.thread);
        pt_fail(ctx, "--seed applies to random noise only (uniform, gaussian, or single and delay with --noise-thread "
                "random), which --noise %s%s is not: give such noise, or leave --seed out", model, thread);
    }
    if (ctx->thread_provided < ctx->thread_requested)
        pt_fail(ctx, "%s needs %s%s but the MPI library provides only %s", cli->program,
                pt_thread_level_name(ctx->thread_requested),
                c->threads > 1 ? " (more than one thread per rank)" : "",
                pt_thread_level_name(ctx->thread_provided));
    int len = 0;
    MPI_Get_library_version(ctx->library, &len);
    /* keep the first line only: MPICH appends its whole configure line */
    char *nl = strchr(ctx->library, '\n');
    if (nl)
        *nl = '\0';
    MPI_Get_version(&ctx->mpi_version, &ctx->mpi_subversion);
    gather_hosts(ctx);
}

void pt_open_output(pt_ctx *ctx, const pt_common *c)
{
    int ok = 1;
    if (ctx->rank == 0) {
        ctx->out = stdout;
        if (c->output) {
            ctx->out = fopen(c->output, "w");
            ok = ctx->out != NULL;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok)
        pt_fail(ctx, "cannot write the output file '%s'", c->output);
    ctx->output = c->output;
}

int pt_finish(pt_ctx *ctx, int status)
{
    if (ctx->rank == 0 && ctx->out) {
        /* A full disk or a closed pipe shows only here, when the buffered results are
         * flushed: results that were lost must not end in exit status 0. */
        int bad = fflush(ctx->out) != 0 || ferror(ctx->out);
        int err = errno;
        if (ctx->out != stdout && fclose(ctx->out) != 0 && !bad)
            bad = 1, err = errno;
        if (bad) {
            fprintf(stderr, "%s: error: writing the output file '%s' failed: %s\n", ctx->program,
                    ctx->output ? ctx->output : "(standard output)", strerror(err));
            status = status > 2 ? status : 2;
        }
    }
    int all = status;
    MPI_Allreduce(&status, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    free(ctx->hosts);
    ctx->hosts = NULL;
    MPI_Finalize();
    return all;
}

static void json_summary(pt_json *j, const pt_summary *s)
{
    pt_json_object_begin(j, "summary");
    pt_json_int(j, "n", (long long)s->n);
    pt_json_number(j, "median", s->median);
    pt_json_number(j, "p05", s->p05);
    pt_json_number(j, "p95", s->p95);
    pt_json_number(j, "mean", s->mean);
    pt_json_number(j, "stdev", s->stdev);
    pt_json_number(j, "ci95_lo", s->ci_lo);
    pt_json_number(j, "ci95_hi", s->ci_hi);
    pt_json_number(j, "min", s->min);
    pt_json_number(j, "max", s->max);
    pt_json_object_end(j);
}

void pt_json_metric(pt_json *j, const pt_metric *m)
{
    pt_summary s;
    pt_summarize(m->samples, m->n, &s);
    pt_json_object_begin(j, m->name);
    pt_json_string(j, "unit", m->unit);
    pt_json_string(j, "definition", m->definition);
    json_summary(j, &s);
    pt_json_numbers(j, "samples", m->samples, m->n);
    pt_json_object_end(j);
}

void pt_json_head(pt_json *j, const pt_ctx *ctx, const pt_common *c)
{
    char noise[64];
    pt_noise_format(&c->noise, noise, sizeof noise);
    pt_json_object_begin(j, NULL);
    pt_json_string(j, "schema", PT_RESULT_SCHEMA);
    pt_json_string(j, "benchmark", ctx->benchmark);
    pt_json_string(j, "program", ctx->program);
    pt_json_string(j, "partita_version", PARTITA_VERSION);
    pt_json_array_begin(j, "argv");
    for (int i = 0; i < ctx->argc; i++)
        pt_json_string(j, NULL, ctx->argv[i]);
    pt_json_array_end(j);
    pt_json_object_begin(j, "environment");
    pt_json_string(j, "mpi_library", ctx->library);
    char ver[32];
    snprintf(ver, sizeof ver, "%d.%d", ctx->mpi_version, ctx->mpi_subversion);
    pt_json_string(j, "mpi_version", ver);
    pt_json_string(j, "thread_level_requested", pt_thread_level_name(ctx->thread_requested));
    pt_json_string(j, "thread_level_provided", pt_thread_level_name(ctx->thread_provided));
    pt_json_int(j, "ranks", ctx->size);
    pt_json_int(j, "nodes", ctx->nodes);
    pt_json_array_begin(j, "hosts");
    for (int r = 0; r < ctx->size; r++)
        pt_json_string(j, NULL, ctx->hosts + (size_t)r * MPI_MAX_PROCESSOR_NAME);
    pt_json_array_end(j);
    const char *preload = getenv("LD_PRELOAD");
    /* Only a process that libpartita runs in has a policy: a native run with
     * PARTITA_POLICY in its environment was reported as libpartita's. */
    const char *policy = dlsym(RTLD_DEFAULT, "Partita_Pready") ? getenv("PARTITA_POLICY") : NULL;
    pt_json_string(j, "ld_preload", preload && *preload ? preload : NULL);
    pt_json_string(j, "partita_policy", policy && *policy ? policy : NULL);
    const char *wait = getenv("OMP_WAIT_POLICY");
    pt_json_string(j, "omp_wait_policy", wait && *wait ? wait : NULL);
    pt_json_object_end(j);
    pt_json_object_begin(j, "config");
    pt_json_int(j, "iterations", c->iterations);
    pt_json_int(j, "warmup", c->warmup);
    pt_json_bool(j, "validate", c->validate);
    pt_json_int(j, "threads", c->threads);
    pt_json_number(j, "compute_us", c->compute_us);
    pt_json_string(j, "noise", noise);
    if (c->noise.thread < 0)
        pt_json_string(j, "noise_thread", "random");
    else
        pt_json_int(j, "noise_thread", c->noise.thread);
    pt_json_string(j, "compute_mode", pt_compute_mode_name(c->compute_mode));
    pt_json_string(j, "cache", cache_modes[c->cache]);
    pt_json_int(j, "seed", c->seed);
}

void pt_json_config_end(pt_json *j) { pt_json_object_end(j); }

void pt_text_implementation(FILE *f)
{
    const char *preload = getenv("LD_PRELOAD");
    const char *policy = getenv("PARTITA_POLICY");
    if (preload && *preload)
        fprintf(f, "# Implementation: LD_PRELOAD=%s PARTITA_POLICY=%s\n", preload, policy ? policy : "(default)");
}

void pt_text_preamble(FILE *f, const pt_ctx *ctx, const pt_common *c, const char *title)
{
    char noise[64];
    pt_noise_format(&c->noise, noise, sizeof noise);
    fprintf(f, "# partita %s v%s\n", title, PARTITA_VERSION);
    fprintf(f, "# MPI library: %s\n", ctx->library);
    fprintf(f, "# Thread level: requested %s, provided %s\n", pt_thread_level_name(ctx->thread_requested),
            pt_thread_level_name(ctx->thread_provided));
    fprintf(f, "# Ranks: %d on %d node%s\n", ctx->size, ctx->nodes, ctx->nodes == 1 ? "" : "s");
    pt_text_implementation(f);
    fprintf(f, "# Threads: %d\n", c->threads);
    const char *wait = getenv("OMP_WAIT_POLICY");
    if (c->threads > 1 && c->compute_mode == PT_COMPUTE_SLEEP && !(wait && *wait))
        /* Measured on 2 cores (partita-p2p, 2 threads, one 500 us late): t_last of 6-10 us with
         * OMP_WAIT_POLICY=passive, 45-60 us and whole launches at 3 ms with the default spin. */
        fprintf(f, "# Note: OMP_WAIT_POLICY is not set: a thread that has marked its partitions spins at the end of "
                   "the parallel region while the others compute; with more threads than cores (sleep mode) it takes "
                   "a core from MPI and libpartita's progress thread. Set OMP_WAIT_POLICY=passive (partita run "
                   "does; docs/metrics.md)\n");
    fprintf(f, "# Compute: %g us per thread (%s), noise %s", c->compute_us, pt_compute_mode_name(c->compute_mode), noise);
    if (c->noise.kind == PT_NOISE_SINGLE || c->noise.kind == PT_NOISE_DELAY) {
        if (c->noise.thread < 0)
            fprintf(f, " on a random thread");
        else
            fprintf(f, " on thread %d", c->noise.thread);
    }
    fprintf(f, ", seed %lld\n", c->seed);
    fprintf(f, "# Cache: %s\n", cache_modes[c->cache]);
    fprintf(f, "# Iterations: %d timed, %d warm-up\n", c->iterations, c->warmup);
}

void pt_csv_header(FILE *f, int ncase, const char *const *case_names)
{
    fprintf(f, "benchmark");
    for (int i = 0; i < ncase; i++)
        fprintf(f, ",%s", case_names[i]);
    fprintf(f, ",metric,unit,n,median,p05,p95,mean,stdev,ci95_lo,ci95_hi,min,max\n");
}

void pt_csv_row(FILE *f, const pt_ctx *ctx, int ncase, const char *const *case_values, const pt_metric *m)
{
    pt_summary s;
    pt_summarize(m->samples, m->n, &s);
    fprintf(f, "%s", ctx->benchmark);
    for (int i = 0; i < ncase; i++)
        fprintf(f, ",%s", case_values[i]);
    fprintf(f, ",%s,%s,%zu,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", m->name, m->unit, s.n, s.median, s.p05,
            s.p95, s.mean, s.stdev, s.ci_lo, s.ci_hi, s.min, s.max);
}

void pt_text_metric_cell(FILE *f, const pt_metric *m, int width)
{
    pt_summary s;
    pt_summarize(m->samples, m->n, &s);
    char cell[80];
    snprintf(cell, sizeof cell, "%.4g [%.4g,%.4g]", s.median, s.ci_lo, s.ci_hi);
    fprintf(f, " %*s", width, cell);
}

void pt_require_omp_threads(pt_ctx *ctx, int threads)
{
    int got = 0;
#pragma omp parallel num_threads(threads)
#pragma omp single
    got = omp_get_num_threads();
    char msg[160] = "";
    if (got != threads)
        snprintf(msg, sizeof msg, "OpenMP gave %d threads instead of %d (check OMP_THREAD_LIMIT and OMP_DYNAMIC)", got,
                 threads);
    pt_check_all(ctx, got != threads, msg);
}

void pt_require_cold_cache(pt_ctx *ctx, int cold)
{
    pt_check_all(ctx, cold && pt_cache_setup() != 0, "cannot allocate the cold-cache flush buffer");
}

void pt_require_compute_for_noise(pt_ctx *ctx, const pt_common *c, int has_compute, const char *zero,
                                  const char *give)
{
    if (has_compute || c->noise.kind == PT_NOISE_NONE || c->noise.kind == PT_NOISE_DELAY)
        return;
    char model[64];
    pt_noise_format(&c->noise, model, sizeof model);
    pt_fail(ctx, "--noise %s scales the compute time, which is 0 (%s): give %s, or --noise delay:US for one thread "
            "US late", model, zero, give);
}

void pt_check_all(pt_ctx *ctx, int failed, const char *msg)
{
    int me = failed ? ctx->rank : ctx->size, first = 0;
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == ctx->size)
        return;
    char text[512] = "";
    if (ctx->rank == first)
        snprintf(text, sizeof text, "%s", msg);
    MPI_Bcast(text, sizeof text, MPI_CHAR, first, MPI_COMM_WORLD);
    pt_fail(ctx, "%s", text);
}
