/* The loop schemes of partita-mech: in which order the partitions of one round
 * are marked, and which thread marks which (definitions: docs/mech.md).
 *
 * A schedule is one sequence of all P partitions, cut into one or two segments.
 * Thread t of T marks, segment after segment, the positions
 * [lo + n*t/T, lo + n*(t+1)/T) of each segment [lo, lo+n), in order: the static
 * split of an OpenMP loop per segment, without a barrier between segments.
 *   ltr           one segment 0, 1, ..., P-1
 *   random        one segment: a permutation drawn per round from (seed, round)
 *   neighborhood  the partitions are the cells of a rows x cols grid (row-major
 *                 numbering, rows = the largest divisor of P not above sqrt(P));
 *                 segment 1 holds the border cells, segment 2 the interior, each
 *                 in row-major order, so every thread marks its share of the
 *                 border before its share of the interior (halo order). */
#ifndef PT_MECH_SCHEDULE_H
#define PT_MECH_SCHEDULE_H
#include <stdint.h>

typedef enum { MECH_SCHEME_LTR, MECH_SCHEME_RANDOM, MECH_SCHEME_NEIGHBORHOOD, MECH_NSCHEMES } mech_scheme;

typedef struct mech_grid { int rows, cols; } mech_grid;

typedef struct mech_schedule {
    int P;
    int *seq;       /* the P partitions in marking order */
    int nseg;       /* 1 or 2 */
    int seg_end[2]; /* segment k is seq[k ? seg_end[k-1] : 0 .. seg_end[k]) */
} mech_schedule;

/* The grid of the neighborhood scheme for P cells. */
mech_grid mech_grid_of(int P);
/* Allocate a schedule for P >= 1 partitions; 0 on success, -1 out of memory. */
int mech_schedule_init(mech_schedule *s, int P);
void mech_schedule_free(mech_schedule *s);
/* Fill in the order of round `round` (random depends on seed and round only). */
void mech_schedule_build(mech_schedule *s, mech_scheme scheme, uint64_t seed, uint64_t round);
/* The positions [*lo, *hi) of seq that thread t of T marks in segment seg. */
void mech_schedule_chunk(const mech_schedule *s, int seg, int t, int T, int *lo, int *hi);

#endif
