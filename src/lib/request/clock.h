/* The clocks of the library. */
#ifndef PARTITA_CLOCK_H
#define PARTITA_CLOCK_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/* CLOCK_MONOTONIC in nanoseconds: every timer deadline. */
static inline int64_t pt_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Ticks: a cheaper clock for intervals measured on the marking path, where
 * the timer's late-begin rule reads the clock at every group's first mark
 * and hand-over: with clock_gettime (33 ns a read here) the rule cost the
 * timer 3-4% against `model` at 64 KiB in 16-128 partitions; the TSC took
 * 13 ns (28-30 ns on 2026-11-29, still 2-5% at 64 KiB in 128-512: so the
 * rule now rests while rounds are quick, timer_flush.c: update_late_watch).
 * Ticks are the TSC on x86-64 when the kernel keeps its own time with it
 * (then it is invariant and the same on every core), else CLOCK_MONOTONIC
 * nanoseconds (before pt_ticks_init, too). Only differences of two readings
 * mean anything; pt_ticks_from_ns converts a duration. */
extern int pt_ticks_tsc;
static inline int64_t pt_ticks(void)
{
#if defined(__x86_64__)
    if (pt_ticks_tsc)
        return (int64_t)__rdtsc();
#endif
    return pt_now_ns();
}
/* Once, at Partita_Init_hook: decides the source and, for the TSC, measures
 * its rate against CLOCK_MONOTONIC over about 100 us. */
void pt_ticks_init(void);
int64_t pt_ticks_from_ns(int64_t ns);

#endif
