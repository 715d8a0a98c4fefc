/* The loop schemes of partita-mech (no MPI): every schedule is a permutation,
 * ltr is in order, random is reproducible from (seed, round) and changes with
 * them, neighborhood puts exactly the grid border first, and the thread split
 * covers every segment with contiguous, disjoint, balanced chunks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mech_schedule.h"

static int failures;
#define CHECK(cond, ...)                                                                                              \
    do {                                                                                                              \
        if (!(cond)) {                                                                                                \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);                                  \
            fprintf(stderr, __VA_ARGS__);                                                                             \
            fputc('\n', stderr);                                                                                      \
            failures++;                                                                                               \
        }                                                                                                             \
    } while (0)

static const int sizes[] = {1, 2, 3, 7, 8, 12, 16, 64, 100, 1024};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static int is_permutation(const mech_schedule *s)
{
    char *seen = calloc((size_t)s->P, 1);
    int ok = 1;
    for (int i = 0; i < s->P && ok; i++) {
        int p = s->seq[i];
        ok = p >= 0 && p < s->P && !seen[p];
        if (ok)
            seen[p] = 1;
    }
    free(seen);
    return ok;
}

static void test_grid(void)
{
    static const int expect[][3] = {{1, 1, 1}, {2, 1, 2}, {7, 1, 7}, {8, 2, 4}, {12, 3, 4}, {16, 4, 4}, {100, 10, 10}, {512, 16, 32}};
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        mech_grid g = mech_grid_of(expect[i][0]);
        CHECK(g.rows == expect[i][1] && g.cols == expect[i][2], "P=%d gives %dx%d", expect[i][0], g.rows, g.cols);
    }
}

static void test_permutations(void)
{
    for (int i = 0; i < NSIZES; i++) {
        mech_schedule s;
        CHECK(mech_schedule_init(&s, sizes[i]) == 0, "init P=%d", sizes[i]);
        for (int scheme = 0; scheme < MECH_NSCHEMES; scheme++) {
            mech_schedule_build(&s, (mech_scheme)scheme, 7, 3);
            CHECK(is_permutation(&s), "scheme %d, P=%d is not a permutation", scheme, sizes[i]);
            CHECK(s.seg_end[s.nseg - 1] == s.P, "scheme %d, P=%d: segments end at %d", scheme, sizes[i], s.seg_end[s.nseg - 1]);
        }
        mech_schedule_build(&s, MECH_SCHEME_LTR, 7, 3);
        for (int p = 0; p < s.P; p++)
            CHECK(s.seq[p] == p, "ltr P=%d position %d holds %d", s.P, p, s.seq[p]);
        mech_schedule_free(&s);
    }
}

static void test_random(void)
{
    int P = 64;
    mech_schedule a, b;
    mech_schedule_init(&a, P);
    mech_schedule_init(&b, P);
    mech_schedule_build(&a, MECH_SCHEME_RANDOM, 42, 5);
    mech_schedule_build(&b, MECH_SCHEME_RANDOM, 42, 5);
    CHECK(memcmp(a.seq, b.seq, (size_t)P * sizeof(int)) == 0, "same seed and round give different orders");
    mech_schedule_build(&b, MECH_SCHEME_RANDOM, 42, 6);
    CHECK(memcmp(a.seq, b.seq, (size_t)P * sizeof(int)) != 0, "the next round repeats the order");
    mech_schedule_build(&b, MECH_SCHEME_RANDOM, 43, 5);
    CHECK(memcmp(a.seq, b.seq, (size_t)P * sizeof(int)) != 0, "another seed repeats the order");
    int in_place = 0;
    for (int i = 0; i < P; i++)
        in_place += a.seq[i] == i;
    CHECK(in_place < P / 2, "%d of %d partitions in their ltr place", in_place, P);
    mech_schedule_free(&a);
    mech_schedule_free(&b);
}

static void test_neighborhood(void)
{
    for (int i = 0; i < NSIZES; i++) {
        mech_schedule s;
        mech_schedule_init(&s, sizes[i]);
        mech_schedule_build(&s, MECH_SCHEME_NEIGHBORHOOD, 1, 0);
        mech_grid g = mech_grid_of(s.P);
        int interior = (g.rows > 2 && g.cols > 2) ? (g.rows - 2) * (g.cols - 2) : 0;
        CHECK(s.nseg == 2 && s.seg_end[0] == s.P - interior, "P=%d: border segment ends at %d, expected %d", s.P,
              s.seg_end[0], s.P - interior);
        for (int k = 0; k < s.P; k++) {
            int r = s.seq[k] / g.cols, c = s.seq[k] % g.cols;
            int border = r == 0 || r == g.rows - 1 || c == 0 || c == g.cols - 1;
            CHECK(border == (k < s.seg_end[0]), "P=%d: cell (%d,%d) at position %d", s.P, r, c, k);
            if (k > 0 && k != s.seg_end[0])
                CHECK(s.seq[k] > s.seq[k - 1], "P=%d: segment not in row-major order at %d", s.P, k);
        }
        mech_schedule_free(&s);
    }
    /* 4x4: the four interior cells come last */
    mech_schedule s;
    mech_schedule_init(&s, 16);
    mech_schedule_build(&s, MECH_SCHEME_NEIGHBORHOOD, 1, 0);
    CHECK(s.seq[12] == 5 && s.seq[13] == 6 && s.seq[14] == 9 && s.seq[15] == 10, "4x4 interior is %d %d %d %d",
          s.seq[12], s.seq[13], s.seq[14], s.seq[15]);
    mech_schedule_free(&s);
}

static void test_chunks(void)
{
    for (int i = 0; i < NSIZES; i++)
        for (int scheme = 0; scheme < MECH_NSCHEMES; scheme++)
            for (int T = 1; T <= 5; T++) {
                mech_schedule s;
                mech_schedule_init(&s, sizes[i]);
                mech_schedule_build(&s, (mech_scheme)scheme, 1, 0);
                for (int seg = 0; seg < s.nseg; seg++) {
                    int expect_lo = seg ? s.seg_end[seg - 1] : 0;
                    int n = s.seg_end[seg] - expect_lo;
                    for (int t = 0; t < T; t++) {
                        int lo, hi;
                        mech_schedule_chunk(&s, seg, t, T, &lo, &hi);
                        CHECK(lo == expect_lo, "P=%d T=%d seg %d thread %d starts at %d, not %d", s.P, T, seg, t, lo, expect_lo);
                        CHECK(hi - lo == n / T || hi - lo == n / T + 1, "P=%d T=%d thread %d has %d of %d", s.P, T, t, hi - lo, n);
                        expect_lo = hi;
                    }
                    CHECK(expect_lo == s.seg_end[seg], "P=%d T=%d seg %d covered up to %d", s.P, T, seg, expect_lo);
                }
                mech_schedule_free(&s);
            }
}

int main(void)
{
    test_grid();
    test_permutations();
    test_random();
    test_neighborhood();
    test_chunks();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("all schedule checks passed\n");
    return failures ? 1 : 0;
}
