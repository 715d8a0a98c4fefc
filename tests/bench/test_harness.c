/* Unit tests of the benchmark harness: statistics, noise models, reproducibility,
 * option parsing, the side-by-side round orders and the p2p metric arithmetic.
 * No MPI needed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/compute.h"
#include "harness/options.h"
#include "harness/order.h"
#include "harness/rng.h"
#include "harness/stats.h"
#include "p2p_metrics.h"

static int failures;
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            failures++;                                                                                                \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                                \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
        }                                                                                                              \
    } while (0)
#define NEAR(a, b, tol) (fabs((a) - (b)) <= (tol))

static void test_stats_known_samples(void)
{
    /* 1..10: median 5.5, mean 5.5, sample stdev sqrt(55/6), p05 = 1.45, p95 = 9.55 (type 7) */
    double x[10] = {7, 3, 10, 1, 5, 2, 9, 4, 8, 6};
    pt_summary s;
    pt_summarize(x, 10, &s);
    CHECK(s.n == 10, "n=%zu", s.n);
    CHECK(NEAR(s.median, 5.5, 1e-12), "median %g", s.median);
    CHECK(NEAR(s.mean, 5.5, 1e-12), "mean %g", s.mean);
    CHECK(NEAR(s.stdev, sqrt(55.0 / 6.0), 1e-12), "stdev %g", s.stdev);
    CHECK(NEAR(s.p05, 1.45, 1e-12), "p05 %g", s.p05);
    CHECK(NEAR(s.p95, 9.55, 1e-12), "p95 %g", s.p95);
    CHECK(s.min == 1 && s.max == 10, "min/max %g %g", s.min, s.max);
    /* n=10: j = floor(5 - 0.98*3.162) = 1, k = ceil(6 + 3.099) = 10 -> [x(1), x(10)] */
    CHECK(s.ci_lo == 1 && s.ci_hi == 10, "ci [%g,%g]", s.ci_lo, s.ci_hi);
    CHECK(x[0] == 7, "input was modified");

    /* n=100 of 0..99: j = floor(50 - 9.8) = 40 -> x(40) = 39; k = ceil(51 + 9.8) = 61 -> x(61) = 60 */
    double y[100];
    for (int i = 0; i < 100; i++)
        y[i] = 99 - i;
    pt_summarize(y, 100, &s);
    CHECK(s.ci_lo == 39 && s.ci_hi == 60, "ci100 [%g,%g]", s.ci_lo, s.ci_hi);
    CHECK(s.ci_lo <= s.median && s.median <= s.ci_hi, "median outside its CI");

    /* NaN samples are left out */
    double z[4] = {1, NAN, 3, NAN};
    pt_summarize(z, 4, &s);
    CHECK(s.n == 2 && NEAR(s.median, 2, 1e-12), "nan handling n=%zu median=%g", s.n, s.median);
    pt_summarize(z + 1, 1, &s);
    CHECK(s.n == 0 && isnan(s.median), "all-nan summary");
}

static void mean_sd(const double *v, int n, double *mean, double *sd)
{
    double m = 0, ss = 0;
    for (int i = 0; i < n; i++)
        m += v[i];
    m /= n;
    for (int i = 0; i < n; i++)
        ss += (v[i] - m) * (v[i] - m);
    *mean = m;
    *sd = sqrt(ss / (n - 1));
}

