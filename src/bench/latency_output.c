#include "latency_output.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* OMB's column geometry (osu_util.h): a 10-wide left-aligned size, then 20-wide
 * right-aligned fields with two decimals. Scripts split rows on white space. */
#define OMB_SIZE_WIDTH 10
#define OMB_FIELD_WIDTH 20
#define OMB_PRECISION 2

static const struct { const char *name, *definition; } metric_info[LAT_NMETRICS] = {
    {"pure_comm_us", "pass 1, no compute: (MPI_Start, MPI_Pready of every partition, MPI_Wait, then the same back) / 2"},
    {"overall_us", "pass 2: the same round trip with a compute phase after each MPI_Start/MPI_Pready, / 2"},
    {"compute_us", "pass 2: time in the compute phases (MPI_Test calls included, as OMB's tcomp), / 2"},
    {"init_us", "pass 2: time in MPI_Start and the MPI_Pready calls, / 2"},
    {"test_us", "pass 2: time in the MPI_Test calls made during the compute phases (--test-calls), / 2"},
    {"wait_us", "pass 2: time in MPI_Wait, / 2"},
};

/* partita's columns after OMB's: median and 95% CI of the median of Overall and Pure Comm. */
static const struct { int k; const char *median, *lo, *hi; } ci_columns[] = {
    {LAT_OVERALL, "Overall Med.(us)", "Ovl. CI95 lo(us)", "Ovl. CI95 hi(us)"},
    {LAT_PURE_COMM, "Comm. Med.(us)", "Comm. CI95 lo(us)", "Comm. CI95 hi(us)"},
};
#define NCI (int)(sizeof ci_columns / sizeof ci_columns[0])

pt_metric lat_metric(const lat_case *lc, int k)
{
    return (pt_metric){metric_info[k].name, "us", metric_info[k].definition, lc->v[k], (size_t)lc->iterations};
}

static double mean_of(const lat_case *lc, int k)
{
    pt_summary s;
    pt_summarize(lc->v[k], (size_t)lc->iterations, &s);
    return s.mean;
}

void lat_row_compute(const lat_case *lc, lat_row *row)
{
    pt_summary comm;
    pt_summarize(lc->v[LAT_PURE_COMM], (size_t)lc->iterations, &comm);
    double tcomp = mean_of(lc, LAT_COMPUTE);
    row->overall = mean_of(lc, LAT_OVERALL);
    row->init = mean_of(lc, LAT_INIT);
    row->test = mean_of(lc, LAT_TEST);
    row->wait = mean_of(lc, LAT_WAIT);
    row->compute = tcomp - row->test; /* OMB prints the compute without the MPI_Test calls */
    row->pure_comm = comm.mean;
    row->min_comm = comm.min;
    row->max_comm = comm.max;
    /* OMB: 100 - (overall - pure compute) / pure communication * 100, at least 0 */
    double overlap = 100.0 - (row->overall - row->compute) / row->pure_comm * 100.0;
    row->overlap = overlap > 0.0 ? overlap : 0.0;
}

void lat_text_header(FILE *f, const lat_view *view)
{
    fprintf(f, "%-*s%*s", OMB_SIZE_WIDTH, "# Size", OMB_FIELD_WIDTH, "Overall(us)");
    if (view->full) {
        static const char *const full[] = {"Compute(us)", "Coll. Init(us)", "MPI_Test(us)", "MPI_Wait(us)",
                                           "Pure Comm.(us)", "Min Comm.(us)", "Max Comm.(us)", "Overlap(%)"};
        for (size_t i = 0; i < sizeof full / sizeof full[0]; i++)
            fprintf(f, "%*s", OMB_FIELD_WIDTH, full[i]);
    } else {
        fprintf(f, "%*s%*s%*s", OMB_FIELD_WIDTH, "Compute(us)", OMB_FIELD_WIDTH, "Pure Comm.(us)", OMB_FIELD_WIDTH, "Overlap(%)");
    }
    if (view->validate)
        fprintf(f, "%*s", OMB_FIELD_WIDTH, "Validation");
    if (view->tail)
        for (int i = 0; i < view->npercentiles; i++) {
            char h[32];
            snprintf(h, sizeof h, "P%d Tail Lat(us)", view->percentiles[i]);
            fprintf(f, "%*s", OMB_FIELD_WIDTH, h);
        }
    if (view->full)
        for (int i = 0; i < NCI; i++)
            fprintf(f, "%*s%*s%*s", OMB_FIELD_WIDTH, ci_columns[i].median, OMB_FIELD_WIDTH, ci_columns[i].lo, OMB_FIELD_WIDTH,
                    ci_columns[i].hi);
    fprintf(f, "\n");
}

