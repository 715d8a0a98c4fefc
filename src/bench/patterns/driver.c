#include "driver.h"

#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "harness/cache.h"
#include "harness/clock.h"

static const struct { const char *name, *column, *definition; } phases[PAT_NPHASES] = {
    {"time_us", "Time(us)", "one iteration, barrier exit to this rank's end; per iteration the maximum over ranks"},
    {"compute_us", "Compute", "iteration start to the last thread's compute end; maximum over ranks"},
    {"pack_post_us", "PackPost", "last compute end to the last post (Isend, Start or Pready) after packing; maximum over ranks"},
    {"wait_us", "Wait", "last post to all receive data in; maximum over ranks"},
    {"unpack_us", "Unpack", "all receive data in to the last unpack end; maximum over ranks"},
    {"blocked_us", "Blocked", "the longest time one thread of a rank waited for upstream data (receive or MPI_Parrived) in the iteration; maximum over ranks"},
};

static double span_us(int64_t from, int64_t to)
{
    if (!from || !to)
        return -1.0; /* not measured (encoded negative for the MAX reduction) */
    return to > from ? pt_ns_to_us(to - from) : 0.0;
}

static void phases_of(const pat_stamps *s, double *out)
{
    out[PAT_TOTAL] = span_us(s->t0, s->end);
    out[PAT_COMPUTE] = span_us(s->t0, s->compute);
    out[PAT_PACK_POST] = span_us(s->compute ? s->compute : s->t0, s->post);
    out[PAT_WAIT] = span_us(s->post, s->recv);
    out[PAT_UNPACK] = span_us(s->recv, s->unpack);
    out[PAT_BLOCKED] = s->has_blocked ? pt_ns_to_us(s->blocked_ns) : -1.0;
}

