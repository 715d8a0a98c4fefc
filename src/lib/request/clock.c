/* Ticks (clock.h): which source, and its rate. */
#include "request/clock.h"

#include <stdio.h>
#include <string.h>

int pt_ticks_tsc;
static double ticks_per_ns = 1.0;

#define CALIBRATE_NS 100000 /* the rate's error is a clock read (33 ns) in this: 0.03% */

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

void pt_ticks_init(void)
{
#if defined(__x86_64__)
    if (pt_ticks_tsc || !kernel_uses_tsc())
        return;
    int64_t ns0 = pt_now_ns(), t0 = (int64_t)__rdtsc(), ns1, t1;
    do {
        ns1 = pt_now_ns();
        t1 = (int64_t)__rdtsc();
    } while (ns1 - ns0 < CALIBRATE_NS);
    if (t1 > t0) {
        ticks_per_ns = (double)(t1 - t0) / (double)(ns1 - ns0);
        pt_ticks_tsc = 1;
    }
#endif
}

int64_t pt_ticks_from_ns(int64_t ns) { return pt_ticks_tsc ? (int64_t)((double)ns * ticks_per_ns) : ns; }
