/* Minimal assertions for the model unit tests: report every failure, exit 1 at the end. */
#ifndef PARTITA_TESTS_MODEL_CHECK_H
#define PARTITA_TESTS_MODEL_CHECK_H

#include <math.h>
#include <stdio.h>

static int check_failures;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);  \
            check_failures++;                                                         \
        }                                                                             \
    } while (0)

#define CHECK_NEAR(got, want, tol)                                                    \
    do {                                                                              \
        double g_ = (got), w_ = (want);                                               \
        if (!(fabs(g_ - w_) <= (tol))) {                                              \
            fprintf(stderr, "%s:%d: %s = %.12g, expected %.12g (+-%g)\n", __FILE__,   \
                    __LINE__, #got, g_, w_, (double)(tol));                           \
            check_failures++;                                                         \
        }                                                                             \
    } while (0)

#define CHECK_DONE()                                                                  \
    do {                                                                              \
        if (check_failures)                                                           \
            fprintf(stderr, "%d check(s) failed\n", check_failures);                  \
        else                                                                          \
            printf("all checks passed\n");                                            \
        return check_failures ? 1 : 0;                                                \
    } while (0)

#endif
