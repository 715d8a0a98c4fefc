#include "mech_output.h"

static const struct { const char *name, *unit, *definition; } metric_defs[MECH_NMETRICS] = {
    {"bandwidth", "MB/s", "B / time_us: buffer bytes over the time from the sender's round start to completion on the receiver (MB = 1e6 bytes)"},
    {"time_us", "us", "sender's round start (after a barrier, just before its first MPI call of the round) to the receiver's completion (its MPI_Wait/MPI_Waitall or last MPI_Recv returned)"},
    {"sender_time_us", "us", "sender's round start to the return of its own completion call (MPI_Wait/MPI_Waitall or last MPI_Send)"},
};

static pt_metric metric_of(const mech_result *r, int m, int n)
{
    return (pt_metric){metric_defs[m].name, metric_defs[m].unit, metric_defs[m].definition, r->v[m], (size_t)n};
}

static const char *validation_word(const mech_config *cfg, const mech_result *r)
{
    return cfg->c.validate ? (r->errors ? "fail" : "pass") : "skipped";
}

static void json_case_keys(pt_json *j, const mech_config *cfg, const mech_case *mc)
{
    pt_json_object_begin(j, "case");
    pt_json_int(j, "bytes", (long long)mc->bytes);
    if (mc->P)
        pt_json_int(j, "partitions", mc->P);
    if (mc->part_bytes)
        pt_json_int(j, "partition_bytes", (long long)mc->part_bytes);
    pt_json_int(j, "threads", cfg->c.threads);
}

void mech_write_result(mech_out *o, const pt_ctx *ctx, const mech_config *cfg, const mech_case *mc,
                         mech_scheme scheme, const mech_result *r)
{
    int n = cfg->c.iterations;
    size_t part_bytes = mc->part_bytes;
    if (o->format == PT_FORMAT_TEXT) {
        fprintf(o->f, "%-10zu %8d %10zu %-12s %-10s", mc->bytes, mc->P, part_bytes, mech_scheme_names[scheme],
                mech_kind_names[r->kind]);
        for (int m = 0; m < 2; m++) {
            pt_metric pm = metric_of(r, m, n);
            pt_text_metric_cell(o->f, &pm, 28);
        }
        fprintf(o->f, " %10s\n", cfg->c.validate ? (r->errors ? "Fail" : "Pass") : "-");
    } else if (o->format == PT_FORMAT_JSON) {
        pt_json *j = &o->j;
        pt_json_object_begin(j, NULL);
        json_case_keys(j, cfg, mc);
        pt_json_string(j, "scheme", mech_scheme_names[scheme]);
        pt_json_string(j, "mechanism", mech_kind_names[r->kind]);
        if (scheme == MECH_SCHEME_NEIGHBORHOOD) {
            mech_grid g = mech_grid_of(mc->P);
            pt_json_int(j, "grid_rows", g.rows);
            pt_json_int(j, "grid_cols", g.cols);
        }
        pt_json_object_end(j);
        pt_json_string(j, "validation", validation_word(cfg, r));
        pt_json_object_begin(j, "metrics");
        for (int m = 0; m < MECH_NMETRICS; m++) {
            pt_metric pm = metric_of(r, m, n);
            pt_json_metric(j, &pm);
        }
        pt_json_object_end(j);
        pt_json_object_end(j);
    } else {
        char b[32], p[16], s[32], t[16];
        snprintf(b, sizeof b, "%zu", mc->bytes);
        snprintf(p, sizeof p, "%d", mc->P);
        snprintf(s, sizeof s, "%zu", part_bytes);
        snprintf(t, sizeof t, "%d", cfg->c.threads);
        const char *vals[] = {b, p, s, t, mech_scheme_names[scheme], mech_kind_names[r->kind], validation_word(cfg, r)};
        for (int m = 0; m < MECH_NMETRICS; m++) {
            pt_metric pm = metric_of(r, m, n);
            pt_csv_row(o->f, ctx, 7, vals, &pm);
        }
    }
    fflush(o->f);
}

