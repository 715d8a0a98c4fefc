/* partita-adapt-bench's output: JSON lines and the result document (adapt_bench_output.h). */
#include "adapt_bench_output.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "stats.h"

#define RESULT_SCHEMA "partita.result/1"

/* The per-round metrics, in ab_case's order: NAME_us in the results. */
#define NMETRICS 5
static const struct {
    const char *name, *definition;
} METRICS[NMETRICS] = {
    { "t_part", "last arrival minus the start of the first MPI_Pready (of the MPI_Isend for single), one round" },
    { "t_last", "last arrival minus the start of the last MPI_Pready (of the MPI_Isend for single), one round" },
    { "t_late", "last arrival minus the start of the first MPI_Pready after the laggard's pause (of the MPI_Isend "
                "for single): the late half's marks, the messages they hand over and what is left after the last, "
                "one round" },
    { "t_pause", "the laggard's pause as the marking thread lived it: from the end of the last MPI_Pready before "
                 "the sleep to the start of the first after it (the sleep alone, for single); longer than the "
                 "sleep asked for by the sleep's slack, and by any wait for a core, one round" },
    { "t_resume", "t_late plus the round's t_pause beyond the implementation's typical pause (its median t_pause, "
                  "at most the median of the case's implementations' medians in this launch) by more than 10 us: "
                  "t_late with a stretched pause charged, one round" },
};

int ab_output_open(ab_output *out, const char *path, int argc, char **argv, int launch, double laggard_us,
                   int laggard_every, int rounds, int warmup, const char *impls)
{
    memset(out, 0, sizeof *out);
    out->launch = launch;
    out->warmup = warmup;
    out->laggard_us = laggard_us;
    if (!path)
        return 0;
    if (!(out->doc = fopen(path, "w")))
        return -1;
    pt_json *j = &out->j;
    pt_json_init(j, out->doc);
    pt_json_object_begin(j, NULL);
    pt_json_string(j, "schema", RESULT_SCHEMA);
    pt_json_string(j, "benchmark", "side-by-side");
    pt_json_string(j, "program", "partita-adapt-bench");
    pt_json_array_begin(j, "argv");
    for (int i = 0; i < argc; i++)
        pt_json_string(j, NULL, argv[i]);
    pt_json_array_end(j);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    char *nl = strchr(version, '\n');
    if (nl)
        *nl = 0;
    pt_json_object_begin(j, "environment");
    pt_json_string(j, "mpi_library", version);
    pt_json_int(j, "ranks", 2);
    pt_json_object_end(j);
    char noise[64] = "none";
    if (laggard_us > 0)
        snprintf(noise, sizeof noise, "delay:%g", laggard_us);
    pt_json_object_begin(j, "config");
    pt_json_int(j, "iterations", rounds);
    pt_json_int(j, "warmup", warmup);
    pt_json_int(j, "threads", 1);
    pt_json_string(j, "noise", noise);
    pt_json_number(j, "laggard_us", laggard_us);
    if (laggard_us > 0) { /* which partitions the one marking thread marks late (-S) */
        char which[64] = "the first half";
        if (laggard_every)
            snprintf(which, sizeof which, "0, %d, %d, ...", laggard_every, 2 * laggard_every);
        pt_json_string(j, "laggard_partitions", which);
    }
    pt_json_string(j, "compute_mode", "sleep");
    pt_json_string(j, "implementations", impls);
    pt_json_int(j, "launch", launch);
    pt_json_object_end(j);
    pt_json_array_begin(j, "headline_metrics");
    pt_json_string(j, NULL, laggard_us > 0 ? "t_last_us" : "t_part_us");
    pt_json_array_end(j);
    pt_json_array_begin(j, "results");
    return 0;
}

void ab_output_case(ab_output *out, ab_case *c)
{
    size_t n = (size_t)c->rounds;
    /* NULL: not measured */
    double *samples[NMETRICS] = { c->t_part_us, c->t_last_us, c->t_late_us, c->t_pause_us, c->t_resume_us };
    for (int k = 0; k < NMETRICS; k++)
        if (samples[k])
            pt_sort_doubles(samples[k], n);
    /* quotes would end the line's JSON string: the plan's text keeps none */
    char *plan = strdup(c->plan); /* whole: a fixed 400 bytes cut the timer's ~600 */
    if (!plan) {
        fprintf(stderr, "partita-adapt-bench: error: out of memory for a plan's text\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (char *p = plan; *p; p++)
        if (*p == '"' || *p == '\\')
            *p = '\'';
    printf("{\"launch\": %d, \"bytes\": %zu, \"partitions\": %d, \"impl\": \"%s\"", out->launch, c->bytes,
           c->partitions, c->impl);
    for (int k = 0; k < NMETRICS; k++)
        if (samples[k])
            printf(", \"%s_us\": %.3f, \"%s_p25_us\": %.3f, \"%s_p75_us\": %.3f", METRICS[k].name,
                   pt_quantile_sorted(samples[k], n, 0.5), METRICS[k].name, pt_quantile_sorted(samples[k], n, 0.25),
                   METRICS[k].name, pt_quantile_sorted(samples[k], n, 0.75));
    printf(", \"rounds\": %d, \"warmup\": %d, \"laggard_us\": %g}\n", c->rounds, out->warmup, out->laggard_us);
    fflush(stdout);
    if (plan[0])
        fprintf(stderr, "# %zu bytes, %d partitions, %s: %s\n", c->bytes, c->partitions, c->impl, plan);
    if (out->doc) {
        pt_json *j = &out->j;
        pt_json_object_begin(j, NULL);
        pt_json_object_begin(j, "case");
        pt_json_int(j, "bytes", (long long)c->bytes);
        pt_json_int(j, "partitions", c->partitions);
        pt_json_string(j, "impl", c->impl);
        pt_json_object_end(j);
        if (plan[0])
            pt_json_string(j, "plan", plan);
        pt_json_object_begin(j, "metrics");
        for (int k = 0; k < NMETRICS; k++) {
            char name[32];
            snprintf(name, sizeof name, "%s_us", METRICS[k].name);
            if (samples[k])
                pt_json_metric(j, &(pt_metric){ name, "us", METRICS[k].definition, samples[k], n });
        }
        pt_json_object_end(j);
        pt_json_object_end(j);
    }
    free(plan);
}

int ab_output_close(ab_output *out)
{
    if (!out->doc)
        return 0;
    pt_json_array_end(&out->j);
    pt_json_object_end(&out->j);
    fputc('\n', out->doc);
    int bad = ferror(out->doc);
    return (fclose(out->doc) != 0 || bad) ? -1 : 0;
}
