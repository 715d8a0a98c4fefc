/* Ticks (clock.h): which source, and its rate. */
#include "request/clock.h"

#include <stdio.h>
#include <string.h>

int pt_ticks_tsc;
static double ticks_per_ns = 1.0;

#define CALIBRATE_NS 100000 /* the rate's error is a clock read (33 ns) in this: 0.03% */
#define BRACKET_NS 2000      /* a reading pair whose CLOCK_MONOTONIC reads lie further apart was interrupted */
#define TRIES 20

#if defined(__x86_64__)
/* Whether the kernel keeps time with the TSC: it checked that the TSC is
 * invariant and synchronised across cores, and watches it. */
static int kernel_uses_tsc(void)
{
    char name[32] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!f)
        return 0;
    int ok = fgets(name, sizeof name, f) && strncmp(name, "tsc", 3) == 0 && (name[3] == '\n' || !name[3]);
    fclose(f);
    return ok;
}

/* One TSC reading and the CLOCK_MONOTONIC time it was taken at, bracketed by
 * two clock reads close together. Read one after the other without that, a
 * process descheduled between the two (in MPI_Init on a busy machine) got a
 * rate far too small, and every group's first mark looked late: 13 of
 * 20,000 such calibrations were off by more than 1%. 0 when no try was
 * close enough. */
static int paired_reading(int64_t *ns, int64_t *ticks)
{
    for (int k = 0; k < TRIES; k++) {
        int64_t before = pt_now_ns(), t = (int64_t)__rdtsc(), after = pt_now_ns();
        if (after - before <= BRACKET_NS) {
            *ns = before + (after - before) / 2;
            *ticks = t;
            return 1;
        }
    }
    return 0;
}

/* Ticks per nanosecond over about CALIBRATE_NS, or 0 when no clean pair of
 * readings could be had. */
static double measured_rate(void)
{
    int64_t ns0, t0, ns1, t1;
    if (!paired_reading(&ns0, &t0))
        return 0;
    while (pt_now_ns() - ns0 < CALIBRATE_NS)
        ;
    if (!paired_reading(&ns1, &t1) || t1 <= t0 || ns1 <= ns0)
        return 0;
    return (double)(t1 - t0) / (double)(ns1 - ns0);
}
#endif

void pt_ticks_init(void)
{
#if defined(__x86_64__)
    if (pt_ticks_tsc || !kernel_uses_tsc())
        return;
    /* Two rates that agree within 1%, else CLOCK_MONOTONIC stays: a wrong
     * rate would move the timer's 25 us by as much. */
    double a = measured_rate(), b = measured_rate();
    if (a > 0 && b > 0 && a < 1.01 * b && b < 1.01 * a) {
        ticks_per_ns = (a + b) / 2;
        pt_ticks_tsc = 1;
    }
#endif
}

int64_t pt_ticks_from_ns(int64_t ns) { return pt_ticks_tsc ? (int64_t)((double)ns * ticks_per_ns) : ns; }
