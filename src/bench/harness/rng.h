/* A small, fast, reproducible random number generator (xoshiro256** seeded by
 * splitmix64). Every draw of a benchmark comes from a generator seeded from
 * (seed, stream, substream), e.g. (--seed, thread, iteration): a run is
 * reproducible whatever order threads are scheduled in. */
#ifndef PT_RNG_H
#define PT_RNG_H
#include <stdint.h>

typedef struct pt_rng { uint64_t s[4]; } pt_rng;

void pt_rng_seed(pt_rng *r, uint64_t seed, uint64_t stream, uint64_t substream);
uint64_t pt_rng_next(pt_rng *r);
/* Uniform in [0, 1). */
double pt_rng_uniform(pt_rng *r);
/* Standard normal N(0, 1) (Box-Muller). */
double pt_rng_normal(pt_rng *r);
/* Uniform integer in [0, n). */
uint64_t pt_rng_below(pt_rng *r, uint64_t n);
/* Fisher-Yates: a[0..n-1] in an order drawn from r. */
void pt_rng_shuffle(pt_rng *r, int *a, int n);

#endif