static void test_noise_distributions(void)
{
    enum { N = 20000 };
    static double v[N];
    char err[256];
    pt_noise n = {.thread = 0};
    double mean, sd;

    /* uniform:20 -> c*(1 + 0.2 U): mean 1.1c, sd 0.2c/sqrt(12), within [c, 1.2c] */
    CHECK(pt_noise_parse("uniform:20", &n, err, sizeof err) == 0, "%s", err);
    double lo = 1e9, hi = 0;
    for (int i = 0; i < N; i++) {
        v[i] = pt_noise_draw_us(&n, 100.0, 42, i % 4, 4, i / 4);
        lo = fmin(lo, v[i]);
        hi = fmax(hi, v[i]);
    }
    mean_sd(v, N, &mean, &sd);
    CHECK(NEAR(mean, 110.0, 0.3), "uniform mean %g", mean);
    CHECK(NEAR(sd, 20.0 / sqrt(12.0), 0.2), "uniform sd %g", sd);
    CHECK(lo >= 100.0 && hi <= 120.0, "uniform range [%g,%g]", lo, hi);

    /* gaussian:10 -> N(c, 0.1c) */
    CHECK(pt_noise_parse("gaussian:10", &n, err, sizeof err) == 0, "%s", err);
    for (int i = 0; i < N; i++)
        v[i] = pt_noise_draw_us(&n, 100.0, 7, i % 8, 8, i / 8);
    mean_sd(v, N, &mean, &sd);
    CHECK(NEAR(mean, 100.0, 0.3), "gaussian mean %g", mean);
    CHECK(NEAR(sd, 10.0, 0.3), "gaussian sd %g", sd);

    /* gaussian:200 is clamped at 0: no negative compute */
    CHECK(pt_noise_parse("gaussian:200", &n, err, sizeof err) == 0, "%s", err);
    int zeros = 0;
    for (int i = 0; i < N; i++) {
        double d = pt_noise_draw_us(&n, 100.0, 9, 0, 1, i);
        CHECK(d >= 0.0, "negative gaussian draw %g", d);
        zeros += d == 0.0;
    }
    CHECK(zeros > N / 5, "clamping at 0 expected for about 31%% of draws, got %d", zeros);

    /* single:50 on a fixed thread: exactly that thread is slowed */
    n.thread = 2;
    CHECK(pt_noise_parse("single:50", &n, err, sizeof err) == 0, "%s", err);
    CHECK(n.thread == 2, "parse must keep the chosen thread");
    for (int t = 0; t < 4; t++)
        CHECK(pt_noise_draw_us(&n, 10.0, 1, t, 4, 3) == (t == 2 ? 15.0 : 10.0), "single t=%d", t);

    /* single on a random thread: exactly one thread per iteration, all threads hit over time */
    n.thread = -1;
    int hits[4] = {0};
    for (long it = 0; it < 400; it++) {
        int slowed = 0;
        for (int t = 0; t < 4; t++)
            if (pt_noise_draw_us(&n, 10.0, 5, t, 4, it) > 10.0)
                slowed++, hits[t]++;
        CHECK(slowed == 1, "iteration %ld slowed %d threads", it, slowed);
    }
    for (int t = 0; t < 4; t++)
        CHECK(hits[t] > 50, "thread %d slowed only %d times in 400", t, hits[t]);

    /* delay:US adds an absolute delay */
    n.thread = 1;
    CHECK(pt_noise_parse("delay:250", &n, err, sizeof err) == 0, "%s", err);
    CHECK(pt_noise_draw_us(&n, 10.0, 1, 1, 2, 0) == 260.0 && pt_noise_draw_us(&n, 10.0, 1, 0, 2, 0) == 10.0, "delay");

    /* bad noise specs; a percentage or a delay of 0 adds nothing (that run is --noise none) */
    const char *bad[] = {"uniformly", "gaussian:abc", "delay", "delay:-5", "none:3", "single:2000", "",
                         "uniform:0", "single:0.0", "gaussian:-0", "delay:0", "delay:0e3"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(pt_noise_parse(bad[i], &n, err, sizeof err) == -1 && err[0], "noise '%s' accepted", bad[i]);
}

static void test_reproducibility(void)
{
    pt_noise n = {.thread = 0};
    char err[128];
    pt_noise_parse("gaussian:30", &n, err, sizeof err);
    /* same (seed, thread, iteration) -> same draw, whatever the order of calls */
    double a = pt_noise_draw_us(&n, 50, 1234, 3, 4, 17);
    for (int i = 0; i < 10; i++)
        pt_noise_draw_us(&n, 50, 1234, i % 4, 4, i);
    CHECK(pt_noise_draw_us(&n, 50, 1234, 3, 4, 17) == a, "draw not reproducible");
    CHECK(pt_noise_draw_us(&n, 50, 1235, 3, 4, 17) != a, "seed has no effect");
    CHECK(pt_noise_draw_us(&n, 50, 1234, 2, 4, 17) != a, "threads share a stream");
    CHECK(pt_noise_draw_us(&n, 50, 1234, 3, 4, 18) != a, "iterations share a stream");
    pt_rng r1, r2;
    pt_rng_seed(&r1, 9, 1, 2);
    pt_rng_seed(&r2, 9, 1, 2);
    for (int i = 0; i < 100; i++)
        CHECK(pt_rng_next(&r1) == pt_rng_next(&r2), "rng streams differ");
}

/* Whether a[0..n-1] is a permutation of 0..n-1. */
static int is_permutation(const int *a, int n)
{
    int seen[16] = { 0 };
    for (int i = 0; i < n; i++) {
        if (a[i] < 0 || a[i] >= n || seen[a[i]])
            return 0;
        seen[a[i]] = 1;
    }
    return 1;
}

/* Over one period of rows every item follows every other one equally often
 * and comes first equally often (a shuffle drawn per round did neither); rows
 * repeat with the period, negative rows too; labels are a permutation that
 * the seed changes. */
static void test_round_orders(void)
{
    for (int n = 1; n <= 9; n++) {
        int period = pt_order_period(n), order[16], again[16];
        int follows[16][16] = { { 0 } }, first[16] = { 0 };
        CHECK(period == (n % 2 ? 2 * n : n), "n=%d: period %d", n, period);
        for (int row = 0; row < period; row++) {
            pt_order_row(row, n, order);
            CHECK(is_permutation(order, n), "n=%d row %d: not a permutation", n, row);
            first[order[0]]++;
            for (int j = 0; j + 1 < n; j++)
                follows[order[j]][order[j + 1]]++;
            pt_order_row(row - 3 * period, n, again);
            CHECK(!memcmp(order, again, (size_t)n * sizeof *order), "n=%d row %d: not periodic", n, row);
        }
        for (int a = 0; a < n; a++) {
            CHECK(first[a] == period / n, "n=%d: item %d first in %d rows of %d", n, a, first[a], period);
            for (int b = 0; b < n; b++)
                if (a != b)
                    CHECK(follows[a][b] == period / n, "n=%d: %d then %d in %d rows of %d", n, a, b, follows[a][b],
                          period);
        }
    }
    int l0[8], l1[8], l0b[8];
    pt_order_labels(0, 8, l0);
    pt_order_labels(1, 8, l1);
    pt_order_labels(0, 8, l0b);
    CHECK(is_permutation(l0, 8) && is_permutation(l1, 8), "labels are not a permutation");
    CHECK(!memcmp(l0, l0b, sizeof l0), "labels not reproducible");
    CHECK(memcmp(l0, l1, sizeof l0), "the seed does not change the labels");
}

static void test_options(void)
{
    char err[256];
    pt_size_range r;
    CHECK(pt_parse_size_range("64:4M", &r, err, sizeof err) == 0 && r.min == 64 && r.max == 4u << 20, "64:4M");
    const char *bad_sizes[] = {"64", "0:64", "3:64", "64:32", "a:b", "64:", ":64", "-1:4", "64:1T"};
    for (size_t i = 0; i < sizeof bad_sizes / sizeof *bad_sizes; i++)
        CHECK(pt_parse_size_range(bad_sizes[i], &r, err, sizeof err) == -1, "size '%s' accepted", bad_sizes[i]);
    int v;
    CHECK(pt_parse_int("12", 1, 100, &v, err, sizeof err) == 0 && v == 12, "int");
    CHECK(pt_parse_int("0", 1, 100, &v, err, sizeof err) == -1, "0 below min accepted");
    CHECK(pt_parse_int("-3", 1, 100, &v, err, sizeof err) == -1, "negative accepted");
    CHECK(pt_parse_int("1x", 1, 100, &v, err, sizeof err) == -1, "1x accepted");
    pt_int_list l;
    CHECK(pt_parse_int_list("1,8,64", 1, 1000, &l, err, sizeof err) == 0 && l.n == 3 && l.v[2] == 64, "list");
    CHECK(pt_parse_int_list("1,,3", 1, 1000, &l, err, sizeof err) == -1, "empty item accepted");
    CHECK(pt_parse_int_list("4,0", 1, 1000, &l, err, sizeof err) == -1, "zero accepted");

    pt_cli cli = {.program = "t", .summary = "s"};
    int iters = 5, flag = 0, choice = 0;
    static const char *const choices[] = {"a", "b", NULL};
    pt_add_int(&cli, "iterations", 'i', &iters, "N", "h", 1, 100);
    pt_add_flag(&cli, "validate", 'c', &flag, "h");
    pt_add_choice(&cli, "mode", 0, &choice, "M", "h", choices);
    char *ok[] = {"t", "-i", "7", "-c", "--mode=b"};
    CHECK(pt_cli_parse(&cli, 5, ok, err, sizeof err) == PT_PARSE_OK && iters == 7 && flag && choice == 1, "parse ok: %s", err);
    char *ok2[] = {"t", "-i9", "--iterations", "11"};
    CHECK(pt_cli_parse(&cli, 4, ok2, err, sizeof err) == PT_PARSE_OK && iters == 11, "last value wins");
    char *unknown[] = {"t", "--bogus"};
    CHECK(pt_cli_parse(&cli, 2, unknown, err, sizeof err) == PT_PARSE_ERROR && strstr(err, "--bogus"), "unknown: %s", err);
    char *missing[] = {"t", "-i"};
    CHECK(pt_cli_parse(&cli, 2, missing, err, sizeof err) == PT_PARSE_ERROR && strstr(err, "needs a value"), "missing: %s", err);
    char *badchoice[] = {"t", "--mode", "z"};
    CHECK(pt_cli_parse(&cli, 3, badchoice, err, sizeof err) == PT_PARSE_ERROR && strstr(err, "a, b"), "choice: %s", err);
    char *positional[] = {"t", "extra"};
    CHECK(pt_cli_parse(&cli, 2, positional, err, sizeof err) == PT_PARSE_ERROR, "positional accepted");
    char *help[] = {"t", "--help"};
    CHECK(pt_cli_parse(&cli, 2, help, err, sizeof err) == PT_PARSE_HELP, "help");
    char *flagval[] = {"t", "--validate=1"};
    CHECK(pt_cli_parse(&cli, 2, flagval, err, sizeof err) == PT_PARSE_ERROR, "flag with value accepted");
}

static void test_p2p_metrics(void)
{
    /* 2 partitions, 2 threads: thread 0 readies p0 at 0 and joins... thread 1 finishes compute at 100 */
    int64_t ready[2] = {0, 100}, ce[2] = {0, 100}, arr[2] = {30, 130};
    p2p_stamps s = {.bytes = 1000, .send_parts = 2, .recv_parts = 2, .threads = 2, .ready = ready,
                    .compute_end = ce, .arrival = arr, .pt2pt_ns = 40};
    p2p_iteration x;
    p2p_compute_iteration(&s, &x);
    CHECK(NEAR(x.t_part_us, 0.130, 1e-12), "t_part %g", x.t_part_us);
    CHECK(NEAR(x.t_last_us, 0.030, 1e-12), "t_last %g", x.t_last_us);
    CHECK(NEAR(x.overhead, 130.0 / 40.0, 1e-12), "overhead %g", x.overhead);
    CHECK(NEAR(x.perceived_bw, 1000 / 0.030, 1e-6), "bw %g", x.perceived_bw);
    /* union = [0,30] + [100,130] = 60 ns; join at 100: 30 before, 30 after */
    CHECK(NEAR(x.t_before_join_us, 0.030, 1e-12) && NEAR(x.t_after_join_us, 0.030, 1e-12), "split");
    CHECK(NEAR(x.early_bird, 50.0, 1e-9), "early bird %g", x.early_bird);
    CHECK(NEAR(x.availability, 100.0 * (1 - 30.0 / 40.0), 1e-9), "availability %g", x.availability);

    /* nested interval: [0,100] contains [10,20]; the union is 100 long */
    int64_t r2[2] = {0, 10}, c2[1] = {50}, a2[2] = {100, 20};
    p2p_stamps n = {.bytes = 2, .send_parts = 2, .recv_parts = 2, .threads = 1, .ready = r2, .compute_end = c2,
                    .arrival = a2, .pt2pt_ns = 100};
    p2p_compute_iteration(&n, &x);
    CHECK(NEAR(x.t_union_us, 0.100, 1e-12), "nested union %g", x.t_union_us);
    CHECK(NEAR(x.early_bird, 50.0, 1e-9), "nested early bird %g", x.early_bird);

    /* one partition: early bird 0 and availability = max(0, 1 - overhead) */
    int64_t r1[1] = {500}, c1[1] = {500}, a1[1] = {560};
    p2p_stamps one = {.bytes = 64, .send_parts = 1, .recv_parts = 1, .threads = 1, .ready = r1, .compute_end = c1,
                      .arrival = a1, .pt2pt_ns = 80};
    p2p_compute_iteration(&one, &x);
    CHECK(x.early_bird == 0.0, "one-partition early bird %g", x.early_bird);
    CHECK(NEAR(x.availability, 100.0 * (1 - 60.0 / 80.0), 1e-9), "one-partition availability %g", x.availability);
    one.pt2pt_ns = 30; /* slower than a send: availability is 0, not negative */
    p2p_compute_iteration(&one, &x);
    CHECK(x.availability == 0.0, "availability not clamped: %g", x.availability);

    /* 3 send partitions onto 2 receive partitions: q0 = bytes [0,3) <- p0 [0,2), p1 [2,4) */
    int64_t r3[3] = {50, 20, 90};
    p2p_stamps m = {.bytes = 6, .send_parts = 3, .recv_parts = 2, .threads = 1, .ready = r3};
    CHECK(p2p_recv_ready(&m, 0) == 20, "recv ready q0 %lld", (long long)p2p_recv_ready(&m, 0));
    CHECK(p2p_recv_ready(&m, 1) == 20, "recv ready q1 %lld", (long long)p2p_recv_ready(&m, 1));
}

int main(void)
{
    test_stats_known_samples();
    test_noise_distributions();
    test_reproducibility();
    test_options();
    test_round_orders();
    test_p2p_metrics();
    if (failures) {
        printf("%d check(s) failed\n", failures);
        return 1;
    }
    printf("all harness checks passed\n");
    return 0;
}
