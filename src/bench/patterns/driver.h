/* The iteration loop and the result output every pattern program shares.
 *
 * A case (one strategy of one program) runs 1 check iteration (always validated),
 * --warmup untimed iterations and --iterations timed ones. Each iteration: the
 * program prepares (untimed: fill data, cold cache), all ranks meet in a
 * barrier, the program runs the iteration and stamps its phases, then it checks
 * the data (untimed) when validating. Each timed sample is the maximum over ranks
 * of that iteration's time on each rank (a pattern is as slow as its slowest rank). */
#ifndef PAT_DRIVER_H
#define PAT_DRIVER_H
#include <stdint.h>

#include "counted.h"
#include "harness/bench.h"

/* Phase stamps of one iteration on one rank (0 = phase not measured). The
 * phases are critical-path segments: compute = t0 -> last thread's compute end,
 * pack_post = -> last thread's last post (Isend/Start/Pready), wait = -> all
 * receive data in, unpack = -> last unpack end; total = t0 -> end. */
typedef struct pat_stamps {
    int64_t t0, compute, post, recv, unpack, end;
    int64_t blocked_ns; /* Sweep3D: the longest time a thread waited for upstream data */
    int has_blocked;
} pat_stamps;
enum { PAT_TOTAL, PAT_COMPUTE, PAT_PACK_POST, PAT_WAIT, PAT_UNPACK, PAT_BLOCKED, PAT_NPHASES };
/* Phase sets a program reports (bits of 1 << PAT_...). */
#define PAT_PHASES_EXCHANGE ((1 << PAT_TOTAL) | (1 << PAT_COMPUTE) | (1 << PAT_PACK_POST) | (1 << PAT_WAIT) | (1 << PAT_UNPACK))
#define PAT_PHASES_SWEEP ((1 << PAT_TOTAL) | (1 << PAT_BLOCKED))

typedef struct pat_case_ops {
    void *self;
    void (*prepare)(void *self, long iter, int validate); /* untimed, before the barrier */
    void (*run)(void *self, long iter, int validate, pat_stamps *st);
    long (*check)(void *self, long iter);                  /* untimed; wrong values on this rank */
    void (*evict)(void *self);                            /* cold cache: evict the data (may be NULL) */
} pat_case_ops;

typedef struct pat_result {
    const char *strategy;
    int threads, partitions;
    int n;                          /* timed samples */
    double *phase[PAT_NPHASES];     /* rank 0: per-iteration microseconds, max over ranks */
    /* Sums over all ranks. Counted: what the send calls were handed. */
    long long bytes_iter;           /* counted bytes of one timed iteration (mean over them) */
    long long bytes_run;            /* counted bytes of the whole case, check and warm-up included */
    long long sends_iter, preadys_iter;
    long long payload_iter;         /* bytes the pattern needs (the program's own figure) */
    long long padding_iter;         /* partition padding (the program's own figure) */
    long long iter_bytes_min, iter_bytes_max; /* per rank, over timed iterations: equal when steady */
    long errors;                    /* wrong values, all ranks, all validated iterations */
    int validated;                  /* validated iterations */
} pat_result;

/* Run one case. payload/padding: this rank's figures per iteration. Collective: a rank
 * that cannot allocate the samples ends every rank (pt_check_all). */
void pat_run_case(pt_ctx *ctx, const pt_common *c, const pat_case_ops *ops, pat_counter *cnt,
                  long long payload, long long padding, pat_result *r);
void pat_result_free(pat_result *r);
/* Bytes of the samples pat_run_case allocates on this rank for c->iterations timed iterations
 * (rank 0 three sets: its own, the maximum over ranks and the result's; one case at a time):
 * what each program adds to its buffers in pt_require_memory. A double: it never overflows. */
double pat_samples_footprint(const pt_ctx *ctx, const pt_common *c);

/* Output. The program writes its own preamble/config between begin and cases:
 * text: pt_text_preamble + "# ..." lines, then pat_report_header; JSON:
 * pt_json_head + config keys + pt_json_config_end + own objects, then
 * pat_report_header opens "results". */
typedef struct pat_report {
    const pt_ctx *ctx;
    const pt_common *c;
    int phases; /* PAT_PHASES_*: the columns of the text output */
    pt_json j;
} pat_report;
void pat_report_header(pat_report *rep);
void pat_report_case(pat_report *rep, const pat_result *r);
void pat_report_end(pat_report *rep);

/* A list of choices for an option ("a,b,c"); dest of pat_parse_choice_list. */
#define PAT_MAX_CHOICES 8
typedef struct pat_choice_list {
    const char *const *choices; /* NULL-terminated, set before parsing */
    int n;
    int v[PAT_MAX_CHOICES];
} pat_choice_list;
int pat_parse_choice_list(const char *arg, void *dest, char *err, size_t errlen);

/* Compute of one thread in one iteration: base_us with the noise model applied. */
void pat_compute(const pt_common *c, double base_us, int thread, long iter);
/* single, uniform and gaussian noise scale the compute time (--compute plus --cell-ns times the
 * cells): with both 0 they would change nothing, so they are refused (pt_fail). delay adds its
 * microseconds to the compute, so it stays meaningful without one (a thread that is late). */
void pat_require_compute_for_noise(pt_ctx *ctx, const pt_common *c, double cell_ns);
/* A run whose compute alone (compute_us per step, `steps` steps an iteration,
 * every case's warm-up and timed iterations) would last more than an hour is
 * refused before anything runs, naming the estimate: --cell-ns is per cell,
 * and on a large grid a plausible-looking value meant a day. Collective. */
void pat_require_compute_time(pt_ctx *ctx, const pt_common *c, double compute_us, double steps, int cases);

#endif
