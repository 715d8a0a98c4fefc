/* partita-mech: effective bandwidth of moving one buffer split into P partitions
 * from rank 0 to rank 1 with four send mechanisms (send, isend, persistent,
 * psend), partitions marked by T threads in one of three loop schemes (ltr,
 * random, neighborhood). The benchmark design follows Schneewind & Niethammer's
 * Open MPI study; definitions: docs/mech.md.
 *
 * For every buffer size B, partition count P and scheme, the selected mechanisms
 * take turns round by round (so drift of a shared machine hits all alike). */
#include <stdlib.h>
#include <string.h>

#include "harness/bench.h"
#include "harness/clock.h"
#include "harness/clocksync.h"
#include "mech_cli.h"
#include "mech_output.h"
#include "mech_schedule.h"
#include "mech_transfer.h"

enum { SENDER = 0, RECEIVER = 1, TAG_STAMPS = 1 };
/* MPI counts are int: a partition can hold at most INT_MAX bytes; keep B below that. */
#define MAX_BUFFER_BYTES ((size_t)1 << 30)

/* Data check: a byte that depends on the round, the mechanism and the position,
 * so a partition that lands in the wrong place or a stale buffer is caught. */
static inline unsigned char pattern(uint64_t key, size_t i)
{
    uint64_t x = ((uint64_t)i + key * 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;
    return (unsigned char)(x >> 56);
}

/* Sender: the expected data; receiver: its complement, which every byte must overwrite. */
static void prepare_buffer(unsigned char *buf, size_t n, uint64_t key, int sender)
{
    unsigned char flip = sender ? 0 : 0xff;
    for (size_t i = 0; i < n; i++)
        buf[i] = pattern(key, i) ^ flip;
}

static int check_buffer(const unsigned char *buf, size_t n, uint64_t key)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] != pattern(key, i))
            return 1;
    return 0;
}

static const char *skip_reason(const mech_config *cfg, size_t B, size_t part_size, int P)
{
    if (cfg->part_sizes.n) {
        if (part_size > B)
            return "partition larger than the buffer";
        if (B % part_size)
            return "buffer size not a multiple of the partition size";
    } else {
        if (B < (size_t)P)
            return "fewer bytes than partitions";
        if (B % (size_t)P)
            return "buffer size not divisible by the partition count";
    }
    if (P < cfg->c.threads)
        return "fewer partitions than threads";
    return NULL;
}

/* Every (B, P) pair in run order; returns how many. */
static int build_plan(const mech_config *cfg, mech_case **plan)
{
    int per_size = cfg->part_sizes.n ? cfg->part_sizes.n : cfg->parts.n;
    int nsizes = 0;
    for (size_t m = cfg->sizes.min; m <= cfg->sizes.max && m; m *= 2)
        nsizes++;
    *plan = calloc((size_t)(nsizes * per_size), sizeof **plan);
    int n = 0;
    size_t B = cfg->sizes.min;
    for (int s = 0; s < nsizes; s++, B *= 2)
        for (int i = 0; i < per_size; i++) {
            size_t part = cfg->part_sizes.n ? cfg->part_sizes.v[i] : 0;
            long long P = cfg->part_sizes.n ? (long long)(B / part) : cfg->parts.v[i];
            mech_case *c = &(*plan)[n++];
            c->bytes = B;
            c->P = (int)P;
            c->part_bytes = part ? part : (B % (size_t)P ? 0 : B / (size_t)P);
            c->skip = skip_reason(cfg, B, part, c->P);
        }
    return n;
}

