#include "compute.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "clock.h"
#include "rng.h"

static int parse_nonneg(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno || !(v >= 0.0) || v > 1e9)
        return -1;
    *out = v;
    return 0;
}

int pt_noise_parse(const char *text, pt_noise *out, char *err, size_t errlen)
{
    static const struct { const char *name; pt_noise_kind kind; } kinds[] = {
        {"none", PT_NOISE_NONE},         {"single", PT_NOISE_SINGLE}, {"uniform", PT_NOISE_UNIFORM},
        {"gaussian", PT_NOISE_GAUSSIAN}, {"delay", PT_NOISE_DELAY},
    };
    char name[32];
    const char *colon = strchr(text, ':');
    size_t n = colon ? (size_t)(colon - text) : strlen(text);
    if (n >= sizeof name)
        n = sizeof name - 1;
    memcpy(name, text, n);
    name[n] = '\0';
    pt_noise r = {.kind = PT_NOISE_NONE, .pct = 10.0, .delay_us = 0.0, .thread = out->thread};
    size_t i;
    for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].name, name) == 0)
            break;
    if (i == sizeof kinds / sizeof kinds[0]) {
        snprintf(err, errlen, "unknown noise model '%s' (expected none, single[:PCT], uniform[:PCT], gaussian[:PCT] or delay:US)", text);
        return -1;
    }
    r.kind = kinds[i].kind;
    if (r.kind == PT_NOISE_NONE && colon) {
        snprintf(err, errlen, "noise model 'none' takes no value (got '%s')", text);
        return -1;
    }
    if (r.kind == PT_NOISE_DELAY) {
        if (!colon || parse_nonneg(colon + 1, &r.delay_us) != 0) {
            snprintf(err, errlen, "noise model 'delay' needs a delay in microseconds above 0, e.g. delay:100 (got '%s')", text);
            return -1;
        }
    } else if (colon && (parse_nonneg(colon + 1, &r.pct) != 0 || r.pct > 1000.0)) {
        snprintf(err, errlen, "noise percentage must be a number above 0, at most 1000 (got '%s')", text);
        return -1;
    }
    /* a percentage or a delay of 0 adds nothing: the run would be that of --noise none, labelled otherwise */
    if (r.kind == PT_NOISE_DELAY && r.delay_us == 0.0) {
        snprintf(err, errlen, "%s adds nothing (0 us late): give a delay above 0, or --noise none", text);
        return -1;
    }
    if (r.kind != PT_NOISE_NONE && r.kind != PT_NOISE_DELAY && r.pct == 0.0) {
        snprintf(err, errlen, "%s adds nothing (a noise of 0%%): give a percentage above 0, or --noise none", text);
        return -1;
    }
    *out = r;
    return 0;
}

void pt_noise_format(const pt_noise *n, char *buf, size_t len)
{
    switch (n->kind) {
    case PT_NOISE_NONE: snprintf(buf, len, "none"); break;
    case PT_NOISE_SINGLE: snprintf(buf, len, "single:%g%%", n->pct); break;
    case PT_NOISE_UNIFORM: snprintf(buf, len, "uniform:%g%%", n->pct); break;
    case PT_NOISE_GAUSSIAN: snprintf(buf, len, "gaussian:%g%%", n->pct); break;
    case PT_NOISE_DELAY: snprintf(buf, len, "delay:%gus", n->delay_us); break;
    }
}

/* Which thread a single-thread model delays in this iteration. */
static int delayed_thread(const pt_noise *n, uint64_t seed, int nthreads, long iteration)
{
    if (n->thread >= 0)
        return n->thread % nthreads;
    pt_rng r;
    /* stream ~0: one draw per iteration shared by all threads */
    pt_rng_seed(&r, seed, UINT64_MAX, (uint64_t)iteration);
    return (int)pt_rng_below(&r, (uint64_t)nthreads);
}

double pt_noise_draw_us(const pt_noise *n, double base_us, uint64_t seed, int thread, int nthreads,
                        long iteration)
{
    double p = n->pct / 100.0;
    pt_rng r;
    switch (n->kind) {
    case PT_NOISE_NONE:
        return base_us;
    case PT_NOISE_SINGLE:
        return thread == delayed_thread(n, seed, nthreads, iteration) ? base_us * (1.0 + p) : base_us;
    case PT_NOISE_DELAY:
        return thread == delayed_thread(n, seed, nthreads, iteration) ? base_us + n->delay_us : base_us;
    case PT_NOISE_UNIFORM:
        pt_rng_seed(&r, seed, (uint64_t)thread, (uint64_t)iteration);
        return base_us * (1.0 + p * pt_rng_uniform(&r));
    case PT_NOISE_GAUSSIAN: {
        pt_rng_seed(&r, seed, (uint64_t)thread, (uint64_t)iteration);
        double v = base_us + base_us * p * pt_rng_normal(&r);
        return v > 0.0 ? v : 0.0;
    }
    }
    return base_us;
}

/* A sleep ends up to the thread's timer slack after its deadline (Linux: 50
 * us by default), or sooner when another thread's timer fires in that
 * window: a laggard's 100 us sleep lasted about 178 us beside an idle
 * libpartita and 130 beside its progress thread's 20 us timers, which
 * changed how much of the early messages' transfer a late half overlapped
 * (docs/metrics.md, t_pause). Each sleeping thread asks for 1 us once. */
static void tighten_timer_slack(void)
{
#ifdef __linux__
    static _Thread_local int done;
    if (!done) {
        prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
        done = 1;
    }
#endif
}

void pt_compute_until(pt_compute_mode mode, int64_t deadline_ns)
{
    if (mode == PT_COMPUTE_SLEEP) {
        tighten_timer_slack();
        struct timespec ts = {.tv_sec = deadline_ns / 1000000000LL, .tv_nsec = deadline_ns % 1000000000LL};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        }
        return;
    }
    /* spin: a little integer work between clock reads, like a real kernel */
    volatile uint64_t sink = 1;
    while (pt_now_ns() < deadline_ns) {
        for (int i = 0; i < 32; i++)
            sink = sink * 6364136223846793005ULL + 1442695040888963407ULL;
    }
}

void pt_compute_us(pt_compute_mode mode, double us)
{
    if (us <= 0.0)
        return;
    pt_compute_until(mode, pt_now_ns() + (int64_t)(us * 1e3));
}