void pat_run_case(pt_ctx *ctx, const pt_common *c, const pat_case_ops *ops, pat_counter *cnt,
                  long long payload, long long padding, pat_result *r)
{
    const long checks = 1;
    long total = checks + c->warmup + c->iterations;
    int N = c->iterations;
    /* every rank's samples; rank 0 also the maximum over ranks and the phases of the result */
    double *local = calloc((size_t)PAT_NPHASES * (size_t)N, sizeof *local);
    double *maxed = ctx->rank == 0 ? calloc((size_t)PAT_NPHASES * (size_t)N, sizeof *maxed) : NULL;
    int failed = !local || (ctx->rank == 0 && !maxed);
    for (int p = 0; p < PAT_NPHASES; p++) {
        r->phase[p] = ctx->rank == 0 ? calloc((size_t)N, sizeof(double)) : NULL;
        failed |= ctx->rank == 0 && !r->phase[p];
    }
    char msg[128];
    snprintf(msg, sizeof msg, "cannot allocate the samples of %d iterations (--iterations)", N);
    pt_check_all(ctx, failed, msg);
    long long timed_bytes = 0, timed_sends = 0, timed_preadys = 0;
    long long iter_min = LLONG_MAX, iter_max = 0;
    long errors = 0;
    int validated = 0;
    long long run_start = cnt->bytes;
    for (long it = 0; it < total; it++) {
        int timed = it >= checks + c->warmup;
        int validate = it < checks || c->validate;
        ops->prepare(ops->self, it, validate);
        if (c->cache == PT_CACHE_COLD) {
#pragma omp parallel num_threads(c->threads)
            pt_cache_flush_thread();
            if (ops->evict)
                ops->evict(ops->self);
        }
        pat_counter before = *cnt;
        MPI_Barrier(MPI_COMM_WORLD);
        pat_stamps st = {0};
        st.t0 = pt_now_ns();
        ops->run(ops->self, it, validate, &st);
        st.end = pt_now_ns();
        if (validate) {
            errors += ops->check(ops->self, it);
            validated++;
        }
        if (!timed)
            continue;
        long k = it - checks - c->warmup;
        double v[PAT_NPHASES];
        phases_of(&st, v);
        for (int p = 0; p < PAT_NPHASES; p++)
            local[(size_t)p * (size_t)N + (size_t)k] = v[p];
        long long b = cnt->bytes - before.bytes;
        timed_bytes += b;
        timed_sends += cnt->sends - before.sends;
        timed_preadys += cnt->preadys - before.preadys;
        iter_min = b < iter_min ? b : iter_min;
        iter_max = b > iter_max ? b : iter_max;
    }
    long long mine[7] = {timed_bytes / N, cnt->bytes - run_start, timed_sends / N, timed_preadys / N, payload, padding,
                         iter_max - iter_min};
    long long sums[7];
    MPI_Allreduce(mine, sums, 7, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    long long mm[2] = {-iter_min, iter_max}, gmm[2];
    MPI_Allreduce(mm, gmm, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    long all_errors = 0;
    MPI_Allreduce(&errors, &all_errors, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

    r->n = N;
    MPI_Reduce(local, maxed, PAT_NPHASES * N, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    for (int p = 0; p < PAT_NPHASES; p++) {
        if (ctx->rank != 0)
            continue;
        for (int k = 0; k < N; k++) {
            double x = maxed[(size_t)p * (size_t)N + (size_t)k];
            r->phase[p][k] = x < 0 ? NAN : x;
        }
    }
    free(maxed);
    free(local);
    r->bytes_iter = sums[0];
    r->bytes_run = sums[1];
    r->sends_iter = sums[2];
    r->preadys_iter = sums[3];
    r->payload_iter = sums[4];
    r->padding_iter = sums[5];
    r->iter_bytes_min = -gmm[0];
    r->iter_bytes_max = gmm[1];
    r->errors = all_errors;
    r->validated = validated;
}

double pat_samples_footprint(const pt_ctx *ctx, const pt_common *c)
{
    double sets = ctx->rank == 0 ? 3.0 : 1.0;
    return sets * PAT_NPHASES * (double)c->iterations * sizeof(double);
}

void pat_result_free(pat_result *r)
{
    for (int p = 0; p < PAT_NPHASES; p++)
        free(r->phase[p]);
}

static int measured(const pat_result *r, int p)
{
    for (int k = 0; k < r->n; k++)
        if (!isnan(r->phase[p][k]))
            return 1;
    return 0;
}

static const char *validation_text(const pat_result *r, int upper)
{
    if (r->errors)
        return upper ? "Fail" : "fail";
    return upper ? "Pass" : "pass";
}

void pat_report_header(pat_report *rep)
{
    FILE *f = rep->ctx->out;
    if (rep->ctx->rank != 0)
        return;
    if (rep->c->format == PT_FORMAT_TEXT) {
        fprintf(f, "# Values: median [95%% CI of the median] over iterations of the maximum over ranks, microseconds\n");
        fprintf(f, "# Bytes/iter: bytes handed to MPI send calls in one iteration, all ranks (counted; Padding included)\n");
        fprintf(f, "# Sends: send calls and send-request starts per iteration, all ranks\n");
        fprintf(f, "%-14s %7s %5s %12s %9s %9s %30s", "# Strategy", "Threads", "Parts", "Bytes/iter", "Padding",
                "Sends", "Time(us) [95% CI]");
        for (int p = PAT_TOTAL + 1; p < PAT_NPHASES; p++)
            if (rep->phases & (1 << p))
                fprintf(f, " %10s", phases[p].column);
        fprintf(f, " %10s\n", "Validation");
    } else if (rep->c->format == PT_FORMAT_JSON) {
        pt_json_array_begin(&rep->j, "results");
    } else {
        static const char *const cols[] = {"strategy", "threads", "partitions", "bytes_per_iteration"};
        pt_csv_header(f, 4, cols);
    }
}

static double median_of(const double *v, int n)
{
    pt_summary s;
    pt_summarize(v, (size_t)n, &s);
    return s.median;
}

static void text_row(FILE *f, int shown, const pat_result *r)
{
    pt_summary s;
    pt_summarize(r->phase[PAT_TOTAL], (size_t)r->n, &s);
    char cell[64], parts[16];
    snprintf(cell, sizeof cell, "%.2f [%.2f,%.2f]", s.median, s.ci_lo, s.ci_hi);
    snprintf(parts, sizeof parts, r->partitions > 0 ? "%d" : "-", r->partitions);
    fprintf(f, "%-14s %7d %5s %12lld %9lld %9lld %30s", r->strategy, r->threads, parts, r->bytes_iter, r->padding_iter,
            r->sends_iter, cell);
    for (int p = PAT_TOTAL + 1; p < PAT_NPHASES; p++) {
        if (!(shown & (1 << p)))
            continue;
        if (measured(r, p))
            fprintf(f, " %10.2f", median_of(r->phase[p], r->n));
        else
            fprintf(f, " %10s", "-");
    }
    fprintf(f, " %10s\n", validation_text(r, 1));
}

static void json_case(pt_json *j, const pat_result *r)
{
    pt_json_object_begin(j, NULL);
    pt_json_object_begin(j, "case");
    pt_json_string(j, "strategy", r->strategy);
    pt_json_int(j, "threads", r->threads);
    pt_json_int(j, "partitions", r->partitions);
    pt_json_object_end(j);
    pt_json_string(j, "validation", validation_text(r, 0));
    pt_json_int(j, "validated_iterations", r->validated);
    pt_json_int(j, "wrong_values", r->errors);
    pt_json_object_begin(j, "bytes");
    pt_json_string(j, "definition", "counted: sum of count x type size handed to send calls and send-request starts, all ranks");
    pt_json_int(j, "counted_per_iteration", r->bytes_iter);
    pt_json_int(j, "counted_total", r->bytes_run);
    pt_json_int(j, "payload_per_iteration", r->payload_iter);
    pt_json_int(j, "padding_per_iteration", r->padding_iter);
    pt_json_int(j, "sends_per_iteration", r->sends_iter);
    pt_json_int(j, "preadys_per_iteration", r->preadys_iter);
    pt_json_int(j, "rank_iteration_spread", r->iter_bytes_max - r->iter_bytes_min);
    pt_json_object_end(j);
    pt_json_object_begin(j, "metrics");
    for (int p = 0; p < PAT_NPHASES; p++) {
        if (!measured(r, p))
            continue;
        pt_metric m = {phases[p].name, "us", phases[p].definition, r->phase[p], (size_t)r->n};
        pt_json_metric(j, &m);
    }
    pt_json_object_end(j);
    pt_json_object_end(j);
}

void pat_report_case(pat_report *rep, const pat_result *r)
{
    const pt_ctx *ctx = rep->ctx;
    if (ctx->rank != 0)
        return;
    FILE *f = ctx->out;
    if (rep->c->format == PT_FORMAT_TEXT) {
        text_row(f, rep->phases, r);
    } else if (rep->c->format == PT_FORMAT_JSON) {
        json_case(&rep->j, r);
    } else {
        char t[16], p[16], b[32];
        snprintf(t, sizeof t, "%d", r->threads);
        snprintf(p, sizeof p, "%d", r->partitions);
        snprintf(b, sizeof b, "%lld", r->bytes_iter);
        const char *vals[] = {r->strategy, t, p, b};
        for (int k = 0; k < PAT_NPHASES; k++)
            if (measured(r, k)) {
                pt_metric m = {phases[k].name, "us", phases[k].definition, r->phase[k], (size_t)r->n};
                pt_csv_row(f, ctx, 4, vals, &m);
            }
    }
    fflush(f);
}

void pat_report_end(pat_report *rep)
{
    if (rep->ctx->rank != 0 || rep->c->format != PT_FORMAT_JSON)
        return;
    pt_json_array_end(&rep->j);
    pt_json_object_end(&rep->j);
}

int pat_parse_choice_list(const char *arg, void *dest, char *err, size_t errlen)
{
    pat_choice_list *l = dest;
    l->n = 0;
    const char *p = arg;
    while (1) {
        size_t len = strcspn(p, ",");
        int found = -1;
        for (int i = 0; l->choices[i]; i++)
            if (strlen(l->choices[i]) == len && strncmp(l->choices[i], p, len) == 0)
                found = i;
        if (found < 0 || l->n == PAT_MAX_CHOICES) {
            char choices[256] = "";
            for (int i = 0; l->choices[i]; i++)
                snprintf(choices + strlen(choices), sizeof choices - strlen(choices), "%s%s", i ? ", " : "",
                         l->choices[i]);
            if (found < 0)
                snprintf(err, errlen, "unknown value '%.*s' (choose from %s)", (int)len, p, choices);
            else
                snprintf(err, errlen, "at most %d values", PAT_MAX_CHOICES);
            return -1;
        }
        for (int i = 0; i < l->n; i++)
            if (l->v[i] == found) { /* it would run the same case twice, with duplicate results */
                snprintf(err, errlen, "'%s' is listed twice", l->choices[found]);
                return -1;
            }
        l->v[l->n++] = found;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

void pat_compute(const pt_common *c, double base_us, int thread, long iter)
{
    pt_compute_us(c->compute_mode, pt_noise_draw_us(&c->noise, base_us, (uint64_t)c->seed, thread, c->threads, iter));
}

#define PAT_MAX_COMPUTE_S 3600.0

void pat_require_compute_time(pt_ctx *ctx, const pt_common *c, double compute_us, double steps, int cases)
{
    double s = compute_us * steps * (double)cases * (double)(c->iterations + c->warmup) / 1e6;
    char msg[400];
    snprintf(msg, sizeof msg,
             "the run would compute for about %.1f hours (%.4g us a step, %.0f step%s an iteration, %d case%s of %d "
             "iterations and %d warm-up; --compute and --cell-ns set it): at most 1 hour; lower --cell-ns, --compute, "
             "--grid or --iterations",
             s / 3600, compute_us, steps, steps == 1 ? "" : "s", cases, cases == 1 ? "" : "s", c->iterations,
             c->warmup);
    pt_check_all(ctx, !(s <= PAT_MAX_COMPUTE_S), msg);
}

void pat_require_compute_for_noise(pt_ctx *ctx, const pt_common *c, double cell_ns)
{
    pt_require_compute_for_noise(ctx, c, c->compute_us > 0.0 || cell_ns > 0.0, "--compute 0, --cell-ns 0",
                                 "--compute US or --cell-ns NS");
}
