/* Time stamps for benchmarks. CLOCK_MONOTONIC is system-wide, so on one node the
 * stamps of different ranks are directly comparable (clocksync.h handles nodes). */
#ifndef PT_CLOCK_H
#define PT_CLOCK_H
#include <stdint.h>
#include <time.h>

/* Nanoseconds since an arbitrary, machine-wide origin. */
static inline int64_t pt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline double pt_ns_to_us(int64_t ns) { return (double)ns / 1e3; }

#endif