void mech_write_skipped(mech_out *o, const mech_config *cfg, const mech_case *mc)
{
    if (o->format == PT_FORMAT_TEXT) {
        if (mc->P)
            fprintf(o->f, "# skipped: %zu bytes in %d partitions: %s\n", mc->bytes, mc->P, mc->skip);
        else
            fprintf(o->f, "# skipped: %zu bytes in partitions of %zu bytes: %s\n", mc->bytes, mc->part_bytes, mc->skip);
    } else if (o->format == PT_FORMAT_JSON) {
        pt_json_object_begin(&o->j, NULL);
        json_case_keys(&o->j, cfg, mc);
        pt_json_object_end(&o->j);
        pt_json_string(&o->j, "skipped", mc->skip);
        pt_json_object_end(&o->j);
    }
}

void mech_write_head(mech_out *o, const pt_ctx *ctx, const mech_config *cfg, const pt_clock_offset *clk,
                       const int *kinds, int nk)
{
    const pt_common *c = &cfg->c;
    if (o->format == PT_FORMAT_TEXT) {
        pt_text_preamble(o->f, ctx, c, "Send Mechanisms");
        fprintf(o->f, "# Seed of the random scheme: %d\n", cfg->seed);
        if (!mech_kind_available(MECH_PSEND))
            fprintf(o->f, "# psend: not measured, built against an MPI library without MPI_Psend_init\n");
        fprintf(o->f, "# Clock: %s\n", clk->shared ? "CLOCK_MONOTONIC shared by both ranks (one node)"
                                                   : "per-node CLOCK_MONOTONIC, receiver offset estimated by ping-pong");
        if (!clk->shared)
            fprintf(o->f, "# Clock offset: %.3f us +- %.3f us\n", clk->offset_ns / 1e3, clk->uncert_ns / 1e3);
        fprintf(o->f, "# Time: sender round start to receiver completion; bandwidth = bytes / time (MB = 1e6 bytes)\n");
        fprintf(o->f, "# Values: median [95%% confidence interval of the median] over %d iterations\n", c->iterations);
        fprintf(o->f, "%-10s %8s %10s %-12s %-10s %28s %28s %10s\n", "# Size", "Parts", "PartSize", "Scheme",
                "Mechanism", "Bandwidth(MB/s) [95% CI]", "Time(us) [95% CI]", "Validation");
    } else if (o->format == PT_FORMAT_JSON) {
        pt_json *j = &o->j;
        pt_json_init(j, o->f);
        pt_json_head(j, ctx, c);
        pt_json_object_begin(j, "message_size");
        pt_json_int(j, "min", (long long)cfg->sizes.min);
        pt_json_int(j, "max", (long long)cfg->sizes.max);
        pt_json_object_end(j);
        if (cfg->part_sizes.n) {
            pt_json_array_begin(j, "partition_sizes");
            for (int i = 0; i < cfg->part_sizes.n; i++)
                pt_json_int(j, NULL, (long long)cfg->part_sizes.v[i]);
        } else {
            pt_json_array_begin(j, "partitions");
            for (int i = 0; i < cfg->parts.n; i++)
                pt_json_int(j, NULL, cfg->parts.v[i]);
        }
        pt_json_array_end(j);
        pt_json_array_begin(j, "mechanisms");
        for (int k = 0; k < nk; k++)
            pt_json_string(j, NULL, mech_kind_names[kinds[k]]);
        pt_json_array_end(j);
        pt_json_array_begin(j, "schemes");
        for (int s = 0; s < cfg->schemes.n; s++)
            pt_json_string(j, NULL, mech_scheme_names[cfg->schemes.v[s]]);
        pt_json_array_end(j);
        pt_json_bool(j, "psend_available", mech_kind_available(MECH_PSEND));
        pt_json_config_end(j);
        pt_json_object_begin(j, "clock");
        pt_json_bool(j, "shared", clk->shared);
        pt_json_number(j, "offset_us", clk->offset_ns / 1e3);
        pt_json_number(j, "uncertainty_us", clk->uncert_ns / 1e3);
        pt_json_object_end(j);
        pt_json_array_begin(j, "headline_metrics");
        pt_json_string(j, NULL, metric_defs[0].name);
        pt_json_string(j, NULL, metric_defs[1].name);
        pt_json_array_end(j);
        pt_json_array_begin(j, "results");
    } else {
        static const char *const cols[] = {"bytes", "partitions", "partition_bytes", "threads", "scheme", "mechanism",
                                           "validation"};
        pt_csv_header(o->f, 7, cols);
    }
}

void mech_write_tail(mech_out *o)
{
    if (o->format == PT_FORMAT_JSON) {
        pt_json_array_end(&o->j);
        pt_json_object_end(&o->j);
    }
}

