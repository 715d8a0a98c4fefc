/* What every partita benchmark program shares: the common options, MPI start-up
 * with the right thread level, errors reported once on rank 0 with a non-zero
 * exit, run metadata, and result output (text / JSON / CSV). */
#ifndef PT_BENCH_H
#define PT_BENCH_H
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "compute.h"
#include "json.h"
#include "options.h"
#include "stats.h"

#define PT_RESULT_SCHEMA "partita.result/1"

enum { PT_FORMAT_TEXT, PT_FORMAT_JSON, PT_FORMAT_CSV };
enum { PT_CACHE_HOT, PT_CACHE_COLD };

typedef struct pt_common {
    int iterations;
    int warmup;
    int validate;
    int threads;
    double compute_us;
    pt_noise noise;
    int noise_thread_opt; /* parsed --noise-thread: -1 random, else the thread */
    int compute_mode;     /* pt_compute_mode */
    int cache;            /* PT_CACHE_* */
    long long seed;
    const pt_option *seed_option; /* its given: --seed was on the command line (NULL: no such option) */
    int format;           /* PT_FORMAT_* */
    const char *output;   /* NULL: stdout */
} pt_common;

typedef struct pt_ctx {
    const char *program;   /* e.g. "partita-p2p" */
    const char *benchmark; /* e.g. "p2p" */
    int rank, size;
    int thread_requested, thread_provided;
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int mpi_version, mpi_subversion;
    char *hosts;           /* hostnames of all ranks, MPI_MAX_PROCESSOR_NAME apart */
    int nodes;             /* distinct hostnames */
    int argc;
    char **argv;
    FILE *out;             /* rank 0: where results go */
    const char *output;    /* its file name, NULL for standard output */
} pt_ctx;

/* Defaults and the table entries of the common options. `which` selects them:
 * PT_COMMON_ALL, or an OR of the PT_COMMON_* bits for programs that need fewer. */
enum {
    PT_COMMON_ITER = 1, PT_COMMON_VALIDATE = 2, PT_COMMON_THREADS = 4, PT_COMMON_COMPUTE = 8,
    PT_COMMON_CACHE = 16, PT_COMMON_OUTPUT = 32, PT_COMMON_ALL = 63
};
void pt_common_defaults(pt_common *c);
void pt_common_options(pt_cli *cli, pt_common *c, int which);

/* Parse the options, initialise MPI (MPI_THREAD_MULTIPLE when c->threads > 1 or
 * force_multiple, else MPI_THREAD_FUNNELED) and handle --help, --version, bad
 * options and a missing thread level: those print on rank 0 and exit. */
void pt_start(pt_ctx *ctx, pt_cli *cli, pt_common *c, int argc, char **argv, int force_multiple);
/* Open the output (rank 0); call after the program's own checks. */
void pt_open_output(pt_ctx *ctx, const pt_common *c);
/* Close the output and MPI_Finalize. Returns the exit status to use. */
int pt_finish(pt_ctx *ctx, int status);

/* An error every rank detects alike: rank 0 prints "PROGRAM: error: ...", all
 * ranks finalize and exit with status 2. */
void pt_fail(pt_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
/* An error one rank detects: it prints and aborts the whole job (status 2). */
void pt_abort(pt_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* Collective, first after MPI_Init: every rank parsed its own command line
 * (parse_error: NULL, or what was wrong). Ranks given different arguments
 * (an MPMD launch) would post different transfers, and a rank whose parse
 * failed would exit while the others waited for it: both hung. Either ends
 * every rank with one line from rank 0 and status 2. */
void pt_agree_on_arguments(pt_ctx *ctx, const char *parse_error, int argc, char **argv);
/* Every rank calls these alike. pt_check_all: when `failed` is set on any rank,
 * the message of the lowest failing rank is printed by rank 0 and all exit 2.
 * pt_require_omp_threads: fail when OpenMP gives fewer threads than asked
 * (OMP_THREAD_LIMIT, OMP_DYNAMIC), which would leave partitions unready.
 * pt_require_cold_cache: when `cold`, allocate the cold-cache flush buffer.
 * A rank that failed alone used to exit while the others went on and hung. */
void pt_check_all(pt_ctx *ctx, int failed, const char *msg);
void pt_require_omp_threads(pt_ctx *ctx, int threads);
void pt_require_cold_cache(pt_ctx *ctx, int cold);
/* single, uniform and gaussian noise scale the compute time; delay adds its microseconds to it,
 * so it stays meaningful with none (one thread late). Without compute (has_compute 0) a scaling
 * model would change nothing: pt_fail, naming how the options are 0 (`zero`, e.g. "--compute 0")
 * and what to give instead (`give`, e.g. "--compute US"). */
void pt_require_compute_for_noise(pt_ctx *ctx, const pt_common *c, int has_compute, const char *zero,
                                  const char *give);

const char *pt_thread_level_name(int level);
const char *pt_compute_mode_name(int mode);

/* One measured quantity: all per-iteration samples and how it is defined. */
typedef struct pt_metric {
    const char *name;
    const char *unit;
    const char *definition;
    double *samples;
    size_t n;
} pt_metric;

/* JSON: the top-level object's opening, run metadata and the "config" object
 * with the common options; the program then adds its own config keys, calls
 * pt_json_config_end and writes "results". */
void pt_json_head(pt_json *j, const pt_ctx *ctx, const pt_common *c);
void pt_json_config_end(pt_json *j);
void pt_json_metric(pt_json *j, const pt_metric *m);
/* Text: '#'-prefixed preamble lines (OMB shape) with the run metadata. */
void pt_text_preamble(FILE *f, const pt_ctx *ctx, const pt_common *c, const char *title);
/* Text: the "# Implementation: LD_PRELOAD=... PARTITA_POLICY=..." line, when a library is preloaded. */
void pt_text_implementation(FILE *f);
/* Text: one table cell "median [ci_lo,ci_hi]" right-aligned in `width` columns. */
void pt_text_metric_cell(FILE *f, const pt_metric *m, int width);
/* CSV: one row per (case, metric); case_cols are "name=value" pairs. */
void pt_csv_header(FILE *f, int ncase, const char *const *case_names);
void pt_csv_row(FILE *f, const pt_ctx *ctx, int ncase, const char *const *case_values, const pt_metric *m);

#endif