static void run_case(pt_ctx *ctx, const mech_config *cfg, const pt_clock_offset *clk, const MPI_Comm *comms,
                     const mech_case *mc, mech_scheme scheme, int nk, mech_result *res)
{
    const pt_common *c = &cfg->c;
    int N = c->iterations, W = c->warmup, sender = ctx->rank == SENDER;
    size_t B = mc->bytes;
    unsigned char *buf = aligned_alloc(64, (B + 63) / 64 * 64);
    mech_schedule sched;
    int64_t *start = calloc((size_t)nk * (size_t)N, sizeof *start);
    int64_t *end = calloc((size_t)nk * (size_t)N, sizeof *end);
    mech_xfer *x = calloc((size_t)nk, sizeof *x);
    /* the sender's: the receiver's completion stamps and the samples of every metric */
    int64_t *recv_end = sender ? calloc((size_t)nk * (size_t)N, sizeof *recv_end) : NULL;
    int ok = buf && start && end && x && (!sender || recv_end) && mech_schedule_init(&sched, mc->P) == 0;
    for (int k = 0; sender && k < nk; k++)
        for (int m = 0; m < MECH_NMETRICS; m++)
            ok &= (res[k].v[m] = calloc((size_t)N, sizeof(double))) != NULL;
    for (int k = 0; ok && k < nk; k++)
        ok = mech_xfer_init(&x[k], res[k].kind, comms[k], sender, sender ? RECEIVER : SENDER, buf, mc->P,
                            mc->part_bytes) == 0;
    char msg[128];
    snprintf(msg, sizeof msg, "out of memory for %zu bytes in %d partitions and the samples of %d iterations", B,
             mc->P, N);
    pt_check_all(ctx, !ok, msg);
    memset(buf, 0, B);
    int errors[MECH_NKINDS] = {0};

    for (long r = 0; r < (long)W + N; r++) {
        mech_schedule_build(&sched, scheme, (uint64_t)cfg->seed, (uint64_t)r);
        for (int k = 0; k < nk; k++) {
            uint64_t key = (uint64_t)r * MECH_NKINDS + res[k].kind;
            if (c->validate)
                prepare_buffer(buf, B, key, sender);
            MPI_Barrier(MPI_COMM_WORLD);
            int64_t t0;
            int64_t t1 = mech_xfer_round(&x[k], &sched, c->threads, &t0);
            if (r >= W) {
                start[(size_t)k * N + (size_t)(r - W)] = t0;
                end[(size_t)k * N + (size_t)(r - W)] = t1;
            }
            if (c->validate && !sender)
                errors[k] += check_buffer(buf, B, key);
        }
    }
    for (int k = 0; k < nk; k++)
        mech_xfer_free(&x[k]);

    /* The receiver's completion stamps travel to the sender, which computes the metrics. */
    if (!sender) {
        MPI_Send(end, nk * N, MPI_INT64_T, SENDER, TAG_STAMPS, MPI_COMM_WORLD);
    } else {
        MPI_Recv(recv_end, nk * N, MPI_INT64_T, RECEIVER, TAG_STAMPS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int k = 0; k < nk; k++) {
            for (int i = 0; i < N; i++) {
                size_t at = (size_t)k * N + (size_t)i;
                double t_us = pt_ns_to_us(recv_end[at] - clk->offset_ns - start[at]);
                res[k].v[0][i] = (double)B / t_us;
                res[k].v[1][i] = t_us;
                res[k].v[2][i] = pt_ns_to_us(end[at] - start[at]);
            }
        }
    }
    free(recv_end);
    int all_errors[MECH_NKINDS];
    MPI_Allreduce(errors, all_errors, MECH_NKINDS, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int k = 0; k < nk; k++)
        res[k].errors = all_errors[k];
    mech_schedule_free(&sched);
    free(x);
    free(start);
    free(end);
    free(buf);
}

/* ---- checks every rank makes alike, before anything runs ---- */

/* The mechanisms to run; fails when psend is asked for and missing. */
static int select_kinds(pt_ctx *ctx, const mech_config *cfg, int *kinds)
{
    int nk = 0;
    if (cfg->mechs.n == 0) {
        for (int k = 0; k < MECH_NKINDS; k++)
            if (mech_kind_available((mech_kind)k))
                kinds[nk++] = k;
        return nk;
    }
    for (int i = 0; i < cfg->mechs.n; i++) {
        if (!mech_kind_available((mech_kind)cfg->mechs.v[i]))
            pt_fail(ctx, "--mechanism %s: partita-mech was built against an MPI library without MPI_Psend_init",
                    mech_kind_names[cfg->mechs.v[i]]);
        kinds[nk++] = cfg->mechs.v[i];
    }
    return nk;
}

static void check_plan(pt_ctx *ctx, const mech_case *plan, int ncases, const int *kinds, int nk)
{
    int uses_tags = 0;
    for (int k = 0; k < nk; k++)
        uses_tags |= kinds[k] != MECH_PSEND;
    int *tag_ub = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    int runnable = 0;
    const char *why = NULL;
    for (int i = 0; i < ncases; i++) {
        if (plan[i].skip) {
            why = why ? why : plan[i].skip;
            continue;
        }
        runnable++;
        if (uses_tags && flag && plan[i].P - 1 > *tag_ub)
            pt_fail(ctx, "%d partitions need tags up to %d, but MPI_TAG_UB of this MPI library is %d", plan[i].P,
                    plan[i].P - 1, *tag_ub);
    }
    if (runnable == 0)
        pt_fail(ctx, "no case can run: every (size, partitions) pair is skipped (e.g. %s)", why);
}

