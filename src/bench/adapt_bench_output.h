/* partita-adapt-bench's output (adapt_bench.c): one JSON line per case on
 * standard output (scripts/adapt-bench.py reads them), and with
 * --format json --output FILE a partita.result/1 document, benchmark
 * "side-by-side", whose cases are (bytes, partitions, impl) with the
 * per-round samples of t_part_us, t_last_us and (under a laggard)
 * t_late_us, t_pause_us and t_resume_us (docs/metrics.md), so that
 * `partita run` pools launches and compares implementations within each
 * launch (python/partita/launch_checks.py). Rank 0 writes both. */
#ifndef PT_ADAPT_BENCH_OUTPUT_H
#define PT_ADAPT_BENCH_OUTPUT_H
#include <stddef.h>
#include <stdio.h>

#include "json.h"

typedef struct ab_output {
    FILE *doc; /* the result document, or NULL */
    pt_json j;
    int launch, warmup;
    double laggard_us; /* 0: none */
} ab_output;

typedef struct ab_case {
    size_t bytes;
    int partitions;
    const char *impl;
    const char *plan;     /* libpartita's Partita_Request_why, or "" */
    double *t_part_us, *t_last_us; /* per measured round; sorted in place */
    double *t_late_us, *t_pause_us, *t_resume_us; /* likewise under a laggard, else NULL */
    int rounds;
} ab_case;

/* Opens FILE and writes the document's head; NULL output path: lines only.
 * Returns 0, or -1 with errno when FILE cannot be written. */
int ab_output_open(ab_output *out, const char *path, int argc, char **argv, int launch, double laggard_us,
                   int laggard_every, int rounds, int warmup, const char *impls);
void ab_output_case(ab_output *out, ab_case *c);
/* Ends the document; -1 when writing it failed. */
int ab_output_close(ab_output *out);

#endif
