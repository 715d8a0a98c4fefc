/* The library's ticks (src/lib/request/clock.h): before pt_ticks_init they
 * are CLOCK_MONOTONIC nanoseconds; after it, whatever the source (the TSC
 * where the kernel keeps time with it), an interval measured in ticks and
 * converted with pt_ticks_from_ns agrees with CLOCK_MONOTONIC within 2%,
 * and readings never go back. No MPI. */
#include <stdio.h>
#include <time.h>

#include "check.h"
#include "request/clock.h"

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

/* Within 2% in one of three tries: a descheduled moment between the
 * readings of the two clocks can stretch one interval. */
static int agrees_over(long ns)
{
    double r = 0;
    for (int k = 0; k < 3; k++) {
        r = ratio_over(ns);
        if (r > 0.98 && r < 1.02)
            return 1;
    }
    fprintf(stderr, "over %ld ns, ticks / converted CLOCK_MONOTONIC = %.4f\n", ns, r);
    return 0;
}

int main(void)
{
    CHECK(!pt_ticks_tsc);                      /* not the TSC before pt_ticks_init */
    CHECK(pt_ticks_from_ns(25000) == 25000);   /* a duration is its nanoseconds */
    int64_t n = pt_now_ns(), t = pt_ticks();
    CHECK(t - n >= 0 && t - n < 1000000);      /* and a reading is CLOCK_MONOTONIC */

    pt_ticks_init();
    printf("ticks: %s, 25 us = %lld ticks\n", pt_ticks_tsc ? "TSC" : "CLOCK_MONOTONIC",
           (long long)pt_ticks_from_ns(25000));
    CHECK(pt_ticks_from_ns(25000) > 0);
    CHECK(agrees_over(1000000));
    CHECK(agrees_over(5000000));
    CHECK(agrees_over(20000000));
    int64_t prev = pt_ticks(), back = 0;
    for (int i = 0; i < 100000 && !back; i++) {
        int64_t now = pt_ticks();
        back = now < prev ? prev - now : 0;
        prev = now;
    }
    CHECK(back == 0);                          /* never goes back */
    pt_ticks_init();                           /* a second call keeps the source and the rate */
    CHECK(agrees_over(2000000));
    CHECK_DONE();
}
