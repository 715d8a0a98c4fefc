/* partita-latency's output: the OSU Micro-Benchmarks 7.5 table of
 * osu_partitioned_latency (the non-blocking-collective layout: "# Size",
 * "Overall(us)", "Compute(us)", "Pure Comm.(us)", "Overlap(%)"; -f adds the
 * Coll. Init / MPI_Test / MPI_Wait / Min / Max columns), followed by partita's own
 * columns, and the usual partita JSON and CSV. Definitions: docs/latency.md. */
#ifndef PT_LATENCY_OUTPUT_H
#define PT_LATENCY_OUTPUT_H
#include <stddef.h>
#include <stdio.h>

#include "harness/bench.h"

/* Per-iteration samples of one message size, in microseconds. OMB's numbers
 * (halves of a round trip) except pure_comm, which is already one way. */
enum {
    LAT_PURE_COMM, /* pass 1: (round trip) / 2, no compute */
    LAT_OVERALL,   /* pass 2: (round trip with compute) / 2 */
    LAT_COMPUTE,   /* pass 2: compute phases, MPI_Test calls included (OMB's tcomp) */
    LAT_INIT,      /* pass 2: MPI_Start + MPI_Pready calls */
    LAT_TEST,      /* pass 2: MPI_Test calls inside the compute phases */
    LAT_WAIT,      /* pass 2: MPI_Wait calls */
    LAT_NMETRICS
};

typedef struct lat_case {
    size_t bytes;        /* the size of the row (OMB: total message bytes) */
    int partition_bytes; /* bytes per partition: bytes / partitions, rounded down */
    int iterations, warmup;
    int validation_errors;
    double *v[LAT_NMETRICS];
} lat_case;

/* What the table shows. */
typedef struct lat_view {
    int partitions;
    int full;          /* -f */
    int validate;      /* -c */
    int tail;          /* -z */
    int npercentiles;
    const int *percentiles;
} lat_view;

/* OMB's row figures: means over the iterations, combined as print_stats_nbc does. */
typedef struct lat_row {
    double overall, compute, init, test, wait, pure_comm, min_comm, max_comm, overlap;
} lat_row;
void lat_row_compute(const lat_case *lc, lat_row *row);

pt_metric lat_metric(const lat_case *lc, int k);

void lat_text_header(FILE *f, const lat_view *view);
void lat_text_row(FILE *f, const lat_view *view, const lat_case *lc);
void lat_json_case(pt_json *j, const lat_case *lc, int partitions);
void lat_csv_rows(FILE *f, const pt_ctx *ctx, const lat_case *lc, int partitions);

#endif
