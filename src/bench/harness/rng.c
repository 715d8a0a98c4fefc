#include "rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void pt_rng_seed(pt_rng *r, uint64_t seed, uint64_t stream, uint64_t substream)
{
    /* Mix the three inputs through splitmix so nearby (thread, iteration)
     * pairs give unrelated sequences. */
    uint64_t x = seed;
    uint64_t a = splitmix64(&x) ^ (stream * 0xd1b54a32d192ed03ULL);
    x = a;
    uint64_t b = splitmix64(&x) ^ (substream * 0x8cb92ba72f3d8dd7ULL);
    x = b;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

uint64_t pt_rng_next(pt_rng *r)
{
    uint64_t *s = r->s;
    const uint64_t result = rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double pt_rng_uniform(pt_rng *r) { return (double)(pt_rng_next(r) >> 11) * 0x1.0p-53; }

double pt_rng_normal(pt_rng *r)
{
    double u1;
    do {
        u1 = pt_rng_uniform(r);
    } while (u1 <= 0.0);
    double u2 = pt_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

uint64_t pt_rng_below(pt_rng *r, uint64_t n) { return n ? (uint64_t)(pt_rng_uniform(r) * (double)n) : 0; }

void pt_rng_shuffle(pt_rng *r, int *a, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)pt_rng_below(r, (uint64_t)i + 1), t = a[i];
        a[i] = a[j], a[j] = t;
    }
}
