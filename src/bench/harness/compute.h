/* Compute emulation and the noise models of the ICPP'22 study.
 *
 * A thread "computes" for a given number of microseconds, either by spinning on
 * the monotonic clock (spin: what a real compute-bound thread does to its core)
 * or by sleeping until a deadline with clock_nanosleep (sleep: lets more threads
 * than cores behave like a larger node; used by tests on small machines). */
#ifndef PT_COMPUTE_H
#define PT_COMPUTE_H
#include <stddef.h>
#include <stdint.h>

typedef enum { PT_COMPUTE_SPIN, PT_COMPUTE_SLEEP } pt_compute_mode;

typedef enum {
    PT_NOISE_NONE,     /* every thread computes c */
    PT_NOISE_SINGLE,   /* one thread computes c*(1+p) */
    PT_NOISE_UNIFORM,  /* c*(1 + p*U[0,1]) per thread */
    PT_NOISE_GAUSSIAN, /* N(c, c*p) clamped at 0, per thread */
    PT_NOISE_DELAY     /* one thread computes c + d microseconds (single laggard) */
} pt_noise_kind;

typedef struct pt_noise {
    pt_noise_kind kind;
    double pct;      /* p in percent (single, uniform, gaussian) */
    double delay_us; /* d (delay) */
    int thread;      /* the delayed thread (single, delay); -1: a random one per iteration */
} pt_noise;

/* Parse "none", "single[:PCT]", "uniform[:PCT]", "gaussian[:PCT]", "delay:US".
 * PCT defaults to 10; PCT and US must be above 0 (0 adds nothing: that is "none").
 * Returns 0, or -1 with a message in err. */
int pt_noise_parse(const char *text, pt_noise *out, char *err, size_t errlen);
/* Human-readable form, e.g. "gaussian:10%". */
void pt_noise_format(const pt_noise *n, char *buf, size_t len);

/* Compute time in microseconds of `thread` (of nthreads) in `iteration` for a base
 * of base_us. Deterministic in (seed, thread, iteration). */
double pt_noise_draw_us(const pt_noise *n, double base_us, uint64_t seed, int thread, int nthreads,
                        long iteration);

/* Compute until the monotonic clock reaches deadline_ns. */
void pt_compute_until(pt_compute_mode mode, int64_t deadline_ns);
/* Compute for us microseconds from now. */
void pt_compute_us(pt_compute_mode mode, double us);

#endif
