/* The order in which a side-by-side benchmark runs its implementations in
 * each round, balanced for carry-over. A round of one implementation can be
 * slower right after a round of another (at 4 KiB, a one-message round right
 * after a 16-message one measured up to 20% slower), so which implementation
 * precedes which must not favour any of them. A shuffle drawn from the round
 * number did not ensure that, and gave every launch the same predecessors:
 * in the library suite's 40 rounds of 8 implementations `model` followed a
 * plain MPI_Isend round 4 times, its twin `model@mpi` 7 times and the timer
 * 8, so more launches could not average such a bias out. These orders are
 * the rows of a Williams design: over one period of rows every
 * implementation precedes every other one equally often (once for an even
 * count, twice for an odd one), and comes first in a row equally often. */
#ifndef PT_ORDER_H
#define PT_ORDER_H

#include <stdint.h>

/* Rows after which the balance is complete: n for an even n, 2n for an odd one. */
int pt_order_period(int n);

/* Row `row` (any integer: taken modulo the period) for n items: order[0..n-1]
 * is a permutation of 0..n-1. */
void pt_order_row(int64_t row, int n, int *order);

/* A permutation of 0..n-1 drawn from `seed` (the harness generator): relabels
 * the items so that launches with different seeds give each implementation
 * other neighbours. */
void pt_order_labels(uint64_t seed, int n, int *label);

#endif