int main(int argc, char **argv)
{
    pt_cli cli;
    mech_config cfg;
    pt_ctx ctx = {.benchmark = "mech"};
    mech_configure(&cli, &cfg);
    pt_start(&ctx, &cli, &cfg.c, argc, argv, 0);
    pt_common *c = &cfg.c;
    c->seed = cfg.seed;
    if (ctx.size != 2)
        pt_fail(&ctx, "needs exactly 2 ranks (a sender and a receiver), got %d", ctx.size);
    if (cfg.parts.n && cfg.part_sizes.n)
        pt_fail(&ctx, "give either --partitions or --partition-size, not both");
    if (!cfg.parts.n && !cfg.part_sizes.n)
        cfg.parts = (pt_int_list){.n = 5, .v = {1, 8, 64, 512, 4096}};
    /* only the random scheme draws from the seed: without it, --seed would be ignored */
    int random_scheme = 0;
    char schemes[128] = "";
    for (int i = 0; i < cfg.schemes.n; i++) {
        random_scheme |= cfg.schemes.v[i] == MECH_SCHEME_RANDOM;
        size_t used = strlen(schemes);
        snprintf(schemes + used, sizeof schemes - used, "%s%s", i ? "," : "", mech_scheme_names[cfg.schemes.v[i]]);
    }
    if (cfg.seed_option->given && !random_scheme)
        pt_fail(&ctx, "--seed applies to the random scheme only, which --scheme does not list (--scheme %s): add it, "
                "e.g. --scheme %s,random", schemes, schemes);
    if (cfg.sizes.max > MAX_BUFFER_BYTES)
        pt_fail(&ctx, "--message-size: at most %zu bytes (got %zu)", MAX_BUFFER_BYTES, cfg.sizes.max);
    int kinds[MECH_NKINDS];
    int nk = select_kinds(&ctx, &cfg, kinds);
    mech_case *plan;
    int ncases = build_plan(&cfg, &plan);
    check_plan(&ctx, plan, ncases, kinds, nk);
    pt_require_omp_threads(&ctx, c->threads);
    pt_open_output(&ctx, c);

    pt_clock_offset clk;
    pt_clock_sync(MPI_COMM_WORLD, ctx.rank == SENDER ? RECEIVER : SENDER, ctx.rank == SENDER, ctx.nodes == 1, 200, &clk);
    /* One communicator per mechanism: their traffic (and any a library adds for
     * partitioned requests) can never match another mechanism's. */
    MPI_Comm comms[MECH_NKINDS];
    for (int k = 0; k < nk; k++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[k]);

    mech_out out = {.f = ctx.out, .format = c->format};
    if (ctx.rank == SENDER)
        mech_write_head(&out, &ctx, &cfg, &clk, kinds, nk);
    int failures = 0;
    for (int i = 0; i < ncases; i++) {
        if (plan[i].skip) {
            if (ctx.rank == SENDER)
                mech_write_skipped(&out, &cfg, &plan[i]);
            continue;
        }
        for (int s = 0; s < cfg.schemes.n; s++) {
            mech_result res[MECH_NKINDS] = {0};
            for (int k = 0; k < nk; k++)
                res[k].kind = (mech_kind)kinds[k];
            run_case(&ctx, &cfg, &clk, comms, &plan[i], (mech_scheme)cfg.schemes.v[s], nk, res);
            for (int k = 0; k < nk; k++) {
                failures += res[k].errors > 0;
                if (ctx.rank == SENDER)
                    mech_write_result(&out, &ctx, &cfg, &plan[i], (mech_scheme)cfg.schemes.v[s], &res[k]);
                for (int m = 0; m < MECH_NMETRICS; m++)
                    free(res[k].v[m]);
            }
        }
    }
    if (ctx.rank == SENDER)
        mech_write_tail(&out);
    if (failures && ctx.rank == SENDER)
        fprintf(stderr, "%s: error: data validation failed in %d case(s)\n", ctx.program, failures);
    for (int k = 0; k < nk; k++)
        MPI_Comm_free(&comms[k]);
    free(plan);
    return pt_finish(&ctx, failures ? 1 : 0);
}
