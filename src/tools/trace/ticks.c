/* The event clock. On x86-64 with the kernel's own clock source on the TSC
 * (so the TSC is invariant and synchronised across cores), an event reads the
 * TSC (about half the cost of clock_gettime, which the MPI_Pready path pays
 * once per call); the ticks are converted to CLOCK_MONOTONIC nanoseconds when
 * the file is written, from (TSC, CLOCK_MONOTONIC) pairs read at MPI_Init and
 * MPI_Finalize. Elsewhere, or with PARTITA_TRACE_CLOCK=monotonic, events read
 * CLOCK_MONOTONIC directly. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

enum { PAIR_TRIES = 64 };

int ptr_use_tsc;
static int64_t tsc0, ns0, tsc1, ns1;
enum { MIN_CALIBRATION_NS = 5000000 };

static int kernel_uses_tsc(void)
{
    char source[32] = {0};
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!f)
        return 0;
    int ok = fgets(source, sizeof source, f) != NULL;
    fclose(f);
    return ok && strncmp(source, "tsc", 3) == 0 && (source[3] == '\n' || source[3] == 0);
}

/* A TSC reading with the CLOCK_MONOTONIC reading taken between two TSC reads.
 * A process preempted between the reads would pair times milliseconds apart
 * (seen on a loaded machine: a partition "arrived" before it was marked), so
 * the tightest of several tries wins. */
static void pair(int64_t *tsc, int64_t *ns)
{
#if defined(__x86_64__)
    int64_t best = INT64_MAX;
    for (int i = 0; i < PAIR_TRIES; i++) {
        int64_t a = (int64_t)__builtin_ia32_rdtsc();
        int64_t t = pt_now_ns();
        int64_t b = (int64_t)__builtin_ia32_rdtsc();
        if (b - a < best) {
            best = b - a;
            *ns = t;
            *tsc = a + (b - a) / 2;
        }
    }
#else
    *ns = *tsc = pt_now_ns();
#endif
}

void ptr_ticks_setup(void)
{
    const char *want = getenv("PARTITA_TRACE_CLOCK");
#if defined(__x86_64__)
    ptr_use_tsc = kernel_uses_tsc() && !(want && strcmp(want, "monotonic") == 0);
#else
    (void)want;
    (void)kernel_uses_tsc;
#endif
    pair(&tsc0, &ns0);
}

void ptr_ticks_finish(void)
{
    if (!ptr_use_tsc)
        return;
    do /* a short run: wait until the rate is known to a few parts per million */
        pair(&tsc1, &ns1);
    while (ns1 - ns0 < MIN_CALIBRATION_NS);
}

int64_t ptr_ticks_to_ns(int64_t ticks)
{
    if (!ptr_use_tsc)
        return ticks;
    return ns0 + (int64_t)((__int128)(ticks - tsc0) * (ns1 - ns0) / (tsc1 - tsc0));
}

int64_t ptr_ticks_span_ns(int64_t ticks)
{
    if (!ptr_use_tsc)
        return ticks;
    return (int64_t)((__int128)ticks * (ns1 - ns0) / (tsc1 - tsc0));
}
