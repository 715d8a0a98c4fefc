#include "mech_schedule.h"

#include <stdlib.h>

#include "harness/rng.h"

mech_grid mech_grid_of(int P)
{
    int rows = 1;
    for (int r = 1; (long)r * r <= P; r++)
        if (P % r == 0)
            rows = r;
    return (mech_grid){rows, P / rows};
}

int mech_schedule_init(mech_schedule *s, int P)
{
    s->P = P;
    s->nseg = 1;
    s->seg_end[0] = s->seg_end[1] = P;
    s->seq = malloc((size_t)P * sizeof *s->seq);
    return s->seq ? 0 : -1;
}

void mech_schedule_free(mech_schedule *s)
{
    free(s->seq);
    s->seq = NULL;
}

static void build_ltr(mech_schedule *s)
{
    for (int i = 0; i < s->P; i++)
        s->seq[i] = i;
    s->nseg = 1;
    s->seg_end[0] = s->P;
}

/* Fisher-Yates shuffle of 0..P-1 with a generator seeded from (seed, round). */
static void build_random(mech_schedule *s, uint64_t seed, uint64_t round)
{
    build_ltr(s);
    pt_rng rng;
    pt_rng_seed(&rng, seed, 0, round);
    pt_rng_shuffle(&rng, s->seq, s->P);
}

static void build_neighborhood(mech_schedule *s)
{
    mech_grid g = mech_grid_of(s->P);
    int n = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int r = 0; r < g.rows; r++)
            for (int c = 0; c < g.cols; c++) {
                int border = r == 0 || r == g.rows - 1 || c == 0 || c == g.cols - 1;
                if (border == (pass == 0))
                    s->seq[n++] = r * g.cols + c;
            }
        s->seg_end[pass] = n;
    }
    s->nseg = 2;
}

void mech_schedule_build(mech_schedule *s, mech_scheme scheme, uint64_t seed, uint64_t round)
{
    switch (scheme) {
    case MECH_SCHEME_RANDOM: build_random(s, seed, round); break;
    case MECH_SCHEME_NEIGHBORHOOD: build_neighborhood(s); break;
    default: build_ltr(s); break;
    }
}

void mech_schedule_chunk(const mech_schedule *s, int seg, int t, int T, int *lo, int *hi)
{
    long start = seg ? s->seg_end[seg - 1] : 0;
    long n = s->seg_end[seg] - start;
    *lo = (int)(start + n * t / T);
    *hi = (int)(start + n * (t + 1) / T);
}