static void field(FILE *f, double v) { fprintf(f, "%*.*f", OMB_FIELD_WIDTH, OMB_PRECISION, v); }

void lat_text_row(FILE *f, const lat_view *view, const lat_case *lc)
{
    lat_row r;
    lat_row_compute(lc, &r);
    fprintf(f, "%-*zu", OMB_SIZE_WIDTH, lc->bytes);
    field(f, r.overall);
    if (view->full) {
        const double full[] = {r.compute, r.init, r.test, r.wait, r.pure_comm, r.min_comm, r.max_comm, r.overlap};
        for (size_t i = 0; i < sizeof full / sizeof full[0]; i++)
            field(f, full[i]);
    } else {
        field(f, r.compute);
        field(f, r.pure_comm);
        field(f, r.overlap);
    }
    if (view->validate)
        fprintf(f, "%*s", OMB_FIELD_WIDTH, lc->validation_errors ? "Fail" : "Pass");
    if (view->tail) {
        /* percentiles of the pure-communication latency; the samples are sorted in a copy */
        size_t n = (size_t)lc->iterations;
        double *sorted = malloc(sizeof(double) * (n ? n : 1));
        if (sorted)
            memcpy(sorted, lc->v[LAT_PURE_COMM], sizeof(double) * n);
        if (sorted)
            pt_sort_doubles(sorted, n);
        for (int i = 0; i < view->npercentiles; i++)
            field(f, sorted ? pt_quantile_sorted(sorted, n, view->percentiles[i] / 100.0) : NAN);
        free(sorted);
    }
    if (view->full)
        for (int i = 0; i < NCI; i++) {
            pt_summary s;
            pt_summarize(lc->v[ci_columns[i].k], (size_t)lc->iterations, &s);
            field(f, s.median);
            field(f, s.ci_lo);
            field(f, s.ci_hi);
        }
    fprintf(f, "\n");
}

void lat_json_case(pt_json *j, const lat_case *lc, int partitions)
{
    lat_row r;
    lat_row_compute(lc, &r);
    pt_json_object_begin(j, NULL);
    pt_json_object_begin(j, "case");
    pt_json_int(j, "bytes", (long long)lc->bytes);
    pt_json_int(j, "partitions", partitions);
    pt_json_int(j, "partition_bytes", lc->partition_bytes);
    pt_json_int(j, "iterations", lc->iterations);
    pt_json_int(j, "warmup", lc->warmup);
    pt_json_object_end(j);
    pt_json_string(j, "validation", lc->validation_errors >= 0 ? (lc->validation_errors ? "fail" : "pass") : "skipped");
    /* the row as OMB prints it (means) */
    pt_json_object_begin(j, "omb");
    pt_json_number(j, "overall_us", r.overall);
    pt_json_number(j, "compute_us", r.compute);
    pt_json_number(j, "init_us", r.init);
    pt_json_number(j, "test_us", r.test);
    pt_json_number(j, "wait_us", r.wait);
    pt_json_number(j, "pure_comm_us", r.pure_comm);
    pt_json_number(j, "min_comm_us", r.min_comm);
    pt_json_number(j, "max_comm_us", r.max_comm);
    pt_json_number(j, "overlap_pct", r.overlap);
    pt_json_object_end(j);
    pt_json_object_begin(j, "metrics");
    for (int k = 0; k < LAT_NMETRICS; k++) {
        pt_metric m = lat_metric(lc, k);
        pt_json_metric(j, &m);
    }
    pt_json_object_end(j);
    pt_json_object_end(j);
}

void lat_csv_rows(FILE *f, const pt_ctx *ctx, const lat_case *lc, int partitions)
{
    char b[32], p[16], pb[16];
    snprintf(b, sizeof b, "%zu", lc->bytes);
    snprintf(p, sizeof p, "%d", partitions);
    snprintf(pb, sizeof pb, "%d", lc->partition_bytes);
    const char *vals[] = {b, p, pb};
    for (int k = 0; k < LAT_NMETRICS; k++) {
        pt_metric m = lat_metric(lc, k);
        pt_csv_row(f, ctx, 3, vals, &m);
    }
}
