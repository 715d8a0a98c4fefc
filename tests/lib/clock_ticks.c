/* The library's ticks (src/lib/request/clock.h): before pt_ticks_init they
 * are CLOCK_MONOTONIC nanoseconds; after it, whatever the source (the TSC
 * where the kernel keeps time with it), an interval measured in ticks and
 * converted with pt_ticks_from_ns agrees with CLOCK_MONOTONIC within 2%,
 * and readings never go back. No MPI. */
#include <stdio.h>
#include <time.h>

#include "request/clock.h"

static int errors;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            errors++;                                                                              \
        }                                                                                          \
    } while (0)

static void sleep_ns(long ns)
{
    struct timespec t = { ns / 1000000000, ns % 1000000000 };
    nanosleep(&t, NULL);
}

/* Ticks over an interval of about ns, against the ticks its CLOCK_MONOTONIC
 * length converts to. */
static double ratio_over(long ns)
{
    int64_t n0 = pt_now_ns(), t0 = pt_ticks();
    sleep_ns(ns);
    int64_t t1 = pt_ticks(), n1 = pt_now_ns();
    return (double)(t1 - t0) / (double)pt_ticks_from_ns(n1 - n0);
}

int main(void)
{
    CHECK(!pt_ticks_tsc, "ticks are the TSC before pt_ticks_init");
    CHECK(pt_ticks_from_ns(25000) == 25000, "before pt_ticks_init a duration is its nanoseconds, got %lld",
          (long long)pt_ticks_from_ns(25000));
    int64_t n = pt_now_ns(), t = pt_ticks();
    CHECK(t - n >= 0 && t - n < 1000000, "before pt_ticks_init ticks are CLOCK_MONOTONIC: %lld vs %lld ns",
          (long long)t, (long long)n);

    pt_ticks_init();
    printf("ticks: %s, 25 us = %lld ticks\n", pt_ticks_tsc ? "TSC" : "CLOCK_MONOTONIC",
           (long long)pt_ticks_from_ns(25000));
    CHECK(pt_ticks_from_ns(25000) > 0, "25 us converts to %lld ticks", (long long)pt_ticks_from_ns(25000));
    const long intervals[] = { 1000000, 5000000, 20000000 };
    for (int i = 0; i < 3; i++) {
        /* A descheduled moment between two readings of different clocks can
         * stretch one interval: three tries. */
        double r = 0;
        int ok = 0;
        for (int k = 0; k < 3 && !ok; k++) {
            r = ratio_over(intervals[i]);
            ok = r > 0.98 && r < 1.02;
        }
        CHECK(ok, "over %ld ns, ticks / converted CLOCK_MONOTONIC = %.4f", intervals[i], r);
    }
    int64_t prev = pt_ticks();
    for (int i = 0; i < 100000; i++) {
        int64_t now = pt_ticks();
        if (now < prev) {
            CHECK(now >= prev, "reading %d went back by %lld ticks", i, (long long)(prev - now));
            break;
        }
        prev = now;
    }
    pt_ticks_init(); /* a second call keeps the source and the rate */
    double again = ratio_over(2000000);
    CHECK(again > 0.98 && again < 1.02, "after a second pt_ticks_init: %.4f", again);
    printf(errors ? "%d checks failed\n" : "all checks passed\n", errors);
    return errors != 0;
}
